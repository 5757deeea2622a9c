// A body read whole with its limit (readBody): a client's request, and an upstream's error body or
// whole answer, each held in the streams' budget as it comes.

/**
 * Reads a stream's body up to `limit` bytes; resolves null past it, and then destroys the stream,
 * or with `drain` reads the rest without keeping it (a client's request, which is then answered).
 * `hold(bytes)`, called for each piece kept, returns false when the gateway's budget is spent:
 * the read then stops as past the limit, and resolves false.
 */
export function readBody(stream, limit, drain = false, hold = undefined) {
  return new Promise((resolve, reject) => {
    const parts = [];
    let n = 0;
    stream.on('data', (b) => {
      if (n > limit) return;
      n += b.length;
      const kept = n <= limit && (hold === undefined || hold(b.length));
      if (kept) return void parts.push(b);
      const why = n <= limit ? false : null;
      n = limit + 1;
      parts.length = 0;
      resolve(why);
      if (!drain) stream.destroy();
    });
    const done = () => {
      resolve(n > limit ? null : parts.length === 1 ? parts[0] : Buffer.concat(parts, n));
      parts.length = 0; // the listeners stay on the stream for its life: keep nothing in them
    };
    stream.on('end', done);
    stream.on('error', reject);
    stream.on('close', done);
  });
}
