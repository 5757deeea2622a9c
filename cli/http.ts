// A capture saved with its HTTP response head (`curl -i`, `curl -i -L`): the head (or the heads:
// an interim 100 Continue, a proxy's CONNECT answer, each redirect followed) is no part of the
// stream. It is split off the input's start, and the stream is read from the body after it.
import { describeFormat } from 'seam-stream';
import { isModelFormat, type Format } from './formats.js';

export interface HttpHead {
  /** The last head's status line, as sent (`HTTP/2 429`, `HTTP/1.1 200 OK`). */
  statusLine: string;
  status: number;
  /** The bytes of every head split off: the body begins there in the input. */
  bytes: number;
}

/** A head longer than this is not taken for one (its bytes are read as the stream's). */
export const MAX_HEAD_BYTES = 64 * 1024;

const VERSIONS = ['HTTP/1.0 ', 'HTTP/1.1 ', 'HTTP/2 ', 'HTTP/2.0 ', 'HTTP/3 '];

/** Whether `b` begins with a status line's start (`HTTP/1.1 200 `): 'yes', 'no', or 'more' (too few bytes to tell). */
function statusLineAt(b: Uint8Array, from: number): 'yes' | 'no' | 'more' {
  let more = false;
  for (const v of VERSIONS) {
    const pattern = `${v}ddd`;
    let i = 0;
    for (; i < pattern.length && from + i < b.length; i++) {
      const c = b[from + i];
      if (pattern[i] === 'd' ? c < 0x30 || c > 0x39 : c !== pattern.charCodeAt(i)) break;
    }
    if (from + i === b.length && i <= pattern.length) {
      more = true;
      continue;
    }
    if (i < pattern.length) continue;
    const after = b[from + i];
    if (after === 0x20 || after === 0x0d || after === 0x0a) return 'yes';
  }
  return more ? 'more' : 'no';
}

/** Where the head that begins at `from` ends (after its blank line), or -1 when its blank line has not come. */
function headEnd(b: Uint8Array, from: number): number {
  for (let i = from; i < b.length; i++) {
    if (b[i] !== 0x0a) continue;
    // a blank line: LF LF, or CR LF CR LF
    if (b[i + 1] === 0x0a) return i + 2;
    if (b[i + 1] === 0x0d && b[i + 2] === 0x0a) return i + 3;
    if (i + 2 >= b.length) return -1;
  }
  return -1;
}

/**
 * The input's chunks without the HTTP response heads at its start; `onHead` is told of them before
 * the first byte of the body is given. Bytes are held only while they may still be a head's: an
 * input that does not begin with `HTTP/` goes through at once.
 */
export async function* withoutHttpHead(chunks: AsyncIterable<Uint8Array>, onHead: (h: HttpHead) => void): AsyncGenerator<Uint8Array> {
  let held = new Uint8Array(0);
  let from = 0; // where the next head would begin in `held`
  let head: HttpHead | undefined;
  let deciding = true;
  const decide = (ended: boolean): Uint8Array | null => {
    for (;;) {
      const at = statusLineAt(held, from);
      if (at === 'more' && !ended) return null;
      if (at !== 'yes') break;
      const end = headEnd(held, from);
      if (end < 0) {
        if (!ended && held.length < MAX_HEAD_BYTES) return null;
        // a head that never ends (or ends the input): a head with no body when the input ended
        if (ended && held.length < MAX_HEAD_BYTES) {
          head = headOf(held, from, held.length);
          from = held.length;
        }
        break;
      }
      head = headOf(held, from, end);
      from = end;
    }
    deciding = false;
    if (head !== undefined) onHead(head);
    return held.subarray(from);
  };
  for await (const chunk of chunks) {
    if (!deciding) {
      yield chunk;
      continue;
    }
    const joined = new Uint8Array(held.length + chunk.length);
    joined.set(held);
    joined.set(chunk, held.length);
    held = joined;
    const body = decide(false);
    if (body === null) continue;
    held = new Uint8Array(0);
    if (body.length !== 0) yield body;
  }
  if (deciding) {
    const body = decide(true);
    if (body !== null && body.length !== 0) yield body;
  }
}

function headOf(b: Uint8Array, from: number, end: number): HttpHead {
  let lineEnd = b.indexOf(0x0a, from);
  if (lineEnd < 0 || lineEnd > end) lineEnd = end;
  const statusLine = Buffer.from(b.subarray(from, lineEnd)).toString('latin1').replace(/\r$/, '').trimEnd();
  const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(statusLine)?.[1] ?? 0);
  return { statusLine, status, bytes: end };
}

/** Whether the head says the answer is not a success (its last status is not 2xx): its body is the server's answer, not a stream. */
export function failedStatus(h: HttpHead | undefined): boolean {
  return h !== undefined && (h.status < 200 || h.status > 299);
}

/**
 * The body of an answer that is not a stream (a failed status, an HTML page), kept as text up to
 * `limit` bytes (--max-event-bytes: what is past it is read, not kept), for what decode and check say of it.
 */
export class AnswerBody {
  private text = '';
  private bytes = 0;
  private readonly dec = new TextDecoder();

  constructor(private readonly limit: number) {}

  keep(chunk: Uint8Array): void {
    if (this.bytes < this.limit) this.text += this.dec.decode(chunk.subarray(0, this.limit - this.bytes), { stream: true });
    this.bytes += chunk.length;
  }

  /** Its text, once the input ended. */
  end(): string {
    return this.text + this.dec.decode();
  }
}

/** Whether a format's capture may carry a head that is split off (not plain text or lines, whose text it is). */
export function headIsSplit(format: Format | undefined): boolean {
  return format !== 'text' && format !== 'lines';
}

/** What decode and check say of a head split off a stream that was read. */
export function headNote(h: HttpHead): string {
  return `the input begins with an HTTP response head (${h.statusLine}; ${h.bytes} bytes, as curl -i saves it): the stream is read from the body after it, and byte offsets count from there`;
}

/**
 * An answer whose status is not a success (the last head's status is not 2xx): not a stream. Its
 * message: the status line, then the provider's error in its body (JSON, as `format`, or as OpenAI's
 * when that is not a model format), or the body's first line.
 */
export function failedAnswer(h: HttpHead, body: string, format: Format | undefined): string {
  const trimmed = body.replace(/^\uFEFF/, '').trim();
  let said: string | undefined;
  if (trimmed !== '') {
    try {
      const v = JSON.parse(trimmed) as unknown;
      const e = describeFormat(format !== undefined && isModelFormat(format) ? format : 'openai').errorOfBody(v);
      if (e !== undefined) said = `${e.message}${e.detail !== undefined && e.detail !== e.message ? ` (${e.detail})` : ''}`;
    } catch {
      /* not JSON: its first line */
    }
    if (said === undefined) {
      const first = trimmed.split(/\r?\n/)[0];
      said = first.length > 200 ? `${first.slice(0, 200)}…` : first;
    }
  }
  return `the server answered ${h.statusLine} (the HTTP response head at the top of the input), not a stream${said !== undefined ? `: ${said}` : ', with an empty body'}`;
}
