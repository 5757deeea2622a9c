// Errors of the core that every layer shares: the shared memory, a disposed decoder, and how a
// stopped decoder throws its error again. Each layer's own errors live in its folder.

/** Bytes as hex pairs, for messages: `E4 B8`. */
export function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).toUpperCase().padStart(2, '0')).join(' ');
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

/** An error that carries a call's output (`text`, `lines`, `events`): it can make its copy without it. */
interface CarriesOutput {
  withoutOutput(): Error;
}

/**
 * The error a stopped decoder throws again on later calls: the same class, code, offset and
 * message, without the output the first throw carried (it was delivered once; a retry loop must
 * not process it twice). Each error class that carries output makes its own copy.
 */
export function withoutOutput(e: Error): Error {
  const copy = (e as Partial<CarriesOutput>).withoutOutput;
  return typeof copy === 'function' ? copy.call(e) : e;
}
