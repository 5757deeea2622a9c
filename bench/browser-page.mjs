// Runs inside the browser page (plain JS, served as is): Utf8Decoder and SseParser against
// TextDecoder (+ a minimal SSE split) on the same seeded text, interleaved, medians.
export async function run() {
  const m = await import('/dist/index.js');
  const rnd = ((a) => () => ((a = (a * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff))(5);
  const words = 'the model stream token response delta content chunk network boundary'.split(' ');
  const emoji = ['😀', '🙏🏽', '👩‍💻', '🇯🇵', '✨', '🚀'];
  const corpora = {
    ASCII: () => words[Math.floor(rnd() * words.length)] + ' ',
    Chinese: () => String.fromCodePoint(0x4e00 + Math.floor(rnd() * 0x5000)),
    mixed: () => {
      const x = rnd();
      return x < 0.6 ? words[Math.floor(rnd() * words.length)] + ' ' : x < 0.85 ? '世界' : x < 0.95 ? emoji[Math.floor(rnd() * emoji.length)] + ' ' : 'é';
    },
  };
  const enc = new TextEncoder();
  const median = (a) => a.sort((x, y) => x - y)[a.length >> 1];
  const rows = [];
  for (const [name, gen] of Object.entries(corpora)) {
    let s = '';
    while (s.length < (1 << 19)) s += gen();
    const bytes = enc.encode(s);
    for (const size of [64, 16384]) {
      const pieces = [];
      for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.subarray(i, i + size));
      const d = new m.Utf8Decoder();
      const td = new TextDecoder('utf-8', { fatal: true });
      const ours = () => { let n = 0; for (const p of pieces) n += d.push(p).length; return n + d.flush().length; };
      const peer = () => { let n = 0; for (const p of pieces) n += td.decode(p, { stream: true }).length; return n + td.decode().length; };
      if (ours() !== peer()) throw new Error('outputs differ');
      const a = [], b = [];
      for (let r = 0; r < 15; r++) {
        let t = performance.now(); ours(); a.push(performance.now() - t);
        t = performance.now(); peer(); b.push(performance.now() - t);
      }
      rows.push({ corpus: name, chunk: size, seam: bytes.length / median(a) / 1e3, peer: bytes.length / median(b) / 1e3 });
    }
  }
  return { backend: m.wasmBackend(), ua: navigator.userAgent, rows };
}
