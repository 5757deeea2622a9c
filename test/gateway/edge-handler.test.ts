// examples/edge/gateway.mjs's fetch handler called in this process (test/runtimes/edge.test.ts
// serves it on workerd, Deno and Bun), in front of an upstream on 127.0.0.1 that answers as each
// test says: the answers a client gets where the upstream's answer or the client's request is not
// one the relay can take.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ModelStream, ModelStreamError, SseRelay, wholeAnswer, wholeError } from '../../bindings/index.js';
import { FIXTURES, type Fixture } from '../helpers/model-fixtures.js';
import { SEED, bomCuttings, cut, randomCuts, rng } from '../helpers/random.js';
// @ts-expect-error: a plain ESM example without types
import gateway from '../../examples/edge/gateway.mjs';

let upstream: Server;
let env: { UPSTREAM: string; UPSTREAM_FORMAT: string };
let answer: (res: ServerResponse, raw: string) => void = (res) => res.end();
const requests: string[] = [];

beforeAll(async () => {
  upstream = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    for await (const c of req) raw += c;
    requests.push(raw);
    answer(res, raw);
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

describe('stream: false through examples/edge/gateway.mjs from another API: one JSON answer, wholeAnswer\'s, read by the official clients', () => {
  // (of the client's own API the upstream's own whole answer passes through: below)
  const fixtures = FIXTURES.filter((f) => (f.format === 'openai' || f.format === 'anthropic' || f.format === 'ollama') && f.choice === undefined);
  const cases = fixtures.flatMap((f) => (['openai', 'anthropic'] as const).filter((to) => to !== f.format).map((to) => [f.name, to, f] as const));
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
    const f = FIXTURES.find((x) => x.name === 'anthropic-basic')!;
    const saved = env;
    env = { ...saved, UPSTREAM_FORMAT: 'anthropic' };
    try {
      answer = streams(f.bytes);
      const messages = [{ role: 'user' as const, content: 'Hi' }];
      const omitted = await call('openai', { model: f.name, messages });
      expect([omitted.status, omitted.type]).toEqual([200, 'application/json']);
      expect(normalized(JSON.parse(omitted.body))).toEqual(expectedWhole(f, 'openai').body);
      const got = await openai().chat.completions.create({ model: f.name, messages });
      expect(normalized(got)).toEqual(expectedWhole(f, 'openai').body);
      // (of its own API, the upstream is asked for its whole answer: no `stream`, read as false)
      requests.length = 0;
      answer = wholeJson(200, JSON.stringify(ANTHROPIC_WHOLE));
      const msg = await anthropic().messages.create({ model: f.name, max_tokens: 64, messages });
      expect(msg).toEqual(ANTHROPIC_WHOLE);
      expect(JSON.parse(requests[0]).stream).toBe(false);
    } finally {
      env = saved;
    }
  });

  it('the upstream\'s connection broken mid-stream: a 502, ERR_STREAM_TRUNCATED in the client\'s shape', async () => {
    const f = FIXTURES.find((x) => x.name === 'openai-basic')!;
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(f.bytes.subarray(0, 200), () => setTimeout(() => res.socket!.destroy(), 20));
    };
    const a = await call('anthropic', { model: 'm', stream: false, messages: [] });
    expect([a.status, JSON.parse(a.body)]).toEqual([502, { type: 'error', error: { type: 'api_error', message: 'The upstream openai stream ended without its completion: the answer is cut short' } }]);
    const g = FIXTURES.find((x) => x.name === 'anthropic-basic')!;
    const saved = env;
    env = { ...saved, UPSTREAM_FORMAT: 'anthropic' };
    try {
      answer = (res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(g.bytes.subarray(0, 200), () => setTimeout(() => res.socket!.destroy(), 20));
      };
      const o = await call('openai', { model: 'm', stream: false, messages: [] });
      expect([o.status, JSON.parse(o.body)]).toEqual([502, { error: {
        message: 'The upstream anthropic stream ended without its completion: the answer is cut short', type: 'upstream_stream_error', code: 'ERR_STREAM_TRUNCATED', offset: 200,
      } }]);
    } finally {
      env = saved;
    }
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
      expect((await call('anthropic', { model: 'm', stream: false, messages: [] })).status).toBe(200);
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

/** The upstream answers `status` with `text` as its JSON body, in pieces (`cuts`, each written apart), and holds its connection open after it unless `end`. */
const wholeJson = (status: number, text: string, cuts: number[] = [], end = true) => (res: ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  void (async () => {
    for (const piece of cut(Buffer.from(text), cuts)) {
      res.write(piece);
      await new Promise((r) => setImmediate(r));
    }
    if (end) res.end();
  })();
};

/** An OpenAI whole answer with what no answer rebuilt from a stream has: its system_fingerprint, service_tier and logprobs. */
const OPENAI_WHOLE = {
  id: 'chatcmpl-up1', object: 'chat.completion', created: 1767225600, model: 'gpt-4o-2024-08-06', system_fingerprint: 'fp_f33667828e', service_tier: 'default',
  choices: [{
    index: 0, message: { role: 'assistant', content: 'Hi there', refusal: null, annotations: [] },
    logprobs: { content: [{ token: 'Hi', logprob: -0.01, bytes: [72, 105], top_logprobs: [] }, { token: ' there', logprob: -0.2, bytes: [32, 116, 104, 101, 114, 101], top_logprobs: [] }], refusal: null },
    finish_reason: 'stop',
  }],
  usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11, prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 } },
};

/** An Anthropic whole answer with a server tool's blocks, a text block's citations and its container. */
const ANTHROPIC_WHOLE = {
  id: 'msg_up1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5',
  content: [
    { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'seam stream "quoted" {braces}' } },
    { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01', content: [{ type: 'web_search_result', url: 'https://example.com/a', title: 'A }{', encrypted_content: 'EqgB', page_age: null }] },
    { type: 'text', text: 'Seam reads streams \u2014 ✓', citations: [{ type: 'web_search_result_location', url: 'https://example.com/a', title: 'A }{', encrypted_index: 'Eo8B', cited_text: 'Seam reads streams…' }] },
  ],
  stop_reason: 'end_turn', stop_sequence: null, container: { id: 'container_01', expires_at: '2026-12-08T00:00:00Z' },
  usage: { input_tokens: 12, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, server_tool_use: { web_search_requests: 1 }, service_tier: 'standard' },
};

const WHOLE = { openai: OPENAI_WHOLE, anthropic: ANTHROPIC_WHOLE } as const;

describe('stream: false through examples/edge/gateway.mjs from the client\'s own API: the upstream\'s own whole answer passed through', () => {
  /** The official client's whole answer, through the gateway. */
  const create = (to: keyof typeof PATHS) => (to === 'openai'
    ? openai().chat.completions.create({ model: 'm', stream: false, messages: [{ role: 'user', content: 'Hi' }] })
    : anthropic().messages.create({ model: 'm', max_tokens: 64, stream: false, messages: [{ role: 'user', content: 'Hi' }] }));

  it('all the upstream\'s answer reaches the official clients (system_fingerprint, logprobs, service_tier; citations, server tool blocks, container), its bytes as they came, whatever its pieces (seed printed), the upstream asked for a whole answer; its connection held open after it', async () => {
    const saved = env;
    try {
      for (const to of ['openai', 'anthropic'] as const) {
        env = { ...saved, UPSTREAM_FORMAT: to };
        // (as the upstream wrote it, white space and escapes: not written anew)
        const text = JSON.stringify(WHOLE[to], null, 1);
        const bytes = Buffer.from(text);
        const next = rng(SEED + bytes.length);
        const cuttings: [string, number[]][] = [['whole', []], ['a byte a piece', [...Array(bytes.length - 1).keys()].map((i) => i + 1)]];
        for (let round = 0; round < 3; round++) cuttings.push([`seed ${SEED} round ${round}`, randomCuts(bytes, next, [3, 17, 90][round])]);
        for (const [how, cuts] of cuttings) {
          // (the upstream holds its connection open after its answer: the answer is read to its object's end)
          answer = wholeJson(200, text, cuts, false);
          requests.length = 0;
          const got = await create(to);
          expect(got, `${to}, ${how}`).toEqual(WHOLE[to]);
          expect(JSON.parse(requests[0]), to).toMatchObject({ model: 'm', stream: false });
          const raw = await call(to, { model: 'm', stream: false, messages: [{ role: 'user', content: 'Hi' }] });
          expect(raw, `${to}, ${how}`).toEqual({ status: 200, type: 'application/json', body: text });
        }
        // (its status passed through; the upstream is asked for JSON)
        answer = wholeJson(203, text);
        requests.length = 0;
        const raw = await gateway.fetch(new Request(`http://gateway.test${PATHS[to]}`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [] }) }), env) as Response;
        expect([raw.status, raw.headers.get('x-content-type-options'), await raw.text()]).toEqual([203, 'nosniff', text]);
        expect(requests).toHaveLength(1);
        expect(JSON.parse(requests[0]).stream).toBe(false);
      }
    } finally {
      env = saved;
    }
  });

  it('an answer past MAX_ANSWER_BYTES: the 502 that says the limit (one of that many bytes is the answer)', async () => {
    const saved = env;
    try {
      for (const to of ['openai', 'anthropic'] as const) {
        const text = JSON.stringify(WHOLE[to]);
        const size = Buffer.byteLength(text);
        answer = wholeJson(200, text, [7, 100, size - 1]);
        env = { ...saved, UPSTREAM_FORMAT: to, MAX_ANSWER_BYTES: String(size - 1) } as typeof env;
        expect(await call(to, { model: 'm', stream: false, messages: [] })).toEqual({
          status: 502, type: 'application/json', body: failure(to, `the upstream's answer is over ${size - 1} bytes`, 'api_error'),
        });
        env = { ...saved, UPSTREAM_FORMAT: to, MAX_ANSWER_BYTES: String(size) } as typeof env;
        expect(await call(to, { model: 'm', stream: false, messages: [] })).toEqual({ status: 200, type: 'application/json', body: text });
      }
    } finally {
      env = saved;
    }
  });

  it('an answer that is not a JSON object (a web page, an array, null, a stream, JSON cut short, a connection that broke): a 502, ERR_BAD_RESPONSE, not passed on', async () => {
    const saved = env;
    const page = (res: ServerResponse) => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<!doctype html><title>Sign in</title>'); };
    const broken = (res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id":"chatcmpl-1","choices":[', () => setTimeout(() => res.socket!.destroy(), 20));
    };
    const cases: [string, (res: ServerResponse) => void, string][] = [
      ['a web page', page, 'is not a JSON object'],
      ['an array', wholeJson(200, '[{"id":"x"}]'), 'is not a JSON object'],
      ['null', wholeJson(200, 'null'), 'is not a JSON object'],
      ['an event stream', wholeJson(200, 'data: {"choices":[]}\n\ndata: [DONE]\n\n'), 'is not a JSON object'],
      ['JSON cut short', wholeJson(200, '{"id":"chatcmpl-1","choices":['), 'is not a JSON object'],
      ['a connection that broke', broken, 'broke off before its end'],
    ];
    try {
      for (const to of ['openai', 'anthropic'] as const) {
        env = { ...saved, UPSTREAM_FORMAT: to };
        for (const [what, upstreamAnswer, why] of cases) {
          answer = upstreamAnswer;
          const message = `the upstream's answer (HTTP 200) ${why}`;
          expect(await call(to, { model: 'm', stream: false, messages: [] }), `${what} to ${to}`).toEqual({
            status: 502, type: 'application/json', body: JSON.stringify(to === 'anthropic' ? { type: 'error', error: { type: 'api_error', message } }
              : { error: { message, type: 'upstream_error', code: 'ERR_BAD_RESPONSE' } }),
          });
        }
        const e = await create(to).catch((x: unknown) => x);
        expect(e, to).toBeInstanceOf(to === 'openai' ? OpenAI.APIError : Anthropic.APIError);
        expect((e as { status: number }).status).toBe(502);
      }
    } finally {
      env = saved;
    }
  });
});

