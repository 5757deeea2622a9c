// SseRelayStream and ModelTextStream (the model layer for fetch handlers) against SseRelay and
// ModelStream on the same bytes, for every model fixture and on random cuttings; their errors,
// their report, and the one-line relay into a Response.
import { describe, expect, it } from 'vitest';
import {
  type ModelPart, ModelPartReader, type ModelReport, ModelPartStream, ModelStream, type ModelStreamOptions, ModelStreamError, ModelTextStream, SseRelay, SseRelayStream, type ToolCall, readChunks,
} from '../../bindings/index.js';
import { BEDROCK_FIXTURES } from '../helpers/bedrock-fixtures.js';
import { encodeMessage } from '../helpers/bedrock-fixtures.js';
import { textOutcome } from '../helpers/thrown.js';
import { FIXTURES } from '../helpers/model-fixtures.js';
import { BROKE, unclocked } from '../helpers/model-streams.js';
import { SEED, concat, cut, randomCuts, rng } from '../helpers/random.js';

const enc = (s: string) => new TextEncoder().encode(s);
const from = (chunks: Uint8Array[]) => new ReadableStream<Uint8Array>({
  start(c) { for (const x of chunks) c.enqueue(x); c.close(); },
});
const unclock = (b: Uint8Array) => unclocked(new TextDecoder().decode(b));

/** An Anthropic turn that answers "Café" (its thinking first, when given), an event a read. */
function anthropicTurn(thinking?: string): Uint8Array[] {
  const ev = (type: string, data: Record<string, unknown>) => enc(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const think = thinking === undefined ? [] : [
    ev('content_block_start', { index: 1, content_block: { type: 'thinking', thinking: '' } }),
    ev('content_block_delta', { index: 1, delta: { type: 'thinking_delta', thinking } }),
    ev('content_block_stop', { index: 1 }),
  ];
  return [
    ev('message_start', { message: { id: 'm', type: 'message', role: 'assistant', content: [], model: 'c', usage: { input_tokens: 3, output_tokens: 1 } } }),
    ...think,
    ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Café' } }),
    ev('content_block_stop', { index: 0 }),
    ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }),
    ev('message_stop', {}),
  ];
}

async function drain<T>(readable: ReadableStream<T>): Promise<{ out: T[]; error: unknown }> {
  const out: T[] = [];
  try {
    for await (const x of readChunks(readable)) out.push(x);
  } catch (error) {
    return { out, error };
  }
  return { out, error: undefined };
}

