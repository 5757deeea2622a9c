// The command as users run it: `node dist/cli.js …` in a child process (after npm run build).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const root = join(__dirname, '..', '..');
export const cli = join(root, 'dist', 'cli.js');
export const writerScript = join(__dirname, 'writer.mjs');

export interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stdoutBytes: Buffer;
  stderr: string;
  ms: number;
}

export interface RunOptions {
  input?: Uint8Array | string;
  /** Standard input: a child's standard output, or left open ('open'). */
  stdin?: ChildProcess | 'open';
  env?: Record<string, string>;
  nodeArgs?: string[];
  timeoutMs?: number;
}

/** A started command, with what it printed so far. */
export interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves once standard output satisfies `test` (rejects after `ms`). */
  waitStdout(test: (s: string) => boolean, ms?: number): Promise<void>;
  done: Promise<Result>;
}

export function start(args: string[], o: RunOptions = {}): Running {
  const t0 = performance.now();
  const stdin = o.stdin === undefined || o.stdin === 'open' ? 'pipe' : o.stdin.stdout!;
  const child = spawn(process.execPath, [...(o.nodeArgs ?? []), cli, ...args], {
    cwd: root, env: { ...process.env, ...o.env }, stdio: [stdin, 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  let err = '';
  const waiters: { test: (s: string) => boolean; resolve: () => void }[] = [];
  const text = () => Buffer.concat(out).toString('utf8');
  child.stdout!.on('data', (b: Buffer) => {
    out.push(b);
    if (waiters.length === 0) return;
    const s = text();
    for (const w of waiters.splice(0)) (w.test(s) ? w.resolve() : waiters.push(w));
  });
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  if (typeof o.input === 'string' || o.input instanceof Uint8Array) child.stdin!.end(o.input);
  else if (o.stdin === undefined) child.stdin!.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 20_000);
  const done = new Promise<Result>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: text(), stdoutBytes: Buffer.concat(out), stderr: err, ms: performance.now() - t0 });
    });
  });
  return {
    child, stdout: text, stderr: () => err, done,
    waitStdout(test, ms = 10_000) {
      if (test(text())) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`timed out waiting for standard output; it is ${JSON.stringify(text())}; stderr ${JSON.stringify(err)}`)), ms);
        waiters.push({ test, resolve: () => (clearTimeout(t), resolve()) });
      });
    },
  };
}

export function run(args: string[], o: RunOptions = {}): Promise<Result> {
  return start(args, o).done;
}

/** A slow writer child (test/cli/writer.mjs) of `file`, cut at `cuts`. */
export function writer(file: string, cuts: number[], delayMs: number, holdAt = -1, heartbeatMs = 0): ChildProcess & { said: () => string } {
  const w = spawn(process.execPath, [writerScript, file, cuts.join(','), String(delayMs), holdAt >= 0 ? String(holdAt) : '', String(heartbeatMs)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  }) as ChildProcess & { said: () => string };
  let said = '';
  w.stderr!.setEncoding('utf8').on('data', (s: string) => (said += s));
  w.said = () => said;
  return w;
}

/** A slow writer child of `pieces` joined (written to `name` in `dir`), a piece a write, `delayMs` apart. */
export function piecesWriter(dir: string, name: string, pieces: readonly string[], delayMs: number): ReturnType<typeof writer> {
  const cuts: number[] = [];
  let at = 0;
  for (const p of pieces.slice(0, -1)) cuts.push(at += Buffer.byteLength(p));
  return writer(file(dir, name, pieces.join('')), cuts, delayMs);
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'seam-cli-'));
}

export function file(dir: string, name: string, content: string | Uint8Array): string {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
}

/** No stack trace: no "    at f (file:1:2)" frames, no "Error:" dump. */
export function noStack(stderr: string): boolean {
  return !/\n\s+at .*:\d+:\d+/.test(stderr) && !/^\w*Error: /m.test(stderr);
}

/** The seeded PRNG of the tests and benchmarks (mulberry32). */
export { rng as prng } from '../helpers/random.js';

const enc = new TextEncoder();

