// SseRelay against the fixtures (test/helpers/model-fixtures.ts), from every format to OpenAI's
// Chat Completions stream: fed whole, cut in two at every byte, dripped, cut at random (seeded).
// The client's bytes are read back by eventsource-parser and JSON.parse:
// - from openai the events pass through byte for byte (`data: <data>\n\n`, comments as
//   `: <text>\n\n`), and after every push the bytes so far are those of the frames complete so far;
// - from the other formats: chat.completion.chunk objects whose contents joined are the answer
//   (each content the provider's JSON string literal as it was), then one chunk with the mapped
//   finish_reason when the upstream completed;
// - the end: `data: [DONE]` exactly when the upstream completed, otherwise one error event in
//   OpenAI's shape, never [DONE]; textBytes, status, finishReason and usage as ModelStream's.
// Then the official openai client reads a relayed stream of every fixture from a local HTTP server.
//
// Decisions beyond the contract's words (the implementation follows the same):
// - push() never throws for the upstream's errors (a provider error, a bad event, a plain error
//   body): it returns the events before it and stops; flush() writes the one error event. The
//   upstream's own error event is not passed through.
// - The error event: {"error":{"message","type","code"}} with message containing the provider's
//   message, type a non-empty string, code the ModelStreamError code (ERR_PROVIDER, ERR_BAD_EVENT,
//   ERR_STREAM_TRUNCATED).
// - Translated finish reasons: anthropic end_turn→stop, max_tokens→length, tool_use→tool_calls;
//   ollama stop→stop, length→length; openai-responses completed→stop; ddg (none)→stop. The
//   finish chunk is written only when the upstream completed, right before [DONE]; it has no
//   content. Translated output holds nothing else (no role or usage chunk); empty deltas may be
//   dropped. Anthropic pings write nothing. The relay follows choice 0.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createParser } from 'eventsource-parser';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SseRelay } from '../../bindings/index.js';
import { FIXTURES, reference, type Fixture, type Frame, type ModelFormat, type Reference } from '../helpers/model-fixtures.js';
import { SEED, cut, randomCuts, rng } from '../helpers/random.js';

const enc = new TextEncoder();
const utf8Length = (s: string) => enc.encode(s).length;

const FINISH: Record<Exclude<ModelFormat, 'openai'>, Record<string, string>> = {
  anthropic: { end_turn: 'stop', max_tokens: 'length', tool_use: 'tool_calls' },
  ollama: { stop: 'stop', length: 'length' },
  'openai-responses': { completed: 'stop' },
  ddg: {},
};
const mapped = (format: Exclude<ModelFormat, 'openai'>, reason: string | undefined) => (reason === undefined ? 'stop' : FINISH[format][reason]);

/** What a relay of a fixture must write, from the reference reading. */
class Oracle {
  readonly ref: Reference;
  readonly frames: Frame[];
  readonly done: boolean;
  /** Frames that reach the client: all but a failing one (and [DONE], which flush writes). */
  readonly relayed: Frame[];
  /** The answer the relay writes: the raw deltas of the relayed frames. */
  readonly text: string;
  /** What a client reading choices[0].delta.content gets (from openai: positional choices[0]). */
  readonly clientText: string;

  constructor(readonly f: Fixture) {
    this.ref = reference(f.body, f.format);
    this.frames = this.ref.frames;
    this.done = this.ref.status === 'done';
    this.relayed = this.frames.filter((fr) => fr.role !== 'error' && fr.role !== 'bad' && !(fr.role === 'completion' && fr.data === '[DONE]'));
    this.text = this.relayed.map((fr) => fr.text).join('');
    this.clientText = f.format === 'openai' ? this.relayed.map((fr) => fr.clientContent).join('') : this.text;
  }

  /** openai: the exact bytes of the relayed frames among the first n frames. */
  wire(n: number): string {
    let s = '';
    for (const fr of this.frames.slice(0, n)) {
      if (!this.relayed.includes(fr)) continue;
      s += fr.kind === 'comment' ? `: ${fr.comment}\n\n` : `data: ${fr.data}\n\n`;
    }
    return s;
  }

  /** Translated formats: the raw text of the relayed frames among the first n frames. */
  textOf(n: number): string {
    return this.frames.slice(0, n).filter((fr) => this.relayed.includes(fr)).map((fr) => fr.text).join('');
  }

  seen(bytes: number): [number, number] {
    let lo = 0;
    while (lo < this.frames.length && !this.frames[lo].atFlush && this.frames[lo].end <= bytes) lo++;
    const next = this.frames[lo];
    return [lo, next && !next.atFlush && next.crlf && next.end - 1 === bytes ? lo + 1 : lo];
  }
}

