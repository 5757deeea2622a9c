// The ends of a stream through the gateway, each on real sockets with its exact outcome: a client
// that leaves in the same tick as the upstream's end or head (in either order, and after the end
// before it took its answer); a client that leaves mid-answer (aborted, never the upstream's
// truncation); backpressure when the stream ends (the client leaves, or the upstream closes or
// resets, while the gateway waits for 'drain'; a client held back past bodyTimeout); an upstream
// whose answer breaks off (a stream, in each client's format; a whole answer; an error status's
// body; and how each counts); and, for the fetch handler's pipe (SseRelayStream), an upstream body
// that errors with no reason, a reader cancelled with none, and preventAbort.
//
// A moment inside the gateway is reached without timing: the gateway's connections to its upstream
// are seen as they open (net.connect's diagnostics channel), so that a listener ahead of the
// gateway's own sees the read that ends the upstream's body, and the gateway's side of each client
// connection is taken from its server's 'request' event. Destroying that socket is what Node does
// when it reads the client's reset.
import diagnostics from 'node:diagnostics_channel';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { SseRelayStream, coreMemoryUsed } from 'seam-stream';
import { afterEach, describe, expect, test } from 'vitest';
import { chat, closeGateway, metricsAt, nothingLeft, post, startGateway, type Running } from './support.js';

const enc = new TextEncoder();
const b = (s: string) => enc.encode(s);
const chunk = (content: string) => `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]}\n\n`;
const DONE = 'data: [DONE]\n\n';

let g: Running | undefined;
let unsubscribe: (() => void) | undefined;
afterEach(async () => {
  unsubscribe?.();
  unsubscribe = undefined;
  await closeGateway(g);
  g = undefined;
});

/** Calls `each` with each connection the gateway opens to its upstream, once it is connected (before the request is written). */
function upstreamSockets(r: Running, each: (s: Socket) => void): void {
  const port = Number(new URL(r.up.url).port);
  const on = (m: unknown) => {
    const s = (m as { socket: Socket }).socket;
    s.once('connect', () => { if (s.remotePort === port) each(s); });
  };
  diagnostics.subscribe('net.client.socket', on);
  unsubscribe = () => diagnostics.unsubscribe('net.client.socket', on);
}

interface Served { res: ServerResponse; late: string[] }

/**
 * The gateway's side of each client's answer, as its handler gets it, with `late`: the writes the
 * gateway made to it after its connection was destroyed.
 */
function served(r: Running): Served[] {
  const all: Served[] = [];
  r.gw.server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    const s: Served = { res, late: [] };
    all.push(s);
    for (const k of ['writeHead', 'write', 'end'] as const) {
      const f = res[k] as (...a: unknown[]) => unknown;
      (res as unknown as Record<string, unknown>)[k] = function (this: ServerResponse, ...a: unknown[]) {
        if (res.destroyed || res.socket?.destroyed === true) s.late.push(k);
        return f.apply(this, a);
      };
    }
  });
  return all;
}

/** POSTs a streamed request (`path`: the client's API); resolves every byte the client got before its connection ended, and how it ended. */
function stream(url: string, model: string, path = '/v1/chat/completions'): { got: Promise<{ body: string; how: string }>; req: ReturnType<typeof request> } {
  const payload = Buffer.from(JSON.stringify({ ...chat(model), max_tokens: 16 }));
  let body = '';
  let req!: ReturnType<typeof request>;
  const got = new Promise<{ body: string; how: string }>((resolve) => {
    req = request(`${url}${path}`, { method: 'POST', agent: false, headers: { 'content-length': payload.length } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (s: string) => { body += s; });
      res.on('end', () => resolve({ body, how: 'end' }));
      res.on('error', (e: NodeJS.ErrnoException) => resolve({ body, how: e.code ?? e.message }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ body, how: e.code ?? e.message }));
    req.end(payload);
  });
  return { got, req };
}

/** Of `counted`'s: how the streams ended, and the upstream's truncations and errors. */
/**
 * An upstream (model `m`) that answers its head and `first`, then, once the returned release() is
 * called, ends as `end` ends it.
 */
function heldUpstream(r: Running, first: string, end: (res: ServerResponse) => void): () => void {
  let release!: () => void;
  const released = new Promise<void>((resolve) => { release = resolve; });
  r.up.scripts.set('m', {
    write: async (res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(first);
      await released;
      end(res);
    },
  });
  return release;
}

const outcomes = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => /^llm_(streams_total|upstream_truncated_total|provider_errors_total|stream_final_mismatch_total)/.test(k)));

/** The counters of a gateway's metrics that are not 0 (histogram buckets left out). */
async function counted(r: Running): Promise<Record<string, number>> {
  const m = await metricsAt(`${r.url}/metrics`);
  // (less the connection that asked for them)
  return Object.fromEntries([...m].filter(([k, v]) => v !== 0 && !k.includes('_bucket') && !k.startsWith('llm_stream_pending_bytes') && k !== 'gateway_connections_open'));
}