describe('examples/edge/gateway.mjs: a whole answer after a BOM, as the Node gateway reads it', () => {
  it('of the client\'s own API: read as a model stream reads one, passed on without the BOM, whatever pieces it comes in (seed printed; its connection held open after it); a BOM cut short, after white space or twice is no JSON object, a 502; an error body after a BOM, held open, says its message', async () => {
    const saved = env;
    const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
    const within = <T>(p: Promise<T>): Promise<T> => Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('no answer within 5 s')), 5000))]);
    try {
      for (const to of ['openai', 'anthropic'] as const) {
        env = { ...saved, UPSTREAM_FORMAT: to };
        const text = JSON.stringify(WHOLE[to]);
        const bytes = Buffer.concat([BOM, Buffer.from(text)]);
        for (const [how, cuts] of bomCuttings(bytes)) {
          answer = (res) => {
            res.writeHead(200, { 'content-type': 'application/json' });
            void (async () => {
              for (const piece of cut(bytes, cuts)) {
                res.write(piece);
                await new Promise((r) => setImmediate(r));
              }
            })();
          };
          expect(await within(call(to, { model: 'm', stream: false, messages: [] })), `${to}, ${how}`).toEqual({ status: 200, type: 'application/json', body: text });
        }
        expect(await (to === 'openai' ? openai().chat.completions.create({ model: 'm', stream: false, messages: [] })
          : anthropic().messages.create({ model: 'm', max_tokens: 64, stream: false, messages: [] }))).toEqual(WHOLE[to]);
        for (const [what, body] of [['a BOM cut short', Buffer.concat([BOM.subarray(0, 2), Buffer.from(text)])], ['a BOM after white space', Buffer.concat([Buffer.from(' '), BOM, Buffer.from(text)])],
          ['two BOMs', Buffer.concat([BOM, BOM, Buffer.from(text)])]] as const) {
          answer = (res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(body); };
          const message = 'the upstream\'s answer (HTTP 200) is not a JSON object';
          expect(await within(call(to, { model: 'm', stream: false, messages: [] })), `${what} to ${to}`).toEqual({
            status: 502, type: 'application/json', body: JSON.stringify(to === 'anthropic' ? { type: 'error', error: { type: 'api_error', message } }
              : { error: { message, type: 'upstream_error', code: 'ERR_BAD_RESPONSE' } }),
          });
        }
      }
      answer = (res) => {
        res.writeHead(429, { 'content-type': 'application/json' });
        res.write(BOM.subarray(0, 1));
        setImmediate(() => res.write(Buffer.concat([BOM.subarray(1), Buffer.from('{"error":{"message":"slow down","type":"rate_limit_error","code":null}}')])));
      };
      env = saved;
      expect(await within(call('anthropic', { model: 'm', messages: [] }))).toEqual({ status: 429, type: 'application/json', body: failure('anthropic', 'slow down', 'rate_limit_error') });
    } finally {
      env = saved;
    }
  }, 30_000);
});

