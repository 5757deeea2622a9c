// Heavy streams in headless Chromium (or Firefox ESR: harness.ts): a 50 MiB OpenAI-shaped stream (seeded; multilingual text,
// emoji ZWJ sequences, combining marks), written by the server in small pieces, decoded by
// ModelStream on the page and in seam's Worker, against Node's ModelStream on the same bytes; the
// page thread's long tasks meanwhile; the Worker's errors and cancel; a Content Security Policy
// with and without 'wasm-unsafe-eval'; a page that uses only the text layer compiles no WebAssembly.
import type { Server, ServerResponse } from 'node:http';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelStream } from '../../bindings/index.js';
import { SEED } from '../helpers/random.js';
import { browserTitle, close, launch, root, serve, type TestBrowser as Browser } from './harness.js';
import { heavyStream, pieceSizes } from './heavy-stream.js';

const SIZE = 50 << 20;
const seed = SEED;
let stream: Uint8Array;
let pieces: number[];
let server: Server;
let browser: Browser;
let base = '';
let textOnlyBundle = '';

/** Writes `bytes` in the given piece sizes, waiting whenever the socket asks. */
async function writePieces(res: ServerResponse, bytes: Uint8Array, sizes: number[]): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
  let at = 0;
  for (const n of sizes) {
    if (res.destroyed) return;
    if (!res.write(bytes.subarray(at, at + n))) await new Promise((r) => res.once('drain', r));
    at += n;
  }
  res.end();
}

const small = new TextEncoder().encode(
  ['Hel', 'lo, ', '世界 ', '👩‍💻', ' e\u0301'].map((t) => `data: {"choices":[{"index":0,"delta":{"content":${JSON.stringify(t)}}}]}\n\n`).join('')
  + 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
);
const DONE = new TextEncoder().encode('data: [DONE]\n\n');
const html = (body = '') => `<!doctype html><title>seam</title>${body}`;
const cspPage = (policy: string) => (_: unknown, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': policy });
  res.end(html('<script type="module" src="/csp.mjs"></script>'));
};

beforeAll(async () => {
  stream = heavyStream(SIZE, seed).bytes;
  pieces = pieceSizes(stream.length, seed);
  const bundled = await build({
    stdin: { contents: "export * from './dist/index.js';", resolveDir: root, sourcefile: 'text-only-entry.js' },
    bundle: true, format: 'esm', minify: true, write: false, platform: 'browser', logLevel: 'error',
  });
  // only the text layer: the entry re-exports its names alone
  const textOnly = await build({
    stdin: {
      contents: "export { TextAssembler, GraphemeCommitter, countText } from './dist/index.js';",
      resolveDir: root, sourcefile: 'text-only-entry.js',
    },
    bundle: true, format: 'esm', minify: true, write: false, platform: 'browser', logLevel: 'error',
  });
  expect(bundled.outputFiles[0].text).toContain('WebAssembly'); // the whole package does carry it
  textOnlyBundle = textOnly.outputFiles[0].text;
  ({ server, base } = await serve({
    '/stream': (_, res) => writePieces(res, stream, pieces),
    '/small': (req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(req.url?.includes('cut=1') ? small : Buffer.concat([small, DONE]));
    },
    '/error-body': (_, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}');
    },
    '/hang': (_, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(small.subarray(0, small.indexOf(10) + 2));
      const t = setInterval(() => res.write(': keep-alive\n\n'), 50);
      res.on('close', () => clearInterval(t));
    },
    '/csp/with': cspPage("script-src 'self' 'wasm-unsafe-eval'"),
    '/csp/without': cspPage("script-src 'self'"),
    '/bundle/text-only.js': (_, res) => {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(textOnlyBundle);
    },
  }));
  browser = await launch();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await close(server);
});

/** Node's ModelStream over the same bytes, in 64 KiB reads. */
function nodeReport() {
  const m = new ModelStream({ format: 'openai' });
  let text = '';
  for (let i = 0; i < stream.length; i += 1 << 16) text += m.push(stream.subarray(i, i + (1 << 16)));
  text += m.flush();
  const r = m.finish();
  return {
    textLength: text.length,
    report: {
      status: r.status, finishReason: r.finishReason, usage: r.usage, events: r.events, utf8Bytes: r.utf8Bytes, codePoints: r.codePoints,
      utf16Units: r.utf16Units, graphemes: r.graphemes, normalizationChanged: r.normalizationChanged, sha256: r.sha256,
    },
  };
}

describe(`a 50 MiB model stream in ${browserTitle} (seed ${seed}; SEAM_SEED replays)`, () => {
  let expected: ReturnType<typeof nodeReport>;
  beforeAll(() => { expected = nodeReport(); });

  it('decodes on the page exactly as Node does', async () => {
    expect(expected.report.status).toBe('done');
    expect(expected.report.normalizationChanged).toBe(true);
    const page = await browser.newPage();
    await page.goto(base + '/');
    const r = await page.evaluate("import('/heavy.mjs').then((p) => p.onPage('/stream'))") as Record<string, any>;
    await page.close();
    expect(r.report).toEqual(expected.report);
    expect(r.textLength).toBe(expected.textLength);
    expect(r.same).toBe(true);
    expect(r.reads).toBeGreaterThan(1);
    console.log(`page thread: ${r.ms} ms, ${r.reads} reads, long tasks ${r.longTasks.supported ? r.longTasks.count : 'not observable'} (longest ${r.longTasks.max} ms), ${r.fps} frames/s`);
  });

  it('decodes in the Worker exactly as Node does, with no long task on the page', async () => {
    const page = await browser.newPage();
    await page.goto(base + '/');
    const r = await page.evaluate("import('/heavy.mjs').then((p) => p.inWorker('/stream'))") as Record<string, any>;
    await page.close();
    expect(r.report).toEqual(expected.report);
    expect(r.bytesIn).toBe(stream.length);
    expect(r.textLength).toBe(expected.textLength);
    expect(r.textSha256).toBe(expected.report.sha256);
    // batched: far fewer messages than events (at most one per 16 ms, or per MiB of text)
    expect(r.messages).toBeLessThan(expected.report.events / 100);
    console.log(`Worker: ${r.ms} ms, ${r.messages} messages, page long tasks ${r.longTasks.supported ? r.longTasks.count : 'not observable'} (longest ${r.longTasks.max} ms), ${r.fps} frames/s`);
    // (Firefox has no 'longtask' entries: there the count says nothing, and is not checked)
    if (r.longTasks.supported) expect(r.longTasks.count).toBe(0);
  });
});

