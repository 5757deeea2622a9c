// The streams' budget: the streams open and the bytes they hold, against maxPendingBytes, which a
// request is admitted under and a stream reads a request's body or a whole answer under.
import { coreMemoryUsed } from 'seam-stream';
import { KiB } from './options.mjs';

export class Budget {
  /** `o`: the gateway's options (its maxPendingBytes). */
  constructor(o) {
    this.o = o;
    /** The streams open. @type {Set<import('./stream.mjs').Stream>} */
    this.streams = new Set();
    // The terms of mightBeFull's bound, kept as the streams go: the streams' client buffers as the
    // gateway last wrote to them (each stream's `wrote`), the upstream reads paused, and the bytes
    // the streams hold in JavaScript (each stream's `held`).
    this.written = 0;
    this.paused = 0;
    this.holding = 0;
  }

  /**
   * What the streams hold now: their clients' write buffers, their upstream responses' read
   * buffers, what they hold in JavaScript (request bodies, whole answers, an answer's JSON body
   * that seam's relay or model stream keeps until its end) and (in the core) their
   * unfinished events.
   */
  pendingBytes() {
    let n = coreMemoryUsed();
    for (const s of this.streams) n += s.res.writableLength + (s.upRes?.readableLength ?? 0) + s.held;
    return n;
  }

  /**
   * Whether the streams might hold maxPendingBytes, which spares the walk over every stream (for
   * each new request: quadratic in the streams open) when they cannot. An upper bound kept as the
   * streams go: each client buffer as it was right after the gateway's last write to it (it only
   * shrinks until the next), for each paused upstream read its socket's buffer at most (its
   * high-water mark, 16 KiB on Node 20 and 64 KiB from Node 22, plus one 64 KiB read; a flowing
   * one holds nothing between reads), and what the streams hold in JavaScript.
   */
  mightBeFull() {
    return coreMemoryUsed() + this.written + this.holding + this.paused * 128 * KiB >= this.o.maxPendingBytes;
  }
}
