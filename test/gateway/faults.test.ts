// The gateway's faults, each with its exact output: a truncated upstream, invalid UTF-8 and JSON,
// upstream HTTP errors, a client that leaves (the upstream request is aborted: its socket closes),
// a client that does not read (the upstream read pauses; the gateway's buffers stay bounded), the
// per-event, per-stream-count and total limits, keep-alives, bad requests, and the metrics that
// count all of it.
import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { afterEach, describe, expect, test } from 'vitest';
import { coreMemoryLimit } from 'seam-stream';
import { FIXTURES } from '../helpers/model-fixtures.js';
import { bomCuttings, cut } from '../helpers/random.js';
import { FakeUpstream } from './fake-upstream.js';
import { SseRelay } from '../../bindings/index.js';
import { chat, closeGateway, metricsAt, normalizeIds, nothingLeft, post, readStream, startGateway, type Running } from './support.js';

const enc = new TextEncoder();
const b = (s: string) => enc.encode(s);
/** An OpenAI chunk with this content, as the upstream writes it. */
const chunk = (content: string) => `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]}\n\n`;
const finish = 'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n';
const DONE = 'data: [DONE]\n\n';
const errorEvent = (message: string, code: string, offset: number, type = 'upstream_stream_error') =>
  `data: ${JSON.stringify({ error: { message, type, code, offset } })}\n\n`;
const truncatedAt = (n: number, format = 'openai') => errorEvent(`The upstream ${format} stream ended without its completion: the answer is cut short`, 'ERR_STREAM_TRUNCATED', n);

/** What SseRelay writes to an OpenAI client of an Anthropic upstream's stream, naming the model `m`. */
function relayed(upstream: string): string {
  const r = new SseRelay({ from: 'anthropic', to: 'openai', model: 'm' });
  const out = Buffer.concat([Buffer.from(r.push(b(upstream))), Buffer.from(r.flush())]).toString();
  r.dispose();
  return out;
}

let g: Running | undefined;
afterEach(async () => {
  await closeGateway(g);
  g = undefined;
});

const clientOf = (r: Running) => new OpenAI({ baseURL: `${r.url}/v1`, apiKey: 'k', maxRetries: 0, timeout: 20_000 });

/** The gateway's metrics as name{labels} → value. */
const metrics = (r: Running) => metricsAt(`${r.url}/metrics`);

describe('a truncated upstream: an error event, never [DONE]', () => {
  test.each([['closes mid-event', 'destroy'], ['ends its body mid-event', 'end']] as const)('an OpenAI upstream that %s', async (_, then) => {
    g = await startGateway();
    const sent = chunk('Bonjour, ') + chunk('le monde');
    const half = chunk('et la suite').slice(0, 60);
    g.up.scripts.set('m', { pieces: [b(sent), b(half)], then });
    const r = await post(g.url, chat('m'));
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe(sent + truncatedAt(b(sent + half).length));
    const { text, thrown } = await readStream(clientOf(g), 'm');
    expect(text).toBe('Bonjour, le monde');
    expect(thrown).toBeInstanceOf(OpenAI.APIError);
    expect((thrown as InstanceType<typeof OpenAI.APIError>).code).toBe('ERR_STREAM_TRUNCATED');
    const m = await metrics(g);
    expect(m.get('llm_upstream_truncated_total')).toBe(2);
    expect(m.get('llm_streams_total{status="truncated"}')).toBe(2);
    // (a connection closed mid-body is also the upstream's error; a body that ended is the truncation alone)
    expect(m.get('llm_provider_errors_total{source="body"}')).toBe(then === 'destroy' ? 2 : 0);
    expect(m.get('llm_stream_final_mismatch_total')).toBe(0);
  });

  test('an upstream that sent its finish reason but not [DONE]: truncated, and a final mismatch', async () => {
    g = await startGateway();
    const sent = chunk('Fin') + finish;
    g.up.scripts.set('m', { pieces: [b(sent)] });
    const r = await post(g.url, chat('m'));
    expect(r.body.toString()).toBe(sent + truncatedAt(b(sent).length));
    const m = await metrics(g);
    expect(m.get('llm_stream_final_mismatch_total')).toBe(1);
    expect(m.get('llm_upstream_truncated_total')).toBe(1);
  });

  test('an Anthropic upstream cut before message_stop, through the openai client', async () => {
    g = await startGateway({ upstreamFormat: 'anthropic' });
    const f = FIXTURES.find((x) => x.name === 'anthropic-basic')!;
    const stop = f.body.indexOf('event: message_stop');
    g.up.scripts.set('m', { pieces: [b(f.body.slice(0, stop))], then: 'destroy' });
    const { text, thrown } = await readStream(clientOf(g), 'm');
    expect(text).toBe(f.expected.text);
    expect((thrown as InstanceType<typeof OpenAI.APIError>).code).toBe('ERR_STREAM_TRUNCATED');
    expect((thrown as InstanceType<typeof OpenAI.APIError>).message).toBe('The upstream anthropic stream ended without its completion: the answer is cut short');
  });
});

