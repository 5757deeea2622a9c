// SseRelay against the fixtures (test/helpers/model-fixtures.ts), from every format to both client
// formats, OpenAI Chat Completions and Anthropic Messages: fed whole, dripped, cut in two at every
// byte, cut at random (seeded). What the client reads is parsed by eventsource-parser and
// accumulated as the official clients accumulate it, every protocol rule checked on the way
// (test/helpers/clients.ts); the message it ends with is the reference reading's:
// - the text (the provider's JSON string literals copied as they were), the reasoning, each
//   client tool call's id, name and arguments (the fragments joined; the provider's own tool calls
//   are not the client's and are left out), the finish reason in the client's words (`tool_calls` /
//   `tool_use` exactly when calls were written), the usage once in the client's words;
// - the end: the client's completion (`[DONE]`; Anthropic's message_stop) exactly when the upstream
//   completed, otherwise one error event in the client's shape, never a completion;
// - after every push, the text so far is that of the frames complete so far;
// - from a format to itself, events pass through byte for byte when they came in the form a relay
//   writes (`event:` when the format names its events, a `data:` line per line, a blank line);
//   an OpenAI event its clients cannot read as it is (Mistral's arrays, calls without `index`) is
//   written anew.
// Then the official openai and @anthropic-ai/sdk clients read a relayed stream of every fixture
// from a local HTTP server.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SseRelay, SseRelayStream, coreMemoryUsed } from '../../bindings/index.js';
import { describeValue } from '../../bindings/core/options.js';
import { readOpenAi, sse } from '../helpers/clients.js';
import { ANTHROPIC_HI, OPENAI_HI } from '../helpers/relay-starts.js';
import { FIXTURES, type ModelFormat } from '../helpers/model-fixtures.js';
import { BROKE } from '../helpers/model-streams.js';
import { type Client, Oracle, concat, isJson, matching, read, settle } from '../helpers/relay-oracle.js';

const enc = new TextEncoder();
import { SEED, cut, randomCuts, rng } from '../helpers/random.js';


// The relay has no choice option: it follows choice 0, so the choice: 1 reading of a body is ModelStream's alone.
const relayFixtures = FIXTURES.filter((f) => f.choice === undefined);
const cases = relayFixtures.flatMap((f) => (['openai', 'anthropic'] as const).map((to) => [`${f.name} → ${to}`, f, to] as const));

describe.each(cases)('SseRelay: %s', (name, f, to) => {
  const o = new Oracle(f, to);

  test('fed whole, and dripped one byte at a time', () => {
    settle(o, [f.bytes], `${name} whole`);
    settle(o, Array.from({ length: f.bytes.length }, (_, i) => f.bytes.subarray(i, i + 1)), `${name} drip`);
  });

  test('cut in two at every byte', () => {
    for (let i = 0; i <= f.bytes.length; i++) settle(o, cut(f.bytes, [i]), `${name} cut at ${i}`);
  });

  test(`random cuts, seed ${SEED}`, () => {
    const next = rng(SEED + f.bytes.length);
    for (let round = 0; round < 12; round++) {
      const at = randomCuts(f.bytes, next, [2, 9, 33, 150][round % 4]);
      settle(o, cut(f.bytes, at), `${name} seed ${SEED} round ${round} (${at.length} cuts: ${at.slice(0, 12).join(',')}${at.length > 12 ? ',…' : ''})`);
    }
  });
});

