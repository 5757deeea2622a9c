// Web TransformStreams over the decoders: each takes the options of its decoder. An error (invalid
// UTF-8, a limit) errors the stream after what the decoder produced before it was enqueued: the
// output a decoder's error carries (`text`, `lines`, `events`) is never lost.
import { LineDecoder, type LineDecoderOptions } from './lines.js';
import { SseParser, type SseEvent, type SseParserOptions } from './sse.js';
import { Utf8Decoder, type Utf8DecoderOptions, asBytes } from './utf8.js';

/**
 * Runs `step`, enqueuing what it returns. When it throws, enqueues the output its error carries
 * (read by `carried`), then errors the stream, but only once the reader has taken what was
 * enqueued: erroring a ReadableStream drops the chunks still queued in it. (A reader with a read
 * pending takes a chunk at once; the rest wait in the queue until it reads again.)
 */
function guarded<T>(controller: TransformStreamDefaultController<T>, step: () => T[], carried: (err: unknown) => T[]): void | Promise<never> {
  let out: T[];
  try {
    out = step();
  } catch (err) {
    for (const x of carried(err)) controller.enqueue(x);
    if (controller.desiredSize === null || controller.desiredSize >= 0) throw err;
    return afterDrain(controller, err);
  }
  for (const x of out) controller.enqueue(x);
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

const listOn = (name: 'lines' | 'events') => <T>(err: unknown): T[] => {
  const v = (err as Record<string, unknown> | null)?.[name];
  return Array.isArray(v) ? (v as T[]) : [];
};
const textOn = (err: unknown): string[] => {
  const t = (err as { text?: unknown } | null)?.text;
  return typeof t === 'string' && t !== '' ? [t] : [];
};
const nonEmpty = (text: string): string[] => (text === '' ? [] : [text]);

/** Like `TextDecoderStream`: bytes in, strings out, strict by default. */
export class Utf8DecoderStream extends TransformStream<ArrayBufferLike | ArrayBufferView, string> {
  constructor(options?: Utf8DecoderOptions) {
    const decoder = new Utf8Decoder(options);
    super({
      transform(chunk, controller) { return guarded(controller, () => nonEmpty(decoder.push(asBytes(chunk))), textOn); },
      flush(controller) { return guarded(controller, () => nonEmpty(decoder.flush()), textOn); },
    });
  }
}

/** Bytes in, lines out (without terminators), like piping through a {@link LineDecoder}. */
export class LineDecoderStream extends TransformStream<Uint8Array, string> {
  constructor(options?: LineDecoderOptions) {
    const decoder = new LineDecoder(options);
    const carried = listOn('lines')<string>;
    super({
      transform(chunk, controller) { return guarded(controller, () => decoder.push(chunk), carried); },
      flush(controller) { return guarded(controller, () => decoder.flush(), carried); },
    });
  }
}

/** Bytes in, events out, like piping through an {@link SseParser}. */
export class SseDecoderStream extends TransformStream<Uint8Array, SseEvent> {
  /** The parser behind the stream: `lastEventId`, `retry` and, after the end, `truncated`. */
  readonly parser: SseParser;

  constructor(options?: SseParserOptions) {
    const parser = new SseParser(options);
    const carried = listOn('events')<SseEvent>;
    super({
      transform(chunk, controller) { return guarded(controller, () => parser.push(chunk), carried); },
      flush(controller) { return guarded(controller, () => parser.flush(), carried); },
    });
    this.parser = parser;
  }
}
