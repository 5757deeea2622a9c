// The ESM build in a real browser (Debian's Chromium, or Firefox ESR with SEAM_BROWSER=firefox: harness.ts): imported with no
// init call, SIMD core, no Node Buffer (so the browsers' string routes: short reads through the core, long ones and frames by TextDecoder), every layer, compared
// with the browser's own TextDecoder and normalize. Run by `npm run test:browser` (CI installs
// Chromium first); `npm test` does not need a browser.
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserName, browserTitle, close, launch, serve, type TestBrowser as Browser } from './harness.js';

let server: Server;
let browser: Browser;
let base = '';

beforeAll(async () => {
  ({ server, base } = await serve());
  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
  await close(server);
});

describe(`ESM build in ${browserTitle}`, () => {
  it('decodes bytes, frames and text exactly as the browser’s own decoder would', async () => {
    const page = await browser.newPage();
    await page.goto(base + '/');
    const result = await page.evaluate("import('/page.mjs').then((p) => p.run())") as Record<string, any>;
    expect(result.hasBuffer).toBe(false);
    expect(result.spiderMonkey).toBe(browserName === 'firefox');
    expect(result.backend).toBe('simd');
    expect(result.utf8Ok).toBe(true);
    expect(result.sseOk).toBe(true);
    expect(result.mixedReads).toBe(60);
    expect(result.badAfter.map((e: { code: string; offset: number; whole: boolean; at: number }) => [e.code, e.offset === e.at, e.whole])).toEqual([['ERR_INVALID_UTF8', true, true], ['ERR_INVALID_UTF8', true, true]]);
    expect(result.whole).toEqual([
      { type: 'message', data: '{"delta":"cafe\u0301 世界 👩‍💻 🇯🇵 क्ष"}', id: '' },
      { type: 'done', data: '[DONE]', id: '' },
    ]);
    expect(result.bad).toEqual({ code: 'ERR_INVALID_UTF8', offset: 1 });
    // a bad sequence begun in the previous read (two short reads: the core finds and places it)
    expect(result.spanning).toEqual({ first: 'AB', code: 'ERR_INVALID_UTF8', offset: 2, text: '', pending: 0 });
    expect(result.lenient).toBe(result.lenientOracle);
    expect(result.report.text).toBe('café 👩‍💻');
    expect(result.report.graphemes).toBe(6);
    const { createHash } = await import('node:crypto');
    expect(result.report.sha256).toBe(createHash('sha256').update('café 👩‍💻').digest('hex'));
    // the raw mode's kept text keeps the lone surrogates JSON escapes wrote (this browser's route
    // decodes long pieces with a UTF-16 TextDecoder, which would make them U+FFFD)
    expect(result.lone).toEqual({ same: true, kept: true, units: 725 });
    // Whether the browser calls a transformer's cancel (the Streams standard's since 2023): neither
    // Chromium 156 nor Firefox 153 ESR does, for a cancelled readable side or an aborted writable
    // side, where Node, Bun, Deno and workerd do; seam's streams then put their own two sides in
    // front (core/transform.ts), so that what follows is the same on every runtime.
    expect(result.transformerCancel).toEqual({ readable: false, writable: false });
    // an upstream that errors mid-event: the client's stream ends with the relay's abort() event,
    // byte for byte as SseRelay writes it, and not with an error
    expect(result.drop).toEqual({
      errored: null, same: true, sameBefore: false, upstreamError: 'connection reset', status: 'failed',
      tail: expect.stringMatching(/"message":"the upstream connection broke before the stream's completion: the answer is cut short","type":"server_error","code":"ERR_STREAM_TRUNCATED"\}\}\n\n$/),
    });
    // ModelTextStream: the text before the upstream's error, then the error, and the report
    // rejects with it; a reader that cancels: the report rejects with its reason, the upstream is
    // cancelled with it, and both streams' decoders are done (their memory given back)
    expect(result.model).toEqual({
      text: 'Hello', textError: 'connection reset', report: 'rejected connection reset', status: 'failed',
      firstText: 'Hello', leftReport: 'rejected stop pressed', leftStatus: 'failed', sourceCancelled: 'stop pressed',
    });
    // ModelPartStream: the parts of a turn in the order its reads brought them, then its finish
    expect(result.parts).toEqual([
      'reasoning Hm.', 'text Caf', 'tool-call w {} false', 'tool-call w {"a":1} false', 'tool-call w  true', 'text é', 'finish done tool_use', 'report Café',
    ]);
    // (the turn in one read: pushed an event at a time, the same parts in the same order)
    expect(result.partsWhole).toEqual(result.parts);
    await page.close();
  });
});
