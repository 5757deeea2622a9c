// One stream: a client's request and its upstream request (Stream), from the request's body to
// its answer's end: the body read and checked, the upstream request sent, its error status
// answered, its answer written by the kind the client asked for (relay.mjs, streamed;
// whole-answer.mjs, whole), and the stream's end however it comes: the client leaving, a
// timeout, the upstream failing.
import { JSON_MAX_DEPTH, jsonTooDeep } from 'seam-stream';
import { RequestError, upstreamRequest } from '../requests/index.mjs';
import { UpstreamProtocolError, requestUpstream } from '../upstream.mjs';
import { KiB } from './options.mjs';
import { Pieces, jsonObjectEnd, readBody } from './read-body.mjs';
import { clientGone, errorBody, retryHeaders, sendJson, upstreamError } from './replies.mjs';
import { relayAnswer, relayedStatus } from './relay.mjs';
import { assembleWhole, passWhole } from './whole-answer.mjs';

const ERROR_BODY_BYTES = 64 * KiB;
/**
 * The longest model name (UTF-16 units) an answer written anew in the client's API names: each
 * chunk of a translated stream to OpenAI's clients repeats it (Bedrock's model ids, ARNs among
 * them, are at most 2048 characters).
 */
const MAX_MODEL_NAME = 2048;

/**
 * What an upstream's success answer (its headers) is, when it cannot be its answer, or undefined:
 * a body in a content coding (the gateway asks for none, `accept-encoding: identity`, and reads
 * the bytes as they come), or, for an answer read as a stream (`streamed`), a page (HTML: a
 * proxy's, a login portal's). A whole answer passed through is told by its body (a JSON object),
 * whatever its type says.
 */
function notAnAnswer(headers, streamed) {
  const coding = headers['content-encoding'];
  if (coding !== undefined && !/^\s*(identity\s*)?$/i.test(coding)) return `a body in the content coding ${JSON.stringify(coding.slice(0, 100))}`;
  const type = headers['content-type'];
  if (streamed && type !== undefined && /^\s*(text\/html|application\/xhtml\+xml)\s*(;|$)/i.test(type)) return `a page (${JSON.stringify(type.slice(0, 100))})`;
  return undefined;
}

/**
 * One client request and its upstream request. `gw`: the gateway's state, which its streams share
 * (createGateway's): its options, metrics, upstream, clock and the streams' budget.
 */
export class Stream {
  constructor(gw, res, id, dialect) {
    this.gw = gw;
    this.res = res;
    this.id = id;
    /** The client's API: `openai` (Chat Completions) or `anthropic` (Messages). */
    this.dialect = dialect;
    this.upReq = null;
    this.upRes = null;
    /**
     * The clock's tick when the upstream last made progress (it answered; an answer's event that
     * is not a keep-alive, or a whole answer's or error body's bytes), when the gateway last wrote
     * to the client (relayed bytes or a keep-alive), and when the stream began.
     */
    this.heard = gw.tick;
    this.beat = gw.tick;
    this.born = gw.tick;
    /** The upstream's events that were not keep-alives, as its reader last counted them (`progressed`). */
    this.progress = 0;
    /** Bytes came from the upstream since its last progress (keep-alives, part of an event): the timeout says so. */
    this.pinged = false;
    /** Bytes the client had taken at the last tick (its socket's written bytes less its buffer), and ticks since that moved. */
    this.taken = 0;
    this.stalled = 0;
    /** While the client is behind (its buffer not empty): the tick its window began, and its taken bytes then; -1, not behind. */
    this.behind = -1;
    this.behindTaken = 0;
    /** The most bytes the stream held at once (its client's write buffer and its unfinished event). */
    this.peak = 0;
    /**
     * The client's write buffer right after the gateway last wrote to it: at least what it holds
     * now (it only shrinks until the next write). Their sum over the streams is the budget's `written`.
     */
    this.wrote = 0;
    /** The bytes of the request's body that came, while it is read (requestBodyTimeout); -1 after. */
    this.reading = 0;
    /** Bytes the stream holds in JavaScript (the request body being read, a whole answer): their sum is the budget's `holding`. */
    this.held = 0;
    /** What the clock calls at bodyTimeout in place of expiring the stream (the reading of an error body), or null. */
    this.silent = null;
    /** The upstream read is paused (the client's buffer is full): its response buffers up to a read more than its high-water mark. */
    this.paused = false;
    this.status = 'aborted';
    /** The stream reached its upstream request: it counts in llm_streams_total. */
    this.counted = false;
    this.closed = false;
    /** The client left before the answer ended. */
    this.left = false;
    /** A timeout ended the stream (its answer written). */
    this.expired = false;
    this.done = null; // resolves the current phase when the client leaves or a timeout ends the stream
    this.relaying = null; // the relay of the streaming phase, while it runs
    // The client took its whole answer when the response finished on a connection that did not
    // fail: Node 20 also emits 'finish' when the client's reset destroyed the connection with
    // the answer's end still in its buffer (Node 22 and later do not), and that is the client
    // leaving, in the tick before 'close'.
    const socket = res.socket;
    const left = () => {
      if (!res.writableFinished || (socket !== null && socket.errored != null)) this.abort();
    };
    res.on('finish', left);
    res.on('close', left);
  }

