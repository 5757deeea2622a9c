// The gateway between hostile peers, over real sockets: an upstream that holds a stream with
// keep-alives alone, a client that trickles its request, and a whole answer's parts in the
// streams' budget. The official clients read what a client reads.
import { request, type ServerResponse } from 'node:http';
import net from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, test } from 'vitest';
import { PassThrough } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { readBody } from '../../examples/gateway/server/read-body.mjs';
import { Stream } from '../../examples/gateway/server/stream.mjs';
import { encodeMessage } from '../helpers/bedrock-fixtures.js';
import { SEED, randomCuts, rng } from '../helpers/random.js';
import { chat, closeGateway, metricsAt, nothingLeft, post, startGateway, withAwsEnv, type Running } from './support.js';

const enc = new TextEncoder();
const b = (s: string) => enc.encode(s);
const chunk = (content: string) => `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]}\n\n`;
const DONE = 'data: [DONE]\n\n';
const timeoutEvent = (message: string, code: string) => `data: ${JSON.stringify({ error: { message, type: 'timeout', code } })}\n\n`;
const openaiOf = (r: Running) => new OpenAI({ baseURL: `${r.url}/v1`, apiKey: 'k', maxRetries: 0, timeout: 20_000 });
const anthropicOf = (r: Running) => new Anthropic({ baseURL: r.url, apiKey: 'k', maxRetries: 0, timeout: 20_000 });

const ANTHROPIC_START = `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'm', stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } })}\n\n`
  + 'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
  + 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Bonjour"}}\n\n';
const PING = 'event: ping\ndata: {"type":"ping"}\n\n';

let g: Running | undefined;
afterEach(async () => {
  await closeGateway(g);
  g = undefined;
});

/** An upstream answer: `first`, then `ping` every `every` ms until the gateway closes the connection. */
const pinging = (first: string, ping: string, every = 30) => ({
  write: (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(first);
    const t = setInterval(() => res.write(ping), every);
    res.on('close', () => clearInterval(t));
  },
});

