// SseRelay on one stream of each kind, read whole and in pieces; its output read back by
// eventsource-parser and JSON.parse. (The recorded-shape fixtures and the official client are in relay.test.ts.)
import { createParser } from 'eventsource-parser';
import { expect, it } from 'vitest';
import { SseRelay, SseRelayStream } from '../../bindings/index.js';
import { standardChunkings } from '../helpers/random.js';

const enc = (s: string) => new TextEncoder().encode(s);

function relayAll(from: 'openai' | 'anthropic' | 'ollama' | 'ddg' | 'openai-responses', bytes: Uint8Array, step: number) {
  const r = new SseRelay({ from });
  const parts: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += step) parts.push(r.push(bytes.subarray(i, i + step)).slice());
  parts.push(r.flush().slice());
  const out = new TextDecoder().decode(Buffer.concat(parts));
  const datas: string[] = [];
  const comments: string[] = [];
  const p = createParser({ onEvent: (e) => datas.push(e.data), onComment: (c) => comments.push(c) });
  p.feed(out);
  return { relay: r, out, datas, comments };
}

it('translates each format to OpenAI chunks, passes OpenAI through, and ends with [DONE] only after a completed upstream', () => {
  const deltas = ['Hel', 'lo "w" \\ ', 'wörld 👩\u200d💻', ' e\u0301'];
  const a = (t: string, d: unknown) => `event: ${t}\ndata: ${JSON.stringify(d)}\n\n`;
  let anth = a('message_start', { type: 'message_start', message: { usage: { input_tokens: 5 } } }) + ': keep-alive\n\n';
  for (const d of deltas) anth += a('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: d } });
  anth += a('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }) + a('message_stop', { type: 'message_stop' });
  const ev = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  let oa = '';
  for (const d of deltas) oa += ev({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: d }, finish_reason: null }] });
  oa += ev({ id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) + 'data: [DONE]\n\n';
  const ol = deltas.map((d) => JSON.stringify({ message: { content: d }, done: false })).join('\n') + '\n' + JSON.stringify({ message: { content: '' }, done: true, done_reason: 'stop' }) + '\n';
  const dd = deltas.map((d, i) => `data: ${JSON.stringify(i % 2 ? { content: d } : { message: d })}\r\n`).join('') + '[DONE]\r\n';
  const text = deltas.join('');
  for (const [from, src, finish] of [['anthropic', anth, 'stop'], ['openai', oa, 'stop'], ['ollama', ol, 'stop'], ['ddg', dd, 'stop']] as const) {
    const bytes = enc(src);
    for (const step of [bytes.length, 1, 13]) {
      const { relay, datas, comments } = relayAll(from, bytes, step);
      expect(datas[datas.length - 1]).toBe('[DONE]');
      const chunks = datas.slice(0, -1).map((d) => JSON.parse(d));
      expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join(''), `${from} ${step}`).toBe(text);
      // the finish chunk, then (from an upstream that sent usage) the usage chunk, with no choices
      const last = chunks.filter((c) => c.choices.length !== 0).pop();
      expect(last.choices[0].finish_reason).toBe(finish);
      if (from === 'anthropic') expect(chunks[chunks.length - 1]).toMatchObject({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 } });
      expect(relay.textBytes).toBe(enc(text).length);
      expect(relay.status).toBe('done');
      if (from === 'anthropic') expect(comments).toEqual(['keep-alive']);
      if (from === 'openai') expect(datas.slice(0, -1)).toEqual(oa.split('\n\n').filter((e) => e && e !== 'data: [DONE]').map((e) => e.slice(6)));
    }
  }
  // truncated upstream: an error event, never [DONE]
  const cut = relayAll('anthropic', enc(anth.slice(0, anth.indexOf('message_delta'))), 7);
  expect(cut.datas).not.toContain('[DONE]');
  expect(JSON.parse(cut.datas[cut.datas.length - 1]).error.code).toBe('ERR_STREAM_TRUNCATED');
  // a provider error mid-stream: the events before it, then its error event
  const bad = relayAll('openai', enc(ev({ choices: [{ index: 0, delta: { content: 'a' } }] }) + ev({ error: { message: 'Overloaded', type: 'server_error' } })), 5);
  expect(bad.datas.length).toBe(2);
  expect(JSON.parse(bad.datas[1]).error).toMatchObject({ message: 'Overloaded', code: 'ERR_PROVIDER' });
  expect(bad.relay.status).toBe('failed');
});

