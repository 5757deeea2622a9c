// Seeded randomness for property tests. The seed is printed on failure by fast-check; set
// SEAM_SEED to replay a run.
import { prng } from '../../bench/corpus.js';

export const SEED = Number(process.env.SEAM_SEED ?? 20261130);

/** A small deterministic PRNG (mulberry32) for generators outside fast-check: the benchmarks' own. */
export { prng as rng };

/** The parts as one array (what cut took apart). */
export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
}

/** Cuts bytes (as views) or a string at the given sorted offsets. */
export function cut<T extends Uint8Array | string>(input: T, at: number[]): T[] {
  const piece = (a: number, b?: number) =>
    (typeof input === 'string' ? input.slice(a, b) : (input as Uint8Array).subarray(a, b)) as T;
  const out: T[] = [];
  let prev = 0;
  for (const p of at) {
    out.push(piece(prev, p));
    prev = p;
  }
  out.push(piece(prev));
  return out;
}

/** Random cut points for `bytes`, with pieces of 0..maxPiece bytes. */
export function randomCuts(bytes: Uint8Array, next: () => number, maxPiece: number): number[] {
  const at: number[] = [];
  let p = 0;
  for (;;) {
    p += Math.floor(next() * (maxPiece + 1));
    if (p >= bytes.length) return at;
    at.push(p);
  }
}

/** Every chunking the core property is checked on: whole, every two-piece split, one-byte drip. */
export function* standardChunkings(bytes: Uint8Array): Generator<Uint8Array[]> {
  yield [bytes];
  for (let i = 0; i <= bytes.length; i++) yield cut(bytes, [i]);
  yield Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
}

/**
 * The ways a body that begins with a BOM is cut here: whole, a byte a piece, once inside or right
 * after the BOM, twice (after its first byte and again), and three rounds of seeded random cuts
 * (the seed in their names): `[name, cut positions]`.
 */
export function bomCuttings(bytes: Uint8Array): [string, number[]][] {
  const next = prng(SEED + bytes.length);
  const cuttings: [string, number[]][] = [['whole', []], ['a byte a piece', [...Array(bytes.length - 1).keys()].map((i) => i + 1)]];
  for (let at = 1; at <= 4; at++) cuttings.push([`cut at ${at}`, [at]], [`cut at 1 and ${at + 1}`, [1, at + 1]]);
  for (let round = 0; round < 3; round++) cuttings.push([`seed ${SEED} round ${round}`, randomCuts(bytes, next, [3, 17, 90][round])]);
  return cuttings;
}