describe('SseRelayStream', () => {
  it('writes what SseRelay writes for the same reads, for every fixture, to OpenAI and to Anthropic, on random cuttings', async () => {
    const next = rng(SEED);
    for (const f of FIXTURES) {
      for (const to of ['openai', 'anthropic'] as const) {
        const options = { from: f.format, to, choice: f.choice, id: 'x', model: 'm' };
        const chunks = cut(f.bytes, randomCuts(f.bytes, next, 40));
        const r = new SseRelay(options);
        const want = concat([...chunks.map((c) => r.push(c).slice()), r.flush().slice()]);
        const { out, error } = await drain(from(chunks).pipeThrough(new SseRelayStream(options)));
        expect(error, f.name).toBeUndefined();
        expect(out.every((c) => c.length > 0)).toBe(true);
        expect(unclock(concat(out)), `${f.name} → ${to} (seed ${SEED})`).toBe(unclock(want));
      }
    }
  });

  it('relays in one line into a Response; outputs outlive the relay\'s next call', async () => {
    const f = FIXTURES.find((x) => x.name === 'anthropic-tool-use')!;
    const chunks = Array.from({ length: Math.ceil(f.bytes.length / 5) }, (_, i) => f.bytes.slice(i * 5, i * 5 + 5));
    const stream = new SseRelayStream({ from: 'anthropic' });
    const text = await new Response(from(chunks).pipeThrough(stream)).text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(text).toContain('"finish_reason":"tool_calls"');
    expect(stream.relay.status).toBe('done');
    expect(stream.relay.error).toBeUndefined();
    expect(stream.relay.eventsOut).toBeGreaterThan(3);
  });

  it('a read that is a view of another relay\'s buffer (its last output, valid as long as it is not called again) is copied as any read the relay translates: relays\' first buffers share one ArrayBuffer, and the relay\'s own view was taken for the read passed through', async () => {
    const turn = anthropicTurn();
    // (twice: the relays' first buffers are slots of a shared ArrayBuffer, and one of two pairs takes two of the same)
    for (let round = 0; round < 2; round++) {
      // an OpenAI client's events, as a relay from Anthropic writes them: its last output left as a view
      const a = new SseRelay({ from: 'anthropic', to: 'openai', id: 'a', model: 'm' });
      const head = a.push(concat(turn.slice(0, 2))).slice();
      const last = a.push(turn[2]);
      expect(new TextDecoder().decode(last)).toContain('"content":"Café"');
      const said = last.slice();
      const b = new SseRelayStream({ from: 'openai', to: 'anthropic', id: 'b', model: 'm' });
      const w = b.writable.getWriter();
      for (const c of [head, last]) w.write(c).catch(() => {});
      w.close().catch(() => {});
      const { out } = await drain(b.readable);
      const ref = new SseRelay({ from: 'openai', to: 'anthropic', id: 'b', model: 'm' });
      const want = concat([ref.push(head).slice(), ref.push(said).slice(), ref.flush().slice()]);
      expect(unclock(concat(out)), `round ${round}`).toBe(unclock(want));
      expect(unclock(concat(out))).toContain('"text":"Café"');
    }
  });

  it('passes OpenAI\'s own events through as the reads themselves', async () => {
    const events = ['Hel', 'lo'].map((t) => `data: {"choices":[{"index":0,"delta":{"content":"${t}"}}]}\n\n`);
    const chunks = [...events, 'data: [DONE]\n\n'].map(enc);
    const { out } = await drain(from(chunks).pipeThrough(new SseRelayStream({ from: 'openai' })));
    expect(out.map((c) => new TextDecoder().decode(c))).toEqual([...events, 'data: [DONE]\n\n']);
  });

  it('ends a cut upstream with an error event in the client\'s shape, never a completion', async () => {
    const f = FIXTURES.find((x) => x.name === 'anthropic-truncated')!;
    const stream = new SseRelayStream({ from: 'anthropic', to: 'anthropic' });
    const text = new TextDecoder().decode(concat((await drain(from([f.bytes]).pipeThrough(stream))).out));
    expect(text).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"[^"]*"\}\}\n\n$/);
    expect(text).not.toContain('message_stop');
    expect(stream.relay.error?.code).toBe('ERR_STREAM_TRUNCATED');
  });

  it('ends the client\'s stream with the relay\'s error event as soon as the relay fails (the upstream\'s error event, a bad event), and cancels an upstream that stays open', async () => {
    const ev = (t: string) => enc(`data: {"choices":[{"index":0,"delta":{"content":"${t}"}}]}\n\n`);
    const cases = [
      { name: 'an error event', bad: enc('data: {"error":{"message":"overloaded","type":"server_error"}}\n\n'), code: 'ERR_PROVIDER' },
      { name: 'an event that is not JSON', bad: enc('data: {"choices":\n\n'), code: 'ERR_BAD_EVENT' },
    ];
    for (const c of cases) {
      let pulls = 0;
      let cancelled: unknown = 'not cancelled';
      const upstream = new ReadableStream<Uint8Array>({
        pull(ctl) {
          pulls++;
          if (pulls === 1) ctl.enqueue(ev('Hi'));
          else if (pulls === 2) ctl.enqueue(c.bad);
          else if (pulls < 100) ctl.enqueue(enc(': keep-alive\n\n')); // (then silent, open)
          else return new Promise(() => {});
        },
        cancel(reason) { cancelled = reason; },
      });
      const stream = new SseRelayStream({ from: 'openai' });
      const late = new Promise<'still open'>((r) => setTimeout(() => r('still open'), 2000));
      const drained = await Promise.race([drain(upstream.pipeThrough(stream)), late]);
      expect(drained, c.name).not.toBe('still open');
      const { out, error } = drained as Awaited<ReturnType<typeof drain<Uint8Array>>>;
      const text = new TextDecoder().decode(concat(out));
      expect(error, c.name).toBeUndefined();
      expect(text, c.name).toMatch(/^data: \{"choices":\[\{"index":0,"delta":\{"content":"Hi"\}\}\]\}\n\ndata: \{"error":\{[^\n]*\}\}\n\n$/);
      expect(stream.relay.error?.code, c.name).toBe(c.code);
      expect(text, c.name).toContain(`"code":"${c.code}"`);
      expect(pulls, c.name).toBeLessThan(5);
      await new Promise((r) => setTimeout(r, 10)); // (the pipe cancels its source once it sees the stream's end)
      expect(cancelled, c.name).not.toBe('not cancelled');
    }
  });

  it('ends the client\'s stream at the upstream\'s completion, with the client\'s end, and cancels an upstream that stays open after it (every format that sends nothing after its completion; Bedrock\'s ConverseStream waits for its usage)', async () => {
    const a = (type: string, data: Record<string, unknown>) => enc(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    const cases = [
      {
        from: 'openai' as const, to: 'anthropic' as const,
        events: [enc('data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'), enc('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'), enc('data: [DONE]\n\n')],
        end: /event: message_delta\ndata: \{"type":"message_delta","delta":\{"stop_reason":"end_turn","stop_sequence":null\},"usage":\{"output_tokens":0\}\}\n\nevent: message_stop\ndata: \{"type":"message_stop"\}\n\n$/,
      },
      {
        from: 'openai' as const, to: 'openai' as const,
        events: [enc('data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'), enc('data: [DONE]\n\n')],
        end: /^data: \{"choices":\[\{"index":0,"delta":\{"content":"Hi"\}\}\]\}\n\ndata: \[DONE\]\n\n$/,
      },
      {
        from: 'anthropic' as const, to: 'openai' as const,
        events: [
          a('message_start', { message: { id: 'm', type: 'message', role: 'assistant', content: [], model: 'c', usage: { input_tokens: 1, output_tokens: 1 } } }),
          a('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }), a('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hi' } }),
          a('content_block_stop', { index: 0 }), a('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }), a('message_stop', {}),
        ],
        end: /"finish_reason":"stop"\}\]\}\n\ndata: \{[^\n]*"usage":\{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3\}\}\n\ndata: \[DONE\]\n\n$/,
      },
      {
        from: 'gemini' as const, to: 'openai' as const,
        events: [enc('data: {"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2}}\r\n\r\n')],
        end: /"finish_reason":"stop"\}\]\}\n\ndata: \{[^\n]*"usage":\{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2\}\}\n\ndata: \[DONE\]\n\n$/,
      },
    ];
    for (const c of cases) {
      const name = `${c.from} → ${c.to}`;
      let pulls = 0;
      let cancelled: unknown = 'not cancelled';
      const upstream = new ReadableStream<Uint8Array>({
        pull(ctl) {
          if (pulls < c.events.length) ctl.enqueue(c.events[pulls]);
          else if (pulls < c.events.length + 3) ctl.enqueue(enc(': keep-alive\n\n'));
          else return new Promise(() => {}); // (then silent, open)
          pulls++;
        },
        cancel(reason) { cancelled = reason; },
      });
      const stream = new SseRelayStream({ from: c.from, to: c.to });
      const late = new Promise<'still open'>((r) => setTimeout(() => r('still open'), 2000));
      const drained = await Promise.race([drain(upstream.pipeThrough(stream)), late]);
      expect(drained, name).not.toBe('still open');
      const { out, error } = drained as Awaited<ReturnType<typeof drain<Uint8Array>>>;
      expect(error, name).toBeUndefined();
      expect(new TextDecoder().decode(concat(out)), name).toMatch(c.end);
      expect([stream.relay.status, stream.relay.endWritten], name).toEqual(['done', true]);
      await new Promise((r) => setTimeout(r, 10)); // (the pipe cancels its source once it sees the stream's end)
      expect(cancelled, name).not.toBe('not cancelled');
    }
    // Bedrock's usage comes after its messageStop: the client's end waits for the upstream's
    const bedrock = new SseRelay({ from: 'bedrock' });
    const msg = (event: string, payload: Record<string, unknown>) => encodeMessage({ event, payload: JSON.stringify(payload) });
    bedrock.push(concat([msg('messageStart', { role: 'assistant' }), msg('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } }), msg('messageStop', { stopReason: 'end_turn' })]));
    expect([bedrock.status, bedrock.endWritten]).toEqual(['done', false]);
    bedrock.push(msg('metadata', { usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, metrics: { latencyMs: 1 } }));
    expect(bedrock.endWritten).toBe(false);
    expect(new TextDecoder().decode(bedrock.flush())).toMatch(/"usage":\{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2\}\}\n\ndata: \[DONE\]\n\n$/);
    expect(bedrock.endWritten).toBe(true);
  });

  /** An upstream that sends `chunks`, one a pull, and then errors with `fail`, as a body whose connection drops. */
  const dropping = (chunks: Uint8Array[], fail: Error) => {
    let i = 0;
    return new ReadableStream<Uint8Array>({
      pull(c) {
        if (i < chunks.length) c.enqueue(chunks[i++]);
        else c.error(fail);
      },
    });
  };
  /** `drain`, after `wait` ms (the upstream runs ahead of a client that reads late). */
  const drainAfter = async <T>(readable: ReadableStream<T>, wait: number) => {
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    return drain(readable);
  };

  it('an upstream body that errors ends the client\'s stream with the relay\'s abort, in the client\'s format, as SseRelay writes it', async () => {
    const next = rng(SEED + 7);
    for (const f of FIXTURES.filter((x) => x.choice === undefined)) {
      // the fixture cut at a random place, then the connection drops: the relay writes what it writes for the same
      // bytes and its abort(), the client's stream ends (no error), and the upstream's error is kept
      const at = 1 + Math.floor(next() * (f.bytes.length - 1));
      const chunks = cut(f.bytes.subarray(0, at), randomCuts(f.bytes.subarray(0, at), next, 5));
      for (const to of ['openai', 'anthropic'] as const) {
        for (const wait of [0, 3]) {
          const options = { from: f.format, to, id: 'x', model: 'm' };
          const r = new SseRelay(options);
          const pushed = chunks.map((c) => r.push(c).slice());
          // (a relay that failed on a read ends the client's stream there, before the drop)
          const failedFirst = r.status === 'failed';
          const want = concat([...pushed, r.abort(BROKE).slice()]);
          const fail = new Error('connection reset');
          const stream = new SseRelayStream(options);
          const { out, error } = await drainAfter(dropping(chunks, fail).pipeThrough(stream), wait);
          const what = `${f.name} cut at ${at} → ${to}, the reader ${wait ? 'late' : 'first'} (seed ${SEED + 7})`;
          expect(error, what).toBeUndefined();
          expect(unclock(concat(out)), what).toBe(unclock(want));
          expect(stream.upstreamError, what).toBe(failedFirst ? undefined : fail);
          expect(stream.relay.status, what).toBe(r.status);
          expect(stream.relay.error?.code, what).toBe(r.error?.code);
          r.dispose();
        }
      }
    }
  });

  it('an upstream body that errors after its completion: the client\'s stream ended with its completion; one that drops mid-event: with the error event', async () => {
    const events = ['Hel', 'lo'].map((t) => `data: {"choices":[{"index":0,"delta":{"content":"${t}"}}]}\n\n`);
    const fail = new Error('connection reset');
    const done = new SseRelayStream({ from: 'openai', to: 'anthropic', id: 'x', model: 'm' });
    const whole = [...events, 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n', 'data: [DONE]\n\n'].map(enc);
    const a = await drain(dropping(whole, fail).pipeThrough(done));
    expect(a.error).toBeUndefined();
    expect(new TextDecoder().decode(concat(a.out))).toMatch(/"text":"lo"\}\}\n\n[^]*event: message_stop\ndata: \{"type":"message_stop"\}\n\n$/);
    expect(done.relay.status).toBe('done');
    // (the client's stream ended at the completion, and the upstream was let go before it failed)
    expect(done.upstreamError).toBeUndefined();

    const cutOff = new SseRelayStream({ from: 'openai' });
    const b = await drain(dropping([...events.map(enc), enc('data: {"choices":[{"index":0,"del')], fail).pipeThrough(cutOff));
    expect(b.error).toBeUndefined();
    const text = new TextDecoder().decode(concat(b.out));
    expect(text.startsWith(events.join(''))).toBe(true);
    expect(text.slice(events.join('').length)).toBe(`data: {"error":{"message":"${BROKE.message}","type":"server_error","code":"ERR_STREAM_TRUNCATED"}}\n\n`);
    expect(text).not.toContain('[DONE]');
    expect(cutOff.relay.status).toBe('failed');
    expect(cutOff.upstreamError).toBe(fail);

    // to Anthropic
    const toAnthropic = new SseRelayStream({ from: 'openai', to: 'anthropic', id: 'x', model: 'm' });
    const c = await drain(dropping(events.map(enc), fail).pipeThrough(toAnthropic));
    expect(c.error).toBeUndefined();
    expect(new TextDecoder().decode(concat(c.out))).toMatch(new RegExp(`"text":"lo"\\}\\}\\n\\n[^]*event: error\\ndata: \\{"type":"error","error":\\{"type":"api_error","message":"${BROKE.message}"\\}\\}\\n\\n$`));
    expect(new TextDecoder().decode(concat(c.out))).not.toContain('message_stop');
  });

  it('a client that leaves is not written to: the relay is failed, not truncated, and has no upstream error', async () => {
    const stream = new SseRelayStream({ from: 'openai' });
    const live = new ReadableStream<Uint8Array>({ start(c) { c.enqueue(enc('data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n')); } });
    const reader = live.pipeThrough(stream).getReader();
    expect((await reader.read()).done).toBe(false);
    await reader.cancel(new Error('client left'));
    expect(stream.relay.status).toBe('failed');
    expect(stream.relay.error).toBeUndefined();
    expect(stream.upstreamError).toBeUndefined();
  });

  it('checks its options as SseRelay does', () => {
    expect(() => new SseRelayStream({ from: 'palm' as 'openai' })).toThrow(TypeError);
    expect(() => new SseRelayStream({ from: 'gemini', to: 'gemini' as 'openai' })).toThrow(TypeError);
    expect(() => new SseRelayStream({ from: 'gemini', fatal: false as true })).toThrow(TypeError);
  });
});