describe('the Worker', () => {
  it('posts errors as typed errors, reads a transferred body, and cancels', async () => {
    const page = await browser.newPage();
    await page.goto(base + '/');
    const r = await page.evaluate(`import('/heavy.mjs').then((p) => p.workerErrors(${JSON.stringify(base)}))`) as Record<string, any>;
    await page.close();
    expect(r.truncated).toMatchObject({ cls: 'ModelStreamError', code: 'ERR_STREAM_TRUNCATED', offset: small.length, text: 'Hello, 世界 👩‍💻 é' });
    expect(r.provider).toMatchObject({
      cls: 'ModelStreamError', code: 'ERR_PROVIDER', offset: 0, status: 401, providerMessage: 'Incorrect API key provided', text: '',
    });
    expect(r.http).toMatchObject({ cls: 'WorkerStreamError', code: 'ERR_HTTP', status: 404, text: '' });
    expect(r.http.message).toBe('seam worker: HTTP 404 Not Found');
    expect(r.events).toBe(7);
    expect(r.lastData).toBe('[DONE]');
    expect(r.sseReport).toEqual({ status: 'done', events: 7, lastEventId: '', retry: undefined, bytesIn: small.length + DONE.length });
    expect(r.first).toBe('He'); // the last cluster is held until the next delta
    expect(r.cancelled).toMatchObject({ cls: 'WorkerStreamError', code: 'ERR_ABORTED', message: 'seam worker: cancelled', text: '' });
  });
});

describe('a Content Security Policy', () => {
  it("with 'wasm-unsafe-eval', the core works", async () => {
    const page = await browser.newPage();
    await page.goto(base + '/csp/with');
    const r = await page.waitForFunction(() => (window as unknown as { __csp?: unknown }).__csp).then((h) => h.jsonValue()) as Record<string, any>;
    await page.close();
    expect(r).toEqual({ ok: true, events: [{ type: 'message', data: '世界', id: '' }], backend: 'simd' });
  });

  it("without it, seam's SeamWasmError names the directive to add; the text layer works", async () => {
    const page = await browser.newPage();
    await page.goto(base + '/csp/without');
    const r = await page.waitForFunction(() => (window as unknown as { __csp?: unknown }).__csp).then((h) => h.jsonValue()) as Record<string, any>;
    await page.close();
    expect(r).toMatchObject({
      ok: false, cls: 'SeamWasmError', name: 'SeamWasmError', code: 'ERR_WASM_BLOCKED', cause: 'CompileError',
      again: 'same error', ready: 'ERR_WASM_BLOCKED', textLayer: 'é',
    });
    expect(r.message).toContain("add 'wasm-unsafe-eval' to its script-src directive");
  });
});

describe('the text layer alone', () => {
  it('compiles no WebAssembly, bundled or not', async () => {
    expect(textOnlyBundle).not.toContain('WebAssembly');
    const page = await browser.newPage();
    await page.addInitScript(() => {
      const calls: Record<string, number> = {};
      (window as unknown as { __wasmCalls: typeof calls }).__wasmCalls = calls;
      const W = WebAssembly as unknown as Record<string, unknown>;
      for (const name of ['Module', 'Instance', 'compile', 'instantiate', 'compileStreaming', 'instantiateStreaming', 'validate']) {
        const real = W[name] as (...a: unknown[]) => unknown;
        if (typeof real !== 'function') continue;
        calls[name] = 0;
        const wrapped = function (this: unknown, ...args: unknown[]) {
          calls[name]++;
          return new.target ? Reflect.construct(real, args, new.target) : real.apply(this, args);
        };
        wrapped.prototype = real.prototype;
        W[name] = wrapped;
      }
    });
    await page.goto(base + '/');
    const r = await page.evaluate("import('/text-only.mjs').then((p) => p.run('/bundle/text-only.js'))") as Record<string, any>;
    await page.close();
    const use = { out: 'café 👩‍💻 o', report: 'café 👩‍💻 ok', graphemes: 2, committed: '🇯🇵🇫' };
    expect(r.bundled).toEqual(use);
    expect(r.unbundled).toEqual(use);
    const none = { Module: 0, Instance: 0, compile: 0, instantiate: 0, compileStreaming: 0, instantiateStreaming: 0, validate: 0 };
    expect(r.afterBundle).toEqual(none);
    expect(r.afterUnbundled).toEqual(none);
    // the control: the wrappers do see the core compiled
    expect(r.afterCore.Module + r.afterCore.compile + r.afterCore.instantiate).toBeGreaterThan(0);
  });
});