it('a relay keeps no large output buffer once its reads are small again, and an idle one holds none', () => {
  const r = new SseRelay({ from: 'openai' });
  const ev = (s: string) => new TextEncoder().encode(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: s } }] })}\n\n`);
  const big = r.push(ev('x'.repeat(100_000)));
  expect(big.length).toBe(ev('x'.repeat(100_000)).length);
  expect(big.buffer.byteLength).toBeGreaterThanOrEqual(100_000);
  const small = r.push(ev('y'));
  expect(new TextDecoder().decode(small)).toBe(new TextDecoder().decode(ev('y')));
  const after = r.push(ev('z'));
  expect(after.buffer.byteLength).toBeLessThanOrEqual(16 * 1024);
  expect(new TextDecoder().decode(after)).toBe(new TextDecoder().decode(ev('z')));
  expect(new SseRelay({ from: 'openai' }).push(new Uint8Array(0)).buffer.byteLength).toBe(0);
});

it('from openai, a chunk of whole events written as the relay writes them comes back as the chunk itself; any other (and one that ends in the [DONE]), as the bytes the relay writes', () => {
  const ev = (i: number) => `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"w${i} ü"},"finish_reason":null}]}\n\n`;
  const r = new SseRelay({ from: 'openai' });
  let body = '';
  for (let i = 0; i < 500; i++) body += ev(i);
  const whole = Buffer.from(body); // 63 KB: one piece of the input window
  expect(r.push(whole)).toBe(whole); // the chunk itself (Node compares memory natively), no copy
  let tiny = '';
  for (let i = 0; i < 6000; i++) tiny += 'data: {}\n\n'; // more records than one batch holds: the call continues
  const many = Buffer.from(tiny);
  expect(Buffer.from(r.push(many)).equals(many)).toBe(true);
  const big = Buffer.concat([whole, whole]); // larger than the input window: framed in pieces, still the chunk itself
  expect(r.push(big)).toBe(big);
  expect(r.eventsOut).toBe(7500);
  // the same events with "data:" and no space, a comment, and an event cut at the end: written as the relay writes them
  const bare = Buffer.from(`data:${ev(1).slice(6)}: ping\n\n${ev(2)}${ev(3).slice(0, 20)}`);
  const out2 = r.push(bare);
  expect(out2).not.toBe(bare);
  expect(Buffer.from(out2).toString()).toBe(`${ev(1)}: ping\n\n${ev(2)}`);
  // the rest of the cut event, then an event the relay reads in JS (a finish chunk): the chunk's own bytes come first
  const finish = 'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n';
  const rest = Buffer.from(ev(3).slice(20) + finish);
  const out3 = Buffer.from(r.push(rest)).toString();
  expect(out3).toBe(ev(3) + finish);
  // a finish chunk between text deltas (read in JS) is still the chunk's own bytes
  const mid = Buffer.from(ev(4) + finish + ev(5));
  expect(r.push(mid)).toBe(mid);
  // a chunk that ends in the [DONE]: the relay writes its own at once, after the chunk's events
  const last = Buffer.from(`${ev(6)}data: [DONE]\n\n`);
  const tail = r.push(last);
  expect(Buffer.from(tail).toString()).toBe(`${ev(6)}data: [DONE]\n\n`);
  expect(r.endWritten).toBe(true);
  expect(r.flush().length).toBe(0);
  expect(r.status).toBe('done');
  expect(r.eventsOut).toBe(7500 + 2 + 2 + 3 + 1 + 1);
});

it('a keep-alive after the completion, in the read that brought it, is not written after the client\'s end (which the relay wrote at the completion)', () => {
  const hi = 'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n';
  const stop = 'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n';
  const answer = `${hi}: before\n\n${stop}data: [DONE]\n\n`;
  // from OpenAI to OpenAI: the comment before the completion passes, the one after it does not
  const same = new SseRelay({ from: 'openai', to: 'openai' });
  expect([Buffer.from(same.push(enc(`${answer}: keep-alive\n\n`))).toString(), same.endWritten, same.eventsOut]).toEqual([answer, true, 3]);
  expect(same.flush().length).toBe(0);
  // to Anthropic's clients (keep-alives are pings there): nothing after message_stop
  const out = (tail: string) => {
    const r = new SseRelay({ from: 'openai', to: 'anthropic', id: 'msg_1', model: 'm' });
    const s = Buffer.from(r.push(enc(answer + tail))).toString();
    return [s, r.eventsOut, r.flush().length];
  };
  const whole = out('');
  expect((whole[0] as string).endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n')).toBe(true);
  expect(out(': keep-alive\n\n')).toEqual(whole);
});

it('from openai, a chunk whose events differ from what the relay writes anywhere comes back as the relay\'s bytes', () => {
  const ev = (i: number) => `data: {"choices":[{"index":0,"delta":{"content":"w${i}"},"finish_reason":null}]}\n\n`;
  const finish = '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}';
  const cases: [string, string][] = [
    [`${ev(1)}id: 7\n${ev(2)}`, ev(1) + ev(2)], // a field the relay drops
    [`${ev(1)}data:${finish}\n\n`, `${ev(1)}data: ${finish}\n\n`], // an event read in JS, without the space
    [`${ev(1)}data: ${finish}\r\n\r\n${ev(2)}`, `${ev(1)}data: ${finish}\n\n${ev(2)}`], // CRLF after it
    [`${ev(1)}\n${ev(2)}`, ev(1) + ev(2)], // a blank line more
    [`${ev(1)}event: x\n${ev(2)}`, ev(1) + ev(2)], // an event type
  ];
  for (const [input, want] of cases) {
    const r = new SseRelay({ from: 'openai', comments: false });
    const chunk = Buffer.from(input);
    const out = r.push(chunk);
    expect(out.buffer).not.toBe(chunk.buffer);
    expect(Buffer.from(out).toString()).toBe(want);
    r.dispose();
  }
});

it('this runtime calls a transformer\'s cancel (Node, Bun, Deno): the relay stream keeps the TransformStream\'s own sides', async () => {
  // (Chromium and Firefox do not: there seam's streams put their own in front; test/browser, stream-sides)
  let cancels = false;
  await new TransformStream({ cancel() { cancels = true; } } as Transformer).readable.cancel();
  const relay = new SseRelayStream({ from: 'openai' });
  expect([cancels, Object.hasOwn(relay, 'readable'), Object.hasOwn(relay, 'writable')]).toEqual([true, false, false]);
  await relay.readable.cancel();
});

it('damage after the upstream\'s completion is not the answer: the client gets its completion, never an error after it, however the reads fell', () => {
  const sse = (o: unknown, event?: string) => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(o)}\n\n`;
  const upstreams: ['openai' | 'anthropic', string][] = [
    ['openai', sse({ choices: [{ index: 0, delta: { content: 'hi' } }] }) + sse({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) + 'data: [DONE]\n\n'],
    ['anthropic', sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } }, 'content_block_delta') + sse({ type: 'message_stop' }, 'message_stop')],
  ];
  const bad = Uint8Array.of(...enc('data: '), 0xff, 0x0a, 0x0a);
  for (const [from, body] of upstreams) {
    for (const to of ['openai', 'anthropic'] as const) {
      const answer = enc(body);
      const whole = new Uint8Array([...answer, ...bad]);
      const outs: string[] = [];
      for (const chunks of [[whole], [answer, bad], [whole.subarray(0, answer.length + 7), whole.subarray(answer.length + 7)]]) {
        const r = new SseRelay({ from, to });
        const parts = chunks.map((c) => r.push(c).slice());
        parts.push(r.flush().slice());
        const out = new TextDecoder().decode(Buffer.concat(parts));
        expect([r.status, out.includes('error')], `${from} → ${to}`).toEqual(['done', false]);
        expect(out.endsWith(to === 'openai' ? 'data: [DONE]\n\n' : 'data: {"type":"message_stop"}\n\n'), `${from} → ${to}: ${out}`).toBe(true);
        outs.push(out.replace(/"(id|created)":("[^"]*"|\d+)/g, ''));
      }
      expect(new Set(outs).size, `${from} → ${to}`).toBe(1);
      // and abort() after the completion writes its end as flush does
      const a = new SseRelay({ from, to });
      a.push(whole);
      expect(new TextDecoder().decode(a.abort({ message: 'gone', kind: 'timeout' }))).not.toContain('error');
    }
  }
});

