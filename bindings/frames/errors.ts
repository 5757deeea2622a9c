// Errors of layer 2: lines, NDJSON and Server-Sent Events past their limits, bad NDJSON, and the
// parser's callback.
import type { SseByteEvents } from './sse-bytes.js';
import type { SseEvent } from './types.js';

/** A line longer than `maxLineBytes` (LineDecoder, NdjsonDecoder). The decoder stays failed until `reset()`. */
export class LineLimitError extends RangeError {
  readonly code = 'ERR_LINE_TOO_LONG' as const;
  /** Absolute byte offset of the first byte of the line. */
  readonly offset: number;
  /** The limit in bytes that the line exceeded. */
  readonly limit: number;
  /** Lines (or NDJSON values) completed by this call before the long line: nothing returned is lost. */
  readonly lines: unknown[];

  constructor(offset: number, limit: number, lines: unknown[]) {
    super(`Line starting at byte offset ${offset} is longer than maxLineBytes (${limit} bytes); nothing past the limit was buffered`);
    this.name = 'LineLimitError';
    this.offset = offset;
    this.limit = limit;
    this.lines = lines;
  }

  /** @internal The same error without the lines it carried. */
  withoutOutput(): LineLimitError {
    return new LineLimitError(this.offset, this.limit, []);
  }
}

/** A line of an NDJSON stream that is not valid JSON. The decoder stays failed until `reset()`. */
export class NdjsonParseError extends SyntaxError {
  readonly code = 'ERR_NDJSON_PARSE' as const;
  /** 1-based line number in the stream (blank lines count). */
  readonly line: number;
  /** Absolute byte offset of the first byte of the line. */
  readonly offset: number;
  /** The text of the bad line. */
  readonly text: string;
  /** Values parsed by this call before the bad line: nothing returned is lost. */
  readonly values: unknown[];

  constructor(line: number, offset: number, text: string, values: unknown[], cause: unknown) {
    super(`Invalid JSON on line ${line} (byte offset ${offset}): ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'NdjsonParseError';
    this.line = line;
    this.offset = offset;
    this.text = text;
    this.values = values;
  }

  /** @internal The same error without the values it carried. */
  withoutOutput(): NdjsonParseError {
    return new NdjsonParseError(this.line, this.offset, this.text, [], this.cause);
  }
}

/** An event larger than `maxEventBytes`. The parser stays failed until `reset()`. */
export class SseLimitError extends RangeError {
  readonly code = 'ERR_SSE_EVENT_TOO_LARGE' as const;
  /** Absolute byte offset of the first byte of the line that would have taken the event past the limit. */
  readonly offset: number;
  /** The limit in bytes (`maxEventBytes`). */
  readonly limit: number;
  /** Events dispatched by this call before the limit was hit: nothing returned is lost. */
  readonly events: SseEvent[] | SseByteEvents;

  constructor(offset: number, limit: number, events: SseEvent[] | SseByteEvents) {
    super(`Server-sent event exceeds maxEventBytes (${limit} bytes) at the line starting at byte offset ${offset}; nothing past the limit was buffered`);
    this.name = 'SseLimitError';
    this.offset = offset;
    this.limit = limit;
    this.events = events;
  }

  /** @internal The same error without the events it carried. */
  withoutOutput(): SseLimitError {
    return new SseLimitError(this.offset, this.limit, []);
  }
}

/**
 * An `onComment` handler threw. The parser stops (until `reset()`): the events the call had
 * dispatched are on this error, and the handler's error is its `cause`.
 */
export class SseCallbackError extends Error {
  readonly code = 'ERR_SSE_CALLBACK' as const;
  /** Events dispatched by this call: nothing returned is lost. */
  readonly events: SseEvent[] | SseByteEvents;

  constructor(cause: unknown, events: SseEvent[] | SseByteEvents) {
    super(`The onComment handler threw: ${cause instanceof Error ? cause.message : String(cause)}; the parser has stopped until reset()`, { cause });
    this.name = 'SseCallbackError';
    this.events = events;
  }

  /** @internal The same error without the events it carried. */
  withoutOutput(): SseCallbackError {
    return new SseCallbackError(this.cause, []);
  }
}

/** A decoder called again from inside its own callback (`onComment`). */
export class ReentrantCallError extends TypeError {
  readonly code = 'ERR_REENTRANT' as const;

  constructor(what: string) {
    super(`${what} was called from inside onComment, while the parser was delivering that call's output `
      + '(a pushBytes reader would be overwritten); keep the chunk and push it after the outer call returns');
    this.name = 'ReentrantCallError';
  }
}
