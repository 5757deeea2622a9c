// examples/edge/gateway.mjs, unchanged, on workerd, Deno and Bun: each serves it on 127.0.0.1 in
// front of a fake Anthropic upstream (this process) that streams the model fixtures in small
// pieces; an OpenAI client and an Anthropic client must get what SseRelay writes here for the same
// bytes (the ids and the clock the relay makes normalized), an upstream's HTTP error in their own
// shape, and a body that is not a request (or one nested past 512 levels) a 400 in it; asked with `stream: false`, one JSON answer:
// to the OpenAI client wholeAnswer's for the same bytes (a failed stream's: a 502, wholeError's
// body), to the Anthropic client the upstream's own whole answer, its bytes as they came; the
// gateway's key taken out where the upstream says it. Each runtime
// loads the package as a user's project would (node_modules/seam-stream).
import { createServer, type Server } from 'node:http';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelStream, ModelStreamError, SseRelay, wholeAnswer, wholeError } from '../../bindings/index.js';
import { FIXTURES, type Fixture } from '../helpers/model-fixtures.js';
import { unclocked } from '../helpers/model-streams.js';
import { freePort, root, runtime, serveProcess, serveWorkers, type Served } from './harness.js';

const fixtures = FIXTURES.filter((f) => f.format === 'anthropic' && f.choice === undefined);
/** The gateway's UPSTREAM_KEY: its streams pass through the transform that takes it out of the upstream's words. */
const KEY = 'sk-ant-runtime-0123456789';
const byName = new Map(fixtures.map((f) => [f.name, f]));
const requests: { path: string; headers: Record<string, unknown>; body: any }[] = [];
let upstream: Server;
let upstreamUrl = '';
let project = '';

beforeAll(async () => {
  upstream = createServer(async (req, res) => {
    let raw = '';
    for await (const c of req) raw += c;
    const body = JSON.parse(raw);
    requests.push({ path: req.url ?? '', headers: req.headers, body });
    if (body.model === 'no-content') {
      res.writeHead(204);
      res.end();
      return;
    }
    if (body.model === 'says-key') {
      // an upstream that says the key it was sent: an error event, or an HTTP error
      const said = JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key: ${KEY}` } });
      if (body.stream === false) res.writeHead(401, { 'content-type': 'application/json' }).end(said);
      else res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: error\ndata: ${said}\n\n`);
      return;
    }
    if (body.model === 'no-such-model') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"type":"error","error":{"type":"not_found_error","message":"model: no-such-model"}}');
      return;
    }
    if (body.stream === false) {
      // its own whole answer (asked by an Anthropic client's gateway), in pieces, its connection held open after it
      res.writeHead(200, { 'content-type': 'application/json' });
      const bytes = Buffer.from(wholeOf(body.model));
      for (let i = 0; i < bytes.length; i += 37) {
        res.write(bytes.subarray(i, i + 37));
        await new Promise((r) => setImmediate(r));
      }
      return;
    }
    const f = byName.get(body.model) as Fixture;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    // the fixture's bytes in small pieces, each written apart
    for (let i = 0; i < f.bytes.length; i += 37) {
      res.write(f.bytes.subarray(i, i + 37));
      await new Promise((r) => setImmediate(r));
    }
    res.end();
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  // a user's project: the example beside node_modules/seam-stream (this checkout, built)
  mkdirSync(join(root, 'build'), { recursive: true });
  project = mkdtempSync(join(root, 'build', 'edge-'));
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(root, join(project, 'node_modules', 'seam-stream'), 'dir');
  writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module', dependencies: { 'seam-stream': '*' } }));
  copyFileSync(join(root, 'examples', 'edge', 'gateway.mjs'), join(project, 'gateway.mjs'));
}, 60_000);

afterAll(async () => {
  await new Promise((r) => upstream?.close(r));
  if (project) rmSync(project, { recursive: true, force: true });
});

/**
 * The upstream's own whole answer for `model`, as it writes it: what no answer rebuilt from a stream
 * has (a server tool's blocks, a text block's citations, the container) among it.
 */
const wholeOf = (model: string) => JSON.stringify({
  id: 'msg_up1', type: 'message', role: 'assistant', model,
  content: [
    { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'seam "quoted" {braces}' } },
    { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01', content: [{ type: 'web_search_result', url: 'https://example.com/a', title: 'A }{', encrypted_content: 'EqgB', page_age: null }] },
    { type: 'text', text: 'Seam reads streams \u2014 ✓', citations: [{ type: 'web_search_result_location', url: 'https://example.com/a', title: 'A', encrypted_index: 'Eo8B', cited_text: 'Seam…' }] },
  ],
  stop_reason: 'end_turn', stop_sequence: null, container: { id: 'container_01', expires_at: '2026-12-08T00:00:00Z' },
  usage: { input_tokens: 12, output_tokens: 30, server_tool_use: { web_search_requests: 1 } },
}, null, 1);