it("OpenAI's errors to Anthropic's clients: in Anthropic's words, never another provider's word of the same shape", () => {
  const ev = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  const cases: [Record<string, unknown>, string][] = [
    [{ message: 'The server had an error', type: 'server_error' }, 'api_error'],
    [{ message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' }, 'rate_limit_error'],
    [{ message: 'You exceeded your quota', type: 'insufficient_quota', code: 'insufficient_quota' }, 'billing_error'],
    [{ message: 'Too long', type: 'invalid_request_error', code: 'context_length_exceeded' }, 'invalid_request_error'],
    [{ message: 'Bad', type: 'invalid_request_error' }, 'invalid_request_error'],
    [{ message: 'Busy', type: 'overloaded_error' }, 'overloaded_error'],
    [{ message: 'Odd', type: 'something_new_error' }, 'api_error'],
    [{ message: 'No such parameter', type: 'invalid_request_error', code: 'unsupported_parameter' }, 'invalid_request_error'],
    [{ message: 'Not an image', type: 'invalid_request_error', code: 'image_parse_error' }, 'invalid_request_error'],
  ];
  for (const [error, type] of cases) {
    const bytes = enc(ev({ choices: [{ index: 0, delta: { content: 'a' } }] }) + ev({ error }));
    for (const chunks of standardChunkings(bytes)) {
      const r = new SseRelay({ from: 'openai', to: 'anthropic' });
      const out = new TextDecoder().decode(Buffer.concat([...chunks.map((c) => r.push(c).slice()), r.flush()]));
      expect(out.slice(out.lastIndexOf('data: ')), JSON.stringify(error)).toBe(`data: ${JSON.stringify({ type: 'error', error: { type, message: error.message } })}\n\n`);
    }
  }
  // Responses' failed response, by its error's code
  const rs = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
  const r = new SseRelay({ from: 'openai-responses', to: 'anthropic' });
  const out = new TextDecoder().decode(Buffer.concat([r.push(enc(rs({ type: 'response.created', response: { id: 'r', status: 'in_progress', output: [] } })
    + rs({ type: 'response.failed', response: { id: 'r', status: 'failed', error: { code: 'rate_limit_exceeded', message: 'Slow down' }, output: [] } }))), r.flush()]));
  expect(out.slice(out.lastIndexOf('data: '))).toBe(`data: ${JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'Slow down' } })}\n\n`);
});

it('OpenAI to OpenAI: a first chunk written anew (Mistral\'s content as parts) keeps its role, which openai-node wants in a choice\'s first chunk, at every cut', async () => {
  const { openaiFinal, sameAtEveryCut } = await import('../helpers/sdk-clients.js');
  const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'magistral', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const body = chunk({ role: 'assistant', content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'Hm.' }] }, { type: 'text', text: 'Grüß' }] })
    + chunk({ content: ' dich' }) + chunk({}, 'stop') + 'data: [DONE]\n\n';
  const r = new SseRelay({ from: 'openai', to: 'openai' });
  const wire = new TextDecoder().decode(r.push(enc(body))) + new TextDecoder().decode(r.flush());
  expect(wire.split('\n\n')[0]).toBe('data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"magistral","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}');
  const final = await sameAtEveryCut(enc(body), () => new SseRelay({ from: 'openai', to: 'openai' }), async (b) => {
    const c = (await openaiFinal(b)).choices[0]!;
    return [c.message.role, c.message.content, c.finish_reason];
  });
  expect(final).toEqual(['assistant', 'Grüß dich', 'stop']);
});