describe('a client that leaves in the same tick as the upstream\'s end', () => {
  /**
   * An upstream that writes one event, then (when released) its last event, [DONE] and the end of
   * its body; `leave` runs in the tick the gateway reads that end: before the gateway's listener
   * sees the read, or right after it.
   */
  async function race(order: 'before' | 'after') {
    const r = g = await startGateway();
    const answers = served(r);
    upstreamSockets(r, (s) => {
      s.prependListener('data', (d: Buffer) => {
        if (!d.toString('latin1').endsWith('0\r\n\r\n')) return; // (the read that ends the chunked body)
        const leave = () => answers[0].res.socket!.destroy();
        if (order === 'before') leave(); else process.nextTick(leave);
      });
    });
    const release = heldUpstream(r, chunk('un '), (res) => res.end(chunk('deux') + DONE));
    const { got } = stream(r.url, 'm');
    await expect.poll(() => answers[0]?.res.headersSent === true && answers[0].res.writableLength === 0 && r.gw.stats().streams === 1).toBe(true);
    release();
    const client = await got;
    await nothingLeft(r);
    return { client, late: answers[0].late, metrics: await counted(r), log: r.log };
  }

  test('the client\'s reset read first: the upstream\'s end is not relayed to a closed socket, and the stream counts as aborted', async () => {
    const { client, late, metrics, log } = await race('before');
    expect(client).toEqual({ body: chunk('un '), how: 'ECONNRESET' });
    expect(late).toEqual([]); // nothing written to the closed connection
    expect(log).toEqual([]);
    expect(metrics).toEqual({
      'llm_streams_total{status="aborted"}': 1,
      llm_bytes_in_total: b(chunk('un ')).length, // (the last read was not relayed: its client had gone)
      llm_bytes_out_total: b(chunk('un ')).length,
      llm_events_in_total: 1,
      llm_events_out_total: 1,
    });
  });

  test('the upstream\'s end read first: the client has its whole answer, and the stream counts as done', async () => {
    const { client, late, metrics, log } = await race('after');
    expect(client).toEqual({ body: chunk('un ') + chunk('deux') + DONE, how: 'end' });
    expect(late).toEqual([]);
    expect(log).toEqual([]);
    const all = b(chunk('un ') + chunk('deux') + DONE).length;
    expect(metrics).toEqual({
      'llm_streams_total{status="done"}': 1, llm_bytes_in_total: all, llm_bytes_out_total: all, llm_events_in_total: 3, llm_events_out_total: 3,
    });
  });

  test('a whole answer read from a stream whose upstream keeps its connection open after its completion: answered at the completion, not at bodyTimeout (a 504)', async () => {
    const r = g = await startGateway({ bodyTimeout: 2000 });
    let closed = false;
    upstreamSockets(r, (s) => { s.once('close', () => { closed = true; }); });
    heldUpstream(r, chunk('un ') + DONE, (res) => res.end()); // (never released: the body does not end)
    const res = await post(r.url, { ...chat('m', false), max_tokens: 16 }, '/v1/messages');
    const body = JSON.parse(res.body.toString('utf8'));
    expect([res.status, body.content, body.stop_reason]).toEqual([200, [{ type: 'text', text: 'un ' }], 'end_turn']);
    await expect.poll(() => closed).toBe(true);
    await nothingLeft(r);
    expect(r.log).toEqual([]);
    expect(outcomes(await counted(r))).toEqual({ 'llm_streams_total{status="done"}': 1 });
  });

  test('an upstream that keeps its connection open after its completion: the client\'s answer ends at the completion, and the upstream connection is closed', async () => {
    const r = g = await startGateway();
    let closed = false;
    upstreamSockets(r, (s) => { s.once('close', () => { closed = true; }); });
    heldUpstream(r, chunk('un ') + DONE, (res) => res.end()); // (never released: the body does not end)
    const { got } = stream(r.url, 'm');
    const client = await got;
    expect(client).toEqual({ body: chunk('un ') + DONE, how: 'end' });
    await expect.poll(() => closed).toBe(true);
    await nothingLeft(r);
    expect(r.log).toEqual([]);
    const all = b(chunk('un ') + DONE).length;
    expect(await counted(r)).toEqual({
      'llm_streams_total{status="done"}': 1, llm_bytes_in_total: all, llm_bytes_out_total: all, llm_events_in_total: 2, llm_events_out_total: 2,
    });
  });

  test.each(['with its first event', 'alone'] as const)('the client\'s reset read in the tick the upstream\'s head arrives (%s): nothing written, the upstream request aborted', async (what) => {
    const r = g = await startGateway();
    const answers = served(r);
    upstreamSockets(r, (s) => {
      s.prependListener('data', (d: Buffer) => {
        if (d.toString('latin1').startsWith('HTTP/1.1 200')) answers[0].res.socket!.destroy();
      });
    });
    let upstreamClosed!: Promise<void>;
    r.up.scripts.set('m', {
      write: (res: ServerResponse) => {
        upstreamClosed = new Promise((resolve) => res.on('close', resolve));
        // the head (and the first event) in one write, then nothing: a model thinking
        res.socket!.write(`HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n${what === 'alone' ? '' : `${b(chunk('un ')).length.toString(16)}\r\n${chunk('un ')}\r\n`}`);
      },
    });
    const { got } = stream(r.url, 'm');
    expect(await got).toEqual({ body: '', how: 'ECONNRESET' });
    await upstreamClosed;
    await nothingLeft(r);
    expect(answers[0].late).toEqual([]);
    expect(r.log).toEqual([]);
    expect(await counted(r)).toEqual({ 'llm_streams_total{status="aborted"}': 1 });
  });

  // (on Node 20 the response also emits 'finish' when the client's reset destroys the connection
  // with the answer's end in its buffer: the gateway must not count that as done)
  test('a client that leaves after the upstream\'s end, its answer still in the gateway\'s buffer: aborted, not done', async () => {
    // (a high-water mark over the whole answer: the gateway reads it all, and holds what the connection does not take)
    const r = g = await startGateway({ highWaterMark: 64 * 1024 * 1024 });
    const answers = served(r);
    const event = chunk('z'.repeat(4000));
    const n = 4096; // 16 MiB: more than the connection's buffers on loopback take from a client that reads nothing
    r.up.scripts.set('m', {
      write: async (res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (let i = 0; i < n; i += 16) if (!res.write(event.repeat(16))) await new Promise((w) => res.once('drain', w));
        res.end(DONE);
      },
    });
    const { req } = stream(r.url, 'm');
    req.on('response', (res: IncomingMessage) => res.pause()); // the client reads nothing
    await expect.poll(() => answers[0]?.res.writableEnded === true, { timeout: 30_000 }).toBe(true);
    expect(answers[0].res.writableLength).toBeGreaterThan(0); // the end is written, not taken
    req.destroy();
    await nothingLeft(r);
    expect(answers[0].late).toEqual([]);
    const m = await counted(r);
    expect(Object.fromEntries(Object.entries(m).filter(([k]) => k.startsWith('llm_streams_total')))).toEqual({ 'llm_streams_total{status="aborted"}': 1 });
  });
});