/** The SSE the client reads: each event's data, and the comments, in order. */
function readClient(bytes: Uint8Array): { data: string[]; comments: string[]; items: ({ data: string } | { comment: string })[] } {
  const data: string[] = [];
  const comments: string[] = [];
  const items: ({ data: string } | { comment: string })[] = [];
  const p = createParser({
    onEvent: (e) => { expect(e.event).toBeUndefined(); data.push(e.data); items.push({ data: e.data }); },
    onComment: (c) => { comments.push(c); items.push({ comment: c }); },
  });
  p.feed(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  return { data, comments, items };
}

const concat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
};

/** Feeds the chunks (copying each returned view), checking what was written after every push. */
function relay(o: Oracle, chunks: Uint8Array[], why: string): { r: SseRelay; pushed: Uint8Array[]; flushed: Uint8Array } {
  const r = new SseRelay({ from: o.f.format });
  expect(r.status, why).toBe('open');
  expect(r.textBytes, why).toBe(0);
  const pushed: Uint8Array[] = [];
  let so = '';
  let bytes = 0;
  for (let k = 0; k < chunks.length; k++) {
    bytes += chunks[k].length;
    const out = r.push(chunks[k]);
    expect(out, why).toBeInstanceOf(Uint8Array);
    const copy = out.slice();
    pushed.push(copy);
    const [lo, hi] = o.seen(bytes);
    if (o.f.format === 'openai') {
      so += new TextDecoder().decode(copy);
      const want = [o.wire(lo), o.wire(hi)];
      if (!want.includes(so)) expect(so, `${why}: bytes written after push ${k} (${bytes} bytes in)`).toBe(want[0]);
    } else {
      // each push writes whole events: read them on their own
      for (const d of readClient(copy).data) {
        const chunk = JSON.parse(d) as { choices: { delta: { content?: string } }[] };
        so += chunk.choices[0].delta.content ?? '';
      }
      const want = [o.textOf(lo), o.textOf(hi)];
      if (!want.includes(so)) expect(so, `${why}: text written after push ${k} (${bytes} bytes in)`).toBe(want[0]);
    }
  }
  const flushed = r.flush().slice();
  return { r, pushed, flushed };
}

interface ErrorEvent { error: { message: string; type: string; code: string } }

function checkErrorEvent(o: Oracle, data: string, why: string): ErrorEvent {
  const v = JSON.parse(data) as ErrorEvent;
  expect(Object.keys(v), why).toEqual(['error']);
  expect(typeof v.error.message, why).toBe('string');
  expect(v.error.message.length, why).toBeGreaterThan(0);
  expect(typeof v.error.type, why).toBe('string');
  expect(v.error.type.length, why).toBeGreaterThan(0);
  expect(v.error.code, why).toBe(o.f.expected.error!.code);
  if (o.f.expected.error!.message !== undefined) expect(v.error.message, why).toContain(o.f.expected.error!.message);
  return v;
}