describe('an upstream that only sends keep-alives', () => {
  test('SSE comments, empty events, Anthropic\'s pings: none is progress; the stream ends at bodyTimeout with the client format\'s timeout error, not at maxDuration', async () => {
    for (const ping of [': ping\n\n', 'data:\n\n', '\n\n']) {
      g = await startGateway({ bodyTimeout: 300, maxDuration: 20_000, keepalive: 0 });
      g.up.scripts.set('m', pinging(chunk('Bonjour'), ping));
      const t0 = Date.now();
      const r = await post(g.url, chat('m'));
      const took = Date.now() - t0;
      const text = r.body.toString();
      // (the comments are forwarded as they came; an empty event is nothing to write)
      const forwarded = ping.startsWith(':') ? ping : '';
      const n = forwarded === '' ? 0 : text.split(forwarded).length - 1;
      expect(text, JSON.stringify(ping)).toBe(chunk('Bonjour') + forwarded.repeat(n) + timeoutEvent('the upstream sent nothing of its answer (keep-alives, empty events) for 300 ms', 'ERR_UPSTREAM_BODY_TIMEOUT'));
      expect(took).toBeGreaterThanOrEqual(290);
      expect(took).toBeLessThan(5000);
      await nothingLeft(g);
      const m = await metricsAt(`${g.url}/metrics`);
      expect(m.get('gateway_timeouts_total{timeout="body"}')).toBe(1);
      expect(m.get('llm_streams_total{status="limit"}')).toBe(1);
      // the official client reads the text, then throws the timeout
      const stream = await openaiOf(g).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true });
      let got = '';
      const thrown = await (async () => { for await (const c of stream) got += c.choices[0]?.delta?.content ?? ''; })().catch((e: unknown) => e);
      expect(got).toBe('Bonjour');
      expect(thrown).toBeInstanceOf(OpenAI.APIError);
      expect([(thrown as InstanceType<typeof OpenAI.APIError>).code, (thrown as Error).message]).toEqual(['ERR_UPSTREAM_BODY_TIMEOUT', 'the upstream sent nothing of its answer (keep-alives, empty events) for 300 ms']);
      await closeGateway(g);
      g = undefined;
    }
  });

  test('Anthropic\'s pings to an Anthropic client: the pings pass, then Anthropic\'s timeout_error; to an OpenAI client, the same end', async () => {
    g = await startGateway({ upstreamFormat: 'anthropic', bodyTimeout: 300, maxDuration: 20_000, keepalive: 0 });
    g.up.scripts.set('m', pinging(ANTHROPIC_START, PING));
    const stream = anthropicOf(g).messages.stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    let got = '';
    stream.on('text', (t) => { got += t; });
    const thrown = await stream.done().catch((e: unknown) => e);
    expect(got).toBe('Bonjour');
    expect(thrown).toBeInstanceOf(Anthropic.APIError);
    expect((thrown as InstanceType<typeof Anthropic.APIError>).error).toEqual({ type: 'error', error: { type: 'timeout_error', message: 'the upstream sent nothing of its answer (keep-alives, empty events) for 300 ms' } });
    await nothingLeft(g);
    const r = await post(g.url, chat('m'));
    expect(r.body.toString()).toMatch(/"content":"Bonjour"[^]*\n\ndata: \{"error":\{"message":"the upstream sent nothing of its answer \(keep-alives, empty events\) for 300 ms","type":"timeout","code":"ERR_UPSTREAM_BODY_TIMEOUT"\}\}\n\n$/);
    await nothingLeft(g);
  });

  test('a whole answer read from a stream that only pings: 504 at bodyTimeout', async () => {
    g = await startGateway({ upstreamFormat: 'anthropic', bodyTimeout: 300, maxDuration: 20_000 });
    g.up.scripts.set('m', pinging(ANTHROPIC_START, PING));
    const r = await post(g.url, chat('m', false));
    expect(r.status).toBe(504);
    expect(JSON.parse(r.body.toString())).toEqual({ error: { message: 'the upstream sent nothing of its answer (keep-alives, empty events) for 300 ms', type: 'timeout', code: 'ERR_UPSTREAM_BODY_TIMEOUT' } });
    await nothingLeft(g);
  });

  test('a whole answer read from a stream of events that carry nothing, sent for ever (an Anthropic upstream\'s empty deltas, a Gemini upstream\'s empty candidates): 504 at bodyTimeout, not at maxDuration', async () => {
    const emptyDelta = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}\n\n';
    const gemini = ['data: {"candidates":[{"content":{"parts":[{"text":"Bonjour"}],"role":"model"},"index":0}]}\r\n\r\n', 'data: {"candidates":[]}\r\n\r\n'];
    for (const [format, first, empty] of [['anthropic', ANTHROPIC_START, emptyDelta], ['gemini', ...gemini]] as const) {
      g = await startGateway({ upstreamFormat: format, bodyTimeout: 300, maxDuration: 20_000, keepalive: 0 });
      g.up.scripts.set('m', pinging(first, empty));
      const t0 = Date.now();
      const r = await post(g.url, chat('m', false));
      expect(Date.now() - t0, format).toBeLessThan(5000);
      expect(r.status, format).toBe(504);
      expect(JSON.parse(r.body.toString())).toEqual({ error: { message: 'the upstream sent nothing of its answer (keep-alives, empty events) for 300 ms', type: 'timeout', code: 'ERR_UPSTREAM_BODY_TIMEOUT' } });
      await nothingLeft(g);
      await closeGateway(g);
      g = undefined;
    }
  });

  test('events that carry nothing (`{}`, a role alone, an empty delta, the same usage again), sent for ever: no progress; the stream ends at bodyTimeout, not at maxDuration', async () => {
    const usage = 'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}\n\n';
    const role = 'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}\n\n';
    for (const [first, empty] of [[chunk('Bonjour'), 'data: {}\n\n'], [chunk('Bonjour'), role], [chunk('Bonjour'), chunk('')], [chunk('Bonjour') + usage, usage]]) {
      g = await startGateway({ bodyTimeout: 300, maxDuration: 20_000, keepalive: 0 });
      g.up.scripts.set('m', pinging(first, empty));
      const t0 = Date.now();
      const r = await post(g.url, chat('m'));
      const took = Date.now() - t0;
      const text = r.body.toString();
      // (to an OpenAI client, each is passed on as it came: the client reads nothing of them)
      const n = text.split(empty).length - 1 - (first.includes(empty) ? 1 : 0);
      expect(n, empty).toBeGreaterThan(3);
      expect(text, empty).toBe(first + empty.repeat(n) + timeoutEvent('the upstream sent nothing of its answer (keep-alives, empty events) for 300 ms', 'ERR_UPSTREAM_BODY_TIMEOUT'));
      expect(took).toBeGreaterThanOrEqual(290);
      expect(took).toBeLessThan(5000);
      await nothingLeft(g);
      const m = await metricsAt(`${g.url}/metrics`);
      expect(m.get('gateway_timeouts_total{timeout="body"}')).toBe(1);
      await closeGateway(g);
      g = undefined;
    }
    // to an Anthropic client, from a Gemini upstream: nothing is written of them, then Anthropic's timeout_error
    g = await startGateway({ upstreamFormat: 'gemini', bodyTimeout: 300, maxDuration: 20_000, keepalive: 0 });
    g.up.scripts.set('m', pinging('data: {"candidates":[{"content":{"parts":[{"text":"Bonjour"}],"role":"model"},"index":0}]}\r\n\r\n', 'data: {"candidates":[]}\r\n\r\n'));
    const stream = anthropicOf(g).messages.stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    let got = '';
    stream.on('text', (t) => { got += t; });
    const thrown = await stream.done().catch((e: unknown) => e);
    expect(got).toBe('Bonjour');
    expect((thrown as InstanceType<typeof Anthropic.APIError>).error).toEqual({ type: 'error', error: { type: 'timeout_error', message: 'the upstream sent nothing of its answer (keep-alives, empty events) for 300 ms' } });
    await nothingLeft(g);
  });

  test('a slow upstream whose events carry only reasoning, or only usage that grows, for longer than bodyTimeout: progress, the stream to its end', async () => {
    g = await startGateway({ bodyTimeout: 300, keepalive: 0 });
    const reasoning = (t: string) => `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"reasoning_content":${JSON.stringify(t)}},"finish_reason":null}]}\n\n`;
    const usage = (n: number) => `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":${n},"total_tokens":${n + 1}}}\n\n`;
    const pieces = ['Let ', 'me ', 'think ', 'about ', 'it.'].map(reasoning).concat([usage(1), usage(2), usage(3), usage(4), chunk('Oui'), DONE]);
    g.up.scripts.set('m', { pieces: pieces.map(b), gapMs: 150 });
    const t0 = Date.now();
    expect((await post(g.url, chat('m'))).body.toString()).toBe(pieces.join(''));
    expect(Date.now() - t0).toBeGreaterThan(1200); // (well past bodyTimeout in all)
    await nothingLeft(g);
  });

  test('events that come within bodyTimeout, with pings between them, keep the stream to its end', async () => {
    g = await startGateway({ bodyTimeout: 300, keepalive: 0 });
    const pieces = [chunk('un '), ': ping\n\n', chunk('deux '), ': ping\n\n', chunk('trois'), DONE].map(b);
    g.up.scripts.set('m', { pieces, gapMs: 120 });
    expect((await post(g.url, chat('m'))).body.toString()).toBe(chunk('un ') + ': ping\n\n' + chunk('deux ') + ': ping\n\n' + chunk('trois') + DONE);
  });
});

