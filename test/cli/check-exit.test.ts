// check's exit code is the code of the first problem that would stop decode (else 8 for the
// tolerated ones, 0 when clean). Over damaged streams of every model format
// (test/helpers/damaged-streams.ts), check's Checker (in process, fed in random pieces) exits with
// what decode exits with: the code of the error its ModelStream stops with, or 0 when the stream
// reads to its completion (an error after the completion is in what decode does not read: see
// after-completion.test.ts), where check may exit 8. This orders problems by where decode would
// stop at them: a bad event's JSON at its end (after any invalid UTF-8 in it), an event or a
// character the stream ends inside at the end. One case in five has small limits of event and
// line bytes, one in six a small limit of text bytes. Whole and cut, check lists the same problems (the first by offset, up to its limit)
// and counts as many problems, lines and events. Seeded: the seed and the stream are
// printed on failure.
import { expect, test } from 'vitest';
import { ModelStream, ModelStreamError } from '../../bindings/index.js';
import { Checker } from '../../cli/check.js';
import { exitCodeOf } from '../../cli/errors.js';
import { PlainStream } from '../../cli/stream.js';
import { SOURCES, damage } from '../helpers/damaged-streams.js';
import { SEED, cut, randomCuts, rng } from '../helpers/random.js';

const dec = new TextDecoder();
const limits = { maxEventBytes: 16 << 20, maxLineBytes: 16 << 20, maxTextBytes: 256 << 20 } as ConstructorParameters<typeof Checker>[1];

test(`check exits with the code decode exits with, on damaged streams of every format (seed ${SEED})`, () => {
  const r = rng(SEED + 11);
  const seen = new Set<number>();
  for (let k = 0; k < 4000; k++) {
    const src = SOURCES[Math.floor(r() * SOURCES.length)];
    const bytes = r() < 0.1 ? src.bytes : damage(r, src.bytes);
    // (one case in five with a small limit of event and line bytes, which both pass)
    const small = r() < 0.2 ? 100 + Math.floor(r() * 400) : undefined;
    // (and one in six with a small limit of text bytes)
    const text = r() < 0.17 ? 4 + Math.floor(r() * 120) : undefined;
    let lim = small === undefined ? limits : { ...limits, maxEventBytes: small, maxLineBytes: small };
    if (text !== undefined) lim = { ...lim, maxTextBytes: text };
    const m = new ModelStream({
      format: src.format as 'openai', ...(src.choice === undefined ? {} : { choice: src.choice }), ...(small === undefined ? {} : { maxEventBytes: small }),
      ...(text === undefined ? {} : { maxTextBytes: text }),
    });
    let decode = 0;
    try {
      m.push(bytes);
      m.flush();
    } catch (e) {
      if (!(e instanceof ModelStreamError)) throw e;
      if (m.status !== 'done') decode = exitCodeOf(e);
    }
    // (check lists at most maxListed problems, the first by offset; the exit code is over all of them)
    const listed = 1 + Math.floor(r() * 3);
    const checked = (pieces: Uint8Array[]) => {
      const c = new Checker(src.format as 'openai', lim, src.choice ?? 0, listed);
      for (const piece of pieces) c.push(piece);
      c.end();
      c.markAfterCompletion();
      return { exit: c.exitCode(), problems: c.problems.map((p) => `${p.kind}@${p.offset}${p.afterCompletion ? ' after' : ''}`), count: c.problemCount, lines: c.lines, events: c.events };
    };
    const whole = checked([bytes]);
    const got = checked(cut(bytes, randomCuts(bytes, r, 1 + Math.floor(r() * 64))));
    const why = `seed ${SEED}, case ${k}: ${src.name} (${src.format})${small === undefined ? '' : `, limit ${small}`}${text === undefined ? '' : `, text limit ${text}`}, problems ${JSON.stringify(got)}: ${JSON.stringify(dec.decode(bytes)).slice(0, 3000)}`;
    if (decode === 0) expect([0, 8], why).toContain(got.exit);
    else expect(got.exit, why).toBe(decode);
    // and check says the same whole and cut: the same problems listed, and as many
    expect(got, why).toEqual(whole);
    seen.add(decode);
  }
  // (every way decode ends is among the cases: complete, invalid UTF-8, truncated, provider, bad event)
  expect([...seen].sort()).toEqual([0, 2, 3, 4, 5, 6]);
});

