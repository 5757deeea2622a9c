// The gateway's HTTP/1.1 client for its upstream: one connection per request (`Connection:
// close`), over `net` or `tls`. Node's `http.request` hands a response body over as one 'data'
// event per HTTP chunk, each a call from its parser into JavaScript and a trip through a Readable;
// a model stream is written one small chunk per event, so at full speed that was the largest part
// of the gateway's CPU time (bench/gateway.mjs --profile: `socketOnData`, a quarter of it). Here a
// socket read becomes one 'data' event: its chunk framing is taken out in place (the payloads
// moved together within the read's own buffer, no copy), so that the relay gets every event of
// the read at once and, from OpenAI, hands back that same memory to write.
//
// It reads its upstream as strictly as llhttp (Node's parser) reads a response, or more strictly
// where a gateway has no use for the leniency (test/gateway/parser-differential.test.ts holds it to
// that): no framing is guessed, every limit holds however the bytes are cut, and the request head
// it writes is checked as the Latin-1 bytes it is written as.
//
// What a response offers is the part of http.IncomingMessage the gateway uses: statusCode,
// headers, 'data' / 'end' / 'error' / 'close', pause(), resume(), destroy(), destroyed and
// readableLength. Its body waits for its first 'data' listener (as a Readable's would).
import { EventEmitter } from 'node:events';
import net from 'node:net';
import tls from 'node:tls';

/** The most bytes a response's status line and headers may take. */
export const MAX_HEAD_BYTES = 64 * 1024;


/** Closes a connection, its late errors (of a socket being torn down) ignored. */
function closeQuietly(socket) {
  socket.on('error', () => {});
  socket.destroy();
}

const cutShort = () => new UpstreamProtocolError('the upstream closed the connection before the end of its body');

/** An upstream that broke the HTTP/1.1 framing (its head or its chunks). */
export class UpstreamProtocolError extends Error {
  constructor(message) {
    super(message);
    this.name = 'UpstreamProtocolError';
    this.code = 'ERR_UPSTREAM_PROTOCOL';
  }
}

const HEX = new Int8Array(256).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) { HEX[65 + i] = 10 + i; HEX[97 + i] = 10 + i; }

