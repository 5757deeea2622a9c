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
import { SseRelay } from '../../bindings/index.js';
import { type ClientMessage, readAnthropic, readOpenAi, sse } from '../helpers/clients.js';
import { CallBook, FIXTURES, reference, type Fixture, type Frame, type ModelFormat, type Reference } from '../helpers/model-fixtures.js';
import { SEED, cut, randomCuts, rng } from '../helpers/random.js';

type Client = 'openai' | 'anthropic';
const enc = new TextEncoder();
const utf8Length = (s: string) => enc.encode(s).length;
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The finish reasons each format sends, in the clients' words (written here, apart from the library's tables). */
const WORDS: Record<ModelFormat, Record<string, [string, string]>> = {
  openai: { stop: ['stop', 'end_turn'], length: ['length', 'max_tokens'], tool_calls: ['tool_calls', 'tool_use'], content_filter: ['content_filter', 'refusal'] },
  anthropic: { end_turn: ['stop', 'end_turn'], max_tokens: ['length', 'max_tokens'], tool_use: ['tool_calls', 'tool_use'], stop_sequence: ['stop', 'stop_sequence'] },
  'openai-responses': { completed: ['stop', 'end_turn'], incomplete: ['length', 'max_tokens'] },
  ollama: { stop: ['stop', 'end_turn'], length: ['length', 'max_tokens'] },
  ddg: {},
};

/** The upstream's usage in one shape (input counts cached tokens), written here from each format's documentation. */
function counts(format: ModelFormat, u: Obj | undefined): { input: number; output: number; read?: number; write?: number; reasoning?: number } | undefined {
  if (u === undefined || format === 'ddg') return undefined;
  const n = (v: unknown) => (typeof v === 'number' ? v : undefined);
  const at = (o: unknown, k: string) => (isObj(o) ? o[k] : undefined);
  switch (format) {
    case 'openai': return { input: n(u.prompt_tokens) ?? 0, output: n(u.completion_tokens) ?? 0, read: n(at(u.prompt_tokens_details, 'cached_tokens')), reasoning: n(at(u.completion_tokens_details, 'reasoning_tokens')) };
    case 'openai-responses': return { input: n(u.input_tokens) ?? 0, output: n(u.output_tokens) ?? 0, read: n(at(u.input_tokens_details, 'cached_tokens')), reasoning: n(at(u.output_tokens_details, 'reasoning_tokens')) };
    case 'anthropic': {
      const read = n(u.cache_read_input_tokens);
      const write = n(u.cache_creation_input_tokens);
      return { input: (n(u.input_tokens) ?? 0) + (read ?? 0) + (write ?? 0), output: n(u.output_tokens) ?? 0, read, write };
    }
    case 'ollama': return { input: n(u.prompt_eval_count) ?? 0, output: n(u.eval_count) ?? 0 };
  }
}

/**
 * Whether an OpenAI client reads every frame as it is: no content array, no call without index,
 * no fragment of a call that never began (its first delta has no id).
 */
function canonical(frames: Frame[]): boolean {
  const begun = new Set<number>();
  for (const fr of frames) {
    if (fr.kind !== 'event' || fr.data === '[DONE]' || fr.role === 'bad' || fr.role === 'error') continue;
    const v = JSON.parse(fr.data) as Obj;
    for (const c of Array.isArray(v.choices) ? v.choices : []) {
      if (!isObj(c) || !isObj(c.delta)) continue;
      if (Array.isArray(c.delta.content)) return false;
      for (const t of Array.isArray(c.delta.tool_calls) ? c.delta.tool_calls : []) {
        if (!isObj(t) || typeof t.index !== 'number') return false;
        if (typeof t.id === 'string') begun.add(t.index);
        else if (!begun.has(t.index)) return false;
      }
    }
  }
  return true;
}

/** What a relay of a fixture must write, from the reference reading. */
class Oracle {
  readonly ref: Reference;
  readonly frames: Frame[];
  readonly done: boolean;
  /** Frames that reach the client: all but a failing one (and [DONE], which flush writes). */
  readonly relayed: Frame[];
  readonly passThrough: boolean;
  readonly canonical: boolean;

  constructor(readonly f: Fixture, readonly to: Client) {
    this.ref = reference(f.body, f.format);
    this.frames = this.ref.frames;
    this.done = this.ref.status === 'done';
    this.relayed = this.frames.filter((fr) => fr.role !== 'error' && fr.role !== 'bad' && !(fr.role === 'completion' && fr.data === '[DONE]'));
    this.passThrough = f.format === to;
    this.canonical = f.format !== 'openai' || canonical(this.frames);
  }

  /** The text a client reads of the first n frames. */
  textOf(n: number): string {
    const frames = this.frames.slice(0, n).filter((fr) => this.relayed.includes(fr));
    return frames.map((fr) => fr.text).join('');
  }

