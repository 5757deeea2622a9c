// A reference gateway: an OpenAI-compatible `POST /v1/chat/completions` in front of one upstream
// (OpenAI Chat Completions, OpenAI Responses, Anthropic Messages, Ollama or a ddg-style line
// stream): a server on Node's `http` module, reading its upstream with its own HTTP/1.1 client
// (./upstream.mjs: one 'data' per socket read, not one per HTTP chunk; http or https). The
// upstream's bytes go through seam's SseRelay: whole,
// validated events are written to the client (byte for byte from an OpenAI upstream, translated
// to `chat.completion.chunk`s from the others), `data: [DONE]` only after the upstream's own
// completion and an SSE error event otherwise. Around it: upstream HTTP errors with their status
// and message, backpressure (the upstream read pauses while the client's buffer is full), limits
// on streams and buffered bytes, keep-alive comments and Prometheus metrics (prom-client).
//
//   node examples/gateway/server.mjs --port 0 --upstream http://127.0.0.1:8080 --upstream-format anthropic
//
// In-process: `const gw = createGateway({ upstream, upstreamFormat }); const url = await gw.listen(0);`
//
// Beside it, server/: a file per job of the server's (options.mjs, DEFAULTS; metrics.mjs;
// replies.mjs, what the gateway answers itself; read-body.mjs; keys.mjs, the client keys;
// whole-answer.mjs, a whole answer's shape), requests/ and upstream.mjs.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { pathToFileURL } from 'node:url';
import { GatewayConfigError, RequestError, bedrockLacks, upstreamRequest } from './requests/index.mjs';
import { UpstreamProtocolError, requestUpstream } from './upstream.mjs';
import {
  MODEL_FORMATS, ModelStream, ModelStreamError, SseRelay, coreMemoryLimit, coreMemoryUsed, describeFormat, setCoreMemoryLimit,
} from 'seam-stream';
import { authorized, digest, isLoopback } from './server/keys.mjs';
import { NO_METRICS, makeMetrics, serveMetrics } from './server/metrics.mjs';
import { KiB, optionsOf } from './server/options.mjs';
import { readBody } from './server/read-body.mjs';
import { anthropicBody, clientGone, errorBody, replyIn, sendJson, socketReply, upstreamError } from './server/replies.mjs';
import { wholeAnswer } from './server/whole-answer.mjs';

export { DEFAULTS } from './server/options.mjs';
export { isLoopback } from './server/keys.mjs';

const ERROR_BODY_BYTES = 64 * KiB;
/**
 * The longest model name (UTF-16 units) an answer written anew in the client's API names: each
 * chunk of a translated stream to OpenAI's clients repeats it (Bedrock's model ids, ARNs among
 * them, are at most 2048 characters).
 */
const MAX_MODEL_NAME = 2048;
const KEEPALIVE = Buffer.from(': keep-alive\n\n');
/** The gateway's clock ticks this many times per its shortest period (a silence is noticed within 1/4 of it). */
const TICKS = 4;

export { upstreamRequest, chatFromMessages, RequestError, GatewayConfigError } from './requests/index.mjs';

/**
 * The client's API, by the route it asked for: `openai` (Chat Completions) or `anthropic`
 * (Messages). Errors and whole answers are written in its shape.
 */
const DIALECTS = new Map([['/v1/chat/completions', 'openai'], ['/v1/messages', 'anthropic']]);

/**
 * How a relayed stream counts once the relay has written its end (`flush()` at the upstream's end,
 * or `abort()` for a reason of the gateway's own): by the relay's status and the error it wrote to
 * the client, if any, whose counter goes up here. `own`: the status when the relay wrote no error
 * and the upstream had not completed (`failed` at the upstream's end; `limit` for the gateway's
 * reason: a timeout, its memory).
 */
function relayedStatus(relay, m, own) {
  const st = relay.status;
  const code = relay.error?.code; // the error the relay wrote to the client, if any
  if (code === 'ERR_INVALID_UTF8') m.utf8Errors.inc();
  else if (code === 'ERR_PROVIDER') m.providerErrors.inc({ source: 'stream' });
  else if (code === 'ERR_BAD_EVENT') m.badEvents.inc();
  else if (code === 'ERR_EVENT_TOO_LARGE') {
    m.limitErrors.inc({ limit: 'event_bytes' });
    return 'limit';
  }
  return st === 'done' ? 'done' : st === 'truncated' ? 'truncated' : code !== undefined ? 'failed' : own;
}

/**
 * A gateway server (not listening yet). `listen(port, host)` resolves its URL; `close()` ends
 * every stream (aborting their upstream requests) and resolves when the server is closed.
 */