// A stream the client left is aborted, and nothing else: the gateway closes its upstream
// connection then, and that is not the upstream's truncation (llm_upstream_truncated_total) nor
// its error, whatever the client asked for and wherever the upstream was.
describe('a client that leaves mid-answer: aborted, not the upstream\'s truncation', () => {
  const cases = [
    ['a stream, to an OpenAI client', '/v1/chat/completions', true, 'openai'],
    ['a stream, to an Anthropic client', '/v1/messages', true, 'openai'],
    ['a whole answer read from the stream (an Anthropic client)', '/v1/messages', false, 'openai'],
    ['a whole answer passed through (an OpenAI client)', '/v1/chat/completions', false, 'json'],
  ] as const;

  test.each(cases)('%s, the upstream silent after its first bytes', async (_, path, streamed, upstream) => {
    const r = g = await startGateway();
    const answers = served(r);
    const gateway = new Map<number, Socket>();
    upstreamSockets(r, (s) => gateway.set(s.localPort!, s));
    let sent!: Socket;
    r.up.scripts.set('m', {
      write: (res: ServerResponse) => {
        sent = res.socket!;
        if (upstream === 'json') res.writeHead(200, { 'content-type': 'application/json', 'content-length': 200 }).write('{"id":"chatcmpl-1","object":"chat.com');
        else res.writeHead(200, { 'content-type': 'text/event-stream' }).write(chunk('Bon'));
        // and then nothing: a model thinking
      },
    });
    const payload = Buffer.from(JSON.stringify({ ...chat('m', streamed), max_tokens: 16 }));
    const req = request(`${r.url}${path}`, { method: 'POST', agent: false, headers: { 'content-length': payload.length } });
    req.on('error', () => {});
    req.end(payload);
    // (the gateway has read what the upstream wrote, and a stream has handed its first event to the client's connection)
    await expect.poll(() => sent !== undefined && gateway.get(sent.remotePort!)?.bytesRead === sent.bytesWritten
      && (!streamed || (answers[0]?.res.headersSent === true && answers[0].res.writableLength === 0))).toBe(true);
    req.destroy();
    await nothingLeft(r);
    expect(answers[0].late).toEqual([]);
    expect(r.log).toEqual([]);
    expect(outcomes(await counted(r))).toEqual({ 'llm_streams_total{status="aborted"}': 1 });
  });

  test('the client\'s reset read in the tick before the upstream\'s close mid-body: aborted, not truncated', async () => {
    const r = g = await startGateway();
    const answers = served(r);
    upstreamSockets(r, (s) => s.prependListener('end', () => answers[0].res.socket!.destroy()));
    const release = heldUpstream(r, chunk('un '), (res) => res.socket!.end()); // (mid-body: the chunked body has no end)
    const { got } = stream(r.url, 'm');
    await expect.poll(() => answers[0]?.res.headersSent === true && answers[0].res.writableLength === 0 && r.gw.stats().streams === 1).toBe(true);
    release();
    expect(await got).toEqual({ body: chunk('un '), how: 'ECONNRESET' });
    await nothingLeft(r);
    expect(answers[0].late).toEqual([]);
    expect(outcomes(await counted(r))).toEqual({ 'llm_streams_total{status="aborted"}': 1 });
  });
});

