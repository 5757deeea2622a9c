// The gateway's options: every option of createGateway with its default (DEFAULTS), and their
// check (optionsOf: a TypeError that names the option, or the options whole, defaults filled in).
import { MAX_LIMIT_BYTES, MODEL_FORMATS } from 'seam-stream';
import { SETTINGS } from '../requests/index.mjs';

export const KiB = 1024;
export const MiB = 1024 * KiB;
/** The longest timeout (ms) Node's timers take: 2^31 - 1, 24.8 days. */
const MAX_TIMER = 2 ** 31 - 1;

/** Every option of createGateway, with its default. Each buffer the gateway holds has a limit here. */
export const DEFAULTS = Object.freeze({
  /** The upstream's base URL (required), e.g. `http://127.0.0.1:11434`. */
  upstream: undefined,
  /** The upstream's format: one of the library's MODEL_FORMATS. */
  upstreamFormat: 'openai',
  /**
   * The field an Anthropic client's `max_tokens` is written in for an `openai` upstream:
   * `max_completion_tokens` (Chat's current word, the only one OpenAI's reasoning models take), or
   * `max_tokens`, for an OpenAI-compatible server that knows only that one (DeepSeek's API, Ollama's
   * /v1) and would ignore the other. A Chat client's own request passes with the word it chose.
   */
  openaiMaxTokensField: SETTINGS.openaiMaxTokensField,
  /**
   * The `max_tokens` written for a request that names no bound (an OpenAI client's: Chat's is
   * optional) to an upstream whose API needs one (`anthropic`, `bedrock-invoke`): 4096, the least
   * any Claude model takes as its most (Claude 3 Haiku's and Opus'), where a higher one is refused by
   * the models that take less; raise it for the models that take more (Claude 4's 32,000 and up).
   */
  anthropicMaxTokens: SETTINGS.anthropicMaxTokens,
  /**
   * The reasoning summary asked of an `openai-responses` upstream when a client asks to see the
   * reasoning (an Anthropic client's thinking, which Claude Code asks on every turn): `auto`,
   * `concise`, `detailed`, or `none`, for an organization OpenAI has not verified, whose requests
   * for a summary it refuses with a 400.
   */
  responsesSummary: SETTINGS.responsesSummary,
  /** Seconds of upstream silence after which the gateway writes `: keep-alive` (fractions accepted; 0: never). */
  keepalive: 15,
  /** Streams open at once; past it a request is answered 503 (each limit below must be more than 0, but highWaterMark, maxConnections and maxConnectionsPerAddress, whose 0 is none). */
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
  /**
   * A whole answer (`stream: false`: its text, its reasoning, and its tool calls' arguments, each),
   * the sources a streamed answer's relay keeps until its completion (to write them as an OpenAI
   * client's annotations), and an upstream's error body (64 KiB of which are read).
   */
  maxResponseBytes: 8 * MiB,
  /**
   * The client's write buffer past which the upstream read pauses (the response's high-water
   * mark); a stream holds at most this plus one relayed burst (the upstream reads of one tick).
   */
  highWaterMark: 64 * KiB,
  /** Milliseconds to wait for the upstream's response headers (more than 0). */
  upstreamTimeout: 60_000,
  /**
   * Milliseconds without progress from the upstream after its headers past which the stream ends
   * with an error event (ERR_UPSTREAM_BODY_TIMEOUT, in the client's format) and the upstream
   * connection is closed. Progress is an event that is not a keep-alive (a whole answer's or an
   * error body's bytes, which are no events): the gateway's own keep-alive comments are none, nor
   * are the upstream's (SSE comments, empty events, Anthropic's pings), nor part of an event. While the upstream read is
   * paused for a client that does not take its answer, the upstream is not silent: the gateway is
   * not reading it (a client that takes nothing is dropped after clientTimeout; one that takes its
   * answer slowly holds the upstream open up to maxDuration).
   */
  bodyTimeout: 300_000,
  /**
   * Milliseconds for a client's request (head and body) to arrive, and for a client whose answer
   * waits in the gateway's write buffer to take some of it: past it, the client is dropped.
   */
  clientTimeout: 30_000,
  /**
   * Milliseconds a request's head has to arrive, from its connection's start (or the answer before
   * it on a kept-alive one), within clientTimeout: a client that trickles its head (slowloris), or
   * opens a connection and sends nothing, holds it only that long, not clientTimeout. Past it, a
   * 408 (ERR_REQUEST_TIMEOUT) and the connection closed.
   */
  headTimeout: 10_000,
  /**
   * Milliseconds a request's body has to arrive from the moment its head came, plus a second for
   * each `minRequestRate` bytes of it that came (as Apache's mod_reqtimeout has it): a client that
   * trickles its body gives its stream's slot back then, not at clientTimeout, which bounds the
   * request in all. Past it, a 408 (ERR_REQUEST_TIMEOUT) and the connection closed.
   */
  requestBodyTimeout: 5_000,
  /**
   * Bytes a second a client must take of its answer while the gateway's buffer holds some of it,
   * over each clientTimeout (0: only a client that takes none of it for clientTimeout is dropped).
   * A client that reads a byte now and then held its stream, its slot and its upstream request
   * until maxDuration; past it, the client is dropped (ERR_CLIENT_TIMEOUT) and its upstream closed.
   */
  minResponseRate: 1024,
  /** Bytes a second of a request's body that extend requestBodyTimeout (0: none, the body has requestBodyTimeout in all). */
  minRequestRate: 16 * KiB,
  /** Milliseconds a stream may live, from its request to its end. */
  maxDuration: 3_600_000,
  /**
   * Milliseconds close() (and the command's SIGTERM or SIGINT) lets the streams in flight finish,
   * while new requests are refused; past it each ends with its error event (ERR_SHUTTING_DOWN) and
   * its upstream is closed. 0: at once.
   */
  drainTimeout: 10_000,
  /** Keys a client must present (`authorization: Bearer KEY` or `x-api-key: KEY`); none: the gateway asks for none. */
  apiKeys: [],
  /**
   * The gateway's own key for its upstream, sent in the header its format uses (bearer; `x-api-key`
   * for anthropic). Without it and without apiKeys, the client's bearer goes to the upstream as it
   * is; with apiKeys, the client's credential never leaves the gateway.
   */
  upstreamKey: undefined,
  /** Listen beyond loopback without apiKeys (refused otherwise: `listen()` rejects). */
  allowNoKeys: false,
  /** Connections open at once (past it a new one is answered 503 and closed; 0: no cap). */
  maxConnections: 4096,
  /** Connections open at once from one client address (0: no cap; behind a proxy every client has its address). */
  maxConnectionsPerAddress: 256,
  /**
   * Serve `GET /metrics` on a listener of its own at this port (0: a free one), on `metricsHost`,
   * and not on the API's. Without it, /metrics is on the API's listener, behind the apiKeys if any.
   */
  metricsPort: undefined,
  metricsHost: '127.0.0.1',
  /** Where the gateway's log lines go (the detail of a 5xx under its request id, warnings): a function of one line. */
  log: undefined,
  /** Serve `GET /metrics` and count (false: no prom-client calls at all, for measuring their cost). */
  metrics: true,
});

