// Types of the gateway's stream (stream.mjs), for the TypeScript that imports it (its tests): the
// part of it they call.
import type { Readable } from 'node:stream';

/** One client request and its upstream request. */
export declare class Stream {
  /** The upstream's error body (up to 64 KiB), or null: none to pass on. */
  errorBody(upRes: Readable & { statusCode: number }): Promise<Buffer | null>;
}
