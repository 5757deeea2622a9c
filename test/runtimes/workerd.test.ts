// Cloudflare's workerd (the pinned npm package), serving on 127.0.0.1 a Worker bundled as wrangler
// bundles it: the package's `workerd` entry (dist/workerd.js, its core imported as a .wasm module).
// Every model fixture is relayed and decoded in the Worker, its body arriving in small pieces, and
// the bytes and text it answers are checked against SseRelay and ModelStream in this process. The
// control: the same Worker bundled without the workerd condition gets the ESM build, whose core is
// compiled from bytes, which workerd refuses, and seam says what to do. The string routes seam
// detects there: the core's at the harness's compatibility date (nodejs_compat, a global Buffer),
// the browsers' at one before nodejs_compat was on by default (no Buffer).
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ModelPart, ModelPartReader, ModelStream, ModelStreamError, SseRelay } from '../../bindings/index.js';
import { FIXTURES } from '../helpers/model-fixtures.js';
import { post, root, serveWorkers } from './harness.js';

let workers: Awaited<ReturnType<typeof serveWorkers>>;
const entry = join(root, 'test', 'runtimes', 'workerd-worker.mjs');

beforeAll(async () => {
  workers = await serveWorkers([
    { name: 'entry', entry, conditions: ['workerd', 'worker', 'browser'] },
    { name: 'plain', entry, conditions: ['browser'] },
    { name: 'old', entry, conditions: ['workerd', 'worker', 'browser'], compatibilityDate: '2024-06-01' },
  ]);
}, 60_000);

afterAll(async () => {
  await workers?.stop();
});

const concat2 = (a: Uint8Array, b: Uint8Array) => {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
};

/** What SseRelay writes for `bytes`, in one push. */
function relayed(bytes: Uint8Array, from: string, to: string): Uint8Array {
  const r = new SseRelay({ from: from as 'openai', to: to as 'openai', id: 'chatcmpl-fixed', model: 'm' });
  return concat2(r.push(bytes).slice(), r.flush().slice());
}

// `created` is the relay's clock (seconds) in chunks it writes anew for OpenAI clients: the one
// field that may differ between two runs
const unclock = (bytes: Uint8Array) => new TextDecoder().decode(bytes).replace(/"created":\d+/g, '"created":0')
  .replace(/(chatcmpl-seam|msg_seam|call_seam|toolu_seam)[0-9a-z_]+/g, '$1…');

const unkept = (s: string) => s.replace(/^event: ping\ndata: \{"type":"ping"\}\n\n/gm, '').replace(/^:[^\n]*\n\n/gm, '');