describe('a Bedrock upstream that stops and then, in place of its usage, sends events that say nothing', () => {
  withAwsEnv();
  test('no progress: at bodyTimeout the client has its end (the answer had completed), not at maxDuration', async () => {
    g = await startGateway({ upstreamFormat: 'bedrock', bodyTimeout: 300, maxDuration: 20_000, keepalive: 0 });
    const said = (event: string, payload: string) => encodeMessage({ event, payload });
    const stop = Buffer.concat([
      said('messageStart', '{"role":"assistant"}'), said('contentBlockDelta', '{"contentBlockIndex":0,"delta":{"text":"Oui"}}'),
      said('contentBlockStop', '{"contentBlockIndex":0}'), said('messageStop', '{"stopReason":"end_turn"}'),
    ]);
    const junk = Buffer.from(said('contentBlockStop', '{"contentBlockIndex":0}'));
    g.up.scripts.set('m', {
      write: (res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
        res.write(stop);
        const t = setInterval(() => res.write(junk), 30);
        res.on('close', () => clearInterval(t));
      },
    });
    const t0 = Date.now();
    const r = await post(g.url, chat('m'));
    const took = Date.now() - t0;
    const text = r.body.toString();
    expect(text).toContain('"content":"Oui"');
    expect(text).toMatch(/"finish_reason":"stop"[^]*data: \[DONE\]\n\n$/);
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(5000);
    await nothingLeft(g);
    const m = await metricsAt(`${g.url}/metrics`);
    expect(m.get('gateway_timeouts_total{timeout="body"}')).toBe(1);
  });
});

describe('a whole answer\'s reasoning and arguments are in the streams\' budget', () => {
  const event = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  const start = event('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'm', stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } });
  const end = (stop: string) => event('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 2 } }) + event('message_stop', { type: 'message_stop' });
  /** A thinking block of `n` deltas of 4000 bytes, then a short text. */
  const thinking = (n: number) => start
    + event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } })
    + Array.from({ length: n }, (_, i) => event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: `${i % 10}`.repeat(4000) } })).join('')
    + event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } })
    + event('content_block_stop', { type: 'content_block_stop', index: 0 })
    + event('content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } })
    + event('content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'ok' } })
    + event('content_block_stop', { type: 'content_block_stop', index: 1 }) + end('end_turn');
  /** A tool call whose arguments come in `n` fragments of about 4000 bytes. */
  const call = (n: number) => start
    + event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} } })
    + event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"a":"' } })
    + Array.from({ length: n }, () => event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: 'x'.repeat(4000) } })).join('')
    + event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '"}' } })
    + event('content_block_stop', { type: 'content_block_stop', index: 0 }) + end('tool_use');
  const pieces = (body: string) => Array.from({ length: Math.ceil(body.length / 16_384) }, (_, i) => b(body.slice(i * 16_384, (i + 1) * 16_384)));

  test('reasoning or arguments past maxPendingBytes (within maxResponseBytes): 503, every byte given back; within it, the whole answer', async () => {
    for (const [name, body] of [['reasoning', thinking(100)], ['arguments', call(100)]] as const) {
      g = await startGateway({ upstreamFormat: 'anthropic', maxPendingBytes: 256 * 1024, maxResponseBytes: 1024 * 1024 });
      g.up.scripts.set('m', { pieces: pieces(body) });
      const r = await post(g.url, chat('m', false));
      expect([r.status, JSON.parse(r.body.toString())], name).toEqual([503, { error: {
        message: 'the gateway\'s streams hold more than maxPendingBytes (262144) with this answer; retry later', type: 'overloaded', code: 'ERR_PENDING_BYTES' } }]);
      await nothingLeft(g);
      expect((await metricsAt(`${g.url}/metrics`)).get('llm_limit_errors_total{limit="pending_bytes"}'), name).toBe(1);
      await closeGateway(g);
      g = undefined;
    }
    // within the budget: the whole answer, as the official client reads it
    g = await startGateway({ upstreamFormat: 'anthropic', maxPendingBytes: 4 * 1024 * 1024 });
    g.up.scripts.set('t', { pieces: pieces(thinking(100)) });
    g.up.scripts.set('c', { pieces: pieces(call(100)) });
    const t = await openaiOf(g).chat.completions.create({ model: 't', messages: [{ role: 'user', content: 'x' }] });
    expect(t.choices[0].message.content).toBe('ok');
    expect((t.choices[0].message as unknown as { reasoning_content: string }).reasoning_content).toBe(Array.from({ length: 100 }, (_, i) => `${i % 10}`.repeat(4000)).join(''));
    const c = await openaiOf(g).chat.completions.create({ model: 'c', messages: [{ role: 'user', content: 'x' }] });
    expect(c.choices[0].message.tool_calls).toEqual([{ id: 'toolu_1', type: 'function', function: { name: 'f', arguments: `{"a":"${'x'.repeat(400_000)}"}` } }]);
    await nothingLeft(g);
  });
});

