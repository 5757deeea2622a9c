// streamInWorker against a stand-in Worker (the real one runs in test/browser/): parts in order,
// errors revived as ModelStreamError or WorkerStreamError, cancel, leaving the loop, the signal.
import { describe, expect, it } from 'vitest';
import { ModelStreamError, WorkerStreamError, streamInWorker } from '../../bindings/index.js';

class FakeWorker extends EventTarget {
  sent: Array<{ msg: any; transfer: unknown[] }> = [];
  postMessage(msg: unknown, transfer: unknown[] = []) { this.sent.push({ msg, transfer }); }
  emit(data: unknown) { this.dispatchEvent(new MessageEvent('message', { data })); }
  get id(): number { return this.sent[0].msg.id; }
}
const asWorker = (w: FakeWorker) => w as unknown as Worker;
const part = (id: number, text: string, bytesIn: number) => ({ type: 'part', id, text, events: [], bytesIn });

describe('streamInWorker', () => {
  it('sends the request and yields the parts in order, then the report', async () => {
    const w = new FakeWorker();
    const run = streamInWorker(asWorker(w), { url: new URL('http://127.0.0.1/x'), format: 'openai', interval: 40 });
    expect(w.sent[0].msg).toEqual({ type: 'start', id: w.id, format: 'openai', interval: 40, url: 'http://127.0.0.1/x', body: undefined });
    const id = w.id;
    w.emit(part(id, 'He', 10));
    w.emit(part(id + 1000, 'another stream', 1));
    const got: string[] = [];
    const reading = (async () => { for await (const p of run) got.push(p.text); })();
    await new Promise((r) => setTimeout(r, 5));
    w.emit(part(id, 'llo', 20));
    w.emit({ type: 'end', id, report: { status: 'done', events: 3, bytesIn: 20 } });
    await reading;
    expect(got).toEqual(['He', 'llo']);
    expect(await run.report).toEqual({ status: 'done', events: 3, bytesIn: 20 });
  });

  it('throws a ModelStreamError as the Worker described it, after the parts before it', async () => {
    const w = new FakeWorker();
    const run = streamInWorker(asWorker(w), { url: '/x', format: 'openai' });
    w.emit(part(w.id, 'text', 5));
    w.emit({ type: 'error', id: w.id, error: { name: 'ModelStreamError', code: 'ERR_STREAM_TRUNCATED', message: 'the stream ended', offset: 42, text: 'xt' } });
    const got: string[] = [];
    let error: unknown;
    try { for await (const p of run) got.push(p.text); } catch (e) { error = e; }
    expect(got).toEqual(['text']);
    expect(error).toBeInstanceOf(ModelStreamError);
    expect(error).toMatchObject({ code: 'ERR_STREAM_TRUNCATED', offset: 42, text: 'xt', message: 'the stream ended' });
    await expect(run.report).rejects.toBe(error);
  });

  it('every code of a ModelStreamError comes back as one, with the text it carries (the limits\', Bedrock\'s framing\'s)', async () => {
    for (const code of ['ERR_STREAM_TRUNCATED', 'ERR_PROVIDER', 'ERR_BAD_EVENT', 'ERR_EVENT_TOO_LARGE', 'ERR_ARGUMENTS_TOO_LARGE', 'ERR_REASONING_TOO_LONG', 'ERR_TEXT_TOO_LONG', 'ERR_INVALID_UTF8', 'ERR_CRC_MISMATCH', 'ERR_BAD_FRAME'] as const) {
      const w = new FakeWorker();
      const run = streamInWorker(asWorker(w), { url: '/x', format: 'bedrock' });
      w.emit({ type: 'error', id: w.id, error: { name: 'ModelStreamError', code, message: 'm', offset: 9, text: 'held' } });
      let error: unknown;
      try { for await (const _ of run); } catch (e) { error = e; }
      expect(error, code).toBeInstanceOf(ModelStreamError);
      expect(error, code).toMatchObject({ code, offset: 9, text: 'held', message: 'm' });
      await expect(run.report).rejects.toBe(error);
    }
  });

  it('throws WorkerStreamError for the rest, with its code, status and class in the Worker', async () => {
    const w = new FakeWorker();
    const run = streamInWorker(asWorker(w), { url: '/x', format: 'sse' });
    w.emit({ type: 'error', id: w.id, error: { name: 'Utf8DecodeError', code: 'ERR_INVALID_UTF8', message: 'bad', offset: 7 } });
    const e = await run.next().catch((err) => err);
    expect(e).toBeInstanceOf(WorkerStreamError);
    expect(e).toMatchObject({ code: 'ERR_INVALID_UTF8', offset: 7, errorName: 'Utf8DecodeError', status: undefined });
    const w2 = new FakeWorker();
    const run2 = streamInWorker(asWorker(w2), { url: '/x', format: 'openai' });
    w2.dispatchEvent(Object.assign(new Event('error'), { message: 'failed to load' }));
    await expect(run2.next()).rejects.toMatchObject({ code: 'ERR_WORKER', message: 'seam worker: failed to load' });
  });

  it('transfers a body; cancel(), leaving the loop and the signal send a cancel', async () => {
    const w = new FakeWorker();
    const body = new ReadableStream<Uint8Array>();
    const ac = new AbortController();
    const run = streamInWorker(asWorker(w), { body, format: 'openai' }, { signal: ac.signal });
    expect(w.sent[0].transfer).toEqual([body]);
    expect(w.sent[0].msg.body).toBe(body);
    ac.abort();
    run.cancel();
    expect(w.sent.slice(1).map((s) => s.msg)).toEqual([{ type: 'cancel', id: w.id }, { type: 'cancel', id: w.id }]);
    const w2 = new FakeWorker();
    const run2 = streamInWorker(asWorker(w2), { url: '/x', format: 'openai' });
    w2.emit(part(w2.id, 'a', 1));
    w2.emit(part(w2.id, 'b', 2));
    for await (const p of run2) { expect(p.text).toBe('a'); break; }
    expect(w2.sent.at(-1)!.msg).toEqual({ type: 'cancel', id: w2.id });
    expect(await run2.next()).toEqual({ done: true, value: undefined });
  });
});
