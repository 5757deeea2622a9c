// The streams' suites again, with seam's own two sides in front of each TransformStream: the route
// taken where the runtime does not call a transformer's cancel (Chromium 156, Firefox 153 ESR; the
// browser tests take it for real). A client that leaves, an upstream that errors, a decoder's error
// and a stream's end must give exactly what the runtime's own route gives, and the memory back.
import '../helpers/no-transformer-cancel.js';
import '../unit/stream-ownership.test.js';
import '../unit/model-streams.test.js';
import '../unit/streams.test.js';

import { expect, it } from 'vitest';
import { ModelTextStream, SseDecoderStream, SseRelay, SseRelayStream, Utf8DecoderStream } from '../../bindings/index.js';
import { Transform } from '../../bindings/core/transform.js';
import { BROKE } from '../helpers/model-streams.js';
import { OPENAI_END, OPENAI_HI } from '../helpers/relay-starts.js';

it('the streams here take seam\'s own sides: readable and writable are each stream\'s own properties, not the TransformStream\'s', async () => {
  const streams = [new Utf8DecoderStream(), new SseDecoderStream(), new SseRelayStream({ from: 'openai' }), new ModelTextStream({ format: 'openai' })];
  expect(streams.map((s) => [s instanceof TransformStream, Object.hasOwn(s, 'readable'), Object.hasOwn(s, 'writable')])).toEqual(streams.map(() => [true, true, true]));
  for (const s of streams) await s.readable.cancel();
});

// What a review of the sides found (each failed on their first version):
const enc = (s: string) => new TextEncoder().encode(s);
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

it('a reader that leaves after the writable side closed is not the upstream failing: the relay stays done, with no upstream error', async () => {
  const s = new SseRelayStream({ from: 'openai' });
  const w = s.writable.getWriter();
  w.write(enc(OPENAI_HI)).catch(() => {});
  const closing = w.close();
  const reader = s.readable.getReader();
  await reader.read();
  await tick();
  await reader.cancel('client left');
  await closing;
  // (an upstream that ends without its completion: the relay's error event, not the upstream's failure)
  expect([s.relay.status, s.upstreamError]).toEqual(['truncated', undefined]);
});

it('a stream that ended at the upstream\'s completion errors its writable side, as a TransformStream terminated does: a close after it rejects, and the relay stays done', async () => {
  const s = new SseRelayStream({ from: 'openai' });
  const w = s.writable.getWriter();
  w.write(enc(OPENAI_HI + OPENAI_END)).catch(() => {});
  const closing = w.close().then(() => 'closed', () => 'rejected');
  const reader = s.readable.getReader();
  let out = '';
  for (let x = await reader.read(); !x.done; x = await reader.read()) out += new TextDecoder().decode(x.value);
  expect(out).toBe(OPENAI_HI + OPENAI_END);
  expect(await closing).toBe('rejected');
  await reader.cancel('client left');
  expect([s.relay.status, s.upstreamError]).toEqual(['done', undefined]);
});

it('an aborted writable side errors the readable side at once, with no read pending', async () => {
  const s = new Utf8DecoderStream();
  const reader = s.readable.getReader();
  const w = s.writable.getWriter();
  const first = reader.read();
  await w.write(enc('héllo'));
  expect(await first).toEqual({ done: false, value: 'héllo' });
  await w.abort(new Error('A'));
  await expect(reader.closed).rejects.toThrow('A');
});

it('an abort asked while a write waits for the reader drops that write, as the standard\'s abort does', async () => {
  const s = new SseRelayStream({ from: 'openai' });
  const w = s.writable.getWriter();
  const held = [w.write(enc(OPENAI_HI)), w.write(enc(OPENAI_HI))];
  held.forEach((p) => p.catch(() => {}));
  await tick();
  const aborted = w.abort(new Error('A'));
  const reader = s.readable.getReader();
  let out = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
  }
  await aborted;
  const ref = new SseRelay({ from: 'openai' });
  const want = new TextDecoder().decode(ref.abort(BROKE));
  expect(out).toBe(want);
  expect((await Promise.allSettled(held)).map((r) => r.status)).toEqual(['rejected', 'rejected']);
});

it('a reader that cancels, where the stream\'s cancel fails: the writable side errors with that failure, after it, as the runtime\'s own route does (the pipe cancels its source with it)', async () => {
  const log: string[] = [];
  const own = new Error('the cancel\'s own error');
  const t = new Transform<string, string>({
    transform(c, ctl) { ctl.enqueue(c); },
    cancel(reason: unknown) {
      log.push(`cancel: ${String(reason)}`);
      throw own;
    },
  } as Transformer<string, string>);
  const said = (e: unknown) => (e instanceof Error ? e.message : String(e));
  const source = new ReadableStream<string>({
    start(c) { c.enqueue('a'); },
    cancel(reason) { log.push(`source cancelled: ${said(reason)}`); },
  });
  const piped = source.pipeTo(t.writable).then(() => 'done', (e) => `pipe: ${said(e)}`);
  const reader = t.readable.getReader();
  await reader.read();
  log.push(await reader.cancel('client left').then(() => 'cancelled', (e) => `reader: ${said(e)}`), await piped);
  expect(log).toEqual(['cancel: client left', 'source cancelled: the cancel\'s own error', 'reader: the cancel\'s own error', 'pipe: the cancel\'s own error']);
});