  /** The request's body, then the upstream's answer. */
  async serve(req) {
    const { gw, res } = this;
    const { o, m } = gw;
    // (a request that breaks off, or that Node's requestTimeout cuts, errs with 'aborted': the client is gone)
    // (a timeout, or the drain's end, ends the phase as the client's leaving does: once the gateway
    // has answered, Node emits nothing more on a request whose body did not all come, and its
    // read never ended: the stream held its slot for ever, and close() never resolved)
    let raw = await new Promise((resolve) => {
      this.done = () => resolve(undefined);
      readBody(req, o.maxRequestBytes, true, (n) => {
        this.reading += n;
        return this.hold(n);
      }).then(resolve, () => resolve(undefined));
    });
    this.done = null;
    this.reading = -1;
    this.release();
    if (raw === undefined) return;
    if (this.left || this.expired || (Buffer.isBuffer(raw) && !req.complete)) return; // (the client left mid-body, or it timed out)
    if (raw === false) {
      m.limitErrors.inc({ limit: 'pending_bytes' });
      return sendJson(res, 503, errorBody(`the gateway's streams hold more than maxPendingBytes (${o.maxPendingBytes}) with this request's body; retry later`, 'overloaded', 'ERR_PENDING_BYTES'),
        { 'retry-after': '1', connection: 'close' });
    }
    if (raw === null) {
      m.limitErrors.inc({ limit: 'request_bytes' });
      return sendJson(res, 413, errorBody(`the request body is over ${o.maxRequestBytes} bytes`, 'invalid_request_error', 'ERR_REQUEST_TOO_LARGE'), { connection: 'close' });
    }
    // (a request nested deeper than seam's JSON reader takes an upstream's event: JSON.parse takes
    // any depth, but JSON.stringify (the request sent upstream) and the translations' walks over a
    // schema recurse, and past JavaScript's stack (some thousands of levels) a request of 1 MiB was
    // the gateway's 500, its stack trace logged each time)
    if (jsonTooDeep(raw) >= 0) {
      return sendJson(res, 400, errorBody(`the request body nests deeper than ${JSON_MAX_DEPTH} levels`, 'invalid_request_error', 'ERR_BAD_REQUEST'));
    }
    let body;
    try { body = JSON.parse(raw.toString('utf8')); } catch { body = undefined; }
    raw = null; // not kept for the life of the stream
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return sendJson(res, 400, errorBody('the request body must be a JSON object', 'invalid_request_error', 'ERR_BAD_REQUEST'));
    }
    const stream = body.stream === true;
    // A whole answer from an upstream of another API than the client's is read from its stream
    // (so that it is validated and assembled as the streamed one is); in the client's own API
    // (OpenAI to OpenAI, Anthropic to Anthropic) it passes through.
    const credential = gw.upstreamCredential ?? (gw.keyed ? {} : req.headers);
    // (an Anthropic client's version and beta headers go on to an Anthropic upstream; they carry no credential)
    const forwarded = this.dialect === 'anthropic' ? { ...credential, 'anthropic-version': req.headers['anthropic-version'], 'anthropic-beta': req.headers['anthropic-beta'] } : credential;
    const same = gw.format === this.dialect;
    // The model the client asked for, which an answer written anew in its API names (a whole
    // answer, and each chunk of a translated stream to OpenAI's clients: bounded, since each
    // chunk repeats it).
    const model = typeof body.model === 'string' ? body.model : undefined;
    if (!same && model !== undefined && model.length > MAX_MODEL_NAME) {
      return sendJson(res, 400, errorBody(`model: a name of at most ${MAX_MODEL_NAME} characters, not ${model.length}`, 'invalid_request_error', 'ERR_BAD_REQUEST', { param: 'model' }));
    }
    let up;
    try {
      up = upstreamRequest(gw.format, gw.upstreamUrl, same ? body : { ...body, stream: true }, forwarded, this.dialect, process.env, gw.settings);
    } catch (err) {
      // (a model name with a lone surrogate, which encodeURIComponent refuses, for an upstream
      // that has the model in its URL: the client's error, not the gateway's)
      if (err instanceof URIError && model !== undefined && !model.isWellFormed()) {
        return sendJson(res, 400, errorBody('model: the name has a lone surrogate (it is not well-formed Unicode), which the upstream\'s URL cannot hold',
          'invalid_request_error', 'ERR_BAD_REQUEST', { param: 'model' }));
      }
      if (!(err instanceof RequestError)) throw err;
      return sendJson(res, 400, errorBody(err.message, 'invalid_request_error', 'ERR_BAD_REQUEST', err.param !== undefined ? { param: err.param } : undefined));
    }
    this.counted = true;
    // (the request, parsed and as sent upstream, is not kept for the life of the stream: a local
    // of this function lives as long as it awaits, whether or not it is read again)
    body = null;
    const sending = this.request(up);
    up = null; // (before this function awaits: the request as objects, its translation too, is not kept while the upstream answers)
    const upRes = await sending;
    this.release(); // (the request's bytes: sent)
    if (upRes === null) return; // the client left, or the upstream failed before answering (answered)
    if (upRes.statusCode >= 300 && upRes.statusCode < 400) {
      // A redirect is no answer (the gateway follows none: its upstream URL is wrong), and its body
      // (a page of the server's) is not passed on; where it pointed goes to the log alone.
      const where = upRes.headers.location;
      upRes.destroy();
      m.providerErrors.inc({ source: 'status' });
      this.status = 'failed';
      gw.log(`gateway: request ${this.id}: 502: the upstream answered HTTP ${upRes.statusCode}, a redirect${where !== undefined ? ` to ${JSON.stringify(where.slice(0, 500))}` : ''}: the gateway follows none (check its upstream URL)`);
      return sendJson(res, 502, errorBody(`the upstream answered HTTP ${upRes.statusCode}, a redirect, which the gateway does not follow (request id ${this.id}; the gateway's log has the detail)`,
        'upstream_error', 'ERR_UPSTREAM_REDIRECT'));
    }
    const unreadable = upRes.statusCode < 300 ? notAnAnswer(upRes.headers, stream || !same) : undefined;
    if (unreadable !== undefined) {
      // (a proxy's or a portal's page answered with a 200, or a body compressed all the same: not
      // relayed as a 200 whose stream then "ended without its completion", nor read as the
      // answer; what it was goes to the log)
      upRes.destroy();
      m.providerErrors.inc({ source: 'status' });
      this.status = 'failed';
      gw.log(`gateway: request ${this.id}: 502: the upstream answered HTTP ${upRes.statusCode} with ${unreadable}, not its answer`);
      return sendJson(res, 502, errorBody(`the upstream's answer is not one the gateway can read (request id ${this.id}; the gateway's log has the detail)`, 'upstream_error', 'ERR_BAD_RESPONSE'));
    }
    if (upRes.statusCode >= 400) {
      const text = await this.errorBody(upRes);
      this.release();
      if (this.left || this.expired) return;
      m.providerErrors.inc({ source: 'status' });
      this.status = 'failed';
      const said = text === null ? '' : text.toString('utf8');
      const error = upstreamError(gw.format, upRes.statusCode, gw.redact === null ? said : gw.redact.text(said), this.dialect);
      // (to Anthropic's clients a billing_error is Anthropic's 402: they retry a 429, and a spent
      // quota does not come back by retrying)
      return sendJson(res, error.error?.type === 'billing_error' && this.dialect === 'anthropic' ? 402 : upRes.statusCode, error, retryHeaders(upRes.headers));
    }
    if (!stream) return await (same ? passWhole(this, upRes) : assembleWhole(this, upRes, model ?? gw.format));
    await relayAnswer(this, upRes, model);
  }

  /**
   * The upstream's error body (up to ERROR_BODY_BYTES), or null: none to pass on (a body that
   * broke off, the log has why; one past the limit or the gateway's memory). Read as a stream is:
   * each piece is upstream bytes for bodyTimeout. It is read until its JSON object ends, not
   * until the connection does (an upstream can hold that open after it); at bodyTimeout the
   * client gets what came, if it is that object, else the status alone.
   */
  errorBody(upRes) {
    const { gw } = this;
    return new Promise((resolve) => {
      const pieces = new Pieces(); // (an upstream's body a byte a read is held as its bytes)
      let n = 0;
      let ended = false;
      const scan = jsonObjectEnd();
      const finish = (body) => {
        if (ended) return;
        ended = true;
        this.silent = null;
        upRes.off('data', take);
        resolve(body === undefined ? pieces.take() : body);
        pieces.clear();
      };
      const take = (b) => {
        this.heard = gw.tick;
        const end = scan(b);
        const piece = end === -1 ? b : b.subarray(0, end);
        if (n + piece.length > ERROR_BODY_BYTES || !this.hold(piece.length)) {
          finish(null);
          return void upRes.destroy();
        }
        pieces.keep(piece);
        n += piece.length;
        if (end !== -1) {
          finish();
          upRes.destroy(); // (nothing more is read: the connection closes here)
        }
      };
      upRes.on('data', take);
      upRes.on('end', () => finish());
      upRes.on('close', () => finish());
      upRes.on('error', (err) => {
        if (!ended && !this.left && !this.expired) gw.log(`gateway: request ${this.id}: the upstream's ${upRes.statusCode} body broke off: ${err?.message ?? err}`);
        finish(null);
      });
      // (the clock, at bodyTimeout: what came, and the upstream closed)
      this.silent = () => {
        gw.m.timeouts.inc({ timeout: 'body' });
        gw.log(`gateway: request ${this.id}: the upstream's ${upRes.statusCode} body: nothing more for ${gw.o.bodyTimeout} ms (${n} bytes came)`);
        finish();
        upRes.destroy();
      };
    });
  }

  /**
   * After a read of the upstream's answer: `events`, its reader's events that are not keep-alives
   * (`events - pings`: SSE comments are no events, Anthropic's pings are). More than before is
   * progress, which bodyTimeout counts from; keep-alives alone (and an event's part) are not, so
   * an upstream that only pings no longer holds the stream until maxDuration.
   */
  progressed(events) {
    if (events === this.progress) return;
    this.progress = events;
    this.pinged = false;
    this.heard = this.gw.tick;
  }

  /** Holds `n` more bytes in JavaScript; false once the streams together hold maxPendingBytes. */
  hold(n) {
    const { budget } = this.gw;
    this.held += n;
    budget.holding += n;
    return !(budget.mightBeFull() && budget.pendingBytes() >= this.gw.o.maxPendingBytes);
  }

  /** `n` of the bytes the stream holds in JavaScript are let go. */
  letGo(n) {
    this.held -= n;
    this.gw.budget.holding -= n;
  }

  /** What the stream held in JavaScript is let go. */
  release() {
    this.gw.budget.holding -= this.held;
    this.held = 0;
  }

  /**
   * A 502 with a generic message; the detail goes to the log under the request id. `source`, for
   * llm_provider_errors_total: `connect` (no answer), or `body` (an answer that broke off).
   */
  failed(err, source = 'connect') {
    if (this.closed || this.left || this.expired) return;
    const { m, log } = this.gw;
    m.providerErrors.inc({ source });
    this.status = 'failed';
    const timeout = err?.code === 'ERR_UPSTREAM_TIMEOUT';
    if (!timeout) log(`gateway: request ${this.id}: 502: ${err?.message ?? err}`);
    const [message, code] = timeout ? [`the upstream could not be reached: ${err.message}`, 'ERR_UPSTREAM_UNREACHABLE']
      : err instanceof UpstreamProtocolError ? [`the upstream's answer broke HTTP/1.1 (request id ${this.id}; the gateway's log has the detail)`, 'ERR_UPSTREAM_PROTOCOL']
        : [`the upstream could not be reached (request id ${this.id}; the gateway's log has the detail)`, 'ERR_UPSTREAM_UNREACHABLE'];
    if (!this.res.destroyed) sendJson(this.res, 502, errorBody(message, 'upstream_error', code));
  }

  /** Sends the upstream request; resolves its response, or null (then the client was answered or left). */
  async request(up) {
    const { gw } = this;
    // The request's bytes are held until the upstream answers (the socket's buffer holds them
    // until the upstream reads them, an upstream that takes a connection and reads nothing for
    // upstreamTimeout among them), in the budget; the request as objects (`up`, its payload) not.
    const payload = Buffer.from(JSON.stringify(up.payload));
    const { protocol, hostname, port, path, sign } = up;
    let headers = up.headers;
    up = null;
    if (!this.hold(payload.length)) {
      gw.m.limitErrors.inc({ limit: 'pending_bytes' });
      this.status = 'limit';
      sendJson(this.res, 503, errorBody(`the gateway's streams hold more than maxPendingBytes (${gw.o.maxPendingBytes}) with this request; retry later`, 'overloaded', 'ERR_PENDING_BYTES'),
        { 'retry-after': '1' });
      return null;
    }
    if (sign !== undefined) {
      // (Bedrock: SigV4 over the body as sent)
      try {
        headers = await sign(payload);
      } catch (err) {
        // The gateway's own failure, before any connection (its signer could not be loaded, or
        // could not sign, or it has no AWS credentials or region: a GatewayConfigError): no
        // provider error, but a 500 as any other of the gateway's errors (createGateway's handle), its detail
        // in the log under the request id.
        if (this.closed || this.left || this.expired) return null;
        this.status = 'failed';
        throw err;
      }
      if (this.closed || this.left || this.expired) return null;
    }
    return new Promise((resolve) => {
      // (the phase's end, until the upstream answers: then let go, with this function's context,
      // the request sent among it, which it would keep for as long as a whole answer is read)
      const done = () => resolve(null);
      this.done = done;
      const answered = () => { if (this.done === done) this.done = null; };
      // one connection per upstream request, closed with it: an aborted stream leaves no socket behind
      let upReq;
      try {
        upReq = requestUpstream({ protocol, hostname, port, path, headers, body: payload });
      } catch (err) {
        this.failed(err);
        return resolve(null);
      }
      this.upReq = upReq;
      const timer = setTimeout(() => {
        const err = new Error(`no answer from the upstream within ${gw.o.upstreamTimeout} ms`);
        err.code = 'ERR_UPSTREAM_TIMEOUT';
        upReq.destroy(err);
      }, gw.o.upstreamTimeout);
      upReq.response.then((r) => {
        clearTimeout(timer);
        answered();
        this.upRes = r;
        this.heard = gw.tick;
        // (a client whose connection closed in this tick gets no head: its 'close' aborts the rest)
        if (this.closed || this.left || this.expired || clientGone(this.res)) { r.destroy(); resolve(null); } else resolve(r);
      }, (err) => {
        clearTimeout(timer);
        answered();
        this.failed(err);
        resolve(null);
      });
    });
  }

  /**
   * The client left before its answer was all handed to its connection: abort the upstream
   * request (its socket is destroyed with it). The stream counts as aborted, whatever the upstream
   * did (the client did not get its end), unless a timeout had ended it.
   */
  abort() {
    this.left = true;
    if (!this.expired) this.status = 'aborted';
    this.stopUpstream();
  }

  /** Closes the upstream connection and ends the current phase. */
  stopUpstream() {
    if (this.upReq !== null && !this.upReq.destroyed) this.upReq.destroy();
    if (this.upRes !== null && !this.upRes.destroyed) this.upRes.destroy();
    const done = this.done;
    this.done = null;
    done?.();
  }

  /**
   * A timeout ends the stream: the current phase ends (a relay writes nothing more), the upstream
   * connection closes, and the client gets the end the relay's `abort()` writes after everything
   * relayed before it: an SSE error event (the upstream's own, if the relay had read one and not
   * written it yet), or, when the upstream had completed (a Bedrock stream waiting for its
   * metadata), the client's end as `flush()` writes it ([DONE]: never an error after a
   * completion); or a 504 when no answer was started. A client that takes nothing is then dropped.
   * `drain`: the gateway is closing and the stream outlived its drain time: the same end, as the
   * gateway's being unavailable (`overloaded`, ERR_SHUTTING_DOWN; a 503 when no answer was started).
   */
  expire(kind, message) {
    if (this.closed) return;
    const { m } = this.gw;
    const res = this.res;
    if (this.expired) { // (its end written after another timeout, and not taken either)
      if (kind === 'client') res.destroy();
      return;
    }
    this.expired = true;
    m.timeouts.inc({ timeout: kind });
    const code = { request: 'ERR_REQUEST_TIMEOUT', body: 'ERR_UPSTREAM_BODY_TIMEOUT', client: 'ERR_CLIENT_TIMEOUT', duration: 'ERR_MAX_DURATION', drain: 'ERR_SHUTTING_DOWN' }[kind];
    const [status, type] = kind === 'drain' ? [503, 'overloaded'] : kind === 'request' ? [408, 'invalid_request_error'] : [504, 'timeout'];
    const answered = res.writableEnded; // the answer was whole, and waits for its client to take it
    // (a stream being relayed: its error event in the client's format, after everything relayed before it)
    let tail = this.relaying === null ? null : Buffer.from(this.relaying.abort({ message, kind: type, code }));
    // (the upstream's own error, written instead when the relay had read one: its message may say the gateway's key)
    if (tail !== null && this.gw.redact !== null && this.relaying.error !== undefined) tail = this.gw.redact.bytes(tail);
    if (this.counted) this.status = this.relaying === null ? 'limit' : relayedStatus(this.relaying, m, 'limit');
    this.stopUpstream();
    if (!res.headersSent) sendJson(res, status, errorBody(message, type, code), { connection: 'close' });
    else if (!res.writableEnded) {
      if (tail !== null && tail.length !== 0) {
        m.eventsOut.inc(1);
        m.bytesOut.inc(tail.length);
      }
      res.end(tail ?? undefined);
    }
    if (kind === 'client' || answered) res.destroy();
  }

  /** After a write to the client: its buffer now, into the budget's `written`. */
  wroteNow() {
    if (this.closed) return 0; // (its share of `written` was taken out when it closed)
    const w = this.res.writableLength;
    this.gw.budget.written += w - this.wrote;
    this.wrote = w;
    return w;
  }

  /** The upstream read goes on (its client drained, or the stream ended): out of the budget's `paused`. */
  unpaused() {
    if (!this.paused) return;
    this.paused = false;
    this.gw.budget.paused--;
  }

  close() {
    if (this.closed) return;
    this.closed = true;
    const { budget, m } = this.gw;
    budget.written -= this.wrote;
    this.wrote = 0;
    this.release();
    this.unpaused();
    budget.streams.delete(this);
    m.streamsOpen.dec();
    if (this.counted) {
      m.streams.inc({ status: this.status });
      m.pending.observe(this.peak);
    }
  }
}