describe('ModelTextStream', () => {
  it('gives the text ModelStream commits and its report, for every fixture, however the stream is cut', async () => {
    const next = rng(SEED + 1);
    for (const f of FIXTURES) {
      const m = new ModelStream({ format: f.format, choice: f.choice });
      const { text: want, error: wantError } = textOutcome(m, [f.bytes]);
      const stream = new ModelTextStream({ format: f.format, choice: f.choice });
      const { out, error } = await drain(from(cut(f.bytes, randomCuts(f.bytes, next, 40))).pipeThrough(stream));
      expect(out.join(''), f.name).toBe(want);
      expect(out.every((s) => s !== '')).toBe(true);
      if (wantError === undefined) {
        expect(error, f.name).toBeUndefined();
        const report = await stream.report;
        expect(report.text, f.name).toBe(want);
        expect(report.status).toBe(m.status);
        expect(report.sha256).toBe(m.finish().sha256);
        expect(stream.model.toolCalls).toEqual(m.toolCalls);
      } else {
        expect(error, f.name).toBeInstanceOf(ModelStreamError);
        expect((error as ModelStreamError).code, f.name).toBe(wantError.code);
        expect((error as ModelStreamError).offset, f.name).toBe(wantError.offset);
        await expect(stream.report).rejects.toBe(error);
      }
    }
  });

  it('an upstream body that errors after the completion: the whole text, then the body\'s error, and the report resolves with what was read; before it, the body\'s error and the report rejects', async () => {
    const fail = new Error('socket hang up');
    const breaking = (chunks: Uint8Array[]) => {
      let i = 0;
      return new ReadableStream<Uint8Array>({ pull(c) { if (i < chunks.length) c.enqueue(chunks[i++]); else c.error(fail); } });
    };
    const stop = [
      { event: 'messageStart', payload: '{"role":"assistant"}' },
      { event: 'contentBlockDelta', payload: '{"contentBlockIndex":0,"delta":{"text":"Caf"}}' },
      { event: 'contentBlockDelta', payload: '{"contentBlockIndex":0,"delta":{"text":"e\\u0301"}}' },
      { event: 'messageStop', payload: '{"stopReason":"end_turn"}' },
    ].map(encodeMessage);
    const metadata = encodeMessage({ event: 'metadata', payload: '{"usage":{"inputTokens":7,"outputTokens":2,"totalTokens":9},"metrics":{"latencyMs":5}}' });
    const anthropic = anthropicTurn();
    const cases: [string, 'bedrock' | 'anthropic', Uint8Array[], number | undefined][] = [
      ['bedrock, the break before its metadata', 'bedrock', stop, undefined],
      ['bedrock, the break inside its metadata', 'bedrock', [...stop, metadata.subarray(0, 20)], undefined],
      ['bedrock, the break after its metadata', 'bedrock', [...stop, metadata], 7],
      ['anthropic, the break after message_stop', 'anthropic', anthropic, 3],
    ];
    for (const [what, format, chunks, input] of cases) {
      for (const late of [false, true]) {
        const t = new ModelTextStream({ format });
        const readable = breaking(chunks).pipeThrough(t);
        if (late) await new Promise((r) => setTimeout(r, 10));
        const { out, error } = await drain(readable);
        expect([out.join(''), error], what).toEqual(['Café', fail]);
        const report = await t.report;
        expect([report.status, report.text, report.finishReason, report.usage?.inputTokens ?? report.usage?.input_tokens], what).toEqual(['done', 'Café', 'end_turn', input]);
      }
    }
    // before the completion: the body's error, to the reader and the report (the text committed before it first)
    const t = new ModelTextStream({ format: 'bedrock' });
    const { out, error } = await drain(breaking(stop.slice(0, -1)).pipeThrough(t));
    expect([out.join(''), error]).toEqual(['Caf', fail]);
    await expect(t.report).rejects.toBe(fail);
    expect(t.model.status).not.toBe('done');
  });

  it("with eof: 'allow' a cut stream ends, and its report says truncated", async () => {
    const f = FIXTURES.find((x) => x.name === 'openai-truncated')!;
    const stream = new ModelTextStream({ format: 'openai', eof: 'allow' });
    const { error } = await drain(from([f.bytes]).pipeThrough(stream));
    expect(error).toBeUndefined();
    expect((await stream.report).status).toBe('truncated');
  });

  it('a report nobody awaits is not an unhandled rejection; a cancelled stream rejects it', async () => {
    const stream = new ModelTextStream({ format: 'openai' });
    const reader = from([enc('data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n')]).pipeThrough(stream).getReader();
    await reader.cancel(new Error('client left'));
    // (Node 20 to 26, Bun and Deno call the transformer's cancel: the report settles at once)
    const settled = await Promise.race([stream.report.then(() => 'resolved', (e: Error) => e.message), new Promise((r) => setTimeout(() => r('pending'), 50))]);
    expect(settled).toBe('client left');
  });
});

