// A relay that ends before its upstream does: the gateway's own reasons (SseRelay.abort: a timeout,
// a limit of its own) and the core that cannot hold the stream (CoreMemoryError). Either way the
// client gets one error event in its format, after everything relayed before it, and never a
// completion; the relay writes nothing more, and its core memory goes back.
import { describe, expect, it } from 'vitest';
import { CoreMemoryError, SseRelay, SseRelayStream, coreMemoryUsed, readChunks, setCoreMemoryLimit } from '../../bindings/index.js';
import { readAnthropic, readOpenAi } from '../helpers/clients.js';
import { ANTHROPIC_HI, OPENAI_END, OPENAI_HI } from '../helpers/relay-starts.js';
import { settled } from '../helpers/settled.js';
import { encodeMessage } from '../helpers/bedrock-fixtures.js';
import { concat } from '../helpers/random.js';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/** An event left unfinished: 256 KiB of one delta's text, held by the relay until its end comes. */
const HELD = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"${'x'.repeat(256 * 1024)}`;

const openaiError = (message: string, type: string, code: string | null) => `data: ${JSON.stringify({ error: { message, type, code } })}\n\n`;
const anthropicError = (type: string, message: string) => `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message } })}\n\n`;

describe('SseRelay.abort', () => {
  it.each([
    ['timeout', 'timeout', 'timeout_error'],
    ['overloaded', 'overloaded', 'overloaded_error'],
    ['server', 'server_error', 'api_error'],
  ] as const)('writes the client its error event in its words (%s), after what was relayed, and nothing more', (kind, openaiType, anthropicType) => {
    const message = `the gateway stopped the stream (${kind})`;
    // to OpenAI: from OpenAI (passed through) and from Anthropic (translated)
    for (const [from, head] of [['openai', OPENAI_HI], ['anthropic', ANTHROPIC_HI]] as const) {
      const r = new SseRelay({ from, to: 'openai' });
      const out = dec(r.push(enc(head)));
      const tail = dec(r.abort({ message, kind, code: 'ERR_GATEWAY_SAYS' }));
      expect(tail, from).toBe(openaiError(message, openaiType, 'ERR_GATEWAY_SAYS'));
      const client = readOpenAi(enc(out + tail));
      expect(client.text).toBe('Hé ');
      expect(client.done).toBe(false);
      expect(client.error).toEqual({ message, type: openaiType, code: 'ERR_GATEWAY_SAYS' });
      expect(r.status).toBe('failed');
      expect(r.error).toBeUndefined(); // (the upstream's errors only)
      // nothing more: not the rest of the upstream, not its completion
      expect(dec(r.push(enc(from === 'openai' ? OPENAI_END : 'event: message_stop\ndata: {"type":"message_stop"}\n\n')))).toBe('');
      expect(dec(r.flush())).toBe('');
      expect(dec(r.abort({ message: 'again' }))).toBe('');
    }
    // to Anthropic: from OpenAI (translated); the code is OpenAI's field, Anthropic's error has none
    const r = new SseRelay({ from: 'openai', to: 'anthropic' });
    const out = dec(r.push(enc(OPENAI_HI)));
    const tail = dec(r.abort({ message, kind, code: 'ERR_GATEWAY_SAYS' }));
    expect(tail).toBe(anthropicError(anthropicType, message));
    const client = readAnthropic(enc(out + tail));
    expect(client.text).toBe('Hé ');
    expect(client.done).toBe(false);
    expect(client.error).toEqual({ type: anthropicType, message });
    expect(r.status).toBe('failed');
  });

  it("takes 'server' and no code by default", () => {
    const r = new SseRelay({ from: 'openai' });
    r.push(enc(OPENAI_HI));
    expect(dec(r.abort({ message: 'stop' }))).toBe(openaiError('stop', 'server_error', null));
  });

  it("writes the upstream's own error instead when it had one not written yet (it came first)", () => {
    const r = new SseRelay({ from: 'anthropic', to: 'openai' });
    const upstream = `${ANTHROPIC_HI}event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n`;
    const out = dec(r.push(enc(upstream)));
    const tail = dec(r.abort({ message: 'client timeout', kind: 'timeout' }));
    const client = readOpenAi(enc(out + tail));
    expect(client.text).toBe('Hé ');
    expect(client.error).toMatchObject({ message: 'Overloaded', code: 'ERR_PROVIDER', provider_code: 'overloaded_error' });
    expect(r.error?.code).toBe('ERR_PROVIDER');
    expect(r.status).toBe('failed');
  });

  it("after the upstream's completion: the client's end, never an error after a completion (each client format)", () => {
    const ANTHROPIC_END = 'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
      + 'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}\n\n'
      + 'event: message_stop\ndata: {"type":"message_stop"}\n\n';
    for (const [from, to, body] of [
      ['openai', 'openai', OPENAI_HI + OPENAI_END], ['openai', 'anthropic', OPENAI_HI + OPENAI_END],
      ['anthropic', 'openai', ANTHROPIC_HI + ANTHROPIC_END], ['anthropic', 'anthropic', ANTHROPIC_HI + ANTHROPIC_END],
    ] as const) {
      const aborted = new SseRelay({ from, to, id: 'x', model: 'm' });
      const flushed = new SseRelay({ from, to, id: 'x', model: 'm' });
      const out = dec(aborted.push(enc(body)));
      expect(dec(flushed.push(enc(body)))).toBe(out);
      expect(aborted.status).toBe('done');
      const tail = dec(aborted.abort({ message: 'the client took too long', kind: 'timeout', code: 'ERR_CLIENT_TIMEOUT' }));
      expect(tail, `${from} → ${to}`).toBe(dec(flushed.flush()));
      const client = (to === 'openai' ? readOpenAi : readAnthropic)(enc(out + tail));
      expect(client.done).toBe(true);
      expect(client.error).toBeNull();
      expect(client.text).toBe('Hé ');
      expect(aborted.status).toBe('done');
      expect(dec(aborted.flush())).toBe('');
    }
  });

  it('after the completion the client\'s end is written at once, and after flush() abort() writes nothing', () => {
    const r = new SseRelay({ from: 'openai' });
    expect(r.endWritten).toBe(false);
    expect(dec(r.push(enc(OPENAI_HI + OPENAI_END)))).toBe(OPENAI_HI + OPENAI_END);
    expect(r.endWritten).toBe(true);
    expect(dec(r.flush())).toBe('');
    expect(dec(r.abort({ message: 'late', kind: 'timeout' }))).toBe('');
    expect(r.status).toBe('done');
  });

  it('gives the core memory of an unfinished event back at once', async () => {
    await settled();
    const before = coreMemoryUsed();
    const r = new SseRelay({ from: 'openai' });
    r.push(enc(OPENAI_HI + HELD));
    expect(coreMemoryUsed() - before).toBeGreaterThan(256 * 1024);
    r.abort({ message: 'stop' });
    expect(coreMemoryUsed()).toBe(before);
  });

  it('after dispose(): nothing', () => {
    const r = new SseRelay({ from: 'openai' });
    r.push(enc(OPENAI_HI));
    r.dispose();
    expect(dec(r.abort({ message: 'late' }))).toBe('');
  });

  it('refuses a reason that is not one with a TypeError, and changes nothing', () => {
    const r = new SseRelay({ from: 'openai' });
    r.push(enc(OPENAI_HI));
    for (const bad of [undefined, null, 'timeout', { kind: 'timeout' }, { message: 1 }, { message: 'm', kind: 'slow' }, { message: 'm', code: 504 }, { message: 'm', status: 504 }]) {
      expect(() => r.abort(bad as never), JSON.stringify(bad)).toThrow(TypeError);
      expect(() => r.abort(bad as never), JSON.stringify(bad)).toThrow(/^SseRelay.abort/);
    }
    expect(r.status).toBe('open');
    expect(dec(r.push(enc(OPENAI_END)))).toBe(OPENAI_END);
    expect(dec(r.flush())).toBe('');
  });

});

