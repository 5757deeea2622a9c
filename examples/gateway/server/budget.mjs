// The streams' budget: the streams open and the bytes they hold, against maxPendingBytes, which a
// request is admitted under and a stream reads a request's body or a whole answer under; and an
// answer that is one JSON body, held in it as its reader keeps it (HeldBody).
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

/**
 * An upstream's answer that is one JSON body where a stream was asked (an error object, a whole
 * answer), which a relay or a model stream (`reader`) keeps whole until the upstream's end, in
 * JavaScript, outside the core's memory (its jsonBodyBytes): held in the budget of the stream `s`
 * as it comes, each read before the reader takes it, and let go with the stream's `release()`.
 */
export class HeldBody {
  constructor(s, reader) {
    this.s = s;
    this.reader = reader;
    /** The body's bytes held for it. */
    this.bytes = 0;
    /** Whether the answer may yet begin as one JSON body: nothing but white space (and a BOM's bytes) came. */
    this.open = true;
  }

  /**
   * `reader.push(chunk)`; undefined, the read not pushed, when with it the streams would hold
   * maxPendingBytes. A read adds at most its bytes to the body: while the answer is one JSON body,
   * or may yet begin as one, they are held before the push, and what the body did not take of them
   * let go after it. (Held after the push, a read passed the budget by up to its size before the
   * stream was refused.)
   */
  push(chunk) {
    const { s, reader } = this;
    const ahead = this.open || reader.jsonBodyBytes > 0 ? chunk.length : 0;
    if (ahead !== 0 && !s.hold(ahead)) {
      s.letGo(ahead);
      return undefined;
    }
    try {
      return reader.push(chunk);
    } finally {
      const body = reader.jsonBodyBytes;
      const grew = body > this.bytes ? body - this.bytes : 0;
      this.bytes += grew;
      s.letGo(ahead - grew);
      if (this.open && !blank(chunk)) this.open = false;
    }
  }
}

/**
 * Whether `chunk` is white space and a BOM's bytes alone, before which an answer can yet begin as
 * one JSON body (a bound wider than the library's reading: any byte else is the body's `{` or `[`,
 * or an event stream's, which is then none).
 */
function blank(chunk) {
  for (const c of chunk) if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09 && c !== 0xef && c !== 0xbb && c !== 0xbf) return false;
  return true;
}