/** What a stream's parts say, each kind joined: what the report of the same stream says. */
function joined(parts: readonly ModelPart[]) {
  let text = '';
  let refusal = '';
  const blocks: string[] = [];
  const calls: ToolCall[] = [];
  const args: string[] = [];
  const serverCalls: ToolCall[] = [];
  const serverArgs: string[] = [];
  const citations: unknown[] = [];
  const media: unknown[] = [];
  let finish: ModelReport | undefined;
  const kinds: string[] = [];
  for (const p of parts) {
    if (kinds[kinds.length - 1] !== p.type) kinds.push(p.type);
    if (finish !== undefined) throw new Error('a part after the finish');
    if (p.type === 'text') text += p.text;
    else if (p.type === 'refusal') refusal += p.text;
    else if (p.type === 'reasoning') blocks[p.block] = (blocks[p.block] ?? '') + p.text;
    else if (p.type === 'citation') citations.push(p.citation);
    else if (p.type === 'media') media.push(p.media);
    else if (p.type === 'finish') finish = p.report;
    else if (p.type === 'server-tool-call') {
      const i = p.call.index;
      serverArgs[i] = p.replaces === true ? p.delta : (serverArgs[i] ?? '') + p.delta;
      expect(serverArgs[i]).toBe(p.call.arguments);
      serverCalls[i] = p.call;
    } else {
      const i = p.call.index;
      args[i] = p.replaces === true ? p.delta : (args[i] ?? '') + p.delta;
      expect(args[i]).toBe(p.call.arguments); // (the deltas build the call as it stands)
      calls[i] = p.call;
    }
  }
  return { text, refusal, reasoning: blocks.join(''), blocks, calls, serverCalls, citations, media, finish, kinds };
}