/** What SseRelay writes for a fixture, with the ids and the clock it makes normalized. */
function relayed(f: Fixture, to: 'openai' | 'anthropic'): string {
  const r = new SseRelay({ from: 'anthropic', to, model: f.name });
  const head = Buffer.from(r.push(f.bytes)); // (a copy: the view is reused by the next call)
  const out = Buffer.concat([head, Buffer.from(r.flush())]);
  return unclocked(out.toString('utf8'));
}

/** The ids and times a whole answer makes: `ID`, time 0, a made call id `toolu_ID_<n>` / `call_ID_<n>`. */
const normalized = (v: unknown): unknown => JSON.parse(JSON.stringify(v), (k, x: unknown) => (k === 'created' ? 0
  : k === 'id' && typeof x === 'string' && /^(msg_|chatcmpl-)/.test(x) ? 'ID'
    : typeof x === 'string' ? x.replace(/^(call|toolu)_seam\w*_(\d+)$/, '$1_ID_$2') : x));

/** What the library answers for a fixture asked with `stream: false`: wholeAnswer's answer, or a 502 with wholeError's body. */
function whole(f: Fixture, to: 'openai' | 'anthropic'): [number, unknown] {
  const ms = new ModelStream({ format: 'anthropic', normalize: false });
  try {
    const text = ms.push(f.bytes) + ms.flush();
    return [200, normalized(wholeAnswer(ms, text, { to, model: f.name }))];
  } catch (e) {
    if (!(e instanceof ModelStreamError)) throw e;
    return [502, wholeError(e, { from: 'anthropic', to })];
  }
}

const CLIENTS = {
  openai: { path: '/v1/chat/completions', body: (model: string) => ({ model, stream: true, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }] }) },
  anthropic: { path: '/v1/messages', body: (model: string) => ({ model, stream: true, max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] }) },
} as const;

