// examples/edge/gateway.mjs's fetch handler called in this process (test/runtimes/edge.test.ts
// serves it on workerd, Deno and Bun), in front of an upstream on 127.0.0.1 that answers as each
// test says: the answers a client gets where the upstream's answer or the client's request is not
// one the relay can take.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    const got = await call('anthropic', { messages: [{ role: 'user', content: 'Hi' }] });
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
