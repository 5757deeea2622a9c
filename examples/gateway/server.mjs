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
import http from 'node:http';
import { pathToFileURL } from 'node:url';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { requestUpstream } from './upstream.mjs';
import {
  MODEL_FORMATS, ModelStream, ModelStreamError, SseRelay, coreMemoryLimit, coreMemoryUsed, describeFormat, setCoreMemoryLimit,
} from 'seam-stream';

const KiB = 1024;
const MiB = 1024 * KiB;

/** Every option of createGateway, with its default. Each buffer the gateway holds has a limit here. */
export const DEFAULTS = Object.freeze({
  /** The upstream's base URL (required), e.g. `http://127.0.0.1:11434`. */
  upstream: undefined,
  /** The upstream's format: one of the library's MODEL_FORMATS. */
  upstreamFormat: 'openai',
  /** Seconds of upstream silence after which the gateway writes `: keep-alive` (fractions accepted; 0: never). */
  keepalive: 15,
  /** Streams open at once; past it a request is answered 503. */
  maxStreams: 1024,
  /**
   * Bytes all streams together may hold: the relays' unfinished events (enforced in the core with
   * setCoreMemoryLimit, for the whole process) plus the clients' write buffers (a new request is
   * answered 503 while the total is past it).
   */
  maxPendingBytes: 64 * MiB,
  /** The most bytes one upstream event (or line) may hold while it is assembled. */
  maxEventBytes: 1 * MiB,
  /** A client's request body. */
  maxRequestBytes: 1 * MiB,
  /** A whole answer (`stream: false`), and an upstream's error body (64 KiB of which are read). */
  maxResponseBytes: 8 * MiB,
  /**
   * The client's write buffer past which the upstream read pauses (the response's high-water
   * mark); a stream holds at most this plus one relayed burst (the upstream reads of one tick).
   */
  highWaterMark: 64 * KiB,
  /** Milliseconds to wait for the upstream's response headers. */
  upstreamTimeout: 60_000,
  /** Serve `GET /metrics` and count (false: no prom-client calls at all, for measuring their cost). */
  metrics: true,
});

const ERROR_BODY_BYTES = 64 * KiB;
const KEEPALIVE = Buffer.from(': keep-alive\n\n');
/** The keep-alive clock ticks this many times per `keepalive` period (a silence is noticed within 1/4 of it). */
const TICKS = 4;

/**
 * How a chat completions request becomes the upstream's request: its path under the base URL and
 * its body. ddg: the base URL is the endpoint itself (its path is used as given).
 */
export function upstreamRequest(format, base, body, headers) {
  const url = typeof base === 'string' ? new URL(base) : base;
  const prefix = url.pathname.replace(/\/+$/, '');
  const out = { 'content-type': 'application/json', accept: describeFormat(format).contentType };
  const auth = headers.authorization;
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const text = (c) => (typeof c === 'string' ? c : Array.isArray(c) ? c.map((p) => (typeof p === 'string' ? p : p?.text ?? '')).join('') : '');
  let path;
  let payload;
  switch (format) {
    case 'openai':
      path = `${prefix}/v1/chat/completions`;
      payload = body;
      if (auth) out.authorization = auth;
      break;
    case 'openai-responses': {
      path = `${prefix}/v1/responses`;
      payload = { model: body.model, input: messages.map((m) => ({ role: m.role, content: text(m.content) })), stream: body.stream };
      if (body.max_tokens ?? body.max_completion_tokens) payload.max_output_tokens = body.max_tokens ?? body.max_completion_tokens;
      for (const k of ['temperature', 'top_p']) if (body[k] !== undefined) payload[k] = body[k];
      if (auth) out.authorization = auth;
      break;
    }
    case 'anthropic': {
      path = `${prefix}/v1/messages`;
      const system = messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => text(m.content)).join('\n\n');
      payload = {
        model: body.model, max_tokens: body.max_tokens ?? body.max_completion_tokens ?? 1024,
        messages: messages.filter((m) => m.role !== 'system' && m.role !== 'developer').map((m) => ({ role: m.role, content: text(m.content) })),
        stream: body.stream,
      };
      if (system) payload.system = system;
      for (const k of ['temperature', 'top_p']) if (body[k] !== undefined) payload[k] = body[k];
      if (body.stop !== undefined) payload.stop_sequences = [].concat(body.stop);
      out['anthropic-version'] = '2023-06-01';
      if (auth?.startsWith('Bearer ')) out['x-api-key'] = auth.slice(7);
      break;
    }
    case 'ollama':
      path = `${prefix}/api/chat`;
      payload = { model: body.model, messages: messages.map((m) => ({ role: m.role, content: text(m.content) })), stream: body.stream };
      if (body.temperature !== undefined) payload.options = { temperature: body.temperature };
      if (auth) out.authorization = auth;
      break;
    case 'ddg':
      path = prefix || '/';
      payload = { model: body.model, messages: messages.map((m) => ({ role: m.role, content: text(m.content) })) };
      if (auth) out.authorization = auth;
      break;
    default:
      throw new TypeError(`unknown upstream format ${format}`);
  }
  return { protocol: url.protocol, hostname: url.hostname, port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80), path: path + url.search, headers: out, payload };
}

