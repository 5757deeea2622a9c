// The gateway in front of users it does not trust (issue 27): one test per finding of the review,
// each failing on the gateway before it, with its exact output; then the slow client and the
// slow upstream with small timeouts: the slot and the upstream socket freed, the memory given back.
// Findings 4–6 on the upstream client alone are in upstream.test.ts and parser-differential.test.ts;
// here they are seen through the gateway.
import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { createGateway, upstreamRequest, type Gateway, type GatewayOptions } from '../../examples/gateway/server.mjs';
import { SseRelay } from '../../bindings/index.js';
// (the package the gateway imports, whose classes a test makes throw where nothing should)
import { ModelStream as PackageStream, SseRelay as PackageRelay } from 'seam-stream';
import { chat, closeGateway, metricsAt, normalizeIds, nothingLeft, post, startGateway, withAwsEnv, type Running } from './support.js';

const enc = new TextEncoder();
const b = (s: string) => enc.encode(s);
const chunk = (content: string) => `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]}\n\n`;
const DONE = 'data: [DONE]\n\n';
const timeoutEvent = (message: string, code: string) => `data: ${JSON.stringify({ error: { message, type: 'timeout', code } })}\n\n`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A gateway in front of a fake upstream of `format`, its log lines kept. */
const start = (options: Omit<GatewayOptions, 'upstream'> = {}, format?: GatewayOptions['upstreamFormat']) => startGateway({ ...options, upstreamFormat: format });

let g: Running | undefined;
afterEach(async () => {
  await closeGateway(g);
  g = undefined;
});

/** What a relay from OpenAI to an OpenAI client writes of an upstream's answer. */
function relayed(body: string): string {
  const r = new SseRelay({ from: 'openai', to: 'openai', model: 'whole' });
  const out = Buffer.concat([Buffer.from(r.push(b(body))), Buffer.from(r.flush())]).toString();
  r.dispose();
  return out;
}

/** POSTs with headers; the status, headers and exact body. */
const postWith = (url: string, body: unknown, headers: Record<string, string>) => post(url, body, '/v1/chat/completions', headers);

