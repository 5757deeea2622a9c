// The gateway as its command runs it: `node examples/gateway/server.mjs --port 0 …` in a child
// process, read by the official openai client, stopped with SIGTERM; nothing is left behind (the
// process exits 0, the fake upstream has no socket open).
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { FIXTURES } from '../helpers/model-fixtures.js';
import { SEED, cut, randomCuts, rng } from '../helpers/random.js';
import { FakeUpstream, TEST_CERT } from './fake-upstream.js';
import { parseArgs } from '../../examples/gateway/server.mjs';
import { clientText } from './support.js';

const server = join(__dirname, '..', '..', 'examples', 'gateway', 'server.mjs');

let up: FakeUpstream;
beforeAll(async () => {
  up = new FakeUpstream();
  await up.listen();
});
afterAll(async () => {
  await up.close();
});

/** Starts the command; resolves with the child and the URL it printed. */
function start(args: string[], env?: Record<string, string>): Promise<{ child: ChildProcess; url: string; stderr: () => string; stdout: () => string }> {
  const child = spawn(process.execPath, [server, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /^listening (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out);
      if (m) resolve({ child, url: m[1], stderr: () => err, stdout: () => out });
    });
    child.on('exit', (code) => reject(new Error(`the gateway exited (${code}) before listening: ${err}`)));
  });
}

/** The command's line on SIGTERM (its drain, with the default --drain-timeout). */
const DRAINING = 'gateway: SIGTERM: draining (new requests refused; the streams in flight have up to 10000 ms; a second signal stops at once)\n';

const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => {
  if (child.exitCode !== null) resolve(child.exitCode);
  else child.on('exit', (code) => resolve(code));
});

test('an Anthropic upstream through the command, then SIGTERM', async () => {
  const f = FIXTURES.find((x) => x.name === 'anthropic-basic')!;
  const next = rng(SEED + 3);
  up.scripts.set('claude', { pieces: cut(f.bytes, randomCuts(f.bytes, next, 40)) });
  const { child, url, stderr } = await start(['--port', '0', '--upstream', up.url, '--upstream-format', 'anthropic', '--keepalive', '0.05']);
  try {
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'k', maxRetries: 0, timeout: 20_000 });
    const texts = await Promise.all(Array.from({ length: 8 }, async () => {
      const stream = await client.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'Bonjour' }], stream: true });
      let text = '';
      for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
      return text;
    }));
    expect(texts, `seed ${SEED}`).toEqual(Array(8).fill(clientText(f)));
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain('llm_streams_total{status="done"} 8\n');
    expect(metrics).toContain('llm_streams_open 0\n');
    await up.noSockets();
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited(child)).toBe(0);
  expect(stderr()).toBe(DRAINING);
});

test('SIGINT drains: a stream in flight that outlives --drain-timeout ends with its error event, read by the official client as an error; then exit 0', async () => {
  up.scripts.set('hang', { pieces: [new TextEncoder().encode('data: {"choices":[{"index":0,"delta":{"content":"Bonjour"}}]}\n\n')], then: 'hang' });
  const { child, url, stderr } = await start(['--port', '0', '--upstream', up.url, '--drain-timeout', '300']);
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'k', maxRetries: 0, timeout: 20_000 });
  const stream = await client.chat.completions.create({ model: 'hang', messages: [{ role: 'user', content: 'Bonjour' }], stream: true });
  let text = '';
  let thrown: unknown;
  try {
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      if (text === 'Bonjour') child.kill('SIGINT');
    }
  } catch (e) {
    thrown = e;
  }
  expect(text).toBe('Bonjour');
  expect(thrown).toBeInstanceOf(OpenAI.APIError);
  expect((thrown as InstanceType<typeof OpenAI.APIError>).error).toEqual({
    message: 'the gateway is shutting down: the stream did not end within its drain time (300 ms)', type: 'overloaded', code: 'ERR_SHUTTING_DOWN',
  });
  expect(await exited(child)).toBe(0);
  expect(stderr()).toBe('gateway: SIGINT: draining (new requests refused; the streams in flight have up to 300 ms; a second signal stops at once)\n');
  await up.noSockets();
});

test('a client that leaves a child gateway mid-stream: the upstream socket closes', async () => {
  up.scripts.set('slow', { pieces: Array.from({ length: 200 }, (_, i) => new TextEncoder().encode(`data: {"choices":[{"index":0,"delta":{"content":"${i} "}}]}\n\n`)), gapMs: 10 });
  const { child, url } = await start(['--port', '0', '--upstream', up.url]);
  try {
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'k', maxRetries: 0 });
    const controller = new AbortController();
    const stream = await client.chat.completions.create({ model: 'slow', messages: [], stream: true }, { signal: controller.signal });
    let text = '';
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      if (text === '0 1 2 ') {
        controller.abort(); // the request's socket is destroyed; leaving the loop ends the iteration
        break;
      }
    }
    expect(text).toBe('0 1 2 ');
    await up.noSockets();
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited(child)).toBe(0);
});

