// Web TransformStreams over the decoders, what every layer's streams share: the base class, how an
// error errors the stream after the output it carries was enqueued (the output a decoder's error
// carries, `text`, `lines` or `events`, is never lost), the per-item and batch transformers; and
// a reader loop over a ReadableStream.
//
// The per-item streams enqueue one item (line, event) at a time, as the contract says; every item
// then costs the stream machinery a queue entry and its reader a promise. The batch streams
// enqueue each push's output as one array, so a read costs what a call of `push` does
// (bench/streams.ts measures both against a reader loop over `push`).

import { bufferBytes } from './wasm.js';

/**
 * What the streams take, as the platform's byte streams (TextDecoderStream, CompressionStream) take
 * any BufferSource: an ArrayBuffer, a SharedArrayBuffer, or a view of one.
 */
export type ByteChunk = ArrayBufferLike | ArrayBufferView;

/**
 * A chunk written to a stream as the decoders take it: its bytes (`bufferBytes`: a detached buffer
 * is none), or the chunk as it is when it is not bytes, for the decoder's own TypeError.
 */
export const chunkBytes = (chunk: ByteChunk): Uint8Array => (chunk instanceof Uint8Array && chunk.length !== 0 ? chunk : (bufferBytes(chunk) ?? chunk) as Uint8Array);

/**
 * The base of every stream of seam: a TransformStream whose transformer's `cancel` runs when the
 * readable side is cancelled (a client that leaves) or the writable side aborted (an upstream body
 * that errors), on every runtime. Node, Bun, Deno and workerd call it, as the Streams standard has
 * said since 2023; Chromium 156 and Firefox 153 ESR call it for neither (test/browser). There, the
 * stream's two sides are the inner TransformStream's behind a ReadableStream and a WritableStream
 * of seam's, whose cancel and abort call the transformer's `cancel` (once) in the standard's order:
 * a decoder's memory goes back, a relay writes its end, `ModelTextStream.report` settles. (One more
 * hop per chunk, in those browsers only.)
 */
// (made by a pure call, not a class statement: a bundler keeps a class that extends a global, which
// could throw, even when nothing uses it)
export const Transform: typeof TransformStream = /* @__PURE__ */ (() => class Transform<I, O> extends TransformStream<I, O> {
  constructor(transformer?: Transformer<I, O>, writableStrategy?: QueuingStrategy<I>, readableStrategy?: QueuingStrategy<O>) {
    const t = transformer as Owned<I, O> | undefined;
    const cancel = t?.cancel;
    if (t === undefined || cancel === undefined) {
      super(transformer, writableStrategy, readableStrategy);
      return;
    }
    // Once the writable side has begun to close (flush), nothing cancels the stream: the standard's
    // order, which seam's sides keep by this flag (a reader that leaves after the end is not an error).
    let ran = false;
    let result: void | PromiseLike<void>;
    /** The transformer's cancel, once: the runtime calls it, or seam's sides. */
    const once = (reason: unknown): void | PromiseLike<void> => {
      if (ran) return result;
      ran = true;
      return (result = cancel.call(t, reason));
    };
    // (the inner stream gets no cancel when seam's sides call it: a runtime that began calling it
    // would otherwise call it from inside theirs)
    const own = !runtimeCallsCancel();
    let inner: TransformStreamDefaultController<O> | null = null;
    super({
      start: (controller: TransformStreamDefaultController<O>) => {
        inner = controller;
        return t.start?.call(t, controller);
      },
      transform: t.transform, // (owning's: no `this`; the chunk's path stays one call)
      flush: (controller: TransformStreamDefaultController<O>) => {
        ran = true;
        return t.flush?.call(t, controller);
      },
      cancel: own ? undefined : once,
    } as Transformer<I, O>, writableStrategy, readableStrategy);
    if (own) sides(this, once, inner!);
  }
})();

/** Whether this runtime calls a transformer's `cancel`: probed once (a cancelled readable side calls it in the same call). */
let callsCancel: boolean | undefined;

function runtimeCallsCancel(): boolean {
  if (callsCancel === undefined) {
    let called = false;
    try {
      const probe = new TransformStream({ cancel() { called = true; } } as Transformer);
      probe.readable.cancel().catch(() => {});
    } catch {
      // (no TransformStream to probe: nothing to wrap either)
    }
    callsCancel = called;
  }
  return callsCancel;
}

/** @internal For tests: take a runtime that calls a transformer's cancel (true) or one that does not (false); undefined probes again. */
export function setCallsCancel(value: boolean | undefined): void {
  callsCancel = value;
}