  /** Pass-through: the exact bytes of the relayed frames among the first n frames. */
  wire(n: number): string {
    let s = '';
    for (const fr of this.frames.slice(0, n)) {
      if (!this.relayed.includes(fr)) continue;
      if (fr.kind === 'comment') s += `: ${fr.comment}\n\n`;
      else s += `${this.to === 'anthropic' ? `event: ${fr.type}\n` : ''}${fr.data.split('\n').map((l) => `data: ${l}\n`).join('')}\n`;
    }
    return s;
  }

  /**
   * The client's tool calls. A call the upstream sent without an id gets one made by the relay. To
   * Anthropic each call is a tool_use block, and a fragment of a call whose block has ended (calls
   * that interleave) is written in a block of its own, with the same id.
   */
  calls(): { id: string | RegExp; name: string; arguments: string }[] {
    const made = this.to === 'openai' ? /^call_seam/ : /^toolu_seam/;
    const id = (c: { id: string }) => (c.id === '' && !(this.passThrough && this.canonical) ? made : c.id);
    if (this.to === 'openai' || this.passThrough) return this.ref.clientCalls.map((c) => ({ ...c, id: id(c) }));
    const book = new CallBook();
    const blocks: { id: string | RegExp; name: string; arguments: string }[] = [];
    let open: CallBook['calls'][number] | null = null;
    for (const fr of this.relayed) {
      for (const op of fr.calls) {
        const { call, began, text } = book.apply(op);
        if (op.op === 'end' || op.op === 'endAll') {
          if (open !== null && open.done) open = null;
          continue;
        }
        if (call === undefined || call.server) continue;
        if (began || (open !== call && text !== '')) {
          blocks.push({ id: id(call), name: call.name, arguments: '' });
          open = call;
        }
        if (open === call) {
          const b = blocks[blocks.length - 1];
          b.name = call.name;
          b.arguments += text;
        }
        if (op.op === 'whole') open = null;
      }
    }
    return blocks;
  }

  /** The message the client ends with. */
  expected(): Partial<Omit<ClientMessage, 'calls'>> & { calls?: ReturnType<Oracle['calls']> } {
    const { f, ref, to } = this;
    const calls = this.calls();
    const out: ReturnType<Oracle['expected']> = { text: this.textOf(this.frames.length), reasoning: ref.reasoning, calls, done: this.done };
    if (this.passThrough) {
      out.finish = to === 'openai' ? lastFinish(this.relayed) : (ref.finishReason ?? null);
      return out;
    }
    if (this.done) {
      const w = ref.finishReason === undefined ? undefined : WORDS[f.format][ref.finishReason];
      let finish = w === undefined ? ref.finishReason ?? (to === 'openai' ? 'stop' : 'end_turn') : w[to === 'openai' ? 0 : 1];
      if (calls.length) finish = to === 'openai' ? 'tool_calls' : 'tool_use';
      else if (finish === 'tool_calls' || finish === 'tool_use') finish = to === 'openai' ? 'stop' : 'end_turn';
      out.finish = finish;
      const u = counts(f.format, ref.usage);
      if (to === 'openai') {
        out.usage = u === undefined ? null : {
          prompt_tokens: u.input, completion_tokens: u.output, total_tokens: u.input + u.output,
          ...(u.read !== undefined ? { prompt_tokens_details: { cached_tokens: u.read } } : {}),
          ...(u.reasoning !== undefined ? { completion_tokens_details: { reasoning_tokens: u.reasoning } } : {}),
        };
      } else {
        out.usage = u === undefined ? { input_tokens: 0, output_tokens: 0 } : {
          input_tokens: u.input - (u.read ?? 0) - (u.write ?? 0), output_tokens: u.output,
          ...(u.read !== undefined ? { cache_read_input_tokens: u.read } : {}), ...(u.write !== undefined ? { cache_creation_input_tokens: u.write } : {}),
        };
      }
    } else {
      out.finish = null;
    }
    return out;
  }

  seen(bytes: number): [number, number] {
    let lo = 0;
    while (lo < this.frames.length && !this.frames[lo].atFlush && this.frames[lo].end <= bytes) lo++;
    const next = this.frames[lo];
    return [lo, next && !next.atFlush && next.crlf && next.end - 1 === bytes ? lo + 1 : lo];
  }
}

/** The finish_reason of the last relayed OpenAI chunk that had one. */
function lastFinish(frames: Frame[]): string | null {
  let finish: string | null = null;
  for (const fr of frames) {
    if (fr.kind !== 'event' || fr.data === '[DONE]' || fr.role === 'bad' || fr.role === 'error') continue;
    const v = JSON.parse(fr.data) as Obj;
    for (const c of Array.isArray(v.choices) ? v.choices : []) if (isObj(c) && (c.index ?? 0) === 0 && typeof c.finish_reason === 'string') finish = c.finish_reason;
  }
  return finish;
}

const concat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
};