describe('examples/edge/gateway.mjs: an upstream\'s error body, bounded', () => {
  it('one that never ends, or held open after its JSON object: the client\'s answer comes (read up to its object\'s end and 64 KiB; the rest cancelled), where the body was read to its end, held whole', async () => {
    let closed = 0;
    answer = (res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      const piece = Buffer.alloc(64 * 1024, 0x61);
      const more = () => { if (!res.destroyed) res.write(piece, () => setImmediate(more)); };
      res.on('close', () => { closed++; });
      more();
    };
    const within = <T>(p: Promise<T>): Promise<T> => Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('no answer within 5 s')), 5000))]);
    expect(await within(call('openai', { model: 'm', messages: [] }))).toEqual({
      status: 500, type: 'application/json', body: failure('openai', 'upstream answered HTTP 500', 'api_error'),
    });
    await vi.waitFor(() => expect(closed).toBe(1));
    // an error object, the connection held open after it: its message, at once
    answer = wholeJson(429, '{"error":{"message":"slow down","type":"rate_limit_error","code":null}}', [5, 30], false);
    expect(await within(call('anthropic', { model: 'm', messages: [] }))).toEqual({ status: 429, type: 'application/json', body: failure('anthropic', 'slow down', 'rate_limit_error') });
    // one past 64 KiB: its status with the general message
    answer = wholeJson(400, JSON.stringify({ error: { message: 'x'.repeat(64 * 1024), type: 'invalid_request_error', code: null } }));
    expect(await within(call('openai', { model: 'm', messages: [] }))).toEqual({ status: 400, type: 'application/json', body: failure('openai', 'upstream answered HTTP 400', 'api_error') });
  }, 20_000);
});