describe('backpressure at the end: the gateway waits for its client\'s \'drain\'', () => {
  const event = chunk('x'.repeat(4000));
  const piece = event.repeat(16); // 64 KiB a write
  const truncatedAt = (n: number) =>
    `data: ${JSON.stringify({ error: { message: 'The upstream openai stream ended without its completion: the answer is cut short', type: 'upstream_stream_error', code: 'ERR_STREAM_TRUNCATED', offset: n } })}\n\n`;

  /**
   * A gateway in front of an upstream that writes whole events as fast as it may, a client that
   * takes its first bytes and then reads nothing, and the gateway's connection to the upstream.
   * `upstream.end(how)` ends the upstream's body there: `done` ([DONE] and its end), `fin` (its
   * connection closed mid-body, every byte sent) or `reset` (a TCP reset). Resolves once the
   * gateway paused its upstream read for the client.
   */
  async function heldBack(options: Parameters<typeof startGateway>[0] = {}) {
    const r = g = await startGateway({ keepalive: 0, ...options });
    const answers = served(r);
    let upSocket: Socket | undefined;
    upstreamSockets(r, (s) => { upSocket = s; });
    let how: 'done' | 'fin' | 'reset' | undefined;
    let ending!: () => void;
    const ends = new Promise<void>((resolve) => { ending = resolve; });
    const upstream = {
      /** Payload bytes the upstream wrote (all of which reach the gateway, but with a reset). */
      sent: 0,
      closed: undefined as Promise<void> | undefined,
      end(h: 'done' | 'fin' | 'reset') { how = h; ending(); },
    };
    r.up.scripts.set('m', {
      write: async (res: ServerResponse) => {
        upstream.closed = new Promise((resolve) => res.on('close', () => resolve()));
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        while (how === undefined && !res.destroyed) {
          upstream.sent += piece.length;
          if (!res.write(piece)) await Promise.race([new Promise((w) => res.once('drain', w)), ends]);
        }
        if (how === 'done') res.end(DONE);
        else if (how === 'fin') res.socket!.end(); // (its buffered writes go first)
        else if (how === 'reset') res.socket!.resetAndDestroy();
      },
    });
    let first = '';
    let resolveFirst!: () => void;
    const firstRead = new Promise<void>((resolve) => { resolveFirst = resolve; });
    const { got, req } = stream(r.url, 'm');
    let client!: IncomingMessage;
    req.on('response', (res: IncomingMessage) => {
      client = res;
      res.once('data', (s: string) => { first = s; res.pause(); resolveFirst(); });
    });
    await firstRead;
    await expect.poll(() => upSocket?.isPaused() === true && answers[0].res.writableLength > 0, { timeout: 60_000 }).toBe(true);
    return {
      r, upstream, answers, req,
      /** The client reads again, to the end: all it got, and how its answer ended. */
      async readAll() {
        client.resume();
        const { body, how: ended } = await got;
        return { body: body.startsWith(first) ? body : first + body, how: ended };
      },
    };
  }

  test('the client leaves while the gateway waits for its drain: the upstream request is aborted at once, and everything given back', async () => {
    const { r, upstream, answers, req } = await heldBack();
    req.destroy();
    await upstream.closed; // (the upstream sees its connection close: not left waiting for a drain that cannot come)
    await nothingLeft(r);
    expect(answers[0].late).toEqual([]);
    expect(r.log).toEqual([]);
    const m = await counted(r);
    expect(m['llm_streams_total{status="aborted"}']).toBe(1);
    expect(Object.keys(m).filter((k) => k.startsWith('llm_streams_total'))).toEqual(['llm_streams_total{status="aborted"}']);
  });

  test('the upstream closes its connection mid-body while the gateway waits for the drain: once the client reads, every event it sent, then the truncation in the client\'s format', async () => {
    const { r, upstream, answers, readAll } = await heldBack();
    upstream.end('fin');
    // (the gateway reads nothing while its client's buffer is full: it sees the close when it reads again)
    const { body, how } = await readAll();
    expect(how).toBe('end');
    const want = truncatedAt(upstream.sent);
    expect(body.endsWith(want)).toBe(true);
    expect(body.length).toBe(upstream.sent + want.length); // (every byte sent, whole events, passed through)
    expect(body.slice(0, -want.length) === piece.repeat(upstream.sent / piece.length)).toBe(true);
    await nothingLeft(r);
    expect(answers[0].late).toEqual([]);
    const m = await counted(r);
    expect(m['llm_streams_total{status="truncated"}']).toBe(1);
    expect(m.llm_upstream_truncated_total).toBe(1);
  });

  test('the upstream resets its connection while the gateway waits for the drain: whole events, then the truncation error, never [DONE]', async () => {
    const { r, upstream, answers, readAll } = await heldBack();
    upstream.end('reset');
    const { body, how } = await readAll();
    expect(how).toBe('end');
    const events = body.split('\n\n').slice(0, -1).map((e) => `${e}\n\n`);
    const last = events.pop()!;
    expect(events.every((e) => e === event)).toBe(true);
    const offset = Number(/"offset":(\d+)/.exec(last)?.[1]);
    expect(offset).toBeGreaterThanOrEqual(events.length * event.length); // (the reset may drop bytes the gateway had not read: its offset is where it was cut)
    expect(last).toBe(truncatedAt(offset));
    await nothingLeft(r);
    expect(answers[0].late).toEqual([]);
    expect((await counted(r))['llm_streams_total{status="truncated"}']).toBe(1);
  });

  test('the upstream closes mid-body while the gateway waits, and the client leaves without reading: the upstream socket closed, everything given back', async () => {
    const { r, upstream, req } = await heldBack();
    upstream.end('fin');
    req.destroy();
    await nothingLeft(r);
    expect(outcomes(await counted(r))).toEqual({ 'llm_streams_total{status="aborted"}': 1 }); // (the unread close is no truncation of the upstream's)
  });

  test('a client held back for longer than bodyTimeout is no upstream silence: the gateway is not reading, and the whole answer arrives', async () => {
    const bodyTimeout = 150;
    const { r, upstream, readAll } = await heldBack({ bodyTimeout });
    await new Promise((w) => setTimeout(w, 4 * bodyTimeout)); // (the gateway's clock ticks every bodyTimeout / 4)
    upstream.end('done');
    const { body, how } = await readAll();
    expect(how).toBe('end');
    expect(body.slice(-200)).toBe((piece + DONE).slice(-200)); // (not the upstream's silence: the gateway was not reading)
    expect(body.length).toBe(upstream.sent + DONE.length);
    await nothingLeft(r);
    const m = await counted(r);
    expect(m['gateway_timeouts_total{timeout="body"}']).toBeUndefined();
    expect(m['llm_streams_total{status="done"}']).toBe(1);
  });
});

