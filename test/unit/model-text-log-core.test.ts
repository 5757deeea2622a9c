// The report's hash from the UTF-8 the core logged (model-text-hash.test.ts) where a call that
// logs grows the core's memory: the views JS reads next are made again. Not in the portable
// suites: it swaps the core's exports for a copy (bindings/core/wasm.js's getCore).
import { expect, it } from 'vitest';
import { ModelStream, type ModelStreamError } from '../../bindings/index.js';
import { getCore } from '../../bindings/core/wasm.js';
import { enc, ev, lead, logs, sha } from '../helpers/text-log.js';

it('a read whose logging of an ASCII delta grows the core\'s memory takes its error\'s offset from fresh views', () => {
  const core = getCore() as unknown as { x: Record<string, unknown> & { memory: WebAssembly.Memory; modelTextSpans(st: number, n: number): void } };
  const x = core.x;
  // an ASCII delta the core reads quietly, then an error event: JS reads the error, and first the delta's text (its ASCII path)
  const trigger = new Uint8Array([...ev(`"${'a'.repeat(400)}"`), ...enc('data: {"error":{"message":"boom","type":"server_error"}}\n\n')]);
  const run = (grow: boolean) => {
    const m = new ModelStream({ format: 'openai' });
    let out = m.push(lead) + m.push(ev('"x"'));
    expect(logs(m)).toBe(true);
    let grew = 0;
    if (grow) {
      // (the exports are frozen: a copy whose modelTextSpans grows the memory first, as its allocation can)
      core.x = { ...x, modelTextSpans: (st: number, n: number) => { x.memory.grow(1); grew++; x.modelTextSpans(st, n); } } as typeof x;
    }
    let err: ModelStreamError | undefined;
    try {
      out += m.push(trigger);
    } catch (e) {
      err = e as ModelStreamError;
    } finally {
      core.x = x;
    }
    const r = m.finish();
    m.dispose();
    return { code: err?.code, offset: err?.offset, message: err?.message, text: out + (err?.text ?? ''), sha: r.sha256 === sha(r.text), grew };
  };
  const plain = run(false);
  const grown = run(true);
  expect([grown.grew, grown.code, grown.message]).toEqual([1, plain.code, plain.message]);
  expect(plain.code).toBe('ERR_PROVIDER');
  expect(Number.isInteger(plain.offset)).toBe(true);
  expect({ ...grown, grew: 0 }).toEqual(plain);
  expect(grown.sha).toBe(true);
});

it('a lone high surrogate that ends the text, the log otherwise empty at the end: U+FFFD in the hash, the report whole, with no room left in the core\'s budget', async () => {
  const { setCoreMemoryLimit, coreMemoryUsed } = await import('../../bindings/index.js');
  for (const tail of ['"x\\ud83d"', '"\\ud83d"']) {
    const m = new ModelStream({ format: 'openai', eof: 'allow', maxPendingBytes: 1 });
    let out = m.push(lead);
    out += m.push(ev(tail)); // (the log begins with this push: it holds nothing but the pending surrogate)
    expect(logs(m)).toBe(true);
    setCoreMemoryLimit(coreMemoryUsed()); // room for nothing more
    try {
      out += m.flush();
    } finally {
      setCoreMemoryLimit(undefined);
    }
    const r = m.finish();
    expect(r.text).toBe(out);
    expect(r.text.endsWith('\ud83d')).toBe(true);
    expect(r.sha256).toBe(sha(r.text));
  }
});
