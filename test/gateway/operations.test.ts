// The gateway as an operator runs it: what each option's 0 means (a refusal at start that names
// the option, or none: no cap, no keep-alive, no write buffer), its drain on close() and on a
// signal, and an upstream's error body however it arrives.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, test } from 'vitest';
import { coreMemoryLimit } from 'seam-stream';
import { createGateway } from '../../examples/gateway/server.mjs';
import { chat, closeGateway, metricsAt, nothingLeft, post, startGateway, type Running } from './support.js';

const enc = new TextEncoder();
const b = (s: string) => enc.encode(s);
const chunk = (content: string) => `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]}\n\n`;
const DONE = 'data: [DONE]\n\n';
const server = join(__dirname, '..', '..', 'examples', 'gateway', 'server.mjs');

let g: Running | undefined;
afterEach(async () => {
  await closeGateway(g);
  g = undefined;
});

describe('an option set to 0', () => {
  test('a limit whose 0 would refuse every request (or fail each) is refused at start, naming it; the core\'s limit is as it was', () => {
    const refusal = (option: Record<string, unknown>) => {
      try {
        void createGateway({ upstream: 'http://127.0.0.1:9', ...option }).close();
        return 'accepted';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect([{ maxStreams: 0 }, { maxPendingBytes: 0 }, { maxEventBytes: 0 }, { maxRequestBytes: 0 }, { maxResponseBytes: 0 }, { maxStreams: 2.5 },
      { maxEventBytes: 1024 ** 3 }, { highWaterMark: -1 }, { maxConnections: 0.5 }, { keepalive: Infinity }].map(refusal)).toEqual([
      'createGateway: maxStreams must be a positive integer',
      'createGateway: maxPendingBytes must be a positive integer',
      'createGateway: maxEventBytes must be an integer from 1 to 536870912 (512 MiB)',
      'createGateway: maxRequestBytes must be a positive integer',
      'createGateway: maxResponseBytes must be a positive integer',
      'createGateway: maxStreams must be a positive integer',
      'createGateway: maxEventBytes must be an integer from 1 to 536870912 (512 MiB)',
      'createGateway: highWaterMark must be a non-negative integer',
      'createGateway: maxConnections must be a non-negative integer (0: no cap)',
      'createGateway: keepalive must be a non-negative number of seconds (0: never)',
    ]);
    expect(coreMemoryLimit()).toBeUndefined();
    // a timeout past what Node's timers take (they fire after 1 ms there: every upstream request failed at once)
    expect([{ upstreamTimeout: 2 ** 31 }, { bodyTimeout: 1e12 }, { clientTimeout: Infinity }, { maxDuration: 2 ** 31 }, { drainTimeout: 2 ** 31 }, { drainTimeout: -1 }].map(refusal)).toEqual([
      'createGateway: upstreamTimeout must be a positive number of milliseconds, at most 2147483647',
      'createGateway: bodyTimeout must be a positive number of milliseconds, at most 2147483647',
      'createGateway: clientTimeout must be a positive number of milliseconds, at most 2147483647',
      'createGateway: maxDuration must be a positive number of milliseconds, at most 2147483647',
      'createGateway: drainTimeout must be a non-negative number of milliseconds, at most 2147483647 (0: no drain)',
      'createGateway: drainTimeout must be a non-negative number of milliseconds, at most 2147483647 (0: no drain)',
    ]);
    expect([{ upstreamTimeout: 2 ** 31 - 1 }, { drainTimeout: 0 }].map(refusal)).toEqual(['accepted', 'accepted']);
    // where 0 means none, it is taken
    expect([{ maxConnections: 0 }, { maxConnectionsPerAddress: 0 }, { keepalive: 0 }, { highWaterMark: 0 }].map(refusal)).toEqual(['accepted', 'accepted', 'accepted', 'accepted']);
    expect(coreMemoryLimit()).toBeUndefined();
  });

  test('an option of the wrong type is a TypeError at createGateway, naming the option (a switch is not read as its truthiness)', () => {
    const refusal = (option: unknown, whole = false) => {
      try {
        void createGateway((whole ? option : { upstream: 'http://127.0.0.1:9', ...(option as object) }) as never).close();
        return 'accepted';
      } catch (e) {
        return `${(e as Error).constructor.name}: ${(e as Error).message}`;
      }
    };
    expect([{ metrics: 'false' }, { metrics: 0 }, { allowNoKeys: 'false' }, { allowNoKeys: 1 }, { log: 'stderr' }, { log: null }, { metricsHost: 9 }, { metricsHost: '' },
      { upstream: 'not a url' }, { upstream: '127.0.0.1:8080' }].map((o) => refusal(o))).toEqual([
      'TypeError: createGateway: metrics must be true or false',
      'TypeError: createGateway: metrics must be true or false',
      'TypeError: createGateway: allowNoKeys must be true or false',
      'TypeError: createGateway: allowNoKeys must be true or false',
      'TypeError: createGateway: log must be a function of one line',
      'TypeError: createGateway: log must be a function of one line',
      'TypeError: createGateway: metricsHost must be a host name or address',
      'TypeError: createGateway: metricsHost must be a host name or address',
      'TypeError: createGateway: upstream must be an absolute http: or https: URL',
      'TypeError: createGateway: upstream must be an absolute http: or https: URL',
    ]);
    expect([null, 'http://127.0.0.1:9', [['upstream', 'http://127.0.0.1:9']]].map((o) => refusal(o, true))).toEqual(Array(3).fill('TypeError: createGateway: its options must be an object'));
    // (unknown names are refused as they were; undefined is the default, as for every option)
    expect(refusal({ metric: false })).toBe('TypeError: createGateway: unknown option metric');
    expect([{ metrics: false }, { allowNoKeys: true }, { log: () => {} }, { metricsHost: '::1' }, { metrics: undefined, allowNoKeys: undefined, log: undefined, metricsHost: undefined }]
      .map((o) => refusal(o))).toEqual(Array(5).fill('accepted'));
    expect(coreMemoryLimit()).toBeUndefined();
  });

  test('highWaterMark 0: no write buffer, the upstream read pauses after each write, and the answer is whole', async () => {
    g = await startGateway({ highWaterMark: 0, maxConnections: 0, maxConnectionsPerAddress: 0, keepalive: 0 });
    const events = Array.from({ length: 50 }, (_, i) => chunk(`mot ${i} `)).join('');
    g.up.scripts.set('m', { pieces: [b(events), b(DONE)] });
    const r = await post(g.url, chat('m'));
    expect([r.status, r.body.toString()]).toEqual([200, events + DONE]);
    await nothingLeft(g);
  });

  test('the command: --max-streams 0 exits 2 with the reason, naming the option as it was given', async () => {
    const child = spawn(process.execPath, [server, '--upstream', 'http://127.0.0.1:9', '--max-streams', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
    const kill = setTimeout(() => child.kill(), 10_000); // (a gateway that took it listens)
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    clearTimeout(kill);
    expect([code, err]).toEqual([2, '--max-streams: maxStreams must be a positive integer\n']);
  });
});

/** A chunked body's payload (its chunks joined), up to its last chunk. */
function dechunk(body: string): string {
  let out = '';
  for (let at = 0; ;) {
    const eol = body.indexOf('\r\n', at);
    const size = parseInt(body.slice(at, eol), 16);
    if (size === 0) return out;
    out += body.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

/** Resolves once `promise` has settled, with how long it took from now. */
const timed = async (promise: Promise<unknown>) => {
  const t0 = Date.now();
  await promise;
  return Date.now() - t0;
};

describe('close(): the gateway drains', () => {
  test('a stream in flight when close() begins ends whole; a new connection is refused, and a request on a connection it had is a 503 in its API\'s shape', async () => {
    g = await startGateway({ drainTimeout: 5000, metricsPort: 0 });
    const pieces = Array.from({ length: 8 }, (_, i) => b(chunk(`${i} `)));
    g.up.scripts.set('slow', { pieces: [...pieces, b(DONE)], gapMs: 50 });
    g.up.scripts.set('quick', { pieces: [b(chunk('vite') + DONE)] });
    // two requests on one connection, the second sent once the drain began (pipelined: Node
    // answers it after the first)
    const socket = net.connect(Number(new URL(g.url).port), '127.0.0.1');
    let got = '';
    const firstBytes = new Promise<void>((resolve) => socket.on('data', (d) => { got += d.toString('latin1'); if (got.includes('data: ')) resolve(); }));
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const req = (model: string, path: string) => {
      const body = JSON.stringify(chat(model));
      return `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
    };
    socket.write(req('slow', '/v1/chat/completions'));
    await firstBytes;
    const closing = g.gw.close();
    socket.write(req('quick', '/v1/messages'));
    // the listener is closed at once; the metrics' stays open while the streams drain
    await expect(fetch(`${g.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(chat('quick')) })).rejects.toThrow(/fetch failed/);
    expect((await metricsAt(`${g.gw.metricsUrl}/metrics`)).get('llm_streams_open')).toBe(1);
    const took = await timed(closing);
    expect(took).toBeGreaterThan(200); // (it waited for the stream)
    await ended;
    const [first, second] = got.split(/(?=HTTP\/1\.1 )/);
    // the stream whole, chunked: its events and [DONE] in order
    const events = dechunk(first.slice(first.indexOf('\r\n\r\n') + 4));
    expect(events).toBe(pieces.map((p) => new TextDecoder().decode(p)).join('') + DONE);
    expect(first).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    const json = '{"type":"error","error":{"type":"overloaded_error","message":"the gateway is shutting down; retry the request"}}';
    expect(second).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(second).toMatch(/\r\nconnection: close\r\n/i);
    expect(second).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(second.slice(second.indexOf('\r\n\r\n') + 4)).toBe(json);
    expect(g.up.received.map((r) => (r.body as { model: string }).model)).toEqual(['slow']); // the refused request never reached the upstream
    expect(g.up.openSockets).toBe(0);
    expect(g.gw.stats()).toEqual({ streams: 0, pendingBytes: 0, coreBytes: 0, connections: 0 });
  });

  test('while it drains, the key is checked first: a request without it is a 401 (the drain is no news to it), one with it a 503; /metrics on the API\'s listener is served, and its connection closes', async () => {
    g = await startGateway({ drainTimeout: 5000, apiKeys: ['k-drain'] });
    const pieces = Array.from({ length: 20 }, (_, i) => b(chunk(`${i} `)));
    g.up.scripts.set('slow', { pieces: [...pieces, b(DONE)], gapMs: 50 });
    const key = 'authorization: Bearer k-drain\r\n';
    const request = (model: string, headers: string) => {
      const body = JSON.stringify(chat(model));
      return `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n${headers}content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
    };
    // three connections, each with a stream in flight (a connection idle when the drain begins is closed)
    const open = () => {
      const socket = net.connect(Number(new URL(g!.url).port), '127.0.0.1');
      const c = { socket, got: '', ended: new Promise<void>((resolve) => socket.on('close', () => resolve())), relaying: undefined as unknown as Promise<void> };
      c.relaying = new Promise<void>((resolve) => socket.on('data', (d) => { c.got += d.toString('latin1'); if (c.got.includes('data: ')) resolve(); }));
      socket.write(request('slow', key));
      return c;
    };
    const [noKey, keyed, metrics] = [open(), open(), open()];
    await Promise.all([noKey.relaying, keyed.relaying, metrics.relaying]);
    const closing = g.gw.close();
    noKey.socket.write(request('quick', ''));
    await expect.poll(async () => (await g!.gw.registry!.getSingleMetric('gateway_auth_failures_total')!.get()).values[0].value).toBe(1);
    keyed.socket.write(request('quick', key));
    metrics.socket.write(`GET /metrics HTTP/1.1\r\nhost: x\r\n${key}\r\n`);
    await Promise.all([noKey.ended, keyed.ended, metrics.ended, closing]);
    const second = (got: string) => {
      const r = got.split(/(?=HTTP\/1\.1 )/)[1];
      const head = r.slice(0, r.indexOf('\r\n\r\n'));
      return { status: head.split(' ')[1], connection: /\r\nconnection: (.*)\r\n/i.exec(`${head}\r\n`)?.[1], body: r.slice(r.indexOf('\r\n\r\n') + 4) };
    };
    expect(second(noKey.got)).toEqual({ status: '401', connection: 'close',
      body: JSON.stringify({ error: { message: 'Incorrect or missing API key: send it as authorization: Bearer KEY (or x-api-key: KEY)', type: 'invalid_request_error', code: 'invalid_api_key' } }) });
    expect(second(keyed.got)).toEqual({ status: '503', connection: 'close',
      body: JSON.stringify({ error: { message: 'the gateway is shutting down; retry the request', type: 'overloaded', code: 'ERR_SHUTTING_DOWN' } }) });
    const m = second(metrics.got);
    expect([m.status, m.connection]).toEqual(['200', 'close']);
    const lines = dechunk(m.body).split('\n');
    // (its three streams open when it was asked; the request without its key counted)
    expect(lines.filter((l) => /^(llm_streams_open|gateway_auth_failures_total) /.test(l))).toEqual(['llm_streams_open 3', 'gateway_auth_failures_total 1']);
    expect(g.up.received.map((r) => (r.body as { model: string }).model)).toEqual(['slow', 'slow', 'slow']);
  });

  test('a stream that outlives drainTimeout ends with its error event, which the official clients read as an error; its upstream closed', async () => {
    g = await startGateway({ drainTimeout: 300, upstreamFormat: 'openai' });
    g.up.scripts.set('m', { pieces: [b(chunk('Bonjour'))], then: 'hang' });
    const openai = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'k', maxRetries: 0, timeout: 20_000 });
    const anthropic = new Anthropic({ baseURL: g.url, apiKey: 'k', maxRetries: 0, timeout: 20_000 });
    const chatStream = await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Bonjour' }], stream: true });
    const messageStream = await anthropic.messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'Bonjour' }], stream: true });
    const read = async <T>(stream: AsyncIterable<T>, text: (c: T) => string) => {
      let got = '';
      try {
        for await (const c of stream) got += text(c);
      } catch (e) {
        return { got, thrown: e };
      }
      return { got, thrown: undefined };
    };
    const chatRead = read(chatStream, (c) => c.choices[0]?.delta?.content ?? '');
    const messageRead = read(messageStream, (e) => (e.type === 'content_block_delta' && e.delta.type === 'text_delta' ? e.delta.text : ''));
    await expect.poll(() => g!.up.received.length).toBe(2);
    const message = 'the gateway is shutting down: the stream did not end within its drain time (300 ms)';
    const took = await timed(g.gw.close());
    expect(took).toBeGreaterThanOrEqual(280);
    expect(took).toBeLessThan(2000);
    const c = await chatRead;
    expect(c.got).toBe('Bonjour');
    expect(c.thrown).toBeInstanceOf(OpenAI.APIError);
    expect((c.thrown as InstanceType<typeof OpenAI.APIError>).error).toEqual({ message, type: 'overloaded', code: 'ERR_SHUTTING_DOWN' });
    const a = await messageRead;
    expect(a.got).toBe('Bonjour');
    expect(a.thrown).toBeInstanceOf(Anthropic.APIError);
    expect((a.thrown as InstanceType<typeof Anthropic.APIError>).error).toEqual({ type: 'error', error: { type: 'overloaded_error', message } });
    await g.up.noSockets();
    expect(g.gw.stats()).toEqual({ streams: 0, pendingBytes: 0, coreBytes: 0, connections: 0 });
  });

  test('the exact end past the deadline: a streamed answer\'s error event after what it relayed, a whole answer not begun a 503; counted as drain', async () => {
    g = await startGateway({ drainTimeout: 0, metricsPort: 0 });
    g.up.scripts.set('m', { pieces: [b(chunk('Bonjour'))], then: 'hang' });
    g.up.scripts.set('whole', { write: () => {} }); // (no answer at all)
    const streamed = post(g.url, chat('m'));
    const whole = post(g.url, chat('whole', false));
    await expect.poll(() => g!.up.received.length).toBe(2);
    await new Promise((r) => setTimeout(r, 100)); // (the first chunk relayed)
    const metrics = metricsAt(`${g.gw.metricsUrl}/metrics`);
    expect((await metrics).get('gateway_timeouts_total{timeout="drain"}')).toBe(0);
    const closing = g.gw.close();
    const message = 'the gateway is shutting down: the stream did not end within its drain time (0 ms)';
    const r = await streamed;
    expect([r.status, r.body.toString()]).toEqual([200, chunk('Bonjour') + `data: ${JSON.stringify({ error: { message, type: 'overloaded', code: 'ERR_SHUTTING_DOWN' } })}\n\n`]);
    const w = await whole;
    expect([w.status, w.headers.connection, w.body.toString()]).toEqual([503, 'close', JSON.stringify({ error: { message, type: 'overloaded', code: 'ERR_SHUTTING_DOWN' } })]);
    await closing;
    await g.up.noSockets();
    const counted = await g.gw.registry!.getSingleMetric('gateway_timeouts_total')!.get();
    expect(counted.values.find((v) => v.labels.timeout === 'drain')?.value).toBe(2);
  });
});

describe('an upstream\'s error body', () => {
  const error = JSON.stringify({ error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } });
  const relayed = JSON.stringify({ error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } });
  /** `text`'s UTF-8 in `n` pieces (a character's bytes cut apart too). */
  const pieces = (text: string, n: number) => {
    const bytes = b(text);
    return Array.from({ length: n }, (_, i) => bytes.subarray(Math.floor((i * bytes.length) / n), Math.floor(((i + 1) * bytes.length) / n)));
  };

  test('read slowly, each piece within bodyTimeout but the whole past it: the upstream\'s status and message, not a timeout', async () => {
    g = await startGateway({ bodyTimeout: 300, keepalive: 0 });
    g.up.scripts.set('m', { status: 429, contentType: 'application/json', pieces: pieces(error, 8), gapMs: 100 });
    const r = await post(g.url, chat('m'));
    expect([r.status, r.body.toString()]).toEqual([429, relayed]);
    await nothingLeft(g);
  });

  test('whole, on a connection that never ends: answered once the JSON is complete, long before bodyTimeout, and the upstream closed', async () => {
    g = await startGateway({ bodyTimeout: 5000, keepalive: 0 });
    // (braces, brackets and escaped quotes in its strings, a byte a piece)
    const tricky = JSON.stringify({ error: { message: 'Limit {"rpm": [60]} reached \\"} «»', type: 'requests', code: 'rate_limit_exceeded', param: null } });
    g.up.scripts.set('tricky', { status: 429, contentType: 'application/json', pieces: pieces(` ${tricky}`, Buffer.byteLength(tricky) + 1), then: 'hang' });
    const t = await post(g.url, chat('tricky'));
    expect([t.status, t.body.toString()]).toEqual([429, JSON.stringify({ error: { message: 'Limit {"rpm": [60]} reached \\"} «»', type: 'requests', code: 'rate_limit_exceeded' } })]);
    g.up.scripts.set('m', { status: 429, contentType: 'application/json', pieces: pieces(`${error}\n`, 3), then: 'hang' });
    const t0 = Date.now();
    const r = await post(g.url, chat('m'));
    expect([r.status, r.body.toString()]).toEqual([429, relayed]);
    expect(Date.now() - t0).toBeLessThan(2500);
    await nothingLeft(g);
    // to an Anthropic client, in its words
    const a = await post(g.url, { ...chat('m'), max_tokens: 10 }, '/v1/messages');
    expect([a.status, a.body.toString()]).toEqual([429, JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'Rate limit reached for requests' } })]);
    await nothingLeft(g);
  });

  test('the upstream\'s retry-after and retry-after-ms pass to the client, which waits that long before its retry; a value of another form does not pass', async () => {
    g = await startGateway();
    const answer = (headers: Record<string, string>) => (res: import('node:http').ServerResponse) => {
      res.writeHead(429, { 'content-type': 'application/json', 'x-ratelimit-remaining-requests': '0', ...headers }).end(error);
    };
    g.up.scripts.set('m', { write: answer({ 'retry-after': '20', 'retry-after-ms': '20000.5' }) });
    g.up.scripts.set('date', { write: answer({ 'retry-after': 'Mon, 07 Dec 2026 07:00:00 GMT' }) });
    g.up.scripts.set('odd', { write: answer({ 'retry-after': '20; soon', 'retry-after-ms': '-1' }) });
    const r = await post(g.url, chat('m'));
    expect([r.status, r.headers['retry-after'], r.headers['retry-after-ms'], r.headers['x-ratelimit-remaining-requests'], r.body.toString()]).toEqual([429, '20', '20000.5', undefined, relayed]);
    const a = await post(g.url, { ...chat('m'), max_tokens: 10 }, '/v1/messages');
    expect([a.status, a.headers['retry-after'], a.headers['retry-after-ms']]).toEqual([429, '20', '20000.5']);
    expect((await post(g.url, chat('date'))).headers['retry-after']).toBe('Mon, 07 Dec 2026 07:00:00 GMT');
    const odd = await post(g.url, chat('odd'));
    expect([odd.status, odd.headers['retry-after'], odd.headers['retry-after-ms']]).toEqual([429, undefined, undefined]);
    // the official client waits as told (here 1.5 s, where its own first backoff is 0.5 s at most) and tries again
    g.up.scripts.set('soon', { write: answer({ 'retry-after-ms': '1500' }) });
    const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'k', maxRetries: 1, timeout: 20_000 });
    const before = g.up.received.length;
    const t0 = Date.now();
    await expect(client.chat.completions.create({ model: 'soon', messages: [{ role: 'user', content: 'Bonjour' }] })).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    expect(g.up.received.length - before).toBe(2);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1490);
  });

  test('cut short on a connection that never ends: at bodyTimeout the upstream\'s status with the general message, counted as a body timeout', async () => {
    g = await startGateway({ bodyTimeout: 300, keepalive: 0 });
    g.up.scripts.set('m', { status: 503, contentType: 'application/json', pieces: [b(error.slice(0, 20))], then: 'hang' });
    const r = await post(g.url, chat('m'));
    expect([r.status, r.body.toString()]).toEqual([503, '{"error":{"message":"upstream answered HTTP 503","type":"upstream_error","code":null}}']);
    await nothingLeft(g);
    expect((await metricsAt(`${g.url}/metrics`)).get('gateway_timeouts_total{timeout="body"}')).toBe(1);
  });
});

describe('a whole answer in the client\'s own API', () => {
  test('on a connection that never ends after it: passed on once its JSON object is complete, long before bodyTimeout, and the upstream closed', async () => {
    g = await startGateway({ bodyTimeout: 5000, keepalive: 0 });
    const answer = JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'Bonjour {"x": [1]} \\"' }, finish_reason: 'stop' }] });
    const bytes = b(answer);
    g.up.scripts.set('m', { contentType: 'application/json', pieces: [bytes.subarray(0, 50), bytes.subarray(50)], then: 'hang' });
    const t0 = Date.now();
    const r = await post(g.url, chat('m', false));
    expect([r.status, r.body.toString()]).toEqual([200, answer]);
    expect(Date.now() - t0).toBeLessThan(2500);
    await nothingLeft(g);
  });
});
