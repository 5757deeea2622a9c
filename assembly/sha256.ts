// SHA-256's block function (FIPS 180-4, 6.2.2), for the text layer's report where the runtime has
// no native SHA-256 (browsers, workerd): the bindings keep each hash's state, encode its text into
// the hash window and hash its whole blocks here; padding and the digest are theirs. Bytes only.

/** The 64 round constants. */
const K: usize = memory.data<u32>([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
/** The message schedule of the block being hashed. */
const W: usize = memory.data(64 * 4, 16);

/** Hashes the `n` 64-byte blocks at `p` into the state at `st` (eight words, H0 first). */
export function sha256Blocks(st: usize, p: usize, n: usize): void {
  let h0 = load<u32>(st), h1 = load<u32>(st, 4), h2 = load<u32>(st, 8), h3 = load<u32>(st, 12);
  let h4 = load<u32>(st, 16), h5 = load<u32>(st, 20), h6 = load<u32>(st, 24), h7 = load<u32>(st, 28);
  for (; n != 0; n--, p += 64) {
    for (let i: usize = 0; i < 64; i += 4) store<u32>(W + i, bswap<u32>(load<u32>(p + i)));
    for (let i: usize = 64; i < 256; i += 4) {
      const a = load<u32>(W + i - 60), b = load<u32>(W + i - 8);
      const s0 = rotr<u32>(a, 7) ^ rotr<u32>(a, 18) ^ (a >>> 3);
      const s1 = rotr<u32>(b, 17) ^ rotr<u32>(b, 19) ^ (b >>> 10);
      store<u32>(W + i, load<u32>(W + i - 64) + s0 + load<u32>(W + i - 28) + s1);
    }
    let a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7;
    for (let i: usize = 0; i < 256; i += 4) {
      const t1 = h + (rotr<u32>(e, 6) ^ rotr<u32>(e, 11) ^ rotr<u32>(e, 25)) + (g ^ (e & (f ^ g))) + load<u32>(K + i) + load<u32>(W + i);
      const t2 = (rotr<u32>(a, 2) ^ rotr<u32>(a, 13) ^ rotr<u32>(a, 22)) + ((a & b) | (c & (a | b)));
      h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h0 += a; h1 += b; h2 += c; h3 += d; h4 += e; h5 += f; h6 += g; h7 += h;
  }
  store<u32>(st, h0); store<u32>(st, h1, 4); store<u32>(st, h2, 8); store<u32>(st, h3, 12);
  store<u32>(st, h4, 16); store<u32>(st, h5, 20); store<u32>(st, h6, 24); store<u32>(st, h7, 28);
}
