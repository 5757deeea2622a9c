// What the gateway's tests share: the gateway in this process with a fake upstream, a raw HTTP
// client that returns the exact bytes of a response, the awkward cut points of a body, and what a
// client must read from a fixture relayed through the gateway.
import { request } from 'node:http';
import { afterAll, beforeAll, expect } from 'vitest';
import { coreMemoryLimit } from 'seam-stream';
import type OpenAI from 'openai';
import { createGateway, type Gateway, type GatewayOptions } from '../../examples/gateway/server.mjs';
import { SseRelay } from '../../bindings/index.js';
import { reference, type Fixture } from '../helpers/model-fixtures.js';
import { codec } from '../helpers/bedrock-fixtures.js';
import { FakeUpstream, type Received } from './fake-upstream.js';

export interface Running { up: FakeUpstream; gw: Gateway; url: string; log: string[]; close(): Promise<void> }

/** A fake upstream and a gateway in front of it (its base URL: the upstream's plus `path`), listening on 127.0.0.1; its log lines kept. */
export async function startGateway(options: Omit<GatewayOptions, 'upstream'> = {}, path = ''): Promise<Running> {
  const up = new FakeUpstream();
  await up.listen();
  const log: string[] = [];
  const gw = createGateway({ log: (line) => log.push(line), ...options, upstream: up.url + path });
  const url = await gw.listen(0);
  return {
    up, gw, url, log,
    async close() {
      await gw.close();
      await up.close();
    },
  };
}

/** After a test: its gateway closed with no upstream socket left, and the core's budget put back (each gateway sets it for its life). */
export async function closeGateway(r: Running | undefined): Promise<void> {
  if (r) {
    await r.close();
    expect(r.up.openSockets).toBe(0);
  }
  expect(coreMemoryLimit()).toBeUndefined();
}

/** After a stream: no upstream socket, no stream, no byte held, no connection. */
export async function nothingLeft(r: Running): Promise<void> {
  await r.up.noSockets();
  await expect.poll(() => r.gw.stats()).toEqual({ streams: 0, pendingBytes: 0, coreBytes: 0, connections: 0 });
}

export interface RawResponse { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }

/** POSTs a chat completions request (with `headers` too) and returns the response's status, headers and exact bytes. */
export function post(url: string, body: unknown, path = '/v1/chat/completions', headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify(body));
    const req = request(`${url}${path}`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': payload.length, ...headers } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** A gateway's metrics (GET `url`, with `headers`) as name{labels} → value. */
export async function metricsAt(url: string, headers: Record<string, string> = {}): Promise<Map<string, number>> {
  const text = await (await fetch(url, { headers })).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

export const chat = (model: string, stream = true) => ({ model, stream, messages: [{ role: 'user', content: 'Bonjour' }] });

/**
 * The byte positions where a cut is awkward: inside a UTF-8 character, at each side of a line
 * end (between CR and LF too), right after a backslash (inside a JSON escape), and inside each
 * `data:` field name and after its colon.
 */
export function awkwardCuts(bytes: Uint8Array): number[] {
  const at: number[] = [];
  for (let i = 1; i < bytes.length; i++) {
    const c = bytes[i];
    const p = bytes[i - 1];
    const inChar = (c & 0xc0) === 0x80;
    const lineEnd = p === 10 || p === 13 || c === 10 || c === 13;
    const escape = p === 0x5c;
    const field = (p === 0x61 && c === 0x3a) || (p === 0x3a && c === 0x20) || (p === 0x64 && c === 0x61 && bytes[i + 1] === 0x74);
    if (inChar || lineEnd || escape || field) at.push(i);
  }
  return at;
}

/** What the official client reads from a relayed fixture: choices[0].delta.content joined. */
export function clientText(f: Fixture): string {
  const ref = reference(f.body, f.format);
  const relayed = ref.frames.filter((fr) => fr.role !== 'error' && fr.role !== 'bad' && !(fr.role === 'completion' && fr.data === '[DONE]'));
  // (from openai, what choices[0] holds; an event written anew, Mistral's content array, holds the text)
  const anew = (data: string) => /"content":\s*\[/.test(data);
  return relayed.map((fr) => (f.format === 'openai' && !anew(fr.data) ? fr.clientContent : fr.text)).join('');
}

/** The bytes and their place of the event that fails a fixture's stream (an error or a bad event), if one does. */
export function failingFrame(f: Fixture): { start: number; end: number } | undefined {
  const fr = reference(f.body, f.format).frames.find((x) => x.role === 'error' || x.role === 'bad');
  return fr && { start: fr.start, end: fr.end };
}

/**
 * The bytes a gateway must write for a fixture: SseRelay's reading of the whole body, with the
 * chunk ids and times that a translated stream makes for itself written as `ID` and `0`, and
 * `model`, the one the client asked for, as a translated stream's (the format's name without it).
 */
export function expectedWire(f: Fixture, model?: string): string {
  const r = new SseRelay({ from: f.format, model });
  const out = Buffer.concat([Buffer.from(r.push(f.bytes)), Buffer.from(r.flush())]).toString('utf8');
  r.dispose();
  return normalizeIds(out);
}

export const normalizeIds = (wire: string) => wire.replace(/"id":"chatcmpl-[^"]*","object":"chat\.completion\.chunk","created":\d+/g, '"id":"ID","object":"chat.completion.chunk","created":0')
  .replace(/"(call|toolu)_seam[^"]*"/g, '"$1_ID"');

/** An error event's offset written as `N` (where a cut inside the failing event may move it). */
export const normalizeOffsets = (wire: string) => wire.replace(/byte offset \d+/g, 'byte offset N').replace(/"offset":\d+/g, '"offset":N');

/** Runs `fn` over `items` with at most `limit` at a time. */
export async function pool<T>(items: T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const k = next++;
      await fn(items[k], k);
    }
  }));
}

