// Every TransformStream over a decoder gives the decoder's core memory back when the stream is done
// with it: at its end, after an error, and when a client leaves (the readable side cancelled) or the
// upstream fails (the writable side aborted). A gateway ends thousands of streams between two
// collections; a client that leaves in the middle of a large event must not hold that event's buffer.
import { describe, expect, it } from 'vitest';
import {
  LineBatchDecoderStream, LineDecoderStream, ModelStream, ModelTextStream, SseBatchDecoderStream, SseDecoderStream, SseRelayStream,
  Utf8DecoderStream, coreMemoryUsed, readChunks,
} from '../../bindings/index.js';
import { settled } from '../helpers/settled.js';

const enc = (s: string) => new TextEncoder().encode(s);
const tick = () => new Promise((r) => setTimeout(r, 0));

// 256 KiB of one unfinished line, event or JSON document: what each stream must hold until it ends
const LONG = 'x'.repeat(256 * 1024);
type Case = { name: string; make(): TransformStream<Uint8Array, unknown>; held: Uint8Array; bad: Uint8Array; whole: Uint8Array };
const CASES: Case[] = [
  { name: 'Utf8DecoderStream', make: () => new Utf8DecoderStream() as unknown as TransformStream<Uint8Array, unknown>,
    held: Uint8Array.of(0x61, 0xe6, 0x9d), bad: Uint8Array.of(0x61, 0xff), whole: enc('a東') },
  { name: 'LineDecoderStream', make: () => new LineDecoderStream(), held: enc(LONG), bad: Uint8Array.of(0x61, 0xff, 0x0a), whole: enc('a\nb\n') },
  { name: 'LineBatchDecoderStream', make: () => new LineBatchDecoderStream(), held: enc(LONG), bad: Uint8Array.of(0x61, 0xff, 0x0a), whole: enc('a\n') },
  { name: 'SseDecoderStream', make: () => new SseDecoderStream(), held: enc(`data: ${LONG}`), bad: Uint8Array.of(0x64, 0x61, 0x74, 0x61, 0x3a, 0xff, 0x0a, 0x0a), whole: enc('data: a\n\n') },
  { name: 'SseBatchDecoderStream', make: () => new SseBatchDecoderStream(), held: enc(`data: ${LONG}`), bad: Uint8Array.of(0x64, 0x61, 0x74, 0x61, 0x3a, 0xff, 0x0a, 0x0a), whole: enc('data: a\n\n') },
  { name: 'SseRelayStream', make: () => new SseRelayStream({ from: 'openai' }),
    held: enc(`data: {"choices":[{"index":0,"delta":{"content":"${LONG}`), bad: enc('data: {"choices":[\n\n'),
    whole: enc('data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n') },
  { name: 'ModelTextStream', make: () => new ModelTextStream({ format: 'openai' }),
    held: enc(`data: {"choices":[{"index":0,"delta":{"content":"${LONG}`), bad: enc('data: {"choices":[\n\n'),
    whole: enc('data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n') },
];

/** An upstream that sends `chunks` and then stays open (a live stream), or errors with `fail` after them. */
const upstream = (chunks: Uint8Array[], fail?: Error) => new ReadableStream<Uint8Array>({
  start(c) {
    for (const x of chunks) c.enqueue(x);
    if (fail) setTimeout(() => c.error(fail), 5);
  },
});

/** Waits until the core holds more than `than` bytes (the stream took its input), at most about a second. */
async function until(more: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !more(); i++) await new Promise((r) => setTimeout(r, 5));
}

