// Types of the reference gateway (server.mjs), for the TypeScript that imports it (its tests).
import type { Server, IncomingHttpHeaders } from 'node:http';
import type { Registry } from 'prom-client';
import type { ModelFormat } from 'seam-stream';

export type UpstreamFormat = ModelFormat;

export interface GatewayOptions {
  /** The upstream's base URL. */
  upstream: string;
  /** @defaultValue 'openai' */
  upstreamFormat?: UpstreamFormat;
  /**
   * The field an Anthropic client's `max_tokens` is written in for an `openai` upstream (`max_tokens`
   * for a server that knows only that one). @defaultValue 'max_completion_tokens'
   */
  openaiMaxTokensField?: 'max_completion_tokens' | 'max_tokens';
  /**
   * The `max_tokens` of a request that names none, to an upstream whose API needs one (`anthropic`,
   * `bedrock-invoke`). @defaultValue 4096
   */
  anthropicMaxTokens?: number;
  /**
   * The reasoning summary asked of an `openai-responses` upstream when a client asks to see the
   * reasoning (`none` for an organization OpenAI has not verified). @defaultValue 'auto'
   */
  responsesSummary?: 'auto' | 'concise' | 'detailed' | 'none';
  /** Seconds of upstream silence before a `: keep-alive` comment (0: never). @defaultValue 15 */
  keepalive?: number;
  /** Streams open at once (a positive integer: 0 is refused at start, as for every byte limit below but highWaterMark). @defaultValue 1024 */
  maxStreams?: number;
  /** @defaultValue 64 MiB */
  maxPendingBytes?: number;
  /** At most 512 MiB. @defaultValue 1 MiB */
  maxEventBytes?: number;
  /** @defaultValue 1 MiB */
  maxRequestBytes?: number;
  /** A whole answer's text, its reasoning, and its tool calls' arguments, each; the sources a streamed answer's relay keeps until its completion. @defaultValue 8 MiB */
  maxResponseBytes?: number;
  /** A client's write buffer (0: none, the upstream read pauses after each write). @defaultValue 64 KiB */
  highWaterMark?: number;
  /** Milliseconds for the upstream's headers (more than 0). @defaultValue 60000 */
  upstreamTimeout?: number;
  /** Milliseconds without progress from the upstream after its headers: no event that carries a part of the answer, only keep-alives (the gateway's or the upstream's) or empty events (`{}`, an envelope alone; nor the time its read is paused for a client that does not read). @defaultValue 300000 */
  bodyTimeout?: number;
  /** Milliseconds for the client's request to arrive, and for a client to take some of its answer. @defaultValue 30000 */
  clientTimeout?: number;
  /** Milliseconds a request's head has to arrive (within clientTimeout); past it, a 408. @defaultValue 10000 */
  headTimeout?: number;
  /** Milliseconds a request's body has from its head, plus a second for each minRequestRate bytes of it that came (within clientTimeout in all); past it, a 408. @defaultValue 5000 */
  requestBodyTimeout?: number;
  /** Bytes a second a client behind on its answer must take of it, over each clientTimeout (0: only one that takes none is dropped). @defaultValue 1024 */
  minResponseRate?: number;
  /** Bytes a second a request's body must keep up past requestBodyTimeout (0: none, the body has requestBodyTimeout in all). @defaultValue 16384 */
  minRequestRate?: number;
  /** Milliseconds a stream may live (each timeout must be more than 0, and at most 2^31 - 1). @defaultValue 3600000 */
  maxDuration?: number;
  /**
   * Milliseconds close() lets the streams in flight finish (new requests refused, 503), past which
   * each ends with its error event (ERR_SHUTTING_DOWN) and its upstream is closed (0: at once). @defaultValue 10000
   */
  drainTimeout?: number;
  /** Keys a client must present (`authorization: Bearer KEY` or `x-api-key`). @defaultValue [] */
  apiKeys?: string[];
  /** The gateway's own key for its upstream (with apiKeys, the client's is never forwarded). */
  upstreamKey?: string;
  /** Listen beyond loopback without apiKeys. @defaultValue false */
  allowNoKeys?: boolean;
  /** Connections open at once (0: no cap). @defaultValue 4096 */
  maxConnections?: number;
  /** Connections open at once from one address (0: no cap). @defaultValue 256 */
  maxConnectionsPerAddress?: number;
  /** Serve /metrics on a listener of its own (0: a free port), not on the API's; it has the API's headTimeout and clientTimeout for a request to arrive, and takes 16 connections at once. */
  metricsPort?: number;
  /** @defaultValue '127.0.0.1' */
  metricsHost?: string;
  /** Where log lines go (the detail of a 5xx under its request id, warnings). @defaultValue a line to stderr */
  log?: (line: string) => void;
  /** @defaultValue true */
  metrics?: boolean;
}

export interface Gateway {
  readonly server: Server;
  /** The metrics listener (with metricsPort), else null. */
  readonly metricsServer: Server | null;
  /** Its URL once listening, else null. */
  readonly metricsUrl: string | null;
  readonly options: Required<GatewayOptions>;
  readonly registry: Registry | null;
  stats(): { streams: number; pendingBytes: number; coreBytes: number; connections: number };
  listen(port?: number, host?: string): Promise<string>;
  /**
   * Drains the gateway: the listener closes and new requests are refused; the streams in flight
   * go on up to drainTimeout, then end with their error event. Resolves once every stream and
   * connection is closed (the same promise however often it is called).
   */
  close(): Promise<void>;
}

export const DEFAULTS: Readonly<Omit<Required<GatewayOptions>, 'upstream'> & { upstream: undefined }>;
export function createGateway(options: GatewayOptions): Gateway;
/** The client's API: `openai` (Chat Completions, `/v1/chat/completions`) or `anthropic` (Messages, `/v1/messages`). */
export type ClientDialect = 'openai' | 'anthropic';
/** A client's request as the upstream's (requests/index.mjs); a RequestError when it holds what the upstream has no word for. */
export function upstreamRequest(format: UpstreamFormat, base: string, body: Record<string, unknown>, headers: IncomingHttpHeaders, dialect?: ClientDialect,
  env?: Record<string, string | undefined>, choices?: { openaiMaxTokensField?: 'max_completion_tokens' | 'max_tokens'; anthropicMaxTokens?: number; responsesSummary?: 'auto' | 'concise' | 'detailed' | 'none' }): {
  protocol: string; hostname: string; port: number; path: string; headers: Record<string, string>; payload: Record<string, unknown>;
};
/** An Anthropic Messages request in OpenAI Chat's form (the middle form of the translation). */
export function chatFromMessages(body: Record<string, unknown>, format?: string): Record<string, unknown>;
export class RequestError extends Error {}
/** What the gateway's configuration lacks for a request (a bedrock upstream's AWS credentials or region): a 500 that names it. */
export class GatewayConfigError extends Error {}
/** Whether a host is the loopback interface only (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean;
export function parseArgs(argv: string[], env?: Record<string, string | undefined>): { help: true } | { port: number; host: string; options: Partial<GatewayOptions> };
