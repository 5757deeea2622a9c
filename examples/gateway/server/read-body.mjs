// A body read whole with its limit (readBody): a client's request, and an upstream's error body or
// whole answer, each held in the streams' budget as it comes; and where a JSON object ends in it
// (jsonObjectEnd).

/** The room small pieces of a body are gathered in (a piece of a quarter of it or more is kept as it is). */
const ROOM = 16 * 1024;

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
    const parts = [];
    let n = 0;
    let whole = false;
    // Small pieces are copied together into a room of ROOM bytes: kept each as it came, a body
    // sent a byte a packet held a Buffer of some 100 bytes per byte, a hundred times what the
    // budget counted (a 1 MiB body, over 100 MiB).
    let room = null;
    let roomAt = 0;
    const flushRoom = () => {
      if (roomAt > 0) parts.push(Buffer.from(room.subarray(0, roomAt))); // (a copy of what it holds: the room is used again)
      roomAt = 0;
    };
    const keep = (b) => {
      if (b.length >= ROOM / 4) {
        flushRoom();
        return void parts.push(b);
      }
      if (room === null) room = Buffer.allocUnsafe(ROOM);
      else if (roomAt + b.length > ROOM) flushRoom();
      b.copy(room, roomAt);
      roomAt += b.length;
    };
    stream.on('data', (b) => {
      if (n > limit || whole) return;
      // (with `scan`, jsonObjectEnd's: the body ends with its JSON object, and the stream is closed there)
      const end = scan === undefined ? -1 : scan(b);
      if (end !== -1) b = b.subarray(0, end);
      n += b.length;
      const kept = n <= limit && (hold === undefined || hold(b.length));
      if (kept && end !== -1) {
        whole = true;
        keep(b);
        done();
        return void stream.destroy();
      }
      if (kept) return void keep(b);
      const why = n <= limit ? false : null;
      n = limit + 1;
      parts.length = 0;
      room = null;
      roomAt = 0;
      resolve(why);
      if (!drain) stream.destroy();
    });
    function done() {
      if (n <= limit) flushRoom();
      resolve(n > limit ? null : parts.length === 1 ? parts[0] : Buffer.concat(parts, n));
      parts.length = 0; // the listeners stay on the stream for its life: keep nothing in them
      room = null;
    }
    stream.on('end', done);
    stream.on('error', reject);
    stream.on('close', done);
  });
}

/**
 * Where a JSON object ends in a body read piece by piece, found in one pass over its bytes (an
 * upstream's error body can come on a connection that does not end after it): `scan(piece)`
 * returns the index in `piece` right after the object's closing brace, or -1 (not yet, or the body
 * does not begin with `{`: then never). Only the object's nesting is followed, its strings and
 * their escapes stepped over (UTF-8's multibyte characters hold no ASCII byte); whether it is valid
 * JSON is JSON.parse's to say.
 */
export function jsonObjectEnd() {
  let depth = 0;
  let started = false;
  let over = false; // (not an object, or past its end)
  let inString = false;
  let escaped = false;
  return (piece) => {
    if (over) return -1;
    for (let i = 0; i < piece.length; i++) {
      const c = piece[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 0x5c) escaped = true;
        else if (c === 0x22) inString = false;
      } else if (!started) {
        if (c === 0x7b) { started = true; depth = 1; } else if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) { over = true; return -1; }
      } else if (c === 0x22) inString = true;
      else if (c === 0x7b || c === 0x5b) depth++;
      else if ((c === 0x7d || c === 0x5d) && --depth === 0) { over = true; return i + 1; }
    }
    return -1;
  };
}