/** A connection to the gateway; `sent` writes, `answer` resolves everything it answered once it closes (or after `ms`). */
function connect(url: string): { sock: net.Socket; answer: Promise<string>; at: () => number } {
  const sock = net.connect(Number(new URL(url).port), '127.0.0.1');
  let d = '';
  let closedAt = 0;
  sock.on('data', (x) => { d += x.toString('latin1'); });
  sock.on('error', () => {});
  const answer = new Promise<string>((resolve) => sock.on('close', () => { closedAt = Date.now(); resolve(d); }));
  return { sock, answer, at: () => closedAt };
}

describe('a request whose body has not all come when the stream is ended', () => {
  const head = (length: number) => `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`;

  test('close() while a client trickles its body: the client gets the drain\'s 503, the stream ends, and close() resolves', async () => {
    g = await startGateway({ drainTimeout: 100, clientTimeout: 20_000 });
    const c = connect(g.url);
    c.sock.write(head(1000));
    const drip = setInterval(() => { if (!c.sock.destroyed) c.sock.write(' '); }, 40);
    await expect.poll(() => g!.gw.stats().streams).toBe(1);
    const t0 = Date.now();
    const closed = await Promise.race([g.gw.close().then(() => true), new Promise((r) => setTimeout(() => r(false), 3000))]);
    clearInterval(drip);
    expect(closed).toBe(true);
    expect(Date.now() - t0).toBeLessThan(3000);
    const [headText, body] = (await c.answer).split('\r\n\r\n');
    expect(headText).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(JSON.parse(body)).toEqual({ error: { message: 'the gateway is shutting down: the stream did not end within its drain time (100 ms)', type: 'overloaded', code: 'ERR_SHUTTING_DOWN' } });
    expect(g.gw.stats()).toEqual({ streams: 0, pendingBytes: 0, coreBytes: 0, connections: 0 });
  });
});

describe('a client that trickles its request\'s body', () => {
  const head = (length: number, path = '/v1/chat/completions') => `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`;

  test('slower than minRequestRate past requestBodyTimeout: a 408 in the API\'s shape, the connection closed and the slot given back long before clientTimeout; the upstream never called', async () => {
    for (const path of ['/v1/chat/completions', '/v1/messages']) {
      g = await startGateway({ requestBodyTimeout: 300, minRequestRate: 100, clientTimeout: 20_000, maxStreams: 1 });
      g.up.scripts.set('m', { pieces: [b(chunk('vite') + DONE)] });
      const c = connect(g.url);
      const t0 = Date.now();
      c.sock.write(head(1000, path));
      // a byte every 40 ms, 25 a second: each extends the deadline by 10 ms
      const drip = setInterval(() => { if (!c.sock.destroyed) c.sock.write(' '); }, 40);
      await expect.poll(() => g!.gw.stats().streams).toBe(1);
      expect((await post(g.url, chat('m'))).status).toBe(503); // the one slot is taken while the body comes
      const answer = await c.answer;
      clearInterval(drip);
      const took = c.at() - t0;
      const [headText, body] = answer.split('\r\n\r\n');
      expect(headText).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
      expect(headText.toLowerCase()).toContain('connection: close');
      const message = 'the request\'s body did not arrive within 300 ms, and a second more per 100 bytes of it';
      expect(JSON.parse(body), path).toEqual(path === '/v1/messages' ? { type: 'error', error: { type: 'invalid_request_error', message } }
        : { error: { message, type: 'invalid_request_error', code: 'ERR_REQUEST_TIMEOUT' } });
      // (300 ms plus 10 ms per byte at 25 bytes a second: about 400 ms; loose for a loaded machine)
      expect(took).toBeGreaterThanOrEqual(350);
      expect(took).toBeLessThan(3000);
      await nothingLeft(g);
      expect((await post(g.url, chat('m'))).body.toString()).toBe(chunk('vite') + DONE); // the slot is free again
      expect(g.up.received.map((r) => (r.body as { model: string }).model)).toEqual(['m']);
      await nothingLeft(g);
      expect((await metricsAt(`${g.url}/metrics`)).get('gateway_timeouts_total{timeout="request"}')).toBe(1);
      await closeGateway(g);
      g = undefined;
    }
  });

  test('a body that keeps up minRequestRate is served, though it takes longer than requestBodyTimeout', async () => {
    g = await startGateway({ requestBodyTimeout: 200, minRequestRate: 100, clientTimeout: 20_000 });
    g.up.scripts.set('m', { pieces: [b(chunk('lent') + DONE)] });
    const body = JSON.stringify({ ...chat('m'), pad: 'p'.repeat(160) });
    const c = connect(g.url);
    c.sock.write(head(body.length));
    // four pieces 120 ms apart (some 250 bytes: 2.5 s of credit after the first): 360 ms in all, past the 200 ms
    const quarter = Math.ceil(body.length / 4);
    for (let i = 0; i < 4; i++) {
      c.sock.write(body.slice(i * quarter, (i + 1) * quarter));
      if (i < 3) await new Promise((r) => setTimeout(r, 120));
    }
    await expect.poll(() => g!.up.received.length).toBe(1);
    c.sock.end();
    const answer = await c.answer;
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer.split('\r\n\r\n')[1]).toContain('"content":"lent"');
  });
});

