// A strict ModelStream's report hashes its text from the UTF-8 the core logged as it gathered the
// deltas (ME_TEXT), not from the committed strings made UTF-8 again: from its first push after
// 1 KiB of committed text (before, and in one push, its strings). These tests hold that hash to
// Node's SHA-256 of the report's text (a lone surrogate as U+FFFD) and to the same stream read not
// strict (whose text layer hashes its strings), across the cases where the text's bytes and the
// committed strings part: NFC changing a piece, a pair of escapes split between two deltas, a lone
// surrogate at the very end, a failure, a refused delta, reset() and the core's memory.
import { expect, it } from 'vitest';
import { ModelStream, ModelStreamError, TextRangeError, coreMemoryUsed } from '../../bindings/index.js';
import { encodeMessage } from '../helpers/bedrock-fixtures.js';
import { SEED, cut, randomCuts, rng } from '../helpers/random.js';
import { LEAD, done, enc, ev, lead, logs, sha } from '../helpers/text-log.js';

function read(chunks: Uint8Array[], options: { fatal?: boolean; maxTextBytes?: number } = {}) {
  const m = new ModelStream({ format: 'openai', eof: 'allow', ...options });
  let out = '';
  for (const c of chunks) out += m.push(c);
  const route = logs(m); // (whether the log began: the flush's commit takes it too)
  out += m.flush();
  const r = m.finish();
  return { out, r, route };
}

// Each case: the deltas as JSON string literals, and the text they make (after NFC).
const CASES: [string, string[], string][] = [
  ['ASCII', ['"Hello"', '" world"'], 'Hello world'],
  ['escapes', ['"a\\"b\\\\c\\n"', '"\\u00e9\\u4e2d"', '"\\/"'], 'a"b\\c\né中/'],
  ['a pair of escapes in one delta', ['"x\\ud83d\\ude00y"'], 'x😀y'],
  ['a pair of escapes split between two deltas', ['"x\\ud83d"', '"\\ude00y"'], 'x😀y'],
  ['a pair split between two deltas, the second not escaped', ['"x\\ud83d"', '"\\ude00"', '"z"'], 'x😀z'],
  ['a lone high surrogate before text', ['"x\\ud83d"', '"y"'], 'x\ud83dy'],
  ['a lone high surrogate before a high surrogate', ['"\\ud83d"', '"\\ud83d\\ude00"'], `${String.fromCharCode(0xd83d)}😀`], // (not one literal: Deno's parser refuses esbuild's "\uD83D\u{1F600}")
  ['a lone low surrogate', ['"a\\ude00b"'], 'a\ude00b'],
  ['a lone high surrogate at the very end', ['"ab"', '"\\ud83d"'], 'ab\ud83d'],
  ['NFC changes a piece in the middle', ['"Hello "', '"cafe\\u0301"', '" and more"', `"${'x'.repeat(3000)}"`], `Hello café and more${'x'.repeat(3000)}`],
  ['NFC changes the last piece', ['"abc"', '"e"', '"\\u0301"'], 'abcé'],
  ['two-byte and four-byte text past the hash batch', Array.from({ length: 200 }, (_, i) => `"${i % 3 ? 'héllo wörld ' : '中文 😀 '}"`),
    Array.from({ length: 200 }, (_, i) => (i % 3 ? 'héllo wörld ' : '中文 😀 ')).join('')],
];

it('the report\'s SHA-256 is Node\'s of its text, whole, at every split and dripped, as the stream read not strict gives it', () => {
  for (const [name, deltas, text] of CASES) {
    const rest = new Uint8Array([...deltas.flatMap((d) => [...ev(d)]), ...done]);
    const body = new Uint8Array([...lead, ...rest]);
    const want = LEAD + text;
    // every cut after the lead (every 29th in the long case: the log begins at the push after it,
    // before the case's deltas, in their middle, or not at all), the lead alone and the rest
    // dripped, the whole in one push
    const step = rest.length < 2000 ? 1 : 29;
    const splits = Array.from({ length: Math.ceil(rest.length / step) }, (_, k) => [body.subarray(0, lead.length + k * step), body.subarray(lead.length + k * step)]);
    const drip = [lead, ...Array.from(rest, (b) => new Uint8Array([b]))];
    for (const chunks of [drip, ...splits, [body]]) {
      const { out, r, route } = read(chunks);
      expect([out, r.text, r.status, r.utf8Bytes], name).toEqual([want, want, 'done', new TextEncoder().encode(want).length]);
      expect(r.sha256, name).toBe(sha(want));
    }
    expect(read(drip).route, name).toBe(true);
    expect(read([lead, rest]).route, name).toBe(true);
    expect(read([body]).route, name).toBe(false); // (one push: the strings)
    const loose = read(drip, { fatal: false });
    expect(loose.route, name).toBe(false);
    expect([loose.r.text, loose.r.sha256], name).toEqual([want, sha(want)]);
  }
});

