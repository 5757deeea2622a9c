// The model-stream fixtures checked before they check anything: what each fixture says a reader
// gets (written by hand) equals what the reference reader computes from its bytes, the reference's
// SSE scanner agrees with eventsource-parser, every offset points where it says, and the text
// oracle (TextAssembler over the deltas) does not depend on how the deltas are grouped.
import { describe, expect, test } from 'vitest';
import { TextAssembler } from '../../bindings/index.js';
import { FIXTURES, FORMATS, eventsourceParse, jsonErrorAt, reference, scanSseBody } from '../helpers/model-fixtures.js';

const dec = new TextDecoder();
const isSse = (format: string) => format === 'openai' || format === 'openai-responses' || format === 'anthropic' || format === 'gemini';

describe.each(FIXTURES.map((f) => [f.name, f] as const))('fixture %s', (_, f) => {
  const ref = reference(f.body, f.format, f.choice);

  test('the hand-written results equal the reference reading of the bytes', () => {
    const e = f.expected;
    expect(ref.text).toBe(e.text);
    expect(ref.reasoning).toBe(e.reasoning);
    expect(ref.status).toBe(e.status);
    expect(ref.finishReason).toBe(e.finishReason);
    expect(ref.usage).toEqual(e.usage);
    expect(ref.events).toBe(e.events);
    expect(ref.comments).toEqual(e.comments);
    expect(ref.toolCalls).toEqual(e.toolCalls ?? []);
    expect(ref.serverToolCalls).toEqual(e.serverToolCalls ?? []);
    expect(ref.signatures).toEqual(e.signatures ?? []);
    expect(ref.groundedSpans).toEqual(e.groundedSpans);
    if (e.status === 'done') {
      expect(e.error).toBeUndefined();
      expect(ref.error).toBeUndefined();
    } else {
      expect(ref.error?.code).toBe(e.error?.code);
      expect(ref.error?.offset).toBe(e.error?.offset);
      expect(e.error!.code === 'ERR_PROVIDER').toBe(e.error!.message !== undefined);
      if (e.error!.message !== undefined) expect(ref.error!.message).toContain(e.error!.message);
      if (e.error!.providerCode !== undefined) expect(ref.error!.providerCode).toBe(e.error!.providerCode);
      expect(e.status).toBe(e.error!.code === 'ERR_STREAM_TRUNCATED' ? 'truncated' : 'failed');
    }
  });

  test('the bytes are the body in UTF-8, and the frames sit where the reference says', () => {
    expect(dec.decode(f.bytes)).toBe(f.body);
    let prev = 0;
    for (const fr of ref.frames) {
      expect(fr.start).toBeGreaterThanOrEqual(prev);
      expect(fr.dataStart).toBeGreaterThanOrEqual(fr.start);
      expect(fr.end).toBeGreaterThan(fr.dataEnd - (fr.atFlush ? 1 : 0));
      if (fr.kind === 'event') expect(dec.decode(f.bytes.subarray(fr.dataStart, fr.dataEnd))).toBe(fr.data);
      if (fr.crlf) expect([...f.bytes.subarray(fr.end - 2, fr.end)]).toEqual([13, 10]);
      if (fr.atFlush) expect(fr.end).toBe(f.bytes.length);
      for (const lit of fr.literals) expect(fr.data).toContain(lit);
      if (fr.literals.length) expect(fr.literals.map((l) => JSON.parse(l) as string).join('')).toBe(fr.text);
      prev = fr.end;
    }
    if (f.expected.error && f.expected.error.code !== 'ERR_STREAM_TRUNCATED' && !ref.plainBody) {
      const last = ref.frames[ref.frames.length - 1];
      expect(last.role).toBe(f.expected.error.code === 'ERR_PROVIDER' ? 'error' : 'bad');
      const off = f.expected.error.offset;
      expect(off).toBeGreaterThanOrEqual(last.dataStart);
      expect(off).toBeLessThanOrEqual(last.dataEnd);
      if (f.expected.error.code === 'ERR_BAD_EVENT') {
        // the bytes before the offset are a prefix of some valid JSON, the byte at it is where that stops
        const bad = jsonErrorAt(last.data)!;
        expect(bad).not.toBeNull();
        expect(last.dataStart + new TextEncoder().encode(last.data.slice(0, bad.at)).length).toBe(off);
        expect(() => JSON.parse(last.data)).toThrow(SyntaxError);
      }
    }
    if (ref.plainBody) expect(() => JSON.parse(f.body)).not.toThrow();
  });

  test.runIf(isSse(f.format) && !ref.plainBody)('the SSE scanner reads the events and comments eventsource-parser reads', () => {
    expect(scanSseBody(f.body)).toEqual(eventsourceParse(f.body));
  });

  test('the text oracle: TextAssembler over the deltas one by one, or joined, commits the same; the end is NFC of the raw text', () => {
    const deltas = ref.frames.map((fr) => fr.text).filter((t) => t !== '');
    const one = new TextAssembler();
    const joined = new TextAssembler();
    const pieces = deltas.map((d) => one.push(d));
    const all = joined.push(deltas.join(''));
    expect(pieces.join('')).toBe(all);
    const a = one.finish();
    const b = joined.finish();
    expect(a).toEqual(b);
    expect(a.text).toBe(f.expected.text.normalize('NFC'));
  });
});