describe('ModelPartStream', () => {
  const all = [
    ...FIXTURES.map((f) => ({ name: f.name, format: f.format, choice: f.choice, bytes: f.bytes })),
    ...BEDROCK_FIXTURES.map((f) => ({ name: f.name, format: 'bedrock' as const, choice: undefined, bytes: f.bytes })),
  ];

  it('gives what ModelStream says, each kind of part joined: its text, reasoning (by block), refusal, calls, the provider\'s own calls and citations, then its report; for every fixture, however the stream is cut', async () => {
    const next = rng(SEED + 11);
    for (const f of all) {
      const m = new ModelStream({ format: f.format, choice: f.choice });
      const { text, error: wantError } = textOutcome(m, [f.bytes]);
      const blocks = m.reasoningBlocks.map((b) => b.text);
      const want = { text, refusal: m.refusal, reasoning: m.reasoning, calls: m.toolCalls, serverCalls: m.serverToolCalls, citations: m.citations, media: m.media };
      const report = wantError === undefined ? m.finish() : undefined;
      for (const cuts of [[f.bytes], cut(f.bytes, randomCuts(f.bytes, next, 40)), Array.from({ length: f.bytes.length }, (_, i) => f.bytes.subarray(i, i + 1))]) {
        const stream = new ModelPartStream({ format: f.format, choice: f.choice });
        const { out, error } = await drain(from(cuts).pipeThrough(stream));
        const got = joined(out);
        const what = `${f.name}, ${cuts.length} reads (seed ${SEED + 11})`;
        expect({ text: got.text, refusal: got.refusal, reasoning: got.reasoning, calls: got.calls, serverCalls: got.serverCalls, citations: got.citations, media: got.media }, what).toEqual(want);
        expect(got.blocks.map((b) => b ?? ''), what).toEqual(blocks.slice(0, got.blocks.length));
        expect(blocks.slice(got.blocks.length).every((b) => b === ''), what).toBe(true);
        if (wantError === undefined) {
          expect(error, what).toBeUndefined();
          expect(got.finish, what).toEqual(report);
          expect(await stream.report, what).toEqual(report);
        } else {
          expect(got.finish, what).toBeUndefined();
          expect([(error as ModelStreamError).code, (error as ModelStreamError).offset], what).toEqual([wantError.code, wantError.offset]);
          await expect(stream.report).rejects.toBe(error);
        }
      }
    }
  });

  it('in the order the reads brought them: an Anthropic turn one event a read, its thinking, its text, its call as it grows and ends, the text held back at the completion, its finish', async () => {
    const ev = (type: string, data: Record<string, unknown>) => enc(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    const reads = [
      ev('message_start', { message: { id: 'm', type: 'message', role: 'assistant', content: [], model: 'c', usage: { input_tokens: 5, output_tokens: 1 } } }),
      ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Weather?' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig' } }),
      ev('content_block_stop', { index: 0 }),
      ev('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
      ev('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Let me look.' } }),
      ev('content_block_stop', { index: 1 }),
      ev('content_block_start', { index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'weather', input: {} } }),
      ev('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{"city":' } }),
      ev('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '"Oslo"}' } }),
      ev('content_block_stop', { index: 2 }),
      ev('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }),
      ev('message_stop', {}),
    ];
    const stream = new ModelPartStream({ format: 'anthropic' });
    const { out, error } = await drain(from(reads).pipeThrough(stream));
    expect(error).toBeUndefined();
    const call = { index: 0, id: 'toolu_1', name: 'weather' };
    expect(out.slice(0, -1)).toEqual([
      { type: 'reasoning', text: 'Weather?', block: 0 },
      { type: 'text', text: 'Let me look' }, // (its last cluster held back: a mark could join it)
      { type: 'tool-call', call: { ...call, arguments: '{}', done: false }, delta: '{}' },
      { type: 'tool-call', call: { ...call, arguments: '{"city":', done: false }, delta: '{"city":', replaces: true },
      { type: 'tool-call', call: { ...call, arguments: '{"city":"Oslo"}', done: false }, delta: '"Oslo"}' },
      { type: 'tool-call', call: { ...call, arguments: '{"city":"Oslo"}', done: true, valid: true }, delta: '' },
      { type: 'text', text: '.' }, // (no more of the answer can follow the completion)
    ]);
    const last = out[out.length - 1] as Extract<ModelPart, { type: 'finish' }>;
    expect([last.type, last.report.status, last.report.finishReason, last.report.reasoning]).toEqual(['finish', 'done', 'tool_use', 'Weather?']);
  });

  it('an upstream body that errors after the completion ends the parts with the finish, as ModelTextStream ends; before it, the body\'s error after the parts before it', async () => {
    const fail = new Error('socket hang up');
    const breaking = (chunks: Uint8Array[]) => {
      let i = 0;
      return new ReadableStream<Uint8Array>({ pull(c) { if (i < chunks.length) c.enqueue(chunks[i++]); else c.error(fail); } });
    };
    const events = ['Hel', 'lo'].map((t) => enc(`data: {"choices":[{"index":0,"delta":{"content":"${t}"}}]}\n\n`));
    const end = [enc('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'), enc('data: [DONE]\n\n')];
    const done = new ModelPartStream({ format: 'openai' });
    const a = await drain(breaking([...events, ...end]).pipeThrough(done));
    expect(a.error).toBeUndefined();
    expect(a.out.slice(0, -1)).toEqual(['He', 'll', 'o'].map((text) => ({ type: 'text', text })));
    expect(a.out[a.out.length - 1]).toMatchObject({ type: 'finish', report: { status: 'done', text: 'Hello' } });
    expect((await done.report).status).toBe('done');
    const cutOff = new ModelPartStream({ format: 'openai' });
    const b = await drain(breaking(events).pipeThrough(cutOff));
    expect([b.out, b.error]).toEqual([[{ type: 'text', text: 'He' }, { type: 'text', text: 'll' }], fail]);
    await expect(cutOff.report).rejects.toBe(fail);
  });

  it('checks its options as ModelStream does', () => {
    expect(() => new ModelPartStream({ format: 'palm' as 'openai' })).toThrow(TypeError);
    expect(() => new ModelPartStream({ format: 'openai', onEvent: () => {} } as never)).toThrow(TypeError);
  });
});