describe('SseRelay: options and the returned view', () => {
  test("to: 'openai' is the default", () => {
    const f = FIXTURES.find((x) => x.name === 'anthropic-basic')!;
    const texts = [new SseRelay({ from: 'anthropic' }), new SseRelay({ from: 'anthropic', to: 'openai' })].map((r) => readOpenAi(concat([r.push(f.bytes).slice(), r.flush().slice()])).text);
    expect(texts).toEqual([f.expected.text, f.expected.text]);
  });

  test('an unknown format or option value is a TypeError', () => {
    expect(() => new SseRelay({ from: 'openai-chat' as ModelFormat })).toThrow(TypeError);
    expect(() => new SseRelay({ from: 'openai', to: 'gemini' as 'openai' })).toThrow(TypeError);
    expect(() => new SseRelay({ from: 'openai', reasoning: 'keep' as 'pass' })).toThrow(TypeError);
    // a relay is strict: it writes its client valid UTF-8 (fatal: false once let a bad byte through to the client)
    expect(() => new SseRelay({ from: 'anthropic', fatal: false as true })).toThrow(
      new TypeError("SseRelay: fatal must be true, got false (a relay writes its client only valid UTF-8: an upstream's bad byte ends the stream with an error event in the client's format)"));
    expect(new SseRelay({ from: 'anthropic', fatal: true }).status).toBe('open');
  });

  test('id and model are strings and comments a boolean, as typed: anything else is a TypeError (a number or an object was written into the client\'s events as JSON, an object whose toJSON gives nothing as `undefined`, not JSON; comments: \'no\' forwarded comments)', () => {
    const hi = new TextEncoder().encode('data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n');
    for (const [name, bad] of [['id', 123], ['id', {}], ['id', null], ['model', 7], ['model', ['gpt']], ['model', { toJSON: () => undefined }], ['model', null]] as const) {
      expect(() => new SseRelay({ from: 'openai', to: 'anthropic', [name]: bad }), `${name}: ${String(bad)}`).toThrow(new TypeError(`SseRelay: ${name} must be a string, got ${describeValue(bad)}`));
    }
    for (const bad of ['no', 0, 1, null]) {
      expect(() => new SseRelay({ from: 'openai', comments: bad as unknown as boolean }), String(bad)).toThrow(TypeError);
    }
    // (strings, any: written as JSON strings)
    const r = new SseRelay({ from: 'openai', to: 'anthropic', id: 'msg_\u2028"x"', model: '' });
    const start = JSON.parse(new TextDecoder().decode(r.push(hi)).split('\n')[1].slice('data: '.length));
    expect([start.message.id, start.message.model]).toEqual(['msg_\u2028"x"', '']);
    expect(new SseRelay({ from: 'openai', comments: false, id: undefined, model: undefined }).status).toBe('open');
  });

  test('an option refused takes nothing of the core: the options are checked before the relay\'s record is made (a bad to or reasoning held one until a collection)', () => {
    const before = coreMemoryUsed();
    for (const bad of [{ to: 'gemini' }, { reasoning: 'keep' }, { model: 7 }, { id: {} }, { comments: 'no' }]) {
      expect(() => new SseRelay({ from: 'openai', ...bad } as never), JSON.stringify(bad)).toThrow(TypeError);
      expect(coreMemoryUsed(), JSON.stringify(bad)).toBe(before);
    }
  });

  test("reasoning: 'drop' leaves reasoning out of an OpenAI client's stream; 'pass' is the default", () => {
    const f = FIXTURES.find((x) => x.name === 'anthropic-thinking-crlf')!;
    const drop = readOpenAi(concat([new SseRelay({ from: 'anthropic', reasoning: 'drop' }).push(f.bytes).slice()]));
    const pass = new SseRelay({ from: 'anthropic' });
    const passed = readOpenAi(concat([pass.push(f.bytes).slice(), pass.flush().slice()]));
    expect([drop.reasoning, drop.text]).toEqual(['', f.expected.text]);
    expect(passed.reasoning).toBe(f.expected.reasoning);
  });

  test('the bytes of a push stay valid once copied, whatever the next push writes', () => {
    const f = FIXTURES.find((x) => x.name === 'openai-basic')!;
    const o = new Oracle(f, 'openai');
    const r = new SseRelay({ from: 'openai' });
    const half = f.body.indexOf('data: {', f.body.length >> 1);
    const first = r.push(f.bytes.subarray(0, enc.encode(f.body.slice(0, half)).length)).slice();
    const second = r.push(f.bytes.subarray(enc.encode(f.body.slice(0, half)).length)).slice();
    expect(new TextDecoder().decode(concat([first, second]))).toBe(`${o.wire(o.frames.length)}data: [DONE]\n\n`);
  });
});

// ---------------------------------------------------------------------------------------------
// The official clients, over HTTP, reading what a gateway loop writes