it('OpenAI to OpenAI, following choice 1: its event written anew (Mistral\'s content as parts) keeps index 1, and each choice reads whole in openai-node, at every cut', async () => {
  const { openaiFinal, sameAtEveryCut } = await import('../helpers/sdk-clients.js');
  const chunk = (index: number, delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c2', object: 'chat.completion.chunk', created: 2, model: 'magistral', choices: [{ index, delta, finish_reason: finish }] })}\n\n`;
  const body = chunk(0, { role: 'assistant', content: 'Ja' }) + chunk(1, { role: 'assistant', content: [{ type: 'text', text: 'Nein' }] })
    + chunk(0, { content: ', gern' }) + chunk(1, { content: ', danke' }) + chunk(0, {}, 'stop') + chunk(1, {}, 'stop') + 'data: [DONE]\n\n';
  const relay = () => new SseRelay({ from: 'openai', to: 'openai', choice: 1 });
  const r = relay();
  const wire = new TextDecoder().decode(r.push(enc(body))) + new TextDecoder().decode(r.flush());
  expect(wire.split('\n\n').slice(1, 3)).toEqual([
    'data: {"id":"c2","object":"chat.completion.chunk","created":2,"model":"magistral","choices":[{"index":1,"delta":{"role":"assistant"},"finish_reason":null}]}',
    'data: {"id":"c2","object":"chat.completion.chunk","created":2,"model":"magistral","choices":[{"index":1,"delta":{"content":"Nein"},"finish_reason":null}]}',
  ]);
  const final = await sameAtEveryCut(enc(body), relay, async (b) => (await openaiFinal(b)).choices.map((c) => [c.index, c.message.content, c.finish_reason]));
  expect(final).toEqual([[0, 'Ja, gern', 'stop'], [1, 'Nein, danke', 'stop']]);
});

it('OpenAI to OpenAI: every choice passes, the other choices of an event written anew (content as parts, calls without index) read by openai-node as they were sent, whichever choice the relay follows, at every cut', async () => {
  const { openaiFinal, sameAtEveryCut } = await import('../helpers/sdk-clients.js');
  const data = (choices: unknown[]) => `data: ${JSON.stringify({ id: 'c3', object: 'chat.completion.chunk', created: 3, model: 'magistral', choices })}\n\n`;
  const body = data([{ index: 0, delta: { role: 'assistant', content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'Hm.' }] }, { type: 'text', text: 'Ja' }] }, finish_reason: null }])
    + data([{ index: 1, delta: { role: 'assistant', content: 'Nein' }, finish_reason: null }])
    + data([
      { index: 0, delta: { content: [{ type: 'text', text: ', gern' }] }, finish_reason: null },
      { index: 1, delta: { content: [{ type: 'text', text: ', danke' }] }, finish_reason: null, logprobs: null },
    ])
    + data([{ index: 1, delta: { tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }] }, finish_reason: null }])
    + data([{ index: 1, delta: { tool_calls: [{ id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } }] }, finish_reason: null }])
    + data([{ index: 0, delta: {}, finish_reason: 'stop' }, { index: 1, delta: {}, finish_reason: 'tool_calls' }])
    + 'data: [DONE]\n\n';
  const want = [
    [0, 'Ja, gern', 'stop', []],
    [1, 'Nein, danke', 'tool_calls', [['call_a', 'f', '{"x":1}'], ['call_b', 'g', '{}']]],
  ];
  const read = async (b: Uint8Array) => (await openaiFinal(b)).choices.map((c) => [
    c.index, c.message.content, c.finish_reason, (c.message.tool_calls ?? []).map((t) => [t.id, t.type === 'function' ? t.function.name : '', t.type === 'function' ? t.function.arguments : '']),
  ]);
  expect(await sameAtEveryCut(enc(body), () => new SseRelay({ from: 'openai', to: 'openai' }), read), 'following choice 0').toEqual(want);
  const one = new SseRelay({ from: 'openai', to: 'openai', choice: 1 });
  expect(await read(Buffer.concat([one.push(enc(body)).slice(), one.flush()])), 'following choice 1').toEqual(want);
  // the other choice's chunks as written: its thinking as reasoning_content, its calls given an index
  const r = new SseRelay({ from: 'openai', to: 'openai', reasoning: 'pass', choice: 1 });
  const wire = new TextDecoder().decode(r.push(enc(body))) + new TextDecoder().decode(r.flush());
  const chunks = wire.split('\n\n').filter((x) => x.startsWith('data: {')).map((x) => JSON.parse(x.slice(6)) as { choices: { index: number; delta: unknown }[] });
  expect(chunks.filter((c) => c.choices[0]?.index === 0).map((c) => c.choices[0].delta)).toEqual([
    { role: 'assistant', reasoning_content: 'Hm.', content: 'Ja' }, { content: ', gern' }, {},
  ]);
  const r0 = new SseRelay({ from: 'openai', to: 'openai', choice: 0 });
  const wire0 = new TextDecoder().decode(r0.push(enc(body))) + new TextDecoder().decode(r0.flush());
  const calls = wire0.split('\n\n').filter((x) => x.startsWith('data: {')).map((x) => JSON.parse(x.slice(6)) as { choices: { index: number; delta: { tool_calls?: unknown[] } }[] })
    .filter((c) => c.choices.length === 1 && c.choices[0].index === 1).flatMap((c) => c.choices[0].delta.tool_calls ?? []);
  expect(calls).toEqual([
    { index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '{"x":1}' } },
    { index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } },
  ]);
});