/** Reads a streamed answer with the official client: the text of choices[0] and what the iteration threw. */
export async function readStream(client: OpenAI, model: string): Promise<{ text: string; thrown: unknown }> {
  const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Bonjour' }], stream: true });
  let text = '';
  let thrown: unknown;
  try {
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
  } catch (e) {
    thrown = e;
  }
  return { text, thrown };
}

/** AWS's example credentials and a region, which a bedrock upstream's requests are signed with. */
export const AWS_ENV = { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', AWS_REGION: 'eu-central-1' };

/** The gateway signs with the AWS credentials of its environment: AWS_ENV there for the tests of the calling block (or file), as it was after them. */
export function withAwsEnv(): void {
  const saved: Record<string, string | undefined> = {};
  beforeAll(() => {
    for (const [k, v] of Object.entries(AWS_ENV)) { saved[k] = process.env[k]; process.env[k] = v; }
  });
  afterAll(() => {
    for (const [k, v] of Object.entries(saved)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }
  });
}

/**
 * An Anthropic stream as Claude on Bedrock sends it (format `bedrock-invoke`): each SSE event's
 * data in a `chunk` message of AWS's event stream, as `{"bytes": base64}` (with AWS's padding member).
 */
export function invokeStream(anthropicBody: string): Uint8Array {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  for (const fr of reference(anthropicBody, 'anthropic').frames) {
    if (fr.kind !== 'event') continue;
    parts.push(codec.encode({
      headers: { ':event-type': { type: 'string', value: 'chunk' }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: 'event' } },
      body: enc.encode(`{"bytes":"${Buffer.from(fr.data, 'utf8').toString('base64')}","p":"abcdefghijklmnopqrstuvwxyzABCDEFGH"}`),
    }));
  }
  return Buffer.concat(parts);
}

/**
 * A gateway per upstream format, started when a test first asks for it and closed after the file's
 * tests (each sets the core's budget for its life and puts back the one it found: the last started
 * closes first, and the budget is back after it). `path`: the ddg base URL is the endpoint itself.
 */
export function gatewaysByFormat<F extends string>(path: (format: F) => string = () => ''): (format: F) => Promise<Running> {
  const gateways = new Map<F, Running>();
  afterAll(async () => {
    const all = [...gateways.values()].reverse();
    for (const g of all.slice(0, -1)) {
      await g.close();
      expect(g.up.openSockets).toBe(0);
    }
    await closeGateway(all.at(-1));
  });
  return async (format) => {
    let g = gateways.get(format);
    if (!g) {
      g = await startGateway({ upstreamFormat: format as GatewayOptions['upstreamFormat'] }, path(format));
      gateways.set(format, g);
    }
    return g;
  };
}

/**
 * A Bedrock request as the upstream received it was signed with SigV4 over the bytes sent: its
 * Authorization names the test's key, region and service and signs the host, content type, date and
 * payload hash, and signing the same request again (`path`, the query it was received with, each
 * parameter as often as it came, and `body`: the bytes received) at its date with AWS's signer
 * gives the same signature. The query is read as AWS's SDK reads a URL's (@smithy/querystring-parser:
 * split at `&` and `=`, each side percent-decoded, a `+` a plus), not as a form's, where a `+` is a space.
 */
export async function expectSignedAsSent(got: Received, path: string, body: string): Promise<void> {
  const at = got.url.indexOf('?');
  expect(at === -1 ? got.url : got.url.slice(0, at)).toBe(path);
  const query: Record<string, string | string[]> = {};
  for (const part of (at === -1 ? '' : got.url.slice(at + 1)).split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const [k, v] = [decodeURIComponent(eq === -1 ? part : part.slice(0, eq)), eq === -1 ? '' : decodeURIComponent(part.slice(eq + 1))];
    query[k] = k in query ? [...[query[k]].flat(), v] : v;
  }
  const auth = String(got.headers.authorization);
  const m = /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/(\d{8})\/eu-central-1\/bedrock\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(auth);
  expect(m, auth).not.toBeNull();
  expect(m![2].split(';')).toEqual(expect.arrayContaining(['host', 'content-type', 'x-amz-date', 'x-amz-content-sha256']));
  const { SignatureV4 } = await import('@smithy/signature-v4');
  const { Hash } = await import('@smithy/hash-node');
  const signer = new SignatureV4({ service: 'bedrock', region: AWS_ENV.AWS_REGION, credentials: { accessKeyId: AWS_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: AWS_ENV.AWS_SECRET_ACCESS_KEY }, sha256: Hash.bind(null, 'sha256') });
  const amz = String(got.headers['x-amz-date']);
  const date = new Date(`${amz.slice(0, 4)}-${amz.slice(4, 6)}-${amz.slice(6, 8)}T${amz.slice(9, 11)}:${amz.slice(11, 13)}:${amz.slice(13, 15)}Z`);
  const signedHeaders: Record<string, string> = {};
  for (const h of m![2].split(';')) if (h !== 'x-amz-date' && h !== 'authorization') signedHeaders[h] = String(got.headers[h]);
  const again = await signer.sign({ method: 'POST', protocol: 'http:', hostname: '127.0.0.1', path, query, headers: signedHeaders, body }, { signingDate: date });
  expect(again.headers.authorization).toBe(auth);
}