describe('the official clients read the relayed stream of every fixture', () => {
  const sockets = new Map<Socket, Promise<void>>();
  /** What the handler threw (the response is then destroyed, so the client fails at once). */
  const handlerErrors: unknown[] = [];
  let port = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (s: string) => { body += s; });
    req.on('end', () => {
      void (async () => {
        const model = (JSON.parse(body) as { model: string }).model;
        const f = relayFixtures.find((x) => x.name === model);
        const to: Client | undefined = req.url === '/v1/chat/completions' ? 'openai' : req.url === '/v1/messages' ? 'anthropic' : undefined;
        if (req.method !== 'POST' || to === undefined || !f) {
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no such fixture","type":"test"}}');
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        // the gateway loop: upstream reads in small pieces, each relayed as it arrives
        const next = rng(SEED + f.bytes.length * 7);
        const r = new SseRelay({ from: f.format, to, model: model });
        for (const piece of cut(f.bytes, randomCuts(f.bytes, next, 48))) {
          const out = r.push(piece);
          if (out.length) res.write(Buffer.from(out)); // a copy: the view is reused by the next call
          await new Promise((w) => setTimeout(w, 1));
        }
        res.end(Buffer.from(r.flush()));
      })().catch((err: unknown) => {
        handlerErrors.push(err);
        res.destroy();
      });
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.set(s, new Promise<void>((resolve) => s.on('close', () => { sockets.delete(s); resolve(); })));
  });

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    const closed = new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    server.closeAllConnections();
    const closing = [...sockets.values()];
    for (const s of sockets.keys()) s.destroy();
    await Promise.all(closing);
    await expect(closed).resolves.toBeUndefined();
    expect(sockets.size).toBe(0);
    expect(server.listening).toBe(false);
  });

  test.each(relayFixtures.map((f) => [f.name, f] as const))('openai: chat.completions.stream() and finalChatCompletion(): %s', async (name, f) => {
    const o = new Oracle(f, 'openai');
    const want = o.expected();
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'test', maxRetries: 0, timeout: 20_000 });
    const stream = client.chat.completions.stream({ model: name, messages: [] });
    let thrown: unknown;
    try {
      const done = await stream.finalChatCompletion();
      const msg = done.choices[0].message;
      expect(msg.content ?? '').toBe(want.text);
      expect((msg.tool_calls ?? []).map((c) => ({ id: c.id, name: c.type === 'function' ? c.function.name : '', arguments: c.type === 'function' ? c.function.arguments : '' }))).toEqual(matching(want.calls!));
      expect(done.choices[0].finish_reason).toBe(want.finish);
    } catch (e) {
      thrown = e;
    }
    expect(handlerErrors).toEqual([]);
    if (o.done) expect(thrown).toBeUndefined();
    else {
      expect(thrown).toBeInstanceOf(OpenAI.APIError);
      const err = thrown as InstanceType<typeof OpenAI.APIError>;
      expect(err.code).toBe(f.expected.error!.code);
      if (f.expected.error!.message !== undefined) expect(err.message).toContain(f.expected.error!.message);
    }
  });

  test.each(relayFixtures.map((f) => [f.name, f] as const))('anthropic: messages.stream() and finalMessage(): %s', async (name, f) => {
    const o = new Oracle(f, 'anthropic');
    const want = o.expected();
    const client = new Anthropic({ baseURL: `http://127.0.0.1:${port}`, apiKey: 'test', maxRetries: 0, timeout: 20_000 });
    const stream = client.messages.stream({ model: name, max_tokens: 1024, messages: [{ role: 'user', content: 'x' }] });
    // arguments that are not JSON are the model's, relayed as they came: the SDK's parse of them throws
    const badArgs = want.calls!.some((c) => c.arguments !== '' && !isJson(c.arguments));
    let thrown: unknown;
    try {
      const msg = await stream.finalMessage();
      const text = msg.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
      const thinking = msg.content.flatMap((b) => (b.type === 'thinking' ? [b.thinking] : [])).join('');
      const calls = msg.content.flatMap((b) => (b.type === 'tool_use' ? [b] : []));
      expect(text).toBe(want.text);
      expect(thinking).toBe(want.reasoning);
      expect(calls.map((c) => ({ id: c.id, name: c.name }))).toEqual(matching(want.calls!).map((c) => ({ id: c.id, name: c.name })));
      // the SDK parses each call's input from its fragments
      expect(calls.map((c) => c.input)).toEqual(want.calls!.map((c) => (c.arguments === '' ? {} : JSON.parse(c.arguments))));
      expect(msg.stop_reason).toBe(want.finish);
      if (!o.passThrough && want.usage) expect(msg.usage).toMatchObject(want.usage);
    } catch (e) {
      thrown = e;
    }
    expect(handlerErrors).toEqual([]);
    if (o.done && !badArgs) expect(thrown).toBeUndefined();
    else if (o.done) expect(String(thrown)).toMatch(/JSON|Unexpected|token/i);
    else {
      expect(thrown).toBeInstanceOf(Error);
      const body = (thrown as { error?: { error?: { message?: string } } }).error?.error;
      if (f.expected.error!.message !== undefined) expect(body?.message ?? String((thrown as Error).message)).toContain(f.expected.error!.message);
    }
  });
});