export function createGateway(options = {}) {
  const o = optionsOf(options);
  const log = o.log ?? ((line) => process.stderr.write(`${line}\n`));
  const format = o.upstreamFormat;
  const upstreamFacts = describeFormat(format);
  const upstreamUrl = new URL(o.upstream);
  if (upstreamUrl.protocol !== 'http:' && upstreamUrl.protocol !== 'https:') {
    throw new TypeError(`createGateway: the upstream must be an http: or https: URL, not ${upstreamUrl.protocol}`);
  }
  if (upstreamUrl.username || upstreamUrl.password) throw new TypeError('createGateway: put the upstream\'s key in upstreamKey, not in its URL');
  if (upstreamUrl.protocol === 'http:' && !isLoopback(upstreamUrl.hostname)) {
    log(`gateway: warning: the upstream ${upstreamUrl.origin} is plain http beyond loopback: every prompt, answer and key crosses the network unencrypted`);
  }
  // (a bedrock upstream it cannot sign for: said at the start, where each request would say it only when it comes)
  const lacking = format === 'bedrock' || format === 'bedrock-invoke' ? bedrockLacks(upstreamUrl.hostname, process.env) : undefined;
  if (lacking !== undefined) log(`gateway: warning: ${lacking}: every request will fail (500) until it is set and the gateway restarted`);
  const keys = o.apiKeys.map(digest);
  // what the upstream gets as its credential (upstreamRequest puts a bearer where the format wants it)
  const upstreamCredential = o.upstreamKey !== undefined ? { authorization: `Bearer ${o.upstreamKey}` } : null;
  // (the choices of words of upstreamRequest's translations)
  const settings = { openaiMaxTokensField: o.openaiMaxTokensField, anthropicMaxTokens: o.anthropicMaxTokens, responsesSummary: o.responsesSummary };
  const m = o.metrics ? makeMetrics() : NO_METRICS;
  /** @type {Set<Stream>} */
  const streams = new Set();
  const previousCoreLimit = coreMemoryLimit();
  setCoreMemoryLimit(Math.min(2 ** 32 - 1, Math.max(previousCoreLimit ?? 0, o.maxPendingBytes)));

  // request ids: a random prefix per gateway and a count (cheaper than a UUID per request)
  const idPrefix = `gw-${randomBytes(4).toString('hex')}-`;
  let requests = 0;

  const server = http.createServer({
    highWaterMark: o.highWaterMark,
    // the client's request (head and body) must arrive within clientTimeout; Node checks it on its own clock
    requestTimeout: o.clientTimeout,
    headersTimeout: o.clientTimeout,
    connectionsCheckingInterval: Math.max(5, Math.min(30_000, Math.floor(o.clientTimeout / 4))),
  }, (req, res) => {
    const id = idPrefix + (++requests).toString(36);
    res.setHeader('x-request-id', id);
    handle(req, res, id).catch((err) => {
      m.gatewayErrors.inc();
      // (what the gateway's configuration lacks is said to the client too: names to set, no value)
      const config = err instanceof GatewayConfigError;
      log(`gateway: request ${id}: 500: ${config ? `${err.name}: ${err.message}` : err?.stack ?? err}`);
      const message = config ? `gateway error (request id ${id}): ${err.message}` : `gateway error (request id ${id}; the gateway's log has the detail)`;
      if (!res.headersSent) sendJson(res, 500, errorBody(message, 'gateway_error', 'ERR_GATEWAY'));
      else res.destroy();
    });
  });

  // A request that did not arrive within clientTimeout (Node's requestTimeout): 408 in the API's
  // shape, then the connection closes (the stream that read its body, if any, is aborted with it).
  server.on('clientError', (err, socket) => {
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') m.timeouts.inc({ timeout: 'request' });
    if (!socket.writable || socket._httpMessage?.headersSent) return void socket.destroy();
    const [status, text, body] = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', errorBody(`the request did not arrive within ${o.clientTimeout} ms`, 'invalid_request_error', 'ERR_REQUEST_TIMEOUT')]
      : err.code === 'HPE_HEADER_OVERFLOW' ? [431, 'Request Header Fields Too Large', errorBody('the request head is too large', 'invalid_request_error', 'ERR_HEADERS_TOO_LARGE')]
        : [400, 'Bad Request', errorBody('the request is not valid HTTP/1.1', 'invalid_request_error', 'ERR_BAD_REQUEST')];
    socket.end(socketReply(status, text, body));
    socket.destroySoon?.();
  });

  // Connection caps, in total and per client address: past them a connection is answered 503 and closed.
  const perAddress = new Map();
  let connections = 0;
  server.on('connection', (socket) => {
    const address = socket.remoteAddress ?? '';
    const mine = perAddress.get(address) ?? 0;
    const over = o.maxConnections > 0 && connections >= o.maxConnections ? 'total'
      : o.maxConnectionsPerAddress > 0 && mine >= o.maxConnectionsPerAddress ? 'per_address' : null;
    if (over !== null) {
      m.connectionsRejected.inc({ limit: over });
      const body = errorBody(over === 'total' ? `the gateway has ${connections} connections open (maxConnections ${o.maxConnections}); retry later`
        : `this address has ${mine} connections open (maxConnectionsPerAddress ${o.maxConnectionsPerAddress}); retry later`, 'overloaded', 'ERR_MAX_CONNECTIONS');
      socket.on('error', () => {});
      socket.end(socketReply(503, 'Service Unavailable', body, 'retry-after: 1\r\n'));
      socket.resume(); // (what the client sends is read and dropped, so that it reads the 503 rather than a reset)
      setTimeout(() => socket.destroy(), 1000).unref();
      return;
    }
    connections++;
    perAddress.set(address, mine + 1);
    m.connectionsOpen.inc();
    socket.once('close', () => {
      connections--;
      const left = perAddress.get(address) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
      m.connectionsOpen.dec();
    });
  });

  const metricsServer = o.metricsPort === undefined ? null : http.createServer((req, res) => {
    const path = req.url.split('?')[0];
    if (req.method === 'GET' && path === '/metrics') return void serveMetrics(m, res).catch(() => res.destroy());
    sendJson(res, 404, errorBody('no route (this listener serves GET /metrics)', 'invalid_request_error', 'not_found'));
  });

  async function handle(req, res, id) {
    const path = req.url.split('?')[0];
    const dialect = DIALECTS.get(path);
    replyIn(res, dialect);
    if (keys.length > 0 && !authorized(keys, req.headers)) {
      m.authFailures.inc();
      return sendJson(res, 401, errorBody('Incorrect or missing API key: send it as authorization: Bearer KEY (or x-api-key: KEY)', 'invalid_request_error', 'invalid_api_key'),
        { 'www-authenticate': 'Bearer', connection: 'close' });
    }
    if (req.method === 'GET' && path === '/metrics' && metricsServer === null) return serveMetrics(m, res);
    if (dialect === undefined) return sendJson(res, 404, errorBody(`no route ${req.method} ${path.slice(0, 200)}`, 'invalid_request_error', 'not_found'));
    if (req.method !== 'POST') return sendJson(res, 405, errorBody('use POST', 'invalid_request_error', 'method_not_allowed'), { allow: 'POST' });
    if (streams.size >= o.maxStreams) {
      m.limitErrors.inc({ limit: 'max_streams' });
      return sendJson(res, 503, errorBody(`the gateway has ${streams.size} streams open (maxStreams ${o.maxStreams}); retry later`, 'overloaded', 'ERR_MAX_STREAMS'), { 'retry-after': '1' });
    }
    const held = mightBeFull() ? pendingBytes() : 0;
    if (held >= o.maxPendingBytes) {
      m.limitErrors.inc({ limit: 'pending_bytes' });
      return sendJson(res, 503, errorBody(`the gateway's streams hold ${held} bytes (maxPendingBytes ${o.maxPendingBytes}); retry later`, 'overloaded', 'ERR_PENDING_BYTES'), { 'retry-after': '1' });
    }
    // Admitted: the stream's slot is taken before its body is read, and the body counts in the budget.
    const s = new Stream(res, id, dialect);
    streams.add(s);
    m.streamsOpen.inc();
    try {
      await s.serve(req);
      // the answer is written; the slot (and what the answer holds) goes once the client took it all
      if (!res.writableFinished && !res.destroyed) await new Promise((resolve) => { s.done = resolve; res.once('close', resolve); res.once('finish', resolve); });
    } finally {
      s.close();
    }
  }

  /** One client request and its upstream request. */
  class Stream {
    constructor(res, id, dialect) {
      this.res = res;
      this.id = id;
      /** The client's API: `openai` (Chat Completions) or `anthropic` (Messages). */
      this.dialect = dialect;
      this.upReq = null;
      this.upRes = null;
      /** The clock's tick when the upstream last sent bytes (or answered), and when the stream began. */
      this.heard = tick;
      this.beat = tick;
      this.born = tick;
      /** Bytes the client had taken at the last tick (its socket's written bytes less its buffer), and ticks since that moved. */
      this.taken = 0;
      this.stalled = 0;
      /** The most bytes the stream held at once (its client's write buffer and its unfinished event). */
      this.peak = 0;
      /**
       * The client's write buffer right after the gateway last wrote to it: at least what it holds
       * now (it only shrinks until the next write). Their sum over the streams is `written`.
       */
      this.wrote = 0;
      /** Bytes the stream holds in JavaScript (the request body being read, a whole answer): their sum is `holding`. */
      this.held = 0;
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
      const res = this.res;
      // (a request that breaks off, or that Node's requestTimeout cuts, errs with 'aborted': the client is gone)
      let raw = await readBody(req, o.maxRequestBytes, true, (n) => this.hold(n)).catch(() => undefined);
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
      const credential = upstreamCredential ?? (keys.length > 0 ? {} : req.headers);
      // (an Anthropic client's version and beta headers go on to an Anthropic upstream; they carry no credential)
      const forwarded = this.dialect === 'anthropic' ? { ...credential, 'anthropic-version': req.headers['anthropic-version'], 'anthropic-beta': req.headers['anthropic-beta'] } : credential;
      const same = format === this.dialect;
      // The model the client asked for, which an answer written anew in its API names (a whole
      // answer, and each chunk of a translated stream to OpenAI's clients: bounded, since each
      // chunk repeats it).
      const model = typeof body.model === 'string' ? body.model : undefined;
      if (!same && model !== undefined && model.length > MAX_MODEL_NAME) {
        return sendJson(res, 400, errorBody(`model: a name of at most ${MAX_MODEL_NAME} characters, not ${model.length}`, 'invalid_request_error', 'ERR_BAD_REQUEST', { param: 'model' }));
      }
      let up;
      try {
        up = upstreamRequest(format, upstreamUrl, same ? body : { ...body, stream: true }, forwarded, this.dialect, process.env, settings);
      } catch (err) {
        // (a model name with a lone surrogate, which encodeURIComponent refuses, for an upstream
        // that has the model in its URL: the client's error, not the gateway's)
        if (err instanceof URIError && model !== undefined && !model.isWellFormed()) {
          return sendJson(res, 400, errorBody('model: the name has a lone surrogate (it is not well-formed Unicode), which the upstream\'s URL cannot hold',
            'invalid_request_error', 'ERR_BAD_REQUEST', { param: 'model' }));
        }
        if (!(err instanceof RequestError)) throw err;
        return sendJson(res, 400, errorBody(err.message, 'invalid_request_error', 'ERR_BAD_REQUEST'));
      }
      this.counted = true;
      const upRes = await this.request(up);
      if (upRes === null) return; // the client left, or the upstream failed before answering (answered)
      if (upRes.statusCode >= 400) {
        // (a body that breaks off is no body: the status alone, with the general message; the log has why)
        const text = await readBody(upRes, ERROR_BODY_BYTES, false, (n) => this.hold(n)).catch((err) => {
          if (!this.left && !this.expired) log(`gateway: request ${this.id}: the upstream's ${upRes.statusCode} body broke off: ${err?.message ?? err}`);
          return null;
        });
        this.release();
        if (this.left || this.expired) return;
        m.providerErrors.inc({ source: 'status' });
        this.status = 'failed';
        const error = upstreamError(format, upRes.statusCode, typeof text === 'object' && text !== null ? text.toString('utf8') : '', this.dialect);
        // (to Anthropic's clients a billing_error is Anthropic's 402: they retry a 429, and a spent
        // quota does not come back by retrying)
        return sendJson(res, error.error?.type === 'billing_error' && this.dialect === 'anthropic' ? 402 : upRes.statusCode, error);
      }
      if (!stream) return await (same ? this.whole(upRes) : this.assemble(upRes, model ?? format));
      body = null;
      await this.relay(upRes, model);
    }

    /** Holds `n` more bytes in JavaScript; false once the streams together hold maxPendingBytes. */
    hold(n) {
      this.held += n;
      holding += n;
      return !(mightBeFull() && pendingBytes() >= o.maxPendingBytes);
    }

    /** What the stream held in JavaScript is let go. */
    release() {
      holding -= this.held;
      this.held = 0;
    }

    /**
     * A 502 with a generic message; the detail goes to the log under the request id. `source`, for
     * llm_provider_errors_total: `connect` (no answer), or `body` (an answer that broke off).
     */
    failed(err, source = 'connect') {
      if (this.closed || this.left || this.expired) return;
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
      const payload = Buffer.from(JSON.stringify(up.payload));
      let headers = up.headers;
      if (up.sign !== undefined) {
        // (Bedrock: SigV4 over the body as sent)
        try {
          headers = await up.sign(payload);
        } catch (err) {
          // The gateway's own failure, before any connection (its signer could not be loaded, or
          // could not sign, or it has no AWS credentials or region: a GatewayConfigError): no
          // provider error, but a 500 as any other of the gateway's errors (handle's), its detail
          // in the log under the request id.
          if (this.closed || this.left || this.expired) return null;
          this.status = 'failed';
          throw err;
        }
        if (this.closed || this.left || this.expired) return null;
      }
      return new Promise((resolve) => {
        this.done = () => resolve(null);
        // one connection per upstream request, closed with it: an aborted stream leaves no socket behind
        let upReq;
        try {
          upReq = requestUpstream({ ...up, headers, body: payload });
        } catch (err) {
          this.failed(err);
          return resolve(null);
        }
        this.upReq = upReq;
        const timer = setTimeout(() => {
          const err = new Error(`no answer from the upstream within ${o.upstreamTimeout} ms`);
          err.code = 'ERR_UPSTREAM_TIMEOUT';
          upReq.destroy(err);
        }, o.upstreamTimeout);
        upReq.response.then((r) => {
          clearTimeout(timer);
          this.upRes = r;
          this.heard = tick;
          // (a client whose connection closed in this tick gets no head: its 'close' aborts the rest)
          if (this.closed || this.left || this.expired || clientGone(this.res)) { r.destroy(); resolve(null); } else resolve(r);
        }, (err) => {
          clearTimeout(timer);
          this.failed(err);
          resolve(null);
        });
      });
    }

    /**
     * The relay loop: upstream reads → whole validated events → client, with backpressure. A
     * translated stream names `model` (the client's), as the whole answer does; without it, the upstream's format.
     */
    relay(upRes, model) {
      const res = this.res;
      const relay = new SseRelay({ from: format, to: this.dialect, maxEventBytes: o.maxEventBytes, model });
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', 'x-content-type-options': 'nosniff' });
      res.flushHeaders();
      return new Promise((resolve) => {
        let ended = false;
        let broke = false; // the upstream's body broke off (its connection closed or reset, or its framing broke)
        let events = 0;
        let sent = 0; // events written to the client, as the relay counts them
        this.relaying = relay;
        const stop = () => {
          ended = true;
          this.relaying = null;
          // (its tokens once, from the usage the relay read, whatever ended the stream)
          m.tokens.add(upstreamFacts, relay.usage);
          relay.dispose();
          resolve();
        };
        /** The upstream's end: the relay's last bytes ([DONE], or the error event), then the response's end. */
        const end = () => {
          take(); // the reads of this tick first
          if (ended) return;
          if (clientGone(res)) return void this.abort();
          const tail = Buffer.from(relay.flush()); // a copy: the view is the relay's
          this.status = relayedStatus(relay, m, 'failed');
          if (relay.status === 'truncated') {
            m.truncated.inc();
            if (relay.finishReason !== undefined) m.finalMismatch.inc();
            // (a body that broke off is also the upstream's error, as it is for a whole answer; one
            // that ended whole, its stream without its completion, is the truncation alone)
            if (broke) m.providerErrors.inc({ source: 'body' });
          }
          m.eventsIn.inc(relay.events - events);
          m.eventsOut.inc(relay.eventsOut - sent);
          m.bytesOut.inc(tail.length);
          if (!res.destroyed) {
            res.end(tail);
            this.wroteNow();
          }
          stop();
        };
        this.done = () => { if (!ended) stop(); };
        // One socket read of the upstream holds many HTTP chunks when the upstream is ahead of the
        // gateway (each a 'data' event, in one go): the reads of one tick are relayed as one push
        // and written as one client write, right after the last of them (process.nextTick, which
        // runs before the response's own 'end').
        const burst = [];
        let burstBytes = 0;
        const take = () => {
          if (burst.length === 0 || ended) return;
          if (clientGone(res)) {
            burst.length = 0;
            return void this.abort();
          }
          const chunk = burst.length === 1 ? burst[0] : Buffer.concat(burst, burstBytes);
          burst.length = 0;
          burstBytes = 0;
          let out;
          try {
            out = relay.push(chunk);
          } catch (err) {
            // the core's budget for all streams (setCoreMemoryLimit): this stream stops, the others go on
            m.limitErrors.inc({ limit: 'core_memory' });
            const e = Buffer.from(relay.abort({ message: `the gateway is out of stream memory: ${err.message}`, kind: 'overloaded', code: err.code ?? 'ERR_GATEWAY' }));
            m.eventsOut.inc(1);
            m.bytesOut.inc(e.length);
            this.status = relayedStatus(relay, m, 'limit');
            res.end(e);
            upRes.destroy();
            stop();
            return;
          }
          m.bytesIn.inc(chunk.length);
          const n = relay.events;
          m.eventsIn.inc(n - events);
          if (out.length !== 0) {
            // From OpenAI, a read of whole canonical events comes back as the read itself, or its
            // start before a [DONE] (the relay compares them): memory of the read (its buffer),
            // written as it is; anything else is the relay's reused view, copied.
            const bytes = out.buffer === chunk.buffer ? out : Buffer.from(out);
            m.bytesOut.inc(bytes.length);
            m.eventsOut.inc(relay.eventsOut - sent);
            sent = relay.eventsOut;
            if (!res.write(bytes)) {
              upRes.pause();
              this.paused = true;
              paused++;
              res.once('drain', () => {
                this.unpaused();
                upRes.resume();
              });
            }
          }
          events = n;
          const p = this.wroteNow() + relay.retainedBytes;
          if (p > this.peak) this.peak = p;
        };
        upRes.on('data', (chunk) => {
          this.heard = tick;
          if (burst.length === 0) process.nextTick(take);
          burst.push(chunk);
          burstBytes += chunk.length;
        });
        upRes.on('end', end);
        // The upstream's connection broke: the relay's flush calls it truncated (unless it had
        // completed), at the byte offset where the body broke off. (SseRelayStream, which cannot
        // tell an upstream's error from its client's leaving, writes its abort there: a
        // `server_error` without an offset. Here the client's leaving is an event of its own.)
        upRes.on('error', () => { broke = true; end(); });
        upRes.on('close', end);
      });
    }

    /** OpenAI's whole answer (`stream: false`), passed through with its status, bounded. */
    async whole(upRes) {
      let body;
      try {
        body = await readBody(upRes, o.maxResponseBytes, false, (n) => { this.heard = tick; return this.hold(n); });
      } catch (err) {
        // the upstream's body broke off (cut short, malformed framing, its connection reset): a 502,
        // as a head that breaks HTTP/1.1 (not "could not be reached": it answered). It counts as a
        // stream's body that broke off does, and a whole answer read from one: truncated, and the
        // upstream's error of source "body".
        this.release();
        if (this.closed || this.left || this.expired) return;
        this.failed(err instanceof UpstreamProtocolError ? err : new UpstreamProtocolError(`the upstream's connection broke in its body: ${err?.message ?? err}`), 'body');
        this.status = 'truncated';
        m.truncated.inc();
        return;
      }
      this.release();
      // its tokens, from the answer's usage (the body is held whole here, and read once; one that is
      // not JSON counts none), whether or not its client is still there to take it
      if (Buffer.isBuffer(body) && m.registry !== null) {
        let usage;
        try { usage = JSON.parse(body.toString('utf8'))?.usage; } catch { usage = undefined; }
        m.tokens.add(upstreamFacts, usage);
      }
      if (this.left || this.expired) return;
      if (body === null || body === false) {
        m.limitErrors.inc({ limit: body === null ? 'response_bytes' : 'pending_bytes' });
        this.status = 'limit';
        return body === null ? sendJson(this.res, 502, errorBody(`the upstream's answer is over ${o.maxResponseBytes} bytes`, 'upstream_error', 'ERR_RESPONSE_TOO_LARGE'))
          : sendJson(this.res, 503, errorBody(`the gateway's streams hold more than maxPendingBytes (${o.maxPendingBytes}) with this answer; retry later`, 'overloaded', 'ERR_PENDING_BYTES'), { 'retry-after': '1' });
      }
      m.bytesIn.inc(body.length);
      m.bytesOut.inc(body.length);
      this.status = 'done';
      this.res.writeHead(upRes.statusCode, { 'content-type': 'application/json', 'x-content-type-options': 'nosniff', 'content-length': body.length });
      this.res.end(body);
    }

    /** Another upstream's stream read whole into one `chat.completion` (`stream: false`). */
    async assemble(upRes, model) {
      // (the reasoning is part of the answer, and bounded as its text is)
      const ms = new ModelStream({ format, normalize: false, maxEventBytes: o.maxEventBytes, maxTextBytes: o.maxResponseBytes, maxReasoningBytes: o.maxResponseBytes });
      // (its tokens once, from the usage read, whatever ended it: the client's leaving, a failure, its answer)
      const dispose = () => {
        m.tokens.add(upstreamFacts, ms.usage);
        ms.dispose();
      };
      let text = '';
      let failure = null;
      let broke = false; // the upstream's body broke off
      await new Promise((resolve) => {
        this.done = resolve;
        upRes.on('data', (chunk) => {
          if (failure) return;
          this.heard = tick;
          m.bytesIn.inc(chunk.length);
          try {
            const more = ms.push(chunk);
            text += more;
            if (!this.hold(more.length)) {
              failure = Object.assign(new Error(`the gateway's streams hold more than maxPendingBytes (${o.maxPendingBytes}) with this answer; retry later`), { code: 'ERR_PENDING_BYTES' });
              upRes.destroy();
              resolve();
            }
          } catch (err) { failure = err; upRes.destroy(); resolve(); }
        });
        upRes.on('end', resolve);
        upRes.on('error', () => { broke = true; resolve(); });
        upRes.on('close', resolve);
      });
      this.release();
      if (this.left || this.expired || this.res.destroyed) return void dispose();
      let answer;
      if (!failure) {
        try {
          text += ms.flush();
          answer = wholeAnswer(this.dialect, format, ms, text, model);
        } catch (err) { failure = err; }
      }
      m.eventsIn.inc(ms.events);
      if (failure) {
        const code = failure.code ?? 'ERR_GATEWAY';
        this.status = code === 'ERR_STREAM_TRUNCATED' ? 'truncated' : 'failed';
        if (code === 'ERR_STREAM_TRUNCATED') {
          m.truncated.inc();
          if (ms.finishReason !== undefined) m.finalMismatch.inc();
          if (broke) m.providerErrors.inc({ source: 'body' }); // (as for a streamed answer)
        }
        if (code === 'ERR_INVALID_UTF8') m.utf8Errors.inc();
        if (code === 'ERR_PROVIDER') m.providerErrors.inc({ source: 'stream' });
        if (code === 'ERR_BAD_EVENT') m.badEvents.inc();
        if (code === 'ERR_EVENT_TOO_LARGE' || code === 'ERR_TEXT_TOO_LONG' || code === 'ERR_REASONING_TOO_LONG') { m.limitErrors.inc({ limit: 'response_bytes' }); this.status = 'limit'; }
        if (code === 'ERR_PENDING_BYTES') {
          m.limitErrors.inc({ limit: 'pending_bytes' });
          this.status = 'limit';
          dispose();
          return sendJson(this.res, 503, errorBody(failure.message, 'overloaded', code), { 'retry-after': '1' });
        }
        const message = failure instanceof ModelStreamError ? failure.providerMessage ?? failure.message : failure.message;
        dispose();
        // The error as the relay's error event writes it in the client's format: with the
        // provider's own code for it (`provider_code`: `overloaded_error`, a failed turn's
        // `MALFORMED_FUNCTION_CALL`, …), and to Anthropic in the error type that code is in its words.
        const provider = failure instanceof ModelStreamError ? failure.providerCode : undefined;
        if (this.dialect === 'anthropic') {
          return sendJson(this.res, 502, anthropicBody(describeFormat(format).anthropicErrorType(provider), message));
        }
        return sendJson(this.res, 502, errorBody(message, code === 'ERR_PROVIDER' ? 'upstream_error' : 'upstream_stream_error', code,
          failure instanceof ModelStreamError ? { offset: failure.offset, ...(provider !== undefined ? { provider_code: provider } : {}) } : undefined));
      }
      dispose();
      this.status = 'done';
      const bytes = Buffer.from(JSON.stringify(answer));
      m.bytesOut.inc(bytes.length);
      sendJson(this.res, 200, answer);
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
     */
    expire(kind, message) {
      if (this.closed) return;
      const res = this.res;
      if (this.expired) { // (its end written after another timeout, and not taken either)
        if (kind === 'client') res.destroy();
        return;
      }
      this.expired = true;
      m.timeouts.inc({ timeout: kind });
      const code = { body: 'ERR_UPSTREAM_BODY_TIMEOUT', client: 'ERR_CLIENT_TIMEOUT', duration: 'ERR_MAX_DURATION' }[kind];
      const answered = res.writableEnded; // the answer was whole, and waits for its client to take it
      // (a stream being relayed: its error event in the client's format, after everything relayed before it)
      const tail = this.relaying === null ? null : Buffer.from(this.relaying.abort({ message, kind: 'timeout', code }));
      if (this.counted) this.status = this.relaying === null ? 'limit' : relayedStatus(this.relaying, m, 'limit');
      this.stopUpstream();
      if (!res.headersSent) sendJson(res, 504, errorBody(message, 'timeout', code), { connection: 'close' });
      else if (!res.writableEnded) {
        if (tail !== null && tail.length !== 0) {
          m.eventsOut.inc(1);
          m.bytesOut.inc(tail.length);
        }
        res.end(tail ?? undefined);
      }
      if (kind === 'client' || answered) res.destroy();
    }

    /** After a write to the client: its buffer now, into `written`. */
    wroteNow() {
      const w = this.res.writableLength;
      written += w - this.wrote;
      this.wrote = w;
      return w;
    }

    /** The upstream read goes on (its client drained, or the stream ended): out of `paused`. */
    unpaused() {
      if (!this.paused) return;
      this.paused = false;
      paused--;
    }

    close() {
      if (this.closed) return;
      this.closed = true;
      written -= this.wrote;
      this.wrote = 0;
      this.release();
      this.unpaused();
      streams.delete(this);
      m.streamsOpen.dec();
      if (this.counted) {
        m.streams.inc({ status: this.status });
        m.pending.observe(this.peak);
      }
    }
  }

  /**
   * What the streams hold now: their clients' write buffers, their upstream responses' read
   * buffers, what they hold in JavaScript (request bodies, whole answers) and (in the core) their
   * unfinished events.
   */
  function pendingBytes() {
    let n = coreMemoryUsed();
    for (const s of streams) n += s.res.writableLength + (s.upRes?.readableLength ?? 0) + s.held;
    return n;
  }

  /**
   * Whether the streams might hold maxPendingBytes, which spares the walk over every stream (for
   * each new request: quadratic in the streams open) when they cannot. An upper bound kept as the
   * streams go: each client buffer as it was right after the gateway's last write to it (it only
   * shrinks until the next), for each paused upstream read its socket's buffer at most (its
   * high-water mark, 16 KiB on Node 20 and 64 KiB from Node 22, plus one 64 KiB read; a flowing
   * one holds nothing between reads), and what the streams hold in JavaScript.
   */
  let written = 0;
  let paused = 0;
  let holding = 0;
  const mightBeFull = () => coreMemoryUsed() + written + holding + paused * 128 * KiB >= o.maxPendingBytes;

  // The clock: one timer for all streams, ticking TICKS times per its shortest period (keepalive,
  // bodyTimeout, clientTimeout, maxDuration), so each is noticed within a quarter of it at most.
  // A stream whose upstream is silent for longer than `keepalive` gets a comment (unless its client
  // is not reading anyway); the comments do not count as upstream bytes for bodyTimeout.
  const periods = [o.bodyTimeout, o.clientTimeout, o.maxDuration];
  if (o.keepalive > 0) periods.push(o.keepalive * 1000);
  const period = Math.max(1, Math.min(...periods) / TICKS);
  const ticksOf = (ms) => Math.max(1, Math.ceil(ms / period));
  const keepaliveTicks = o.keepalive > 0 ? Math.max(1, Math.round((o.keepalive * 1000) / period)) : Infinity;
  const bodyTicks = ticksOf(o.bodyTimeout);
  const clientTicks = ticksOf(o.clientTimeout);
  const durationTicks = ticksOf(o.maxDuration);
  let tick = 0;
  const ticker = setInterval(() => {
    tick++;
    for (const s of streams) {
      const res = s.res;
      const socket = res.socket;
      if (socket && res.writableLength > 0) {
        const taken = socket.bytesWritten - socket.writableLength; // bytes the system took from the socket
        if (taken !== s.taken) { s.taken = taken; s.stalled = 0; } else if (++s.stalled > clientTicks) {
          s.expire('client', `the client took none of its answer for ${o.clientTimeout} ms`);
          continue;
        }
      } else s.stalled = 0;
      if (s.expired) continue;
      if (tick - s.born > durationTicks) { s.expire('duration', `the stream passed maxDuration (${o.maxDuration} ms)`); continue; }
      if (s.upRes === null || s.upRes.destroyed) continue;
      // (while its client's buffer is full the gateway is not reading its upstream: that is no
      // silence of the upstream's, and bodyTimeout counts from the read's resumption)
      if (s.paused) s.heard = tick;
      if (tick - s.heard > bodyTicks) { s.expire('body', `the upstream sent nothing for ${o.bodyTimeout} ms`); continue; }
      if (tick - Math.max(s.heard, s.beat) <= keepaliveTicks || !res.headersSent || res.writableLength > 0 || res.writableEnded) continue;
      s.beat = tick;
      m.keepalives.inc();
      m.bytesOut.inc(KEEPALIVE.length);
      res.write(KEEPALIVE);
      s.wroteNow();
    }
  }, period);
  ticker.unref();

  let metricsUrl = null;
  return {
    server,
    metricsServer,
    options: o,
    registry: m.registry,
    /** The metrics listener's URL once listening (with metricsPort), else null. */
    get metricsUrl() { return metricsUrl; },
    /** Streams open now, the bytes they hold (client buffers, request bodies and whole answers, unfinished events), connections open. */
    stats: () => ({ streams: streams.size, pendingBytes: pendingBytes(), coreBytes: coreMemoryUsed(), connections }),
    async listen(port = 0, host = '127.0.0.1') {
      if (!isLoopback(host) && keys.length === 0 && !o.allowNoKeys) {
        throw new TypeError(`createGateway: listening on ${host} (beyond loopback) without apiKeys: anyone who reaches it uses the upstream; set apiKeys, or allowNoKeys to say so`);
      }
      const on = (srv, p, h) => new Promise((resolve, reject) => {
        srv.once('error', reject);
        srv.listen(p, h, () => {
          srv.off('error', reject);
          resolve(`http://${h.includes(':') ? `[${h}]` : h}:${srv.address().port}`);
        });
      });
      if (metricsServer !== null) metricsUrl = await on(metricsServer, o.metricsPort, o.metricsHost);
      return on(server, port, host);
    },
    close() {
      clearInterval(ticker);
      for (const s of streams) { s.abort(); s.res.destroy(); }
      const closing = (srv) => new Promise((resolve) => (srv.listening ? srv.close(() => resolve()) : resolve()));
      const closed = Promise.all([closing(server), ...(metricsServer ? [closing(metricsServer)] : [])]);
      server.closeAllConnections();
      metricsServer?.closeAllConnections();
      setCoreMemoryLimit(previousCoreLimit);
      return closed.then(() => {});
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The command

const USAGE = `usage: node examples/gateway/server.mjs --port <n> --upstream <base-url>
  [--host ADDRESS]  (127.0.0.1; beyond loopback only with --api-key, or --allow-no-keys)
  [--upstream-format ${MODEL_FORMATS.join('|')}]
  [--openai-max-tokens-field max_completion_tokens|max_tokens]  (an Anthropic client's max_tokens to an openai upstream)
  [--anthropic-max-tokens N]  (the max_tokens of a request that names none, to anthropic or bedrock-invoke: 4096)
  [--responses-summary auto|concise|detailed|none]  (the reasoning summary asked of openai-responses: none for an unverified organization)
  [--api-key KEY]... [--api-key-file FILE]  (also SEAM_GATEWAY_API_KEYS: keys separated by commas or white space)
  [--upstream-key KEY] [--upstream-key-file FILE]  (also SEAM_GATEWAY_UPSTREAM_KEY)
  [--keepalive SECONDS] [--upstream-timeout MS] [--body-timeout MS] [--client-timeout MS] [--max-duration MS]
  [--max-streams N] [--max-pending-bytes N] [--max-event-bytes N] [--max-request-bytes N] [--max-response-bytes N]
  [--high-water-mark N] [--max-connections N] [--max-connections-per-address N]
  [--metrics-port N] [--metrics-host ADDRESS] [--no-metrics]`;

/** Keys in a text (a file, an environment variable): separated by commas, white space or lines; `#` starts a comment line. */
const keysIn = (text) => text.split('\n').filter((l) => !l.trim().startsWith('#')).join('\n').split(/[\s,]+/).filter(Boolean);

/**
 * The command's arguments as createGateway's options, with its port and host. `env` gives the
 * environment variables (SEAM_GATEWAY_API_KEYS, SEAM_GATEWAY_UPSTREAM_KEY).
 */
export function parseArgs(argv, env = {}) {
  const numbers = {
    '--keepalive': 'keepalive', '--max-streams': 'maxStreams', '--max-pending-bytes': 'maxPendingBytes', '--max-event-bytes': 'maxEventBytes',
    '--max-request-bytes': 'maxRequestBytes', '--max-response-bytes': 'maxResponseBytes', '--high-water-mark': 'highWaterMark',
    '--upstream-timeout': 'upstreamTimeout', '--body-timeout': 'bodyTimeout', '--client-timeout': 'clientTimeout', '--max-duration': 'maxDuration',
    '--max-connections': 'maxConnections', '--max-connections-per-address': 'maxConnectionsPerAddress', '--metrics-port': 'metricsPort',
    '--anthropic-max-tokens': 'anthropicMaxTokens',
  };
  const strings = {
    '--upstream': 'upstream', '--upstream-format': 'upstreamFormat', '--upstream-key': 'upstreamKey', '--metrics-host': 'metricsHost',
    '--openai-max-tokens-field': 'openaiMaxTokensField', '--responses-summary': 'responsesSummary',
  };
  const options = {};
  const apiKeys = [];
  let port = 0;
  let host = '127.0.0.1';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--no-metrics') { options.metrics = false; continue; }
    if (a === '--allow-no-keys') { options.allowNoKeys = true; continue; }
    if (a === '--help' || a === '-h') return { help: true };
    const value = argv[++i];
    if (value === undefined) throw new TypeError(`${a} needs a value\n${USAGE}`);
    if (a === '--port') port = Number(value);
    else if (a === '--host') host = value;
    else if (a === '--api-key') apiKeys.push(value);
    else if (a === '--api-key-file') apiKeys.push(...keysIn(readFileSync(value, 'latin1')));
    else if (a === '--upstream-key-file') options.upstreamKey = readFileSync(value, 'latin1').trim();
    else if (numbers[a]) {
      const n = Number(value);
      if (value.trim() === '' || !Number.isFinite(n)) throw new TypeError(`${a} needs a number, not ${JSON.stringify(value)}\n${USAGE}`);
      options[numbers[a]] = n;
    } else if (strings[a]) options[strings[a]] = value;
    else throw new TypeError(`unknown argument ${a}\n${USAGE}`);
  }
  if (env.SEAM_GATEWAY_API_KEYS) apiKeys.push(...keysIn(env.SEAM_GATEWAY_API_KEYS));
  if (options.upstreamKey === undefined && env.SEAM_GATEWAY_UPSTREAM_KEY) options.upstreamKey = env.SEAM_GATEWAY_UPSTREAM_KEY.trim();
  if (apiKeys.length) options.apiKeys = apiKeys;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError(`--port must be 0..65535\n${USAGE}`);
  return { port, host, options };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let args;
  let gw;
  try {
    args = parseArgs(process.argv.slice(2), process.env);
    if (args.help) { console.log(USAGE); process.exit(0); }
    if (!args.options.upstream) throw new TypeError(`--upstream is required\n${USAGE}`);
    gw = createGateway(args.options);
    const url = await gw.listen(args.port, args.host);
    // (the signals are caught before the line a supervisor waits for is printed)
    const stop = () => gw.close().then(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    console.log(`listening ${url}`);
    if (gw.metricsUrl) console.log(`metrics ${gw.metricsUrl}/metrics`);
  } catch (e) {
    console.error(e.message);
    process.exit(2);
  }
}