/** createGateway's options checked, with DEFAULTS' where not given (or given as undefined). */
export function optionsOf(options) {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new TypeError('createGateway: its options must be an object');
  for (const k of Object.keys(options)) if (!(k in DEFAULTS)) throw new TypeError(`createGateway: unknown option ${k}`);
  const o = { ...DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) };
  if (typeof o.upstream !== 'string') throw new TypeError('createGateway: upstream (the base URL) is required');
  // (the URL's scheme and the rest are createGateway's to check; here, that it is a URL, said with
  // the option's name, not URL's "Invalid URL", and without its text, which may hold a key)
  if (!URL.canParse(o.upstream)) throw new TypeError('createGateway: upstream must be an absolute http: or https: URL');
  // (a switch of another type is refused, not read as its truthiness: `allowNoKeys: 'false'` let the
  // gateway listen beyond loopback without keys, `metrics: 'no'` counted on)
  for (const k of ['allowNoKeys', 'metrics']) if (typeof o[k] !== 'boolean') throw new TypeError(`createGateway: ${k} must be true or false`);
  if (o.log !== undefined && typeof o.log !== 'function') throw new TypeError('createGateway: log must be a function of one line');
  if (typeof o.metricsHost !== 'string' || o.metricsHost === '') throw new TypeError('createGateway: metricsHost must be a host name or address');
  if (!MODEL_FORMATS.includes(o.upstreamFormat)) throw new TypeError(`createGateway: upstreamFormat must be one of ${MODEL_FORMATS.join(', ')}`);
  if (!Number.isInteger(o.anthropicMaxTokens) || o.anthropicMaxTokens < 1) throw new TypeError('createGateway: anthropicMaxTokens must be a positive integer');
  if (!['auto', 'concise', 'detailed', 'none'].includes(o.responsesSummary)) throw new TypeError('createGateway: responsesSummary must be auto, concise, detailed or none');
  if (o.openaiMaxTokensField !== 'max_completion_tokens' && o.openaiMaxTokensField !== 'max_tokens') {
    throw new TypeError('createGateway: openaiMaxTokensField must be max_completion_tokens or max_tokens');
  }
  // 0 where it means none (a keep-alive never, no connection cap, a write buffer of none: the read
  // pauses after each write); a limit whose 0 would refuse every request, or fail each one, is refused here
  if (typeof o.keepalive !== 'number' || !(o.keepalive >= 0) || !Number.isFinite(o.keepalive)) throw new TypeError('createGateway: keepalive must be a non-negative number of seconds (0: never)');
  for (const k of ['highWaterMark', 'maxConnections', 'maxConnectionsPerAddress', 'minRequestRate', 'minResponseRate']) {
    if (!Number.isSafeInteger(o[k]) || o[k] < 0) throw new TypeError(`createGateway: ${k} must be a non-negative integer${k === 'highWaterMark' ? '' : k.startsWith('min') ? ' (0: none)' : ' (0: no cap)'}`);
  }
  for (const k of ['maxStreams', 'maxPendingBytes', 'maxRequestBytes', 'maxResponseBytes']) {
    if (!Number.isSafeInteger(o[k]) || o[k] < 1) throw new TypeError(`createGateway: ${k} must be a positive integer`);
  }
  // (the relay's own bound: one buffer of the core holds at most MAX_LIMIT_BYTES, 512 MiB)
  if (!Number.isInteger(o.maxEventBytes) || o.maxEventBytes < 1 || o.maxEventBytes > MAX_LIMIT_BYTES) {
    throw new TypeError(`createGateway: maxEventBytes must be an integer from 1 to ${MAX_LIMIT_BYTES} (${MAX_LIMIT_BYTES / MiB} MiB)`);
  }
  // (Node's timers take at most 2^31 - 1 ms, 24.8 days, and fire after 1 ms past it: a timeout
  // of 2^31 ms meant to be "never" failed every request at once)
  for (const k of ['upstreamTimeout', 'bodyTimeout', 'clientTimeout', 'headTimeout', 'requestBodyTimeout', 'maxDuration']) {
    if (typeof o[k] !== 'number' || !(o[k] > 0) || !(o[k] <= MAX_TIMER)) throw new TypeError(`createGateway: ${k} must be a positive number of milliseconds, at most ${MAX_TIMER}`);
  }
  if (typeof o.drainTimeout !== 'number' || !(o.drainTimeout >= 0) || !(o.drainTimeout <= MAX_TIMER)) {
    throw new TypeError(`createGateway: drainTimeout must be a non-negative number of milliseconds, at most ${MAX_TIMER} (0: no drain)`);
  }
  // (Node's server takes them as its requestTimeout and headersTimeout, which must be whole)
  for (const k of ['clientTimeout', 'headTimeout']) if (!Number.isInteger(o[k])) throw new TypeError(`createGateway: ${k} must be a whole number of milliseconds`);
  if (!Array.isArray(o.apiKeys) || o.apiKeys.some((k) => typeof k !== 'string' || !/^[\x21-\x7e]+$/.test(k))) {
    throw new TypeError('createGateway: apiKeys must be strings of visible ASCII');
  }
  if (o.upstreamKey !== undefined && (typeof o.upstreamKey !== 'string' || !/^[\x21-\x7e]+$/.test(o.upstreamKey))) {
    throw new TypeError('createGateway: upstreamKey must be a string of visible ASCII');
  }
  if (o.metricsPort !== undefined && !(Number.isInteger(o.metricsPort) && o.metricsPort >= 0 && o.metricsPort <= 65535)) {
    throw new TypeError('createGateway: metricsPort must be 0..65535');
  }
  return o;
}