describe('SseRelay.abort, read by the official clients', () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  const dec = (b: Uint8Array) => new TextDecoder().decode(b);
  type Fetch = (...args: unknown[]) => Promise<Response>;

  /** What each official client reads of the stream `fetch` answers: its text, and what it threw. */
  async function readByOpenAi(fetch: Fetch): Promise<{ text: string; thrown: unknown }> {
    const openai = new OpenAI({ apiKey: 'test', baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0, fetch });
    let text = '';
    try {
      const stream = await openai.chat.completions.create({ model: 'm', messages: [], stream: true });
      for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    } catch (thrown) {
      return { text, thrown };
    }
    return { text, thrown: undefined };
  }
  async function readByAnthropic(fetch: Fetch): Promise<{ text: string; thrown: unknown }> {
    const anthropic = new Anthropic({ apiKey: 'test', baseURL: 'http://127.0.0.1:9', maxRetries: 0, fetch });
    let text = '';
    try {
      const stream = await anthropic.messages.create({ model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'x' }], stream: true });
      for await (const e of stream) if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
    } catch (thrown) {
      return { text, thrown };
    }
    return { text, thrown: undefined };
  }

  test('each client throws its API error with the message, after the text before it', async () => {
    const message = 'the stream passed maxDuration (300 ms)';
    const body = (to: 'openai' | 'anthropic') => {
      const r = new SseRelay({ from: to === 'openai' ? 'anthropic' : 'openai', to });
      const out = dec(r.push(enc(to === 'openai' ? ANTHROPIC_HI : OPENAI_HI)));
      return out + dec(r.abort({ message, kind: 'timeout', code: 'ERR_MAX_DURATION' }));
    };
    const respond = (text: string) => async () => new Response(text, { headers: { 'content-type': 'text/event-stream' } });

    const o = await readByOpenAi(respond(body('openai')));
    expect(o.text).toBe('Hé ');
    expect(o.thrown).toBeInstanceOf(OpenAI.APIError);
    expect((o.thrown as InstanceType<typeof OpenAI.APIError>).message).toContain(message);
    expect((o.thrown as InstanceType<typeof OpenAI.APIError>).code).toBe('ERR_MAX_DURATION');

    const a = await readByAnthropic(respond(body('anthropic')));
    expect(a.text).toBe('Hé ');
    expect(a.thrown).toBeInstanceOf(Anthropic.APIError);
    expect((a.thrown as InstanceType<typeof Anthropic.APIError>).error).toEqual({ type: 'error', error: { type: 'timeout_error', message } });
  });

  test('an SseRelayStream whose upstream body drops mid-stream: each client throws its API error for the cut stream, after the text before it', async () => {
    // a fetch handler's relay, `new Response(upstream.body.pipeThrough(new SseRelayStream(…)))`, its upstream
    // erroring after its first text delta as a dropped connection does
    const respond = (to: 'openai' | 'anthropic') => async () => {
      const chunks = [enc(to === 'openai' ? ANTHROPIC_HI : OPENAI_HI)];
      const upstream = new ReadableStream<Uint8Array>({
        pull(c) {
          const x = chunks.shift();
          if (x) c.enqueue(x);
          else c.error(new Error('socket hang up'));
        },
      });
      const relay = new SseRelayStream({ from: to === 'openai' ? 'anthropic' : 'openai', to });
      return new Response(upstream.pipeThrough(relay), { headers: { 'content-type': 'text/event-stream' } });
    };
    const { message } = BROKE;

    const o = await readByOpenAi(respond('openai'));
    expect(o.text).toBe('Hé ');
    expect(o.thrown).toBeInstanceOf(OpenAI.APIError);
    expect((o.thrown as InstanceType<typeof OpenAI.APIError>).code).toBe('ERR_STREAM_TRUNCATED');
    expect((o.thrown as InstanceType<typeof OpenAI.APIError>).message).toContain(message);

    const a = await readByAnthropic(respond('anthropic'));
    expect(a.text).toBe('Hé ');
    expect(a.thrown).toBeInstanceOf(Anthropic.APIError);
    expect((a.thrown as InstanceType<typeof Anthropic.APIError>).error).toEqual({ type: 'error', error: { type: 'api_error', message } });
  });
});
