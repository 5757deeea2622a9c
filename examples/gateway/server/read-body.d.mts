// Types of the gateway's body reading (read-body.mjs), for the TypeScript that imports it (its tests).
import type { Readable } from 'node:stream';

/** A body's pieces, kept as they come and joined at its end; small pieces copied together into a room of 16 KiB. */
export declare class Pieces {
  /** Bytes kept. */
  readonly length: number;
  keep(piece: Buffer): void;
  /** The body kept, as one Buffer; then nothing is kept. */
  take(): Buffer;
  clear(): void;
}

/**
 * A stream's body up to `limit` bytes: null past it, false when `hold` said the budget is spent.
 * `drain`: read the rest without keeping it; `scan`: where the body ends (jsonObjectEnd()).
 */
export declare function readBody(stream: Readable, limit: number, drain?: boolean, hold?: (bytes: number) => boolean, scan?: (piece: Buffer) => number): Promise<Buffer | null | false>;

/** Whether `b` begins with UTF-8's byte order mark. */
export declare function startsWithBom(b: Uint8Array): boolean;

/** Where a JSON object ends in a body read piece by piece (after white space and a BOM at its start): the index after its closing brace in the piece, or -1. */
export declare function jsonObjectEnd(): (piece: Buffer) => number;