describe('a relay the core cannot hold (CoreMemoryError)', () => {
  /**
   * A budget that the relay's first event fits in and HELD does not (taken once the collector has
   * freed what earlier suites left, which would otherwise widen it during the test).
   */
  const budget = () => setCoreMemoryLimit(coreMemoryUsed() + 32 * 1024);

  it.each(['openai', 'anthropic'] as const)('flush() writes the error event (to %s), never a completion', async (to) => {
    await settled();
    const r = new SseRelay({ from: 'openai', to });
    budget();
    try {
      const out = dec(r.push(enc(OPENAI_HI)));
      let err: unknown;
      try { r.push(enc(HELD)); } catch (e) { err = e; }
      expect(err).toBeInstanceOf(CoreMemoryError);
      expect(r.status).toBe('failed');
      const message = `the relay could not hold the stream: ${(err as Error).message}`;
      const tail = dec(r.flush());
      expect(tail).toBe(to === 'openai' ? openaiError(message, 'overloaded', 'ERR_CORE_MEMORY') : anthropicError('overloaded_error', message));
      const client = (to === 'openai' ? readOpenAi : readAnthropic)(enc(out + tail));
      expect(client.text).toBe('Hé ');
      expect(client.done).toBe(false);
      expect(dec(r.flush())).toBe('');
    } finally {
      setCoreMemoryLimit(undefined);
    }
  });

  it('a Bedrock read larger than the input window (64 KiB) is the same: overloaded, failed', async () => {
    // ConverseStream messages of ~1 KiB of text each, 100 of them in one read
    const msgs: Uint8Array[] = [encodeMessage({ event: 'messageStart', payload: '{"role":"assistant"}' })];
    for (let i = 0; i < 100; i++) msgs.push(encodeMessage({ event: 'contentBlockDelta', payload: JSON.stringify({ contentBlockIndex: 0, delta: { text: 'y'.repeat(1000) } }) }));
    const read = concat(msgs);
    expect(read.length).toBeGreaterThan(64 * 1024);
    await settled();
    const r = new SseRelay({ from: 'bedrock', to: 'anthropic' });
    budget();
    let err: unknown;
    try {
      try { r.push(read); } catch (e) { err = e; }
    } finally {
      setCoreMemoryLimit(undefined);
    }
    expect(err).toBeInstanceOf(CoreMemoryError);
    expect(r.status).toBe('failed');
    expect(dec(r.flush())).toBe(anthropicError('overloaded_error', `the relay could not hold the stream: ${(err as Error).message}`));
  });

  it("after the upstream's completion, a read it cannot hold is not the answer: flush() writes the client's end", async () => {
    await settled();
    const r = new SseRelay({ from: 'openai', to: 'anthropic', id: 'x', model: 'm' });
    const flushed = new SseRelay({ from: 'openai', to: 'anthropic', id: 'x', model: 'm' });
    const out = dec(r.push(enc(OPENAI_HI + OPENAI_END)));
    flushed.push(enc(OPENAI_HI + OPENAI_END));
    budget();
    let err: unknown;
    try {
      try { r.push(enc(`: trailing\n\n${HELD}`)); } catch (e) { err = e; }
    } finally {
      setCoreMemoryLimit(undefined);
    }
    expect(err).toBeInstanceOf(CoreMemoryError);
    expect(r.status).toBe('done');
    const tail = dec(r.flush());
    expect(tail).toBe(dec(flushed.flush()));
    expect(readAnthropic(enc(out + tail))).toMatchObject({ text: 'Hé ', done: true, error: null });
  });

  it('SseRelayStream: the client gets the events before, the error event and the end; the upstream is cancelled', async () => {
    await settled();
    const relay = new SseRelayStream({ from: 'openai', to: 'anthropic' });
    let cancelled: unknown = null;
    let pulls = 0;
    const upstream = new ReadableStream<Uint8Array>({
      pull(c) {
        pulls++;
        if (pulls === 1) c.enqueue(enc(OPENAI_HI));
        else if (pulls === 2) {
          budget();
          c.enqueue(enc(HELD));
        } else {
          c.enqueue(enc(OPENAI_HI)); // (a live upstream: it would go on)
        }
      },
      cancel(reason) { cancelled = reason ?? 'cancelled'; },
    });
    const got: string[] = [];
    try {
      for await (const b of readChunks(upstream.pipeThrough(relay))) got.push(dec(b));
    } finally {
      setCoreMemoryLimit(undefined);
    }
    const all = got.join('');
    expect(relay.relay.status).toBe('failed');
    expect(cancelled).not.toBeNull();
    const client = readAnthropic(enc(all));
    expect(client.text).toBe('Hé ');
    expect(client.done).toBe(false);
    expect(client.error).toMatchObject({ type: 'overloaded_error' });
    expect(String(client.error!.message)).toMatch(/^the relay could not hold the stream: /);
    expect(all.endsWith(anthropicError('overloaded_error', String(client.error!.message)))).toBe(true);
  });
});