test('a JSON body after a BOM or white space: check says the same whole and at every cut, as decode does', () => {
  const body = '{"error":{"message":"overloaded","type":"server_error"}}';
  for (const lead of ['\uFEFF', '\n\n', '\uFEFF \r\n']) {
    const bytes = new TextEncoder().encode(lead + body);
    for (const maxEventBytes of [16 << 20, bytes.length - lead.length, body.length - 1]) {
      const checked = (pieces: Uint8Array[]) => {
        const c = new Checker('openai', { ...limits, maxEventBytes }, 0, 10);
        for (const p of pieces) c.push(p);
        c.end();
        return { exit: c.exitCode(), problems: c.problems.map((p) => `${p.kind}@${p.offset}`), lines: c.lines };
      };
      const whole = checked([bytes]);
      expect(whole.exit, JSON.stringify(lead)).toBe(maxEventBytes === body.length - 1 ? 4 : 5);
      for (let at = 1; at < bytes.length; at++) expect(checked(cut(bytes, [at])), `${JSON.stringify(lead)} cut at ${at}, limit ${maxEventBytes}`).toEqual(whole);
    }
  }
});

test('a first line after a BOM, of a field name and no colon, is named whole', () => {
  const c = new Checker('sse', limits, 0, 10);
  c.push(new TextEncoder().encode('\uFEFFx\ndata: a\n\n'));
  c.end();
  expect(c.problems.map((p) => p.message)).toEqual(['unknown field "x" (ignored by clients)']);
});

test('plain text past --max-text-bytes stops at the same character whatever the reads, and check names its byte', () => {
  const text = 'Hello wörld, café 👩\u200d💻 and 🇳🇴 more text here\n'; // (NFC already: what decode prints is a prefix of it)
  const bytes = new TextEncoder().encode(text);
  const decoded = (pieces: Uint8Array[], maxTextBytes: number) => {
    const s = new PlainStream({ format: 'text', fatal: true, maxTextBytes });
    let out = '';
    let code = 0;
    try {
      for (const p of pieces) out += s.push(p);
      out += s.flush();
    } catch (e) {
      out += (e as { text?: string }).text ?? '';
      code = exitCodeOf(e);
    }
    return { out, code };
  };
  for (const max of [1, 5, 12, 20, 33, 40, bytes.length - 1, bytes.length]) {
    const whole = decoded([bytes], max);
    expect(whole.code, `limit ${max}`).toBe(max >= bytes.length ? 0 : 4);
    expect(new TextEncoder().encode(whole.out).length, `limit ${max}`).toBeLessThanOrEqual(max);
    for (let at = 1; at < bytes.length; at++) expect(decoded(cut(bytes, [at]), max), `limit ${max}, cut at ${at}`).toEqual(whole);
    expect(decoded(Array.from(bytes, (_, i) => bytes.subarray(i, i + 1)), max), `limit ${max}, dripped`).toEqual(whole);
    const checked = (pieces: Uint8Array[]) => {
      const c = new Checker('text', { ...limits, maxTextBytes: max }, 0, 10);
      for (const p of pieces) c.push(p);
      c.end();
      return { exit: c.exitCode(), problems: c.problems.map((p) => `${p.kind}@${p.offset}`) };
    };
    const all = checked([bytes]);
    expect(all.exit, `check, limit ${max}`).toBe(whole.code === 4 ? 4 : 0);
    // where the text stops: at the character after the cluster held back past what decode printed
    // (the one whose push would commit that cluster)
    if (whole.code === 4) {
      const held = [...new Intl.Segmenter().segment(text.slice(whole.out.length))][0].segment;
      expect(all.problems, `check, limit ${max}`).toEqual([`limit@${new TextEncoder().encode(whole.out + held).length}`]);
    }
    for (let at = 1; at < bytes.length; at += 3) expect(checked(cut(bytes, [at])), `check, limit ${max}, cut at ${at}`).toEqual(all);
  }
});

test("the library's own bounds on what a model stream keeps (arguments, reasoning) exit 4, as every limit does", () => {
  const oa = (delta: unknown) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
  const cases = [
    { options: { maxArgumentBytes: 4 }, body: oa({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }), code: 'ERR_ARGUMENTS_TOO_LARGE' },
    { options: { maxReasoningBytes: 4 }, body: oa({ reasoning_content: 'thinking' }), code: 'ERR_REASONING_TOO_LONG' },
  ];
  for (const c of cases) {
    const m = new ModelStream({ format: 'openai', ...c.options });
    const e = (() => {
      try {
        m.push(new TextEncoder().encode(c.body));
      } catch (x) {
        return x;
      }
      return undefined;
    })();
    expect(e).toBeInstanceOf(ModelStreamError);
    expect((e as ModelStreamError).code).toBe(c.code);
    expect(exitCodeOf(e), c.code).toBe(4);
  }
});