describe('HTTP/1.1 pipelining', () => {
  const one = (model: string, path = '/v1/chat/completions') => {
    const body = JSON.stringify(chat(model));
    return `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
  };

  test('requests pipelined behind a stream on one connection are not admitted nor sent upstream: each a 503 after the stream\'s answer, and the connection closed', async () => {
    g = await startGateway({ keepalive: 0 });
    const pieces = ['un ', 'deux ', 'trois'].map((t) => b(chunk(t)));
    g.up.scripts.set('slow', { pieces: [...pieces, b(DONE)], gapMs: 100 });
    g.up.scripts.set('quick', { pieces: [b(chunk('vite') + DONE)] });
    const c = connect(g.url);
    c.sock.write(one('slow') + one('quick').repeat(20) + one('quick', '/v1/messages'));
    // while the stream goes, it is the one stream and the one upstream request
    await expect.poll(() => g!.up.received.length).toBe(1);
    await new Promise((r) => setTimeout(r, 150));
    expect(g.gw.stats().streams).toBe(1);
    expect(g.up.received.length).toBe(1);
    const answers = (await c.answer).split(/(?=HTTP\/1\.1 )/);
    expect(answers[0]).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answers[0]).toContain('data: [DONE]');
    // Node closes the connection after the first answer that says so: the rest were never answered
    expect(answers.length).toBe(2);
    expect(answers[1]).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(answers[1].toLowerCase()).toContain('\r\nconnection: close\r\n');
    expect(JSON.parse(answers[1].slice(answers[1].indexOf('\r\n\r\n') + 4))).toEqual({ error: {
      message: 'a request pipelined behind a stream on its connection: the gateway serves one at a time on each; send it on another connection', type: 'overloaded', code: 'ERR_PIPELINED' } });
    expect(g.up.received.map((r) => (r.body as { model: string }).model)).toEqual(['slow']);
    await nothingLeft(g);
    expect((await metricsAt(`${g.url}/metrics`)).get('llm_limit_errors_total{limit="pipelined"}')).toBe(21);
  });

  test('a request sent on a kept-alive connection after the answer before it ended is served', async () => {
    g = await startGateway({ keepalive: 0 });
    g.up.scripts.set('quick', { pieces: [b(chunk('vite') + DONE)] });
    const c = connect(g.url);
    c.sock.write(one('quick'));
    await expect.poll(() => g!.gw.stats().streams).toBe(0);
    await expect.poll(() => g!.up.received.length).toBe(1);
    c.sock.write(one('quick'));
    await expect.poll(() => g!.up.received.length).toBe(2);
    await expect.poll(() => g!.gw.stats().streams).toBe(0);
    c.sock.end();
    const answers = (await c.answer).split(/(?=HTTP\/1\.1 )/);
    expect(answers.map((a) => a.slice(0, 15))).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
  });
});

describe('an upstream\'s 200 that is not its answer', () => {
  test('a page (text/html) or a compressed body: a 502 in the client\'s shape, streamed or whole, never a 200 with a stream "cut short"; what it was in the log; the gateway asks for no content coding', async () => {
    const { gzipSync } = await import('node:zlib');
    g = await startGateway({ keepalive: 0 });
    const stream = chunk('Bonjour') + DONE;
    g.up.scripts.set('page', { contentType: 'text/html; charset=utf-8', pieces: [b('<!doctype html><html><body>Sign in to continue</body></html>')] });
    g.up.scripts.set('gzip', { write: (res) => { const z = gzipSync(stream); res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip', 'content-length': z.length }); res.end(z); } });
    g.up.scripts.set('plain', { write: (res) => { res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'identity' }); res.end(stream); } });
    const bad = { error: { message: '', type: 'upstream_error', code: 'ERR_BAD_RESPONSE' } };
    for (const model of ['page', 'gzip']) {
      for (const streamed of [true, false]) {
        const before = g.log.length;
        const r = await post(g.url, chat(model, streamed));
        const id = r.headers['x-request-id'];
        expect([r.status, r.headers['content-type']], model).toEqual([502, 'application/json']);
        // (a whole answer in the client's own API, passed through, is told by its body: a page is no JSON object)
        const byBody = model === 'page' && !streamed;
        expect(JSON.parse(r.body.toString()), model).toEqual({ error: { ...bad.error, message: byBody
          ? `the upstream's answer is not a JSON object (request id ${id}; the gateway's log has the detail)`
          : `the upstream's answer is not one the gateway can read (request id ${id}; the gateway's log has the detail)` } });
        expect(g.log.slice(before), model).toEqual([byBody
          ? `gateway: request ${id}: 502: the upstream's answer (HTTP 200, text/html; charset=utf-8, 60 bytes) is not a JSON object`
          : model === 'page' ? `gateway: request ${id}: 502: the upstream answered HTTP 200 with a page ("text/html; charset=utf-8"), not its answer`
            : `gateway: request ${id}: 502: the upstream answered HTTP 200 with a body in the content coding "gzip", not its answer`]);
      }
    }
    // the official client: an APIError with the status, not a stream that ends early
    const e = await openaiOf(g).chat.completions.create({ model: 'page', messages: [{ role: 'user', content: 'x' }], stream: true }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.APIError);
    expect((e as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    // identity is no coding
    expect((await post(g.url, chat('plain'))).body.toString()).toBe(stream);
    expect(new Set(g.up.received.map((r) => r.headers['accept-encoding']))).toEqual(new Set(['identity']));
    await nothingLeft(g);
    const m = await metricsAt(`${g.url}/metrics`);
    expect(m.get('llm_provider_errors_total{source="status"}')).toBe(4);
    expect(m.get('llm_bad_event_total')).toBe(1);
    expect(m.get('llm_streams_total{status="failed"}')).toBe(5);
  });
});

