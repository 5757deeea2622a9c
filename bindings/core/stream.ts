// The lifecycle every decoder over the core shares: a state record in the realm's one instance,
// reset, dispose, the finalization registry (a safety net, not the way memory is given back),
// the sticky failure, and a trap of the core (its memory could not grow) as a typed error.
import { CoreMemoryError, DisposedError, withoutOutput } from './errors.js';
import { coreMemoryLimit } from './memory.js';
import { type Core, type CoreExports, expectBytes, getCore } from './wasm.js';

/** How the core starts a new stream on a kind of state record, and how it frees one. */
export interface StateKind {
  reset(x: CoreExports, st: number): void;
  free(x: CoreExports, st: number): void;
  /** Frees the records of decoders collected without `dispose()`; made on first use. */
  registry?: FinalizationRegistry<number> | null;
}

function registryOf(kind: StateKind, core: Core): FinalizationRegistry<number> | null {
  if (kind.registry === undefined) {
    kind.registry = typeof FinalizationRegistry === 'function'
      ? new FinalizationRegistry<number>((st) => kind.free(core.x, st))
      : null;
  }
  return kind.registry;
}

/** What a disposed decoder's failure is until it is used: one marker per realm, made on first use. */
let disposed: Error | undefined;
const disposedMark = (): Error => (disposed ??= new Error('disposed'));

/**
 * A decoder that owns one state record of the shared core. Subclasses make the record (through
 * `create`), frame or decode, and turn the core's results into strings and errors; this class
 * owns what happens around that: `reset()`, `dispose()`, the error that stops the stream until
 * `reset()`, and the byte count that offsets are measured from.
 */
export abstract class CoreStream {
  /** Bytes consumed since the stream began. */
  bytesIn = 0;
  protected readonly core: Core;
  protected st: number;
  /** The error that stopped the stream; thrown again by every call until `reset()`. */
  protected failure: Error | null = null;
  /** What later calls throw: the failure without the output the first throw delivered. */
  private again: Error | null = null;
  private readonly kind: StateKind;
  private readonly what: string;

  protected constructor(what: string, kind: StateKind, create: (x: CoreExports) => number) {
    this.what = what;
    this.kind = kind;
    this.core = getCore();
    try {
      this.st = create(this.core.x);
    } catch (e) {
      const x = this.core.x;
      if (!(e instanceof WebAssembly.RuntimeError)) throw e;
      throw new CoreMemoryError(0, x.memory.buffer.byteLength, x.heapBudgetHit() !== 0 ? coreMemoryLimit() : undefined);
    }
    registryOf(kind, this.core)?.register(this, this.st, this);
  }

  /** Starts a new stream: drops what is held and a previous error. */
  reset(): void {
    if (this.st === 0) return; // disposed: stays so
    this.kind.reset(this.core.x, this.st);
    this.bytesIn = 0;
    this.failure = null;
    this.again = null;
    this.resetState();
  }

  /** Returns the core memory now instead of when the decoder is garbage-collected. */
  dispose(): void {
    if (this.st === 0) return;
    registryOf(this.kind, this.core)?.unregister(this);
    this.kind.free(this.core.x, this.st);
    this.st = 0;
    // the error itself is made when a disposed decoder is used (a gateway disposes thousands)
    this.failure = disposedMark();
  }

  /** What a subclass keeps beside the core's record, reset with it. */
  protected resetState(): void {}

  /** Checks a call's chunk and throws the failure that stopped the stream, if any. */
  protected open(chunk: unknown, where: string): asserts chunk is Uint8Array {
    if (!(chunk instanceof Uint8Array)) expectBytes(chunk, where);
    if (this.failure !== null) this.rethrow();
  }

  /**
   * Throws the failure that stopped the stream again, as a copy with the same code and offset but
   * none of the output (`text`, `lines`, `events`) the first throw carried: that output was
   * delivered once, and a retry loop must not process it twice.
   */
  protected rethrow(): never {
    if (this.failure === disposed) throw new DisposedError(this.what);
    throw (this.again ??= withoutOutput(this.failure!));
  }

  /** Records the error that stops the stream, and throws it. */
  protected stop(err: Error): never {
    this.failure = err;
    this.again = null;
    this.released();
    throw err;
  }

  /** After a failure: gives back what a stopped stream holds (it is dead until `reset()`). */
  protected released(): void {}

  /**
   * A trap of the core (its allocator's only failure: the shared memory cannot grow) becomes the
   * stream's lasting CoreMemoryError, at byte offset `offset`; any other error passes through.
   */
  protected trapped(e: unknown, offset: number): unknown {
    if (!(e instanceof WebAssembly.RuntimeError)) return e;
    const x = this.core.x;
    const budget = x.heapBudgetHit() !== 0 ? coreMemoryLimit() : undefined;
    const err = new CoreMemoryError(offset, x.memory.buffer.byteLength, budget);
    this.failure = err;
    this.again = null;
    this.released();
    return err;
  }
}
