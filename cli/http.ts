// A capture saved with its HTTP response head (`curl -i`, `curl -i -L`): the head (or the heads:
// an interim 100 Continue, a proxy's CONNECT answer, each redirect followed) is no part of the
// stream. It is split off the input's start, and the stream is read from the body after it. A
// body saved as it came over the wire (`curl -i --raw`, a TCP capture) may still be in HTTP/1.1's
// chunked transfer coding, and compressed (its Content-Encoding): both are undone, where the
// head says so and the body's first bytes are so.
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';
import { describeFormat } from 'seam-stream';
import { InputError } from './errors.js';
import { isModelFormat, type Format } from './formats.js';

export interface HttpHead {
  /** The last head's status line, as sent (`HTTP/2 429`, `HTTP/1.1 200 OK`). */
  statusLine: string;
  status: number;
  /** The bytes of every head split off: the body begins there in the input. */
  bytes: number;
  /** The last head says `Transfer-Encoding: chunked`. */
  chunked: boolean;
  /** The last head's compressions, lower-case, in the order applied: its `Content-Encoding`'s, then its `Transfer-Encoding`'s but chunked (`gzip`, `gzip, br`; '' when none, or `identity`). */
  encoding: string;
  /** What was undone of the body (set once its first bytes were read): its chunked coding, its compression. */
  undone?: { chunked: boolean; encoding: string };
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
 * The input's chunks without the HTTP response heads at its start, its body's chunked coding and
 * compression undone where the last head says so (*bodyOf*); `onHead` is told of them before the
 * first byte of the body is given. Bytes are held only while they may still be a head's: an input
 * that does not begin with `HTTP/` goes through at once.
 */
export async function* withoutHttpHead(chunks: AsyncIterable<Uint8Array>, onHead: (h: HttpHead) => void): AsyncGenerator<Uint8Array> {
  let head: HttpHead | undefined;
  const body = splitHead(chunks, (h) => void (head = h));
  // (told once the body's first bytes said what of it is undone)
  yield* bodyOf(body, () => head, (h) => onHead(h));
}

/** The input's chunks without the heads at its start; `onHead` is told of the last before the body's first byte. */
async function* splitHead(chunks: AsyncIterable<Uint8Array>, onHead: (h: HttpHead) => void): AsyncGenerator<Uint8Array> {
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
  const lines = Buffer.from(b.subarray(from, end)).toString('latin1').split('\n').map((l) => l.replace(/\r$/, ''));
  const statusLine = lines[0].trimEnd();
  const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(statusLine)?.[1] ?? 0);
  // (a field said on several lines is one list; the codings are named in the order applied:
  // the content's, then the transfer's, chunked last when it is there)
  const content: string[] = [];
  const transfer: string[] = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const values = line.slice(colon + 1).toLowerCase().split(',').map((v) => v.trim()).filter((v) => v !== '' && v !== 'identity');
    if (name === 'transfer-encoding') transfer.push(...values);
    else if (name === 'content-encoding') content.push(...values);
  }
  const chunked = transfer.at(-1) === 'chunked';
  // (a compression of the transfer, `Transfer-Encoding: gzip, chunked`, is undone as the content's)
  const encoding = [...content, ...(chunked ? transfer.slice(0, -1) : transfer)].join(', ');
  return { statusLine, status, bytes: end, chunked, encoding };
}

/** The compressions undone, each by its decoder in node:zlib (zstd where this Node has it). */
// (each ends as a flush does: a body cut short gives all it holds, and the stream after it says it was cut)
const DECOMPRESS: Record<string, (() => Transform) | undefined> = {
  gzip: () => zlib.createGunzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH }),
  'x-gzip': () => zlib.createGunzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH }),
  deflate: () => zlib.createInflate({ finishFlush: zlib.constants.Z_SYNC_FLUSH }),
  br: () => zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH }),
  zstd: (zlib as { createZstdDecompress?: () => Transform }).createZstdDecompress?.bind(zlib),
};

/** How far the body's first line is looked for a chunk's size: past it, the body is taken as it is. */
const SIZE_LINE_MAX = 1024;

/**
 * The body's chunks, its chunked coding and then its compression undone where the head says so
 * and its first bytes are so: a body saved after curl undid them (`curl -i`, which keeps the head's
 * `Transfer-Encoding: chunked`; `curl -i --compressed`) begins with the stream's own bytes, which
 * are neither a chunk's size line nor compressed data. `told` gets the head (with what was
 * undone) before the first byte of the body, or when the input ends.
 */