describe('interim answers the gateway did not ask for', () => {
  test('a 103 Early Hints (and a 102) before the answer: skipped, the answer relayed (read raw, and by the official client)', async () => {
    g = await startGateway({ keepalive: 0 });
    const stream = chunk('Bonjour') + DONE;
    g.up.scripts.set('m', { write: (res) => {
      res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
      res.writeProcessing();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(stream);
    } });
    expect((await post(g.url, chat('m'))).body.toString()).toBe(stream);
    const whole = await openaiOf(g).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true });
    let text = '';
    for await (const c of whole) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Bonjour');
    await nothingLeft(g);
  });
});

describe('a body in many small pieces', () => {
  /** Reads `pieces` as a body with readBody (`scan`: jsonObjectEnd's, or none). */
  const read = async (pieces: Uint8Array[], limit = 1 << 20) => {
    const s = new PassThrough();
    const p = readBody(s, limit, true, () => true);
    for (const x of pieces) s.emit('data', Buffer.from(x.buffer, x.byteOffset, x.byteLength));
    s.emit('end');
    return p;
  };

  test('any cutting gives the body whole: small pieces, large ones, and both in turn (seeded)', async () => {
    const next = rng(SEED);
    const body = Buffer.from(Array.from({ length: 100_000 }, (_, i) => String.fromCharCode(33 + ((i * 7) % 90))).join(''));
    for (const max of [1, 3, 100, 5000, 20_000, 70_000]) {
      const at = randomCuts(body, next, max);
      const pieces = [];
      let prev = 0;
      for (const a of [...at, body.length]) { pieces.push(body.subarray(prev, a)); prev = a; }
      expect(Buffer.compare(await read(pieces) as Buffer, body), `seed ${SEED}, pieces up to ${max}`).toBe(0);
    }
    expect(Buffer.compare(await read([body.subarray(0, 1)]) as Buffer, body.subarray(0, 1))).toBe(0);
    expect(await read(Array.from({ length: 300 }, () => body.subarray(0, 10)), 2000)).toBeNull(); // past its limit
  });

  test('an upstream\'s error body a byte a read: the client has it whole, in its API\'s words', async () => {
    g = await startGateway();
    const error = JSON.stringify({ error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } });
    g.up.scripts.set('m', { status: 429, contentType: 'application/json', pieces: [...error].map(b) });
    const e = await openaiOf(g).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect([(e as InstanceType<typeof OpenAI.APIError>).status, (e as InstanceType<typeof OpenAI.APIError>).code, (e as Error).message])
      .toEqual([429, 'rate_limit_exceeded', '429 Rate limit reached for requests']);
    await nothingLeft(g);
  });

  test('an upstream\'s error body that came a byte at a time holds about its bytes, as a request\'s does', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const N = 60_000; // (within the 64 KiB an error body is read up to)
    const upRes = Object.assign(new PassThrough(), { statusCode: 500 });
    // (the stream's part errorBody reads: its gateway's clock, log and metrics, and its budget)
    const s = Object.assign(Object.create(Stream.prototype), { gw: { tick: 0, o: { bodyTimeout: 1000 }, m: { timeouts: { inc() {} } }, log() {} }, hold: () => true, silent: null, left: false, expired: false, id: 'x' });
    const p = s.errorBody(upRes) as Promise<Buffer>;
    gc();
    const before = process.memoryUsage();
    for (let i = 0; i < N; i++) upRes.emit('data', Buffer.from([0x20]));
    gc();
    const after = process.memoryUsage();
    // (the heap alone, this worker's: the buffers' count is the process's, which other test files share)
    expect(after.heapUsed - before.heapUsed).toBeLessThan(16 * N); // (some 110 bytes a byte, 7 MB, each kept as it came)
    upRes.emit('end');
    expect((await p).length).toBe(N);
  });

  test('a body that came a byte at a time holds about its bytes, not a Buffer per byte (over 100 bytes each)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const N = 300_000;
    const s = new PassThrough();
    const p = readBody(s, 1 << 20, true, () => true);
    gc();
    const before = process.memoryUsage();
    for (let i = 0; i < N; i++) s.emit('data', Buffer.from([0x20 + (i % 90)]));
    gc();
    const after = process.memoryUsage();
    // (the heap alone, this worker's: the buffers' count is the process's, which other test files share)
    expect(after.heapUsed - before.heapUsed).toBeLessThan(16 * N); // (each piece kept as it came: some 110 bytes a byte, 33 MB)
    s.emit('end');
    const body = await p as Buffer;
    expect(body.length).toBe(N);
    expect(body.every((c, i) => c === 0x20 + (i % 90))).toBe(true);
  });
});