/** The gateway's metrics, in their own registry (so that several gateways can live in one process). */
function makeMetrics() {
  const registry = new Registry();
  const c = (name, help, labelNames = []) => new Counter({ name, help, labelNames, registers: [registry] });
  // The counters a push moves: a plain number per push (`inc` adds to it), handed to prom-client
  // when it is scraped. prom-client's own inc() allocates a labels object per call; five of them
  // per push took about 3% of the gateway's CPU under load (bench/gateway.mjs --profile).
  const tallied = (name, help) => {
    const t = { value: 0, reported: 0, inc(n = 1) { this.value += n; } };
    new Counter({ name, help, registers: [registry], collect() { this.inc(t.value - t.reported); t.reported = t.value; } });
    return t;
  };
  const metrics = {
    registry,
    utf8Errors: c('llm_utf8_decode_error_total', 'Upstream streams that held invalid UTF-8'),
    finalMismatch: c('llm_stream_final_mismatch_total',
      'Streams whose end contradicts their last chunk: the upstream sent a finish reason but not its completion (cut before [DONE], message_stop, done)'),
    streamsOpen: new Gauge({ name: 'llm_streams_open', help: 'Streams open now', registers: [registry] }),
    streams: c('llm_streams_total', 'Streams ended, by how: done, truncated, failed (the upstream\'s error or a bad event), limit, aborted (the client left)', ['status']),
    bytesIn: tallied('llm_bytes_in_total', 'Upstream body bytes read by streams'),
    bytesOut: tallied('llm_bytes_out_total', 'Bytes written to clients by streams'),
    eventsIn: tallied('llm_events_in_total', 'Upstream events (SSE events, NDJSON or ddg lines) read'),
    eventsOut: tallied('llm_events_out_total', 'SSE events written to clients (comments not counted)'),
    truncated: c('llm_upstream_truncated_total', 'Upstream streams that ended without their completion'),
    limitErrors: c('llm_limit_errors_total', 'Requests or streams stopped by a limit', ['limit']),
    providerErrors: c('llm_provider_errors_total', 'Upstream errors: an HTTP error status, or an error event or body in the stream', ['source']),
    badEvents: c('llm_bad_event_total', 'Upstream events that were not valid JSON, or not events of the format'),
    keepalives: c('llm_keepalive_sent_total', 'Keep-alive comments the gateway wrote during upstream silence'),
    pending: new Histogram({
      name: 'llm_stream_pending_bytes', help: 'The most bytes a stream held at once (unfinished upstream event + client write buffer)',
      buckets: [1 * KiB, 4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, 1 * MiB, 4 * MiB, 16 * MiB], registers: [registry],
    }),
  };
  // every label value is exported from the start (at 0), so that a rate over it is defined
  for (const status of ['done', 'truncated', 'failed', 'limit', 'aborted']) metrics.streams.inc({ status }, 0);
  for (const limit of LIMITS) metrics.limitErrors.inc({ limit }, 0);
  for (const source of ['status', 'stream', 'connect']) metrics.providerErrors.inc({ source }, 0);
  return metrics;
}

/** The `limit` label of llm_limit_errors_total. */
const LIMITS = ['max_streams', 'pending_bytes', 'core_memory', 'event_bytes', 'request_bytes', 'response_bytes'];

/**
 * A stand-in for the metrics when they are off: the same calls, doing nothing. A plain object (a
 * Proxy's trap on every count made the gateway slower with its metrics off than on).
 */
const NOTHING = Object.freeze({ inc() {}, dec() {}, observe() {} });
const NO_METRICS = Object.freeze({
  registry: null,
  ...Object.fromEntries(['utf8Errors', 'finalMismatch', 'streamsOpen', 'streams', 'bytesIn', 'bytesOut', 'eventsIn', 'eventsOut', 'truncated',
    'limitErrors', 'providerErrors', 'badEvents', 'keepalives', 'pending'].map((k) => [k, NOTHING])),
});