describe('examples/edge/gateway.mjs: the upstream key taken out of the upstream\'s words to a client', () => {
  const KEY = 'sk-edge-secret-0123456789';
  const said = `Incorrect API key provided: ${KEY}. You can find your API key at https://example.com.`;
  const redacted = said.replace(KEY, '[redacted]');
  /** The handler's answer with UPSTREAM_KEY set, upstreams of `format`. */
  const keyed = async <T>(format: string, run: () => Promise<T>): Promise<T> => {
    const saved = env;
    env = { ...saved, UPSTREAM_FORMAT: format, UPSTREAM_KEY: KEY } as typeof env;
    try {
      return await run();
    } finally {
      env = saved;
    }
  };

  it('an HTTP error\'s message', async () => {
    answer = wholeJson(401, JSON.stringify({ error: { message: said, type: 'invalid_request_error', code: 'invalid_api_key' } }));
    expect(await keyed('openai', () => call('openai', { model: 'm', messages: [] }))).toEqual({ status: 401, type: 'application/json', body: failure('openai', redacted, 'invalid_request_error') });
    answer = wholeJson(401, JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: said } }));
    expect(await keyed('anthropic', () => call('anthropic', { model: 'm', messages: [] }))).toEqual({ status: 401, type: 'application/json', body: failure('anthropic', redacted, 'authentication_error') });
  });

  it('a streamed error event, passed through or written anew (the upstream\'s stream in pieces of 37 bytes)', async () => {
    const stream = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\ndata: ${JSON.stringify({ error: { message: said, type: 'invalid_request_error', code: 'invalid_api_key' } })}\n\n`;
    answer = streams(Buffer.from(stream));
    const o = await keyed('openai', () => call('openai', { model: 'm', stream: true, messages: [] }));
    // (the relay's output for the upstream's stream with the key as the gateway writes it)
    const relay = new SseRelay({ from: 'openai', to: 'openai', model: 'm' });
    const want = Buffer.concat([Buffer.from(relay.push(Buffer.from(stream.replace(KEY, '[redacted]')))), Buffer.from(relay.flush())]).toString();
    relay.dispose();
    expect([o.status, o.body]).toEqual([200, want]);
    const a = await keyed('openai', () => call('anthropic', { model: 'm', stream: true, messages: [] }));
    expect(a.body).not.toContain(KEY);
    // (OpenAI's invalid_api_key, in Anthropic's words)
    expect(a.body).toContain(`event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: redacted } })}\n\n`);
  });

  it('a whole answer\'s: the error of a stream read for it, and an error object passed through with a 200', async () => {
    answer = streams(Buffer.from(`data: ${JSON.stringify({ error: { message: said, type: 'invalid_request_error', code: 'invalid_api_key' } })}\n\n`));
    const a = await keyed('openai', () => call('anthropic', { model: 'm', stream: false, messages: [] }));
    expect([a.status, JSON.parse(a.body)]).toEqual([502, { type: 'error', error: { type: 'authentication_error', message: redacted } }]);
    const body = JSON.stringify({ error: { message: said, type: 'invalid_request_error', code: 'invalid_api_key' } });
    answer = wholeJson(200, body, [30, 31, 40]);
    const o = await keyed('openai', () => call('openai', { model: 'm', stream: false, messages: [] }));
    expect(o).toEqual({ status: 200, type: 'application/json', body: body.replace(KEY, '[redacted]') });
    // (an answer is passed on as it came)
    answer = wholeJson(200, JSON.stringify(OPENAI_WHOLE));
    expect((await keyed('openai', () => call('openai', { model: 'm', stream: false, messages: [] }))).body).toBe(JSON.stringify(OPENAI_WHOLE));
  });
});

describe('examples/edge/gateway.mjs: the client\'s request body, bounded', () => {
  /** The handler's answer to `body` (bytes, or a stream of them without a content-length). */
  const send = async (client: keyof typeof PATHS, body: Uint8Array | ReadableStream<Uint8Array>) => {
    const init = body instanceof ReadableStream ? { method: 'POST', body, duplex: 'half' } : { method: 'POST', body };
    const res: Response = await gateway.fetch(new Request(`http://gateway.test${PATHS[client]}`, init as RequestInit), env);
    return { status: res.status, body: await res.text() };
  };
  /** A request of exactly `size` bytes. */
  const sized = (size: number) => {
    const head = '{"model":"m","stream":true,"messages":[{"role":"user","content":"';
    return Buffer.from(`${head}${'x'.repeat(size - head.length - 4)}"}]}`);
  };
  /** `bytes` as a stream of pieces of 64 KiB, its length unsaid; `pulled` counts the pieces taken. */
  const streamed = (bytes: Uint8Array, pulled = { n: 0 }) => {
    let at = 0;
    return new ReadableStream<Uint8Array>({
      pull(c) {
        if (at >= bytes.length) return c.close();
        pulled.n++;
        c.enqueue(bytes.slice(at, at += 64 * 1024));
      },
    });
  };

  it('past MAX_REQUEST_BYTES (1 MiB unless set): a 413 in the client\'s shape, the upstream not asked, the rest of a body of unsaid length not read', async () => {
    answer = (res) => { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.end('data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'); };
    const MIB = 1024 * 1024;
    const over = { openai: JSON.stringify({ error: { message: `the request body is over ${MIB} bytes`, type: 'invalid_request_error', code: 'ERR_REQUEST_TOO_LARGE' } }),
      anthropic: failure('anthropic', `the request body is over ${MIB} bytes`, 'request_too_large') };
    requests.length = 0;
    for (const client of ['openai', 'anthropic'] as const) {
      expect(await send(client, sized(MIB + 1)), client).toEqual({ status: 413, body: over[client] });
      const pulled = { n: 0 };
      // (a body of 64 MiB, its length unsaid: read up to the limit alone)
      const endless = new ReadableStream<Uint8Array>({ pull(c) { pulled.n++; c.enqueue(new Uint8Array(64 * 1024).fill(0x20)); } });
      expect(await send(client, endless), client).toEqual({ status: 413, body: over[client] });
      expect(pulled.n).toBeLessThanOrEqual(MIB / (64 * 1024) + 2);
    }
    expect(requests).toHaveLength(0);
    // (one of that many bytes is a request, said or not)
    expect((await send('openai', sized(MIB))).status).toBe(200);
    expect((await send('anthropic', streamed(sized(MIB)))).status).toBe(200);
    expect(requests).toHaveLength(2);
    const saved = env;
    env = { ...saved, MAX_REQUEST_BYTES: '200' } as typeof env;
    try {
      expect(await send('openai', streamed(sized(201)))).toEqual({ status: 413, body: JSON.stringify({ error: { message: 'the request body is over 200 bytes', type: 'invalid_request_error', code: 'ERR_REQUEST_TOO_LARGE' } }) });
      expect((await send('openai', sized(200))).status).toBe(200);
    } finally {
      env = saved;
    }
  });
});