describe('invalid upstream bytes: an error event naming the offset', () => {
  test('invalid UTF-8', async () => {
    g = await startGateway();
    const good = chunk('déjà ');
    const bad = Buffer.concat([Buffer.from(good), Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"vu'), Buffer.from([0xe9]), Buffer.from('"}}]}\n\n')]);
    const at = Buffer.byteLength(good) + 'data: {"choices":[{"index":0,"delta":{"content":"vu'.length;
    g.up.scripts.set('m', { pieces: [bad.subarray(0, at - 3), bad.subarray(at - 3)] });
    const r = await post(g.url, chat('m'));
    expect(r.body.toString()).toBe(good + errorEvent(`Invalid UTF-8 at byte offset ${at} (bytes from there: E9 22 7D 7D)`, 'ERR_INVALID_UTF8', at));
    const m = await metrics(g);
    expect(m.get('llm_utf8_decode_error_total')).toBe(1);
    expect(m.get('llm_streams_total{status="failed"}')).toBe(1);
  });

  test('invalid JSON', async () => {
    g = await startGateway();
    const good = chunk('un ');
    const bad = 'data: {"choices":[{"index":0,"delta":{"content":"deux"}},]}\n\n';
    const at = b(good).length + bad.indexOf(']}\n');
    g.up.scripts.set('m', { pieces: [b(good + bad)] });
    const r = await post(g.url, chat('m'));
    const body = r.body.toString();
    expect(body.startsWith(good)).toBe(true);
    const e = JSON.parse(body.slice(good.length + 6)) as { error: { message: string; type: string; code: string; offset: number } };
    expect(e.error.code).toBe('ERR_BAD_EVENT');
    expect(e.error.offset).toBe(at);
    expect(e.error.message).toMatch(new RegExp(`^Invalid JSON at byte offset ${at}, in the event whose data begins at byte offset ${b(good).length + 6}: `));
    expect(body).toBe(good + errorEvent(e.error.message, 'ERR_BAD_EVENT', at));
    expect((await metrics(g)).get('llm_bad_event_total')).toBe(1);
  });
});

describe('an error event ends the stream: the client\'s answer ends with it, the upstream is closed', () => {
  // (the gateway went on reading the upstream after the relay's error event, writing nothing more:
  // the client's answer stayed open, its slot and the upstream connection held, until the upstream
  // ended or was silent for bodyTimeout)
  const cases = [
    ['the upstream\'s error event', 'data: {"error":{"message":"boom","type":"server_error"}}\n\n', 'failed',
      (at: number) => `data: ${JSON.stringify({ error: { message: 'boom', type: 'upstream_error', code: 'ERR_PROVIDER', offset: at + 6, provider_code: 'server_error' } })}\n\n`],
    ['invalid JSON', 'data: {not json\n\n', 'failed',
      (at: number) => errorEvent(`Invalid JSON at byte offset ${at + 7}, in the event whose data begins at byte offset ${at + 6}: an unexpected byte`, 'ERR_BAD_EVENT', at + 7)],
    ['an event past maxEventBytes', chunk('x'.repeat(3000)), 'limit',
      (at: number) => errorEvent(`Server-sent event exceeds maxEventBytes (1024 bytes) at the line starting at byte offset ${at}; nothing past the limit was buffered`, 'ERR_EVENT_TOO_LARGE', at)],
  ] as const;

  test.each(cases)('%s, the upstream going on after it', async (_, bad, status, event) => {
    g = await startGateway({ bodyTimeout: 3000, keepalive: 0, maxEventBytes: 1024 });
    let upstreamClosed!: Promise<void>;
    let more = 0; // (chunks the upstream wrote after it: 150 in 3 s, then its completion, unless the gateway closed it first)
    g.up.scripts.set('m', {
      write: (res: ServerResponse) => {
        upstreamClosed = new Promise((r) => res.on('close', () => r()));
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk('hi') + bad);
        const t = setInterval(() => {
          if (res.destroyed) clearInterval(t);
          else if (++more < 150) res.write(chunk('more'));
          else { clearInterval(t); res.end(DONE); }
        }, 20);
      },
    });
    const t0 = Date.now();
    const r = await post(g.url, chat('m'));
    const took = Date.now() - t0;
    expect(r.body.toString()).toBe(chunk('hi') + event(b(chunk('hi')).length));
    await upstreamClosed;
    await nothingLeft(g);
    expect(more).toBeLessThan(100);
    expect(took).toBeLessThan(2000); // (at once; loose for a loaded machine)
    const m = await metrics(g);
    expect([m.get(`llm_streams_total{status="${status}"}`), m.get('gateway_timeouts_total{timeout="body"}'), m.get('llm_upstream_truncated_total')]).toEqual([1, 0, 0]);
  });
});

