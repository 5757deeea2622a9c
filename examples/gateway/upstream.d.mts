// Types of the gateway's upstream client (upstream.mjs), for the TypeScript that imports it (its tests).
import type { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** The most bytes a response's status line and headers may take (64 KiB). */
export declare const MAX_HEAD_BYTES: number;

/** The most header fields in a response head, and in its trailers (100). */
export declare const MAX_HEADERS: number;
/** The most bytes of one chunk's extensions (4 KiB). */
export declare const MAX_CHUNK_EXTENSION_BYTES: number;
/** The most bytes of a chunked body's trailer section (16 KiB). */
export declare const MAX_TRAILER_BYTES: number;
/** Whether every character is a byte HTTP allows in a field value (HTAB, 0x20–0x7E, 0x80–0xFF). */
export declare function isFieldValue(value: string): boolean;

/** An upstream that broke the HTTP/1.1 framing (its head or its chunks). */
export declare class UpstreamProtocolError extends Error {
  readonly code: 'ERR_UPSTREAM_PROTOCOL';
  /** From the chunked decoder: the bytes of the read before the fault. */
  payload?: Uint8Array;
}

/** `Transfer-Encoding: chunked` taken out of a body read by read, in place. */
export declare class ChunkedDecoder {
  /** Whether the last chunk and its trailers were read (and no fault came before). */
  readonly done: boolean;
  /** The read's payload, moved to its start: a view of `buf` itself. Throws UpstreamProtocolError. */
  decode(buf: Uint8Array): Uint8Array;
}

/** The upstream's answer: the part of http.IncomingMessage the gateway uses. */
export declare class UpstreamResponse extends EventEmitter {
  readonly statusCode: number;
  /** Lower-case names; repeated headers joined with ", ". */
  readonly headers: Record<string, string>;
  readonly destroyed: boolean;
  readonly readableLength: number;
  pause(): this;
  resume(): this;
  destroy(): this;
}

export interface UpstreamRequestOptions {
  /** @defaultValue 'http:' */
  protocol?: 'http:' | 'https:';
  hostname: string;
  port: number;
  /** The path and query. */
  path: string;
  headers: Record<string, string | number>;
  body: Uint8Array;
  /** TLS: the name the certificate is checked against (the hostname unless an IP address). */
  servername?: string;
  /** TLS: the CAs to trust instead of Node's. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Opens the connection instead of net/tls (a tunnel, or a test's stream in memory). */
  createConnection?: () => Duplex;
}

export interface UpstreamRequest {
  readonly destroyed: boolean;
  readonly socket: Socket | Duplex;
  /** The answer once its status and headers arrived. */
  readonly response: Promise<UpstreamResponse>;
  destroy(err?: Error): void;
}

/** Sends a POST with `connection: close` over TCP or TLS. */
export declare function requestUpstream(options: UpstreamRequestOptions): UpstreamRequest;