function sendJson(res, status, value, extraHeaders) {
  if (res.headersSent) return void res.destroy();
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...extraHeaders });
  res.end(body);
}

const errorBody = (message, type, code, extra) => ({ error: { message, type, code: code ?? null, ...extra } });

/** An upstream error body's message, type and code (as the format writes them, else its text). */
function upstreamError(format, status, text) {
  let v;
  try { v = JSON.parse(text); } catch { v = undefined; }
  const e = describeFormat(format).errorOfBody(v);
  if (e !== undefined) return errorBody(e.message, e.type ?? 'upstream_error', e.code ?? null);
  return errorBody(text.trim() || `upstream answered HTTP ${status}`, 'upstream_error', null);
}

/**
 * Reads a stream's body up to `limit` bytes; resolves null past it, and then destroys the stream,
 * or with `drain` reads the rest without keeping it (a client's request, which is then answered).
 */
function readBody(stream, limit, drain = false) {
  return new Promise((resolve, reject) => {
    const parts = [];
    let n = 0;
    stream.on('data', (b) => {
      if (n > limit) return;
      n += b.length;
      if (n <= limit) return void parts.push(b);
      parts.length = 0;
      resolve(null);
      if (!drain) stream.destroy();
    });
    const done = () => {
      resolve(n > limit ? null : parts.length === 1 ? parts[0] : Buffer.concat(parts, n));
      parts.length = 0; // the listeners stay on the stream for its life: keep nothing in them
    };
    stream.on('end', done);
    stream.on('error', reject);
    stream.on('close', done);
  });
}

/**
 * A gateway server (not listening yet). `listen(port, host)` resolves its URL; `close()` ends
 * every stream (aborting their upstream requests) and resolves when the server is closed.
 */
