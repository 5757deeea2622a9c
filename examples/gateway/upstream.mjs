// The gateway's HTTP/1.1 client for its upstream: one connection per request (`Connection:
// close`), over `net` or `tls`. Node's `http.request` hands a response body over as one 'data'
// event per HTTP chunk, each a call from its parser into JavaScript and a trip through a Readable;
// a model stream is written one small chunk per event, so at full speed that was the largest part
// of the gateway's CPU time (bench/gateway.mjs --profile: `socketOnData`, a quarter of it). Here a
// socket read becomes one 'data' event: its chunk framing is taken out in place (the payloads
// moved together within the read's own buffer, no copy), so that the relay gets every event of
// the read at once and, from OpenAI, hands back that same memory to write.
//
// What a response offers is the part of http.IncomingMessage the gateway uses: statusCode,
// headers, 'data' / 'end' / 'error' / 'close', pause(), resume(), destroy(), destroyed and
// readableLength. Its body waits for its first 'data' listener (as a Readable's would).
import { EventEmitter } from 'node:events';
import net from 'node:net';
import tls from 'node:tls';

/** The most bytes a response's status line and headers may take. */
export const MAX_HEAD_BYTES = 64 * 1024;

const CRLF_CRLF = Buffer.from('\r\n\r\n');

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

// states of the chunked decoder
const SIZE = 0; // hex digits of a chunk's size
const EXT = 1; // a chunk extension (or white space) up to CR
const SIZE_LF = 2; // LF after the size line's CR
const DATA = 3; // the chunk's bytes
const DATA_CR = 4; // CR after them
const DATA_LF = 5; // LF after that CR
const TRAILER = 6; // trailer lines, up to an empty one
const TRAILER_LF = 7; // LF after a trailer line's CR
const END = 8; // the last chunk and its trailers were read

/** The most hex digits of a chunk size (2^52 bytes: more than any stream, less than a double holds exactly). */
const MAX_SIZE_DIGITS = 13;

/**
 * `Transfer-Encoding: chunked` taken out of a body read by read, in place: `decode(buf)` moves the
 * read's payload bytes to its start and returns a view of them (of `buf` itself). Malformed
 * framing throws UpstreamProtocolError with the body's byte offset, and with `payload`, the bytes
 * of that read before the fault; the decoder then throws again.
 */