/**
 * Puts seam's two sides in front of `stream`'s, for a runtime that does not call a transformer's
 * cancel, in the standard's order:
 * - a cancel of the readable side cancels the inner one, runs `cancel`, then errors the writable
 *   side (so that a pipe cancels its source) with the reason, or with `cancel`'s own error;
 * - an abort of the writable side (from the moment it is asked: a write held back by the reader
 *   is not transformed, as the standard's abort drops it) runs `cancel`, then errors the inner
 *   stream with the reason unless the cancel ended it (a relay's end, which the reader must get),
 *   or with `cancel`'s own error;
 * - the readable side closes or errors when the inner one does, not at the next read;
 * - the writable side errors when the inner one does (the stream terminated or failed).
 */
function sides<I, O>(stream: TransformStream<I, O>, cancel: (reason: unknown) => void | PromiseLike<void>, inner: TransformStreamDefaultController<O>): void {
  const r = stream.readable.getReader();
  const w = stream.writable.getWriter();
  let writing: WritableStreamDefaultController | null = null;
  let aborting: Promise<void> | null = null;
  /** The readable side is being cancelled: its cancel errors the writable side itself, after `cancel`. */
  let cancelling = false;
  const abort = (reason: unknown): Promise<void> => (aborting ??= (async () => {
    try {
      await cancel(reason);
    } catch (err) {
      inner.error(err);
      throw err;
    }
    if (w.desiredSize !== null) inner.error(reason);
  })());
  const writable = new WritableStream<I>({
    start(controller) {
      writing = controller;
      // (the signal fires when the abort is asked, before a write in flight settles)
      const signal = (controller as { signal?: AbortSignal }).signal;
      signal?.addEventListener('abort', () => { abort(signal.reason).catch(() => {}); }, { once: true });
    },
    write: (chunk) => w.write(chunk),
    close: () => w.close(),
    abort,
  }, { highWaterMark: 1 });
  let pulled: Promise<void> = Promise.resolve();
  const readable = new ReadableStream<O>({
    start(controller) {
      const close = () => { try { controller.close(); } catch { /* (closed or cancelled already) */ } };
      // (after the read in flight: the inner side closes as its last chunk is read, before that read's answer)
      r.closed.then(() => pulled.then(close, close), (err) => { try { controller.error(err); } catch { /* (done already) */ } });
    },
    pull: (controller) => (pulled = r.read().then((x) => { if (!x.done) controller.enqueue(x.value); })),
    async cancel(reason) {
      cancelling = true;
      try {
        await r.cancel(reason);
      } catch {
        // (Node 20 throws here, at once, for a stream its transformer terminated with a chunk queued)
      }
      let err = reason;
      try {
        await cancel(reason);
      } catch (e) {
        err = e;
        throw e;
      } finally {
        writing?.error(err);
      }
    },
  }, { highWaterMark: 0 });
  // (the inner writable side errored, its transformer having terminated the stream (a relay's end
  // at the upstream's completion or failure) or thrown: seam's errors too, as a TransformStream's
  // own does, so that a pipe cancels its source rather than writing, closing or aborting on; not
  // for a cancel of the readable side, which errors the inner one with its reason: that cancel
  // errors the writable side after `cancel`, with `cancel`'s own error if it fails)
  w.closed.then(undefined, (err) => { if (!cancelling) writing?.error(err); });
  Object.defineProperty(stream, 'readable', { value: readable });
  Object.defineProperty(stream, 'writable', { value: writable });
}

/**
 * A transformer over a decoder the stream owns, whose memory (its record and buffers in the core)
 * goes back when the stream is done with it: after its end (`flush`), after an error (a push that
 * threw: what its error carries was taken first), and when the readable side is cancelled or the
 * writable side aborted (a client that leaves, an upstream body that errors), through the
 * transformer's `cancel`. A gateway ends thousands of streams between two collections, and a
 * client that leaves mid-stream must not hold a stream's buffers until one (`Transform` makes
 * sure `cancel` is called where the runtime would not).
 */
export function owning<I, O>(t: Owned<I, O>, dispose: () => void): Transformer<I, O> {
  const transform = t.transform, flush = t.flush, cancel = t.cancel;
  return {
    start: t.start,
    transform(chunk, controller) {
      try {
        const r = transform(chunk, controller);
        if (r !== undefined) dispose(); // (a push that threw: `failed` errors the stream with its error)
        return r;
      } catch (err) {
        dispose();
        throw err;
      }
    },
    flush(controller) {
      try {
        return flush?.(controller);
      } finally {
        dispose();
      }
    },
    cancel(reason: unknown) {
      // (the stream's own cancel first: a relay writes its end there, from the decoder's state)
      try {
        return cancel?.(reason);
      } finally {
        dispose();
      }
    },
  } as Transformer<I, O>;
}

/**
 * A transformer `owning` wraps: its calls return nothing when they succeed, and `failed`'s promise
 * (or throw) when a push threw, which is how `owning` tells a failed call from a good one (a call
 * that returned any other promise would not type). `cancel` is the Streams standard's (TypeScript's
 * DOM types of this version do not have it).
 */
