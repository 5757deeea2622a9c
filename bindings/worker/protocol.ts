// The messages between a page and seam's Worker (bindings/worker.ts), shared by the Worker and
// its client (bindings/worker-client.ts). Types only: nothing here runs.
import type { ModelFormat, ModelReport, ModelStreamOptions } from '../models/stream.js';
import type { SseEvent } from '../frames/types.js';
import type { SseParserOptions } from '../frames/sse.js';

/** What to decode in the Worker: a URL it fetches, or a stream of bytes transferred to it. */
export interface WorkerRequest {
  /** Fetched by the Worker with `init` (its `signal` is the Worker's own: use `cancel()`). */
  url?: string | URL;
  init?: Omit<RequestInit, 'signal' | 'window'>;
  /** Bytes the page already has (a `fetch` body, say): transferred to the Worker, not copied. */
  body?: ReadableStream<Uint8Array>;
  /** A model format (decoded by ModelStream), or `'sse'` for the events themselves (SseParser). */
  format: ModelFormat | 'sse';
  /** Options of the ModelStream (but `format`) or of the SseParser (but `onComment`). */
  options?: Omit<ModelStreamOptions, 'format'> | Omit<SseParserOptions, 'onComment'>;
  /**
   * Milliseconds the Worker gathers output for before posting it: the first output is posted at
   * once, then at most one message per interval. Default 16 (a frame at 60 Hz).
   */
  interval?: number;
}

/** One message of output: everything committed since the last one. */
export interface WorkerPart {
  /** Committed text (whole graphemes, NFC), for a model format; `''` for `'sse'`. */
  text: string;
  /** The events, for `'sse'`; empty for a model format. */
  events: SseEvent[];
  /** Bytes of the stream read so far. */
  bytesIn: number;
}

/** The end of a stream decoded by SseParser. */
export interface SseWorkerReport {
  status: 'done' | 'truncated';
  events: number;
  lastEventId: string;
  retry: number | undefined;
}

/** The end: ModelStream's report without its text (the page has it: the parts' text joined). */
export type WorkerReport = (Omit<ModelReport, 'text'> | SseWorkerReport) & { bytesIn: number };

/** An error, as structured clone carries it (class instances lose their class on the way). */
export interface WorkerErrorData {
  /** The class of the error in the Worker: `ModelStreamError`, `Utf8DecodeError`, `TypeError`… */
  name: string;
  /**
   * The error's code (ModelStreamError's, Utf8DecodeError's, SeamWasmError's…), or: `ERR_HTTP`
   * (a response that is not ok), `ERR_FETCH` (fetch itself failed), `ERR_ABORTED` (cancelled),
   * `ERR_WORKER` (anything else).
   */
  code: string;
  message: string;
  /** Absolute byte offset in the stream, where the error has one. */
  offset?: number;
  /** ModelStreamError's text committed by the call (already posted as a part). */
  text?: string;
  providerMessage?: string;
  /** With ERR_HTTP: the response's status. */
  status?: number;
}

export type ToWorker =
  | ({ type: 'start'; id: number } & Omit<WorkerRequest, 'url'> & { url?: string })
  | { type: 'cancel'; id: number };

export type FromWorker =
  | ({ type: 'part'; id: number } & WorkerPart)
  | { type: 'end'; id: number; report: WorkerReport }
  | { type: 'error'; id: number; error: WorkerErrorData };