describe('the fixture set', () => {
  const by = (format: string) => FIXTURES.filter((f) => f.format === format).map((f) => ({ f, ref: reference(f.body, f.format, f.choice) }));

  test.each(FORMATS)('%s: a normal stream, an error mid-stream, a plain error body, a truncated stream, a bad event where the format has JSON per frame', (format) => {
    const set = by(format);
    expect(set.some(({ ref }) => ref.status === 'done')).toBe(true);
    expect(set.some(({ ref }) => ref.error?.code === 'ERR_PROVIDER' && !ref.plainBody && ref.text !== '')).toBe(true);
    expect(set.some(({ ref }) => ref.plainBody || (ref.error?.code === 'ERR_PROVIDER' && ref.events === 1))).toBe(true);
    expect(set.some(({ ref }) => ref.status === 'truncated')).toBe(true);
    if (format !== 'openai-responses') expect(set.some(({ ref }) => ref.error?.code === 'ERR_BAD_EVENT')).toBe(true);
  });

  test('the shapes the contract names are all there', () => {
    const names = FIXTURES.map((f) => f.name);
    const has = (pred: (b: string) => boolean) => FIXTURES.some((f) => pred(f.body));
    expect(has((b) => b.includes('"tool_calls"') && b.includes('"arguments"'))).toBe(true);
    expect(has((b) => b.includes('input_json_delta'))).toBe(true);
    expect(has((b) => b.includes('"reasoning_content"'))).toBe(true);
    expect(has((b) => b.includes('"reasoning":"'))).toBe(true);
    expect(has((b) => b.includes('thinking_delta') && b.includes('signature_delta'))).toBe(true);
    expect(has((b) => b.includes('"choices":[],"usage":{'))).toBe(true);
    expect(has((b) => b.includes('"content":null'))).toBe(true);
    expect(has((b) => b.includes('event: ping'))).toBe(true);
    expect(has((b) => /^: ?\S/m.test(b))).toBe(true);
    expect(has((b) => b.includes('\r\n'))).toBe(true);
    expect(FIXTURES.some((f) => f.choice === 1)).toBe(true);
    expect(FIXTURES.some((f) => f.format === 'ddg' && f.body.includes('"message"'))).toBe(true);
    expect(FIXTURES.some((f) => f.format === 'ddg' && f.body.includes('"content"'))).toBe(true);
    expect(FIXTURES.some((f) => f.format === 'ddg' && /^\[DONE\]/m.test(f.body))).toBe(true);
    expect(FIXTURES.some((f) => f.format === 'ddg' && f.body.includes('data: [DONE]'))).toBe(true);
    expect(FIXTURES.some((f) => f.format === 'ddg' && f.body.includes('\r\n'))).toBe(true);
    expect(new Set(names).size).toBe(names.length);
    // non-ASCII of every kind the text layer handles, and JSON escapes of every kind
    const text = FIXTURES.map((f) => f.expected.text).join('');
    for (const probe of ['中', '\u200d', '\u{1F1EF}', '\u0301', '😀', '\u1112', '\u{1F3FD}']) expect(text).toContain(probe);
    for (const esc of ['\\"', '\\\\', '\\n', '\\u00e9', '\\ud83d\\ude00', '\\t']) expect(has((b) => b.includes(esc))).toBe(true);
    expect(FIXTURES.some((f) => f.expected.text !== f.expected.text.normalize('NFC'))).toBe(true);
  });
});