describe('expect: 100-continue', () => {
  const head = (key: string, length: number) => `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\nexpect: 100-continue\r\n\r\n`;

  test('a request the gateway refuses (no key, past maxStreams) has its refusal and no 100 Continue: its body is never asked for; one admitted has its 100, then its answer', async () => {
    g = await startGateway({ apiKeys: ['k1'], maxStreams: 1, keepalive: 0 });
    g.up.scripts.set('quick', { pieces: [b(chunk('vite') + DONE)] });
    g.up.scripts.set('hang', { pieces: [b(chunk('a'))], then: 'hang' });
    const body = JSON.stringify(chat('quick'));
    // a wrong key
    const bad = connect(g.url);
    bad.sock.write(head('nope', body.length));
    const refused = await bad.answer;
    expect(refused).toMatch(/^HTTP\/1\.1 401 Unauthorized\r\n/);
    expect(refused).not.toContain('100 Continue');
    // admitted: the 100, then, once the body came, the answer
    const ok = connect(g.url);
    let got = '';
    ok.sock.on('data', (x) => { got += x.toString('latin1'); });
    ok.sock.write(head('k1', body.length));
    await expect.poll(() => got).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    ok.sock.write(body);
    await expect.poll(() => got).toContain('data: [DONE]');
    ok.sock.destroy();
    const answer = got;
    expect(answer.slice(0, 25)).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    expect(answer.slice(25)).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer).toContain('"content":"vite"');
    // the one slot taken: the next has its 503 and no 100
    const held = connect(g.url);
    const hangBody = JSON.stringify(chat('hang'));
    held.sock.write(head('k1', hangBody.length));
    await new Promise((r) => setTimeout(r, 50));
    held.sock.write(hangBody);
    await expect.poll(() => g!.up.received.length).toBe(2);
    const full = connect(g.url);
    full.sock.write(head('k1', body.length));
    let fullGot = '';
    full.sock.on('data', (x) => { fullGot += x.toString('latin1'); });
    await expect.poll(() => fullGot).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n[^]*"code":"ERR_MAX_STREAMS"/);
    expect(fullGot).not.toContain('100 Continue');
    full.sock.destroy();
    held.sock.destroy();
    await nothingLeft(g);
  });
});

describe('request smuggling shapes', () => {
  test('framing two readers could read apart is a 400 and the connection closed: the request, and what it would smuggle after it, never reach the upstream', async () => {
    g = await startGateway({ keepalive: 0 });
    g.up.scripts.set('m', { pieces: [b(chunk('vite') + DONE)] });
    const body = JSON.stringify(chat('m'));
    const smuggled = `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
    const start = 'POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n';
    const shapes: [string, string][] = [
      ['Transfer-Encoding and Content-Length', `${start}content-length: ${body.length + 5}\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n${smuggled}`],
      ['two Content-Lengths that differ', `${start}content-length: 5\r\ncontent-length: ${body.length}\r\n\r\n${body}${smuggled}`],
      ['a Content-Length list', `${start}content-length: 5, ${body.length}\r\n\r\n${body}${smuggled}`],
      ['a signed Content-Length', `${start}content-length: +${body.length}\r\n\r\n${body}${smuggled}`],
      ['a space before the colon', `${start}content-length : ${body.length}\r\n\r\n${body}${smuggled}`],
      ['Transfer-Encoding: chunked, identity', `${start}transfer-encoding: chunked, identity\r\n\r\n0\r\n\r\n${smuggled}`],
      ['Transfer-Encoding: xchunked', `${start}transfer-encoding: xchunked\r\n\r\n0\r\n\r\n${smuggled}`],
      ['a folded Transfer-Encoding', `${start}transfer-encoding:\r\n chunked\r\n\r\n0\r\n\r\n${smuggled}`],
      ['a bare LF in the head', `POST /v1/chat/completions HTTP/1.1\nhost: x\ncontent-length: ${body.length}\n\n${body}${smuggled}`],
      ['a chunk size with a sign', `${start}transfer-encoding: chunked\r\n\r\n-0\r\n\r\n${smuggled}`],
      ['a chunk with a bare LF after its data', `${start}transfer-encoding: chunked\r\n\r\n2\r\n{}\n0\r\n\r\n${smuggled}`],
    ];
    for (const [name, bytes] of shapes) {
      const c = connect(g.url);
      c.sock.write(bytes);
      const answer = await c.answer;
      expect(answer.split(/(?=HTTP\/1\.1 )/).map((a) => a.slice(0, 24)), name).toEqual(['HTTP/1.1 400 Bad Request']);
      expect(answer.toLowerCase(), name).toContain('\r\nconnection: close\r\n');
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)), name).toEqual({ error: { message: 'the request is not valid HTTP/1.1', type: 'invalid_request_error', code: 'ERR_BAD_REQUEST' } });
    }
    expect(g.up.received).toEqual([]);
    expect(g.gw.stats().streams).toBe(0);
  });
});

describe('a client that reads its answer a little now and then', () => {
  /** An upstream that writes events as fast as the gateway takes them; resolves `closed` when the gateway closes it. */
  const flood = () => {
    const piece = b(chunk('y'.repeat(4000)).repeat(16));
    let closed!: Promise<void>;
    const script = {
      write: async (res: ServerResponse) => {
        closed = new Promise((r) => res.on('close', () => r()));
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        let written = 0;
        while (!res.destroyed && written < 512 * 1024 * 1024) {
          written += piece.length;
          if (!res.write(piece)) await new Promise<void>((w) => { const go = () => { res.off('drain', go); res.off('close', go); w(); }; res.on('drain', go); res.on('close', go); });
        }
      },
    };
    return { script, closed: () => closed };
  };
  /** Opens a stream and reads 64 KiB of it every `every` ms (what the gateway sent before it closed the connection waits in the system's buffers); `stop()` ends it. */
  const sip = (url: string, every: number) => {
    const payload = Buffer.from(JSON.stringify(chat('flood')));
    let timer: NodeJS.Timeout | undefined;
    const req = request(`${url}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-length': payload.length } }, (res) => {
      res.pause();
      timer = setInterval(() => res.read(64 * 1024), every);
      res.on('error', () => {});
    });
    req.on('error', () => {});
    req.end(payload);
    return { stop: () => { clearInterval(timer); req.destroy(); } };
  };

  test('taking less than minResponseRate while behind: dropped after a clientTimeout or two, its upstream closed, every byte given back; at 0, held until maxDuration', async () => {
    // (a client reading 64 KiB every 10 ms, some 6 MiB a second, is slow beside a rate of 64 MiB a second)
    g = await startGateway({ clientTimeout: 300, minResponseRate: 64 * 1024 * 1024, maxDuration: 20_000, keepalive: 0 });
    let f = flood();
    g.up.scripts.set('flood', f.script);
    const t0 = Date.now();
    const client = sip(g.url, 10);
    await expect.poll(() => g!.up.received.length).toBe(1);
    await expect.poll(() => g!.gw.stats().streams, { timeout: 5000 }).toBe(0);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    await f.closed();
    client.stop();
    await nothingLeft(g);
    const m = await metricsAt(`${g.url}/metrics`);
    expect(m.get('gateway_timeouts_total{timeout="client"}')).toBe(1);
    expect(m.get('llm_streams_total{status="limit"}')).toBe(1);
    await closeGateway(g);
    // the same client, no rate: it takes some of its answer every tick, and keeps its stream until maxDuration
    g = await startGateway({ clientTimeout: 300, minResponseRate: 0, maxDuration: 2000, keepalive: 0 });
    f = flood();
    g.up.scripts.set('flood', f.script);
    const slow = sip(g.url, 10);
    await expect.poll(() => g!.up.received.length).toBe(1);
    await new Promise((r) => setTimeout(r, 1200));
    expect(g.gw.stats().streams).toBe(1);
    await expect.poll(() => g!.gw.stats().streams, { timeout: 5000 }).toBe(0);
    await f.closed();
    slow.stop();
    await nothingLeft(g);
    const m2 = await metricsAt(`${g.url}/metrics`);
    expect([m2.get('gateway_timeouts_total{timeout="duration"}'), m2.get('gateway_timeouts_total{timeout="client"}')]).toEqual([1, 0]);
  });
});

