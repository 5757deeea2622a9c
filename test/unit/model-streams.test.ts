// SseRelayStream and ModelTextStream (the model layer for fetch handlers) against SseRelay and
// ModelStream on the same bytes, for every model fixture and on random cuttings; their errors,
// their report, and the one-line relay into a Response.
import { describe, expect, it } from 'vitest';
import { ModelStream, ModelStreamError, ModelTextStream, SseRelay, SseRelayStream, readChunks } from '../../bindings/index.js';
import { encodeMessage } from '../helpers/bedrock-fixtures.js';
import { FIXTURES } from '../helpers/model-fixtures.js';
import { BROKE, unclocked } from '../helpers/model-streams.js';
import { SEED, concat, cut, randomCuts, rng } from '../helpers/random.js';

const enc = (s: string) => new TextEncoder().encode(s);
const from = (chunks: Uint8Array[]) => new ReadableStream<Uint8Array>({
  start(c) { for (const x of chunks) c.enqueue(x); c.close(); },
});
const unclock = (b: Uint8Array) => unclocked(new TextDecoder().decode(b));

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
          const want = concat([...chunks.map((c) => r.push(c).slice()), r.abort(BROKE).slice()]);
          const fail = new Error('connection reset');
          const stream = new SseRelayStream(options);
          const { out, error } = await drainAfter(dropping(chunks, fail).pipeThrough(stream), wait);
          const what = `${f.name} cut at ${at} → ${to}, the reader ${wait ? 'late' : 'first'} (seed ${SEED + 7})`;
          expect(error, what).toBeUndefined();
          expect(unclock(concat(out)), what).toBe(unclock(want));
          expect(stream.upstreamError, what).toBe(fail);
          expect(stream.relay.status, what).toBe(r.status);
          expect(stream.relay.error?.code, what).toBe(r.error?.code);
          r.dispose();
        }
      }
    }
  });

  it('an upstream body that errors after its completion ends the client\'s stream with the client\'s completion, and one that drops mid-event with the error event', async () => {
    const events = ['Hel', 'lo'].map((t) => `data: {"choices":[{"index":0,"delta":{"content":"${t}"}}]}\n\n`);
    const fail = new Error('connection reset');
    const done = new SseRelayStream({ from: 'openai', to: 'anthropic', id: 'x', model: 'm' });
    const whole = [...events, 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n', 'data: [DONE]\n\n'].map(enc);
    const a = await drain(dropping(whole, fail).pipeThrough(done));
    expect(a.error).toBeUndefined();
    expect(new TextDecoder().decode(concat(a.out))).toMatch(/"text":"lo"\}\}\n\n[^]*event: message_stop\ndata: \{"type":"message_stop"\}\n\n$/);
    expect(done.relay.status).toBe('done');
    expect(done.upstreamError).toBe(fail);

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
      let want = '';
      let wantError: ModelStreamError | undefined;
      try {
        want += m.push(f.bytes);
        want += m.flush();
      } catch (e) {
        if (!(e instanceof ModelStreamError)) throw e;
        wantError = e;
        want += e.text;
      }
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

  it('an upstream body that errors after the completion: the whole text, the stream ends, the report is of what was read; before it, the body\'s error', async () => {
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
    const anthropic = [
      'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"c","usage":{"input_tokens":3,"output_tokens":1}}}\n\n',
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Café"}}\n\n',
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}\n\n',
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ].map(enc);
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
        expect([out.join(''), error], what).toEqual(['Café', undefined]);
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
