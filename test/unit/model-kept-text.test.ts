// The raw mode's kept text where the core has no Node Buffer (browsers, workerd): a core made in
// this realm without the global Buffer takes out each piece with a UTF-16 TextDecoder, which would
// make a U+FFFD of half a pair at a piece's end, and of a lone surrogate a JSON escape wrote
// (model-basics has the Buffer's route).
import { expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { KEPT_TEXTS, readKept } from '../helpers/kept-text.js';

it('without a Buffer, the raw mode\'s kept text leaves the core in pieces with every pair whole and every lone surrogate kept', async () => {
  const { ModelStream } = await import('../../bindings/index.js');
  const g = globalThis as { Buffer?: unknown };
  const B = g.Buffer;
  g.Buffer = undefined;
  let first;
  try {
    first = new ModelStream({ format: 'openai', raw: true }); // (the realm's core, made here)
  } finally {
    g.Buffer = B;
  }
  first.dispose();
  for (const all of KEPT_TEXTS) {
    const { out, report: r } = readKept(() => new ModelStream({ format: 'openai', raw: true }), all);
    expect(out).toBe(all);
    expect([r.status, r.text.length, r.text === all, r.sha256]).toEqual(['done', all.length, true, createHash('sha256').update(all).digest('hex')]);
  }
});
