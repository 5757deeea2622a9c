// The report's SHA-256 through the core's block function (bindings/text/core-hash.ts), what the
// text layer of a model stream uses where the runtime has no native hash (browsers, workerd),
// against Node's: every length around the block boundaries, any cutting of the text into updates,
// text longer than the hash window, hashes interleaved with each other and with a model stream's
// reads. The browser and workerd suites check the same end to end: a model stream's report there
// (hashed by the core) against Node's.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { getCore } from '../../bindings/core/wasm.js';
import { HASH_CAP } from '../../bindings/core/generated/abi.js';
import { ModelStream } from '../../bindings/index.js';
import { coreHasher } from '../../bindings/text/core-hash.js';
import { SEED, rng } from '../helpers/random.js';

const node = (pieces: string[]): string => {
  const h = createHash('sha256');
  for (const p of pieces) h.update(p, 'utf8');
  return h.digest('hex');
};
const core = (pieces: string[]): string => {
  const h = coreHasher(getCore());
  for (const p of pieces) h.update(p);
  return h.digest();
};

/** Text of `n` units from a seeded mix: ASCII, two- and three-byte characters, pairs, lone surrogates. */
function text(next: () => number, n: number): string {
  const kinds = ['a', 'z', ' ', '\n', 'é', 'ß', 'Ж', '世', '界', '€', '\u{1F600}', '\u{1F469}\u200D\u{1F4BB}', '\ud800', '\udfff'];
  let s = '';
  while (s.length < n) s += kinds[Math.floor(next() * kinds.length)];
  return s.slice(0, n);
}

describe(`the core's SHA-256 against Node's (seed ${SEED}; SEAM_SEED replays)`, () => {
  it('known digests: the empty text, "abc", and the 56-byte text of FIPS 180-4', () => {
    expect(core([])).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(core(['abc'])).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(core(['abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'])).toBe('248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
  });

  it('a hash that gave its digest refuses more text and a second digest, as Node\'s does', () => {
    const h = coreHasher(getCore());
    h.update('abc');
    expect(h.digest()).toBe(node(['abc']));
    expect(() => h.update('d')).toThrow('gave its digest');
    expect(() => h.digest()).toThrow('gave its digest');
  });

  it('every length of ASCII from 0 to 300 bytes (every padding case), whole and cut in two everywhere', () => {
    const s = 'The quick brown fox jumps over the lazy dog. '.repeat(7).slice(0, 300);
    for (let n = 0; n <= 300; n++) {
      const t = s.slice(0, n);
      const want = node([t]);
      expect(core([t]), `${n} bytes`).toBe(want);
      for (let cut = 0; cut <= n; cut += n > 80 ? 7 : 1) expect(core([t.slice(0, cut), t.slice(cut)]), `${n} bytes cut at ${cut}`).toBe(want);
    }
  });

  it('seeded mixed text in random updates, a one-unit drip, and every cut of a short text, as Node hashes the same updates', () => {
    const next = rng(SEED + 71);
    for (let k = 0; k < 60; k++) {
      const t = text(next, Math.floor(next() * 700));
      const pieces: string[] = [];
      for (let at = 0; at < t.length;) {
        const n = 1 + Math.floor(next() * 90);
        pieces.push(t.slice(at, at + n));
        at += n;
      }
      expect(core(pieces), `text ${k}`).toBe(node(pieces));
      expect(core(pieces), `text ${k}`).toBe(node(pieces));
    }
    const t = text(next, 150);
    expect(core([...t])).toBe(node([...t]));
    for (let cut = 0; cut <= t.length; cut++) expect(core([t.slice(0, cut), t.slice(cut)]), `cut at ${cut}`).toBe(node([t.slice(0, cut), t.slice(cut)]));
  });

  it(`text longer than the hash window (${HASH_CAP} bytes), in one update and in pieces`, () => {
    const next = rng(SEED + 72);
    const t = text(next, 3 * HASH_CAP + 1234); // (about 6–7 windows of UTF-8)
    expect(core([t])).toBe(node([t]));
    const pieces = [t.slice(0, 17), t.slice(17, 2 * HASH_CAP), t.slice(2 * HASH_CAP)];
    expect(core(pieces)).toBe(node(pieces));
  });

  it('bytes (a model stream\'s text, which the core logged as UTF-8) from the core\'s memory and from a plain array, mixed with text, past the window, as Node hashes them', () => {
    const next = rng(SEED + 74);
    const c = getCore();
    for (let k = 0; k < 40; k++) {
      const t = text(next, k === 0 ? 3 * HASH_CAP : Math.floor(next() * 900));
      const utf8 = new TextEncoder().encode(t);
      const h = coreHasher(c);
      const want = createHash('sha256');
      for (let at = 0; at < utf8.length;) {
        const n = 1 + Math.floor(next() * (k === 0 ? 2 * HASH_CAP : 200));
        const part = utf8.subarray(at, at + n);
        if (next() < 0.3) {
          const s = new TextDecoder().decode(part); // (a text update between the bytes: whole characters only where it cut none)
          if (new TextEncoder().encode(s).length === part.length && !s.includes('\ufffd')) {
            h.update(s);
            want.update(s, 'utf8');
            at += n;
            continue;
          }
        }
        if (next() < 0.5) {
          // a view of the core's memory, as the model stream hands it over (below the hash window: the scratch area of a model call)
          const p = c.x.modelScratch(part.length);
          c.sync();
          c.u8.set(part, p);
          h.updateBytes(c.u8.subarray(p, p + part.length));
          c.x.modelScratchFree();
        } else {
          h.updateBytes(part);
        }
        want.update(part);
        at += n;
      }
      expect(h.digest(), `text ${k}`).toBe(want.digest('hex'));
    }
  });

  it('hashes interleaved with one another and with a model stream\'s reads keep their own state', () => {
    const next = rng(SEED + 73);
    const texts = [text(next, 5000), text(next, 3000), text(next, 7000)];
    const hashers = texts.map(() => coreHasher(getCore()));
    const fed: string[][] = texts.map(() => []);
    const m = new ModelStream({ format: 'openai' });
    const enc = new TextEncoder();
    let said = '';
    for (let at = 0; at < 7000; at += 100) {
      texts.forEach((t, i) => {
        if (at >= t.length) return;
        hashers[i].update(t.slice(at, at + 100));
        fed[i].push(t.slice(at, at + 100));
      });
      const delta = `Grüße ${at} `;
      said += delta;
      m.push(enc.encode(`data: {"choices":[{"index":0,"delta":{"content":${JSON.stringify(delta)}}}]}\n\n`));
    }
    m.push(enc.encode('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'));
    m.flush();
    texts.forEach((_, i) => expect(hashers[i].digest(), `text ${i}`).toBe(node(fed[i])));
    const r = m.finish();
    expect(r.text).toBe(said);
    expect(r.sha256).toBe(node([said]));
  });
});
