// Layer 1 benchmarks: Utf8Decoder against TextDecoder (stream: true), strict and replacing, and
// validation alone against TextDecoder({ fatal: true }) and Node's buffer.isUtf8 (simdutf).
import { isUtf8 } from 'node:buffer';
import { Utf8Decoder, Utf8Validator } from '../bindings/index.js';
import { asciiSse, chinese, chunked, emojiHeavy, mixed } from './corpus.js';
import { type BenchOptions, type Row, assertSame, compare } from './harness.js';

const SIZE = 1 << 20;
const enc = new TextEncoder();

export function utf8Corpora(): { name: string; bytes: Uint8Array }[] {
  const fit = (s: string) => enc.encode(s).subarray(0, SIZE); // a cut character at the very end is fine: both sides hold it
  return [
    { name: 'ASCII SSE', bytes: fit(asciiSse(SIZE)) },
    { name: 'Chinese', bytes: fit(chinese(SIZE / 3 + 16)) },
    { name: 'emoji', bytes: fit(emojiHeavy(SIZE / 3)) },
    { name: 'mixed', bytes: fit(mixed(SIZE / 1.5)) },
  ].map(({ name, bytes }) => {
    // end on a character boundary so that strict decoders agree on the whole corpus
    let end = bytes.length;
    while (end > 0 && (bytes[end - 1] & 0xc0) === 0x80) end--;
    if (end > 0 && bytes[end - 1] >= 0xc0) end--;
    return { name, bytes: bytes.subarray(0, end) };
  });
}

function drain(pieces: Uint8Array[], d: { push(c: Uint8Array): string; flush(): string }): number {
  let n = 0;
  for (const p of pieces) n += d.push(p).length;
  return n + d.flush().length;
}

function drainTd(pieces: Uint8Array[], td: TextDecoder): number {
  let n = 0;
  for (const p of pieces) n += td.decode(p, { stream: true }).length;
  return n + td.decode().length;
}

export function runUtf8Bench(opts: BenchOptions, log: (r: Row) => void = () => {}): Row[] {
  const rows: Row[] = [];
  const add = (r: Row) => { rows.push(r); log(r); };
  const corpora = utf8Corpora();
  for (const { name, bytes } of corpora) {
    for (const size of [64, 1024, 16384]) {
      const pieces = chunked(bytes, size);
      const ours = new Utf8Decoder();
      const td = new TextDecoder('utf-8', { fatal: true });
      assertSame(`utf8 ${name} ${size}`, pieces.map((p) => ours.push(p)).join('') + ours.flush(),
        pieces.map((p) => td.decode(p, { stream: true })).join('') + td.decode());
      add(compare({ layer: 'UTF-8', case: 'push (strict)', corpus: name, chunk: `${size} B`, peerName: 'TextDecoder fatal, stream' },
        bytes.length, () => drain(pieces, ours), () => drainTd(pieces, td), opts));
    }
  }
  const mix = corpora.find((c) => c.name === 'mixed')!;
  for (const size of [64, 16384]) {
    const pieces = chunked(mix.bytes, size);
    const ours = new Utf8Decoder({ fatal: false });
    const td = new TextDecoder();
    add(compare({ layer: 'UTF-8', case: 'push (replacing)', corpus: 'mixed', chunk: `${size} B`, peerName: 'TextDecoder, stream' },
      mix.bytes.length, () => drain(pieces, ours), () => drainTd(pieces, td), opts));
  }
  for (const { name, bytes } of corpora) {
    const pieces = chunked(bytes, 16384);
    const v = new Utf8Validator();
    const validate = () => { for (const p of pieces) v.push(p); v.flush(); };
    const td = new TextDecoder('utf-8', { fatal: true });
    add(compare({ layer: 'UTF-8', case: 'validate only', corpus: name, chunk: '16384 B', peerName: 'TextDecoder fatal, stream' },
      bytes.length, validate, () => drainTd(pieces, td), opts));
    // buffer.isUtf8 cannot carry a character across chunks; it is timed on the same pieces as
    // the ceiling of native SIMD validation, not as a streaming alternative.
    add(compare({ layer: 'UTF-8', case: 'validate only', corpus: name, chunk: '16384 B', peerName: 'buffer.isUtf8 (simdutf, no carry)' },
      bytes.length, validate, () => { for (const p of pieces) isUtf8(p); }, opts));
  }
  return rows;
}