/** The client's reading; a pass-through OpenAI stream's chunks are the upstream's own (not checked for the fields a relay writes). */
const read = (to: Client, bytes: Uint8Array, upstreams = false) => (to === 'openai' ? readOpenAi(bytes, !upstreams) : readAnthropic(bytes));

/** Expected calls with a made id as a pattern. */
const matching = (calls: { id: string | RegExp; name: string; arguments: string }[]) => calls.map((c) => ({ ...c, id: c.id instanceof RegExp ? expect.stringMatching(c.id) : c.id }));

/** Whether a text is one JSON value. */
const isJson = (t: string) => { try { JSON.parse(t); return true; } catch { return false; } };

/** Feeds the chunks (copying each returned view), checking what was written after every push; then flushes. */
function relay(o: Oracle, chunks: Uint8Array[], why: string): { r: SseRelay; pushed: Uint8Array[]; flushed: Uint8Array } {
  const r = new SseRelay({ from: o.f.format, to: o.to, id: o.to === 'openai' ? 'chatcmpl-t' : 'msg_t', model: 'm' });
  expect(r.status, why).toBe('open');
  const pushed: Uint8Array[] = [];
  let bytes = 0;
  for (let k = 0; k < chunks.length; k++) {
    bytes += chunks[k].length;
    const out = r.push(chunks[k]);
    expect(out, why).toBeInstanceOf(Uint8Array);
    pushed.push(out.slice());
    const [lo, hi] = o.seen(bytes);
    // whole events only, and the text of the frames complete so far
    const text = read(o.to, concat(pushed), o.passThrough).text;
    const want = [o.textOf(lo), o.textOf(hi)];
    if (!want.includes(text)) expect(text, `${why}: text written after push ${k} (${bytes} bytes in)`).toBe(want[0]);
  }
  return { r, pushed, flushed: r.flush().slice() };
}

function settle(o: Oracle, chunks: Uint8Array[], why: string): void {
  const { r, pushed, flushed } = relay(o, chunks, why);
  const e = o.f.expected;
  const all = concat([...pushed, flushed]);
  const m = read(o.to, all, o.passThrough);
  const want = o.expected();
  for (const k of Object.keys(want) as (keyof ClientMessage)[]) {
    if (k === 'calls') {
      // to Anthropic a call with no fragments has its start's input, `{}`
      const args = (calls: { arguments: string }[]) => (o.to === 'anthropic' ? calls.map((c) => ({ ...c, arguments: c.arguments === '' ? '{}' : c.arguments })) : calls);
      expect(args(m.calls), `${why}: client's calls`).toEqual(args(matching(want.calls!)));
    }
    else expect(m[k], `${why}: client's ${k}`).toEqual(want[k]);
  }
  if (o.done) {
    expect(m.error, `${why}: no error`).toBeNull();
  } else {
    expect(m.error, `${why}: the error event`).not.toBeNull();
    const err = m.error!;
    if (o.to === 'openai') {
      expect(err.code, why).toBe(e.error!.code);
      expect(typeof err.type === 'string' && err.type.length > 0, why).toBe(true);
    } else {
      expect(err.type, why).toMatch(/_error$/);
    }
    if (e.error!.message !== undefined) expect(err.message, why).toContain(e.error!.message);
    expect(sse(flushed).events.length, `${why}: flush writes the error event`).toBe(1);
  }
  if (o.passThrough && o.canonical) {
    // byte for byte: the relayed frames, then the completion or the error event
    expect(new TextDecoder().decode(concat(pushed)), `${why}: pass-through`).toBe(o.wire(o.frames.length));
    if (o.done) {
      const tail = new TextDecoder().decode(flushed);
      const end = o.to === 'openai' ? 'data: [DONE]\n\n' : '';
      if (o.frames[o.frames.length - 1].atFlush) expect(tail.endsWith(end), why).toBe(true);
      else expect(tail, `${why}: flush after a completed upstream`).toBe(end);
    }
  }
  if (!o.passThrough) {
    // each text is the provider's JSON string literal, copied as it was
    const field = o.to === 'openai' ? 'content' : 'text';
    const literals = sse(all).events.flatMap((ev) => [...ev.data.matchAll(new RegExp(`"${field}"\\s*:\\s*("(?:[^"\\\\]|\\\\.)*")`, 'g'))].map((x) => x[1]));
    expect(literals.filter((l) => l !== '""'), `${why}: literals`).toEqual(o.relayed.flatMap((fr) => fr.literals).filter((l) => l !== '""'));
  }
  expect(r.textBytes, `${why}: textBytes`).toBe(utf8Length(o.relayed.map((fr) => fr.text).join('')));
  expect(r.status, `${why}: status`).toBe(e.status);
  expect(r.finishReason, `${why}: finishReason`).toBe(e.finishReason);
  expect(r.usage, `${why}: usage`).toEqual(e.usage);
}

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
    expect(new TextDecoder().decode(concat([first, second]))).toBe(o.wire(o.frames.length));
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