async function* bodyOf(body: AsyncIterable<Uint8Array>, headNow: () => HttpHead | undefined, told: (h: HttpHead) => void): AsyncGenerator<Uint8Array> {
  // (the head is known once the body's first bytes, or the input's end, came)
  let p = await peeked(body, (b, ended) => (b.length > 0 || ended ? 'yes' : 1));
  const head = headNow();
  let out = p.rest;
  let chunked = false;
  let encoding = '';
  if (head?.chunked) {
    p = await peeked(out, chunkedStart);
    out = p.rest;
    if (p.verdict === 'yes') {
      chunked = true;
      out = unchunked(out);
    }
  }
  // (the compressions, last applied first undone, each while its first bytes are so: the first
  // chunk's data, its coding undone)
  const undone: string[] = [];
  for (const coding of (head?.encoding ?? '').split(', ').filter(Boolean).reverse()) {
    if (DECOMPRESS[coding] === undefined) break;
    const want = coding === 'br' ? BROTLI_LOOK : 4;
    p = await peeked(out, (b, ended) => (b.length >= want || ended ? (compressedStart(coding, b.subarray(0, want)) ? 'yes' : 'no') : want));
    out = p.rest;
    if (p.verdict !== 'yes') break;
    undone.unshift(coding);
    out = decompressed(out, coding);
  }
  encoding = undone.join(', ');
  if (head !== undefined) {
    head.undone = { chunked, encoding };
    told(head);
  }
  yield* out;
}

/** What a look at the first bytes says: yes, no, or a byte count to read before looking again (or the input's end). */
type Verdict = 'yes' | 'no' | number;

/**
 * The first bytes of `src` (read until `judge` says yes or no, or the input ends: then it is told
 * so and must say), its verdict, and `src` again from its start. `judge` is asked again only once
 * as many bytes as it asked for came, so a read a byte joins the bytes held a few times only.
 */
async function peeked(src: AsyncIterable<Uint8Array>, judge: (b: Uint8Array, ended: boolean) => Verdict): Promise<{ verdict: 'yes' | 'no'; first: Uint8Array; rest: AsyncIterable<Uint8Array> }> {
  const it = src[Symbol.asyncIterator]();
  const parts: Uint8Array[] = [];
  let total = 0;
  let first: Uint8Array = new Uint8Array(0);
  let done = false;
  let verdict = judge(first, false);
  while (typeof verdict === 'number') {
    const r = await it.next();
    if (r.done) {
      done = true;
      first = joinedAll(parts, total);
      verdict = judge(first, true);
      if (typeof verdict === 'number') verdict = 'no';
      break;
    }
    parts.push(r.value);
    total += r.value.length;
    if (total < verdict) continue;
    first = joinedAll(parts, total);
    parts.length = 0;
    parts.push(first);
    verdict = judge(first, false);
  }
  const rest = (async function* (): AsyncGenerator<Uint8Array> {
    if (first.length !== 0) yield first;
    if (done) return;
    try {
      for (;;) {
        const r = await it.next();
        if (r.done) return;
        yield r.value;
      }
    } finally {
      // (stopped early: the source stops too, so the input is closed)
      if (!done) await it.return?.();
    }
  })();
  return { verdict, first, rest };
}

function joinedAll(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const j = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    j.set(p, at);
    at += p.length;
  }
  return j;
}

/** A first chunk's data longer than this is not looked past: its size line's CR LF alone says the body is chunked. */
const FIRST_CHUNK_MAX = 64 * 1024;

/**
 * Whether `b` begins as a body in chunked coding: a size line (hex digits, perhaps extensions, CR
 * LF or LF), the chunk's data and its line end (both CR LF, as HTTP writes them; or bare LFs, and
 * then the next size line's digits too), or after the last chunk, a blank line or a trailer field. A body that curl decoded already may begin with
 * hex digits and a line end too (a text answer's `abc`, `Be careful`, `0`): only its data's end
 * at the size's distance tells them apart. A first chunk larger than FIRST_CHUNK_MAX is taken on
 * its size line, which must then end in CR LF as HTTP writes it; one the input ends inside too.
 */
