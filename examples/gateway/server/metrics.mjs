// The gateway's metrics: its counters, gauges and histogram in a Prometheus registry of their own
// (makeMetrics), the labels each is exported with from the start, NO_METRICS, their stand-in that
// counts nothing (the option `metrics: false`), and their page, GET /metrics (serveMetrics).
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { KiB, MiB } from './options.mjs';
import { errorBody, sendJson } from './replies.mjs';

/** The gateway's metrics, in their own registry (so that several gateways can live in one process). */
export function makeMetrics() {
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
  // The tokens the upstreams reported, by kind, added once per answer (not per push: prom-client's
  // own inc, on the counter made after the others, below). A count that is no number, or not above 0, adds nothing.
  const add = (kind, n) => { if (n > 0) tokens.inc({ kind }, n); };
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
    providerErrors: c('llm_provider_errors_total', 'Upstream errors, by source: status (an HTTP error status), stream (an error event or body in the stream), '
      + 'connect (no answer: the upstream could not be reached, did not answer within upstreamTimeout, or its head broke HTTP/1.1), '
      + 'body (its answer broke off after the head: the connection closed or reset, or the chunk framing broke, before the body\'s end)', ['source']),
    badEvents: c('llm_bad_event_total', 'Upstream events that were not valid JSON, or not events of the format'),
    keepalives: c('llm_keepalive_sent_total', 'Keep-alive comments the gateway wrote during upstream silence'),
    /** `add(facts, usage)`: a provider's usage object (`facts`: its format's describeFormat), counted. */
    tokens: {
      add(facts, usage) {
        if (usage === undefined || usage === null || typeof usage !== 'object') return;
        const u = facts.usage(usage);
        add('input', u.input);
        add('output', u.output);
        add('cache_read', u.cacheRead);
        add('cache_write', u.cacheWrite);
        add('reasoning', u.reasoning);
      },
    },
    timeouts: c('gateway_timeouts_total', 'Requests or streams ended by a timeout: request (the client\'s request did not arrive), body (upstream silence), client (the client took nothing), duration (maxDuration), drain (a stream that outlived drainTimeout when the gateway closed)', ['timeout']),
    authFailures: c('gateway_auth_failures_total', 'Requests refused for a missing or wrong key'),
    gatewayErrors: c('gateway_errors_total', 'Requests the gateway failed itself (a Bedrock request it could not sign among them): answered 500, or cut off when '
      + 'the answer had begun; its log has the detail under the request id'),
    connectionsRejected: c('gateway_connections_rejected_total', 'Connections refused by a cap: total, per_address', ['limit']),
    connectionsOpen: new Gauge({ name: 'gateway_connections_open', help: 'Client connections open now', registers: [registry] }),
    pending: new Histogram({
      name: 'llm_stream_pending_bytes', help: 'The most bytes a stream held at once (unfinished upstream event + client write buffer)',
      buckets: [1 * KiB, 4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, 1 * MiB, 4 * MiB, 16 * MiB], registers: [registry],
    }),
  };
  const tokens = c('llm_tokens_total', 'Tokens the upstream reported for the answers it gave, by kind, counted once per answer from its usage (streamed or whole; '
      + 'one that failed, was cut short or that its client left too, as far as its usage came): input (the prompt\'s, its cached tokens '
      + 'included), output (its reasoning included), cache_read and cache_write (the input tokens read from the provider\'s cache and '
      + 'written to it: part of input), reasoning (part of output)', ['kind']);
  // every label value is exported from the start (at 0), so that a rate over it is defined
  for (const status of ['done', 'truncated', 'failed', 'limit', 'aborted']) metrics.streams.inc({ status }, 0);
  for (const limit of LIMITS) metrics.limitErrors.inc({ limit }, 0);
  for (const source of ['status', 'stream', 'connect', 'body']) metrics.providerErrors.inc({ source }, 0);
  for (const timeout of ['request', 'body', 'client', 'duration', 'drain']) metrics.timeouts.inc({ timeout }, 0);
  for (const limit of ['total', 'per_address']) metrics.connectionsRejected.inc({ limit }, 0);
  for (const kind of ['input', 'output', 'cache_read', 'cache_write', 'reasoning']) tokens.inc({ kind }, 0);
  return metrics;
}

/** The `limit` label of llm_limit_errors_total. */
const LIMITS = ['max_streams', 'pending_bytes', 'core_memory', 'event_bytes', 'request_bytes', 'response_bytes', 'pipelined'];

/**
 * A stand-in for the metrics when they are off: the same calls, doing nothing. A plain object (a
 * Proxy's trap on every count made the gateway slower with its metrics off than on).
 */
const NOTHING = Object.freeze({ inc() {}, dec() {}, observe() {}, set() {}, add() {} });
export const NO_METRICS = Object.freeze({
  registry: null,
  ...Object.fromEntries(['utf8Errors', 'finalMismatch', 'streamsOpen', 'streams', 'bytesIn', 'bytesOut', 'eventsIn', 'eventsOut', 'truncated',
    'limitErrors', 'providerErrors', 'badEvents', 'keepalives', 'pending', 'timeouts', 'authFailures', 'gatewayErrors', 'connectionsRejected', 'connectionsOpen', 'tokens'].map((k) => [k, NOTHING])),
});

/** GET /metrics: Prometheus text, of the metrics `m`. */
export async function serveMetrics(m, res) {
  if (!m.registry) return sendJson(res, 404, errorBody('metrics are off', 'invalid_request_error', 'not_found'));
  const text = await m.registry.metrics();
  res.writeHead(200, { 'content-type': m.registry.contentType, 'x-content-type-options': 'nosniff' });
  res.end(text);
}