function settle(o: Oracle, chunks: Uint8Array[], why: string): void {
  const { r, pushed, flushed } = relay(o, chunks, why);
  const e = o.f.expected;
  const all = concat([...pushed, flushed]);
  const client = readClient(all);
  expect(client.comments, `${why}: comments`).toEqual(e.comments);
  const last = client.data[client.data.length - 1];
  if (o.done) {
    const tail = new TextDecoder().decode(flushed);
    // a completion read at flush (an unterminated last line) comes with that line's output
    if (o.frames[o.frames.length - 1].atFlush) expect(tail.endsWith('data: [DONE]\n\n'), `${why}: flush ends with [DONE]`).toBe(true);
    else expect(tail, `${why}: flush after a completed upstream`).toBe('data: [DONE]\n\n');
    expect(last, why).toBe('[DONE]');
  } else {
    expect(client.data.filter((d) => d === '[DONE]'), `${why}: no [DONE]`).toEqual([]);
    expect(readClient(flushed).data.length, `${why}: flush writes the error event`).toBe(1);
    checkErrorEvent(o, last, why);
    expect(client.data.filter((d) => d.startsWith('{"error"') || d.includes('"error":{')).length, `${why}: one error event`).toBe(1);
  }
  const events = client.data.slice(0, -1);
  if (o.f.format === 'openai') {
    // byte for byte: the relayed frames, then [DONE] or the error event
    const head = new TextDecoder().decode(concat(pushed));
    expect(head, `${why}: pass-through`).toBe(o.wire(o.frames.length));
    expect(events, why).toEqual(o.relayed.filter((fr) => fr.kind === 'event').map((fr) => fr.data));
  } else {
    const format = o.f.format;
    const chunksOut = events.map((d) => JSON.parse(d) as {
      id: unknown; object: unknown; created: unknown; model: unknown;
      choices: { index: number; delta: { content?: unknown }; finish_reason: unknown }[];
    });
    let text = '';
    chunksOut.forEach((c, k) => {
      expect(c.object, why).toBe('chat.completion.chunk');
      expect(typeof c.id, why).toBe('string');
      expect(typeof c.created, why).toBe('number');
      expect(typeof c.model, why).toBe('string');
      expect(c.choices.length, why).toBe(1);
      expect(c.choices[0].index, why).toBe(0);
      const finishing = o.done && k === chunksOut.length - 1;
      if (finishing) {
        expect(c.choices[0].finish_reason, `${why}: finish_reason`).toBe(mapped(format, e.finishReason));
        expect(c.choices[0].delta.content ?? '', why).toBe('');
      } else {
        expect(c.choices[0].finish_reason, why).toBeNull();
        expect(typeof c.choices[0].delta.content, why).toBe('string');
        text += c.choices[0].delta.content as string;
      }
    });
    if (o.done) expect(chunksOut.length, `${why}: the finish chunk`).toBeGreaterThan(0);
    expect(text, `${why}: text`).toBe(o.text);
    // each content is the provider's JSON string literal, copied as it was
    const literals = events.flatMap((d) => [...d.matchAll(/"content"\s*:\s*("(?:[^"\\]|\\.)*")/g)].map((m) => m[1]));
    const want = o.relayed.flatMap((fr) => fr.literals);
    expect(literals.filter((l) => l !== '""'), `${why}: literals`).toEqual(want.filter((l) => l !== '""'));
  }
  expect(r.textBytes, `${why}: textBytes`).toBe(utf8Length(o.text));
  expect(r.status, `${why}: status`).toBe(e.status);
  expect(r.finishReason, `${why}: finishReason`).toBe(e.finishReason);
  expect(r.usage, `${why}: usage`).toEqual(e.usage);
}

// The relay has no choice option: it follows choice 0, so the choice: 1 reading of a body is ModelStream's alone.
const relayFixtures = FIXTURES.filter((f) => f.choice === undefined);

describe.each(relayFixtures.map((f) => [f.name, f] as const))('SseRelay: %s', (name, f) => {
  const o = new Oracle(f);

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
    const a = new SseRelay({ from: 'anthropic' });
    const b = new SseRelay({ from: 'anthropic', to: 'openai' });
    const texts = [a, b].map((r) => {
      const all = concat([r.push(f.bytes).slice(), r.flush().slice()]);
      return readClient(all).data.slice(0, -2).map((d) => (JSON.parse(d) as { choices: { delta: { content: string } }[] }).choices[0].delta.content).join('');
    });
    expect(texts).toEqual([f.expected.text, f.expected.text]);
  });

  test('an unknown format is a TypeError', () => {
    expect(() => new SseRelay({ from: 'openai-chat' as ModelFormat })).toThrow(TypeError);
    expect(() => new SseRelay({ from: 'openai', to: 'anthropic' as 'openai' })).toThrow(TypeError);
  });

  test('the bytes of a push stay valid once copied, whatever the next push writes', () => {
    const f = FIXTURES.find((x) => x.name === 'openai-basic')!;
    const o = new Oracle(f);
    const r = new SseRelay({ from: 'openai' });
    const half = f.body.indexOf('data: {', f.body.length >> 1);
    const first = r.push(f.bytes.subarray(0, enc.encode(f.body.slice(0, half)).length)).slice();
    const second = r.push(f.bytes.subarray(enc.encode(f.body.slice(0, half)).length)).slice();
    expect(new TextDecoder().decode(concat([first, second]))).toBe(o.wire(o.frames.length));
  });
});

// ---------------------------------------------------------------------------------------------
// The official client, over HTTP, reading what a gateway loop writes

describe('the openai client reads the relayed stream of every fixture', () => {
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
        if (req.method !== 'POST' || req.url !== '/v1/chat/completions' || !f) {
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no such fixture","type":"test"}}');
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        // the gateway loop: upstream reads in small pieces, each relayed as it arrives
        const next = rng(SEED + f.bytes.length * 7);
        const r = new SseRelay({ from: f.format });
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

  test.each(relayFixtures.map((f) => [f.name, f] as const))('%s', async (name, f) => {
    const o = new Oracle(f);
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'test', maxRetries: 0, timeout: 20_000 });
    const stream = await client.chat.completions.create({ model: name, messages: [], stream: true });
    let text = '';
    let thrown: unknown;
    try {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    } catch (e) {
      thrown = e;
    }
    expect(handlerErrors).toEqual([]);
    expect(text).toBe(o.clientText);
    if (o.done) expect(thrown).toBeUndefined();
    else {
      expect(thrown).toBeInstanceOf(OpenAI.APIError);
      const err = thrown as InstanceType<typeof OpenAI.APIError>;
      expect(err.code).toBe(f.expected.error!.code);
      if (f.expected.error!.message !== undefined) expect(err.message).toContain(f.expected.error!.message);
    }
  });
});
