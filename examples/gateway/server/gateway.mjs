// A gateway (createGateway): its options checked, its state (the options, metrics, upstream, the
// streams' budget and the clock's tick, which every stream shares), its HTTP server and what it
// answers itself (a request Node refused, a wrong key, no route, a stream over a limit),
// the admission of each request as a stream (stream.mjs), the clock that times them all, and its
// listening and closing.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { coreMemoryLimit, coreMemoryUsed, describeFormat, setCoreMemoryLimit } from 'seam-stream';
import { GatewayConfigError, bedrockLacks, signedQuery } from '../requests/index.mjs';
import { Budget } from './budget.mjs';
import { startClock } from './clock.mjs';
import { capConnections } from './connections.mjs';
import { authorized, digest, isLoopback } from './keys.mjs';
import { NO_METRICS, makeMetrics, serveMetrics } from './metrics.mjs';
import { optionsOf } from './options.mjs';
import { errorBody, redactor, replyIn, sendJson, shapedFor, socketReply } from './replies.mjs';
import { Stream } from './stream.mjs';

/**
 * The client's API, by the route it asked for: `openai` (Chat Completions) or `anthropic`
 * (Messages). Errors and whole answers are written in its shape.
 */
const DIALECTS = new Map([['/v1/chat/completions', 'openai'], ['/v1/messages', 'anthropic']]);

/**
 * The core's memory limit is the process's, not a gateway's, and every gateway in the process
 * shares it: each raises it to its maxPendingBytes at least (never lowers it: another may need
 * more), and only the last gateway to close puts back the limit there was before the first, so
 * that closing one never takes its limit from another still open (while any is open, the limit
 * stays the highest one set). `holders`: the gateways open that raised it; `before`: the limit
 * before the first of them.
 */
const coreLimit = { holders: 0, before: undefined };

/** Milliseconds a client has, past the drain's deadline, to take the end of its stream before its connection is cut. */
const DRAIN_GRACE = 1000;
/** Connections the metrics listener takes at once (a scraper needs one); past them Node drops a new one. */
const METRICS_CONNECTIONS = 16;

/**
 * A gateway server (not listening yet). `listen(port, host)` resolves its URL; `close()` drains it
 * (no new request; the streams in flight up to drainTimeout, then ended with their error event and
 * their upstream requests aborted) and resolves when every stream and connection is closed.
 */
