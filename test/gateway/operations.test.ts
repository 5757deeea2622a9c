// The gateway as an operator runs it: what each option's 0 means (a refusal at start that names
// the option, or none: no cap, no keep-alive, no write buffer), its drain on close() and on a
// signal, and an upstream's error body however it arrives.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { coreMemoryLimit } from 'seam-stream';
import { createGateway } from '../../examples/gateway/server.mjs';
import { chat, closeGateway, nothingLeft, post, startGateway, type Running } from './support.js';

const enc = new TextEncoder();
const b = (s: string) => enc.encode(s);
const chunk = (content: string) => `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]}\n\n`;
const DONE = 'data: [DONE]\n\n';
const server = join(__dirname, '..', '..', 'examples', 'gateway', 'server.mjs');

let g: Running | undefined;
afterEach(async () => {
  await closeGateway(g);
  g = undefined;
});

describe('an option set to 0', () => {
  test('a limit whose 0 would refuse every request (or fail each) is refused at start, naming it; the core\'s limit is as it was', () => {
    const refusal = (option: Record<string, unknown>) => {
      try {
        void createGateway({ upstream: 'http://127.0.0.1:9', ...option }).close();
        return 'accepted';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect([{ maxStreams: 0 }, { maxPendingBytes: 0 }, { maxEventBytes: 0 }, { maxRequestBytes: 0 }, { maxResponseBytes: 0 }, { maxStreams: 2.5 },
      { maxEventBytes: 1024 ** 3 }, { highWaterMark: -1 }, { maxConnections: 0.5 }, { keepalive: Infinity }].map(refusal)).toEqual([
      'createGateway: maxStreams must be a positive integer',
      'createGateway: maxPendingBytes must be a positive integer',
      'createGateway: maxEventBytes must be an integer from 1 to 536870912 (512 MiB)',
      'createGateway: maxRequestBytes must be a positive integer',
      'createGateway: maxResponseBytes must be a positive integer',
      'createGateway: maxStreams must be a positive integer',
      'createGateway: maxEventBytes must be an integer from 1 to 536870912 (512 MiB)',
      'createGateway: highWaterMark must be a non-negative integer',
      'createGateway: maxConnections must be a non-negative integer (0: no cap)',
      'createGateway: keepalive must be a non-negative number of seconds (0: never)',
    ]);
    expect(coreMemoryLimit()).toBeUndefined();
    // where 0 means none, it is taken
    expect([{ maxConnections: 0 }, { maxConnectionsPerAddress: 0 }, { keepalive: 0 }, { highWaterMark: 0 }].map(refusal)).toEqual(['accepted', 'accepted', 'accepted', 'accepted']);
    expect(coreMemoryLimit()).toBeUndefined();
  });

  test('highWaterMark 0: no write buffer, the upstream read pauses after each write, and the answer is whole', async () => {
    g = await startGateway({ highWaterMark: 0, maxConnections: 0, maxConnectionsPerAddress: 0, keepalive: 0 });
    const events = Array.from({ length: 50 }, (_, i) => chunk(`mot ${i} `)).join('');
    g.up.scripts.set('m', { pieces: [b(events), b(DONE)] });
    const r = await post(g.url, chat('m'));
    expect([r.status, r.body.toString()]).toEqual([200, events + DONE]);
    await nothingLeft(g);
  });

  test('the command: --max-streams 0 exits 2 with the reason, naming the option as it was given', async () => {
    const child = spawn(process.execPath, [server, '--upstream', 'http://127.0.0.1:9', '--max-streams', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
    const kill = setTimeout(() => child.kill(), 10_000); // (a gateway that took it listens)
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    clearTimeout(kill);
    expect([code, err]).toEqual([2, '--max-streams: maxStreams must be a positive integer\n']);
  });
});