test('an https upstream whose certificate the process trusts (NODE_EXTRA_CA_CERTS), through the command', async () => {
  const tlsUp = new FakeUpstream(true);
  await tlsUp.listen();
  const f = FIXTURES.find((x) => x.name === 'openai-basic')!;
  tlsUp.scripts.set('gpt', { pieces: cut(f.bytes, randomCuts(f.bytes, rng(SEED + 4), 30)) });
  const { child, url, stderr } = await start(['--port', '0', '--upstream', tlsUp.url], { NODE_EXTRA_CA_CERTS: TEST_CERT });
  try {
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'k', maxRetries: 0, timeout: 20_000 });
    const stream = await client.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: 'Bonjour' }], stream: true });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    expect(text, `seed ${SEED + 4}`).toBe(clientText(f));
    expect(tlsUp.received[0].headers.host).toBe(new URL(tlsUp.url).host);
    await tlsUp.noSockets();
  } finally {
    child.kill('SIGTERM');
    await tlsUp.close();
  }
  expect(await exited(child)).toBe(0);
  expect(stderr()).toBe(DRAINING);
});

test('bad arguments: exit 2 with the usage', async () => {
  const child = spawn(process.execPath, [server, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
  expect(await exited(child)).toBe(2);
  expect(err).toMatch(/^--upstream is required\nusage: node examples\/gateway\/server\.mjs --port <n> --upstream <base-url>/);
});

test('keys from --api-key-file and SEAM_GATEWAY_API_KEYS, the upstream key from SEAM_GATEWAY_UPSTREAM_KEY, /metrics on --metrics-port', async () => {
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const file = join(mkdtempSync(join(tmpdir(), 'seam-gw-')), 'keys');
  writeFileSync(file, '# the gateway\'s keys\nfile-key-1\nfile-key-2\n');
  up.scripts.set('keyed', { pieces: [new TextEncoder().encode('data: [DONE]\n\n')] });
  const received = up.received.length;
  const { child, url, stderr, stdout } = await start(['--port', '0', '--upstream', up.url, '--api-key-file', file, '--api-key', 'arg-key', '--metrics-port', '0'],
    { SEAM_GATEWAY_API_KEYS: 'env-key-1, env-key-2', SEAM_GATEWAY_UPSTREAM_KEY: 'upstream-secret' });
  try {
    const ask = (key?: string) => fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: key ? { authorization: `Bearer ${key}` } : {}, body: JSON.stringify({ model: 'keyed', stream: true }) });
    expect((await ask()).status).toBe(401);
    expect((await ask('nope')).status).toBe(401);
    for (const key of ['file-key-1', 'file-key-2', 'arg-key', 'env-key-1', 'env-key-2']) expect([key, (await ask(key)).status]).toEqual([key, 200]);
    expect(up.received.slice(received).map((r) => r.headers.authorization)).toEqual(Array(5).fill('Bearer upstream-secret'));
    expect((await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer arg-key' } })).status).toBe(404);
    await expect.poll(stdout).toMatch(/^listening http:\/\/127\.0\.0\.1:\d+\nmetrics http:\/\/127\.0\.0\.1:\d+\/metrics\n$/);
    const metricsUrl = /\nmetrics (\S+)\n/.exec(stdout())![1];
    expect(await (await fetch(metricsUrl)).text()).toContain('gateway_auth_failures_total 2\n');
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited(child)).toBe(0);
  expect(stderr()).toBe(DRAINING);
});

test('--host beyond loopback without keys: exit 2 with the reason; with --allow-no-keys it listens', async () => {
  const child = spawn(process.execPath, [server, '--port', '0', '--upstream', up.url, '--host', '0.0.0.0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
  expect(await exited(child)).toBe(2);
  expect(err).toBe('createGateway: listening on 0.0.0.0 (beyond loopback) without apiKeys: anyone who reaches it uses the upstream; set apiKeys, or allowNoKeys to say so\n');
  const open = spawn(process.execPath, [server, '--port', '0', '--upstream', up.url, '--host', '0.0.0.0', '--allow-no-keys'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const line = await new Promise<string>((resolve) => { let out = ''; open.stdout!.on('data', (d: Buffer) => { out += d.toString(); if (out.includes('\n')) resolve(out); }); });
  expect(line).toMatch(/^listening http:\/\/0\.0\.0\.0:\d+\n$/);
  open.kill('SIGTERM');
  expect(await exited(open)).toBe(0);
});

test('the command\'s numbers: --port, as every other, refuses an empty value (it was port 0) and one that is not a number', () => {
  const refusal = (argv: string[]) => {
    try {
      parseArgs([...argv, '--upstream', 'http://127.0.0.1:9']);
      return 'accepted';
    } catch (e) {
      return (e as Error).message.split('\n')[0];
    }
  };
  expect([['--port', ''], ['--port', ' '], ['--port', 'eighty'], ['--max-streams', ''], ['--port', '70000'], ['--port', '8.5']].map(refusal)).toEqual([
    '--port needs a number, not ""', '--port needs a number, not " "', '--port needs a number, not "eighty"', '--max-streams needs a number, not ""',
    '--port must be 0..65535', '--port must be 0..65535',
  ]);
  expect(parseArgs(['--port', '8080', '--upstream', 'http://127.0.0.1:9'])).toEqual({ port: 8080, host: '127.0.0.1', options: { upstream: 'http://127.0.0.1:9' } });
});
