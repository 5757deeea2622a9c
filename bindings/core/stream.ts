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
    this.st = this.made(create);
  }

  /**
   * A new state record, registered to be freed if the decoder is collected with it (a trap of the
   * core, its memory unable to grow, is a CoreMemoryError).
   */
  private made(create: (x: CoreExports) => number): number {
    let st: number;
    try {
      st = create(this.core.x);
    } catch (e) {
      const x = this.core.x;
      if (!(e instanceof WebAssembly.RuntimeError)) throw e;
      throw new CoreMemoryError(0, x.memory.buffer.byteLength, x.heapBudgetHit() !== 0 ? coreMemoryLimit() : undefined);
    }
    registryOf(this.kind, this.core)?.register(this, st, this);
    return st;
  }

  /** Starts a new stream: drops what is held and a previous error. */
  reset(): void {
    if (this.disposed) return; // disposed: stays so
    if (this.st === 0) this.st = this.made((x) => this.remake(x)); // (its last stream gave its record back)
    else this.kind.reset(this.core.x, this.st);
    this.bytesIn = 0;
    this.failure = null;
    this.again = null;
    this.resetState();
  }

  /** Whether `dispose()` was called. */
  protected get disposed(): boolean {
    return this.failure === disposed;
  }

  /** Returns the core memory now instead of when the decoder is garbage-collected. */
  dispose(): void {
    if (this.disposed) return;
    this.retire();
    // the error itself is made when a disposed decoder is used (a gateway disposes thousands)
    this.failure = disposedMark();
  }

  /** A new record for a stream whose last one retired (the constructor's `create`; not kept, which would cost every decoder its closure). */
  protected remake(_x: CoreExports): number {
    throw new Error(`${this.what}: no stream of this kind retires its record`);
  }

  /**
   * The stream ended and nothing of it is read any more: its record goes back to the core now,
   * not when the decoder is collected (a gateway ends thousands of streams between collections,
   * and their records would pile up in the core's heap); `reset()` makes a new one.
   */
  protected retire(): void {
    if (this.st === 0) return;
    // (unregistered, not left to a collection: a registry's cells of dead decoders cost the
    // collector more than the unregistering costs now, most in a loop that never yields)
    registryOf(this.kind, this.core)?.unregister(this);
    this.kind.free(this.core.x, this.st);
    this.st = 0;
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
    if (this.disposed) throw new DisposedError(this.what);
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
   * stream's lasting CoreMemoryError, at byte offset `offset`; so does the CoreMemoryError of a
   * decoder it reads through (Bedrock's framer), as it is. Any other error passes through.
   */
  protected trapped(e: unknown, offset: number): unknown {
    let err: CoreMemoryError;
    if (e instanceof CoreMemoryError) {
      err = e;
    } else if (e instanceof WebAssembly.RuntimeError) {
      const x = this.core.x;
      const budget = x.heapBudgetHit() !== 0 ? coreMemoryLimit() : undefined;
      err = new CoreMemoryError(offset, x.memory.buffer.byteLength, budget);
    } else {
      return e;
    }
    this.failure = err;
    this.again = null;
    this.released();
    return err;
  }
}
