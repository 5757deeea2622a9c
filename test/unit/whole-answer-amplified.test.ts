// A whole answer held within maxEventBytes whose stream's events would be many times its size (a
// long envelope, said again in the chunk of each of many choices): the answer fails at the body,
// ERR_EVENT_TOO_LARGE, its events never written past 4 × maxEventBytes and 1 MiB, where each chunk was
// written whole first (a body of 1 MiB wrote gigabytes of JSON, and the process ran out of memory).
import { describe, expect, it } from 'vitest';
import { ModelStream, ModelStreamError, SseRelay } from '../../bindings/index.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const MAX = 64 * 1024;
// (20,000 bytes of model, said again in each of 1,500 choices' chunks: 30 MB of events from 61 KB)
const body = JSON.stringify({ id: 'c', object: 'chat.completion', model: 'x'.repeat(20_000), choices: Array.from({ length: 1500 }, (_, index) => ({ index, message: {} })) });
const message = `The openai response, a whole answer of ${body.length} bytes, would be read as events of more than ${4 * MAX + 1024 * 1024} bytes (4 × maxEventBytes and 1 MiB): not read`;

describe('a whole answer whose events would be far larger than it', () => {
  it('ModelStream: ERR_EVENT_TOO_LARGE at the body, strict and not', () => {
    expect(body.length).toBeLessThan(MAX);
    for (const fatal of [true, false]) {
      const m = new ModelStream({ format: 'openai', maxEventBytes: MAX, fatal });
      expect(m.push(enc.encode('\n\n'))).toBe('');
      expect(m.push(enc.encode(body))).toBe('');
      let err: unknown;
      try {
        m.flush();
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ModelStreamError);
      const e = err as ModelStreamError;
      expect([e.code, e.offset, e.message, m.status]).toEqual(['ERR_EVENT_TOO_LARGE', 2, message, 'failed']);
    }
  });

  it('SseRelay: the error event, never a completion', () => {
    const r = new SseRelay({ from: 'openai', to: 'openai', maxEventBytes: MAX });
    let out = dec.decode(r.push(enc.encode('\n\n' + body)));
    out += dec.decode(r.flush());
    // (compared as facts: a failing run's output is megabytes)
    expect([r.status, out.includes('[DONE]'), out.includes('ERR_EVENT_TOO_LARGE'), out.length < 1000]).toEqual(['failed', false, true, true]);
  });
});