describe('ModelPartReader', () => {
  // Line ends of every kind (an event's end found after a CR alone, after a CR and a LF, a LF), and
  // an event stream whose second message claims a length no message can have.
  const think = (t: string) => `data: {"choices":[{"index":0,"delta":{"reasoning_content":"${t}"}}]}`;
  const call = (i: number, args: string) => `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":${i},"id":"c${i}","type":"function","function":{"name":"f","arguments":${JSON.stringify(args)}}}]}}]}`;
  const said = (t: string) => `data: {"choices":[{"index":0,"delta":{"content":"${t}"}}]}`;
  const lineEnds = [
    think('a'), call(0, '{}'), said('Hi '), think('b'), call(1, '{"x":1}'), said('there.'),
    'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}', 'data: [DONE]',
  ];
  const bogus = encodeMessage({ event: 'messageStart', payload: '{"role":"assistant"}' });
  // Anthropic's interleaved thinking: thinking, a call, thinking again, then text; as SSE and as
  // Claude on Bedrock's chunks (each event's data in base64)
  const aev = (type: string, data: Record<string, unknown>) => JSON.stringify({ type, ...data });
  const interleaved = [
    aev('message_start', { message: { id: 'm', type: 'message', role: 'assistant', content: [], model: 'c', usage: { input_tokens: 3, output_tokens: 1 } } }),
    aev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }),
    aev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Weather ' } }),
    aev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'first.' } }),
    aev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig0' } }),
    aev('content_block_stop', { index: 0 }),
    aev('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'weather', input: {} } }),
    aev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":' } }),
    aev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } }),
    aev('content_block_stop', { index: 1 }),
    aev('content_block_start', { index: 2, content_block: { type: 'thinking', thinking: '' } }),
    aev('content_block_delta', { index: 2, delta: { type: 'thinking_delta', thinking: 'Sunny.' } }),
    aev('content_block_stop', { index: 2 }),
    aev('content_block_start', { index: 3, content_block: { type: 'text', text: '' } }),
    aev('content_block_delta', { index: 3, delta: { type: 'text_delta', text: 'It is ' } }),
    aev('content_block_delta', { index: 3, delta: { type: 'text_delta', text: 'sunny.' } }),
    aev('content_block_stop', { index: 3 }),
    aev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }),
    aev('message_stop', {}),
  ];
  const all = [
    ...FIXTURES.map((f) => ({ name: f.name, format: f.format, choice: f.choice, bytes: f.bytes })),
    ...BEDROCK_FIXTURES.map((f) => ({ name: f.name, format: 'bedrock' as const, choice: undefined, bytes: f.bytes })),
    ...(['\r', '\r\n', '\n', 'mixed'] as const).map((eol) => ({
      name: `line ends ${JSON.stringify(eol)}`, format: 'openai' as const, choice: undefined,
      bytes: enc(lineEnds.map((e, i) => { const end = eol === 'mixed' ? ['\r', '\r\n', '\n'][i % 3] : eol; return e + end + end; }).join('')),
    })),
    { name: 'an event stream message of length 8', format: 'bedrock' as const, choice: undefined, bytes: concat([bogus, new Uint8Array([0, 0, 0, 8, 0, 0, 0, 0, 1, 2, 3, 4]), bogus]) },
    { name: 'Anthropic, interleaved thinking', format: 'anthropic' as const, choice: undefined, bytes: enc(interleaved.map((d) => `event: ${JSON.parse(d).type}\ndata: ${d}\n\n`).join('')) },
    {
      name: 'Claude on Bedrock, interleaved thinking', format: 'bedrock-invoke' as const, choice: undefined,
      bytes: concat(interleaved.map((d) => encodeMessage({ event: 'chunk', payload: JSON.stringify({ bytes: Buffer.from(d).toString('base64') }) }))),
    },
  ];

  /** A caller's loop: the reader pushes each read; a push that throws, take what its error carries; flush; then the report. */
  function pushed(format: ModelStreamOptions['format'], choice: number | undefined, reads: Uint8Array[], options: Partial<ModelStreamOptions> = {}) {
    const m = new ModelStream({ ...options, format, choice });
    const parts = new ModelPartReader(m);
    const out: ModelPart[] = [];
    try {
      for (const r of reads) out.push(...parts.push(r));
      out.push(...parts.flush());
    } catch (e) {
      out.push(...parts.take((e as { text?: string }).text ?? ''));
      return { out, error: e };
    }
    out.push({ type: 'finish', report: m.finish() });
    return { out, error: undefined };
  }

  it('gives the same parts, in the same order, however the stream is cut (a read of several events is read an event at a time), and ModelPartStream gives them; for every fixture, whole, at random cuttings and a byte a read', async () => {
    const next = rng(SEED + 12);
    for (const f of all) {
      const once = pushed(f.format, f.choice, [f.bytes]);
      for (const cuts of [cut(f.bytes, randomCuts(f.bytes, next, 40)), Array.from({ length: f.bytes.length }, (_, i) => f.bytes.subarray(i, i + 1))]) {
        const what = `${f.name}, ${cuts.length} reads (seed ${SEED + 12})`;
        const got = pushed(f.format, f.choice, cuts);
        expect(got.out, what).toEqual(once.out);
        const stream = await drain(from(cuts).pipeThrough(new ModelPartStream({ format: f.format, choice: f.choice })));
        expect(stream.out, what).toEqual(once.out);
        for (const e of [got.error, stream.error]) {
          if (once.error === undefined) expect(e, what).toBeUndefined();
          else expect([(e as ModelStreamError).code, (e as ModelStreamError).offset], what).toEqual([(once.error as ModelStreamError).code, (once.error as ModelStreamError).offset]);
        }
      }
    }
  });

  it('a read of a whole interleaved turn (thinking, a call, thinking, text) gives its parts in its events\' order, as SSE and as Claude on Bedrock\'s chunks', () => {
    for (const f of all.filter((x) => x.name.endsWith('interleaved thinking'))) {
      const got = pushed(f.format, f.choice, [f.bytes]).out.map((p) => p.type === 'tool-call' ? { type: p.type, delta: p.delta, replaces: p.replaces, done: p.call.done } : p.type === 'finish' ? p.type : p);
      expect(got, f.name).toEqual([
        { type: 'reasoning', text: 'Weather ', block: 0 },
        { type: 'reasoning', text: 'first.', block: 0 },
        { type: 'tool-call', delta: '{}', replaces: undefined, done: false },
        { type: 'tool-call', delta: '{"city":', replaces: true, done: false },
        { type: 'tool-call', delta: '"Paris"}', replaces: undefined, done: false },
        { type: 'tool-call', delta: '', replaces: undefined, done: true },
        { type: 'reasoning', text: 'Sunny.', block: 1 },
        { type: 'text', text: 'It is' },
        { type: 'text', text: ' sunny' },
        { type: 'text', text: '.' },
        'finish',
      ]);
    }
  });

  it('the same in every mode the core reads in: raw, not strict, every event read in JS near the text limit, without NFC (whole, at random cuttings and a byte a read)', () => {
    const next = rng(SEED + 14);
    const modes: Partial<ModelStreamOptions>[] = [{ raw: true }, { fatal: false }, { maxTextBytes: 40, eof: 'allow' }, { normalize: false }];
    let split = 0;
    for (const options of modes) {
      for (const f of all) {
        const once = pushed(f.format, f.choice, [f.bytes], options);
        if (once.out.length > 2) split++;
        for (const cuts of [cut(f.bytes, randomCuts(f.bytes, next, 40)), Array.from({ length: f.bytes.length }, (_, i) => f.bytes.subarray(i, i + 1))]) {
          const what = `${f.name}, ${JSON.stringify(options)}, ${cuts.length} reads (seed ${SEED + 14})`;
          const got = pushed(f.format, f.choice, cuts, options);
          expect(got.out, what).toEqual(once.out);
          if (once.error === undefined) expect(got.error, what).toBeUndefined();
          else expect([(got.error as ModelStreamError).code, (got.error as ModelStreamError).offset], what).toEqual([(once.error as ModelStreamError).code, (once.error as ModelStreamError).offset]);
        }
      }
    }
    expect(split).toBeGreaterThan(40);
  });

  it('a caller that pushes into the stream itself and takes each read\'s parts: each kind joined is what the stream says, however it is cut', () => {
    const next = rng(SEED + 13);
    for (const f of all) {
      const want = joined(pushed(f.format, f.choice, [f.bytes]).out);
      for (const cuts of [[f.bytes], cut(f.bytes, randomCuts(f.bytes, next, 40))]) {
        const m = new ModelStream({ format: f.format, choice: f.choice });
        const parts = new ModelPartReader(m);
        const out: ModelPart[] = [];
        try {
          for (const r of cuts) out.push(...parts.take(m.push(r)));
          out.push(...parts.take(m.flush()));
        } catch (e) {
          out.push(...parts.take((e as { text?: string }).text ?? ''));
        }
        const got = joined(out);
        const what = `${f.name}, ${cuts.length} reads (seed ${SEED + 13})`;
        expect([got.text, got.refusal, got.blocks, got.calls, got.serverCalls, got.citations, got.media], what).toEqual([want.text, want.refusal, want.blocks, want.calls, want.serverCalls, want.citations, want.media]);
      }
    }
  });

  it('an Anthropic turn one event a read: each read\'s parts after its push; a take with no read between gives nothing', () => {
    const m = new ModelStream({ format: 'anthropic' });
    const parts = new ModelPartReader(m);
    const out: ModelPart[][] = anthropicTurn('Hm.').map((r) => parts.take(m.push(r)));
    expect(out).toEqual([
      [], [], [{ type: 'reasoning', text: 'Hm.', block: 0 }], [], [],
      [{ type: 'text', text: 'Caf' }], // (its last cluster held back: a mark could join it)
      [], [],
      [{ type: 'text', text: 'é' }], // (the completion: nothing can join it)
    ]);
    expect(parts.take()).toEqual([]);
    expect(parts.take(m.flush())).toEqual([]);
    expect(m.finish()).toMatchObject({ text: 'Café', reasoning: 'Hm.', status: 'done' });
  });

  it('takes a ModelStream, and the string its push returned', () => {
    expect(() => new ModelPartReader({} as ModelStream)).toThrow(TypeError);
    expect(() => new ModelPartReader(undefined as unknown as ModelStream)).toThrow(/new ModelPartReader\(stream\)/);
    const parts = new ModelPartReader(new ModelStream({ format: 'openai' }));
    expect(() => parts.take(new Uint8Array(1) as unknown as string)).toThrow(TypeError);
    expect(() => parts.take(null as unknown as string)).toThrow(/not null/);
    expect(parts.take('')).toEqual([]);
  });

  it('a read that is not bytes: the stream\'s own TypeError, and where the events end is left as it was (the bytes that follow give the parts a new reader gives)', () => {
    const f = BEDROCK_FIXTURES.find((x) => x.name === 'bedrock-tools')!;
    const fresh = new ModelPartReader(new ModelStream({ format: 'bedrock' }));
    const want = [...fresh.push(f.bytes), ...fresh.flush()];
    for (const bad of [null, undefined, new ArrayBuffer(4)]) {
      expect(() => new ModelPartReader(new ModelStream({ format: 'openai' })).push(bad as unknown as Uint8Array)).toThrow(/^ModelStream\.push\(\) expects a Uint8Array \(or Buffer\) of bytes, got /);
    }
    const parts = new ModelPartReader(new ModelStream({ format: 'bedrock' }));
    expect(() => parts.push(Array.from(f.bytes.subarray(0, 10)) as unknown as Uint8Array)).toThrow(/^ModelStream\.push\(\) expects a Uint8Array/);
    expect([...parts.push(f.bytes), ...parts.flush()]).toEqual(want);
    expect(want.filter((p) => p.type === 'tool-call' && p.call.done).map((p) => (p as { call: ToolCall }).call.arguments)).toEqual(['{"city": "Zürich", "days": [1, 2]}', '{}']);
  });

  it('after the stream\'s reset(), the same reader gives the new stream\'s parts from its start: its reasoning, its calls\' arguments, its events found from its first byte', () => {
    const m = new ModelStream({ format: 'anthropic' });
    const parts = new ModelPartReader(m);
    const turn = concat(anthropicTurn('Hm.'));
    const want = [{ type: 'reasoning', text: 'Hm.', block: 0 }, { type: 'text', text: 'Caf' }, { type: 'text', text: 'é' }];
    expect([...parts.push(turn), ...parts.flush()]).toEqual(want);
    m.finish();
    m.reset();
    expect([...parts.push(turn), ...parts.flush()]).toEqual(want);
    // (a stream reset in the middle of a message of AWS's event stream, and one in the middle of a
    // read that threw, whose parts were never taken)
    const f = BEDROCK_FIXTURES.find((x) => x.name === 'bedrock-tools')!;
    const b = new ModelStream({ format: 'bedrock' });
    const bparts = new ModelPartReader(b);
    const bwant = [...bparts.push(f.bytes), ...bparts.flush()];
    expect(bwant.filter((p) => p.type === 'tool-call').length).toBeGreaterThan(2);
    b.reset();
    bparts.push(f.bytes.subarray(0, 30));
    b.reset();
    expect([...bparts.push(f.bytes), ...bparts.flush()]).toEqual(bwant);
    const o = new ModelStream({ format: 'openai' });
    const oparts = new ModelPartReader(o);
    const said = (t: string) => `data: {"choices":[{"index":0,"delta":{"content":"${t}"}}]}\n\n`;
    expect(() => oparts.push(enc(said('Gone.') + 'data: {"error":{"message":"overloaded","type":"server_error"}}\n\n'))).toThrow(ModelStreamError);
    o.reset();
    expect([...oparts.push(enc(`data: {"choices":[{"index":0,"delta":{"reasoning_content":"Again."}}]}\n\n${said('Hi.')}data: [DONE]\n\n`)), ...oparts.flush()])
      .toEqual([{ type: 'reasoning', text: 'Again.', block: 0 }, { type: 'text', text: 'Hi' }, { type: 'text', text: '.' }]);
  });
});

