// The status line on standard error while a stream is read: bytes, events, heartbeats, and the
// time since the last text, which heartbeats do not reset.

export interface StatusInfo {
  bytes: number;
  events: number;
  heartbeats: number;
  /** Milliseconds since the last text (or since the start, before any). */
  sinceText: number;
  anyText: boolean;
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** '1 event', '2 events'. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

export function formatSize(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

export function formatSeconds(ms: number): string {
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s - m * 60)} s`;
}

export function statusText(i: StatusInfo): string {
  const text = i.anyText ? `last text ${formatSeconds(i.sinceText)} ago` : `no text yet (${formatSeconds(i.sinceText)})`;
  return `${formatSize(i.bytes)} · ${plural(i.events, 'event')} · ${plural(i.heartbeats, 'heartbeat')} · ${text}`;
}

export class StatusLine {
  private timer: NodeJS.Timeout | undefined;
  private shown = false;

  constructor(private readonly read: () => StatusInfo, everyMs = 200) {
    this.timer = setInterval(() => this.draw(), everyMs);
    this.timer.unref();
  }

  draw(): void {
    const cols = process.stderr.columns || 100;
    let s = statusText(this.read());
    if (s.length > cols - 1) s = s.slice(0, cols - 2) + '…';
    process.stderr.write(`\r${s}\x1b[K`);
    this.shown = true;
  }

  /** Removes the line (before a message, and at the end). */
  clear(): void {
    if (this.shown) process.stderr.write('\r\x1b[K');
    this.shown = false;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
  }
}