export function createGateway(options = {}) {
  for (const k of Object.keys(options)) if (!(k in DEFAULTS)) throw new TypeError(`createGateway: unknown option ${k}`);
  const o = { ...DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) };
  if (typeof o.upstream !== 'string') throw new TypeError('createGateway: upstream (the base URL) is required');
  if (!MODEL_FORMATS.includes(o.upstreamFormat)) throw new TypeError(`createGateway: upstreamFormat must be one of ${MODEL_FORMATS.join(', ')}`);
  for (const k of ['keepalive', 'maxStreams', 'maxPendingBytes', 'maxEventBytes', 'maxRequestBytes', 'maxResponseBytes', 'highWaterMark', 'upstreamTimeout']) {
    if (typeof o[k] !== 'number' || !(o[k] >= 0)) throw new TypeError(`createGateway: ${k} must be a non-negative number`);
  }
  const format = o.upstreamFormat;
  const upstreamUrl = new URL(o.upstream);
  const m = o.metrics ? makeMetrics() : NO_METRICS;
  /** @type {Set<Stream>} */
  const streams = new Set();
  const previousCoreLimit = coreMemoryLimit();
  setCoreMemoryLimit(Math.min(2 ** 32 - 1, Math.max(previousCoreLimit ?? 0, o.maxPendingBytes)));

  const server = http.createServer({ highWaterMark: o.highWaterMark }, (req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) sendJson(res, 500, errorBody(`gateway error: ${err?.message ?? err}`, 'gateway_error', 'ERR_GATEWAY'));
      else res.destroy(err);
    });
  });

  async function handle(req, res) {
    const path = req.url.split('?')[0];
    if (req.method === 'GET' && path === '/metrics') {
      if (!m.registry) return sendJson(res, 404, errorBody('metrics are off', 'invalid_request_error', 'not_found'));
      const text = await m.registry.metrics();
      res.writeHead(200, { 'content-type': m.registry.contentType });
      return void res.end(text);
    }
    if (path !== '/v1/chat/completions') return sendJson(res, 404, errorBody(`no route ${req.method} ${path}`, 'invalid_request_error', 'not_found'));
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
    let raw = await readBody(req, o.maxRequestBytes, true);
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
    // A whole answer from an upstream other than OpenAI is read from its stream (so that it is
    // validated and assembled as the streamed one is); OpenAI's whole answer passes through.
    const s = new Stream(res);
    streams.add(s);
    m.streamsOpen.inc();
    try {
      const upRes = await s.request(upstreamRequest(format, upstreamUrl, format === 'openai' ? body : { ...body, stream: true }, req.headers));
      if (upRes === null) return; // the client left, or the upstream failed before answering (answered)
      if (upRes.statusCode >= 400) {
        const text = await readBody(upRes, ERROR_BODY_BYTES);
        m.providerErrors.inc({ source: 'status' });
        s.status = 'failed';
        return sendJson(res, upRes.statusCode, upstreamError(format, upRes.statusCode, text === null ? '' : text.toString('utf8')));
      }
      if (!stream) return await (format === 'openai' ? s.whole(upRes) : s.assemble(upRes, body.model));
      body = null;
      await s.relay(upRes);
    } finally {
      s.close();
    }
  }

  /** One client request and its upstream request. */
  class Stream {
    constructor(res) {
      this.res = res;
      this.upReq = null;
      this.upRes = null;
      /** Keep-alive ticks since the upstream last sent bytes. */
      this.idle = 0;
      /** The most bytes the stream held at once (its client's write buffer and its unfinished event). */
      this.peak = 0;
      /**
       * The client's write buffer right after the gateway last wrote to it: at least what it holds
       * now (it only shrinks until the next write). Their sum over the streams is `written`.
       */
      this.wrote = 0;
      /** The upstream read is paused (the client's buffer is full): its response buffers up to a read more than its high-water mark. */
      this.paused = false;
      this.status = 'aborted';
      this.closed = false;
      /** The client left before the answer ended. */
      this.left = false;
      this.done = null; // resolves the current phase when the client leaves
      res.on('close', () => {
        if (!res.writableFinished) this.abort();
      });
    }

    /** Sends the upstream request; resolves its response, or null (then the client was answered or left). */
    request(up) {
      const payload = Buffer.from(JSON.stringify(up.payload));
      return new Promise((resolve) => {
        this.done = () => resolve(null);
        const failed = (err) => {
          if (this.closed || this.left) return resolve(null);
          m.providerErrors.inc({ source: 'connect' });
          this.status = 'failed';
          if (!this.res.destroyed) sendJson(this.res, 502, errorBody(`the upstream could not be reached: ${err.message}`, 'upstream_error', 'ERR_UPSTREAM_UNREACHABLE'));
          resolve(null);
        };
        // one connection per upstream request, closed with it: an aborted stream leaves no socket behind
        const upReq = requestUpstream({ ...up, body: payload });
        this.upReq = upReq;
        const timer = setTimeout(() => upReq.destroy(new Error(`no answer from the upstream within ${o.upstreamTimeout} ms`)), o.upstreamTimeout);
        upReq.response.then((r) => {
          clearTimeout(timer);
          this.upRes = r;
          if (this.closed || this.left) { r.destroy(); resolve(null); } else resolve(r);
        }, (err) => {
          clearTimeout(timer);
          failed(err);
        });
      });
    }

    /** The relay loop: upstream reads → whole validated events → client, with backpressure. */
    relay(upRes) {
      const res = this.res;
      const relay = new SseRelay({ from: format, maxEventBytes: o.maxEventBytes });
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
      res.flushHeaders();
      return new Promise((resolve) => {
        let ended = false;
        let events = 0;
        let sent = 0; // events written to the client, as the relay counts them
        const stop = () => {
          ended = true;
          relay.dispose();
          resolve();
        };
        /** The upstream's end: the relay's last bytes ([DONE], or the error event), then the response's end. */
        const end = () => {
          take(); // the reads of this tick first
          if (ended) return;
          const tail = Buffer.from(relay.flush()); // a copy: the view is the relay's
          const st = relay.status;
          this.status = st === 'done' ? 'done' : st === 'truncated' ? 'truncated' : 'failed';
          if (st === 'truncated') {
            m.truncated.inc();
            if (relay.finishReason !== undefined) m.finalMismatch.inc();
          }
          const code = relay.error?.code; // the error the relay wrote to the client, if any
          if (code === 'ERR_INVALID_UTF8') m.utf8Errors.inc();
          else if (code === 'ERR_PROVIDER') m.providerErrors.inc({ source: 'stream' });
          else if (code === 'ERR_BAD_EVENT') m.badEvents.inc();
          else if (code === 'ERR_EVENT_TOO_LARGE') { m.limitErrors.inc({ limit: 'event_bytes' }); this.status = 'limit'; }
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
          const chunk = burst.length === 1 ? burst[0] : Buffer.concat(burst, burstBytes);
          burst.length = 0;
          burstBytes = 0;
          let out;
          try {
            out = relay.push(chunk);
          } catch (err) {
            // the core's budget for all streams (setCoreMemoryLimit): this stream stops, the others go on
            m.limitErrors.inc({ limit: 'core_memory' });
            const e = Buffer.from(`data: ${JSON.stringify(errorBody(`the gateway is out of stream memory: ${err.message}`, 'overloaded', err.code ?? 'ERR_GATEWAY'))}\n\n`);
            m.eventsOut.inc(1);
            m.bytesOut.inc(e.length);
            this.status = 'limit';
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
          this.idle = 0;
          if (burst.length === 0) process.nextTick(take);
          burst.push(chunk);
          burstBytes += chunk.length;
        });
        upRes.on('end', end);
        upRes.on('error', end); // the upstream's connection broke: the relay's flush calls it truncated
        upRes.on('close', end);
      });
    }

    /** OpenAI's whole answer (`stream: false`), passed through with its status, bounded. */
    async whole(upRes) {
      const body = await readBody(upRes, o.maxResponseBytes);
      if (body === null) {
        m.limitErrors.inc({ limit: 'response_bytes' });
        this.status = 'limit';
        return sendJson(this.res, 502, errorBody(`the upstream's answer is over ${o.maxResponseBytes} bytes`, 'upstream_error', 'ERR_RESPONSE_TOO_LARGE'));
      }
      m.bytesIn.inc(body.length);
      m.bytesOut.inc(body.length);
      this.status = 'done';
      this.res.writeHead(upRes.statusCode, { 'content-type': upRes.headers['content-type'] ?? 'application/json', 'content-length': body.length });
      this.res.end(body);
    }

    /** Another upstream's stream read whole into one `chat.completion` (`stream: false`). */
    async assemble(upRes, model) {
      const ms = new ModelStream({ format, normalize: false, maxEventBytes: o.maxEventBytes, maxTextBytes: o.maxResponseBytes });
      let text = '';
      let failure = null;
      await new Promise((resolve) => {
        this.done = resolve;
        upRes.on('data', (chunk) => {
          if (failure) return;
          m.bytesIn.inc(chunk.length);
          try { text += ms.push(chunk); } catch (err) { failure = err; upRes.destroy(); resolve(); }
        });
        upRes.on('end', resolve);
        upRes.on('error', resolve);
        upRes.on('close', resolve);
      });
      if (this.left || this.res.destroyed) return;
      if (!failure) {
        try { text += ms.flush(); } catch (err) { failure = err; }
      }
      m.eventsIn.inc(ms.events);
      if (failure) {
        const code = failure.code ?? 'ERR_GATEWAY';
        this.status = code === 'ERR_STREAM_TRUNCATED' ? 'truncated' : 'failed';
        if (code === 'ERR_STREAM_TRUNCATED') { m.truncated.inc(); if (ms.finishReason !== undefined) m.finalMismatch.inc(); }
        if (code === 'ERR_INVALID_UTF8') m.utf8Errors.inc();
        if (code === 'ERR_PROVIDER') m.providerErrors.inc({ source: 'stream' });
        if (code === 'ERR_BAD_EVENT') m.badEvents.inc();
        if (code === 'ERR_EVENT_TOO_LARGE' || code === 'ERR_TEXT_TOO_LONG') { m.limitErrors.inc({ limit: 'response_bytes' }); this.status = 'limit'; }
        const message = failure instanceof ModelStreamError ? failure.providerMessage ?? failure.message : failure.message;
        ms.dispose();
        return sendJson(this.res, 502, errorBody(message, code === 'ERR_PROVIDER' ? 'upstream_error' : 'upstream_stream_error', code,
          failure instanceof ModelStreamError ? { offset: failure.offset } : undefined));
      }
      const finish = ms.finishReason;
      const usage = ms.usage;
      ms.dispose();
      this.status = 'done';
      const answer = {
        id: `chatcmpl-gw${Date.now().toString(36)}`, object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: model ?? format,
        choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: finish === undefined ? 'stop' : describeFormat(format).finishReason(finish, 'openai') }],
      };
      if (usage) answer.usage = usage;
      const bytes = Buffer.from(JSON.stringify(answer));
      m.bytesOut.inc(bytes.length);
      sendJson(this.res, 200, answer);
    }

    /** The client left: abort the upstream request (its socket is destroyed with it). */
    abort() {
      this.left = true;
      if (this.upReq !== null && !this.upReq.destroyed) this.upReq.destroy();
      if (this.upRes !== null && !this.upRes.destroyed) this.upRes.destroy();
      const done = this.done;
      this.done = null;
      done?.();
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
      this.unpaused();
      streams.delete(this);
      m.streamsOpen.dec();
      m.streams.inc({ status: this.status });
      m.pending.observe(this.peak);
    }
  }

  /**
   * What the streams hold now: their clients' write buffers, their upstream responses' read
   * buffers, and (in the core) their unfinished events.
   */
  function pendingBytes() {
    let n = coreMemoryUsed();
    for (const s of streams) n += s.res.writableLength + (s.upRes?.readableLength ?? 0);
    return n;
  }

  /**
   * Whether the streams might hold maxPendingBytes, which spares the walk over every stream (for
   * each new request: quadratic in the streams open) when they cannot. An upper bound kept as the
   * streams go: each client buffer as it was right after the gateway's last write to it (it only
   * shrinks until the next), and for each paused upstream read its socket's buffer at most (its
   * high-water mark, 16 KiB on Node 20 and 64 KiB from Node 22, plus one 64 KiB read; a flowing
   * one holds nothing between reads).
   */
  let written = 0;
  let paused = 0;
  const mightBeFull = () => coreMemoryUsed() + written + paused * 128 * KiB >= o.maxPendingBytes;

  // The keep-alive clock: one timer for all streams; a stream silent for TICKS + 1 ticks (more than
  // `keepalive` seconds) gets a comment, unless its client is not reading anyway.
  let ticker = null;
  if (o.keepalive > 0) {
    ticker = setInterval(() => {
      for (const s of streams) {
        if (++s.idle <= TICKS || s.upRes === null || !s.res.headersSent || s.res.writableLength > 0 || s.res.writableEnded) continue;
        s.idle = 0;
        m.keepalives.inc();
        m.bytesOut.inc(KEEPALIVE.length);
        s.res.write(KEEPALIVE);
        s.wroteNow();
      }
    }, (o.keepalive * 1000) / TICKS);
    ticker.unref();
  }

  return {
    server,
    options: o,
    registry: m.registry,
    /** Streams open now and the bytes they hold (client buffers and unfinished events). */
    stats: () => ({ streams: streams.size, pendingBytes: pendingBytes(), coreBytes: coreMemoryUsed() }),
    listen(port = 0, host = '127.0.0.1') {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve(`http://${host}:${server.address().port}`);
        });
      });
    },
    close() {
      if (ticker) clearInterval(ticker);
      for (const s of streams) { s.abort(); s.res.destroy(); }
      const closed = new Promise((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
      server.closeAllConnections();
      setCoreMemoryLimit(previousCoreLimit);
      return closed;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The command

const USAGE = `usage: node examples/gateway/server.mjs --port <n> --upstream <base-url>
  [--upstream-format ${MODEL_FORMATS.join('|')}] [--keepalive SECONDS]
  [--max-streams N] [--max-pending-bytes N] [--max-event-bytes N] [--no-metrics]`;

export function parseArgs(argv) {
  const flags = {
    '--upstream': 'upstream', '--upstream-format': 'upstreamFormat', '--keepalive': 'keepalive', '--max-streams': 'maxStreams',
    '--max-pending-bytes': 'maxPendingBytes', '--max-event-bytes': 'maxEventBytes', '--max-request-bytes': 'maxRequestBytes',
    '--max-response-bytes': 'maxResponseBytes', '--high-water-mark': 'highWaterMark', '--upstream-timeout': 'upstreamTimeout',
  };
  const options = {};
  let port = 0;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--no-metrics') { options.metrics = false; continue; }
    if (a === '--help' || a === '-h') return { help: true };
    const value = argv[++i];
    if (value === undefined) throw new TypeError(`${a} needs a value\n${USAGE}`);
    if (a === '--port') port = Number(value);
    else if (flags[a]) options[flags[a]] = flags[a] === 'upstream' || flags[a] === 'upstreamFormat' ? value : Number(value);
    else throw new TypeError(`unknown argument ${a}\n${USAGE}`);
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError(`--port must be 0..65535\n${USAGE}`);
  return { port, options };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
    if (args.help) { console.log(USAGE); process.exit(0); }
    if (!args.options.upstream) throw new TypeError(`--upstream is required\n${USAGE}`);
  } catch (e) {
    console.error(e.message);
    process.exit(2);
  }
  const gw = createGateway(args.options);
  const url = await gw.listen(args.port);
  console.log(`listening ${url}`);
  const stop = () => gw.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
