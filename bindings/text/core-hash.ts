// The report's SHA-256 through the core's block function (assembly/sha256.ts), for runtimes with
// no native SHA-256 (browsers, workerd without nodejs_compat): 4–5× @noble/hashes in Chromium and
// Firefox on the same text. Each hash keeps its own state here (eight words, its partial last block, its length), so
// that any number of streams share the core's one hash window: an update loads the state into the
// window, encodes the text right after the partial block (`TextEncoder.encodeInto`, no copy), or
// copies bytes there (a model stream's text, whose UTF-8 the core logged), has the core hash the
// whole blocks, and takes the state and the new partial block back.
import type { Core } from '../core/wasm.js';
import { HASH_CAP, HASH_STATE_BYTES } from '../core/generated/abi.js';
import type { Hasher } from './assembler.js';

/** One maker of hashers per core (a realm has one): a stream's text layer holds it, not a closure of its own. */
let madeFor: Core | null = null;
let maker: (() => Hasher) | null = null;

/** What makes `core`'s hashers: the same function for every stream of the realm. */
export function coreHashers(core: Core): () => Hasher {
  if (madeFor !== core || maker === null) {
    madeFor = core;
    maker = () => coreHasher(core);
  }
  return maker;
}

const IV = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/** A SHA-256 of UTF-8 text (lone surrogates as U+FFFD, as `TextEncoder` and Node's hash write them) hashed by `core`. */
export function coreHasher(core: Core): Hasher {
  const enc = new TextEncoder();
  const h = Int32Array.from(IV);
  const tail = new Uint8Array(64);
  let tailLen = 0;
  let bytes = 0;
  let done = false;
  const finished = (): never => { throw new Error('seam: this SHA-256 gave its digest; a hash takes no text after it'); };
  const at = core.hash;
  const input = at + HASH_STATE_BYTES;
  /** Hashes the `n` bytes at the window's input (the partial block first), keeping the last partial block (views synced by the caller; the call grows no memory). */
  const blocks = (n: number): void => {
    const whole = n & ~63;
    core.i32.set(h, at >> 2);
    core.x.sha256Blocks(at, input, whole >> 6);
    h.set(core.i32.subarray(at >> 2, (at >> 2) + 8));
    tailLen = n - whole;
    tail.set(core.u8.subarray(input + whole, input + n));
  };
  /** The core's memory (its views synced), with the partial block at the window's input, for up to HASH_CAP bytes more after it. */
  const opened = (): Uint8Array => {
    core.sync();
    const u8 = core.u8;
    u8.set(tail.subarray(0, tailLen), input);
    return u8;
  };
  /** The `n` bytes put after the partial block hashed. */
  const put = (n: number): void => {
    bytes += n;
    blocks(tailLen + n);
  };
  return {
    update(text: string): void {
      if (done) finished();
      for (let s = text; s.length !== 0;) {
        const { read, written } = enc.encodeInto(s, opened().subarray(input + tailLen, input + tailLen + HASH_CAP));
        put(written);
        s = read === s.length ? '' : s.substring(read);
      }
    },
    updateBytes(b: Uint8Array): void {
      if (done) finished();
      for (let i = 0; i < b.length;) {
        const n = Math.min(b.length - i, HASH_CAP);
        opened().set(b.subarray(i, i + n), input + tailLen); // (from the core's memory too, as a rule: a copy within it)
        put(n);
        i += n;
      }
    },
    digest(): string {
      if (done) finished();
      done = true;
      // the padding: 0x80, zeros to 56 bytes mod 64, the length in bits (big-endian, 64 bits)
      const u8 = opened();
      const n = tailLen < 56 ? 64 : 128;
      u8.fill(0, input + tailLen, input + n);
      u8[input + tailLen] = 0x80;
      const bits = bytes * 8;
      const hi = Math.floor(bits / 0x100000000), lo = bits >>> 0;
      for (let i = 0; i < 4; i++) {
        u8[input + n - 8 + i] = hi >>> (24 - 8 * i) & 0xff;
        u8[input + n - 4 + i] = lo >>> (24 - 8 * i) & 0xff;
      }
      blocks(n);
      let hex = '';
      for (let i = 0; i < 8; i++) hex += (h[i] >>> 0).toString(16).padStart(8, '0');
      return hex;
    },
  };
}
