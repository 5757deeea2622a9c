// Whether feeding one long line or event in small pieces costs work in proportion to its length,
// asserted without timing the whole run (a wall-clock ratio on a loaded machine is noise).
//
// Two ways appending can turn quadratic, each checked on its own:
// - growing the buffer by a fixed step copies all of it again at each step. The bytes copied are
//   counted from the stream's retainedBytes: each growth copies at most what the buffer held.
// - scanning the buffered bytes again on each push makes late pushes slower than early ones. The
//   fastest block of pushes near the end is compared with the fastest near the start. A rescan of
//   megabytes per 64-byte push is thousands of times slower; a preempted block is not the fastest.
export interface LinearWork {
  /** Bytes the buffer's growths copied (the capacity before each growth, summed). */
  copied: number;
  /** The final capacity of the buffer. */
  retained: number;
  /** The fastest block of pushes late in the line over the fastest block early in it. */
  lateOverEarly: number;
}

/** Pushes `count` copies of `piece` into a stream, block by block (`block` pushes each). */
export function measureAppends(
  stream: { push(chunk: Uint8Array): unknown; readonly retainedBytes: number },
  piece: Uint8Array, count: number, block = 1024, sampled = 16,
): LinearWork {
  let cap = stream.retainedBytes;
  let copied = 0;
  const times: number[] = [];
  for (let done = 0; done < count; done += block) {
    const t0 = performance.now();
    for (let i = 0; i < block; i++) {
      stream.push(piece);
      const now = stream.retainedBytes; // read after every push, so that no growth goes uncounted
      if (now > cap) { copied += cap; cap = now; }
    }
    times.push(performance.now() - t0);
  }
  const early = Math.min(...times.slice(1, 1 + sampled)); // the first block warms up
  const late = Math.min(...times.slice(-sampled));
  return { copied, retained: cap, lateOverEarly: late / Math.max(early, 1e-3) };
}