/** Opens a stream and reads nothing after its first bytes; resolves with the response and a promise of its socket's close. */
function openIdle(url: string, model: string): Promise<{ res: IncomingMessage; first: Buffer; closed: Promise<void>; destroy(): void }> {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify(chat(model)));
    const req = request(`${url}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-length': payload.length } }, (res) => {
      const closed = new Promise<void>((r) => req.socket!.once('close', () => r()));
      res.once('data', (first: Buffer) => {
        res.pause();
        resolve({ res, first, closed, destroy: () => req.destroy() });
      });
      res.on('error', () => {});
    });
    req.on('error', (e) => { if (!req.destroyed) reject(e); });
    req.end(payload);
  });
}

/** Writes raw bytes on a connection; resolves everything the gateway answers until it closes. */
function raw(url: string, bytes: string, holdOpen = true): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(Number(new URL(url).port), '127.0.0.1', () => { s.write(bytes); if (!holdOpen) s.end(); });
    let d = '';
    s.on('data', (x) => { d += x.toString('latin1'); });
    s.on('error', () => {});
    s.on('close', () => resolve(d));
  });
}

describe('finding 1: every phase times out', () => {
  test('a silent upstream after its headers: an error event after bodyTimeout (keep-alive comments do not reset it), the upstream closed, the slot free', async () => {
    g = await start({ bodyTimeout: 300, keepalive: 0.05, maxStreams: 1 });
    g.up.scripts.set('m', { pieces: [b(chunk('Bonjour'))], then: 'hang' });
    g.up.scripts.set('quick', { pieces: [b(chunk('vite') + DONE)] });
    const t0 = Date.now();
    const r = await post(g.url, chat('m'));
    const took = Date.now() - t0;
    const text = r.body.toString();
    expect(text.replace(/: keep-alive\n\n/g, '')).toBe(chunk('Bonjour') + timeoutEvent('the upstream sent nothing for 300 ms', 'ERR_UPSTREAM_BODY_TIMEOUT'));
    expect(text.split(': keep-alive\n\n').length - 1).toBeGreaterThanOrEqual(3); // comments went out all along, and did not keep the stream
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(5000); // (well before the client's own timeout; loose for a loaded machine)
    await nothingLeft(g);
    expect((await post(g.url, chat('quick'))).body.toString()).toBe(chunk('vite') + DONE); // the one slot is free again
    const m = await metricsAt(`${g.url}/metrics`);
    expect(m.get('gateway_timeouts_total{timeout="body"}')).toBe(1);
    expect(m.get('llm_streams_total{status="limit"}')).toBe(1);
  });

  test('an upstream silent after its completion: the client has its whole answer and no error after it, and the stream counts done, not limit', async () => {
    g = await start({ bodyTimeout: 300, keepalive: 0 });
    const finish = 'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n';
    g.up.scripts.set('m', { pieces: [b(chunk('Bonjour') + finish + DONE)], then: 'hang' });
    const r = await post(g.url, chat('m'));
    expect(r.body.toString()).toBe(chunk('Bonjour') + finish + DONE);
    const m = await metricsAt(`${g.url}/metrics`);
    expect(m.get('llm_streams_total{status="done"}')).toBe(1);
    expect(m.get('llm_streams_total{status="limit"}')).toBe(0);
  });

  test('an upstream silent after an event past maxEventBytes: the client gets that error, and the stream counts as that limit, as when the upstream ends', async () => {
    for (const then of ['hang', 'end'] as const) {
      g = await start({ bodyTimeout: 300, keepalive: 0, maxEventBytes: 1024 });
      g.up.scripts.set('m', { pieces: [b(chunk('hi') + chunk('x'.repeat(3000)))], ...(then === 'hang' ? { then: 'hang' } : {}) });
      const r = await post(g.url, chat('m'));
      const events = r.body.toString().split('\n\n').filter(Boolean);
      expect(events[0] + '\n\n', then).toBe(chunk('hi'));
      expect(JSON.parse(events.at(-1)!.slice(6)).error.code, then).toBe('ERR_EVENT_TOO_LARGE');
      const m = await metricsAt(`${g.url}/metrics`);
      expect(m.get('llm_streams_total{status="limit"}'), then).toBe(1);
      expect(m.get('llm_streams_total{status="failed"}'), then).toBe(0);
      expect(m.get('llm_limit_errors_total{limit="event_bytes"}'), then).toBe(1);
      await closeGateway(g);
      g = undefined;
    }
  });

  test('three streams held by a silent upstream no longer keep a fourth client out for ever', async () => {
    g = await start({ bodyTimeout: 250, maxStreams: 3 });
    g.up.scripts.set('silent', { pieces: [b(chunk('a'))], then: 'hang' });
    g.up.scripts.set('quick', { pieces: [b(chunk('vite') + DONE)] });
    const held = await Promise.all([0, 1, 2].map(() => openIdle(g!.url, 'silent')));
    expect((await post(g.url, chat('quick'))).status).toBe(503);
    await Promise.all(held.map((h) => h.closed)); // each ended by bodyTimeout, its connection closed
    expect((await post(g.url, chat('quick'))).body.toString()).toBe(chunk('vite') + DONE);
    await g.up.noSockets();
  });

  test('maxDuration: a stream that goes on for longer ends with an error event, never [DONE]', async () => {
    g = await start({ maxDuration: 300 });
    g.up.scripts.set('m', { pieces: Array.from({ length: 100 }, (_, i) => b(chunk(`${i} `))), gapMs: 20 });
    const r = await post(g.url, chat('m'));
    const text = r.body.toString();
    const tail = timeoutEvent('the stream passed maxDuration (300 ms)', 'ERR_MAX_DURATION');
    expect(text.endsWith(tail)).toBe(true);
    const n = text.split('data: {"id"').length - 1;
    expect(n).toBeGreaterThan(2);
    expect(n).toBeLessThan(40);
    expect(text).toBe(Array.from({ length: n }, (_, i) => chunk(`${i} `)).join('') + tail);
    await g.up.noSockets();
    expect((await metricsAt(`${g.url}/metrics`)).get('gateway_timeouts_total{timeout="duration"}')).toBe(1);
  });

  test('maxDuration before the upstream answered: 504, the upstream request aborted', async () => {
    g = await start({ maxDuration: 200, upstreamTimeout: 10_000 });
    g.up.scripts.set('m', { write: () => {} });
    const r = await post(g.url, chat('m'));
    expect([r.status, r.headers['content-type'], JSON.parse(r.body.toString())]).toEqual([504, 'application/json',
      { error: { message: 'the stream passed maxDuration (200 ms)', type: 'timeout', code: 'ERR_MAX_DURATION' } }]);
    await g.up.noSockets();
  });

  test('a request that does not arrive within clientTimeout (its head, or its body): 408 in the API\'s shape, with a request id, the slot free, no upstream call', async () => {
    g = await start({ clientTimeout: 200, maxStreams: 1 });
    g.up.scripts.set('quick', { pieces: [b(chunk('vite') + DONE)] });
    const json = '{"error":{"message":"the request did not arrive within 200 ms","type":"invalid_request_error","code":"ERR_REQUEST_TIMEOUT"}}';
    const want = (id: string) => `HTTP/1.1 408 Request Timeout\r\nx-request-id: ${id}\r\ncontent-type: application/json\r\nx-content-type-options: nosniff\r\ncontent-length: ${json.length}\r\nconnection: close\r\n\r\n${json}`;
    const body = raw(g.url, 'POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n{"model":"quick",');
    await expect.poll(() => g!.gw.stats().streams).toBe(1); // admitted: its slot taken while its body comes
    const busy = await post(g.url, chat('quick'));
    expect(busy.status).toBe(503);
    // (the gateway's ids: its prefix and a count, the admitted request's the first, the 503's the second)
    const id = String(busy.headers['x-request-id']);
    expect(id).toMatch(/^gw-[0-9a-f]{8}-2$/);
    const prefix = id.slice(0, -1);
    // the 408 of a request whose head came carries that request's id (the one its log lines have); of a head that did not come, a new one
    expect(await body).toBe(want(`${prefix}1`));
    expect(await raw(g.url, 'POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n')).toBe(want(`${prefix}3`));
    expect(g.up.received).toEqual([]);
    expect(g.gw.stats().streams).toBe(0);
    expect((await post(g.url, chat('quick'))).body.toString()).toBe(chunk('vite') + DONE);
    expect((await metricsAt(`${g.url}/metrics`)).get('gateway_timeouts_total{timeout="request"}')).toBe(2);
  });

  test('a body that does not arrive within clientTimeout at /v1/messages, or breaks HTTP/1.1: the 408 (the 400) in Anthropic\'s shape (the route is known once the head came)', async () => {
    g = await start({ clientTimeout: 200 });
    // (the request ids: the gateway's prefix, then 1, 2, 3 in the order the requests came)
    const prefix = String((await post(g.url, {}, '/v1/messages')).headers['x-request-id']).slice(0, -1);
    const reply = (n: number, json: string) => `HTTP/1.1 408 Request Timeout\r\nx-request-id: ${prefix}${n}\r\ncontent-type: application/json\r\nx-content-type-options: nosniff\r\ncontent-length: ${json.length}\r\nconnection: close\r\n\r\n${json}`;
    expect(await raw(g.url, 'POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n{"model":"quick",'))
      .toBe(reply(2, '{"type":"error","error":{"type":"invalid_request_error","message":"the request did not arrive within 200 ms"}}'));
    // (a head that does not arrive names no route: OpenAI's shape, the gateway's default)
    expect(await raw(g.url, 'POST /v1/messages HTTP/1.1\r\nhost: x\r\n'))
      .toBe(reply(3, '{"error":{"message":"the request did not arrive within 200 ms","type":"invalid_request_error","code":"ERR_REQUEST_TIMEOUT"}}'));
    // (and a body that breaks HTTP/1.1, its chunk framing malformed)
    const bad = '{"type":"error","error":{"type":"invalid_request_error","message":"the request is not valid HTTP/1.1"}}';
    expect(await raw(g.url, 'POST /v1/messages HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{"mod\r\nzz\r\n'))
      .toBe(`HTTP/1.1 400 Bad Request\r\nx-request-id: ${prefix}4\r\ncontent-type: application/json\r\nx-content-type-options: nosniff\r\ncontent-length: ${bad.length}\r\nconnection: close\r\n\r\n${bad}`);
    // (and a head over Node's limit, 16 KiB: a 431, a new id)
    const big = '{"error":{"message":"the request head is too large","type":"invalid_request_error","code":"ERR_HEADERS_TOO_LARGE"}}';
    expect(await raw(g.url, `POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`))
      .toBe(`HTTP/1.1 431 Request Header Fields Too Large\r\nx-request-id: ${prefix}5\r\ncontent-type: application/json\r\nx-content-type-options: nosniff\r\ncontent-length: ${big.length}\r\nconnection: close\r\n\r\n${big}`);
    expect(g.up.received).toEqual([]);
    await nothingLeft(g);
  });

  test('a stream longer than clientTimeout, read by its client, is not cut', async () => {
    g = await start({ clientTimeout: 100, keepalive: 0 });
    g.up.scripts.set('m', { pieces: [...Array.from({ length: 12 }, (_, i) => b(chunk(`${i}`))), b(DONE)], gapMs: 40 });
    const r = await post(g.url, chat('m'));
    expect(r.body.toString()).toBe(Array.from({ length: 12 }, (_, i) => chunk(`${i}`)).join('') + DONE);
  });
});

describe('finding 1: the slow client and the slow upstream give back the slot, the upstream socket and the memory', () => {
  test('a client that reads nothing: dropped after clientTimeout once its buffers are full, the upstream closed, every byte given back', async () => {
    g = await start({ clientTimeout: 300, highWaterMark: 64 * 1024, keepalive: 0.05 });
    const piece = b(chunk('y'.repeat(4000)).repeat(16));
    let written = 0;
    let upstreamClosed!: Promise<void>;
    g.up.scripts.set('flood', {
      write: async (res: ServerResponse) => {
        upstreamClosed = new Promise((r) => res.on('close', () => r()));
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        while (!res.destroyed && written < 256 * 1024 * 1024) {
          written += piece.length;
          if (!res.write(piece)) await new Promise<void>((w) => { const go = () => { res.off('drain', go); res.off('close', go); w(); }; res.on('drain', go); res.on('close', go); });
        }
      },
    });
    const c = await openIdle(g.url, 'flood');
    await expect.poll(() => g!.gw.stats().pendingBytes, { timeout: 10_000 }).toBeGreaterThan(64 * 1024); // the client's buffer full
    const full = Date.now();
    await expect.poll(() => g!.gw.stats().connections, { timeout: 5000 }).toBe(0); // the gateway closed the client's connection
    expect(Date.now() - full).toBeGreaterThanOrEqual(250);
    c.res.resume();
    await c.closed;
    await upstreamClosed;
    await g.up.noSockets();
    expect(written).toBeLessThan(64 * 1024 * 1024); // the upstream was held back, not read into memory
    await expect.poll(() => g!.gw.stats()).toEqual({ streams: 0, pendingBytes: 0, coreBytes: 0, connections: 0 });
    const m = await metricsAt(`${g.url}/metrics`);
    expect(m.get('gateway_timeouts_total{timeout="client"}')).toBe(1);
    expect(m.get('llm_streams_total{status="limit"}')).toBe(1);
    expect(m.get('llm_streams_open')).toBe(0);
  });

  test('a whole answer its client never takes: the slot is held while the answer waits, then the client is dropped and it all given back', async () => {
    g = await start({ clientTimeout: 300 });
    const answer = JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'w'.repeat(7 * 1024 * 1024) } }] });
    g.up.scripts.set('m', { contentType: 'application/json', pieces: [b(answer)] });
    const payload = Buffer.from(JSON.stringify(chat('m', false)));
    let got = 0;
    const req = request(`${g.url}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-length': payload.length } }, (res) => {
      res.once('data', (d: Buffer) => { got += d.length; res.pause(); });
      res.on('error', () => {});
    });
    req.on('error', () => {});
    req.end(payload);
    await expect.poll(() => got).toBeGreaterThan(0);
    expect(g.gw.stats().streams).toBe(1); // answered, not yet taken: the slot and the bytes stay counted
    expect(g.gw.stats().pendingBytes).toBeGreaterThan(0);
    await expect.poll(() => g!.gw.stats(), { timeout: 5000 }).toEqual({ streams: 0, pendingBytes: 0, coreBytes: 0, connections: 0 });
    expect((await metricsAt(`${g.url}/metrics`)).get('gateway_timeouts_total{timeout="client"}')).toBe(1);
    req.destroy();
  });

  test('an upstream that trickles: each byte within bodyTimeout keeps the stream, maxDuration ends it; slot, socket and memory given back', async () => {
    g = await start({ bodyTimeout: 200, maxDuration: 600, keepalive: 0 });
    const event = chunk('lent');
    const quarter = Math.ceil(event.length / 4);
    // an event in four pieces 30 ms apart, forty times: never silent for bodyTimeout, longer than maxDuration
    g.up.scripts.set('m', { pieces: Array.from({ length: 160 }, (_, i) => b(event.slice((i % 4) * quarter, (i % 4 + 1) * quarter))), gapMs: 30 });
    const r = await post(g.url, chat('m'));
    const text = r.body.toString();
    const n = text.split(event).length - 1;
    expect(n).toBeGreaterThanOrEqual(2);
    expect(n).toBeLessThan(10);
    // whole events only, then the error (the unfinished one is not written)
    expect(text).toBe(event.repeat(n) + timeoutEvent('the stream passed maxDuration (600 ms)', 'ERR_MAX_DURATION'));
    await nothingLeft(g);
  });
});