it('generated deltas (escapes, pairs split anywhere, lone surrogates, marks NFC moves), cut at random: the hash of the text', () => {
  const r = rng(SEED);
  const atoms = ['a', ' ', 'é', 'e\u0301', '\u0301', '中', '😀', '\ud83d', '\ude00', '"', '\\', '\n', 'क्ष', '👩‍💻', 'x'.repeat(700)];
  for (let s = 0; s < 200; s++) {
    let deltas = '';
    let lits: string[] = [];
    const n = 1 + Math.floor(r() * 12);
    for (let i = 0; i < n; i++) {
      let t = '';
      for (let k = Math.floor(r() * 4); k >= 0; k--) t += atoms[Math.floor(r() * atoms.length)];
      deltas += t;
      // each unit escaped at random (a lone surrogate must be), else as it is
      let lit = '"';
      for (const u of t.split('')) {
        const c = u.charCodeAt(0);
        if ((c >= 0xd800 && c <= 0xdfff) || c < 0x20 || u === '"' || u === '\\' || r() < 0.2) lit += `\\u${c.toString(16).padStart(4, '0')}`;
        else lit += u;
      }
      lits.push(`${lit}"`);
    }
    const body = new Uint8Array([...(s % 4 ? lead : []), ...lits.flatMap((d) => [...ev(d)]), ...done]);
    const where = `seed ${SEED}, stream ${s}: ${JSON.stringify(lits)}`;
    const want = ((s % 4 ? LEAD : '') + deltas).normalize('NFC');
    for (const chunks of [[body], cut(body, randomCuts(body, r, 40))]) {
      const { r: report } = read(chunks);
      expect([report.text, report.sha256], where).toEqual([want, sha(want)]);
    }
    lits = [];
  }
});

it('a failure, a refused delta and reset(): the report hashes the text it has; the core\'s copy of the text goes back', () => {
  const before = coreMemoryUsed();
  // a failure after text: the text before it, hashed
  {
    const m = new ModelStream({ format: 'openai' });
    let out = m.push(lead);
    out += m.push(ev('"Hello, wörld "'));
    expect(logs(m)).toBe(true);
    out += m.push(ev(`"${'中'.repeat(600)}"`));
    expect(() => m.push(enc('data: {"choices":[{"index":0,"delta":{"content":"\\q"}}]}\n\n'))).toThrow(ModelStreamError);
    const r = m.finish();
    expect(r.status).toBe('failed');
    expect(r.text.startsWith(out)).toBe(true);
    expect(r.text).toBe(`${LEAD}Hello, wörld ${'中'.repeat(600)}`);
    expect(r.sha256).toBe(sha(r.text));
    m.dispose();
  }
  // bad UTF-8 inside a read, after a delta: the same
  {
    const m = new ModelStream({ format: 'openai' });
    m.push(lead);
    m.push(ev('"one é "'));
    expect(logs(m)).toBe(true);
    const bad = new Uint8Array([...ev('"two"'), 0xff, ...ev('"three"')]);
    expect(() => m.push(bad)).toThrow(ModelStreamError);
    const r = m.finish();
    expect(r.sha256).toBe(sha(r.text));
    expect(r.text.startsWith(`${LEAD}one é `)).toBe(true);
    m.dispose();
  }
  // a delta past maxTextBytes: the stream stops before it, and the report's hash is of the text before it
  {
    const m = new ModelStream({ format: 'openai', maxTextBytes: LEAD.length + 40 });
    let out = m.push(lead);
    out += m.push(ev('"0123456789 é"'));
    expect(logs(m)).toBe(true);
    const e = (() => { try { m.push(ev(`"${'x'.repeat(50)}"`)); } catch (x) { return x; } })() as ModelStreamError;
    expect([e instanceof ModelStreamError, e.code, e.text]).toEqual([true, 'ERR_TEXT_TOO_LONG', 'é']);
    expect(logs(m)).toBe(false);
    out += e.text;
    const r = m.finish();
    const want = `${LEAD}0123456789 é`;
    expect([out, r.text, r.status, r.sha256]).toEqual([want, want, 'failed', sha(want)]);
    // reset(): the next stream's text goes through the core again
    m.reset();
    expect(m.push(lead) + m.push(ev('"again \\ud83d"')) + m.push(ev('"\\ude00"')) + m.push(done) + m.flush()).toBe(`${LEAD}again 😀`);
    expect(logs(m)).toBe(true);
    expect(m.finish().sha256).toBe(sha(`${LEAD}again 😀`));
    m.dispose();
  }
  expect(coreMemoryUsed()).toBe(before);
});