export class ChunkedDecoder {
  constructor() {
    this.state = SIZE;
    this.size = 0;
    this.digits = 0;
    this.left = 0;
    this.lineEmpty = true;
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
        switch (state) {
          case DATA: {
            const m = Math.min(this.left, n - i);
            if (w !== i) buf.copyWithin(w, i, i + m);
            w += m;
            i += m;
            this.left -= m;
            if (this.left === 0) state = DATA_CR;
            break;
          }
          case SIZE: {
            const c = buf[i];
            const v = HEX[c];
            if (v >= 0) {
              if (++this.digits > MAX_SIZE_DIGITS) throw this.bad(i, 'a chunk size over 13 hex digits');
              this.size = this.size * 16 + v;
            } else if (this.digits === 0) {
              throw this.bad(i, 'a chunk size line without a size');
            } else if (c === 0x0d) {
              state = SIZE_LF;
            } else if (c === 0x3b || c === 0x20 || c === 0x09) {
              state = EXT;
            } else {
              throw this.bad(i, `byte 0x${c.toString(16)} in a chunk size`);
            }
            i++;
            break;
          }
          case EXT: {
            const c = buf[i++];
            if (c === 0x0d) state = SIZE_LF;
            else if (c === 0x0a) throw this.bad(i - 1, 'a bare LF in a chunk size line');
            break;
          }
          case SIZE_LF:
            if (buf[i] !== 0x0a) throw this.bad(i, 'no LF after the CR of a chunk size line');
            i++;
            if (this.size === 0) {
              state = TRAILER;
              this.lineEmpty = true;
            } else {
              state = DATA;
              this.left = this.size;
            }
            this.size = 0;
            this.digits = 0;
            break;
          case DATA_CR:
            if (buf[i] !== 0x0d) throw this.bad(i, 'a chunk longer than its size');
            i++;
            state = DATA_LF;
            break;
          case DATA_LF:
            if (buf[i] !== 0x0a) throw this.bad(i, 'no LF after the CR that ends a chunk');
            i++;
            state = SIZE;
            break;
          case TRAILER: {
            const c = buf[i++];
            if (c === 0x0d) state = TRAILER_LF;
            else if (c === 0x0a) throw this.bad(i - 1, 'a bare LF in the trailers');
            else this.lineEmpty = false;
            break;
          }
          case TRAILER_LF:
            if (buf[i] !== 0x0a) throw this.bad(i, 'no LF after the CR of a trailer line');
            i++;
            if (this.lineEmpty) state = END;
            else { state = TRAILER; this.lineEmpty = true; }
            break;
          default: // END: what follows the body is not read
            i = n;
        }
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

  bad(at, what) {
    return new UpstreamProtocolError(`the upstream's chunked body is malformed at byte ${this.offset + at}: ${what}`);
  }
}

/** A status line and header lines; throws UpstreamProtocolError. */
function parseHead(text) {
  const lines = text.split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0]);
  if (!m) throw new UpstreamProtocolError(`the upstream's answer does not start with an HTTP/1.1 status line: ${JSON.stringify(lines[0].slice(0, 80))}`);
  const headers = {};
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    const c = line.indexOf(':');
    if (c <= 0 || /[\s]/.test(line[c - 1])) throw new UpstreamProtocolError(`the upstream sent a malformed header line: ${JSON.stringify(line.slice(0, 80))}`);
    const name = line.slice(0, c).toLowerCase();
    const value = line.slice(c + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  return { statusCode: Number(m[1]), headers };
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
    const te = (headers['transfer-encoding'] ?? '').toLowerCase();
    const cl = headers['content-length'];
    this.chunked = /(?:^|,)\s*chunked\s*$/.test(te);
    /** Body bytes still to come with a Content-Length (Infinity: until the connection closes). */
    this.left = this.chunked ? Infinity : statusCode === 204 || statusCode === 304 ? 0 : cl !== undefined && /^\d+$/.test(cl.trim()) ? Number(cl) : Infinity;
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

/**
 * Sends a request: resolves its UpstreamResponse once the status and headers arrived, rejects on
 * a connection error, a malformed head or `destroy()`. The returned object has `destroy(err)`
 * (closes the connection) and `destroyed`. With `protocol: 'https:'` over TLS, the certificate
 * checked against Node's CAs (NODE_EXTRA_CA_CERTS adds some), or against `ca` when given.
 */
export function requestUpstream({ protocol = 'http:', hostname, port, path, headers, body, servername, ca }) {
  const host = hostname.replace(/^\[(.*)\]$/, '$1'); // (a URL's IPv6 address comes in brackets)
  const head = [`POST ${path} HTTP/1.1`, `host: ${host.includes(':') ? `[${host}]` : host}:${port}`];
  for (const [k, v] of Object.entries({ ...headers, 'content-length': body.length, connection: 'close' })) {
    const value = String(v);
    if (/[\r\n\0]/.test(value) || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k)) throw new TypeError(`requestUpstream: header ${JSON.stringify(k)} has a character HTTP does not allow`);
    head.push(`${k}: ${value}`);
  }
  const socket = protocol === 'https:'
    ? tls.connect({ host, port, servername: servername ?? (net.isIP(host) ? undefined : host), ALPNProtocols: ['http/1.1'], ...(ca ? { ca } : {}) })
    : net.connect({ host, port });
  socket.setNoDelay(true);
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
    let parts = [];
    let bytes = 0;
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
      parts.push(b);
      bytes += b.length;
      let all = parts.length === 1 ? parts[0] : Buffer.concat(parts, bytes);
      for (;;) {
        const at = all.indexOf(CRLF_CRLF);
        if (at < 0) {
          if (all.length > MAX_HEAD_BYTES) return void done(new UpstreamProtocolError(`the upstream's response head is over ${MAX_HEAD_BYTES} bytes`));
          parts = [all];
          return;
        }
        let parsed;
        try {
          parsed = parseHead(all.toString('latin1', 0, at));
        } catch (err) {
          return void done(err);
        }
        const rest = all.subarray(at + 4);
        if (parsed.statusCode >= 100 && parsed.statusCode < 200) { // an interim answer (103 Early Hints, 100 Continue): the next head
          all = rest;
          parts = [rest];
          bytes = rest.length;
          continue;
        }
        socket.pause(); // until the body is read (its first 'data' listener)
        return void done(null, new UpstreamResponse(socket, parsed.statusCode, parsed.headers, rest));
      }
    };
    const onError = (err) => done(err);
    const onClose = () => done(new Error('the upstream closed the connection before answering'));
    socket.on('data', onData);
    socket.on('error', onError);
    socket.on('close', onClose);
  });
  req.response.catch(() => {}); // (the caller awaits it; an abort before that is not an unhandled rejection)
  socket.write(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), body]));
  return req;
}