/** Captures of each format, with the text they carry (as deltas) and their completion. */
export function openaiCapture(deltas: string[], o: { crlf?: boolean; done?: boolean; bom?: boolean } = {}): Uint8Array {
  const nl = o.crlf ? '\r\n' : '\n';
  let s = o.bom ? '\ufeff' : '';
  s += `: keep-alive${nl}${nl}`;
  deltas.forEach((d, i) => {
    s += `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: d }, finish_reason: null }] })}${nl}${nl}`;
    if (i === 1) s += `: ping${nl}${nl}`;
  });
  s += `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}${nl}${nl}`;
  s += `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 9, completion_tokens: deltas.length, total_tokens: 9 + deltas.length } })}${nl}${nl}`;
  if (o.done !== false) s += `data: [DONE]${nl}${nl}`;
  return enc.encode(s);
}

export function anthropicCapture(deltas: string[], o: { stop?: boolean } = {}): Uint8Array {
  const ev = (t: string, d: unknown) => `event: ${t}\ndata: ${JSON.stringify(d)}\n\n`;
  let s = ev('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 12, output_tokens: 1 } } });
  s += ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
  s += ev('ping', { type: 'ping' });
  for (const d of deltas) s += ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: d } });
  s += ev('content_block_stop', { type: 'content_block_stop', index: 0 });
  s += ev('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: deltas.length } });
  if (o.stop !== false) s += ev('message_stop', { type: 'message_stop' });
  return enc.encode(s);
}

export function responsesCapture(deltas: string[], o: { completed?: boolean } = {}): Uint8Array {
  const ev = (t: string, d: Record<string, unknown>) => `event: ${t}\ndata: ${JSON.stringify({ type: t, ...d })}\n\n`;
  let s = ev('response.created', { response: { id: 'resp_1', status: 'in_progress' } });
  for (const d of deltas) s += ev('response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta: d });
  if (o.completed !== false) s += ev('response.completed', { response: { id: 'resp_1', status: 'completed', usage: { input_tokens: 5, output_tokens: deltas.length } } });
  return enc.encode(s);
}

export function ollamaCapture(deltas: string[], o: { done?: boolean } = {}): Uint8Array {
  const lines = deltas.map((d) => JSON.stringify({ model: 'llama3.2', created_at: '2026-11-30T10:00:00Z', message: { role: 'assistant', content: d }, done: false }));
  if (o.done !== false) lines.push(JSON.stringify({ model: 'llama3.2', created_at: '2026-11-30T10:00:01Z', message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', prompt_eval_count: 10, eval_count: deltas.length }));
  return enc.encode(lines.map((l) => `${l}\n`).join(''));
}

export function ddgCapture(deltas: string[], o: { done?: boolean; crlf?: boolean } = {}): Uint8Array {
  const nl = o.crlf === false ? '\n' : '\r\n';
  let s = '';
  for (const d of deltas) s += `data: ${JSON.stringify({ role: 'assistant', message: d, created: 1764500000, action: 'success', id: 'x', model: 'gpt-4o-mini' })}${nl}${nl}`;
  if (o.done !== false) s += `data: [DONE]${nl}`;
  return enc.encode(s);
}

/**
 * Byte offsets where a read may end awkwardly: inside a UTF-8 character, right after a CR or an
 * LF (so inside CRLF and blank lines), and inside the completion's marker.
 */
export function awkwardCuts(bytes: Uint8Array, markers: string[] = ['[DONE]', 'message_stop', 'response.completed', '"done":true']): number[] {
  const out = new Set<number>();
  for (let p = 1; p < bytes.length; p++) {
    if ((bytes[p] & 0xc0) === 0x80) out.add(p);
    if (bytes[p - 1] === 13 || bytes[p - 1] === 10) out.add(p);
  }
  const s = Buffer.from(bytes).toString('latin1');
  for (const m of markers) {
    for (let at = s.indexOf(m); at >= 0; at = s.indexOf(m, at + 1)) for (let k = 1; k < m.length; k++) out.add(at + k);
  }
  return [...out].sort((a, b) => a - b);
}
