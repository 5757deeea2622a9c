// Seeded corpora for benchmarks and the demo. The same seed gives the same bytes on every run.

/** mulberry32: small, fast, deterministic. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const words = ('the of and to in is that for it as with was on be by this are or from at an which but not have '
  + 'model stream token response delta content chunk network boundary character event line server').split(' ');
const pick = <T>(r: () => number, a: readonly T[]): T => a[Math.floor(r() * a.length)];
const cjk = (r: () => number) => String.fromCodePoint(0x4e00 + Math.floor(r() * 0x5000));
const emojiSeqs = ['😀', '🙏🏽', '👩‍💻', '🇯🇵', '❤️', '🎉', '👍🏻', '🚀', '🤖', '🧠', '👨‍👩‍👧‍👦', '🏳️‍🌈', '✨', '🔥'];
const emoji = (r: () => number) => (r() < 0.5 ? pick(r, emojiSeqs) : String.fromCodePoint(0x1f300 + Math.floor(r() * 0x300)));
const accented = ['é', 'ü', 'ñ', 'ç', 'ø', 'ß', 'à', 'ô'];

/** English prose as an OpenAI-shaped SSE stream: ASCII only. */
export function asciiSse(bytes: number, seed = 1): string {
  const r = prng(seed);
  let s = '';
  let i = 0;
  while (s.length < bytes) {
    let delta = '';
    const n = 1 + Math.floor(r() * 4);
    for (let k = 0; k < n; k++) delta += pick(r, words) + ' ';
    s += `data: {"id":"chatcmpl-${i++}","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":${JSON.stringify(delta)}}}]}\n\n`;
  }
  return s;
}

/** Chinese prose with CJK punctuation: nearly all 3-byte characters. */
export function chinese(chars: number, seed = 2): string {
  const r = prng(seed);
  let s = '';
  for (let i = 0; i < chars; i++) s += r() < 0.08 ? pick(r, ['，', '。', '、', '：']) : cjk(r);
  return s;
}

/** Emoji-heavy text: emoji (4-byte, ZWJ sequences, flags, modifiers) with a few spaces. */
export function emojiHeavy(chars: number, seed = 3): string {
  const r = prng(seed);
  let s = '';
  while (s.length < chars) s += r() < 0.15 ? ' ' : emoji(r);
  return s;
}

/** A multilingual chat: mostly English, with Chinese, emoji and accented letters mixed in. */
export function mixed(chars: number, seed = 4): string {
  const r = prng(seed);
  let s = '';
  while (s.length < chars) {
    const x = r();
    if (x < 0.6) s += pick(r, words) + ' ';
    else if (x < 0.85) s += cjk(r) + cjk(r);
    else if (x < 0.95) s += emoji(r) + ' ';
    else s += pick(r, accented);
  }
  return s;
}

/** Cuts bytes into pieces of `size` (the last may be shorter), as network reads would arrive. */
export function chunked(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

/** Reads split so that each holds exactly `per` events (the pattern real APIs flush). */
export function perEvent(bytes: Uint8Array, per: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let start = 0;
  let seen = 0;
  for (let i = 0; i + 1 < bytes.length; i++) {
    if (bytes[i] === 10 && bytes[i + 1] === 10) {
      if (++seen === per) {
        out.push(bytes.subarray(start, i + 2));
        start = i + 2;
        seen = 0;
      }
      i++;
    }
  }
  if (start < bytes.length) out.push(bytes.subarray(start));
  return out;
}