describe('upstream HTTP errors: the client gets their status and message', () => {
  const cases = [
    ['openai', 429, { error: { message: 'Rate limit reached for gpt-4o', type: 'requests', code: 'rate_limit_exceeded' } },
      { message: 'Rate limit reached for gpt-4o', type: 'requests', code: 'rate_limit_exceeded' }],
    ['anthropic', 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, { message: 'Overloaded', type: 'overloaded_error', code: null }],
    ['ollama', 404, { error: "model 'llama9' not found" }, { message: "model 'llama9' not found", type: 'upstream_error', code: null }],
    ['openai-responses', 400, { error: { message: 'Invalid input', type: 'invalid_request_error', param: 'input', code: null } },
      { message: 'Invalid input', type: 'invalid_request_error', code: null }],
    // a body that is not JSON (a traceback, a proxy's HTML page) is not passed on: its status alone
    ['ddg', 500, 'upstream exploded', { message: 'upstream answered HTTP 500', type: 'upstream_error', code: null }],
  ] as const;

  test.each(cases)('%s %i', async (format, status, body, want) => {
    g = await startGateway({ upstreamFormat: format });
    g.up.scripts.set('m', {
      write: (res: ServerResponse) => {
        res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json' }).end(typeof body === 'string' ? body : JSON.stringify(body));
      },
    });
    const r = await post(g.url, chat('m'));
    expect(r.status).toBe(status);
    expect(r.headers['content-type']).toBe('application/json');
    expect(JSON.parse(r.body.toString())).toEqual({ error: want });
    const e = await clientOf(g).chat.completions.create({ model: 'm', messages: [], stream: true }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.APIError);
    expect((e as InstanceType<typeof OpenAI.APIError>).status).toBe(status);
    expect((e as InstanceType<typeof OpenAI.APIError>).message).toBe(`${status} ${want.message}`);
    expect((await metrics(g)).get('llm_provider_errors_total{source="status"}')).toBe(2);
  });

  test('a redirect (3xx) is no answer: a 502 in the client\'s shape, streamed or whole, its body not passed on; where it pointed in the log', async () => {
    // (a 301 was relayed as an answer: a 200 stream cut short, and a whole answer passed on with
    // the 301 and the upstream's HTML as application/json, counted done)
    g = await startGateway();
    g.up.scripts.set('m', {
      write: (res: ServerResponse) => { res.writeHead(301, { 'content-type': 'text/html', location: 'https://internal.example/v1/chat/completions' }).end('<html>moved: internal.example</html>'); },
    });
    const replies: unknown[] = [];
    for (const stream of [true, false]) {
      for (const path of ['/v1/chat/completions', '/v1/messages']) {
        const r = await post(g.url, { ...chat('m', stream), max_tokens: 5 }, path);
        const id = r.headers['x-request-id'] as string;
        const message = `the upstream answered HTTP 301, a redirect, which the gateway does not follow (request id ${id}; the gateway's log has the detail)`;
        expect([r.status, r.headers['content-type']]).toEqual([502, 'application/json']);
        expect(JSON.parse(r.body.toString())).toEqual(path === '/v1/messages' ? { type: 'error', error: { type: 'api_error', message } }
          : { error: { message, type: 'upstream_error', code: 'ERR_UPSTREAM_REDIRECT' } });
        expect(g.log.at(-1)).toBe(`gateway: request ${id}: 502: the upstream answered HTTP 301, a redirect to "https://internal.example/v1/chat/completions": the gateway follows none (check its upstream URL)`);
        replies.push(r.body.toString());
      }
    }
    expect(replies.join('')).not.toContain('html');
    // (the official client reads it as the error it is)
    const e = await clientOf(g).chat.completions.create({ model: 'm', messages: [] }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.APIError);
    expect((e as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    await g.up.noSockets();
    expect(Object.fromEntries([...await metrics(g)].filter(([k]) => /^llm_(streams_total|provider_errors_total|upstream_truncated_total)/.test(k)))).toEqual({
      'llm_streams_total{status="done"}': 0, 'llm_streams_total{status="truncated"}': 0, 'llm_streams_total{status="failed"}': 5,
      'llm_streams_total{status="limit"}': 0, 'llm_streams_total{status="aborted"}': 0, llm_upstream_truncated_total: 0,
      'llm_provider_errors_total{source="status"}': 5, 'llm_provider_errors_total{source="stream"}': 0,
      'llm_provider_errors_total{source="connect"}': 0, 'llm_provider_errors_total{source="body"}': 0,
    });
  });

  test.each(['openai', 'anthropic'] as const)('a whole answer of the client\'s own API (%s) that is not a JSON object (a web page at the upstream URL): a 502, its body not passed on', async (format) => {
    // (it was passed on as it came, a 200 of HTML as application/json, counted done)
    g = await startGateway({ upstreamFormat: format });
    const page = '<!doctype html><html><body>Sign in to the internal console</body></html>';
    g.up.scripts.set('m', { write: (res: ServerResponse) => { res.writeHead(200, { 'content-type': 'text/html' }).end(page); } });
    g.up.scripts.set('list', { write: (res: ServerResponse) => { res.writeHead(200, { 'content-type': 'application/json' }).end('[1,2]'); } });
    for (const [model, what] of [['m', 'text/html'], ['list', 'application/json']]) {
      const r = await post(g.url, { ...chat(model, false), max_tokens: 5 }, format === 'openai' ? '/v1/chat/completions' : '/v1/messages');
      const id = r.headers['x-request-id'] as string;
      const message = `the upstream's answer is not a JSON object (request id ${id}; the gateway's log has the detail)`;
      expect([r.status, r.headers['content-type'], JSON.parse(r.body.toString())]).toEqual([502, 'application/json', format === 'anthropic'
        ? { type: 'error', error: { type: 'api_error', message } } : { error: { message, type: 'upstream_error', code: 'ERR_BAD_RESPONSE' } }]);
      const bytes = model === 'm' ? page.length : 5;
      expect(g.log.at(-1)).toBe(`gateway: request ${id}: 502: the upstream's answer (HTTP 200, ${what}, ${bytes} bytes) is not a JSON object`);
    }
    expect(Object.fromEntries([...await metrics(g)].filter(([k]) => /^llm_(streams_total\{status="(done|failed)"|bad_event_total)/.test(k)))).toEqual({
      'llm_streams_total{status="done"}': 0, 'llm_streams_total{status="failed"}': 2, llm_bad_event_total: 2,
    });
  });

  test.each(['openai', 'anthropic'] as const)('a whole answer of the client\'s own API (%s) after a BOM: read as a model stream reads one, passed on without it, whatever pieces it comes in (seed printed; its connection held open after it); a BOM cut short, after white space or twice is no JSON object, a 502; an error body after a BOM says its message', async (format) => {
    // (it was refused, a 502 ERR_BAD_RESPONSE, where the edge gateway and seam's ModelStream read it)
    g = await startGateway({ upstreamFormat: format });
    const text = format === 'openai'
      ? '{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"H\u00e9 {\\"}"},"finish_reason":"stop"}]}'
      : '{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"H\u00e9 {\\"}"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}';
    const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
    let pieces: Buffer[] = [];
    let status = 200;
    g.up.scripts.set('m', {
      write: (res: ServerResponse) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        void (async () => {
          for (const p of pieces) {
            res.write(p);
            await new Promise((r) => setImmediate(r));
          }
          // (held open after it: the answer is read to its object's end)
        })();
      },
    });
    const path = format === 'openai' ? '/v1/chat/completions' : '/v1/messages';
    const bytes = Buffer.concat([BOM, Buffer.from(text)]);
    for (const [how, cuts] of bomCuttings(bytes)) {
      pieces = cut(bytes, cuts).map((p) => Buffer.from(p));
      const r = await post(g.url, { ...chat('m', false), max_tokens: 5 }, path);
      expect([r.status, r.headers['content-length'], r.body.toString()], how).toEqual([200, String(Buffer.byteLength(text)), text]);
    }
    if (format === 'openai') {
      pieces = [bytes];
      expect((await clientOf(g).chat.completions.create({ model: 'm', messages: [] })).choices[0].message.content).toBe('H\u00e9 {"}');
    }
    // (a BOM only where a model stream reads one, whole, once, at the body's start; the connection ends after each)
    for (const [what, body] of [['a BOM cut short', Buffer.concat([BOM.subarray(0, 2), Buffer.from(text)])], ['a BOM after white space', Buffer.concat([Buffer.from(' '), BOM, Buffer.from(text)])],
      ['two BOMs', Buffer.concat([BOM, BOM, Buffer.from(text)])]] as const) {
      g.up.scripts.set('bad', { write: (res: ServerResponse) => { res.writeHead(200, { 'content-type': 'application/json' }).end(body); } });
      const r = await post(g.url, { ...chat('bad', false), max_tokens: 5 }, path);
      const message = `the upstream's answer is not a JSON object (request id ${r.headers['x-request-id']}; the gateway's log has the detail)`;
      expect([r.status, JSON.parse(r.body.toString())], what).toEqual([502, format === 'anthropic'
        ? { type: 'error', error: { type: 'api_error', message } } : { error: { message, type: 'upstream_error', code: 'ERR_BAD_RESPONSE' } }]);
    }
    // an error body after a BOM, its connection held open: its message, at once
    status = 429;
    const error = format === 'openai' ? '{"error":{"message":"slow down","type":"rate_limit_error","code":null}}' : '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}';
    pieces = [BOM.subarray(0, 1), Buffer.concat([BOM.subarray(1), Buffer.from(error)])];
    const r = await post(g.url, { ...chat('m', false), max_tokens: 5 }, path);
    expect([r.status, JSON.parse(r.body.toString())]).toEqual([429, format === 'anthropic'
      ? { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } } : { error: { message: 'slow down', type: 'rate_limit_error', code: null } }]);
  });

  test('an upstream that cannot be reached: 502', async () => {
    // port 1 of the loopback: nothing listens there, and no test can take it (the tests listen on
    // ports the system picks, far above it), where a port just closed could be taken by a test
    // file running beside this one before the gateway connects to it
    const port = 1;
    const { createGateway } = await import('../../examples/gateway/server.mjs');
    const log: string[] = [];
    const gw = createGateway({ upstream: `http://127.0.0.1:${port}`, log: (line) => log.push(line) });
    const url = await gw.listen(0);
    const r = await post(url, chat('m'));
    const m = await metricsAt(`${url}/metrics`);
    await gw.close();
    // (no answer: "connect", where an answer that broke off after its head is "body")
    expect(Object.fromEntries([...m].filter(([k]) => /^llm_(streams_total\{status="failed"\}|provider_errors_total|upstream_truncated_total)/.test(k)))).toEqual({
      'llm_streams_total{status="failed"}': 1, llm_upstream_truncated_total: 0, 'llm_provider_errors_total{source="status"}': 0,
      'llm_provider_errors_total{source="stream"}': 0, 'llm_provider_errors_total{source="connect"}': 1, 'llm_provider_errors_total{source="body"}': 0,
    });
    expect(r.status).toBe(502);
    // the answer's message is generic, with the request id; the detail is in the log under it
    const id = r.headers['x-request-id'] as string;
    expect(id).toMatch(/^gw-[0-9a-f]{8}-1$/);
    expect(JSON.parse(r.body.toString())).toEqual({ error: {
      message: `the upstream could not be reached (request id ${id}; the gateway's log has the detail)`, type: 'upstream_error', code: 'ERR_UPSTREAM_UNREACHABLE' } });
    expect(log).toEqual([`gateway: request ${id}: 502: connect ECONNREFUSED 127.0.0.1:${port}`]);
  });

  test('an upstream that accepts the request and never answers: 502 after upstreamTimeout, its socket closed', async () => {
    g = await startGateway({ upstreamTimeout: 150 });
    g.up.scripts.set('m', { write: () => {} }); // headers never come
    const t0 = Date.now();
    const r = await post(g.url, chat('m'));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    expect(r.status).toBe(502);
    expect(JSON.parse(r.body.toString())).toEqual({ error: {
      message: 'the upstream could not be reached: no answer from the upstream within 150 ms', type: 'upstream_error', code: 'ERR_UPSTREAM_UNREACHABLE' } });
    await g.up.noSockets();
    expect((await metrics(g)).get('llm_provider_errors_total{source="connect"}')).toBe(1);
  });

  test('an https upstream whose certificate is not trusted: 502, its reason, no socket left', async () => {
    const up = new FakeUpstream(true);
    await up.listen();
    const { createGateway } = await import('../../examples/gateway/server.mjs');
    const log: string[] = [];
    const gw = createGateway({ upstream: up.url, log: (line) => log.push(line) });
    const url = await gw.listen(0);
    try {
      const r = await post(url, chat('m'));
      expect(r.status).toBe(502);
      const id = r.headers['x-request-id'] as string;
      const e = JSON.parse(r.body.toString()) as { error: { message: string; code: string } };
      expect([e.error.code, e.error.message]).toEqual(['ERR_UPSTREAM_UNREACHABLE', `the upstream could not be reached (request id ${id}; the gateway's log has the detail)`]);
      // (Node 24 and later add a hint to the reason: "; if the root CA is installed locally, try running Node.js with --use-system-ca")
      expect(log).toHaveLength(1);
      expect(log[0]).toMatch(new RegExp(`^gateway: request ${id}: 502: self-signed certificate(; .*)?$`));
      expect(up.received).toEqual([]);
      await up.noSockets();
    } finally {
      await gw.close();
      await up.close();
    }
  });
});

/** Opens a stream with a raw client; resolves once its first bytes arrived, with the response. */
function openRaw(url: string, model: string): Promise<{ res: IncomingMessage; first: Buffer; destroy(): void }> {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify(chat(model)));
    const req = request(`${url}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': payload.length } }, (res) => {
      res.once('data', (first: Buffer) => {
        res.pause();
        resolve({ res, first, destroy: () => req.destroy() });
      });
    });
    req.on('error', (e) => { if (!req.destroyed) reject(e); });
    req.end(payload);
  });
}

/** After clients left: the upstream has no socket open, the gateway no stream, and `n` streams count as aborted. */
async function allAborted(r: Running, n: number): Promise<Map<string, number>> {
  await r.up.noSockets();
  await expect.poll(() => r.gw.stats().streams).toBe(0);
  const m = await metrics(r);
  expect(m.get('llm_streams_total{status="aborted"}')).toBe(n);
  return m;
}

describe('a client that leaves: the upstream request is aborted', () => {
  test('mid-stream: the upstream socket closes, the stream counts as aborted', async () => {
    g = await startGateway();
    let upstreamClosed!: Promise<void>;
    g.up.scripts.set('m', {
      write: (res: ServerResponse) => {
        upstreamClosed = new Promise((resolve) => res.on('close', resolve));
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk('premier'));
        // and then nothing: a model thinking for a long time
      },
    });
    const c = await openRaw(g.url, 'm');
    expect(c.first.toString()).toBe(chunk('premier'));
    expect(g.up.openSockets).toBe(1);
    expect(g.gw.stats().streams).toBe(1);
    c.destroy();
    await upstreamClosed;
    const m = await allAborted(g, 1);
    expect(m.get('llm_streams_open')).toBe(0);
  });

  test('before the upstream answered: the pending request is aborted', async () => {
    g = await startGateway();
    let asked!: () => void;
    const wasAsked = new Promise<void>((resolve) => { asked = resolve; });
    g.up.scripts.set('m', { write: () => asked() }); // never answers
    const payload = Buffer.from(JSON.stringify(chat('m')));
    const req = request(`${g.url}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-length': payload.length } });
    req.on('error', () => {});
    req.end(payload);
    await wasAsked;
    expect(g.up.openSockets).toBe(1);
    req.destroy();
    const m = await allAborted(g, 1);
    expect(m.get('llm_provider_errors_total{source="connect"}')).toBe(0);
  });

  test('many clients leaving at once leave no socket behind', async () => {
    g = await startGateway();
    g.up.scripts.set('m', { pieces: Array.from({ length: 1000 }, (_, i) => b(chunk(`${i} `))), gapMs: 2 });
    const clients = await Promise.all(Array.from({ length: 40 }, () => openRaw(g!.url, 'm')));
    expect(g.gw.stats().streams).toBe(40);
    for (const c of clients) c.destroy();
    await allAborted(g, 40);
  });
});

