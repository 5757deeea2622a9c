// The page's side of seam's Worker (bindings/worker.ts): streamInWorker sends it a request and
// reads back what it posts as an async iterator, with its errors as typed errors again.
import { ModelStreamError, type ModelStreamErrorCode } from '../models/errors.js';
import type { FromWorker, ToWorker, WorkerErrorData, WorkerPart, WorkerReport, WorkerRequest } from './protocol.js';

export type { WorkerPart, WorkerReport, WorkerRequest, SseWorkerReport, WorkerErrorData } from './protocol.js';

/**
 * An error of a stream decoded in the Worker that is not a {@link ModelStreamError}: an HTTP
 * status (`ERR_HTTP`, with `status`), a failed fetch (`ERR_FETCH`), a cancel (`ERR_ABORTED`), the
 * Worker failing (`ERR_WORKER`), or a decoder's error, by its code (`ERR_INVALID_UTF8` with
 * `offset` from an SseParser, `ERR_WASM_BLOCKED`…); `errorName` is its class in the Worker.
 */
export class WorkerStreamError extends Error {
  readonly code: string;
  readonly offset: number | undefined;
  readonly status: number | undefined;
  readonly errorName: string;

  constructor(data: WorkerErrorData) {
    super(data.message);
    this.name = 'WorkerStreamError';
    this.code = data.code;
    this.offset = data.offset;
    this.status = data.status;
    this.errorName = data.name;
  }
}

/** The error the Worker described, as a ModelStreamError where it was one. */
function revive(data: WorkerErrorData): Error {
  if (data.name === 'ModelStreamError' && data.offset !== undefined) {
    const e = new ModelStreamError(data.code as ModelStreamErrorCode, data.offset, data.message, data.text ?? '', data.providerMessage, data.providerCode);
    if (data.status !== undefined) Object.assign(e, { status: data.status });
    return e;
  }
  return new WorkerStreamError(data);
}

/** A stream decoded in the Worker: its parts as an async iterator, its report, and cancel. */
export interface WorkerStream extends AsyncIterableIterator<WorkerPart> {
  /**
   * The final report once the stream ended (ModelStream's report without the text, or the SSE
   * counts); rejects with the stream's error.
   */
  readonly report: Promise<WorkerReport>;
  /** Stops the stream in the Worker (its fetch is aborted); the iterator then throws `ERR_ABORTED`. */
  cancel(): void;
}

let nextId = 1;

/**
 * Decodes a stream in `worker` (started from `seam-stream/worker`) and returns its parts as an
 * async iterator: each part is the text (or, with `format: 'sse'`, the events) committed since the
 * last, posted at most once per `interval` ms. The iterator throws the stream's error: a
 * {@link ModelStreamError} (code, offset, message, text) as ModelStream threw it, else a
 * {@link WorkerStreamError}. Leaving the loop early, `cancel()` or `signal` stop the stream in the
 * Worker; `worker.terminate()` stops everything (the iterator then waits forever: cancel first).
 * One Worker decodes any number of streams at once.
 */
export function streamInWorker(worker: Worker, request: WorkerRequest, options?: { signal?: AbortSignal }): WorkerStream {
  const id = nextId++;
  const parts: WorkerPart[] = [];
  let waiting: { resolve(r: IteratorResult<WorkerPart>): void; reject(e: unknown): void } | undefined;
  let ended = false;
  let returned = false;
  let error: Error | undefined;
  let settle!: { resolve(r: WorkerReport): void; reject(e: unknown): void };
  const report = new Promise<WorkerReport>((resolve, reject) => { settle = { resolve, reject }; });
  report.catch(() => {}); // an error is also thrown by the iterator: not unhandled when only that is read

  const finish = (err?: Error, r?: WorkerReport) => {
    if (ended) return;
    ended = true;
    error = err;
    worker.removeEventListener('message', onMessage);
    worker.removeEventListener('error', onError);
    options?.signal?.removeEventListener('abort', cancel);
    if (err) settle.reject(err);
    else settle.resolve(r!);
    if (waiting) {
      const w = waiting;
      waiting = undefined;
      if (err) w.reject(err);
      else w.resolve({ done: true, value: undefined });
    }
  };
  const onMessage = (e: MessageEvent<FromWorker>) => {
    const m = e.data;
    if (m?.id !== id) return;
    if (m.type === 'part') {
      const part: WorkerPart = { text: m.text, events: m.events, bytesIn: m.bytesIn };
      if (waiting) {
        const w = waiting;
        waiting = undefined;
        w.resolve({ done: false, value: part });
      } else parts.push(part);
    } else if (m.type === 'end') finish(undefined, m.report);
    else if (m.type === 'error') finish(revive(m.error));
  };
  const onError = (e: ErrorEvent) => {
    finish(new WorkerStreamError({ name: 'Error', code: 'ERR_WORKER', message: `seam worker: ${e.message || 'the Worker failed to load or run'}` }));
  };
  function cancel(): void {
    if (!ended) worker.postMessage({ type: 'cancel', id } satisfies ToWorker);
  }

  worker.addEventListener('message', onMessage);
  worker.addEventListener('error', onError);
  if (options?.signal?.aborted) queueMicrotask(cancel);
  options?.signal?.addEventListener('abort', cancel);
  const { body, url, ...rest } = request;
  const msg: ToWorker = { type: 'start', id, ...rest, body, url: url === undefined ? undefined : String(url) };
  worker.postMessage(msg, body ? [body as unknown as Transferable] : []);

  const it: WorkerStream = {
    report,
    cancel,
    next() {
      if (returned) return Promise.resolve({ done: true, value: undefined });
      if (parts.length > 0) return Promise.resolve({ done: false, value: parts.shift()! });
      if (ended) return error ? Promise.reject(error) : Promise.resolve({ done: true, value: undefined });
      return new Promise((resolve, reject) => { waiting = { resolve, reject }; });
    },
    return() {
      returned = true;
      cancel();
      parts.length = 0;
      return Promise.resolve({ done: true, value: undefined });
    },
    [Symbol.asyncIterator]() { return this; },
  };
  return it;
}