describe('examples/edge/gateway.mjs: a request nested deep', () => {
  it('past 512 levels (the Node gateway\'s limit, JSON_MAX_DEPTH): its 400 in the client\'s shape, the upstream not asked, where a value passed upstream (temperature, max_tokens, a message\'s content) nested 100,000 levels overflowed JSON.stringify, the runtime\'s 500; 512 levels pass, brackets in strings not counted', async () => {
    answer = (res) => { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.end('data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'); };
    // (the outermost object is level 1; strings with brackets and escaped quotes in them at each level)
    // (a value at level 2 that makes the request `levels` deep)
    const deep = (levels: number) => `${'["{[\\\\",'.repeat(levels - 1)}0${']'.repeat(levels - 1)}`;
    const bodies = (levels: number) => [
      `{"model":"m","stream":true,"messages":[{"role":"user","content":"[{\\"["}],"temperature":${deep(levels)}}`,
      `{"model":"m","stream":true,"max_tokens":${deep(levels)},"messages":[{"role":"user","content":"Hi"}]}`,
      // (a message's content part's text, levels 2 to 5 the messages, the message, its content and the part)
      `{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":${deep(levels - 4)}}]}]}`,
    ];
    // (each as deep as said: its arrays and objects, the outermost at level 1, brackets in strings not counted)
    const depthOf = (v: unknown): number => (typeof v === 'object' && v !== null ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0);
    for (const levels of [512, 513]) for (const body of bodies(levels)) expect(depthOf(JSON.parse(body))).toBe(levels);
    const send = async (client: keyof typeof PATHS, body: string) => {
      const res: Response = await gateway.fetch(new Request(`http://gateway.test${PATHS[client]}`, { method: 'POST', body }), env);
      return { status: res.status, body: await res.text() };
    };
    const message = 'the request body nests deeper than 512 levels';
    const refused = {
      openai: { status: 400, body: JSON.stringify({ error: { message, type: 'invalid_request_error', code: 'ERR_BAD_REQUEST' } }) },
      anthropic: { status: 400, body: failure('anthropic', message, 'invalid_request_error') },
    };
    requests.length = 0;
    for (const client of ['openai', 'anthropic'] as const) {
      for (const levels of [513, 100_000]) {
        for (const [i, body] of bodies(levels).entries()) expect(await send(client, body), `${client}, ${levels} levels, body ${i}`).toEqual(refused[client]);
      }
    }
    expect(requests).toHaveLength(0);
    for (const [i, body] of bodies(512).entries()) expect((await send('openai', body)).status, `512 levels, body ${i}`).toBe(200);
    expect(requests).toHaveLength(3);
    expect(JSON.stringify(JSON.parse(requests[0]).temperature)).toBe(JSON.stringify(JSON.parse(bodies(512)[0]).temperature));
  });
});
