// Web TransformStreams over the decoders: each takes the options of its decoder. An error (invalid
// UTF-8, a limit) errors the stream after what the decoder produced before it was enqueued: the
// output a decoder's error carries (`text`, `lines`, `events`) is never lost.
//
// The per-item streams (LineDecoderStream, SseDecoderStream) enqueue one line or event at a time,
// as the contract says; every item then costs the stream machinery a queue entry and its reader a
// promise. The batch streams enqueue each push's output as one array, so a read costs what a call
// of `push` does (bench/streams.ts measures both against a reader loop over `push`).
import { LineDecoder, type LineDecoderOptions } from './lines.js';
import { SseParser, type SseEvent, type SseParserOptions } from './sse.js';
import { Utf8Decoder, type Utf8DecoderOptions, asBytes } from './utf8.js';

// The global read through a pure call, not named in `extends`: a bundler drops a class that extends
// a local binding when nothing uses it, but keeps one that reads a global (which could throw).
const Transform: typeof TransformStream = /* @__PURE__ */ (() => TransformStream)();

/**
 * After a push threw: enqueues the output its error carries (`carried`), then errors the stream,
 * but only once the reader has taken what was enqueued: erroring a ReadableStream drops the chunks
 * still queued in it. (A reader with a read pending takes a chunk at once; the rest wait in the
 * queue until it reads again.)
 */
function failed<O>(controller: TransformStreamDefaultController<O>, err: unknown, carried: O[]): void | Promise<never> {
  for (const x of carried) controller.enqueue(x);
  if (controller.desiredSize === null || controller.desiredSize >= 0) throw err;
  return afterDrain(controller, err);
}

/** Rejects with `err` once the readable side's queue is empty (or the stream has ended). */
function afterDrain<T>(controller: TransformStreamDefaultController<T>, err: unknown): Promise<never> {
  return new Promise<never>((_, reject) => {
    const check = () => {
      const size = controller.desiredSize;
      if (size === null || size >= 0) reject(err);
      else setTimeout(check, 1); // the error path only: there is no event for "the reader took it"
    };
    check();
  });
}

/** The output a decoder's error carries: its `lines` or `events`, or its `text`. */
const listOn = <T>(err: unknown, name: 'lines' | 'events'): T[] => {
  const v = (err as Record<string, unknown> | null)?.[name];
  return Array.isArray(v) ? (v as T[]) : [];
};
const textOn = (err: unknown): string[] => {
  const t = (err as { text?: unknown } | null)?.text;
  return typeof t === 'string' && t !== '' ? [t] : [];
};

type ListDecoder<T> = { push(chunk: Uint8Array): T[]; flush(): T[] };

/** A stream over a decoder whose push returns arrays: one chunk per item. */
function perItem<T>(decoder: ListDecoder<T>, name: 'lines' | 'events'): Transformer<Uint8Array, T> {
  const step = (out: T[], controller: TransformStreamDefaultController<T>): void => {
    for (let i = 0; i < out.length; i++) controller.enqueue(out[i]);
  };
  return {
    transform(chunk, controller) {
      let out: T[];
      try { out = decoder.push(chunk); } catch (err) { return failed(controller, err, listOn<T>(err, name)); }
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
function batched<T>(decoder: ListDecoder<T>, name: 'lines' | 'events'): Transformer<Uint8Array, T[]> {
  const carried = (err: unknown): T[][] => {
    const out = listOn<T>(err, name);
    return out.length === 0 ? [] : [out];
  };
  return {
    transform(chunk, controller) {
      let out: T[];
      try { out = decoder.push(chunk); } catch (err) { return failed(controller, err, carried(err)); }
      if (out.length !== 0) controller.enqueue(out);
    },
    flush(controller) {
      let out: T[];
      try { out = decoder.flush(); } catch (err) { return failed(controller, err, carried(err)); }
      if (out.length !== 0) controller.enqueue(out);
    },
  };
}

/** Like `TextDecoderStream`: bytes in, strings out (one per read that completes text), strict by default. */
export class Utf8DecoderStream extends Transform<ArrayBufferLike | ArrayBufferView, string> {
  constructor(options?: Utf8DecoderOptions) {
    const decoder = new Utf8Decoder(options);
    super({
      transform(chunk, controller) {
        let text: string;
        try { text = decoder.push(asBytes(chunk)); } catch (err) { return failed(controller, err, textOn(err)); }
        if (text !== '') controller.enqueue(text);
      },
      flush(controller) {
        let text: string;
        try { text = decoder.flush(); } catch (err) { return failed(controller, err, textOn(err)); }
        if (text !== '') controller.enqueue(text);
      },
    });
  }
}

/** Bytes in, lines out (without terminators), one line per chunk, like piping through a {@link LineDecoder}. */
export class LineDecoderStream extends Transform<Uint8Array, string> {
  constructor(options?: LineDecoderOptions) {
    super(perItem(new LineDecoder(options), 'lines'));
  }
}

/**
 * Bytes in, arrays of lines out: the lines each read completed, as one chunk (never an empty
 * array). For many short lines per read: one queue entry and one reader promise per read, not per line.
 */
export class LineBatchDecoderStream extends Transform<Uint8Array, string[]> {
  constructor(options?: LineDecoderOptions) {
    super(batched(new LineDecoder(options), 'lines'));
  }
}

/** Bytes in, events out, one event per chunk, like piping through an {@link SseParser}. */
export class SseDecoderStream extends Transform<Uint8Array, SseEvent> {
  /** The parser behind the stream: `lastEventId`, `retry` and, after the end, `truncated`. */
  readonly parser: SseParser;

  constructor(options?: SseParserOptions) {
    const parser = new SseParser(options);
    super(perItem(parser, 'events'));
    this.parser = parser;
  }
}

/**
 * Bytes in, arrays of events out: the events each read completed, as one chunk (never an empty
 * array), exactly what {@link SseParser.push} returned. A read then costs what a call of `push`
 * does, where {@link SseDecoderStream} pays a queue entry and a reader promise per event.
 */
export class SseBatchDecoderStream extends Transform<Uint8Array, SseEvent[]> {
  /** The parser behind the stream: `lastEventId`, `retry` and, after the end, `truncated`. */
  readonly parser: SseParser;

  constructor(options?: SseParserOptions) {
    const parser = new SseParser(options);
    super(batched(parser, 'events'));
    this.parser = parser;
  }
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
