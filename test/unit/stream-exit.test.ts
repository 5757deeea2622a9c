// A relay stream whose upstream dropped and whose client then abandoned the body without cancelling
// it (never reading again): the wait for the client to read the relay's end must not keep the
// process alive. Run in a child process of the built package (Node only: the portable suites have
// no child processes).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '..', '..');

const script = `
import { SseRelayStream, coreMemoryUsed } from ${JSON.stringify(join(root, 'dist', 'index.js'))};
const enc = new TextEncoder();
const chunks = [enc.encode('data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\\n\\n')];
const upstream = new ReadableStream({ pull(c) { const x = chunks.shift(); if (x) c.enqueue(x); else c.error(new Error('socket hang up')); } });
const stream = new SseRelayStream({ from: 'openai' });
const reader = stream.readable.getReader();
upstream.pipeTo(stream.writable).catch(() => {});
await reader.read(); // the first event; the end queued after it is never read
await new Promise((r) => setTimeout(r, 50));
process.stdout.write(JSON.stringify({ status: stream.relay.status, upstream: stream.upstreamError?.message, memory: coreMemoryUsed() }));
`;

describe('SseRelayStream after its upstream dropped', () => {
  it('a client that abandons the body without cancelling it does not keep the process alive', async () => {
    const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 10_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? (err as { code?: number }).code ?? -1 : 0, stdout, stderr });
      });
      child.on('error', () => {});
    });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({ status: 'failed', upstream: 'socket hang up', memory: 0 });
  });
});