export function createGateway(options = {}) {
  const o = optionsOf(options);
  const log = o.log ?? ((line) => process.stderr.write(`${line}\n`));
  const format = o.upstreamFormat;
  const upstreamUrl = new URL(o.upstream);
  if (upstreamUrl.protocol !== 'http:' && upstreamUrl.protocol !== 'https:') {
    throw new TypeError(`createGateway: the upstream must be an http: or https: URL, not ${upstreamUrl.protocol}`);
  }
  if (upstreamUrl.username || upstreamUrl.password) throw new TypeError('createGateway: put the upstream\'s key in upstreamKey, not in its URL');
  if (upstreamUrl.protocol === 'http:' && !isLoopback(upstreamUrl.hostname)) {
    log(`gateway: warning: the upstream ${upstreamUrl.origin} is plain http beyond loopback: every prompt, answer and key crosses the network unencrypted`);
  }
  const signed = format === 'bedrock' || format === 'bedrock-invoke';
  // (a signed upstream's query is sent as SigV4 writes it: an escape that is not UTF-8's has no such writing)
  if (signed) {
    try { signedQuery(upstreamUrl.search); } catch { throw new TypeError(`createGateway: the upstream URL's query has a malformed percent escape (or one that is not UTF-8), which a signed request cannot carry: ${upstreamUrl.search.slice(0, 200)}`); }
  }
  // (a bedrock upstream it cannot sign for: said at the start, where each request would say it only when it comes)
  const lacking = signed ? bedrockLacks(upstreamUrl.hostname, process.env) : undefined;
  if (lacking !== undefined) log(`gateway: warning: ${lacking}: every request will fail (500) until it is set and the gateway restarted`);
  const keys = o.apiKeys.map(digest);
  const m = o.metrics ? makeMetrics() : NO_METRICS;
  /** The gateway's state, which its streams share (stream.mjs, relay.mjs, whole-answer.mjs) and its clock moves (clock.mjs). */
  const gw = {
    o,
    m,
    log,
    format,
    facts: describeFormat(format),
    upstreamUrl,
    // what the upstream gets as its credential (upstreamRequest puts a bearer where the format wants it)
    upstreamCredential: o.upstreamKey !== undefined ? { authorization: `Bearer ${o.upstreamKey}` } : null,
    /** The upstream key taken out of the upstream's error messages to a client (replies.mjs' redactor), or null. */
    redact: redactor(o.upstreamKey),
    /** The gateway asks its clients for keys: their credentials never leave it. */
    keyed: keys.length > 0,
    // (the choices of words of upstreamRequest's translations)
    settings: { openaiMaxTokensField: o.openaiMaxTokensField, anthropicMaxTokens: o.anthropicMaxTokens, responsesSummary: o.responsesSummary },
    budget: new Budget(o),
    /** The clock's tick (clock.mjs): the streams' times are counted in its ticks. */
    tick: 0,
  };
  const { budget } = gw;
  const streams = budget.streams;
  // request ids: a random prefix per gateway and a count (cheaper than a UUID per request)
  const idPrefix = `gw-${randomBytes(4).toString('hex')}-`;
  let requests = 0;
  const nextId = () => idPrefix + (++requests).toString(36);

  /** The milliseconds a request's head has (Node's headersTimeout: at most its requestTimeout). */
  const headWithin = Math.min(o.headTimeout, o.clientTimeout);
  const server = http.createServer({
    highWaterMark: o.highWaterMark,
    // the client's request (head and body) must arrive within clientTimeout, its head within
    // headTimeout; Node checks them on its own clock
    requestTimeout: o.clientTimeout,
    headersTimeout: headWithin,
    connectionsCheckingInterval: Math.max(5, Math.min(30_000, Math.floor(headWithin / 4))),
  }, (req, res) => onRequest(req, res, false));
  // A request that says `expect: 100-continue` is told to send its body only once it is admitted:
  // Node's own 100 went out at once, so a client without a key, or past a limit, sent its body (up
  // to maxRequestBytes) for a refusal it could have had first.
  server.on('checkContinue', (req, res) => onRequest(req, res, true));

  /** A request, whose head came (`expects`: it waits for a 100 Continue before its body). */
  function onRequest(req, res, expects) {
    // (a request on a connection over a cap, which was answered 503 and is closing: not served, the
    // upstream not asked)
    if (connections.rejected(req.socket)) return;
    const id = nextId();
    res.setHeader('x-request-id', id);
    handle(req, res, id, expects).catch((err) => {
      m.gatewayErrors.inc();
      // (what the gateway's configuration lacks is said to the client too: names to set, no value)
      const config = err instanceof GatewayConfigError;
      log(`gateway: request ${id}: 500: ${config ? `${err.name}: ${err.message}` : err?.stack ?? err}`);
      const message = config ? `gateway error (request id ${id}): ${err.message}` : `gateway error (request id ${id}; the gateway's log has the detail)`;
      if (!res.headersSent) sendJson(res, 500, errorBody(message, 'gateway_error', 'ERR_GATEWAY'));
      else res.destroy();
    });
  }

  // A request that did not arrive within clientTimeout (Node's requestTimeout), or its head within
  // headTimeout (its headersTimeout; a connection that sends nothing too): 408 in the API's
  // shape (the route's, once the head came), then the connection closes (the stream that read its body, if any, is aborted with it).
  server.on('clientError', (err, socket) => {
    if (connections.rejected(socket)) return; // (answered 503 already, and closing)
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') m.timeouts.inc({ timeout: 'request' });
    if (!socket.writable || socket._httpMessage?.headersSent) return void socket.destroy();
    // (a request whose head did not come has no response yet: its time was headTimeout)
    const [status, text, body] = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', errorBody(`the request did not arrive within ${socket._httpMessage == null ? headWithin : o.clientTimeout} ms`, 'invalid_request_error', 'ERR_REQUEST_TIMEOUT')]
      : err.code === 'HPE_HEADER_OVERFLOW' ? [431, 'Request Header Fields Too Large', errorBody('the request head is too large', 'invalid_request_error', 'ERR_HEADERS_TOO_LARGE')]
        : [400, 'Bad Request', errorBody('the request is not valid HTTP/1.1', 'invalid_request_error', 'ERR_BAD_REQUEST')];
    // (in the client's API where its head came, and with it its route: a body that did not arrive,
    // or broke HTTP/1.1; and then with the id its request was given, else a new one)
    const res = socket._httpMessage;
    const id = res?.getHeader?.('x-request-id') ?? nextId();
    socket.end(socketReply(status, text, shapedFor(res, status, body), id));
    socket.destroySoon?.();
  });

  const connections = capConnections(server, o, m, nextId);
  /** The connections with a stream open (one at a time on each). */
  const busy = new WeakSet();

  // (the metrics listener has the API's times for a request to arrive, and takes a few connections
  // at once: with Node's defaults a client that opened connections and sent nothing held each for
  // a minute, as many as it liked, outside maxConnections; a scraper needs one)
  const metricsServer = o.metricsPort === undefined ? null : http.createServer({
    requestTimeout: o.clientTimeout,
    headersTimeout: headWithin,
    connectionsCheckingInterval: Math.max(5, Math.min(30_000, Math.floor(headWithin / 4))),
  }, (req, res) => {
    const path = req.url.split('?')[0];
    if (req.method === 'GET' && path === '/metrics') return void serveMetrics(m, res).catch(() => res.destroy());
    sendJson(res, 404, errorBody('no route (this listener serves GET /metrics)', 'invalid_request_error', 'not_found'));
  });
  if (metricsServer !== null) metricsServer.maxConnections = METRICS_CONNECTIONS;

  async function handle(req, res, id, expects = false) {
    const path = req.url.split('?')[0];
    const dialect = DIALECTS.get(path);
    replyIn(res, dialect);
    // (the key first: a caller without one learns nothing of the gateway, its drain included)
    if (keys.length > 0 && !authorized(keys, req.headers)) {
      m.authFailures.inc();
      return sendJson(res, 401, errorBody('Incorrect or missing API key: send it as authorization: Bearer KEY (or x-api-key: KEY)', 'invalid_request_error', 'invalid_api_key'),
        { 'www-authenticate': 'Bearer', connection: 'close' });
    }
    // (the metrics on the API's listener: served while the gateway drains too, where they show the
    // streams going, and then the connection closes, as every answer's does during the drain)
    if (req.method === 'GET' && path === '/metrics' && metricsServer === null) {
      if (closing !== null) res.setHeader('connection', 'close');
      return serveMetrics(m, res);
    }
    // (a request that comes while the gateway drains, on a connection it had: refused, and its connection closed)
    if (closing !== null) {
      return sendJson(res, 503, errorBody('the gateway is shutting down; retry the request', 'overloaded', 'ERR_SHUTTING_DOWN'), { 'retry-after': '1', connection: 'close' });
    }
    if (dialect === undefined) return sendJson(res, 404, errorBody(`no route ${req.method} ${path.slice(0, 200)}`, 'invalid_request_error', 'not_found'));
    if (req.method !== 'POST') return sendJson(res, 405, errorBody('use POST', 'invalid_request_error', 'method_not_allowed'), { allow: 'POST' });
    // (one stream per connection at a time: a request pipelined behind an open one would be
    // admitted and sent upstream at once, its answer waiting behind the first's in Node's queue,
    // where no client timeout sees it; one connection took every slot, past
    // maxConnectionsPerAddress. No client pipelines a POST (RFC 9112 9.3.2 says not to): refused,
    // the answer after the first one's, and the connection closed)
    if (busy.has(req.socket)) {
      m.limitErrors.inc({ limit: 'pipelined' });
      return sendJson(res, 503, errorBody('a request pipelined behind a stream on its connection: the gateway serves one at a time on each; send it on another connection', 'overloaded', 'ERR_PIPELINED'),
        { 'retry-after': '1', connection: 'close' });
    }
    if (streams.size >= o.maxStreams) {
      m.limitErrors.inc({ limit: 'max_streams' });
      return sendJson(res, 503, errorBody(`the gateway has ${streams.size} streams open (maxStreams ${o.maxStreams}); retry later`, 'overloaded', 'ERR_MAX_STREAMS'), { 'retry-after': '1' });
    }
    const held = budget.mightBeFull() ? budget.pendingBytes() : 0;
    if (held >= o.maxPendingBytes) {
      m.limitErrors.inc({ limit: 'pending_bytes' });
      return sendJson(res, 503, errorBody(`the gateway's streams hold ${held} bytes (maxPendingBytes ${o.maxPendingBytes}); retry later`, 'overloaded', 'ERR_PENDING_BYTES'), { 'retry-after': '1' });
    }
    // Admitted: the stream's slot is taken before its body is read, and the body counts in the budget.
    const s = new Stream(gw, res, id, dialect);
    streams.add(s);
    const socket = req.socket;
    busy.add(socket);
    m.streamsOpen.inc();
    if (expects) res.writeContinue(); // (admitted: now its body)
    try {
      await s.serve(req);
      // (what serve wrote itself, a whole answer or a reply, counts in the budget's bound as a relayed write does)
      s.wroteNow();
      // the answer is written; the slot (and what the answer holds) goes once the client took it all
      if (!res.writableFinished && !res.destroyed) await new Promise((resolve) => { s.done = resolve; res.once('close', resolve); res.once('finish', resolve); });
    } finally {
      busy.delete(socket);
      s.close();
      if (closing !== null && streams.size === 0) drained();
    }
  }

  /** The drain (close()): its promise once begun, and what ends it. */
  let closing = null;
  let drained = () => {};

  const ticker = startClock(gw);
  // (last: a gateway whose making threw above holds no share of the limit)
  if (coreLimit.holders++ === 0) coreLimit.before = coreMemoryLimit();
  setCoreMemoryLimit(Math.min(2 ** 32 - 1, Math.max(coreMemoryLimit() ?? 0, o.maxPendingBytes)));
  let holdsCoreLimit = true;

  let metricsUrl = null;
  return {
    server,
    metricsServer,
    options: o,
    registry: m.registry,
    /** The metrics listener's URL once listening (with metricsPort), else null. */
    get metricsUrl() { return metricsUrl; },
    /** Streams open now, the bytes they hold (client buffers, request bodies and whole answers, unfinished events), connections open. */
    stats: () => ({ streams: streams.size, pendingBytes: budget.pendingBytes(), coreBytes: coreMemoryUsed(), connections: connections.open() }),
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
      if (closing !== null) return closing;
      // Drain: no new connection (the listener closes, and the idle connections with it), a request
      // on a connection still open is answered 503 (handle); the streams in flight go on, up to
      // drainTimeout, past which each ends as a timeout ends it (expire: its error event in the
      // client's API, or a 503) and its upstream is closed; a client that does not take that end
      // within DRAIN_GRACE is cut. Once no stream is left, every connection is closed.
      let finished;
      let deadline;
      let grace;
      const closed = (srv) => new Promise((resolve) => (srv.listening ? srv.close(() => resolve()) : resolve()));
      const api = closed(server); // (the metrics listener stays open while the streams drain)
      closing = new Promise((resolve) => { finished = resolve; });
      drained = () => {
        drained = () => {};
        clearTimeout(deadline);
        clearTimeout(grace);
        clearInterval(ticker);
        const servers = Promise.all([api, ...(metricsServer ? [closed(metricsServer)] : [])]);
        server.closeAllConnections();
        metricsServer?.closeAllConnections();
        // (once, however many times close is called)
        if (holdsCoreLimit) {
          holdsCoreLimit = false;
          if (--coreLimit.holders === 0) setCoreMemoryLimit(coreLimit.before);
        }
        // (the servers close once their sockets are destroyed; the sockets' 'close', which the
        // connection count hears, comes later)
        void servers.then(() => connections.none()).then(() => finished());
      };
      // (an answer not begun closes its connection after it)
      for (const s of streams) if (!s.res.headersSent) s.res.setHeader('connection', 'close');
      const cut = () => {
        for (const s of [...streams]) s.expire('drain', `the gateway is shutting down: the stream did not end within its drain time (${o.drainTimeout} ms)`);
        grace = setTimeout(() => { for (const s of [...streams]) { s.abort(); s.res.destroy(); } }, DRAIN_GRACE);
      };
      if (streams.size === 0) drained();
      else if (o.drainTimeout === 0) cut();
      else deadline = setTimeout(cut, o.drainTimeout);
      return closing;
    },
  };
}