export type Owned<I, O> = {
  start?(controller: TransformStreamDefaultController<O>): void;
  transform(chunk: I, controller: TransformStreamDefaultController<O>): void | Promise<never>;
  flush?(controller: TransformStreamDefaultController<O>): void | Promise<never>;
  cancel?(reason: unknown): void | PromiseLike<void>;
};

/**
 * After a push threw: enqueues the output its error carries (`carried`), then errors the stream,
 * but only once the reader has taken what was enqueued: erroring a ReadableStream drops the chunks
 * still queued in it. (A reader with a read pending takes a chunk at once; the rest wait in the
 * queue until it reads again.)
 */
export function failed<O>(controller: TransformStreamDefaultController<O>, err: unknown, carried: O[]): void | Promise<never> {
  for (const x of carried) controller.enqueue(x);
  if (controller.desiredSize === null || controller.desiredSize >= 0) throw err;
  return afterDrain(controller, err);
}

/** Rejects with `err` once the readable side's queue is empty (or the stream has ended). */
function afterDrain<T>(controller: TransformStreamDefaultController<T>, err: unknown): Promise<never> {
  return drained(controller).then(() => { throw err; });
}

/** Resolves once the readable side's queue is empty (or the stream has ended or errored). */
export function drained<T>(controller: TransformStreamDefaultController<T>): Promise<void> {
  return new Promise<void>((resolve) => {
    // (the ends' paths only: there is no event for "the reader took it". The wait doubles from 1 ms
    // to 64 ms, so that a reader that reads at once gets what follows at once, and one that has gone
    // idle costs a timer every 64 ms, not every millisecond, until it reads or cancels. The timer
    // keeps a process alive, as the stream's reader waiting on it must: a body abandoned without a
    // cancel holds its stream, the decoder's memory already given back, until it is cancelled)
    let wait = 1;
    const check = () => {
      const size = controller.desiredSize;
      if (size === null || size >= 0) return resolve();
      setTimeout(check, wait);
      if (wait < 64) wait *= 2;
    };
    check();
  });
}

/** The output a decoder's error carries: its `lines` or `events`, or its `text`. */
export const listOn = <T>(err: unknown, name: 'lines' | 'events'): T[] => {
  const v = (err as Record<string, unknown> | null)?.[name];
  return Array.isArray(v) ? (v as T[]) : [];
};
export const textOn = (err: unknown): string[] => {
  const t = (err as { text?: unknown } | null)?.text;
  return typeof t === 'string' && t !== '' ? [t] : [];
};

export type ListDecoder<T> = { push(chunk: Uint8Array): T[]; flush(): T[] };

/** A stream over a decoder whose push returns arrays: one chunk per item. */
export function perItem<T>(decoder: ListDecoder<T>, name: 'lines' | 'events'): Owned<ByteChunk, T> {
  const step = (out: T[], controller: TransformStreamDefaultController<T>): void => {
    for (let i = 0; i < out.length; i++) controller.enqueue(out[i]);
  };
  return {
    transform(chunk, controller) {
      let out: T[];
      try { out = decoder.push(chunkBytes(chunk)); } catch (err) { return failed(controller, err, listOn<T>(err, name)); }
      step(out, controller);
    },
    flush(controller) {
      let out: T[];
      try { out = decoder.flush(); } catch (err) { return failed(controller, err, listOn<T>(err, name)); }
      step(out, controller);
    },
  };
}

/** A stream over a decoder whose push returns arrays: one chunk per push that produced anything. */
export function batched<T>(decoder: ListDecoder<T>, name: 'lines' | 'events'): Owned<ByteChunk, T[]> {
  const carried = (err: unknown): T[][] => {
    const out = listOn<T>(err, name);
    return out.length === 0 ? [] : [out];
  };
  return {
    transform(chunk, controller) {
      let out: T[];
      try { out = decoder.push(chunkBytes(chunk)); } catch (err) { return failed(controller, err, carried(err)); }
      if (out.length !== 0) controller.enqueue(out);
    },
    flush(controller) {
      let out: T[];
      try { out = decoder.flush(); } catch (err) { return failed(controller, err, carried(err)); }
      if (out.length !== 0) controller.enqueue(out);
    },
  };
}

/**
 * The chunks of a ReadableStream as an async iterator, through a reader: `for await` directly over
 * a ReadableStream is not supported by every current browser (Safari). Leaving the loop early
 * (`break`, `return`, a throw) cancels the stream; an error of the stream is thrown by the loop.
 */
export async function* readChunks<T>(readable: ReadableStream<T>): AsyncGenerator<T, void, undefined> {
  const reader = readable.getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      yield value;
    }
  } catch (err) {
    finished = true;
    throw err;
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
