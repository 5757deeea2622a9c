// Typed errors. Each carries a stable `code` and, where bytes are involved, the absolute byte
// offset from the start of the stream.
import type { SseByteEvents } from './sse-bytes.js';
import type { SseEvent } from './sse.js';

/** Bytes as hex pairs, for messages: `E4 B8`. */
export function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).toUpperCase().padStart(2, '0')).join(' ');
}

/** Invalid or truncated UTF-8 in a strict (`fatal: true`) stream. */
export class Utf8DecodeError extends TypeError {
  /** `ERR_INVALID_UTF8`: a bad sequence; `ERR_TRUNCATED_UTF8`: the stream ended inside a character. */
  readonly code: 'ERR_INVALID_UTF8' | 'ERR_TRUNCATED_UTF8';
  /** Absolute byte offset of the first byte of the bad sequence. */
  readonly offset: number;
  /** The valid text decoded by this call before the bad sequence: nothing returned is lost. */
  readonly text: string;
  /** The bad bytes (at most 4), for the message and for logs. */
  readonly bytes: Uint8Array;
  /** From a LineDecoder or NdjsonDecoder: the lines (or values) completed before the bad bytes. */
  declare readonly lines?: unknown[];
  /** From an SseParser: the events dispatched before the bad bytes. */
  declare readonly events?: SseEvent[] | SseByteEvents;

  constructor(code: 'ERR_INVALID_UTF8' | 'ERR_TRUNCATED_UTF8', offset: number, text: string, bytes: Uint8Array) {
    super(
      code === 'ERR_INVALID_UTF8'
        ? `Invalid UTF-8 at byte offset ${offset} (bytes from there: ${hex(bytes)})`
        : `Truncated UTF-8: the stream ended inside a character that starts at byte offset ${offset} (${hex(bytes)})`,
    );
    this.name = 'Utf8DecodeError';
    this.code = code;
    this.offset = offset;
    this.text = text;
    this.bytes = bytes;
  }
}

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
}

/**
 * The shared WebAssembly memory could not grow to hold a stream's buffers: the engine's limit for
 * one memory (4 GiB for wasm32) was reached by all the streams of the realm together. The
 * decoder that met it stops until `reset()`; the other streams are unaffected.
 */
export class CoreMemoryError extends RangeError {
  readonly code = 'ERR_CORE_MEMORY' as const;
  /** Absolute byte offset of the chunk piece being framed when memory ran out. */
  readonly offset: number;
  /** Size of the shared memory at that point, in bytes. */
  readonly memoryBytes: number;
  /** When the budget set with `setCoreMemoryLimit` was reached (not the engine's limit): that budget, in bytes. */
  readonly budget: number | undefined;

  constructor(offset: number, memoryBytes: number, budget?: number) {
    super(
      budget !== undefined
        ? `The core memory budget (${budget} bytes, setCoreMemoryLimit) would be passed by this stream's buffers near `
          + `byte offset ${offset}; the decoder has stopped until reset(). Other streams go on.`
        : `The shared WebAssembly memory (${Math.round(memoryBytes / 2 ** 20)} MiB) could not grow to hold this stream's `
          + `buffers near byte offset ${offset}; the decoder has stopped until reset(). Lower maxLineBytes/maxEventBytes `
          + 'or the number of streams held at once.',
    );
    this.name = 'CoreMemoryError';
    this.offset = offset;
    this.memoryBytes = memoryBytes;
    this.budget = budget;
  }
}

/**
 * A call on a decoder after its `dispose()`: its state record was given back to the core. Make a
 * new decoder instead.
 */
export class DisposedError extends TypeError {
  readonly code = 'ERR_DISPOSED' as const;

  constructor(what: string) {
    super(`The decoder was disposed: this ${what} gave its memory back to the core; create a new one`);
    this.name = 'DisposedError';
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

/**
 * The error a stopped decoder throws again on later calls: the same class, code, offset and
 * message, without the output the first throw carried (it was delivered once; a retry loop must
 * not process it twice).
 */
export function withoutOutput(e: Error): Error {
  let copy: Error;
  if (e instanceof Utf8DecodeError) {
    copy = new Utf8DecodeError(e.code, e.offset, '', e.bytes);
    if (e.lines !== undefined) Object.defineProperty(copy, 'lines', { value: [], enumerable: true });
    if (e.events !== undefined) Object.defineProperty(copy, 'events', { value: [], enumerable: true });
  } else if (e instanceof LineLimitError) {
    copy = new LineLimitError(e.offset, e.limit, []);
  } else if (e instanceof NdjsonParseError) {
    copy = new NdjsonParseError(e.line, e.offset, e.text, [], e.cause);
  } else if (e instanceof SseLimitError) {
    copy = new SseLimitError(e.offset, e.limit, []);
  } else if (e instanceof SseCallbackError) {
    copy = new SseCallbackError(e.cause, []);
  } else if (e instanceof ModelStreamError) {
    copy = new ModelStreamError(e.code, e.offset, e.message, '', e.providerMessage);
  } else {
    return e; // no output on it
  }
  return copy;
}

/** What went wrong in a model stream. */
export type ModelStreamErrorCode =
  | 'ERR_STREAM_TRUNCATED' // the stream ended without its provider's completion
  | 'ERR_PROVIDER' // the provider's error event or error body
  | 'ERR_BAD_EVENT' // an event that is not valid JSON, or not an event of the format
  | 'ERR_EVENT_TOO_LARGE' // an event over maxEventBytes
  | 'ERR_INVALID_UTF8'; // invalid or truncated UTF-8

/**
 * A model stream's error, with the absolute byte offset in the stream and the text the call had
 * committed before it (nothing returned is lost). The stream stays failed until `reset()`.
 */
export class ModelStreamError extends Error {
  readonly code: ModelStreamErrorCode;
  /** Absolute byte offset in the stream: of the bad byte, the event, or the end. */
  readonly offset: number;
  /** The text committed by this call before the error. */
  readonly text: string;
  /** With ERR_PROVIDER: the provider's own message. */
  readonly providerMessage: string | undefined;

  constructor(code: ModelStreamErrorCode, offset: number, message: string, text: string, providerMessage?: string) {
    super(message);
    this.name = 'ModelStreamError';
    this.code = code;
    this.offset = offset;
    this.text = text;
    this.providerMessage = providerMessage;
  }
}