async function checkGateway(base: string): Promise<void> {
  for (const f of fixtures) {
    for (const to of ['openai', 'anthropic'] as const) {
      const c = CLIENTS[to];
      requests.length = 0;
      const res = await fetch(base + c.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(c.body(f.name)) });
      expect(res.status, f.name).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(unclocked(await res.text()), `${f.name} → ${to}`).toBe(relayed(f, to));
      // the upstream got an Anthropic request, with the gateway's key
      expect(requests).toHaveLength(1);
      expect(requests[0].path).toBe('/v1/messages');
      expect(requests[0].headers['anthropic-version']).toBe('2023-06-01');
      expect(requests[0].headers['x-api-key']).toBe(KEY);
      expect(requests[0].body).toMatchObject({ model: f.name, system: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    }
  }
  // stream: false: to an OpenAI client one JSON answer, wholeAnswer's (the upstream asked to stream),
  // or for a stream that fails (an error mid-stream, cut short) a 502 with the error in its shape; to
  // an Anthropic client, of the upstream's API, the upstream's own whole answer, as it wrote it
  const asked = new Set<string>();
  for (const name of ['anthropic-thinking-crlf', 'anthropic-tool-use', 'anthropic-error-mid', 'anthropic-truncated']) {
    const f = byName.get(name)!;
    for (const to of ['openai', 'anthropic'] as const) {
      requests.length = 0;
      const res = await fetch(base + CLIENTS[to].path, { method: 'POST', body: JSON.stringify({ ...CLIENTS[to].body(f.name), stream: false }) });
      expect(res.headers.get('content-type'), `${f.name} → ${to}`).toBe('application/json');
      expect(requests[0].body.stream).toBe(to === 'openai');
      if (to === 'anthropic') {
        expect([res.status, await res.text()], `${f.name} → ${to}, stream: false`).toEqual([200, wholeOf(f.name)]);
        continue;
      }
      const [status, body] = whole(f, to);
      expect([res.status, normalized(await res.json())], `${f.name} → ${to}, stream: false`).toEqual([status, body]);
      asked.add(String(status));
    }
  }
  expect([...asked].sort()).toEqual(['200', '502']);
  // the key, where the upstream says it, taken out: streamed (through the gateway's transform), a
  // whole answer's error (an OpenAI client's, read from the stream) and an HTTP error's message
  for (const to of ['openai', 'anthropic'] as const) {
    for (const stream of [true, false]) {
      const r = await fetch(base + CLIENTS[to].path, { method: 'POST', body: JSON.stringify({ ...CLIENTS[to].body('says-key'), stream }) });
      const text = await r.text();
      expect([r.status, text.includes(KEY), text.includes('invalid x-api-key: [redacted]')], `${to}, stream: ${stream}`).toEqual([stream ? 200 : to === 'openai' ? 502 : 401, false, true]);
    }
  }
  const openai = await fetch(base + CLIENTS.openai.path, { method: 'POST', body: JSON.stringify(CLIENTS.openai.body('no-such-model')) });
  expect(openai.status).toBe(404);
  expect(await openai.json()).toEqual({ error: { message: 'model: no-such-model', type: 'not_found_error', code: null } });
  const anthropic = await fetch(base + CLIENTS.anthropic.path, { method: 'POST', body: JSON.stringify(CLIENTS.anthropic.body('no-such-model')) });
  expect(anthropic.status).toBe(404);
  expect(await anthropic.json()).toEqual({ type: 'error', error: { type: 'not_found_error', message: 'model: no-such-model' } });
  // an upstream's answer with neither a stream nor an error: a 502 in the client's shape (a Response of status 204 cannot have a body)
  for (const [to, shape] of [['openai', { error: { message: 'upstream answered HTTP 204', type: 'api_error', code: null } }], ['anthropic', { type: 'error', error: { type: 'api_error', message: 'upstream answered HTTP 204' } }]] as const) {
    const r = await fetch(base + CLIENTS[to].path, { method: 'POST', body: JSON.stringify(CLIENTS[to].body('no-content')) });
    expect([r.status, await r.json()], to).toEqual([502, shape]);
  }
  // a body that is not a request: the client's error (400) in its shape, and the upstream is not called
  requests.length = 0;
  const message = 'the body must be a JSON object whose messages are an array of objects';
  for (const body of ['null', '[]', '{"model":"m"}', '{"model":"m","messages":[null]}', '{"model":"m","messages":"Hi"}']) {
    const o = await fetch(base + CLIENTS.openai.path, { method: 'POST', body });
    expect([o.status, await o.json()], body).toEqual([400, { error: { message, type: 'invalid_request_error', code: null } }]);
    const a = await fetch(base + CLIENTS.anthropic.path, { method: 'POST', body });
    expect([a.status, await a.json()], body).toEqual([400, { type: 'error', error: { type: 'invalid_request_error', message } }]);
  }
  for (const body of ['{"model":7,"messages":[]}', '{"model":{"id":"m"},"messages":[]}']) {
    const o = await fetch(base + CLIENTS.openai.path, { method: 'POST', body });
    expect([o.status, await o.json()], body).toEqual([400, { error: { message: 'the model must be a string', type: 'invalid_request_error', code: null } }]);
  }
  // a request nested past 512 levels (a value passed upstream, here its temperature, 100,000 levels
  // deep: JSON.stringify overflowed the runtime's stack): the Node gateway's 400, in the client's shape
  const deep = `{"model":"m","messages":[],"temperature":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
  const nests = 'the request body nests deeper than 512 levels';
  const o = await fetch(base + CLIENTS.openai.path, { method: 'POST', body: deep });
  expect([o.status, await o.json()]).toEqual([400, { error: { message: nests, type: 'invalid_request_error', code: 'ERR_BAD_REQUEST' } }]);
  const a = await fetch(base + CLIENTS.anthropic.path, { method: 'POST', body: deep });
  expect([a.status, await a.json()]).toEqual([400, { type: 'error', error: { type: 'invalid_request_error', message: nests } }]);
  expect(requests).toHaveLength(0);
}

describe('examples/edge/gateway.mjs, unchanged', () => {
  it('fixtures cover text, thinking, tool calls, errors and cut streams', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(5);
  });

  it('on workerd (through the package\'s workerd entry)', async () => {
    const w = await serveWorkers([{
      name: 'edge', entry: join(project, 'gateway.mjs'), conditions: ['workerd', 'worker', 'browser'],
      bindings: { UPSTREAM: upstreamUrl, UPSTREAM_FORMAT: 'anthropic', UPSTREAM_KEY: KEY },
    }]);
    try {
      await checkGateway(w.bases.edge);
    } finally {
      await w.stop();
    }
  });

  for (const name of ['deno', 'bun'] as const) {
    it(`on ${name === 'deno' ? 'Deno (deno serve)' : 'Bun'}`, async () => {
      const port = await freePort();
      const env = { ...process.env, UPSTREAM: upstreamUrl, UPSTREAM_FORMAT: 'anthropic', UPSTREAM_KEY: KEY, PORT: String(port), NO_COLOR: '1' };
      const args = name === 'deno'
        ? ['serve', '--quiet', '--unstable-no-legacy-abort', '--allow-net', '--allow-env', '--allow-read', '--host', '127.0.0.1', '--port', String(port), 'gateway.mjs']
        : ['gateway.mjs'];
      let served: Served | undefined;
      try {
        served = await serveProcess(runtime(name), args, port, '/', { cwd: project, env });
        await checkGateway(served.base);
        // (nothing said on the side: Deno warned of request.signal, read by the handler, run without --unstable-no-legacy-abort)
        expect(served.output()).not.toMatch(/request\.signal|legacy/);
      } finally {
        await served?.stop();
      }
    });
  }
});