function chunkedStart(b: Uint8Array, ended: boolean): Verdict {
  const line = sizeLineAt(b, 0, ended);
  if (typeof line !== 'object') return line;
  const { size, end, crlf } = line;
  if (size === 0) {
    // the last chunk: a blank line (the body's end) or a trailer field's name and colon
    if (end === b.length) return ended ? (crlf ? 'yes' : 'no') : end + 1;
    if (b[end] === 0x0a) return 'yes';
    if (b[end] === 0x0d) return end + 1 === b.length ? (ended ? 'no' : end + 2) : b[end + 1] === 0x0a ? 'yes' : 'no';
    let i = end;
    while (i < b.length && i - end < SIZE_LINE_MAX && isToken(b[i])) i++;
    if (i === b.length && !ended && i - end < SIZE_LINE_MAX) return i + 1;
    return i > end && b[i] === 0x3a ? 'yes' : 'no';
  }
  const dataEnd = end + size;
  if (dataEnd + 2 > FIRST_CHUNK_MAX) return crlf ? 'yes' : 'no';
  if (b.length <= dataEnd) return ended ? (crlf ? 'yes' : 'no') : dataEnd + 1;
  let next: number;
  if (b[dataEnd] === 0x0a) next = dataEnd + 1;
  else if (b[dataEnd] !== 0x0d) return 'no';
  else if (dataEnd + 1 === b.length) return ended ? (crlf ? 'yes' : 'no') : dataEnd + 2;
  else if (b[dataEnd + 1] !== 0x0a) return 'no';
  else next = dataEnd + 2;
  // (CR LF after the size and after the data, as HTTP writes them, says so: a live stream's first
  // chunk is not held until its next comes; bare LFs need the next chunk's size line too, or the
  // input's end, a body cut there)
  if (crlf && b[next - 2] === 0x0d) return 'yes';
  if (next === b.length) return ended ? 'yes' : next + 1;
  const after = sizeLineAt(b, next, ended);
  return typeof after === 'object' ? 'yes' : after;
}

/** The size line at `from`: its size, where it ends (after its LF), whether it ends in CR LF; or a verdict of no, or more bytes wanted. */
function sizeLineAt(b: Uint8Array, from: number, ended: boolean): { size: number; end: number; crlf: boolean } | 'no' | number {
  let i = from;
  let size = 0;
  let digits = 0;
  while (i < b.length && isHex(b[i])) {
    const c = b[i++];
    size = size * 16 + hexValue(c);
    if (size !== 0) digits++;
    if (digits > MAX_SIZE_DIGITS) return 'no';
  }
  if (i - from >= SIZE_LINE_MAX) return 'no';
  if (i === b.length) return ended ? 'no' : i + 1;
  if (i === from) return 'no';
  // (white space, then extensions, `;name=value`, or the line's end)
  while (i < b.length && (b[i] === 0x20 || b[i] === 0x09) && i - from < SIZE_LINE_MAX) i++;
  if (i === b.length) return ended || i - from >= SIZE_LINE_MAX ? 'no' : i + 1;
  let lf: number;
  if (b[i] === 0x3b) {
    lf = b.indexOf(0x0a, i);
    if (lf < 0 || lf - from >= SIZE_LINE_MAX) return lf < 0 && !ended && b.length - from < SIZE_LINE_MAX ? b.length + 1 : 'no';
  } else if (b[i] === 0x0d) {
    if (i + 1 === b.length) return ended ? 'no' : i + 2;
    if (b[i + 1] !== 0x0a) return 'no';
    lf = i + 1;
  } else if (b[i] === 0x0a) lf = i;
  else return 'no';
  return { size, end: lf + 1, crlf: b[lf - 1] === 0x0d };
}

/** A chunk size of more hex digits than this (leading zeros aside: 2^48 bytes) is not one. */
const MAX_SIZE_DIGITS = 12;

function hexValue(c: number): number {
  return c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57;
}

/** A character of a field's name (RFC 9110's token). */
function isToken(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || '!#$%&\'*+-.^_`|~'.includes(String.fromCharCode(c));
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

/** How many of a Brotli body's first bytes are decoded to tell it from text (or the whole body, when shorter). */
const BROTLI_LOOK = 64;

/**
 * Whether `b` begins as `encoding`'s compressed data: gzip's and zstd's magic numbers, zlib's
 * header; Brotli has none, and its first byte may be a printable one (a 64 KiB window's, half the
 * time): its first bytes (BROTLI_LOOK, or the body) are Brotli when they decode without an error,
 * which an event stream's, JSON's or a text's first line does not.
 */
function compressedStart(encoding: string, b: Uint8Array): boolean {
  if (b.length === 0) return false;
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return b[0] === 0x1f && b[1] === 0x8b;
    case 'zstd':
      return b[0] === 0x28 && b[1] === 0xb5 && b[2] === 0x2f && b[3] === 0xfd;
    case 'deflate':
      return (b[0] & 0x0f) === 8 && b.length > 1 && ((b[0] << 8) | b[1]) % 31 === 0;
    default:
      try {
        zlib.brotliDecompressSync(b, { finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH, maxOutputLength: 1 << 20 });
        return true;
      } catch {
        return false;
      }
  }
}

/**
 * The data of a body in HTTP/1.1's chunked coding: each chunk's size line (hex digits, extensions)
 * and the line end after its data dropped, the trailer after the last (size 0) chunk too. A body
 * cut inside a chunk gives the data that came (the stream after it says whether it was whole).
 * A size line that is not one is an InputError at its offset in the input's body.
 */
