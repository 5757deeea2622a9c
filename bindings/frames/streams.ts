// Layer 2 as Web TransformStreams: lines and events, one per chunk or one array per read.
import { Transform, batched, owning, perItem } from '../core/transform.js';
import { LineDecoder, type LineDecoderOptions } from './lines.js';
import { SseParser, type SseParserOptions } from './sse.js';
import type { SseEvent } from './types.js';

/** Bytes in, lines out (without terminators), one line per chunk, like piping through a {@link LineDecoder}. */
export class LineDecoderStream extends Transform<ArrayBufferLike | ArrayBufferView, string> {
  constructor(options?: LineDecoderOptions) {
    const decoder = new LineDecoder(options);
    super(owning(perItem(decoder, 'lines'), () => decoder.dispose()));
  }
}

/**
 * Bytes in, arrays of lines out: the lines each read completed, as one chunk (never an empty
 * array). For many short lines per read: one queue entry and one reader promise per read, not per line.
 */
export class LineBatchDecoderStream extends Transform<ArrayBufferLike | ArrayBufferView, string[]> {
  constructor(options?: LineDecoderOptions) {
    const decoder = new LineDecoder(options);
    super(owning(batched(decoder, 'lines'), () => decoder.dispose()));
  }
}

/** Bytes in, events out, one event per chunk, like piping through an {@link SseParser}. */
export class SseDecoderStream extends Transform<ArrayBufferLike | ArrayBufferView, SseEvent> {
  /** The parser behind the stream: `lastEventId`, `retry` and, after the end, `truncated`. */
  readonly parser: SseParser;

  constructor(options?: SseParserOptions) {
    const parser = new SseParser(options);
    super(owning(perItem(parser, 'events'), () => parser.dispose()));
    this.parser = parser;
  }
}

/**
 * Bytes in, arrays of events out: the events each read completed, as one chunk (never an empty
 * array), exactly what {@link SseParser.push} returned. A read then costs what a call of `push`
 * does, where {@link SseDecoderStream} pays a queue entry and a reader promise per event.
 */
export class SseBatchDecoderStream extends Transform<ArrayBufferLike | ArrayBufferView, SseEvent[]> {
  /** The parser behind the stream: `lastEventId`, `retry` and, after the end, `truncated`. */
  readonly parser: SseParser;

  constructor(options?: SseParserOptions) {
    const parser = new SseParser(options);
    super(owning(batched(parser, 'events'), () => parser.dispose()));
    this.parser = parser;
  }
}