describe('a client that does not read: backpressure on the upstream read', () => {
  test('the gateway holds a bounded number of bytes while the upstream is held back; then every byte arrives', async () => {
    const highWaterMark = 64 * 1024;
    g = await startGateway({ highWaterMark });
    const event = chunk('x'.repeat(4000));
    const piece = b(event.repeat(16)); // 64 KiB a write
    const total = 48 * 1024 * 1024;
    let written = 0;
    g.up.scripts.set('m', {
      write: async (res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        while (written < total && !res.destroyed) {
          written += piece.length;
          if (!res.write(piece)) await new Promise((w) => res.once('drain', w));
        }
        res.end(DONE);
      },
    });
    const c = await openRaw(g.url, 'm');
    // the client reads nothing more: let the buffers on the way fill up
    let last = -1;
    for (let k = 0; k < 60 && written !== last; k++) {
      last = written;
      await new Promise((w) => setTimeout(w, 100));
    }
    expect(written, 'the upstream is held back').toBe(last);
    expect(written, 'the upstream is held back').toBeLessThan(total / 2);
    const held = g.gw.stats().pendingBytes;
    // the client's write buffer (high-water mark plus one relayed read) and the upstream's readable buffer
    expect(held).toBeLessThanOrEqual(highWaterMark + 2 * piece.length + 16 * 1024);
    // now read it all: every event, then [DONE]
    let bytes = c.first.length;
    let tail = '';
    await new Promise<void>((resolve) => {
      c.res.on('data', (d: Buffer) => { bytes += d.length; tail = (tail + d.toString('latin1')).slice(-64); });
      c.res.on('end', resolve);
      c.res.resume();
    });
    expect(bytes).toBe(written + DONE.length);
    expect(tail.endsWith(event.slice(-50) + DONE)).toBe(true);
    const m = await metrics(g);
    expect(m.get('llm_bytes_out_total')).toBe(written + DONE.length);
    expect(m.get('llm_events_out_total')).toBe(written / event.length + 1);
    expect(m.get('llm_stream_pending_bytes_count')).toBe(1);
    expect(m.get('llm_stream_pending_bytes_sum')).toBeLessThanOrEqual(highWaterMark + 2 * piece.length);
  });
});