it('OpenAI to OpenAI, another choice\'s calls in events written anew: given the index its reader would give (after one that came with an index, a fragment with neither index nor id, an index null), and the usage last', async () => {
  const { openaiFinal } = await import('../helpers/sdk-clients.js');
  const data = (choices: unknown[], more: Record<string, unknown> = {}) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices, ...more })}\n\n`;
  const read = async (b: Uint8Array) => (await openaiFinal(b)).choices.map((c) => [
    c.index, (c.message.tool_calls ?? []).map((t) => (t.type === 'function' ? [t.id, t.function.name, t.function.arguments] : [])),
  ]);
  const relayed = (body: string, choice: number) => {
    const r = new SseRelay({ from: 'openai', to: 'openai', choice });
    return new Uint8Array(Buffer.concat([r.push(enc(body)).slice(), r.flush()]));
  };
  const start = (call: unknown) => data([{ index: 0, delta: { role: 'assistant', content: [{ type: 'text', text: 'A' }] } }, { index: 1, delta: { role: 'assistant', tool_calls: [call] } }]);
  // (the last event written anew too, its usage beside the choices: the usage's chunk comes last)
  const end = data([{ index: 0, delta: { content: [{ type: 'text', text: '.' }] }, finish_reason: 'stop' }, { index: 1, delta: {}, finish_reason: 'tool_calls' }], { usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }) + 'data: [DONE]\n\n';
  const cases: [string, string, unknown][] = [
    ['an index, then an id', start({ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } })
      + data([{ index: 1, delta: { tool_calls: [{ id: 'b', type: 'function', function: { name: 'g', arguments: '{"x":1}' } }] } }]) + end,
    [[0, []], [1, [['a', 'f', '{}'], ['b', 'g', '{"x":1}']]]]],
    ['a fragment with neither', start({ id: 'a', type: 'function', function: { name: 'f', arguments: '' } })
      + data([{ index: 1, delta: { tool_calls: [{ function: { arguments: '{"x":1}' } }] } }]) + end,
    [[0, []], [1, [['a', 'f', '{"x":1}']]]]],
    ['an index null', start({ index: null, id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }) + end, [[0, []], [1, [['a', 'f', '{}']]]]],
  ];
  for (const [what, body, want] of cases) {
    expect(await read(relayed(body, 1)), `${what}, following choice 1`).toEqual(want);
    const wire = relayed(body, 0);
    expect(await read(wire), `${what}, following choice 0`).toEqual(want);
    const chunks = new TextDecoder().decode(wire).split('\n\n').filter((x) => x.startsWith('data: {'));
    expect(JSON.parse(chunks[chunks.length - 1].slice(6)), what).toMatchObject({ choices: [], usage: { total_tokens: 3 } });
  }
});
