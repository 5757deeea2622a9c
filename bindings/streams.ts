// Web TransformStreams over the decoders: each takes the options of its decoder.
import { LineDecoder, type LineDecoderOptions } from './lines.js';
import { SseParser, type SseEvent, type SseParserOptions } from './sse.js';
import { Utf8Decoder, type Utf8DecoderOptions, asBytes } from './utf8.js';

/** Like `TextDecoderStream`: bytes in, strings out, strict by default. */
export class Utf8DecoderStream extends TransformStream<ArrayBufferLike | ArrayBufferView, string> {
  constructor(options?: Utf8DecoderOptions) {
    const decoder = new Utf8Decoder(options);
    super({
      transform(chunk, controller) {
        const text = decoder.push(asBytes(chunk));
        if (text !== '') controller.enqueue(text);
      },
      flush(controller) {
        const text = decoder.flush();
        if (text !== '') controller.enqueue(text);
      },
    });
  }
}


/** Bytes in, lines out (without terminators), like piping through a {@link LineDecoder}. */
export class LineDecoderStream extends TransformStream<Uint8Array, string> {
  constructor(options?: LineDecoderOptions) {
    const decoder = new LineDecoder(options);
    super({
      transform(chunk, controller) {
        for (const line of decoder.push(chunk)) controller.enqueue(line);
      },
      flush(controller) {
        for (const line of decoder.flush()) controller.enqueue(line);
      },
    });
  }
}

/**
 * Bytes in, events out, like piping through an {@link SseParser}. An error (invalid UTF-8, an
 * event over the limit) errors the stream after the events before it were enqueued.
 */
export class SseDecoderStream extends TransformStream<Uint8Array, SseEvent> {
  /** The parser behind the stream: `lastEventId`, `retry` and, after the end, `truncated`. */
  readonly parser: SseParser;

  constructor(options?: SseParserOptions) {
    const parser = new SseParser(options);
    const enqueueAll = (events: SseEvent[], controller: TransformStreamDefaultController<SseEvent>) => {
      for (const e of events) controller.enqueue(e);
    };
    const guard = (f: () => SseEvent[], controller: TransformStreamDefaultController<SseEvent>) => {
      try {
        enqueueAll(f(), controller);
      } catch (err) {
        const events = (err as { events?: unknown }).events;
        if (Array.isArray(events)) enqueueAll(events as SseEvent[], controller);
        throw err;
      }
    };
    super({
      transform(chunk, controller) { guard(() => parser.push(chunk), controller); },
      flush(controller) { guard(() => parser.flush(), controller); },
    });
    this.parser = parser;
  }
}