/** The bytes of a token (RFC 9110 5.6.2: a header name, a chunk extension's name or value). */
const TOKEN = new Uint8Array(256);
for (const c of Buffer.from("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 'latin1')) TOKEN[c] = 1;
/** The bytes of a header value (and of a reason phrase, and inside a quoted string): HTAB, visible ASCII and space, obs-text. */
const VALUE = new Uint8Array(256);
VALUE[9] = 1;
for (let c = 0x20; c <= 0x7e; c++) VALUE[c] = 1;
for (let c = 0x80; c <= 0xff; c++) VALUE[c] = 1;

/** The most header fields in a response head, and in its trailers (each counted alone). */
export const MAX_HEADERS = 100;
/** The most bytes of one chunk's extensions (`;name=value…` after its size). */
export const MAX_CHUNK_EXTENSION_BYTES = 4096;
/** The most bytes of a chunked body's trailer section. */
export const MAX_TRAILER_BYTES = 16 * 1024;

// states of the chunked decoder
const SIZE = 0; // the first hex digit of a chunk's size
const SIZE_MORE = 1; // more hex digits, or what ends them (`;` or CR)
const EXT_NAME = 2; // a chunk extension's name (a token) after `;`
const EXT_VALUE_START = 3; // after `=`: a token or a quoted string
const EXT_VALUE = 4; // a token value
const EXT_QUOTED = 5; // inside a quoted value
const EXT_QUOTED_ESCAPE = 6; // after a backslash in it
const EXT_QUOTED_END = 7; // after its closing quote: `;` or CR
const SIZE_LF = 8; // LF after the size line's CR
const DATA = 9; // the chunk's bytes
const DATA_CR = 10; // CR after them
const DATA_LF = 11; // LF after that CR
const TRAILER = 12; // the start of a trailer line (or the empty line that ends them)
const TRAILER_NAME = 13; // a trailer field's name
const TRAILER_VALUE = 14; // its value, up to CR
const TRAILER_LF = 15; // LF after a trailer line's CR
const TRAILER_END_LF = 16; // LF after the empty line's CR
const END = 17; // the last chunk and its trailers were read

/** The most hex digits of a chunk size (2^52 bytes: more than any stream, less than a double holds exactly). */
const MAX_SIZE_DIGITS = 13;

/**
 * `Transfer-Encoding: chunked` taken out of a body read by read, in place: `decode(buf)` moves the
 * read's payload bytes to its start and returns a view of them (of `buf` itself). The framing is
 * read as strictly as llhttp (Node's parser) reads it: a size in hex digits and nothing else (no
 * white space), extensions as `;token[=token|"quoted"]` and at most MAX_CHUNK_EXTENSION_BYTES of
 * them, CRLF everywhere (no bare LF or CR), trailer fields with token names and header-value
 * bytes, at most MAX_HEADERS and MAX_TRAILER_BYTES of them, no folded line. Malformed framing
 * throws UpstreamProtocolError with the body's byte offset, and with `payload`, the bytes of that
 * read before the fault; the decoder then throws again.
 */
export class ChunkedDecoder {
  constructor() {
    this.state = SIZE;
    this.size = 0;
    this.digits = 0;
    this.left = 0;
    /** Bytes of the current chunk's extensions, and of the trailers; trailer fields. */
    this.ext = 0;
    this.nameStart = 0;
    this.trailerBytes = 0;
    this.trailers = 0;
    /** Body bytes read so far (framing included), for the offset in an error. */
    this.offset = 0;
    /** The framing error that stopped the body (thrown again by later calls). */
    this.failure = null;
  }

  /** Whether the last chunk (size 0) and the trailers after it were read. */
  get done() { return this.state === END && this.failure === null; }

  decode(buf) {
    if (this.failure !== null) throw this.failure;
    const n = buf.length;
    let i = 0;
    let w = 0;
    let state = this.state;
    try {
      while (i < n) {
        if (state === DATA) {
          const m = Math.min(this.left, n - i);
          if (w !== i) buf.copyWithin(w, i, i + m);
          w += m;
          i += m;
          this.left -= m;
          if (this.left === 0) state = DATA_CR;
          continue;
        }
        const c = buf[i];
        switch (state) {
          case SIZE:
          case SIZE_MORE: {
            const v = HEX[c];
            if (v >= 0) {
              if (++this.digits > MAX_SIZE_DIGITS) throw this.bad(i, 'a chunk size over 13 hex digits');
              this.size = this.size * 16 + v;
              state = SIZE_MORE;
            } else if (state === SIZE) {
              throw this.bad(i, 'a chunk size line without a size');
            } else if (c === 0x0d) {
              state = SIZE_LF;
            } else if (c === 0x3b) {
              state = EXT_NAME;
              this.ext = 0;
              this.nameStart = 0;
            } else {
              throw this.bad(i, `byte 0x${c.toString(16)} in a chunk size`);
            }
            break;
          }
          case EXT_NAME:
          case EXT_VALUE_START:
          case EXT_VALUE:
          case EXT_QUOTED:
          case EXT_QUOTED_ESCAPE:
          case EXT_QUOTED_END:
            if (++this.ext > MAX_CHUNK_EXTENSION_BYTES) throw this.bad(i, `chunk extensions over ${MAX_CHUNK_EXTENSION_BYTES} bytes`);
            state = this.extension(state, c, i);
            break;
          case SIZE_LF:
            if (c !== 0x0a) throw this.bad(i, 'no LF after the CR of a chunk size line');
            if (this.size === 0) state = TRAILER;
            else {
              state = DATA;
              this.left = this.size;
            }
            this.size = 0;
            this.digits = 0;
            break;
          case DATA_CR:
            if (c !== 0x0d) throw this.bad(i, 'a chunk longer than its size');
            state = DATA_LF;
            break;
          case DATA_LF:
            if (c !== 0x0a) throw this.bad(i, 'no LF after the CR that ends a chunk');
            state = SIZE;
            break;
          case TRAILER:
          case TRAILER_NAME:
          case TRAILER_VALUE:
          case TRAILER_LF:
          case TRAILER_END_LF:
            if (++this.trailerBytes > MAX_TRAILER_BYTES) throw this.bad(i, `trailers over ${MAX_TRAILER_BYTES} bytes`);
            state = this.trailer(state, c, i);
            break;
          default: // END: what follows the body is not read
            i = n - 1;
        }
        i++;
      }
    } catch (err) {
      this.failure = err;
      err.payload = buf.subarray(0, w); // what the read held before the fault: not lost
      throw err;
    }
    this.state = state;
    this.offset += n;
    return buf.subarray(0, w);
  }

  /** One byte of a chunk's extensions: the next state. */
  extension(state, c, i) {
    switch (state) {
      case EXT_NAME: // (a name of one token byte at least: `this.ext` counts the bytes since the `;`)
        if (TOKEN[c]) return EXT_NAME;
        if (this.nameStart === this.ext - 1) break;
        if (c === 0x3b) { this.nameStart = this.ext; return EXT_NAME; }
        if (c === 0x3d) return EXT_VALUE_START;
        if (c === 0x0d) return SIZE_LF;
        break;
      case EXT_VALUE_START:
        if (c === 0x22) return EXT_QUOTED;
        if (TOKEN[c]) return EXT_VALUE;
        break;
      case EXT_VALUE:
        if (TOKEN[c]) return EXT_VALUE;
        if (c === 0x3b) { this.nameStart = this.ext; return EXT_NAME; }
        if (c === 0x0d) return SIZE_LF;
        break;
      case EXT_QUOTED:
        if (c === 0x22) return EXT_QUOTED_END;
        if (c === 0x5c) return EXT_QUOTED_ESCAPE;
        if (VALUE[c]) return EXT_QUOTED;
        break;
      case EXT_QUOTED_ESCAPE:
        if (VALUE[c]) return EXT_QUOTED;
        break;
      default: // EXT_QUOTED_END
        if (c === 0x3b) { this.nameStart = this.ext; return EXT_NAME; }
        if (c === 0x0d) return SIZE_LF;
    }
    throw this.bad(i, c === 0x0a ? 'a bare LF in a chunk size line' : `byte 0x${c.toString(16)} in a chunk extension`);
  }

  /** One byte of the trailer section: the next state. */
  trailer(state, c, i) {
    switch (state) {
      case TRAILER:
        if (c === 0x0d) return TRAILER_END_LF;
        if (TOKEN[c]) {
          if (++this.trailers > MAX_HEADERS) throw this.bad(i, `more than ${MAX_HEADERS} trailer fields`);
          return TRAILER_NAME;
        }
        if (c === 0x20 || c === 0x09) throw this.bad(i, 'a folded trailer line');
        break;
      case TRAILER_NAME:
        if (TOKEN[c]) return TRAILER_NAME;
        if (c === 0x3a) return TRAILER_VALUE;
        break;
      case TRAILER_VALUE:
        if (VALUE[c]) return TRAILER_VALUE;
        if (c === 0x0d) return TRAILER_LF;
        break;
      case TRAILER_LF:
        if (c === 0x0a) return TRAILER;
        throw this.bad(i, 'no LF after the CR of a trailer line');
      default: // TRAILER_END_LF
        if (c === 0x0a) return END;
        throw this.bad(i, 'no LF after the CR of a trailer line');
    }
    throw this.bad(i, c === 0x0a ? 'a bare LF in the trailers' : `byte 0x${c.toString(16)} in a trailer line`);
  }

  bad(at, what) {
    return new UpstreamProtocolError(`the upstream's chunked body is malformed at byte ${this.offset + at}: ${what}`);
  }
}

const isSpace = (c) => c === 0x20 || c === 0x09;

/**
 * A response head read byte by byte as llhttp reads it, or more strictly: `HTTP/1.0` or `HTTP/1.1`,
 * one space, a status of three digits (100–599), then nothing or a space and a reason of
 * header-value bytes; header fields as `token:` OWS value OWS with header-value bytes only; every
 * line ended by CRLF (no bare LF or CR), no folded line, at most MAX_HEADERS fields and
 * MAX_HEAD_BYTES in all (interim 1xx heads included). Each line is checked as it completes, so a
 * fault is found at its line, however the head is cut.
 */
class HeadReader {
  constructor() {
    /** Bytes of the head read so far (of earlier interim heads too), for the limit. */
    this.used = 0;
    this.reset();
  }

  reset() {
    this.statusCode = 0;
    this.headers = {};
    this.fields = 0;
    this.lineStart = 0;
    this.scanned = 0;
  }

  /**
   * Reads `all` (the head's bytes so far, from its first) from where the last call stopped: the
   * offset of the body's first byte once the head is whole, -1 while it is not. Throws
   * UpstreamProtocolError.
   */
  read(all) {
    for (let i = this.scanned; i < all.length; i++) {
      const c = all[i];
      if (c === 0x0d) {
        if (i + 1 === all.length) { this.scanned = i; return this.limit(all.length); }
        if (all[i + 1] !== 0x0a) throw badHead(`a CR without LF in line ${JSON.stringify(all.toString('latin1', this.lineStart, i + 2).slice(0, 80))}`);
        const end = i;
        i++;
        if (end === this.lineStart && this.statusCode !== 0) { // the empty line: the head is whole
          this.limit(i + 1);
          return i + 1;
        }
        this.line(all, this.lineStart, end);
        this.lineStart = i + 1;
      } else if (c === 0x0a) {
        throw badHead(`a bare LF in line ${JSON.stringify(all.toString('latin1', this.lineStart, i + 1).slice(0, 80))}`);
      }
    }
    this.scanned = all.length;
    return this.limit(all.length);
  }

  limit(bytes) {
    if (this.used + bytes > MAX_HEAD_BYTES) throw badHead(`the upstream's response head is over ${MAX_HEAD_BYTES} bytes`);
    return -1;
  }

  line(all, a, b) {
    if (this.statusCode === 0) return void this.statusLine(all, a, b);
    const first = all[a];
    if (isSpace(first)) throw badHead(`a folded header line: ${JSON.stringify(all.toString('latin1', a, b).slice(0, 80))}`);
    let c = a;
    while (c < b && TOKEN[all[c]]) c++;
    if (c === a || c === b || all[c] !== 0x3a) throw badHead(`the upstream sent a malformed header line: ${JSON.stringify(all.toString('latin1', a, b).slice(0, 80))}`);
    let v = c + 1;
    let e = b;
    while (v < e && isSpace(all[v])) v++;
    while (e > v && isSpace(all[e - 1])) e--;
    for (let k = v; k < e; k++) {
      if (!VALUE[all[k]]) throw badHead(`byte 0x${all[k].toString(16)} in the value of header ${all.toString('latin1', a, c)}`);
    }
    if (++this.fields > MAX_HEADERS) throw badHead(`more than ${MAX_HEADERS} header fields`);
    const name = all.toString('latin1', a, c).toLowerCase();
    const value = all.toString('latin1', v, e);
    const had = this.headers[name];
    if (had === undefined) this.headers[name] = value;
    else if (name === 'content-length') throw badHead('a duplicate Content-Length');
    else this.headers[name] = `${had}, ${value}`;
  }

  statusLine(all, a, b) {
    const text = all.toString('latin1', a, b);
    const m = /^HTTP\/1\.[01] ([1-5]\d\d)(?: ([^]*))?$/.exec(text);
    let ok = m !== null;
    if (ok && m[2] !== undefined) for (let k = a + 13; k < b; k++) if (!VALUE[all[k]]) ok = false;
    if (!ok) throw badHead(`the upstream's answer does not start with an HTTP/1.1 status line: ${JSON.stringify(text.slice(0, 80))}`);
    this.statusCode = Number(m[1]);
  }
}

const badHead = (what) => new UpstreamProtocolError(what.startsWith('the upstream') ? what : `the upstream's response head is malformed: ${what}`);

/**
 * How a response's body is framed (RFC 9112 6.3, without guessing): throws UpstreamProtocolError
 * on both Transfer-Encoding and Content-Length, a Transfer-Encoding other than `chunked`, a
 * Content-Length that is not digits (a duplicate was refused while the head was read).
 */
function framing(statusCode, headers) {
  const te = headers['transfer-encoding'];
  const cl = headers['content-length'];
  if (te !== undefined && cl !== undefined) throw badHead('both Transfer-Encoding and Content-Length');
  if (te !== undefined && te.toLowerCase() !== 'chunked') throw badHead(`Transfer-Encoding ${JSON.stringify(te.slice(0, 80))} (only chunked is read)`);
  if (cl !== undefined && !/^\d{1,15}$/.test(cl)) throw badHead(`an invalid Content-Length ${JSON.stringify(cl.slice(0, 80))}`);
  if (statusCode === 204 || statusCode === 304) return { chunked: false, left: 0 };
  return { chunked: te !== undefined, left: te !== undefined ? Infinity : cl !== undefined ? Number(cl) : Infinity };
}

/**
 * The upstream's answer: its status and headers, then its body (the chunk framing taken out), one
 * 'data' event per socket read.
 */
export class UpstreamResponse extends EventEmitter {
  constructor(socket, statusCode, headers, rest) {
    super();
    this.flowing = true; // (as a Readable: flowing once read, unless paused)
    this.socket = socket;
    this.statusCode = statusCode;
    this.headers = headers;
    /** The body ended, was cut or was destroyed: the connection is closed. */
    this.ended = false;
    const frame = framing(statusCode, headers);
    this.chunked = frame.chunked;
    /** Body bytes still to come with a Content-Length (Infinity: chunked, or until the connection closes). */
    this.left = frame.left;
    this.decoder = this.chunked ? new ChunkedDecoder() : null;
    this.rest = rest; // body bytes of the head's read, until the body is read
    this.started = false;
    /** How the connection ended before the body was asked for (its error, or a close). */
    this.early = undefined;
    this.onEarly = (err) => { this.early ??= err ?? cutShort(); };
    socket.on('error', this.onEarly);
    socket.on('close', this.onEarly);
    this.onData = (b) => this.take(b);
    /** The connection's end or close: the body's end if it was whole. */
    this.onGone = () => this.finish(this.complete() ? null : cutShort());
    this.onError = (err) => this.finish(err);
  }

  get destroyed() {
    return this.ended;
  }

  /** Whether the body arrived whole (its last chunk, or its Content-Length; until the close: any). */
  complete() {
    return this.chunked ? this.decoder.done : this.left === 0 || this.left === Infinity;
  }

  on(event, listener) {
    super.on(event, listener);
    if (event === 'data' && !this.started) {
      this.started = true;
      process.nextTick(() => this.start()); // after the caller's other listeners
    }
    return this;
  }

  addListener(event, listener) {
    return this.on(event, listener);
  }

  start() {
    const socket = this.socket;
    socket.off('error', this.onEarly);
    socket.off('close', this.onEarly);
    if (this.ended) return;
    socket.on('data', this.onData);
    socket.on('end', this.onGone);
    socket.on('error', this.onError);
    socket.on('close', this.onGone);
    const rest = this.rest;
    this.rest = null;
    if (rest !== null && rest.length) this.take(rest);
    if (this.left === 0 && !this.ended) this.finish(null);
    if (this.early !== undefined && !this.ended) this.finish(this.complete() ? null : this.early); // the connection ended while the body waited
    if (!this.ended && this.flowing) socket.resume();
  }

  take(b) {
    if (this.ended) return;
    let body = b;
    if (this.decoder !== null) {
      try {
        body = this.decoder.decode(b);
      } catch (err) {
        if (err.payload?.length) this.emit('data', err.payload); // the read's bytes before the fault first
        return void this.finish(err);
      }
    } else if (this.left !== Infinity) {
      if (body.length > this.left) body = body.subarray(0, this.left);
      this.left -= body.length;
    }
    if (body.length !== 0) this.emit('data', body);
    if (!this.ended && (this.left === 0 || (this.decoder !== null && this.decoder.done))) this.finish(null);
  }

  /** The body's end: 'end' (whole) or 'error' (cut or malformed), then 'close'; the socket is closed. */
  finish(err) {
    if (this.ended) return;
    this.ended = true;
    const socket = this.socket;
    socket.off('data', this.onData);
    socket.off('end', this.onGone);
    socket.off('close', this.onGone);
    socket.off('error', this.onError);
    closeQuietly(socket);
    if (!err) this.emit('end');
    else if (this.listenerCount('error') > 0) this.emit('error', err);
    this.emit('close');
  }

  pause() {
    this.flowing = false;
    this.socket.pause();
    return this;
  }

  resume() {
    this.flowing = true;
    if (this.started && !this.ended) this.socket.resume();
    return this;
  }

  /** Closes the connection; a body not read to its end ends in 'close' alone (on the next tick, as a stream's). */
  destroy() {
    if (this.ended) return this;
    this.ended = true;
    closeQuietly(this.socket);
    process.nextTick(() => this.emit('close'));
    return this;
  }

  /** Bytes read from the upstream and not handed over yet (the socket's buffer while paused). */
  get readableLength() {
    return this.socket.readableLength + (this.rest?.length ?? 0);
  }
}

/** A host name (DNS labels), an IPv4 address, or an IPv6 address (in brackets or not). */
const HOSTNAME = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

/** Whether every character of `value` is a byte HTTP allows in a field value: HTAB, 0x20–0x7E, 0x80–0xFF (the head is written as Latin-1). */
export function isFieldValue(value) {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c > 0xff || !VALUE[c]) return false;
  }
  return true;
}