describe('an official client that aborts mid-stream', () => {
  test('the OpenAI client and the Anthropic client each abort after their first text: the upstream request is aborted, and nothing is held', async () => {
    g = await startGateway({ upstreamFormat: 'anthropic', keepalive: 0 });
    const delta = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"encore "}}\n\n';
    let closes = 0;
    g.up.scripts.set('m', { write: (res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(ANTHROPIC_START);
      const t = setInterval(() => res.write(delta), 20);
      res.on('close', () => { clearInterval(t); closes++; });
    } });
    const openai = await openaiOf(g).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true });
    for await (const c of openai) if (c.choices[0]?.delta?.content) { expect(c.choices[0].delta.content).toBe('Bonjour'); break; } // (break aborts the request)
    await expect.poll(() => closes).toBe(1);
    const anthropic = anthropicOf(g).messages.stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    const aborted = anthropic.done().catch((e: unknown) => e);
    const first = await new Promise<string>((resolve) => anthropic.on('text', (t) => resolve(t)));
    expect(first).toBe('Bonjour');
    anthropic.abort();
    expect(await aborted).toBeInstanceOf(Anthropic.APIUserAbortError);
    await expect.poll(() => closes).toBe(2);
    await nothingLeft(g);
    const m = await metricsAt(`${g.url}/metrics`);
    expect(m.get('llm_streams_total{status="aborted"}')).toBe(2);
  });
});

describe('a client that trickles its request\'s head', () => {
  test('a head, or nothing at all, past headTimeout: a 408 and the connection closed, long before clientTimeout', async () => {
    g = await startGateway({ headTimeout: 300, clientTimeout: 20_000 });
    const json = '{"error":{"message":"the request did not arrive within 300 ms","type":"invalid_request_error","code":"ERR_REQUEST_TIMEOUT"}}';
    for (const trickle of [true, false]) {
      const c = connect(g.url);
      const t0 = Date.now();
      const head = 'POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nx-padding: ' + 'p'.repeat(200);
      let i = 0;
      const drip = trickle ? setInterval(() => { if (!c.sock.destroyed && i < head.length) c.sock.write(head[i++]); }, 20) : undefined;
      const answer = await c.answer;
      clearInterval(drip);
      expect(answer, `trickle ${trickle}`).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\nx-request-id: gw-[0-9a-f]{8}-\d+\r\ncontent-type: application\/json\r\n/);
      expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toBe(json);
      expect(c.at() - t0).toBeGreaterThanOrEqual(250);
      expect(c.at() - t0).toBeLessThan(3000);
    }
    expect(g.up.received).toEqual([]);
    await nothingLeft(g);
    expect((await metricsAt(`${g.url}/metrics`)).get('gateway_timeouts_total{timeout="request"}')).toBe(2);
  });
});