describe('an upstream whose answer breaks off: the client\'s error in its own format, nothing held', () => {
  /** Resolves once the gateway has read every byte the upstream wrote on `socket` (the fake upstream's side of the connection). */
  async function readByGateway(r: Running, socket: Socket, gateway: Map<number, Socket>): Promise<void> {
    await expect.poll(() => gateway.get(socket.remotePort!)?.bytesRead === socket.bytesWritten).toBe(true);
  }

  /** A gateway whose upstream writes `head` (raw: status line, headers and the body's first bytes), waits until the gateway read it all, and resets its connection. */
  /** A gateway whose upstream writes `raw`, then (once the gateway read it) resets its connection, or closes it (`fin`). */
  async function breaking(raw: string, options: Parameters<typeof startGateway>[0] = {}, how: 'reset' | 'fin' = 'reset') {
    const r = g = await startGateway(options);
    const gateway = new Map<number, Socket>();
    upstreamSockets(r, (s) => gateway.set(s.localPort!, s));
    r.up.scripts.set('m', {
      write: async (res: ServerResponse) => {
        const socket = res.socket!;
        socket.write(raw);
        await readByGateway(r, socket, gateway);
        if (how === 'fin') socket.end(); else socket.resetAndDestroy();
      },
    });
    return r;
  }

  const chunked = (body: string) => `${b(body).length.toString(16)}\r\n${body}\r\n`;
  const sseHead = 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n';
  const anthropicEvents = [
    'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}\n\n',
    'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Bon"}}\n\n',
  ].join('');
  const anthropicCut = 'event: content_block_delta\ndata: {"type":"content_block_del';
  const openaiCut = chunk('jour').slice(0, 50);
  const truncation = (format: string, offset: number) => ({
    openai: `data: ${JSON.stringify({ error: { message: `The upstream ${format} stream ended without its completion: the answer is cut short`, type: 'upstream_stream_error', code: 'ERR_STREAM_TRUNCATED', offset } })}\n\n`,
    anthropic: `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message: `The upstream ${format} stream ended without its completion: the answer is cut short` } })}\n\n`,
  });

  test('an OpenAI upstream reset mid-event, to an OpenAI client: its events, then the truncation error event', async () => {
    const r = await breaking(sseHead + chunked(chunk('Bon') + openaiCut));
    const { body, how } = await stream(r.url, 'm').got;
    expect({ body, how }).toEqual({ body: chunk('Bon') + truncation('openai', b(chunk('Bon') + openaiCut).length).openai, how: 'end' });
    await nothingLeft(r);
    expect((await counted(r))['llm_streams_total{status="truncated"}']).toBe(1);
  });

  test('an Anthropic upstream reset mid-event, to an Anthropic client: its events, then Anthropic\'s error event', async () => {
    const r = await breaking(sseHead + chunked(anthropicEvents + anthropicCut), { upstreamFormat: 'anthropic' });
    const { body, how } = await stream(r.url, 'm', '/v1/messages').got;
    expect({ body, how }).toEqual({ body: anthropicEvents + truncation('anthropic', 0).anthropic, how: 'end' });
    await nothingLeft(r);
    expect((await counted(r))['llm_streams_total{status="truncated"}']).toBe(1);
  });

  test('an Anthropic upstream reset mid-event, to an OpenAI client: the text written anew, then OpenAI\'s error event', async () => {
    const r = await breaking(sseHead + chunked(anthropicEvents + anthropicCut), { upstreamFormat: 'anthropic' });
    const { body, how } = await stream(r.url, 'm').got;
    expect(how).toBe('end');
    const events = body.split('\n\n').filter(Boolean).map((e) => `${e}\n\n`);
    expect(events.at(-1)).toBe(truncation('anthropic', b(anthropicEvents + anthropicCut).length).openai);
    expect(events.slice(0, -1).map((e) => JSON.parse(e.slice(6)).choices[0].delta.content).join('')).toBe('Bon');
    expect(body).not.toContain('[DONE]');
    await nothingLeft(r);
  });

  test('an OpenAI upstream reset mid-event, to an Anthropic client: the text written anew, then Anthropic\'s error event', async () => {
    const r = await breaking(sseHead + chunked(chunk('Bon') + openaiCut));
    const { body, how } = await stream(r.url, 'm', '/v1/messages').got;
    expect(how).toBe('end');
    expect(body).toMatch(/^event: message_start\n/);
    expect(body).toContain('"text":"Bon"');
    expect(body).not.toContain('message_stop');
    expect(body.endsWith(truncation('openai', 0).anthropic)).toBe(true);
    await nothingLeft(r);
  });

  test.each([['cut short', 'fin'], ['reset', 'reset']] as const)('a whole answer (stream: false) whose body is %s: a 502 that says the upstream broke HTTP/1.1, not a 500, and it counts as truncated, as a stream does', async (_, how) => {
    const r = await breaking('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"id":"x","object":"chat.com', {}, how);
    const got = await post(r.url, chat('m', false));
    expect(got.status).toBe(502);
    const id = got.headers['x-request-id'];
    expect(JSON.parse(got.body.toString())).toEqual({
      error: { message: `the upstream's answer broke HTTP/1.1 (request id ${id}; the gateway's log has the detail)`, type: 'upstream_error', code: 'ERR_UPSTREAM_PROTOCOL' },
    });
    expect(r.log).toEqual([how === 'fin' ? `gateway: request ${id}: 502: the upstream closed the connection before the end of its body`
      : `gateway: request ${id}: 502: the upstream's connection broke in its body: read ECONNRESET`]);
    await nothingLeft(r);
    // (not "connect": it answered)
    expect(outcomes(await counted(r))).toEqual({
      'llm_streams_total{status="truncated"}': 1, llm_upstream_truncated_total: 1, 'llm_provider_errors_total{source="body"}': 1,
    });
  });

  // An upstream answer that breaks off after its head counts as the upstream's error (source
  // "body") and as truncated however the client asked for it: streamed, whole and passed through
  // (above), or whole and read from its stream. A stream whose body ended whole without its
  // completion is the truncation alone.
  test.each([['cut short', 'fin'], ['reset', 'reset']] as const)('a stream whose body is %s: the truncation, and the upstream\'s error with source "body"', async (_, how) => {
    const r = await breaking(sseHead + chunked(chunk('Bon') + openaiCut), {}, how);
    const { body } = await stream(r.url, 'm').got;
    expect(body).toBe(chunk('Bon') + truncation('openai', b(chunk('Bon') + openaiCut).length).openai);
    await nothingLeft(r);
    expect(outcomes(await counted(r))).toEqual({
      'llm_streams_total{status="truncated"}': 1, llm_upstream_truncated_total: 1, 'llm_provider_errors_total{source="body"}': 1,
    });
  });

  test.each([['cut short', 'fin'], ['reset', 'reset']] as const)('a whole answer read from a stream whose body is %s (an Anthropic client): a 502, truncated, source "body"', async (_, how) => {
    const r = await breaking(sseHead + chunked(chunk('Bon') + openaiCut), {}, how);
    const got = await post(r.url, { ...chat('m', false), max_tokens: 16 }, '/v1/messages');
    expect(got.status).toBe(502);
    expect(JSON.parse(got.body.toString())).toEqual({ type: 'error', error: { type: 'api_error', message: `The stream ended without its completion (data: [DONE]) after ${b(chunk('Bon') + openaiCut).length} bytes: the text is incomplete` } });
    await nothingLeft(r);
    expect(outcomes(await counted(r))).toEqual({
      'llm_streams_total{status="truncated"}': 1, llm_upstream_truncated_total: 1, 'llm_provider_errors_total{source="body"}': 1,
    });
  });

  test('a stream whose body ends whole without its completion (no [DONE]): the truncation alone, no upstream error', async () => {
    const r = await breaking(`${sseHead + chunked(chunk('Bon'))}0\r\n\r\n`, {}, 'fin');
    const { body } = await stream(r.url, 'm').got;
    expect(body).toBe(chunk('Bon') + truncation('openai', b(chunk('Bon')).length).openai);
    await nothingLeft(r);
    expect(outcomes(await counted(r))).toEqual({ 'llm_streams_total{status="truncated"}': 1, llm_upstream_truncated_total: 1 });
  });

  test.each([['cut short', 'fin'], ['reset', 'reset']] as const)('an upstream\'s error status whose body is %s: the status, in the client\'s shape with the general message; the log says why', async (_, how) => {
    const r = await breaking('HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"error":{"message":"Rate limit reach', {}, how);
    for (const [path, shape] of [
      ['/v1/chat/completions', { error: { message: 'upstream answered HTTP 429', type: 'upstream_error', code: null } }],
      ['/v1/messages', { type: 'error', error: { type: 'rate_limit_error', message: 'upstream answered HTTP 429' } }],
    ] as const) {
      const got = await post(r.url, { ...chat('m'), max_tokens: 16 }, path);
      expect(got.status).toBe(429);
      expect(JSON.parse(got.body.toString())).toEqual(shape);
      expect(r.log.pop()).toBe(how === 'fin' ? `gateway: request ${got.headers['x-request-id']}: the upstream's 429 body broke off: the upstream closed the connection before the end of its body`
        : `gateway: request ${got.headers['x-request-id']}: the upstream's 429 body broke off: read ECONNRESET`);
    }
    await nothingLeft(r);
    const m = await counted(r);
    expect(m['llm_streams_total{status="failed"}']).toBe(2);
    expect(m['llm_provider_errors_total{source="status"}']).toBe(2);
  });
});

