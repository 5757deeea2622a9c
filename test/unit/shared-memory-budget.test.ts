// Memory after errors and at the end of a stream, and the realm's budget for the core: a failed
// or finished decoder gives its large buffers back at once, and a gateway can cap what all
// streams together hold, so that one burst of large events cannot grow the shared memory (which
// never shrinks) past what it chose.
import { afterEach, describe, expect, it } from 'vitest';
import {
  CoreMemoryError, LineDecoder, ModelStream, SseLimitError, SseParser, Utf8Decoder, coreMemoryLimit, coreMemoryUsed, setCoreMemoryLimit,
} from '../../bindings/index.js';

const enc = (s: string) => new TextEncoder().encode(s);
const MiB = 1 << 20;

afterEach(() => setCoreMemoryLimit(undefined));

describe('buffers are given back', () => {
  it('when a parser fails on its limit, not at reset() or garbage collection', () => {
    const p = new SseParser({ maxEventBytes: 16 * MiB });
    const piece = enc('y'.repeat(MiB));
    p.push(enc('event: big\ndata: '));
    for (let i = 0; i < 15; i++) p.push(piece);
    expect(p.retainedBytes).toBeGreaterThan(15 * MiB);
    expect(() => { p.push(piece); p.push(piece); }).toThrow(SseLimitError);
    expect(p.retainedBytes).toBeLessThan(1024);
    p.reset();
    expect(p.push(enc('data: ok\n\n'))).toEqual([{ type: 'message', data: 'ok', id: '' }]);
    p.dispose();
  });

  it('when a line decoder flushes a long line', () => {
    const d = new LineDecoder({ maxLineBytes: 64 * MiB });
    const piece = enc('z'.repeat(MiB));
    for (let i = 0; i < 20; i++) d.push(piece);
    expect(d.retainedBytes).toBeGreaterThan(20 * MiB);
    expect(d.flush()[0].length).toBe(20 * MiB);
    expect(d.retainedBytes).toBeLessThan(1024);
    expect(d.push(enc('next\n'))).toEqual(['next']);
    d.dispose();
  });
});

describe('the core memory budget', () => {
  it('counts every record and buffer, and returns to where it was when they are given back', () => {
    const before = coreMemoryUsed();
    const all = Array.from({ length: 300 }, (_, i) => {
      const p = new SseParser();
      p.push(enc(`id: ${i}\nevent: t${i}\ndata: ${'x'.repeat(i * 10)}`));
      return p;
    });
    const lines = Array.from({ length: 100 }, () => new LineDecoder());
    for (const l of lines) l.push(enc('partial line'));
    const utf8 = Array.from({ length: 100 }, () => new Utf8Decoder());
    expect(coreMemoryUsed()).toBeGreaterThan(before + 300 * 124);
    for (const p of all) p.dispose();
    for (const l of lines) l.dispose();
    for (const u of utf8) u.dispose();
    expect(coreMemoryUsed()).toBe(before);
  });

  it('past the budget, the push that needs more throws CoreMemoryError before growing; other streams go on', () => {
    const other = new SseParser();
    const base = coreMemoryUsed();
    setCoreMemoryLimit(base + 4 * MiB);
    expect(coreMemoryLimit()).toBe(base + 4 * MiB);
    const wasm0 = new SseParser().retainedBytes; // a record fits
    expect(wasm0).toBeGreaterThan(0);
    const big = new SseParser();
    const piece = enc('y'.repeat(MiB));
    big.push(enc('data: '));
    let err: unknown;
    const memory = () => (globalThis as unknown as { process: NodeJS.Process }).process.memoryUsage().arrayBuffers;
    const m0 = memory();
    try {
      for (let i = 0; i < 8; i++) big.push(piece);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CoreMemoryError);
    const e = err as CoreMemoryError;
    expect(e.code).toBe('ERR_CORE_MEMORY');
    expect(e.budget).toBe(base + 4 * MiB);
    expect(e.message).toMatch(/^The core memory budget \(\d+ bytes, setCoreMemoryLimit\) would be passed/);
    expect(coreMemoryUsed()).toBeLessThanOrEqual(base + 4 * MiB);
    expect(memory() - m0).toBeLessThan(16 * MiB);
    // the failed stream gave its buffers back; the others go on
    expect(other.push(enc('data: still here\n\n'))).toEqual([{ type: 'message', data: 'still here', id: '' }]);
    expect(() => big.push(enc('x'))).toThrow(CoreMemoryError);
    big.reset();
    expect(big.push(enc('data: small\n\n'))).toEqual([{ type: 'message', data: 'small', id: '' }]);
    // a new decoder past the budget is refused the same way
    setCoreMemoryLimit(coreMemoryUsed() + 1);
    expect(() => new LineDecoder()).toThrow(CoreMemoryError);
    setCoreMemoryLimit(undefined);
    expect(new LineDecoder().push(enc('a\n'))).toEqual(['a']);
    expect(() => setCoreMemoryLimit(0)).toThrow(TypeError);
  });
});

describe('a model stream past the budget with reasoning or arguments the core kept', () => {
  // The core keeps quiet reasoning and argument fragments as sent; when the stream fails, they are
  // taken into the message. Unescaping them there needs room the budget no longer has: they are
  // read as sent instead, and the stream's error is the CoreMemoryError (it was the core's trap).
  const thinking = 'Denken über das Problem: \\"x\\" und \\u00e9. '.repeat(25);
  const cases: [string, string, string, (m: ModelStream) => string][] = [
    ['anthropic reasoning', 'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"c","usage":{"input_tokens":1,"output_tokens":1}}}\n\nevent: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}\n\n',
      `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"${thinking}"}}\n\n`, (m) => m.reasoning],
    ['openai arguments', 'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":""}}]}}]}\n\n',
      `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"${thinking}"}}]}}]}\n\n`, (m) => m.toolCalls[0]?.arguments ?? ''],
  ];
  it.each(cases)('%s: a CoreMemoryError at the push that passed it, with every fragment before it kept', (_, head, delta, kept) => {
    const piece = JSON.parse(`"${thinking}"`) as string;
    setCoreMemoryLimit(coreMemoryUsed() + 256 * 1024);
    const m = new ModelStream({ format: _.startsWith('anthropic') ? 'anthropic' : 'openai', maxReasoningBytes: 64 * MiB, maxArgumentBytes: 64 * MiB });
    m.push(enc(head));
    let before = enc(head).length;
    let pushes = 0;
    let error: unknown;
    try {
      for (; pushes < 2000; pushes++) {
        const b = enc(delta);
        m.push(b);
        before += b.length;
      }
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CoreMemoryError);
    const err = error as CoreMemoryError;
    expect(err.offset).toBeGreaterThanOrEqual(before);
    expect(err.offset).toBeLessThanOrEqual(before + enc(delta).length);
    expect(pushes).toBeGreaterThan(20);
    // (the fragments of the pushes that returned, and perhaps some of the one that failed: whole ones)
    const got = kept(m);
    expect(got.length % piece.length).toBe(0);
    expect(got.length / piece.length).toBeGreaterThanOrEqual(pushes);
    expect(got).toBe(piece.repeat(got.length / piece.length));
    m.dispose();
  });
});