describe('workerd, through the package\'s workerd entry', () => {
  it('runs the SIMD core from the compiled module where compiling bytes is refused', async () => {
    const about = await (await fetch(`${workers.bases.entry}/about`)).json();
    expect(about.codegen).toContain('Wasm code generation disallowed by embedder');
    expect(about.backend).toBe('simd');
    expect(about.events).toEqual([{ type: 'message', data: '世界 👩‍💻', id: '' }]);
    // workerd calls a transformer's cancel: seam's streams are the TransformStream's own sides
    expect([about.cancels, about.ownSides]).toEqual([true, false]);
  });

  it('takes the core string route at the harness\'s compatibility date (2026-11-01: nodejs_compat, a global Buffer)', async () => {
    // (docs/runtimes.md, *workerd*; Infinity comes as a string)
    const got = await (await fetch(`${workers.bases.entry}/routes`)).json();
    expect(got.Buffer).toBe('function');
    expect(got.routes).toEqual({
      runtime: 'workerd', utf8: 'core', utf8PlatformFrom: 'Infinity', utf8Platform: 'textdecoder', utf8DecoderFrom: 'Infinity', utf8ShortAscii: 'core', frames: 'core', sseData: 'whole', sseCoreTo: 0,
      validateFrom: 'Infinity', sseValidFrom: 'Infinity', shortUnits: 32, by: 'detected',
    });
  });

  it('takes the browsers\' string route at a compatibility date without nodejs_compat (2024-06-01: no Buffer)', async () => {
    const got = await (await fetch(`${workers.bases.old}/routes`)).json();
    expect(got.Buffer).toBe('undefined');
    expect(got.routes).toEqual({
      runtime: 'workerd', utf8: 'split', utf8PlatformFrom: 129, utf8Platform: 'textdecoder', utf8DecoderFrom: 'Infinity', utf8ShortAscii: 'js', frames: 'textdecoder', sseData: 'pieces', sseCoreTo: 384,
      validateFrom: 'Infinity', sseValidFrom: 'Infinity', shortUnits: 16, by: 'detected',
    });
  });

  it('relays every fixture to OpenAI and to Anthropic as SseRelay does here: byte for byte to its own format, but for made ids and clock to the other', async () => {
    let exact = 0;
    for (const f of FIXTURES) {
      if (f.choice !== undefined) continue;
      for (const to of ['openai', 'anthropic']) {
        const want = relayed(f.bytes, f.format, to);
        const got = await post(`${workers.bases.entry}/relay?from=${f.format}&to=${to}&id=chatcmpl-fixed&model=m`, f.bytes);
        expect(got.status, f.name).toBe(200);
        expect(got.type).toBe('text/event-stream');
        // a relay that writes events anew makes ids and reads its clock: compared with those normalized
        // (where a keep-alive lands among the events depends on how the reads were cut, which here
        // the network decides: a stream with keep-alives is compared without them)
        const plain = new TextDecoder().decode(want);
        if (unkept(unclock(want)) !== plain) {
          expect(unkept(unclock(got.bytes)), `${f.name} → ${to}`).toBe(unkept(unclock(want)));
        } else {
          expect(Buffer.from(got.bytes).equals(Buffer.from(want)), `${f.name} → ${to}: ${new TextDecoder().decode(got.bytes).slice(0, 300)}`).toBe(true);
          exact++;
        }
      }
    }
    expect(exact).toBeGreaterThan(FIXTURES.length / 3); // (the fixtures from OpenAI and Anthropic to their own format)
  });

  it('ends a relay whose upstream body drops with the relay\'s abort, as SseRelay writes it here', async () => {
    const broke = { message: 'the upstream connection broke before the stream\'s completion: the answer is cut short', kind: 'server', code: 'ERR_STREAM_TRUNCATED' } as const;
    for (const name of ['anthropic-basic', 'openai-basic', 'gemini-basic']) {
      const f = FIXTURES.find((x) => x.name === name)!;
      const cutAt = Math.floor(f.bytes.length / 2);
      for (const to of ['openai', 'anthropic']) {
        const r = new SseRelay({ from: f.format as 'openai', to: to as 'openai', id: 'chatcmpl-fixed', model: 'm' });
        const want = concat2(r.push(f.bytes.subarray(0, cutAt)).slice(), r.abort(broke).slice());
        const res = await fetch(`${workers.bases.entry}/drop?from=${f.format}&to=${to}&id=chatcmpl-fixed&model=m`, {
          method: 'POST', body: f.bytes.slice(0, cutAt), headers: { 'content-type': 'application/octet-stream' },
        });
        expect(res.status, `${name} → ${to}: ${res.status === 200 ? '' : await res.clone().text()}`).toBe(200);
        expect(res.headers.get('x-upstream-error')).toBe('upstream dropped');
        const got = new Uint8Array(await res.arrayBuffer());
        expect(unclock(got), `${name} → ${to}`).toBe(unclock(want));
        expect(new TextDecoder().decode(got)).toContain('the upstream connection broke before');
      }
    }
  });

  it('decodes every fixture to the text, status, usage, reasoning and tool calls ModelStream gives here', async () => {
    for (const f of FIXTURES) {
      const m = new ModelStream({ format: f.format, choice: f.choice ?? 0 });
      let text = '';
      let error: { code: string; offset: number; text: string } | undefined;
      try {
        text += m.push(f.bytes);
        text += m.flush();
      } catch (e) {
        if (!(e instanceof ModelStreamError)) throw e;
        error = { code: e.code, offset: e.offset, text: e.text };
        text += e.text;
      }
      const got = await (await fetch(`${workers.bases.entry}/text?format=${f.format}&choice=${f.choice ?? 0}`, {
        method: 'POST', body: f.bytes.slice(), headers: { 'content-type': 'application/octet-stream' },
      })).json();
      expect(got.error?.code, f.name).toBe(error?.code);
      expect(got.error?.offset, f.name).toBe(error?.offset);
      expect(got.text, f.name).toBe(text); // (the text an error carries is enqueued before the stream errors)
      expect(got.status, f.name).toBe(m.status);
      expect(got.finishReason ?? undefined, f.name).toBe(m.finishReason);
      expect(got.usage ?? undefined, f.name).toEqual(m.usage);
      expect(got.reasoning, f.name).toBe(m.reasoning);
      expect(got.toolCalls, f.name).toEqual(JSON.parse(JSON.stringify(m.toolCalls)));
      if (!error) expect(got.sha256, f.name).toBe(createHash('sha256').update(text).digest('hex'));
      // ModelPartStream in the Worker: each kind of part joined is what the stream says
      const parts = await (await fetch(`${workers.bases.entry}/parts?format=${f.format}&choice=${f.choice ?? 0}`, {
        method: 'POST', body: f.bytes.slice(), headers: { 'content-type': 'application/octet-stream' },
      })).json();
      expect([parts.text, parts.reasoning, parts.toolCalls, parts.error?.code, parts.finish?.status], f.name)
        .toEqual([text, m.reasoning, JSON.parse(JSON.stringify(m.toolCalls)), error?.code, error ? undefined : m.status]);
      // and each part, in order, as ModelPartReader gives them on Node for the fixture read whole (the same however it is cut)
      const model = new ModelStream({ format: f.format, choice: f.choice });
      const reader = new ModelPartReader(model);
      const want: ModelPart[] = [];
      try {
        want.push(...reader.push(f.bytes));
        want.push(...reader.flush());
      } catch (e) {
        want.push(...reader.take((e as { text?: string }).text ?? ''));
      }
      expect(parts.parts, f.name).toEqual(JSON.parse(JSON.stringify(want)));
    }
  });

  it('a long answer in many reads: its report hashes the UTF-8 the core logged (from the first read after 1 KiB), as Node hashes the text', async () => {
    const words = ['The ', 'quick ', 'brown ', 'fox ', 'héllo ', 'wörld ', '東京 ', '🚀 ', '👩‍💻 ', 'cafe\u0301 ', '"quoted" ', 'back\\slash '];
    let body = '';
    let text = '';
    for (let i = 0; i < 6000; i++) {
      const w = words[i % words.length] + words[(i * 7) % words.length];
      text += w;
      body += `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: w }, finish_reason: null }] })}\n\n`;
    }
    body += 'data: [DONE]\n\n';
    const want = text.normalize('NFC');
    // (sent as a stream of 4 KiB pieces: the Worker reads it in more than one read)
    const bytes = new TextEncoder().encode(body);
    let at = 0;
    const upload = new ReadableStream({
      pull(c) {
        if (at >= bytes.length) return c.close();
        c.enqueue(bytes.slice(at, at + 4096));
        at += 4096;
      },
    });
    const got = await (await fetch(`${workers.bases.entry}/text?format=openai`, {
      method: 'POST', body: upload, duplex: 'half', headers: { 'content-type': 'application/octet-stream' },
    } as RequestInit)).json();
    expect([got.error, got.status, got.text === want, got.textLog]).toEqual([undefined, 'done', true, true]);
    expect(got.sha256).toBe(createHash('sha256').update(want).digest('hex'));
  });

  it('without the workerd condition, the core cannot be compiled there, and SeamWasmError says what to do', async () => {
    const res = await fetch(`${workers.bases.plain}/about`);
    const body = await res.json();
    expect(res.status).toBe(500);
    expect(body).toMatchObject({ thrown: 'SeamWasmError', code: 'ERR_WASM_CODEGEN' });
    expect(body.message).toContain('"workerd"');
    expect(body.message).toContain('setCoreModule');
  });
});