// The gateway reads its upstream from a socket, whose errors are always Error objects: an upstream
// that goes without a reason (a close, no error) is read as cut short, above. A stream of the Web
// API can fail with no reason at all (`controller.error()`, `reader.cancel()`): here the relay as
// a fetch handler uses it (examples/edge/gateway.mjs: `upstream.body.pipeThrough(new SseRelayStream(…))`),
// its output served on a node:http server, read by a client on a real socket.
describe('an upstream body that errors with no reason, through SseRelayStream (the fetch handler\'s pipe)', () => {
  interface Served2 { url: string; close(): Promise<void>; relay: () => SseRelayStream; upstream: () => ReadableStreamDefaultController<Uint8Array>; cancelled: unknown[]; handler: Promise<string> }

  /**
   * A server that relays, for each request, a ReadableStream of its own (its controller is
   * `upstream()`: it starts with `first`) through an SseRelayStream to `to`, with `pipe` (the
   * default: pipeThrough), written to the response with backpressure; a client's leaving is the
   * reader's `cancel()`, without a reason. `handler` resolves with how the handler's loop ended.
   */
  async function relayServer(to: 'openai' | 'anthropic', first: string, pipe?: (up: ReadableStream<Uint8Array>, relay: SseRelayStream) => ReadableStream<Uint8Array>,
    pull?: (c: ReadableStreamDefaultController<Uint8Array>) => void): Promise<Served2> {
    let relay!: SseRelayStream;
    let ctl!: ReadableStreamDefaultController<Uint8Array>;
    const cancelled: unknown[] = [];
    let ended!: (how: string) => void;
    const handler = new Promise<string>((resolve) => { ended = resolve; });
    const server = createServer((_req, res) => {
      const upstream = new ReadableStream<Uint8Array>({ start(c) { ctl = c; c.enqueue(b(first)); }, pull, cancel(reason) { cancelled.push(reason); } });
      relay = new SseRelayStream({ from: 'openai', to, model: 'm' });
      const reader = (pipe ? pipe(upstream, relay) : upstream.pipeThrough(relay)).getReader();
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      res.on('close', () => { if (!res.writableFinished) void reader.cancel(); });
      void (async () => {
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            if (!res.write(value)) {
              await new Promise<void>((w) => {
                const go = () => { res.off('drain', go); res.off('close', go); w(); };
                res.on('drain', go);
                res.on('close', go);
              });
            }
          }
          ended(res.destroyed ? 'done, the client gone' : 'done');
          res.end();
        } catch (err) {
          ended(`threw ${String(err)}`);
          res.destroy();
        }
      })();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
      relay: () => relay, upstream: () => ctl, cancelled, handler,
    };
  }

  const broke = 'the upstream connection broke before the stream\'s completion: the answer is cut short';

  test('controller.error() with no reason, to an OpenAI client: its events, then the error event, then a normal end; the relay failed, its memory given back', async () => {
    const srv = await relayServer('openai', chunk('Bon'));
    try {
      const { got, req } = stream(srv.url, 'm');
      req.on('response', (res: IncomingMessage) => res.once('data', () => srv.upstream().error()));
      expect(await got).toEqual({ body: chunk('Bon') + `data: ${JSON.stringify({ error: { message: broke, type: 'server_error', code: 'ERR_STREAM_TRUNCATED' } })}\n\n`, how: 'end' });
      expect(await srv.handler).toBe('done');
      expect(srv.relay().relay.status).toBe('failed');
      expect(srv.relay().upstreamError).toBeUndefined();
      expect(coreMemoryUsed()).toBe(0);
    } finally { await srv.close(); }
  });

  test('controller.error() with no reason, to an Anthropic client: Anthropic\'s error event after the text, no message_stop', async () => {
    const srv = await relayServer('anthropic', chunk('Bon'));
    try {
      const { got, req } = stream(srv.url, 'm', '/v1/messages');
      req.on('response', (res: IncomingMessage) => res.once('data', () => srv.upstream().error()));
      const { body, how } = await got;
      expect(how).toBe('end');
      expect(body).toMatch(/^event: message_start\n/);
      expect(body).toContain('"delta":{"type":"text_delta","text":"Bon"}');
      expect(body).not.toContain('message_stop');
      expect(body.endsWith(`event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message: broke } })}\n\n`)).toBe(true);
      expect(await srv.handler).toBe('done');
      expect(coreMemoryUsed()).toBe(0);
    } finally { await srv.close(); }
  });

  test('controller.error() while the client reads nothing (the pipe held back): every event the relay wrote reaches the client, then the error event', async () => {
    const event = chunk('x'.repeat(4000));
    let pulled = 0;
    let hold = false;
    // an upstream with an event whenever the pipe asks for one, as long as the client is held back
    const srv = await relayServer('openai', chunk('Bon'), undefined, (c) => { if (!hold) { c.enqueue(b(event)); pulled++; } });
    try {
      const { got, req } = stream(srv.url, 'm');
      let client!: IncomingMessage;
      req.on('response', (res: IncomingMessage) => { client = res; res.pause(); });
      await expect.poll(() => client !== undefined).toBe(true);
      // held back: the socket's buffers, the response's and every queue of the pipe full, and the upstream asked for nothing more
      await expect.poll(() => { const before = pulled; return new Promise((w) => setTimeout(() => w(pulled === before && pulled > 64), 200)); }, { timeout: 60_000 }).toBe(true);
      hold = true;
      srv.upstream().error(); // (the upstream's own queue is dropped with it, as the Streams standard says; what the relay took is not)
      client.resume();
      const { body, how } = await got;
      expect(how).toBe('end');
      const error = `data: ${JSON.stringify({ error: { message: broke, type: 'server_error', code: 'ERR_STREAM_TRUNCATED' } })}\n\n`;
      const k = (body.length - chunk('Bon').length - error.length) / event.length;
      expect(k).toBeGreaterThan(1);
      expect(body === chunk('Bon') + event.repeat(k) + error).toBe(true);
      expect(srv.relay().relay.eventsOut).toBe(1 + k + 1); // every event the relay wrote, its error among them
      expect(await srv.handler).toBe('done');
      expect(coreMemoryUsed()).toBe(0);
    } finally { await srv.close(); }
  });

  test('reader.cancel() with no reason (the client left): the upstream is cancelled, the relay failed, its memory given back', async () => {
    const srv = await relayServer('openai', chunk('Bon'));
    try {
      const { got, req } = stream(srv.url, 'm');
      req.on('response', (res: IncomingMessage) => res.once('data', () => req.destroy()));
      expect(await got).toEqual({ body: chunk('Bon'), how: 'ECONNRESET' });
      await expect.poll(() => srv.cancelled.length).toBe(1);
      expect(srv.cancelled).toEqual([undefined]);
      expect(await srv.handler).toBe('done, the client gone');
      expect(srv.relay().relay.status).toBe('failed');
      expect(coreMemoryUsed()).toBe(0);
    } finally { await srv.close(); }
  });

  test('pipeTo with preventAbort: the upstream\'s error does not reach the relay (its writable left open, the client waiting) until the handler aborts it itself', async () => {
    let piped!: Promise<unknown>;
    const srv = await relayServer('openai', chunk('Bon'), (up, relay) => {
      piped = up.pipeTo(relay.writable, { preventAbort: true }).then(() => 'closed', (e: unknown) => ({ rejected: e }));
      return relay.readable;
    });
    try {
      const { got, req } = stream(srv.url, 'm');
      req.on('response', (res: IncomingMessage) => res.once('data', () => srv.upstream().error()));
      await expect.poll(() => piped !== undefined).toBe(true);
      expect(await piped).toEqual({ rejected: undefined }); // (the pipe settles with the upstream's no-reason)
      expect(srv.relay().writable.locked).toBe(false);
      expect(srv.relay().relay.status).toBe('open'); // nothing reached the relay: the client still waits
      await srv.relay().writable.abort(undefined); // what a handler with preventAbort must do itself
      expect(await got).toEqual({ body: chunk('Bon') + `data: ${JSON.stringify({ error: { message: broke, type: 'server_error', code: 'ERR_STREAM_TRUNCATED' } })}\n\n`, how: 'end' });
      expect(coreMemoryUsed()).toBe(0);
    } finally { await srv.close(); }
  });
});