it('the core holds the text\'s bytes only until they are hashed: a long stream\'s memory stays that of a short one', () => {
  const m = new ModelStream({ format: 'openai' });
  m.push(lead);
  m.push(ev('"warm up"'));
  expect(logs(m)).toBe(true);
  const start = m.retainedBytes;
  let most = 0;
  const one = (i: number) => (i % 2 ? 'héllo wörld, ' : 'the quick brown fox ');
  for (let i = 0; i < 2000; i++) {
    m.push(ev(`"${one(i)}"`));
    most = Math.max(most, m.retainedBytes);
  }
  expect(most - start).toBeLessThan(1024); // (the 512 bytes the hash waits for, the held cluster, the buffer's room)
  // a read of much text: its bytes are held until hashed, and the large buffer goes back after
  const many = new Uint8Array(Array.from({ length: 400 }, (_, i) => [...ev(`"${one(i)}"`)]).flat());
  m.push(many);
  m.push(ev('"after"'));
  expect(m.retainedBytes - start).toBeLessThan(1024);
  m.push(done);
  m.flush();
  expect(m.retainedBytes).toBe(0);
  const all = (n: number) => Array.from({ length: n }, (_, i) => one(i)).join('');
  const want = `${LEAD}warm up${all(2000)}${all(400)}after`;
  expect(m.finish().sha256).toBe(sha(want));
});

it('Bedrock and Claude on Bedrock hash the text the core logged from their frames and base64', () => {
  const text = [LEAD, 'Hi ', 'wörld ', '😀', ' 中文'];
  const converse = [
    encodeMessage({ event: 'messageStart', payload: JSON.stringify({ role: 'assistant' }) }),
    ...text.map((t) => encodeMessage({ event: 'contentBlockDelta', payload: JSON.stringify({ contentBlockIndex: 0, delta: { text: t } }) })),
    encodeMessage({ event: 'contentBlockStop', payload: JSON.stringify({ contentBlockIndex: 0 }) }),
    encodeMessage({ event: 'messageStop', payload: JSON.stringify({ stopReason: 'end_turn' }) }),
  ];
  const inner = (e: unknown) => btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(e))));
  const invoke = [
    { type: 'message_start', message: { id: 'm', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 1, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ...text.map((t) => ({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } })),
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 4 } },
    { type: 'message_stop' },
  ].map((e) => encodeMessage({ event: 'chunk', payload: JSON.stringify({ bytes: inner(e) }) }));
  for (const [format, msgs] of [['bedrock', converse], ['bedrock-invoke', invoke]] as const) {
    const all = new Uint8Array(msgs.flatMap((x) => [...x]));
    for (const chunks of [msgs, [all], Array.from(all, (b) => new Uint8Array([b]))]) {
      const m = new ModelStream({ format });
      let out = '';
      for (const c of chunks) out += m.push(c);
      expect(logs(m), format).toBe(chunks.length > 1);
      out += m.flush();
      const r = m.finish();
      expect([out, r.status, r.sha256], format).toEqual([text.join(''), 'done', sha(text.join(''))]);
    }
  }
});
