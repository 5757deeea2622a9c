// What a stream keeps for its life: not its request. The request's body, parsed, and the request
// sent upstream (its payload) are let go once the upstream request is sent; they were kept by the
// locals of the stream's serve(), which live as long as it awaits the answer (V8 keeps an async
// function's locals across its awaits whether or not they are read again): a long request, an
// agent's history, held in the gateway's memory for as long as its answer lasts, outside every
// limit. JSON.parse and JSON.stringify are watched for the requests' objects (WeakRefs), and the
// heap collected while the streams are open.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, test } from 'vitest';
import { closeGateway, metricsAt, post, startGateway, type Running } from './support.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let g: Running | undefined;
let restore = () => {};
afterEach(async () => {
  restore();
  await closeGateway(g);
  g = undefined;
});

/** One of the test's requests (parsed, or as sent upstream): its 2000 messages. */
const isRequest = (v: unknown) => typeof v === 'object' && v !== null && (v as { messages?: unknown[] }).messages?.length === 2000;

/**
 * Weak references to each request object JSON.parse makes or JSON.stringify is given from now until
 * `restore()` (wrapped by hand: a spy keeps every call's arguments and results); the fake upstream's
 * reading of them is its own, and it keeps them.
 */
function watchRequests(): WeakRef<object>[] {
  const refs: WeakRef<object>[] = [];
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  JSON.parse = (text: string, reviver?: never) => {
    const v = parse(text, reviver) as unknown;
    if (isRequest(v) && !new Error().stack!.includes('fake-upstream')) refs.push(new WeakRef(v as object));
    return v;
  };
  JSON.stringify = ((v: unknown, ...rest: never[]) => {
    if (isRequest(v)) refs.push(new WeakRef(v as object));
    return stringify(v, ...rest);
  }) as typeof JSON.stringify;
  restore = () => { JSON.parse = parse; JSON.stringify = stringify; };
  return refs;
}

describe('a stream keeps not its request for its life', () => {
  test.each(['openai', 'anthropic'] as const)('from an %s upstream, streamed and whole: the request parsed and as sent upstream are collected while the answers are open', async (format) => {
    g = await startGateway({ upstreamFormat: format, bodyTimeout: 60_000, keepalive: 0, drainTimeout: 0 });
    const first = format === 'openai'
      ? 'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}\n\n'
      : `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'm', stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } })}\n\n`;
    // (an answer begun, then nothing: each stream stays open, streamed, or read whole, in the client's own API or not)
    const hang = { write: (res: import('node:http').ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(first);
    } };
    g.up.scripts.set('m', hang);
    const messages = Array.from({ length: 2000 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i}` }));
    // (the requests written first: the client's own objects are not the gateway's to let go)
    const asked = [true, false].flatMap((stream) => ['/v1/chat/completions', '/v1/messages'].map((path) => post(g!.url, { model: 'm', stream, max_tokens: 10, messages }, path)));
    const refs = watchRequests();
    await expect.poll(() => g!.up.received.length).toBe(4);
    await new Promise((r) => setTimeout(r, 100));
    restore();
    expect(g.gw.stats().streams).toBe(4);
    gc();
    await new Promise((r) => setTimeout(r, 10));
    gc();
    expect(refs.length).toBe(8); // (each request parsed, and its upstream request written)
    expect(refs.filter((r) => r.deref() !== undefined).length).toBe(0);
    await g.close(); // (the streams end)
    await Promise.all(asked);
  });
});

describe('a request waiting for the upstream\'s answer', () => {
  test('holds the bytes sent upstream in the budget, and neither the request parsed nor its translation as objects; past maxPendingBytes a new request is a 503', async () => {
    // (an upstream that takes the request and does not answer: the request, parsed and translated,
    // was kept as objects until the upstream's head came, up to upstreamTimeout, outside the budget)
    const messagesOf = (n: number) => Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i} ${'x'.repeat(150)}` }));
    const messages = messagesOf(2000);
    const size = Buffer.byteLength(JSON.stringify({ model: 'm', stream: true, max_tokens: 10, messages }));
    // (room for the two requests sent, each about `size`, but not for a third of twice that with them)
    const budget = Math.floor(2.5 * size);
    g = await startGateway({ upstreamFormat: 'anthropic', upstreamTimeout: 60_000, keepalive: 0, drainTimeout: 0, maxPendingBytes: budget });
    g.up.scripts.set('m', { write: () => {} });
    // (an OpenAI client's request, translated for the anthropic upstream, and an Anthropic client's, as it is;
    // written first: the client's own objects are not the gateway's to let go)
    const asked = [post(g.url, { model: 'm', stream: true, messages }), post(g.url, { model: 'm', stream: true, max_tokens: 10, messages }, '/v1/messages')];
    const refs = watchRequests();
    await expect.poll(() => g!.up.received.length).toBe(2);
    restore();
    const sent = g.up.received.reduce((n, r) => n + Buffer.byteLength(r.raw), 0);
    expect(sent).toBeGreaterThan(2 * size * 0.9);
    expect(sent).toBeLessThan(2 * size * 1.2);
    expect(g.gw.stats().pendingBytes).toBeGreaterThanOrEqual(sent);
    gc();
    await new Promise((r) => setTimeout(r, 10));
    gc();
    expect(refs.length).toBe(4); // (each request parsed, and its upstream request written)
    expect(refs.filter((r) => r.deref() !== undefined).length).toBe(0);
    // (a third, with twice the messages, would pass the budget with them: refused, not sent)
    const third = await post(g.url, { model: 'm', stream: true, messages: messagesOf(4000) });
    expect([third.status, JSON.parse(third.body.toString())]).toEqual([503, { error: {
      message: `the gateway's streams hold more than maxPendingBytes (${budget}) with this request's body; retry later`, type: 'overloaded', code: 'ERR_PENDING_BYTES' } }]);
    expect(g.up.received.length).toBe(2);
    await g.close(); // (the streams end)
    await Promise.all(asked);
    expect(g.gw.stats().pendingBytes).toBe(0);
  });
});

describe('a request whose translation would pass maxPendingBytes', () => {
  test('a 503 in the API\'s shape before it is sent (its body alone was within the budget), counted as that limit', async () => {
    const { upstreamRequest } = await import('../../examples/gateway/server.mjs');
    const body = { model: 'gemini-2.5-flash', stream: true, messages: Array.from({ length: 2000 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i}` })) };
    const size = Buffer.byteLength(JSON.stringify(body));
    // (the request in Gemini's words, each message's text in its parts: longer than the client's)
    const sent = Buffer.byteLength(JSON.stringify(upstreamRequest('gemini', 'http://127.0.0.1:9', body, {}, 'openai').payload));
    expect(sent).toBeGreaterThan(size + 10_000);
    const budget = size + Math.floor((sent - size) / 2);
    g = await startGateway({ upstreamFormat: 'gemini', maxPendingBytes: budget });
    const r = await post(g.url, body);
    expect([r.status, JSON.parse(r.body.toString())]).toEqual([503, { error: {
      message: `the gateway's streams hold more than maxPendingBytes (${budget}) with this request; retry later`, type: 'overloaded', code: 'ERR_PENDING_BYTES' } }]);
    expect(g.up.received).toEqual([]);
    expect(g.gw.stats().pendingBytes).toBe(0);
    const m = await metricsAt(`${g.url}/metrics`);
    expect([m.get('llm_limit_errors_total{limit="pending_bytes"}'), m.get('llm_streams_total{status="limit"}')]).toEqual([1, 1]);
  });
});