describe('finding 2: gateway keys', () => {
  const unauthorized = { error: { message: 'Incorrect or missing API key: send it as authorization: Bearer KEY (or x-api-key: KEY)', type: 'invalid_request_error', code: 'invalid_api_key' } };

  test('no key or a wrong one: 401 in the API\'s shape, and the upstream is never called', async () => {
    g = await start({ apiKeys: ['key-one', 'key-two'] });
    g.up.scripts.set('m', { pieces: [b(chunk('ok') + DONE)] });
    for (const headers of <Record<string, string>[]>[{}, { authorization: 'Bearer key-three' }, { authorization: 'Bearer key-one ' + 'x' }, { authorization: 'Basic key-one' }, { 'x-api-key': 'key-on' }]) {
      const r = await postWith(g.url, chat('m'), headers);
      expect([r.status, r.headers['www-authenticate'], JSON.parse(r.body.toString())]).toEqual([401, 'Bearer', unauthorized]);
    }
    expect(g.up.received).toEqual([]);
    expect((await fetch(`${g.url}/metrics`)).status).toBe(401); // /metrics too
    const m = await metricsAt(`${g.url}/metrics`, { authorization: 'Bearer key-two' });
    expect(m.get('gateway_auth_failures_total')).toBe(6);
  });

  test('a right key: the client\'s credential never goes upstream; the gateway\'s own key does, in the header of the format', async () => {
    g = await start({ apiKeys: ['key-one'], upstreamKey: 'up-secret' }, 'anthropic');
    g.up.scripts.set('m', { pieces: [b('event: message_stop\ndata: {"type":"message_stop"}\n\n')] });
    for (const headers of <Record<string, string>[]>[{ authorization: 'Bearer key-one' }, { 'x-api-key': 'key-one' }]) expect((await postWith(g.url, chat('m'), headers)).status).toBe(200);
    expect(g.up.received.map((r) => [r.headers.authorization, r.headers['x-api-key']])).toEqual([[undefined, 'up-secret'], [undefined, 'up-secret']]);
    await g.close();
    g = await start({ apiKeys: ['key-one'] }, 'ollama');
    g.up.scripts.set('m', { pieces: [b('{"message":{"content":"ok"},"done":true}\n')] });
    expect((await postWith(g.url, chat('m'), { authorization: 'Bearer key-one' })).status).toBe(200);
    expect(g.up.received[0].headers.authorization).toBeUndefined(); // keys set, no upstreamKey: nothing
    await g.close();
    g = await start({ upstreamKey: 'up-secret' });
    g.up.scripts.set('m', { pieces: [b(DONE)] });
    await postWith(g.url, chat('m'), { authorization: 'Bearer the-clients' });
    expect(g.up.received[0].headers.authorization).toBe('Bearer up-secret');
  });

  test('the client\'s key, read by one rule (its scheme in any case, RFC 9110 §11.1; the spaces around it dropped): by the gateway\'s check, and as it goes on to the upstream', async () => {
    const ways: Record<string, string>[] = [{ authorization: 'bearer sk-client' }, { authorization: 'BEARER sk-client' }, { authorization: 'Bearer   sk-client' }, { 'x-api-key': 'sk-client' }];
    g = await start({ apiKeys: ['sk-client'] });
    g.up.scripts.set('m', { pieces: [b(DONE)] });
    expect(await Promise.all(ways.map(async (headers) => (await postWith(g!.url, chat('m'), headers)).status))).toEqual([200, 200, 200, 200]);
    await g.close();
    // no apiKeys and no upstreamKey: the client's key goes on, in the header of the format (a lowercase bearer reached the upstream as none)
    g = await start();
    g.up.scripts.set('m', { pieces: [b(DONE)] });
    for (const headers of ways) await postWith(g.url, chat('m'), headers);
    expect(g.up.received.map((r) => [r.headers.authorization, r.headers['x-api-key']])).toEqual(Array(4).fill(['Bearer sk-client', undefined]));
    await g.close();
    g = await start({}, 'anthropic');
    g.up.scripts.set('m', { pieces: [b('event: message_stop\ndata: {"type":"message_stop"}\n\n')] });
    for (const headers of ways) await postWith(g.url, chat('m'), headers);
    expect(g.up.received.map((r) => [r.headers.authorization, r.headers['x-api-key']])).toEqual(Array(4).fill([undefined, 'sk-client']));
    // (HTTP trims a header's value; upstreamRequest called with one of its own trims the key as well)
    expect(upstreamRequest('openai', 'http://127.0.0.1:9', chat('m'), { 'x-api-key': ' sk-client ' }).headers).toEqual({
      'content-type': 'application/json', accept: 'text/event-stream', 'accept-encoding': 'identity', authorization: 'Bearer sk-client' });
  });

  test('listening beyond loopback without keys is refused, unless said so', async () => {
    const up = 'http://127.0.0.1:9';
    const gw: Gateway = createGateway({ upstream: up });
    await expect(gw.listen(0, '0.0.0.0')).rejects.toThrow(new TypeError(
      'createGateway: listening on 0.0.0.0 (beyond loopback) without apiKeys: anyone who reaches it uses the upstream; set apiKeys, or allowNoKeys to say so'));
    await gw.close();
    for (const options of [{ apiKeys: ['k'] }, { allowNoKeys: true }]) {
      const ok = createGateway({ upstream: up, ...options });
      expect(await ok.listen(0, '0.0.0.0')).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
      await ok.close();
    }
  });

  test('the metrics listener: a connection that sends nothing is cut at headTimeout, and it takes 16 connections at once; a scraper is served again once they go', async () => {
    g = await start({ apiKeys: ['k'], metricsPort: 0, headTimeout: 200, clientTimeout: 1000 });
    const port = Number(new URL(g.gw.metricsUrl!).port);
    const open = (n: number) => Array.from({ length: n }, () => {
      const t0 = Date.now();
      const s = net.connect(port, '127.0.0.1');
      let d = '';
      s.on('data', (x) => { d += x.toString('latin1'); });
      s.on('error', () => {});
      return new Promise<{ took: number; said: string }>((resolve) => s.on('close', () => resolve({ took: Date.now() - t0, said: d })));
    });
    // (Node's defaults held each such connection for a minute, as many as a client opened)
    const idle = await Promise.all(open(20));
    const cut = idle.filter((c) => c.said.startsWith('HTTP/1.1 408'));
    const dropped = idle.filter((c) => c.said === '');
    expect([cut.length, dropped.length]).toEqual([16, 4]);
    for (const c of cut) expect(c.took).toBeLessThan(3000);
    for (const c of dropped) expect(c.took).toBeLessThan(150);
    const m = await metricsAt(`${g.gw.metricsUrl}/metrics`);
    expect(m.get('gateway_auth_failures_total')).toBe(0);
  });

  test('/metrics on a listener of its own: not on the API\'s', async () => {
    g = await start({ apiKeys: ['k'], metricsPort: 0 });
    expect(g.gw.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const r = await fetch(`${g.url}/metrics`, { headers: { authorization: 'Bearer k' } });
    expect([r.status, await r.json()]).toEqual([404, { error: { message: 'no route GET /metrics', type: 'invalid_request_error', code: 'not_found' } }]);
    const m = await metricsAt(`${g.gw.metricsUrl}/metrics`);
    expect(m.get('gateway_auth_failures_total')).toBe(0);
  });
});

describe('finding 3: admission first, every buffer in the budget, connections capped', () => {
  test('twelve clients sending large bodies with maxStreams 3: three admitted (their bodies counted), nine answered 503 at once', async () => {
    g = await start({ maxStreams: 3, clientTimeout: 1000 });
    const head = 'POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 614400\r\n\r\n';
    const sockets: net.Socket[] = [];
    const answers = Array.from({ length: 12 }, () => new Promise<string>((resolve) => {
      const s = net.connect(Number(new URL(g!.url).port), '127.0.0.1', () => s.write(head + '{"model":"' + 'x'.repeat(100 * 1024)));
      sockets.push(s);
      let d = '';
      s.on('data', (x) => { d += x.toString('latin1'); });
      s.on('error', () => {});
      s.on('close', () => resolve(d));
    }));
    await expect.poll(() => g!.gw.stats().streams).toBe(3);
    await expect.poll(() => g!.gw.stats().pendingBytes).toBeGreaterThanOrEqual(3 * 100 * 1024);
    const all = await Promise.all(answers);
    const status = all.map((a) => a.slice(0, 12));
    expect(status.filter((s) => s === 'HTTP/1.1 503').length).toBe(9);
    expect(status.filter((s) => s === 'HTTP/1.1 408').length).toBe(3); // the three admitted, cut by clientTimeout
    expect(g.gw.stats()).toEqual({ streams: 0, pendingBytes: 0, coreBytes: 0, connections: 0 });
    for (const s of sockets) s.destroy();
  });

  test('a request body that would pass maxPendingBytes: 503, its bytes let go', async () => {
    g = await start({ maxPendingBytes: 64 * 1024 });
    const r = await post(g.url, { model: 'm', pad: 'p'.repeat(100 * 1024) });
    expect([r.status, JSON.parse(r.body.toString())]).toEqual([503, { error: {
      message: 'the gateway\'s streams hold more than maxPendingBytes (65536) with this request\'s body; retry later', type: 'overloaded', code: 'ERR_PENDING_BYTES' } }]);
    expect(g.up.received).toEqual([]);
    expect(g.gw.stats().pendingBytes).toBe(0);
  });

  test('a whole answer that would pass maxPendingBytes: 503 (OpenAI\'s passed through, and one assembled from a stream)', async () => {
    g = await start({ maxPendingBytes: 64 * 1024 });
    const big = JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'z'.repeat(100 * 1024) } }] });
    g.up.scripts.set('m', { contentType: 'application/json', pieces: [b(big.slice(0, 30_000)), b(big.slice(30_000))] });
    const r = await post(g.url, chat('m', false));
    expect([r.status, JSON.parse(r.body.toString())]).toEqual([503, { error: {
      message: 'the gateway\'s streams hold more than maxPendingBytes (65536) with this answer; retry later', type: 'overloaded', code: 'ERR_PENDING_BYTES' } }]);
    await g.close();
    g = await start({ maxPendingBytes: 64 * 1024 }, 'ollama');
    g.up.scripts.set('m', { pieces: Array.from({ length: 20 }, () => b(`{"message":{"content":"${'w'.repeat(8000)}"},"done":false}\n`)) });
    const r2 = await post(g.url, chat('m', false));
    expect([r2.status, JSON.parse(r2.body.toString())]).toEqual([503, { error: {
      message: 'the gateway\'s streams hold more than maxPendingBytes (65536) with this answer; retry later', type: 'overloaded', code: 'ERR_PENDING_BYTES' } }]);
    await g.up.noSockets();
    expect(g.gw.stats().pendingBytes).toBe(0);
  });

  test('whole answers waiting in their clients\' buffers count in the budget: the next whole answer that would pass maxPendingBytes is a 503', async () => {
    // (they were missing from the budget's quick bound, written after each streamed write alone:
    // every whole answer was read and held while others waited unread, far past maxPendingBytes)
    g = await start({ maxPendingBytes: 12 * 1024 * 1024, clientTimeout: 20_000 });
    const answer = JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'w'.repeat(7 * 1024 * 1024) } }] });
    g.up.scripts.set('m', { contentType: 'application/json', pieces: [b(answer)] });
    const payload = JSON.stringify(chat('m', false));
    const idle = net.connect(Number(new URL(g.url).port), '127.0.0.1', () => idle.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: ${payload.length}\r\n\r\n${payload}`));
    idle.pause(); // (it reads nothing: its answer waits in the gateway's buffer, one write of it all)
    idle.on('error', () => {});
    await expect.poll(() => g!.gw.stats().pendingBytes).toBeGreaterThan(7 * 1024 * 1024);
    const r = await post(g.url, chat('m', false));
    expect([r.status, JSON.parse(r.body.toString())]).toEqual([503, { error: {
      message: 'the gateway\'s streams hold more than maxPendingBytes (12582912) with this answer; retry later', type: 'overloaded', code: 'ERR_PENDING_BYTES' } }]);
    expect(g.gw.stats().streams).toBe(1);
    expect((await metricsAt(`${g.url}/metrics`)).get('llm_limit_errors_total{limit="pending_bytes"}')).toBe(1);
    idle.destroy();
    await nothingLeft(g);
  });

  test.each([
    ['streamed, to an OpenAI client', '/v1/chat/completions', true],
    ['whole (stream: false), to an Anthropic client, read from the upstream\'s stream', '/v1/messages', false],
  ] as const)('upstreams that answer with one large JSON body, which the library holds whole until its end (%s): the bodies count in the budget, and the streams past maxPendingBytes are refused', async (_, path, stream) => {
    // (the relay and the model stream keep such a body in JavaScript up to maxEventBytes, outside
    // the core's memory: sixteen of them were held, 8 MiB, with the budget at 4 MiB and counting none)
    const KIB = 1024;
    g = await start({ maxPendingBytes: 4096 * KIB, clientTimeout: 20_000 });
    const whole = JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'z'.repeat(512 * KIB) }, finish_reason: 'stop' }] });
    let release!: () => void;
    const mayEnd = new Promise<void>((resolve) => { release = resolve; });
    g.up.scripts.set('whole', {
      write: async (res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(whole.slice(0, -100));
        await mayEnd;
        if (!res.destroyed) res.end(whole.slice(-100));
      },
    });
    const N = 16;
    let settled = 0;
    const answers = Array.from({ length: N }, () => post(g!.url, { ...chat('whole', stream), max_tokens: 64 }, path).finally(() => { settled++; }));
    // (settled: every stream either holds its body so far, all but its last 100 bytes, or was refused)
    await expect.poll(() => {
      const { streams, pendingBytes } = g!.gw.stats();
      return g!.up.received.length === N && streams + settled === N && pendingBytes >= streams * (whole.length - 100);
    }, { timeout: 15_000 }).toBe(true);
    const open = g.gw.stats().streams;
    expect(open).toBeGreaterThanOrEqual(1);
    expect(open).toBeLessThanOrEqual(7); // (eight bodies of 512 KiB are the budget)
    expect(g.gw.stats().pendingBytes).toBeLessThan(4096 * KIB);
    release();
    const all = await Promise.all(answers);
    const message = 'the gateway\'s streams hold more than maxPendingBytes (4194304) with this answer; retry later';
    const refused = stream
      ? { status: 200, body: `data: ${JSON.stringify({ error: { message, type: 'overloaded', code: 'ERR_PENDING_BYTES' } })}\n\n` }
      : { status: 503, body: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message } }) };
    const answered = all.filter((r) => !(r.status === refused.status && r.body.toString() === refused.body));
    expect(answered.length).toBe(open);
    for (const r of answered) {
      expect(r.status).toBe(200);
      const text = r.body.toString();
      if (stream) {
        expect(normalizeIds(text)).toBe(normalizeIds(relayed(whole)));
      } else {
        expect(JSON.parse(text).content).toEqual([{ type: 'text', text: 'z'.repeat(512 * KIB) }]);
      }
    }
    await nothingLeft(g);
    const m = await metricsAt(`${g.url}/metrics`);
    expect([m.get('llm_limit_errors_total{limit="pending_bytes"}'), m.get('llm_streams_total{status="limit"}'), m.get('llm_streams_total{status="done"}')])
      .toEqual([N - open, N - open, open]);
  });

  test.each([
    ['streamed, to an OpenAI client', '/v1/chat/completions', true],
    ['whole (stream: false), to an Anthropic client, read from the upstream\'s stream', '/v1/messages', false],
  ] as const)('an upstream\'s JSON body in reads that cross maxPendingBytes (%s): the read that would pass it is refused before the reader keeps it, never held past the budget', async (_, path, stream) => {
    // (each read was held in the budget after the relay or model stream had kept it: the read that
    // crossed the budget was kept, a read's size past it, before the stream was refused)
    const KIB = 1024;
    const budget = 256 * KIB;
    g = await start({ maxPendingBytes: budget, clientTimeout: 20_000 });
    const whole = b(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'z'.repeat(600 * KIB) }, finish_reason: 'stop' }] }));
    const pieces = Array.from({ length: Math.ceil(whole.length / (100 * KIB)) }, (_, i) => whole.subarray(i * 100 * KIB, (i + 1) * 100 * KIB));
    g.up.scripts.set('whole', { contentType: 'application/json', pieces, gapMs: 20 });
    // the most the readers of the package the gateway imports kept of a JSON body, after each push
    let most = 0;
    type Reader = { push(chunk: Uint8Array): unknown; readonly jsonBodyBytes: number };
    const spied = ([PackageRelay.prototype, PackageStream.prototype] as Reader[]).map((proto) => {
      const own = Object.getOwnPropertyDescriptor(proto, 'push');
      const push = proto.push;
      proto.push = function (this: Reader, chunk: Uint8Array) {
        try {
          return push.call(this, chunk);
        } finally {
          most = Math.max(most, this.jsonBodyBytes);
        }
      };
      return () => { if (own) Object.defineProperty(proto, 'push', own); else delete (proto as { push?: unknown }).push; };
    });
    let r;
    try {
      r = await post(g.url, { ...chat('whole', stream), max_tokens: 64 }, path);
    } finally {
      for (const undo of spied) undo();
    }
    const message = `the gateway's streams hold more than maxPendingBytes (${budget}) with this answer; retry later`;
    expect({ status: r.status, body: r.body.toString() }).toEqual(stream
      ? { status: 200, body: `data: ${JSON.stringify({ error: { message, type: 'overloaded', code: 'ERR_PENDING_BYTES' } })}\n\n` }
      : { status: 503, body: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message } }) });
    expect(most).toBeGreaterThanOrEqual(100 * KIB);
    expect(most).toBeLessThanOrEqual(budget);
    await nothingLeft(g);
    expect((await metricsAt(`${g.url}/metrics`)).get('llm_limit_errors_total{limit="pending_bytes"}')).toBe(1);
  });

  test('a Gemini upstream that answers a JSON array (held whole as its body too), after a BOM and white space cut across reads: counted from its `[`, and refused past maxPendingBytes', async () => {
    g = await start({ maxPendingBytes: 256 * 1024 }, 'gemini');
    const array = `[${Array.from({ length: 40 }, () => JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'g'.repeat(8000) }] } }] })).join(',')}]`;
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb]), Buffer.from([0xbf, 0x20, 0x0a]), b(array)]);
    g.up.scripts.set('gemini-2.5-flash', { contentType: 'application/json', pieces: [bytes.subarray(0, 2), bytes.subarray(2, 5), bytes.subarray(5, 6), bytes.subarray(6)] });
    const r = await post(g.url, chat('gemini-2.5-flash'));
    expect(r.body.toString()).toBe(`data: ${JSON.stringify({ error: { message: 'the gateway\'s streams hold more than maxPendingBytes (262144) with this answer; retry later', type: 'overloaded', code: 'ERR_PENDING_BYTES' } })}\n\n`);
    await nothingLeft(g);
  });

  test('a client that leaves while its stream holds an upstream\'s JSON body: its bytes are let go, the upstream closed', async () => {
    g = await start();
    g.up.scripts.set('m', { contentType: 'application/json', pieces: [b(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"${'q'.repeat(300 * 1024)}`)], then: 'hang' });
    const payload = JSON.stringify(chat('m'));
    const client = net.connect(Number(new URL(g.url).port), '127.0.0.1', () => client.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: ${payload.length}\r\n\r\n${payload}`));
    client.on('error', () => {});
    await expect.poll(() => g!.gw.stats().pendingBytes).toBeGreaterThanOrEqual(300 * 1024);
    client.destroy();
    await nothingLeft(g);
    expect((await metricsAt(`${g.url}/metrics`)).get('llm_streams_total{status="aborted"}')).toBe(1);
  });

  describe('a Bedrock upstream (AWS\'s event stream) that answers one JSON body, held whole as an SSE format\'s', () => {
    withAwsEnv();
    test('counted, and refused past maxPendingBytes', async () => {
      g = await start({ maxPendingBytes: 256 * 1024 }, 'bedrock');
      const body = JSON.stringify({ message: 'v'.repeat(300 * 1024) });
      g.up.scripts.set('m', { contentType: 'application/json', pieces: [b(body.slice(0, 100_000)), b(body.slice(100_000))] });
      const r = await post(g.url, chat('m'));
      expect(r.body.toString()).toBe(`data: ${JSON.stringify({ error: { message: 'the gateway\'s streams hold more than maxPendingBytes (262144) with this answer; retry later', type: 'overloaded', code: 'ERR_PENDING_BYTES' } })}\n\n`);
      await nothingLeft(g);
    });
  });

  test('connections past maxConnectionsPerAddress, and past maxConnections: 503 and closed, the request sent on them not served', async () => {
    const json = (m: string) => JSON.stringify({ error: { message: m, type: 'overloaded', code: 'ERR_MAX_CONNECTIONS' } });
    const answer = (m: string, id: string) => `HTTP/1.1 503 Service Unavailable\r\nx-request-id: ${id}\r\ncontent-type: application/json\r\nx-content-type-options: nosniff\r\ncontent-length: ${json(m).length}\r\nretry-after: 1\r\nconnection: close\r\n\r\n${json(m)}`;
    for (const [options, message] of [
      [{ maxConnectionsPerAddress: 2 }, 'this address has 2 connections open (maxConnectionsPerAddress 2); retry later'],
      [{ maxConnections: 2, maxConnectionsPerAddress: 0 }, 'the gateway has 2 connections open (maxConnections 2); retry later'],
    ] as const) {
      g = await start(options);
      g.up.scripts.set('quick', { pieces: [b(chunk('vite') + DONE)] });
      const held = [0, 1].map(() => net.connect(Number(new URL(g!.url).port), '127.0.0.1'));
      await expect.poll(() => g!.gw.stats().connections).toBe(2);
      // (the 503 written to the socket carries a request id as every answer does: the gateway's first here, 1)
      const request = JSON.stringify(chat('quick'));
      const rejected = await raw(g.url, `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: ${request.length}\r\n\r\n${request}`);
      const id = /\r\nx-request-id: (gw-[0-9a-f]{8}-)1\r\n/.exec(rejected);
      expect(rejected).toBe(answer(message, `${id?.[1]}1`));
      // The request on the rejected connection, which Node's HTTP server read all the same, is not
      // served: the upstream is not asked (it was, the client having its 503) and it takes no id.
      await sleep(100);
      expect(g.up.received).toEqual([]);
      for (const s of held) s.destroy();
      await expect.poll(() => g!.gw.stats().connections).toBe(0);
      const after = await fetch(`${g.url}/metrics`);
      expect([after.status, after.headers.get('x-request-id')]).toEqual([200, `${id?.[1]}2`]);
      const streams = [...(await metricsAt(`${g.url}/metrics`))].filter(([k]) => k.startsWith('llm_streams_total{'));
      expect(streams.map(([, v]) => v)).toEqual([0, 0, 0, 0, 0]); // (no stream)
      expect((await metricsAt(`${g.url}/metrics`)).get(`gateway_connections_rejected_total{limit="${'maxConnections' in options ? 'total' : 'per_address'}"}`)).toBe(1);
      await g.close();
      g = undefined;
    }
  });
});

describe('maxConnectionsPerAddress over IPv6: a client\'s /64 network is one address', () => {
  test('connections from addresses of one /64 count together (an IPv4-mapped address as its IPv4 one); another /64 has its own', async () => {
    // (each of a host's 2^64 IPv6 addresses was a client of its own: the cap was no cap against one host)
    g = await start({ maxConnectionsPerAddress: 2 });
    const fake: string[] = [];
    g.gw.server.prependListener('connection', (socket: net.Socket) => {
      Object.defineProperty(socket, 'remoteAddress', { value: fake.shift(), configurable: true });
    });
    /** Connects as `address`; resolves what the gateway wrote first, or '' when it wrote nothing within 200 ms (admitted). */
    const as = (address: string) => new Promise<{ said: string; socket: net.Socket }>((resolve) => {
      fake.push(address);
      const socket = net.connect(Number(new URL(g!.url).port), '127.0.0.1');
      socket.on('error', () => {});
      const t = setTimeout(() => resolve({ said: '', socket }), 200);
      socket.once('data', (d) => { clearTimeout(t); resolve({ said: d.toString('latin1'), socket }); });
    });
    const opened: { said: string; socket: net.Socket }[] = [];
    for (const a of ['2001:db8:1:2::a', '2001:DB8:1:2:ffff:0:0:c', '2001:db8:1:2:3::1', '2001:db8:1:3::1', '::ffff:192.0.2.7', '192.0.2.7', '::ffff:192.0.2.7']) opened.push(await as(a));
    const saidOf = (i: number) => /"message":"([^"]*)"/.exec(opened[i].said)?.[1] ?? '';
    expect(opened.map((_, i) => saidOf(i))).toEqual([
      '', '', 'this address\'s /64 network has 2 connections open (maxConnectionsPerAddress 2); retry later',
      '', '', '', 'this address has 2 connections open (maxConnectionsPerAddress 2); retry later',
    ]);
    expect((await metricsAt(`${g.url}/metrics`)).get('gateway_connections_rejected_total{limit="per_address"}')).toBe(2);
    for (const o of opened) o.socket.destroy();
  });
});

describe('a connection refused by a cap', () => {
  test('closed by its client before its second is up: its timer is cleared, and holds the socket no more', async () => {
    g = await start({ maxConnectionsPerAddress: 1 });
    const held = net.connect(Number(new URL(g.url).port), '127.0.0.1');
    await expect.poll(() => g!.gw.stats().connections).toBe(1);
    // (the timers the gateway's connection caps set: setTimeout watched by hand for the next connection)
    const timers: unknown[] = [];
    const setTimer = globalThis.setTimeout;
    globalThis.setTimeout = ((fn: () => void, ms?: number, ...rest: unknown[]) => {
      const t = setTimer(fn, ms, ...rest);
      if (ms === 1000 && new Error().stack!.includes('connections.mjs')) timers.push(t);
      return t;
    }) as typeof setTimeout;
    let rejected: string;
    try {
      rejected = await raw(g.url, 'GET /metrics HTTP/1.1\r\nhost: x\r\n\r\n', false);
    } finally {
      globalThis.setTimeout = setTimer;
    }
    expect(rejected).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    await sleep(50); // (well within the second)
    expect(timers.map((t) => (t as unknown as { _destroyed: boolean })._destroyed)).toEqual([true]);
    held.destroy();
  });
});

describe('a request nested deep', () => {
  test('past 512 levels, a 400 in the API\'s shape and the upstream not called, where deeper than JavaScript\'s stack was the gateway\'s 500 (its stack trace logged); 512 levels pass, brackets in strings not counted', async () => {
    g = await start();
    g.up.scripts.set('m', { pieces: [b(chunk('vite') + DONE)] });
    // (the outermost object is level 1; strings with brackets and escaped quotes in them at each level)
    const nested = (levels: number) => `{"model":"m","stream":true,"messages":[{"role":"user","content":"[{\\"["}],"x":${'["{[\\\\",'.repeat(levels - 1)}0${']'.repeat(levels - 1)}}`;
    expect(JSON.parse(nested(3)).x).toEqual(['{[\\', ['{[\\', 0]]);
    const send = (body: string, path = '/v1/chat/completions') => new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${g!.url}${path}`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        let d = '';
        res.setEncoding('utf8');
        res.on('data', (x: string) => { d += x; });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: d }));
      });
      req.on('error', reject);
      req.end(body);
    });
    const refused = { status: 400, body: JSON.stringify({ error: { message: 'the request body nests deeper than 512 levels', type: 'invalid_request_error', code: 'ERR_BAD_REQUEST' } }) };
    expect(await send(nested(513))).toEqual(refused);
    expect(await send(nested(100_000))).toEqual(refused);
    expect(await send(nested(513), '/v1/messages')).toEqual({ status: 400, body: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'the request body nests deeper than 512 levels' } }) });
    expect(g.up.received).toEqual([]);
    expect(await send(nested(512))).toEqual({ status: 200, body: chunk('vite') + DONE });
    expect(JSON.stringify((g.up.received[0].body as { x: unknown }).x)).toBe(JSON.stringify(JSON.parse(nested(512)).x));
    expect(g.log).toEqual([]);
    expect((await metricsAt(`${g.url}/metrics`)).get('gateway_errors_total')).toBe(0);
  });
});

describe('an upstream\'s whole answer nested deeper than JavaScript\'s stack', () => {
  test('the upstream\'s bad event: the client\'s error event (a 502 for a whole answer), never a completion; the process and its other streams go on', async () => {
    // (a JSON body in place of a stream, whose tool call input nests 100,000 levels: the relay's
    // flush threw a RangeError from an upstream 'end' listener, an uncaught exception that ended the
    // process; the library now refuses it past 512 levels, ERR_BAD_EVENT at the bracket that passes
    // them, and the gateway's own containment of an unexpected exception stays, tested below)
    g = await start({}, 'anthropic');
    const input = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);
    const head = '{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":';
    const whole = `${head}${input}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":2}}`;
    g.up.scripts.set('deep', { contentType: 'application/json', pieces: [b(whole)] });
    const quick = `event: message_start\ndata: {"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n`
      + 'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}\n\n'
      + 'event: message_stop\ndata: {"type":"message_stop"}\n\n';
    g.up.scripts.set('quick', { pieces: [b(quick)] });
    const ask = (path: string, stream: boolean) => post(g!.url, { model: 'deep', stream, max_tokens: 64, messages: [{ role: 'user', content: 'Bonjour' }] }, path);
    // (the bracket that opens depth 513: three are open before the input's)
    const at = head.length + 5 * (512 - 3);
    const said = `The anthropic response, a whole answer in a JSON body, is nested deeper than 512 levels (at byte offset ${at})`;
    const error = { message: said, type: 'upstream_stream_error', code: 'ERR_BAD_EVENT', offset: at };
    const toOpenAi = await ask('/v1/chat/completions', true);
    expect([toOpenAi.status, toOpenAi.body.toString()]).toEqual([200, `data: ${JSON.stringify({ error })}\n\n`]);
    const toAnthropic = await ask('/v1/messages', true);
    expect([toAnthropic.status, toAnthropic.body.toString()]).toEqual([200, `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message: said } })}\n\n`]);
    const whole502 = await ask('/v1/chat/completions', false);
    expect([whole502.status, JSON.parse(whole502.body.toString())]).toEqual([502, { error }]);
    // (the gateway goes on)
    expect((await post(g.url, { model: 'quick', stream: true, max_tokens: 64, messages: [{ role: 'user', content: 'Bonjour' }] }, '/v1/messages')).body.toString()).toBe(quick);
    await nothingLeft(g);
    const m = await metricsAt(`${g.url}/metrics`);
    expect([m.get('gateway_errors_total'), m.get('llm_streams_total{status="failed"}'), m.get('llm_streams_total{status="done"}')]).toEqual([0, 3, 1]);
  });

  test('what the library throws that is not a stream\'s error is the gateway\'s: the client\'s error event (a 500 for a whole answer), never a completion, the detail in the log', async () => {
    g = await start({}, 'anthropic');
    const quick = `event: message_start\ndata: {"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n`
      + 'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}\n\n'
      + 'event: message_stop\ndata: {"type":"message_stop"}\n\n';
    g.up.scripts.set('quick', { pieces: [b(quick)] });
    const ask = (path: string, stream: boolean) => post(g!.url, { model: 'quick', stream, max_tokens: 64, messages: [{ role: 'user', content: 'Bonjour' }] }, path);
    const message = (r: { headers: Record<string, unknown> }) => `gateway error (request id ${String(r.headers['x-request-id'])}; the gateway's log has the detail)`;
    const relayPush = PackageRelay.prototype.push;
    const streamPush = PackageStream.prototype.push;
    const boom = () => { throw new RangeError('Maximum call stack size exceeded'); };
    PackageRelay.prototype.push = boom;
    PackageStream.prototype.push = boom;
    let toOpenAi, toAnthropic, whole500;
    try {
      toOpenAi = await ask('/v1/chat/completions', true);
      toAnthropic = await ask('/v1/messages', true);
      whole500 = await ask('/v1/chat/completions', false);
    } finally {
      PackageRelay.prototype.push = relayPush;
      PackageStream.prototype.push = streamPush;
    }
    expect([toOpenAi.status, toOpenAi.body.toString()]).toEqual([200, `data: ${JSON.stringify({ error: { message: message(toOpenAi), type: 'server_error', code: 'ERR_GATEWAY' } })}\n\n`]);
    expect([toAnthropic.status, toAnthropic.body.toString()]).toEqual([200, `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message: message(toAnthropic) } })}\n\n`]);
    expect([whole500.status, JSON.parse(whole500.body.toString())]).toEqual([500, { error: { message: message(whole500), type: 'gateway_error', code: 'ERR_GATEWAY' } }]);
    for (const r of [toOpenAi, toAnthropic, whole500]) {
      expect(g.log.some((l) => l.startsWith(`gateway: request ${String(r.headers['x-request-id'])}: `) && l.includes('RangeError: Maximum call stack size exceeded'))).toBe(true);
    }
    expect((await ask('/v1/messages', true)).body.toString()).toBe(quick);
    await nothingLeft(g);
    const m = await metricsAt(`${g.url}/metrics`);
    expect([m.get('gateway_errors_total'), m.get('llm_streams_total{status="failed"}'), m.get('llm_streams_total{status="done"}')]).toEqual([3, 3, 1]);
  });
});

describe('finding 4, through the gateway: ambiguous framing is a 502, not a truncated 200', () => {
  test('a duplicate Content-Length with the body cut short', async () => {
    g = await start();
    g.up.scripts.set('m', { write: (res: ServerResponse) => { res.socket!.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nContent-Length: 40\r\nContent-Length: 40\r\n\r\n{"id":"x","choices":['); } });
    const r = await post(g.url, chat('m', false));
    const id = r.headers['x-request-id'];
    expect([r.status, JSON.parse(r.body.toString())]).toEqual([502, { error: {
      message: `the upstream's answer broke HTTP/1.1 (request id ${id}; the gateway's log has the detail)`, type: 'upstream_error', code: 'ERR_UPSTREAM_PROTOCOL' } }]);
    expect(g.log).toEqual([`gateway: request ${id}: 502: the upstream's response head is malformed: a duplicate Content-Length`]);
  });
});

describe('a streamed answer\'s kept sources are bounded by maxResponseBytes', () => {
  test('the sources a relay to OpenAI\'s clients keeps until the completion (Anthropic\'s citations) past maxResponseBytes: the stream ends with its error event at that citation, counted as the response_bytes limit', async () => {
    g = await start({ maxResponseBytes: 300 }, 'anthropic');
    const sse = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
    // ten blocks, each citing an address of its own: 82 bytes kept for each (its url and title), 328 after the fourth
    let body = sse({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude', stop_reason: null, stop_sequence: null, usage: { input_tokens: 9, output_tokens: 1 } } });
    let fourth = 0;
    for (let i = 0; i < 10; i++) {
      body += sse({ type: 'content_block_start', index: i, content_block: { type: 'text', text: '', citations: [] } });
      const cite = sse({ type: 'content_block_delta', index: i, delta: { type: 'citations_delta', citation: { type: 'web_search_result_location', cited_text: 'x', url: `https://example.org/${i}/${'p'.repeat(40)}`, title: 't'.repeat(20), encrypted_index: 'E' } } });
      if (i === 3) fourth = Buffer.byteLength(body) + cite.indexOf('data: ') + 'data: '.length;
      body += cite + sse({ type: 'content_block_delta', index: i, delta: { type: 'text_delta', text: `s${i}. ` } }) + sse({ type: 'content_block_stop', index: i });
    }
    body += sse({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 30 } }) + sse({ type: 'message_stop' });
    g.up.scripts.set('m', { pieces: [b(body)] });
    const r = await post(g.url, chat('m'));
    const relay = new SseRelay({ from: 'anthropic', model: 'm' });
    const before = Buffer.from(relay.push(b(body.slice(0, body.indexOf('event: content_block_delta', fourth - 200))))).toString();
    relay.dispose();
    const message = `The sources cited (their addresses and titles, kept until the completion) in the event at byte offset ${fourth} would pass maxReasoningBytes (300 bytes, 246 kept); nothing past the limit was kept`;
    expect([r.status, normalizeIds(r.body.toString())]).toEqual([200,
      normalizeIds(before) + `data: ${JSON.stringify({ error: { message, type: 'upstream_stream_error', code: 'ERR_REASONING_TOO_LONG', offset: fourth } })}\n\n`]);
    await nothingLeft(g);
    const m = await metricsAt(`${g.url}/metrics`);
    expect([m.get('llm_limit_errors_total{limit="response_bytes"}'), m.get('llm_streams_total{status="limit"}')]).toEqual([1, 1]);
  });
});

describe('finding 7: what leaves the gateway', () => {
  test('a 500 says nothing of the exception; the log has it under the request id', async () => {
    g = await start();
    new (await import('prom-client')).Gauge({ name: 'broken', help: 'x', registers: [g.gw.registry!], collect() { throw new Error('secret=hunter2 at /srv/x.js'); } });
    const r = await fetch(`${g.url}/metrics`);
    const id = r.headers.get('x-request-id');
    expect([r.status, await r.json()]).toEqual([500, { error: { message: `gateway error (request id ${id}; the gateway's log has the detail)`, type: 'gateway_error', code: 'ERR_GATEWAY' } }]);
    expect(g.log.length).toBe(1);
    expect(g.log[0].startsWith(`gateway: request ${id}: 500: Error: secret=hunter2 at /srv/x.js\n`)).toBe(true);
  });

  test('an upstream error body that is not JSON (a traceback with a password) is not passed on: its status alone', async () => {
    g = await start();
    g.up.scripts.set('m', { write: (res: ServerResponse) => { res.writeHead(500, { 'content-type': 'text/html' }).end('<pre>Traceback: connect("postgres://admin:hunter2@db")</pre>'); } });
    const r = await post(g.url, chat('m'));
    expect([r.status, r.headers['content-type'], r.body.toString()]).toEqual([500, 'application/json', '{"error":{"message":"upstream answered HTTP 500","type":"upstream_error","code":null}}']);
  });
});

describe('the upstream\'s key in the upstream\'s words', () => {
  test('an upstream that says the key it was sent in its error (an HTTP error body, an error event, a JSON error body for a stream, a whole answer\'s stream error, an error passed through with a 200): the client reads [redacted] in its place', async () => {
    const KEY = 'sk-test-0123456789abcdef';
    g = await start({ upstreamKey: KEY });
    const said = `Incorrect API key provided: ${KEY}. You can find your API key at https://example.com/keys.`;
    g.up.scripts.set('status', { status: 401, contentType: 'application/json', pieces: [b(JSON.stringify({ error: { message: said, type: 'invalid_request_error', code: 'invalid_api_key' } }))] });
    const event = `data: ${JSON.stringify({ error: { message: said, type: 'invalid_request_error', code: 'invalid_api_key' } })}\n\n`;
    g.up.scripts.set('event', { pieces: [b(chunk('Bonjour') + event)] });
    g.up.scripts.set('body', { contentType: 'application/json', pieces: [b(JSON.stringify({ error: { message: said, type: 'invalid_request_error', code: 'invalid_api_key' } }))] });
    const redacted = said.replace(KEY, '[redacted]');
    const r1 = await post(g.url, chat('status'));
    expect([r1.status, JSON.parse(r1.body.toString())]).toEqual([401, { error: { message: redacted, type: 'invalid_request_error', code: 'invalid_api_key' } }]);
    const r2 = await post(g.url, { ...chat('status'), max_tokens: 9 }, '/v1/messages');
    expect([r2.status, JSON.parse(r2.body.toString())]).toEqual([401, { type: 'error', error: { type: 'authentication_error', message: redacted } }]);
    // (streamed: the relay's error event, as it writes it for the upstream's words with the key taken out)
    const r3 = await post(g.url, chat('event'));
    expect(r3.body.toString()).toBe(relayed(chunk('Bonjour') + event.replace(KEY, '[redacted]')));
    expect(r3.body.toString()).toContain('[redacted]');
    const r4 = await post(g.url, chat('body'));
    expect(r4.body.toString()).toBe(`data: ${JSON.stringify({ error: { message: redacted, type: 'upstream_error', code: 'ERR_PROVIDER', offset: 0, provider_code: 'invalid_api_key' } })}\n\n`);
    const r5 = await post(g.url, { ...chat('event', false), max_tokens: 9 }, '/v1/messages');
    expect([r5.status, JSON.parse(r5.body.toString())]).toEqual([502, { type: 'error', error: { type: 'authentication_error', message: redacted } }]);
    // (a whole answer in the client's own API, passed through: an error answered with a 200)
    const r6 = await post(g.url, chat('body', false));
    expect([r6.status, JSON.parse(r6.body.toString())]).toEqual([200, { error: { message: redacted, type: 'invalid_request_error', code: 'invalid_api_key' } }]);
    for (const r of [r1, r2, r3, r4, r5, r6]) expect(r.body.toString()).not.toContain(KEY);
    expect(g.up.received.map((x) => x.headers.authorization)).toEqual(Array(6).fill(`Bearer ${KEY}`));
  });
});

describe('finding 8: upstream schemes, content types, upstreamTimeout', () => {
  test('only http: and https: upstreams, no credentials in the URL, a warning for http: beyond loopback; upstreamTimeout 0 refused', () => {
    expect(() => createGateway({ upstream: 'ftp://127.0.0.1/' })).toThrow(new TypeError('createGateway: the upstream must be an http: or https: URL, not ftp:'));
    expect(() => createGateway({ upstream: 'file:///etc/passwd' })).toThrow(new TypeError('createGateway: the upstream must be an http: or https: URL, not file:'));
    expect(() => createGateway({ upstream: 'http://u:p@127.0.0.1/' })).toThrow(new TypeError('createGateway: put the upstream\'s key in upstreamKey, not in its URL'));
    for (const k of ['upstreamTimeout', 'bodyTimeout', 'clientTimeout', 'maxDuration']) {
      expect(() => createGateway({ upstream: 'http://127.0.0.1:9', [k]: 0 })).toThrow(new TypeError(`createGateway: ${k} must be a positive number of milliseconds, at most 2147483647`));
    }
    const log: string[] = [];
    const gw = createGateway({ upstream: 'http://10.1.2.3:8080/v1', log: (l) => log.push(l) });
    void gw.close();
    const quiet = createGateway({ upstream: 'http://localhost:8080', log: (l) => log.push(l) });
    void quiet.close();
    expect(log).toEqual(['gateway: warning: the upstream http://10.1.2.3:8080 is plain http beyond loopback: every prompt, answer and key crosses the network unencrypted']);
  });

  test('the upstream\'s content type does not pass: JSON is application/json, streams text/event-stream, all with nosniff', async () => {
    g = await start();
    g.up.scripts.set('html', { contentType: 'text/html', pieces: [b('{"id":"x","object":"chat.completion","choices":[]}')] });
    g.up.scripts.set('sse', { pieces: [b(DONE)] });
    const whole = await post(g.url, chat('html', false));
    expect([whole.status, whole.headers['content-type'], whole.headers['x-content-type-options']]).toEqual([200, 'application/json', 'nosniff']);
    const sse = await post(g.url, chat('sse'));
    expect([sse.headers['content-type'], sse.headers['x-content-type-options']]).toEqual(['text/event-stream; charset=utf-8', 'nosniff']);
    const missing = await post(g.url, chat('none'));
    expect([missing.status, missing.headers['x-content-type-options']]).toEqual([404, 'nosniff']);
  });
});
