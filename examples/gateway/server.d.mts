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
  /** Seconds of upstream silence before a `: keep-alive` comment (0: never). @defaultValue 15 */
  keepalive?: number;
  /** @defaultValue 1024 */
  maxStreams?: number;
  /** @defaultValue 64 MiB */
  maxPendingBytes?: number;
  /** @defaultValue 1 MiB */
  maxEventBytes?: number;
  /** @defaultValue 1 MiB */
  maxRequestBytes?: number;
  /** @defaultValue 8 MiB */
  maxResponseBytes?: number;
  /** @defaultValue 64 KiB */
  highWaterMark?: number;
  /** @defaultValue 60000 */
  upstreamTimeout?: number;
  /** @defaultValue true */
  metrics?: boolean;
}

export interface Gateway {
  readonly server: Server;
  readonly options: Required<GatewayOptions>;
  readonly registry: Registry | null;
  stats(): { streams: number; pendingBytes: number; coreBytes: number };
  listen(port?: number, host?: string): Promise<string>;
  close(): Promise<void>;
}

export const DEFAULTS: Readonly<Omit<Required<GatewayOptions>, 'upstream'> & { upstream: undefined }>;
export function createGateway(options: GatewayOptions): Gateway;
export function upstreamRequest(format: UpstreamFormat, base: string, body: Record<string, unknown>, headers: IncomingHttpHeaders): {
  protocol: string; hostname: string; port: number; path: string; headers: Record<string, string>; payload: Record<string, unknown>;
};
export function parseArgs(argv: string[]): { help: true } | { port: number; options: Partial<GatewayOptions> };