async function* unchunked(body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const SIZE = 0, EXT = 1, DATA = 2, DATA_END = 3, TRAILER = 4, DONE = 5;
  let state = SIZE;
  let size = 0;
  let digits = 0; // the size's hex digits, its leading zeros aside
  let any = false; // a digit of the size came
  let left = 0;
  let at = 0; // the body's bytes before the read
  let lineStart = true; // TRAILER: at the start of a line
  const broken = (what: string, i: number) =>
    new InputError(`the body's chunked transfer coding (the head's Transfer-Encoding) is broken: ${what} at byte ${at + i} of the body as it came (its chunk sizes counted)`);
  for await (const b of body) {
    let i = 0;
    const out: Uint8Array[] = [];
    let error: InputError | undefined;
    while (i < b.length && state !== DONE) {
      if (state === DATA) {
        const n = Math.min(left, b.length - i);
        out.push(b.subarray(i, i + n));
        i += n;
        left -= n;
        if (left === 0) state = DATA_END;
        continue;
      }
      const c = b[i];
      if (state === SIZE) {
        if (isHex(c)) {
          size = size * 16 + hexValue(c);
          any = true;
          if (size !== 0 && ++digits > MAX_SIZE_DIGITS) {
            error = broken(`a chunk size of more than ${MAX_SIZE_DIGITS} hex digits`, i);
            break;
          }
        } else if (any && (c === 0x3b || c === 0x20 || c === 0x09 || c === 0x0d)) {
          state = EXT;
        } else if (any && c === 0x0a) {
          state = size === 0 ? TRAILER : DATA;
          left = size;
        } else {
          error = broken('no chunk size', i);
          break;
        }
      } else if (state === EXT) {
        if (c === 0x0a) {
          state = size === 0 ? TRAILER : DATA;
          left = size;
        }
      } else if (state === DATA_END) {
        // (the CR LF after a chunk's data)
        if (c === 0x0a) {
          state = SIZE;
          size = digits = 0;
          any = false;
        } else if (c !== 0x0d) {
          error = broken("a chunk's data is longer than its size,", i);
          break;
        }
      } else if (state === TRAILER) {
        // (trailer fields, then a blank line: the body's end)
        if (c === 0x0a) {
          if (lineStart) state = DONE;
          lineStart = true;
        } else if (c !== 0x0d) lineStart = false;
      }
      i++;
    }
    at += b.length;
    // (the data before a broken size line is given before the error, however the reads fell)
    for (const o of out) if (o.length !== 0) yield o;
    if (error !== undefined) throw error;
    // (what follows the body, another response on a kept-alive connection, is not this stream's)
    if (state === DONE) return;
  }
}

/** The body's bytes decompressed (`encoding`: a key of DECOMPRESS); damaged data is an InputError. */
async function* decompressed(body: AsyncIterable<Uint8Array>, encoding: string): AsyncGenerator<Uint8Array> {
  const d = DECOMPRESS[encoding]!();
  // (the body's bytes are written as the decompressor takes them; when they fail, a chunked coding
  // broken, what was decompressed of those before is given, then that error)
  let failed: unknown;
  let stopped = false;
  const drained = () => new Promise<void>((resolve) => {
    const done = () => {
      d.off('drain', done).off('close', done);
      resolve();
    };
    d.on('drain', done).on('close', done);
  });
  const pump = (async () => {
    try {
      for await (const c of body) {
        if (stopped || d.destroyed) return;
        if (!d.write(c)) await drained();
      }
    } catch (e) {
      failed = e;
    }
    if (!d.destroyed) d.end();
  })();
  try {
    for await (const c of d as AsyncIterable<Buffer>) yield new Uint8Array(c.buffer, c.byteOffset, c.length);
    await pump;
    if (failed !== undefined) throw failed;
  } catch (e) {
    // (not waiting for the body: a live input may not end)
    if (failed !== undefined) throw failed;
    if (e instanceof InputError) throw e;
    throw new InputError(`the body's ${encoding} content (the head's Content-Encoding) cannot be decompressed: ${(e as Error).message}`);
  } finally {
    stopped = true;
    d.destroy();
  }
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
  const undone = [h.undone?.chunked ? 'its chunked transfer coding' : '', h.undone?.encoding ? `its ${h.undone.encoding} compression` : ''].filter(Boolean);
  const body = undone.length === 0 ? 'the body after it, and byte offsets count from there'
    : `the body after it, ${undone.join(' and ')} undone (as the head says), and byte offsets count in the body so decoded`;
  return `the input begins with an HTTP response head (${h.statusLine}; ${h.bytes} bytes, as curl -i saves it): the stream is read from ${body}`;
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