/**
 * Checks what goes into a request head: a path of visible ASCII starting with `/`, a host name or
 * IP address, a port 1–65535, token header names, header values of field-value bytes (checked as
 * the Latin-1 bytes they are written as, so U+010D cannot become CR). Throws TypeError.
 */
function checkRequest(host, port, path, headers) {
  if (!(net.isIP(host) || (host.length <= 253 && HOSTNAME.test(host)))) throw new TypeError(`requestUpstream: ${JSON.stringify(host)} is not a host name or IP address`);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new TypeError(`requestUpstream: port ${port} is not 1..65535`);
  if (typeof path !== 'string' || !/^\/[\x21-\x7e]*$/.test(path)) throw new TypeError(`requestUpstream: the path ${JSON.stringify(path)} must start with / and hold visible ASCII only (percent-encode the rest)`);
  for (const [k, v] of Object.entries(headers)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k) || !isFieldValue(String(v))) throw new TypeError(`requestUpstream: header ${JSON.stringify(k)} has a character HTTP does not allow`);
  }
}

/**
 * Sends a request: resolves its UpstreamResponse once the status and headers arrived, rejects on
 * a connection error, a malformed head or `destroy()`. The returned object has `destroy(err)`
 * (closes the connection) and `destroyed`. With `protocol: 'https:'` over TLS, the certificate
 * checked against Node's CAs (NODE_EXTRA_CA_CERTS adds some), or against `ca` when given.
 * Interim 1xx heads (100 Continue, 102 Processing, 103 Early Hints, …) are skipped, as RFC 9110
 * 15.2 has a client do with those it did not ask for (within MAX_HEAD_BYTES in all); a 101 is an error.
 * `createConnection()`, when given, opens the connection instead (a Duplex: a tunnel, or a test's
 * stream in memory).
 */
