// A large OpenAI-shaped chat-completions stream for the browser tests, made from a seed: multilingual
// text (CJK, Cyrillic, Arabic, Devanagari conjuncts, Hangul jamo), emoji ZWJ sequences, flags and
// skin tones, combining marks and NFD text, JSON escapes; deltas cut every few code points, so
// clusters and characters are cut across events; keep-alive comments; a finish chunk, usage, [DONE].
import { rng } from '../helpers/random.js';

const pieces = [
  'the ', 'model ', 'stream ', 'token ', 'response ', 'boundary ', 'of ', 'and ', 'to ', 'in ',
  '世界', '的一是不了人我在有他', 'こんにちは', 'Привет мир ', 'مرحبا بالعالم ', 'क्षत्रिय ', 'नमस्ते ',
  '\u1100\u1161\u11a8', '한국어 ', '👩‍💻', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🇯🇵🇫🇷', '👍🏽', '❤️', '🤖',
  'cafe\u0301 ', 'A\u030a', 'e\u0301\u0302\u0323', 'n\u0303', 'straße ', 'Ω ', '\u0915\u094d\u0937',
  '"quoted" ', 'tab\there ', 'line\nbreak ', 'back\\slash ', '\u00e9', '\ud83d\ude00',
];

export interface HeavyStream {
  bytes: Uint8Array;
  events: number;
}

/** About `size` bytes of stream (it ends with whole events), the same bytes for the same seed. */
export function heavyStream(size: number, seed: number): HeavyStream {
  const r = rng(seed);
  const enc = new TextEncoder();
  const blocks: Uint8Array[] = [];
  let block = '';
  let total = 0;
  let events = 0;
  const head = '{"id":"chatcmpl-seam","object":"chat.completion.chunk","created":1764547200,"model":"m","choices":[{"index":0,"delta":{"content":';
  let carry: string[] = [];
  const flushBlock = () => {
    const b = enc.encode(block);
    blocks.push(b);
    total += b.length;
    block = '';
  };
  while (total + block.length * 3 < size) {
    // the text of a delta: 1-12 code points, taken from a run of pieces (so clusters are cut)
    while (carry.length < 12) carry.push(...Array.from(pieces[Math.floor(r() * pieces.length)]));
    const n = 1 + Math.floor(r() * 12);
    const delta = carry.slice(0, n).join('');
    carry = carry.slice(n);
    block += `data: ${head}${JSON.stringify(delta)}},"finish_reason":null}]}\n\n`;
    events++;
    if (r() < 0.01) block += ': keep-alive\n\n';
    if (block.length > 1 << 16) flushBlock();
  }
  block += `data: ${head}""},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":${events},"total_tokens":${events + 12}}}\n\n`;
  block += 'data: [DONE]\n\n';
  events += 2;
  flushBlock();
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const b of blocks) {
    bytes.set(b, at);
    at += b.length;
  }
  return { bytes, events };
}

/** Piece sizes for writing the stream: 1 B to 8 KiB, mostly small, from the seed. */
export function pieceSizes(length: number, seed: number): number[] {
  const r = rng(seed ^ 0x5eed);
  const out: number[] = [];
  for (let at = 0; at < length;) {
    const n = Math.min(length - at, r() < 0.3 ? 1 + Math.floor(r() * 64) : 1 + Math.floor(r() * 8192));
    out.push(n);
    at += n;
  }
  return out;
}