describe('limits', () => {
  test('an upstream event over maxEventBytes', async () => {
    g = await startGateway({ maxEventBytes: 16 * 1024 });
    const good = chunk('petit ');
    g.up.scripts.set('m', { pieces: [b(good), b(chunk('x'.repeat(32 * 1024)))] });
    const r = await post(g.url, chat('m'));
    const at = b(good).length;
    expect(r.body.toString()).toBe(good + errorEvent(
      `Server-sent event exceeds maxEventBytes (16384 bytes) at the line starting at byte offset ${at}; nothing past the limit was buffered`, 'ERR_EVENT_TOO_LARGE', at));
    const m = await metrics(g);
    expect(m.get('llm_limit_errors_total{limit="event_bytes"}')).toBe(1);
    expect(m.get('llm_streams_total{status="limit"}')).toBe(1);
  });

  test('maxStreams: past it a request is answered 503, and admitted again once a stream ends', async () => {
    g = await startGateway({ maxStreams: 2 });
    g.up.scripts.set('slow', { pieces: [b(chunk('a'))], then: 'hang' });
    g.up.scripts.set('quick', { pieces: [b(chunk('vite') + DONE)] });
    const open = [await openRaw(g.url, 'slow'), await openRaw(g.url, 'slow')];
    const r = await post(g.url, chat('quick'));
    expect(r.status).toBe(503);
    expect(r.headers['retry-after']).toBe('1');
    expect(JSON.parse(r.body.toString())).toEqual({ error: { message: 'the gateway has 2 streams open (maxStreams 2); retry later', type: 'overloaded', code: 'ERR_MAX_STREAMS' } });
    const e = await clientOf(g).chat.completions.create({ model: 'quick', messages: [], stream: true }).catch((x: unknown) => x);
    expect((e as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    open[0].destroy();
    await expect.poll(() => g!.gw.stats().streams).toBe(1);
    expect((await post(g.url, chat('quick'))).body.toString()).toBe(chunk('vite') + DONE);
    open[1].destroy();
    expect((await metrics(g)).get('llm_limit_errors_total{limit="max_streams"}')).toBe(2);
  });

  test('maxPendingBytes in the core: the stream that would pass it stops with an error event, the others go on', async () => {
    g = await startGateway({ maxPendingBytes: 128 * 1024 });
    expect(coreMemoryLimit()).toBe(128 * 1024);
    const bigA = chunk('a'.repeat(60 * 1024));
    const bigB = chunk('b'.repeat(100 * 1024));
    let releaseA!: () => void;
    const aMayEnd = new Promise<void>((resolve) => { releaseA = resolve; });
    g.up.scripts.set('A', {
      write: async (res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk('début '));
        res.write(bigA.slice(0, -10)); // an unfinished event of 60 KiB, held by the gateway
        await aMayEnd;
        res.end(bigA.slice(-10) + DONE);
      },
    });
    const piecesB = [];
    for (let i = 0; i < bigB.length; i += 10 * 1024) piecesB.push(b(bigB.slice(i, i + 10 * 1024)));
    g.up.scripts.set('B', { pieces: piecesB, gapMs: 2 });
    const a = await openRaw(g.url, 'A');
    expect(a.first.toString()).toBe(chunk('début '));
    await expect.poll(() => g!.gw.stats().coreBytes).toBeGreaterThan(60 * 1024);
    const rb = await post(g.url, chat('B'));
    const eb = JSON.parse(rb.body.toString().slice(6)) as { error: { message: string; type: string; code: string } };
    expect(eb.error.code).toBe('ERR_CORE_MEMORY');
    expect(eb.error.type).toBe('overloaded');
    expect(eb.error.message).toMatch(/^the gateway is out of stream memory: The core memory budget \(131072 bytes, setCoreMemoryLimit\)/);
    releaseA();
    let rest = '';
    a.res.setEncoding('utf8');
    await new Promise<void>((resolve) => { a.res.on('data', (s: string) => { rest += s; }); a.res.on('end', resolve); a.res.resume(); });
    expect(a.first.toString() + rest).toBe(chunk('début ') + bigA + DONE);
    const m = await metrics(g);
    expect(m.get('llm_limit_errors_total{limit="core_memory"}')).toBe(1);
    expect(m.get('llm_streams_total{status="limit"}')).toBe(1);
    expect(m.get('llm_streams_total{status="done"}')).toBe(1);
  });

  test('two gateways in one process share the core\'s limit: closing one leaves it for the other, the last to close puts back the one before', async () => {
    const KIB = 1024;
    const first = await startGateway({ maxPendingBytes: 128 * KIB });
    g = await startGateway({ maxPendingBytes: 256 * KIB });
    expect(coreMemoryLimit()).toBe(256 * KIB);
    await first.close();
    expect(coreMemoryLimit()).toBe(256 * KIB); // (it was the one before the first gateway: none)
    await g.close();
    expect(coreMemoryLimit()).toBeUndefined();
    // the larger first, and a gateway closed twice: it lets go once
    const large = await startGateway({ maxPendingBytes: 256 * KIB });
    g = await startGateway({ maxPendingBytes: 128 * KIB });
    const third = await startGateway({ maxPendingBytes: 64 * KIB });
    expect(coreMemoryLimit()).toBe(256 * KIB);
    await large.close();
    await third.gw.close();
    await third.close();
    expect(coreMemoryLimit()).toBe(256 * KIB); // (at least g's, while g is open)
    await g.close();
    g = undefined;
    expect(coreMemoryLimit()).toBeUndefined(); // (it was 256 KiB, large's, after both)
    // a clientTimeout Node's server refuses is the gateway's TypeError, and the limit is as it was
    const { createGateway } = await import('../../examples/gateway/server.mjs');
    expect(() => createGateway({ upstream: 'http://127.0.0.1:9', clientTimeout: 1000.5 })).toThrow(new TypeError('createGateway: clientTimeout must be a whole number of milliseconds'));
    expect(coreMemoryLimit()).toBeUndefined();
    const h = createGateway({ upstream: 'http://127.0.0.1:9', maxPendingBytes: 64 * KIB });
    await h.close();
    expect(coreMemoryLimit()).toBeUndefined();
  });

  test('maxPendingBytes with clients that do not read: a new request is answered 503 while the total is past it', async () => {
    g = await startGateway({ maxPendingBytes: 256 * 1024, highWaterMark: 512 * 1024 });
    const piece = b(chunk('y'.repeat(8000)).repeat(8));
    g.up.scripts.set('flood', {
      write: async (res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (let i = 0; i < 2000 && !res.destroyed; i++) if (!res.write(piece)) await new Promise((w) => res.once('drain', w));
        res.end();
      },
    });
    g.up.scripts.set('quick', { pieces: [b(chunk('vite') + DONE)] });
    const flood = await openRaw(g.url, 'flood');
    await expect.poll(() => g!.gw.stats().pendingBytes, { timeout: 10_000 }).toBeGreaterThanOrEqual(256 * 1024);
    const r = await post(g.url, chat('quick'));
    expect(r.status).toBe(503);
    const e = JSON.parse(r.body.toString()) as { error: { message: string; code: string } };
    expect(e.error.code).toBe('ERR_PENDING_BYTES');
    expect(e.error.message).toMatch(/^the gateway's streams hold \d+ bytes \(maxPendingBytes 262144\); retry later$/);
    flood.destroy();
    await expect.poll(() => g!.gw.stats().streams).toBe(0);
    expect(g.gw.stats().pendingBytes).toBe(0);
    expect((await post(g.url, chat('quick'))).body.toString()).toBe(chunk('vite') + DONE);
    expect((await metrics(g)).get('llm_limit_errors_total{limit="pending_bytes"}')).toBe(1);
  });
});

describe('keep-alives', () => {
  /** Reads a stream with the arrival time of each piece. */
  async function timed(url: string, model: string): Promise<{ body: string; keepalives: number[]; after: number[]; started: number }> {
    const started = performance.now();
    const r = await new Promise<{ pieces: [number, string][] }>((resolve, reject) => {
      const payload = Buffer.from(JSON.stringify(chat(model)));
      const req = request(`${url}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-length': payload.length } }, (res) => {
        const pieces: [number, string][] = [];
        res.setEncoding('utf8');
        res.on('data', (s: string) => pieces.push([performance.now(), s]));
        res.on('end', () => resolve({ pieces }));
      });
      req.on('error', reject);
      req.end(payload);
    });
    const keepalives: number[] = [];
    /** For each keep-alive, the milliseconds since the piece before it arrived. */
    const after: number[] = [];
    let prev = started;
    for (const [t, s] of r.pieces) {
      for (const _ of s.matchAll(/: keep-alive\n\n/g)) {
        keepalives.push(t - started);
        after.push(t - prev);
      }
      prev = t;
    }
    return { body: r.pieces.map(([, s]) => s).join(''), keepalives, after, started };
  }

  test('upstream comments are forwarded, and the gateway writes its own during upstream silence', async () => {
    g = await startGateway({ keepalive: 0.1 });
    const gap = 400;
    g.up.scripts.set('m', { pieces: [b(chunk('un ')), b(': upstream-ping\n\n'), b(chunk('deux')), b(DONE)], gapMs: gap });
    const { body, keepalives, after } = await timed(g.url, 'm');
    expect(body.replace(/: keep-alive\n\n/g, '')).toBe(chunk('un ') + ': upstream-ping\n\n' + chunk('deux') + DONE);
    // three silences of 400 ms: a comment after each 100–125 ms of silence (about 3 in each; at
    // least one however late a loaded machine runs the timers)
    const gaps = body.split(/data: |: upstream-ping\n\n/).slice(1, 4).map((part) => part.split(': keep-alive\n\n').length - 1);
    expect(gaps.length).toBe(3);
    for (const n of gaps) expect(n).toBeGreaterThanOrEqual(1);
    // and none before 100 ms of silence (of the upstream, or since the last keep-alive). Measured
    // where the client reads, so a piece read late shortens the gap after it: 50 ms still tells a
    // keep-alive that waits for silence from one that does not.
    for (const ms of after) expect(ms).toBeGreaterThanOrEqual(50);
    expect((await metrics(g)).get('llm_keepalive_sent_total')).toBe(keepalives.length);
    // the official client reads through them
    const { text, thrown } = await readStream(clientOf(g), 'm');
    expect(thrown).toBeUndefined();
    expect(text).toBe('un deux');
  });

  test('an upstream whose pings the relay writes nothing of (Anthropic\'s, to an OpenAI client): the client\'s silence is what counts, and it gets the gateway\'s comments', async () => {
    // (the upstream's pings kept the gateway's comments back while its client had nothing at all)
    g = await startGateway({ upstreamFormat: 'anthropic', keepalive: 0.1 });
    const start = `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'm', stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } })}\n\n`;
    const text = 'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
      + 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Bonjour"}}\n\n'
      + 'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
      + 'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}\n\n'
      + 'event: message_stop\ndata: {"type":"message_stop"}\n\n';
    const ping = 'event: ping\ndata: {"type":"ping"}\n\n';
    g.up.scripts.set('m', { pieces: [b(start), ...Array.from({ length: 16 }, () => b(ping)), b(text)], gapMs: 40 });
    const { body, keepalives } = await timed(g.url, 'm');
    // (640 ms of pings: a comment after each 100–125 ms the client had nothing; at least two however late a loaded machine runs the timers)
    expect(keepalives.length).toBeGreaterThanOrEqual(2);
    expect(normalizeIds(body.replace(/: keep-alive\n\n/g, ''))).toBe(normalizeIds(relayed(start + ping.repeat(16) + text)));
    expect((await metrics(g)).get('llm_keepalive_sent_total')).toBe(keepalives.length);
  });

  test('none while the upstream writes more often than the period, and none when keepalive is 0', async () => {
    g = await startGateway({ keepalive: 0.5 });
    g.up.scripts.set('m', { pieces: Array.from({ length: 20 }, (_, i) => b(chunk(`${i}`))).concat([b(DONE)]), gapMs: 20 });
    expect((await timed(g.url, 'm')).keepalives).toEqual([]);
    await g.close();
    g = await startGateway({ keepalive: 0 });
    g.up.scripts.set('m', { pieces: [b(chunk('un')), b(DONE)], gapMs: 300 });
    expect((await timed(g.url, 'm')).body).toBe(chunk('un') + DONE);
  });
});

describe('requests', () => {
  test('routes, methods, bodies', async () => {
    g = await startGateway({ maxRequestBytes: 1000 });
    const raw = (method: string, path: string, body?: string) => fetch(`${g!.url}${path}`, { method, body }).then(async (r) => [r.status, await r.json()] as const);
    expect(await raw('GET', '/v1/models')).toEqual([404, { error: { message: 'no route GET /v1/models', type: 'invalid_request_error', code: 'not_found' } }]);
    expect(await raw('GET', '/v1/chat/completions')).toEqual([405, { error: { message: 'use POST', type: 'invalid_request_error', code: 'method_not_allowed' } }]);
    expect(await raw('POST', '/v1/chat/completions', '{"model":')).toEqual([400, { error: { message: 'the request body must be a JSON object', type: 'invalid_request_error', code: 'ERR_BAD_REQUEST' } }]);
    expect(await raw('POST', '/v1/chat/completions', JSON.stringify({ model: 'x'.repeat(2000) }))).toEqual([413, { error: { message: 'the request body is over 1000 bytes', type: 'invalid_request_error', code: 'ERR_REQUEST_TOO_LARGE' } }]);
    expect(g.up.received).toEqual([]);
    expect((await metrics(g)).get('llm_limit_errors_total{limit="request_bytes"}')).toBe(1);
  });
});

describe('metrics off', () => {
  test('the same answers and faults, no /metrics, and every metric the gateway counts stood in for', async () => {
    g = await startGateway({ metrics: false, maxEventBytes: 4096 });
    g.up.scripts.set('m', { pieces: [b(chunk('Bonjour, ') + chunk('le monde') + DONE)] });
    expect((await post(g.url, chat('m'))).body.toString()).toBe(chunk('Bonjour, ') + chunk('le monde') + DONE);
    g.up.scripts.set('cut', { pieces: [b(chunk('à moitié'))], then: 'end' });
    expect((await post(g.url, chat('cut'))).body.toString()).toBe(chunk('à moitié') + truncatedAt(b(chunk('à moitié')).length));
    g.up.scripts.set('big', { pieces: [b(chunk('x'.repeat(5000)))] });
    expect((await post(g.url, chat('big'))).body.toString()).toMatch(/"code":"ERR_EVENT_TOO_LARGE"/);
    const r = await fetch(`${g.url}/metrics`);
    expect(r.status).toBe(404);
    expect(await r.json()).toEqual({ error: { message: 'metrics are off', type: 'invalid_request_error', code: 'not_found' } });
    expect(g.gw.registry).toBe(null);
  });
});

describe('the metrics of a mixed load, exactly', () => {
  test('counts', async () => {
    g = await startGateway();
    const ok = chunk('a') + chunk('b') + finish + DONE;
    const cutShort = chunk('c') + finish;
    g.up.scripts.set('ok', { pieces: [b(ok)] });
    g.up.scripts.set('cut', { pieces: [b(cutShort)], then: 'destroy' });
    g.up.scripts.set('utf8', { pieces: [Buffer.concat([Buffer.from(chunk('d')), Buffer.from([0xff, 10, 10])])] });
    g.up.scripts.set('limited', { write: (res) => { res.writeHead(429, { 'content-type': 'application/json' }).end('{"error":{"message":"slow down"}}'); } });
    const bodies = await Promise.all(['ok', 'cut', 'utf8', 'limited'].map((m) => post(g!.url, chat(m))));
    const m = await metrics(g);
    const streamed = bodies.slice(0, 3).reduce((n, r) => n + r.body.length, 0);
    expect(Object.fromEntries([...m].filter(([k]) => k.startsWith('llm_') && !k.includes('_bucket')))).toEqual({
      llm_utf8_decode_error_total: 1,
      llm_stream_final_mismatch_total: 1,
      llm_streams_open: 0,
      'llm_streams_total{status="done"}': 1,
      'llm_streams_total{status="truncated"}': 1,
      'llm_streams_total{status="failed"}': 2,
      'llm_streams_total{status="limit"}': 0,
      'llm_streams_total{status="aborted"}': 0,
      llm_bytes_in_total: b(ok).length + b(cutShort).length + b(chunk('d')).length + 3,
      llm_bytes_out_total: streamed,
      llm_events_in_total: 4 + 2 + 1, // the bad line is no event
      llm_events_out_total: 4 + 3 + 2, // each ends with [DONE] or its error event
      llm_upstream_truncated_total: 1,
      'llm_limit_errors_total{limit="max_streams"}': 0,
      'llm_limit_errors_total{limit="pending_bytes"}': 0,
      'llm_limit_errors_total{limit="core_memory"}': 0,
      'llm_limit_errors_total{limit="event_bytes"}': 0,
      'llm_limit_errors_total{limit="request_bytes"}': 0,
      'llm_limit_errors_total{limit="response_bytes"}': 0,
      'llm_limit_errors_total{limit="pipelined"}': 0,
      'llm_provider_errors_total{source="status"}': 1,
      'llm_provider_errors_total{source="stream"}': 0,
      'llm_provider_errors_total{source="connect"}': 0,
      'llm_provider_errors_total{source="body"}': 1, // (the cut stream's connection closed mid-body)
      llm_bad_event_total: 0,
      llm_keepalive_sent_total: 0,
      // (none of these streams reported its usage)
      'llm_tokens_total{kind="input"}': 0,
      'llm_tokens_total{kind="output"}': 0,
      'llm_tokens_total{kind="cache_read"}': 0,
      'llm_tokens_total{kind="cache_write"}': 0,
      'llm_tokens_total{kind="reasoning"}': 0,
      llm_stream_pending_bytes_sum: expect.any(Number),
      llm_stream_pending_bytes_count: 4,
    });
    expect(bodies[0].body.toString()).toBe(ok);
  });
});