describe('ModelTextStream and ModelPartStream: a reader that leaves, a reader that is slow', () => {
  it('a writable side aborted while a write waits for the reader: the reader gets what was enqueued, then the abort\'s reason; the held write is not read', async () => {
    const ev = (t: string) => `data: {"choices":[{"index":0,"delta":{"content":"${t}"}}]}\n\n`;
    const think = (t: string) => `data: {"choices":[{"index":0,"delta":{"reasoning_content":"${t}"}}]}\n\n`;
    for (const make of [() => new ModelTextStream({ format: 'openai' }), () => new ModelPartStream({ format: 'openai' })]) {
      const s = make();
      const w = s.writable.getWriter();
      const reader = (s.readable as ReadableStream<unknown>).getReader();
      const first = reader.read();
      const held = [w.write(enc(think('Hm. ') + ev('Hello ') + ev('there '))), w.write(enc(ev('world ')))];
      for (const p of held) p.catch(() => {});
      const out: unknown[] = [(await first).value];
      await new Promise((r) => setTimeout(r, 5));
      const reason = new Error('socket hang up');
      const aborted = w.abort(reason).catch(() => {});
      await new Promise((r) => setTimeout(r, 20));
      let error: unknown;
      try {
        for (let x = await reader.read(); !x.done; x = await reader.read()) out.push(x.value);
      } catch (e) {
        error = e;
      }
      await aborted;
      const name = s.constructor.name;
      expect(error, name).toBe(reason);
      expect(out, name).toEqual(s instanceof ModelPartStream
        ? [{ type: 'reasoning', text: 'Hm. ', block: 0 }, { type: 'text', text: 'Hello' }, { type: 'text', text: ' there' }] // (the read's events a push each)
        : ['Hello there']);
      await expect(s.report, name).rejects.toBe(reason);
    }
  });

  const turn = anthropicTurn('Hm.');
  const makers = [() => new ModelTextStream({ format: 'anthropic' }), () => new ModelPartStream({ format: 'anthropic' })];

  it('a reader that cancels after the completion, the upstream still open: its cancel resolves, and so does the report (a break out of for await too)', async () => {
    for (const make of makers) {
      const t = make();
      const w = t.writable.getWriter();
      for (const c of turn) w.write(c).catch(() => {});
      const r = t.readable.getReader();
      while (t.model.status !== 'done') await r.read();
      await expect(r.cancel('client left')).resolves.toBeUndefined();
      expect((await t.report).status).toBe('done');
      const u = make();
      const v = u.writable.getWriter();
      for (const c of turn) v.write(c).catch(() => {});
      const run = async () => {
        for await (const _ of readChunks(u.readable as ReadableStream<unknown>)) if (u.model.status === 'done') break;
      };
      await expect(run()).resolves.toBeUndefined();
    }
  });

  it('an upstream body that breaks while the reader has not taken what was enqueued: the reader still gets it, then the error (after the completion: the parts\' finish)', async () => {
    const fail = new Error('socket hang up');
    // (one read: its output is what the transform enqueued when the body breaks at its next pull)
    for (const [what, reads] of [['after the completion', [concat(turn)]], ['before it', [concat(turn.slice(0, 6))]]] as const) {
      for (const make of makers) {
        const t = make();
        let i = 0;
        let pulls = 0;
        const body = new ReadableStream<Uint8Array>({ pull(c) { pulls++; if (i < reads.length) c.enqueue(reads[i++]); else c.error(fail); } });
        const readable = body.pipeThrough(t as TransformStream<Uint8Array, unknown>);
        // (the reader reads nothing until the body has broken)
        for (let k = 0; k < 400 && pulls <= reads.length; k++) await new Promise((r) => setTimeout(r, 5));
        expect(pulls).toBe(reads.length + 1);
        await new Promise((r) => setTimeout(r, 20));
        // (one read, then a pause: the read lets the transform run, whose other parts wait in the queue)
        const reader = readable.getReader();
        const out: unknown[] = [];
        let error: unknown;
        try {
          const first = await reader.read();
          if (!first.done) out.push(first.value);
          await new Promise((r) => setTimeout(r, 50));
          for (let x = await reader.read(); !x.done; x = await reader.read()) out.push(x.value);
        } catch (e) {
          error = e;
        }
        const text = out.map((x) => (typeof x === 'string' ? x : (x as ModelPart).type === 'text' ? (x as { text: string }).text : '')).join('');
        const name = `${t.constructor.name}, ${what}`;
        expect(text, name).toBe(what === 'before it' ? 'Caf' : 'Café');
        if (t instanceof ModelPartStream) expect(out[0], name).toEqual({ type: 'reasoning', text: 'Hm.', block: 0 });
        const ends = t instanceof ModelPartStream && what !== 'before it';
        expect(error, name).toBe(ends ? undefined : fail);
        if (ends) expect((out[out.length - 1] as ModelPart).type, name).toBe('finish');
      }
    }
  });
});
