// A spec-literal reference for the WHATWG HTML "event stream interpretation", written from the
// standard's text for the tests: decode the whole stream as UTF-8 (BOM stripped once, U+FFFD for
// bad bytes), split into lines at CRLF, LF or CR, and process each line as the standard says.
// Slow and simple on purpose.

export interface RefEvent { type: string; data: string; id: string }
export interface RefResult {
  events: RefEvent[];
  comments: string[];
  lastEventId: string;
  retry: number | undefined;
  truncated: boolean;
}

export function referenceParse(bytes: Uint8Array, options: { eof?: 'discard' | 'dispatch'; lastEventId?: string; retry?: number } = {}): RefResult {
  const text = new TextDecoder('utf-8').decode(bytes); // strips one leading BOM, replaces bad bytes
  const events: RefEvent[] = [];
  const comments: string[] = [];
  let data = '';
  let eventType = '';
  let lastIdBuffer = options.lastEventId ?? '';
  let lastId = options.lastEventId ?? '';
  let retry = options.retry;
  let inEvent = false;

  const dispatch = () => {
    lastId = lastIdBuffer;
    inEvent = false;
    if (data === '') { eventType = ''; return; }
    if (data.endsWith('\n')) data = data.slice(0, -1);
    events.push({ type: eventType === '' ? 'message' : eventType, data, id: lastId });
    data = '';
    eventType = '';
  };
  const line = (l: string) => {
    if (l === '') return dispatch();
    if (l.startsWith(':')) { comments.push(l.slice(1).replace(/^ /, '')); return; }
    inEvent = true;
    const c = l.indexOf(':');
    let field: string, value: string;
    if (c >= 0) { field = l.slice(0, c); value = l.slice(c + 1); if (value.startsWith(' ')) value = value.slice(1); }
    else { field = l; value = ''; }
    if (field === 'event') eventType = value;
    else if (field === 'data') data += value + '\n';
    else if (field === 'id') { if (!value.includes('\0')) lastIdBuffer = value; }
    else if (field === 'retry') { if (/^[0-9]+$/.test(value)) retry = Number(value); }
  };

  // Lines: the text up to each CRLF, LF or CR; what follows the last terminator is unfinished.
  const re = /\r\n|\r|\n/g;
  let start = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    line(text.slice(start, m.index));
    start = m.index + m[0].length;
  }
  const rest = text.slice(start);
  const truncated = rest !== '' || inEvent;
  if (options.eof === 'dispatch' && truncated) {
    if (rest !== '') line(rest);
    dispatch();
  }
  return { events, comments, lastEventId: lastId, retry, truncated };
}