export function requestUpstream({ protocol = 'http:', hostname, port, path, headers, body, servername, ca, createConnection }) {
  if (protocol !== 'http:' && protocol !== 'https:') throw new TypeError(`requestUpstream: protocol ${JSON.stringify(protocol)} (http: or https:)`);
  const host = hostname.replace(/^\[(.*)\]$/, '$1'); // (a URL's IPv6 address comes in brackets)
  const all = { ...headers, 'content-length': body.length, connection: 'close' };
  checkRequest(host, port, path, all);
  const head = [`POST ${path} HTTP/1.1`, `host: ${host.includes(':') ? `[${host}]` : host}:${port}`];
  for (const [k, v] of Object.entries(all)) head.push(`${k}: ${v}`);
  const socket = createConnection ? createConnection() : protocol === 'https:'
    ? tls.connect({ host, port, servername: servername ?? (net.isIP(host) ? undefined : host), ALPNProtocols: ['http/1.1'], ...(ca ? { ca } : {}) })
    : net.connect({ host, port });
  socket.setNoDelay?.(true);
  let fail;
  const req = {
    destroyed: false,
    socket,
    destroy(err) {
      if (req.destroyed) return;
      req.destroyed = true;
      closeQuietly(socket);
      fail?.(err ?? new Error('the upstream request was aborted'));
    },
  };
  req.response = new Promise((resolve, reject) => {
    // The head's bytes so far: the first read itself, then a view of `room`, which grows by
    // doubling (a head that comes in many small reads is copied a few times, where each read
    // copied all before it: 64 KiB in one-byte reads was 2 GB of copies).
    let all = null;
    let room = null;
    const reader = new HeadReader();
    const done = (err, res) => {
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
      fail = null;
      if (err) {
        req.destroyed = true;
        closeQuietly(socket);
        reject(err);
      } else resolve(res);
    };
    fail = done;
    const onData = (b) => {
      if (all === null) all = b;
      else {
        const n = all.length + b.length;
        if (room === null || n > room.length) room = Buffer.concat([all, b], Math.max(n, 2 * all.length));
        else b.copy(room, all.length);
        all = room.subarray(0, n);
      }
      try {
        for (;;) {
          const at = reader.read(all);
          if (at < 0) return;
          const { statusCode, headers: got } = reader;
          const rest = all.subarray(at);
          // an interim answer (a 100 Continue some servers send unasked; a 103 Early Hints a CDN adds;
          // a 102 Processing): the next head. It was an error past a 100, the answer lost to a 502
          if (statusCode < 200 && statusCode !== 101) {
            reader.used += at;
            reader.reset();
            all = rest;
            room = null; // (the next read is put after `rest` in a room of its own)
            continue;
          }
          if (statusCode === 101) throw badHead('a 101 Switching Protocols (the gateway asked for no upgrade)');
          const res = new UpstreamResponse(socket, statusCode, got, rest);
          socket.pause(); // until the body is read (its first 'data' listener)
          return void done(null, res);
        }
      } catch (err) {
        done(err);
      }
    };
    const onError = (err) => done(err);
    const onClose = () => done(new Error('the upstream closed the connection before answering'));
    socket.on('data', onData);
    socket.on('error', onError);
    socket.on('close', onClose);
  });
  req.response.catch(() => {}); // (the caller awaits it; an abort before that is not an unhandled rejection)
  // (the head and the body as two writes in one: the body is not copied)
  socket.cork();
  socket.write(Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'));
  socket.write(body);
  socket.uncork();
  return req;
}
