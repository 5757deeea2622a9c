// SseByteEvents.encode(), written by the core's SSE writer: for generated streams (types that
// repeat and change, IDs that change, multi-line data, non-ASCII types and IDs, batches with more
// distinct strings than the core's strings area holds, and batches larger than its windows), cut
// at random, the bytes of every call are exactly the wire format the contract names, and
// eventsource-parser reads the events back from them. Seeded; the seed is printed on failure.
import { createParser } from 'eventsource-parser';
import { expect, test } from 'vitest';
import { SseParser } from '../../bindings/index.js';
import { SEED, cut, randomCuts, rng } from '../helpers/random.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
type Ev = { type: string; data: string; id: string; idChanged: boolean };

/** The wire format of events, as the contract states it. */
function wire(events: Ev[]): string {
  let s = '';
  for (const e of events) {
    if (e.type !== 'message') s += `event: ${e.type}\n`;
    if (e.idChanged) s += `id: ${e.id}\n`;
    for (const line of e.data.split('\n')) s += `data: ${line}\n`;
    s += '\n';
  }
  return s;
}

test(`encode(): the core's SSE writer against the contract's wire format and eventsource-parser, seed ${SEED}`, () => {
  const r = rng(SEED);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  for (let s = 0; s < 60; s++) {
    const many = s % 10 === 9; // many distinct IDs: more than the strings area holds
    const big = s % 15 === 14; // a batch larger than the input window
    let body = '';
    const n = 1 + Math.floor(r() * (many ? 1500 : 40));
    for (let i = 0; i < n; i++) {
      if (r() < 0.3) body += `event: ${pick(['message', 'delta', 'tëst', '', 'ping', '事件'])}\n`;
      if (many || r() < 0.2) body += `id: ${many ? `id-${i}-${'x'.repeat(i % 17)}` : pick(['1', '', 'ïd', '42'])}\n`;
      const lines = 1 + Math.floor(r() * 3);
      for (let l = 0; l < lines; l++) body += `data: ${big ? 'ü'.repeat(9000) : pick(['{"a":1}', 'héllo', '', 'x y', '👩‍💻'])}\n`;
      body += r() < 0.5 ? '\n' : '\r\n';
    }
    const bytes = enc.encode(body);
    const parser = new SseParser();
    const got: string[] = [];
    const events: Ev[] = [];
    let lastId = '';
    for (const c of cut(bytes, randomCuts(bytes, r, many || big ? 70000 : 200))) {
      const b = parser.pushBytes(c);
      const batch: Ev[] = [];
      for (let i = 0; i < b.length; i++) {
        batch.push({ type: b.type(i), data: b.dataText(i), id: b.id(i), idChanged: b.idChanged(i) });
      }
      const out = dec.decode(b.encode());
      expect(out, `seed ${SEED}, stream ${s}`).toBe(wire(batch));
      got.push(out);
      events.push(...batch);
    }
    // eventsource-parser reads the same events back
    const back: { type: string; data: string; id: string }[] = [];
    const p = createParser({ onEvent: (e) => { if (e.id !== undefined) lastId = e.id; back.push({ type: e.event ?? 'message', data: e.data, id: lastId }); } });
    p.feed(got.join(''));
    expect(back, `seed ${SEED}, stream ${s}`).toEqual(events.map((e) => ({ type: e.type, data: e.data, id: e.id })));
  }
});