describe('TransformStreams give their core memory back', () => {
  for (const c of CASES) {
    it(`${c.name}: when the client cancels in the middle of what it holds`, async () => {
      const before = await settled();
      const readable = upstream([c.held]).pipeThrough(c.make());
      const reader = readable.getReader();
      const pending = reader.read().catch(() => ({ done: true }));
      // (the long inputs are held in the core: at least their bytes; the short one, its record and carry)
      const holds = c.held.length > 1024 ? c.held.length : 0;
      await until(() => coreMemoryUsed() > before + holds);
      expect(coreMemoryUsed() - before, 'the stream holds its input').toBeGreaterThan(holds);
      await reader.cancel(new Error('client left'));
      await pending;
      await tick();
      expect(coreMemoryUsed()).toBe(before);
    });

    it(`${c.name}: when the upstream fails in the middle of what it holds`, async () => {
      const before = await settled();
      const fail = new Error('upstream reset');
      const stream = c.make();
      const reader = upstream([c.held], fail).pipeThrough(stream).getReader();
      let error: unknown;
      let last: unknown;
      try {
        for (;;) {
          const r = await reader.read();
          if (r.done) break;
          last = r.value;
        }
      } catch (e) {
        error = e;
      }
      if (stream instanceof SseRelayStream) {
        // (the client's stream ends with the relay's error event for an upstream that broke off)
        expect(error).toBeUndefined();
        expect(new TextDecoder().decode(last as Uint8Array)).toContain('"code":"ERR_STREAM_TRUNCATED"');
        expect(stream.relay.status).toBe('failed');
        expect(stream.upstreamError).toBe(fail);
      } else {
        expect(error).toBe(fail);
      }
      await tick();
      expect(coreMemoryUsed()).toBe(before);
    });

    it(`${c.name}: after bad input errors the stream, and after its end`, async () => {
      const before = await settled();
      // (then the upstream ends: a relay writes the error as an event for its client and reads on to the end)
      const bad = new ReadableStream<Uint8Array>({ start(ctl) { ctl.enqueue(c.bad); ctl.enqueue(c.held); ctl.close(); } }).pipeThrough(c.make());
      const out: unknown[] = [];
      let error: unknown;
      try {
        for await (const x of readChunks(bad)) out.push(x);
      } catch (e) {
        error = e;
      }
      if (c.name === 'SseRelayStream') {
        expect(error).toBeUndefined();
        expect(new TextDecoder().decode(out.at(-1) as Uint8Array)).toContain('"code":"ERR_BAD_EVENT"');
      } else {
        expect((error as { code?: string }).code).toMatch(/^ERR_/);
      }
      await tick();
      expect(coreMemoryUsed(), 'after the error').toBe(before);

      const ends = new ReadableStream<Uint8Array>({ start(ctl) { ctl.enqueue(c.whole); ctl.close(); } }).pipeThrough(c.make()).getReader();
      let items = 0;
      for (;;) {
        const r = await ends.read();
        if (r.done) break;
        items++;
      }
      expect(items).toBeGreaterThan(0);
      expect(coreMemoryUsed(), 'after the end').toBe(before);
    });
  }

  it('a cancelled ModelTextStream is failed, and its report rejects with the reason', async () => {
    const stream = new ModelTextStream({ format: 'openai' });
    const reader = upstream([enc('data: {"choices":[{"index":0,"delta":{"content":"ab"}}]}\n\n')]).pipeThrough(stream).getReader();
    expect(await reader.read()).toEqual({ done: false, value: 'a' }); // (b is held: a mark may follow)
    const reason = new Error('client left');
    await reader.cancel(reason);
    await expect(stream.report).rejects.toBe(reason);
    expect(stream.model.status).toBe('failed');
  });

  it('a cancelled ModelTextStream keeps what was read of the answer: reasoning and a call\'s arguments, as a ModelStream of the same bytes has them', async () => {
    const ev = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
    const bytes = enc([
      ev('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude', usage: { input_tokens: 3, output_tokens: 1 } } }),
      ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }),
      ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'first ' } }),
      ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'second' } }),
      ev('content_block_stop', { type: 'content_block_stop', index: 0 }),
      ev('content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'search', input: {} } }),
      ev('content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"q":' } }),
      ev('content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"Zürich"' } }),
    ].join(''));
    const plain = new ModelStream({ format: 'anthropic' });
    plain.push(bytes);
    const want = { reasoning: plain.reasoning, toolCalls: plain.toolCalls };
    expect(want.reasoning).toBe('first second');
    expect(want.toolCalls.map((c) => c.arguments)).toEqual(['{"q":"Zürich"']);
    for (const raw of [false, true]) {
      const stream = new ModelTextStream({ format: 'anthropic', raw });
      const reader = upstream([bytes]).pipeThrough(stream).getReader();
      const pending = reader.read().catch(() => ({ done: true }));
      for (let i = 0; i < 200 && stream.model.events === 0; i++) await new Promise((r) => setTimeout(r, 5));
      await reader.cancel(new Error('client left'));
      await pending;
      expect({ reasoning: stream.model.reasoning, toolCalls: stream.model.toolCalls }, `raw: ${raw}`).toEqual(want);
      expect(stream.model.status).toBe('failed');
    }
    plain.dispose();
  });

  it('a cancelled SseRelayStream is failed, and nothing more is written', async () => {
    const stream = new SseRelayStream({ from: 'openai' });
    const reader = upstream([enc('data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n')]).pipeThrough(stream).getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    await reader.cancel(new Error('client left'));
    expect(stream.relay.status).toBe('failed');
  });
});
