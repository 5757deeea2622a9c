// A body read whole with its limit (readBody): a client's request, and an upstream's error body or
// whole answer, each held in the streams' budget as it comes; and where a JSON object ends in it
// (jsonObjectEnd).

/** The room small pieces of a body are gathered in (a piece of a quarter of it or more is kept as it is). */
const ROOM = 16 * 1024;

/**
 * A body's pieces, kept as they come (`keep`) and joined at its end (`take`). Small pieces are
 * copied together into a room of ROOM bytes: kept each as it came, a body sent a byte a read held
 * a Buffer of some 100 bytes per byte, a hundred times what the budget counted (a 1 MiB body,
 * over 100 MiB).
 */
export class Pieces {
  constructor() {
    this.parts = [];
    this.length = 0;
    this.room = null;
    this.roomAt = 0;
  }

  keep(b) {
    this.length += b.length;
    if (b.length >= ROOM / 4) {
      this.flushRoom();
      return void this.parts.push(b);
    }
    if (this.room === null) this.room = Buffer.allocUnsafe(ROOM);
    else if (this.roomAt + b.length > ROOM) this.flushRoom();
    b.copy(this.room, this.roomAt);
    this.roomAt += b.length;
  }

  /** The body kept, as one Buffer; then nothing is kept. */
  take() {
    this.flushRoom();
    const { parts, length } = this;
    const out = parts.length === 1 ? parts[0] : Buffer.concat(parts, length);
    this.clear();
    return out;
  }

  /** Nothing kept. */
  clear() {
    this.parts = [];
    this.length = 0;
    this.room = null;
    this.roomAt = 0;
  }

  flushRoom() {
    if (this.roomAt > 0) this.parts.push(Buffer.from(this.room.subarray(0, this.roomAt))); // (a copy of what it holds: the room is used again)
    this.roomAt = 0;
  }
}

/**
 * Reads a stream's body up to `limit` bytes; resolves null past it, and then destroys the stream,
 * or with `drain` reads the rest without keeping it (a client's request, which is then answered).
 * `scan` (a jsonObjectEnd()): the body ends where its JSON object does, and the stream is closed
 * there (an upstream can hold its connection open after a whole answer).
 * `hold(bytes)`, called for each piece kept, returns false when the gateway's budget is spent:
 * the read then stops as past the limit, and resolves false.
 */
export function readBody(stream, limit, drain = false, hold = undefined, scan = undefined) {
  return new Promise((resolve, reject) => {
    const pieces = new Pieces();
    let n = 0;
    let whole = false;
    stream.on('data', (b) => {
      if (n > limit || whole) return;
      // (with `scan`, jsonObjectEnd's: the body ends with its JSON object, and the stream is closed there)
      const end = scan === undefined ? -1 : scan(b);
      if (end !== -1) b = b.subarray(0, end);
      n += b.length;
      const kept = n <= limit && (hold === undefined || hold(b.length));
      if (kept && end !== -1) {
        whole = true;
        pieces.keep(b);
        done();
        return void stream.destroy();
      }
      if (kept) return void pieces.keep(b);
      const why = n <= limit ? false : null;
      n = limit + 1;
      pieces.clear();
      resolve(why);
      if (!drain) stream.destroy();
    });
    function done() {
      // (the listeners stay on the stream for its life: they keep nothing once it is taken)
      resolve(n > limit ? null : pieces.take());
    }
    stream.on('end', done);
    stream.on('error', reject);
    stream.on('close', done);
  });
}

/** UTF-8's byte order mark. */
const BOM = [0xef, 0xbb, 0xbf];

/** Whether `b` begins with UTF-8's byte order mark (EF BB BF). */
export const startsWithBom = (b) => b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;

/**
 * Where a JSON object ends in a body read piece by piece, found in one pass over its bytes (an
 * upstream's error body can come on a connection that does not end after it): `scan(piece)`
 * returns the index in `piece` right after the object's closing brace, or -1 (not yet, or the body
 * does not begin with `{` after white space and a BOM at its start: then never). A BOM begins a
 * whole answer that a model stream reads (seam drops one BOM at a stream's start), so it may begin
 * this body, whatever pieces it comes in; one cut short is not. Only the object's nesting is
 * followed, its strings and their escapes stepped over (UTF-8's multibyte characters hold no ASCII
 * byte); whether it is valid JSON is JSON.parse's to say.
 */
export function jsonObjectEnd() {
  let depth = 0;
  let started = false;
  let over = false; // (not an object, or past its end)
  let inString = false;
  let escaped = false;
  let before = 0; // (bytes before the object's `{`)
  let bom = 0; // (of them, a BOM's at the body's start)
  return (piece) => {
    if (over) return -1;
    for (let i = 0; i < piece.length; i++) {
      const c = piece[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 0x5c) escaped = true;
        else if (c === 0x22) inString = false;
      } else if (!started) {
        // (a BOM at the body's start, whatever pieces it comes in)
        if (before === bom && bom < 3 && c === BOM[bom]) bom++;
        else if (bom === 1 || bom === 2) { over = true; return -1; } // (a BOM cut short)
        else if (c === 0x7b) { started = true; depth = 1; } else if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) { over = true; return -1; }
        before++;
      } else if (c === 0x22) inString = true;
      else if (c === 0x7b || c === 0x5b) depth++;
      else if ((c === 0x7d || c === 0x5d) && --depth === 0) { over = true; return i + 1; }
    }
    return -1;
  };
}
