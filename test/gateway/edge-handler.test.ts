// examples/edge/gateway.mjs's fetch handler called in this process (test/runtimes/edge.test.ts
// serves it on workerd, Deno and Bun), in front of an upstream on 127.0.0.1 that answers as each
// test says: the answers a client gets where the upstream's answer or the client's request is not
// one the relay can take.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelStream, ModelStreamError, wholeAnswer, wholeError } from '../../bindings/index.js';
import { FIXTURES, type Fixture } from '../helpers/model-fixtures.js';
// @ts-expect-error: a plain ESM example without types
import gateway from '../../examples/edge/gateway.mjs';

let upstream: Server;
let env: { UPSTREAM: string; UPSTREAM_FORMAT: string };
let answer: (res: ServerResponse) => void = (res) => res.end();
const requests: string[] = [];

beforeAll(async () => {
  upstream = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    for await (const c of req) raw += c;
    requests.push(raw);
    answer(res);
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  env = { UPSTREAM: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, UPSTREAM_FORMAT: 'openai' };
});

afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
});

const PATHS = { openai: '/v1/chat/completions', anthropic: '/v1/messages' } as const;

/** The handler's answer to a client of `client` posting `body`: its status and its body as text. */
async function call(client: keyof typeof PATHS, body: unknown): Promise<{ status: number; type: string | null; body: string }> {
  const request = new Request(`http://gateway.test${PATHS[client]}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const res: Response = await gateway.fetch(request, env);
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}

/** The client's error answer, as the gateway writes it. */
const failure = (client: keyof typeof PATHS, message: string, type: string) => JSON.stringify(client === 'anthropic'
  ? { type: 'error', error: { type, message } }
  : { error: { message, type, code: null } });

describe('examples/edge/gateway.mjs as a fetch handler', () => {
  it('an upstream that answers with no stream and no error (204, 205, 304, a 302 without a Location): a 502 in the client\'s shape, not a Response that cannot be made (a 500 of the runtime\'s) or the status itself', async () => {
    for (const status of [204, 205, 304, 302]) {
      answer = (res) => { res.writeHead(status); res.end(); };
      for (const client of ['openai', 'anthropic'] as const) {
        requests.length = 0;
        const got = await call(client, { model: 'm', messages: [{ role: 'user', content: 'Hi' }] });
        expect(got, `${status} to ${client}`).toEqual({
          status: 502, type: 'application/json', body: failure(client, `upstream answered HTTP ${status}`, 'api_error'),
        });
        expect(requests).toHaveLength(1);
      }
    }
  });

  it('an upstream\'s own 4xx and 5xx reach the client with their status, in its shape', async () => {
    answer = (res) => { res.writeHead(429, { 'content-type': 'application/json' }); res.end('{"error":{"message":"slow down","type":"rate_limit_error","code":null}}'); };
    expect(await call('anthropic', { model: 'm', messages: [] })).toEqual({ status: 429, type: 'application/json', body: failure('anthropic', 'slow down', 'rate_limit_error') });
    answer = (res) => { res.writeHead(503); res.end('down'); };
    expect(await call('openai', { model: 'm', messages: [] })).toEqual({ status: 503, type: 'application/json', body: failure('openai', 'upstream answered HTTP 503', 'api_error') });
  });

  it('a model that is not a string: the client\'s 400 in its shape, before the upstream is asked (the relay refuses it, after the upstream had answered: a 500 of the runtime\'s, the upstream\'s body left unread)', async () => {
    answer = (res) => { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.end('data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'); };
    for (const model of [7, null, { name: 'm' }, ['m']]) {
      for (const client of ['openai', 'anthropic'] as const) {
        requests.length = 0;
        expect(await call(client, { model, messages: [{ role: 'user', content: 'Hi' }] }), `${JSON.stringify(model)} to ${client}`).toEqual({
          status: 400, type: 'application/json', body: failure(client, 'the model must be a string', 'invalid_request_error'),
        });
        expect(requests).toHaveLength(0);
      }
    }
    // (without one, the relay names the upstream's format)
    const got = await call('anthropic', { stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    expect([got.status, got.type]).toEqual([200, 'text/event-stream; charset=utf-8']);
    expect(got.body).toContain('"model":"openai"');
  });

  it('an UPSTREAM_FORMAT that is none of its formats, an Object.prototype member\'s name among them: the gateway\'s 500 that says so, in the client\'s shape, the upstream not asked (constructor was taken for a format)', async () => {
    const saved = env;
    try {
      for (const format of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'bedrock']) {
        env = { ...saved, UPSTREAM_FORMAT: format };
        requests.length = 0;
        for (const client of ['openai', 'anthropic'] as const) {
          expect(await call(client, { model: 'm', messages: [{ role: 'user', content: 'Hi' }] }), format).toEqual({
            status: 500, type: 'application/json', body: failure(client, 'the gateway has no valid UPSTREAM and UPSTREAM_FORMAT', 'api_error'),
          });
        }
        expect(requests).toHaveLength(0);
      }
    } finally {
      env = saved;
    }
  });
});

/** The ids and times the gateway makes: `ID`, time 0, a made call id `call_ID_<n>` / `toolu_ID_<n>`. */
function normalized(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v), (k, x: unknown) => (k === 'created' ? 0
    : k === 'id' && typeof x === 'string' && /^(msg_|chatcmpl-)/.test(x) ? 'ID'
      : typeof x === 'string' ? x.replace(/^(call|toolu)_seam\w*_(\d+)$/, '$1_ID_$2') : x));
}

/** What the library answers for a fixture read whole (wholeAnswer, or wholeError with a 502): what the gateway must answer. */
function expectedWhole(f: Fixture, to: keyof typeof PATHS): { status: number; body: unknown } {
  const ms = new ModelStream({ format: f.format as never, normalize: false });
  try {
    let text = ms.push(f.bytes);
    text += ms.flush();
    return { status: 200, body: normalized(wholeAnswer(ms, text, { to, model: f.name })) };
  } catch (e) {
    if (!(e instanceof ModelStreamError)) throw e;
    return { status: 502, body: wholeError(e, { from: f.format as never, to }) };
  } finally {
    ms.dispose();
  }
}

/** The upstream answers the fixture's stream in pieces of 37 bytes, each written apart. */
const streams = (bytes: Uint8Array) => (res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  void (async () => {
    for (let i = 0; i < bytes.length; i += 37) {
      res.write(bytes.subarray(i, i + 37));
      await new Promise((r) => setImmediate(r));
    }
    res.end();
  })();
};

/** The official clients, their requests served by the handler in this process. */
const served = async (url: string | URL | Request, init?: RequestInit) => gateway.fetch(new Request(url, init), env) as Promise<Response>;
const openai = () => new OpenAI({ apiKey: 'k', baseURL: 'http://gateway.test/v1', maxRetries: 0, fetch: served });
const anthropic = () => new Anthropic({ apiKey: 'k', baseURL: 'http://gateway.test', maxRetries: 0, fetch: served });

describe('stream: false through examples/edge/gateway.mjs: one JSON answer, wholeAnswer\'s, read by the official clients', () => {
  const fixtures = FIXTURES.filter((f) => (f.format === 'openai' || f.format === 'anthropic' || f.format === 'ollama') && f.choice === undefined);
  const cases = fixtures.flatMap((f) => (['openai', 'anthropic'] as const).map((to) => [f.name, to, f] as const));
  it.each(cases)('%s to an %s client', async (_name, to, f) => {
    const saved = env;
    env = { ...saved, UPSTREAM_FORMAT: f.format };
    try {
      answer = streams(f.bytes);
      requests.length = 0;
      const want = expectedWhole(f, to);
      const messages = [{ role: 'user' as const, content: 'Hi' }];
      if (want.status === 200) {
        const got = to === 'openai'
          ? await openai().chat.completions.create({ model: f.name, stream: false, messages })
          : await anthropic().messages.create({ model: f.name, max_tokens: 64, stream: false, messages });
        expect(normalized(got)).toEqual(want.body);
      } else {
        // (the stream's failure mid-stream, cut short or a bad event: a 502 with the error in the client's shape, never an answer)
        const e = await (to === 'openai' ? openai().chat.completions.create({ model: f.name, stream: false, messages })
          : anthropic().messages.create({ model: f.name, max_tokens: 64, stream: false, messages })).catch((x: unknown) => x);
        expect(e).toBeInstanceOf(to === 'openai' ? OpenAI.APIError : Anthropic.APIError);
        expect((e as { status: number }).status).toBe(502);
        const raw = await call(to, { model: f.name, stream: false, messages });
        expect([raw.status, raw.type, JSON.parse(raw.body)]).toEqual([502, 'application/json', want.body]);
      }
      // (the upstream is asked to stream, whatever the client asked)
      expect(requests.length).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(requests[0]).stream).toBe(true);
    } finally {
      env = saved;
    }
  });

  it('a request without `stream` is answered whole, as the APIs answer it, to clients that do not say it (the clients\' create() without stream): the same answer as stream: false', async () => {
    const f = FIXTURES.find((x) => x.name === 'openai-basic')!;
    answer = streams(f.bytes);
    const messages = [{ role: 'user' as const, content: 'Hi' }];
    for (const to of ['openai', 'anthropic'] as const) {
      const omitted = await call(to, { model: f.name, messages, ...(to === 'anthropic' ? { max_tokens: 64 } : {}) });
      expect([omitted.status, omitted.type]).toEqual([200, 'application/json']);
      expect(normalized(JSON.parse(omitted.body))).toEqual(expectedWhole(f, to).body);
    }
    const got = await openai().chat.completions.create({ model: f.name, messages });
    expect(normalized(got)).toEqual(expectedWhole(f, 'openai').body);
    const msg = await anthropic().messages.create({ model: f.name, max_tokens: 64, messages });
    expect(normalized(msg)).toEqual(expectedWhole(f, 'anthropic').body);
  });

  it('the upstream\'s connection broken mid-stream: a 502, ERR_STREAM_TRUNCATED in the client\'s shape', async () => {
    const f = FIXTURES.find((x) => x.name === 'openai-basic')!;
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(f.bytes.subarray(0, 200), () => setTimeout(() => res.socket!.destroy(), 20));
    };
    const o = await call('openai', { model: 'm', stream: false, messages: [] });
    expect([o.status, JSON.parse(o.body)]).toEqual([502, { error: {
      message: 'The upstream openai stream ended without its completion: the answer is cut short', type: 'upstream_stream_error', code: 'ERR_STREAM_TRUNCATED', offset: 200,
    } }]);
    const a = await call('anthropic', { model: 'm', stream: false, messages: [] });
    expect([a.status, JSON.parse(a.body)]).toEqual([502, { type: 'error', error: { type: 'api_error', message: 'The upstream openai stream ended without its completion: the answer is cut short' } }]);
  });

  it('an upstream stream past MAX_ANSWER_BYTES: a 502 that says the limit, and the upstream\'s stream cancelled', async () => {
    const f = FIXTURES.find((x) => x.name === 'openai-basic')!;
    const saved = env;
    env = { ...saved, MAX_ANSWER_BYTES: '100' } as typeof env;
    try {
      answer = streams(f.bytes);
      for (const client of ['openai', 'anthropic'] as const) {
        expect(await call(client, { model: 'm', stream: false, messages: [] })).toEqual({
          status: 502, type: 'application/json', body: failure(client, 'the upstream\'s answer is over 100 bytes', 'api_error'),
        });
      }
      // (the limit is of the bytes read: a stream of that many is answered)
      env = { ...saved, MAX_ANSWER_BYTES: String(f.bytes.length) } as typeof env;
      expect((await call('openai', { model: 'm', stream: false, messages: [] })).status).toBe(200);
      // (a fraction is its whole bytes; past 512 MiB, the most a model stream keeps, or Infinity, it is
      // 512 MiB; none above 0 is the default: each an answer, where the handler threw a TypeError)
      for (const [limit, status] of [[`${f.bytes.length - 1}.5`, 502], ['1e12', 200], ['Infinity', 200], ['-1', 200], ['many', 200]] as const) {
        env = { ...saved, MAX_ANSWER_BYTES: limit } as typeof env;
        const got = await call('anthropic', { model: 'm', stream: false, messages: [] });
        expect(got.status, limit).toBe(status);
        if (status === 502) expect(got.body).toBe(failure('anthropic', `the upstream's answer is over ${f.bytes.length - 1} bytes`, 'api_error'));
        else expect(JSON.parse(got.body), limit).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text' }] });
      }
    } finally {
      env = saved;
    }
  });
});
