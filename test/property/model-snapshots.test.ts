// What a stream says between its events: after each event of every model fixture, the stream's
// status, finish reason, usage, tool calls, reasoning, events and keep-alives are the same whether
// the events came one per read, each cut into random pieces (with the getters asked at random
// between the pieces), or all the events so far in one read to a new stream. A gateway or an app
// that shows tool calls and reasoning as they grow reads them there.
// Seeded: the seed is printed on failure.
import { expect, test } from 'vitest';
import { EventStreamDecoder, ModelStream, ModelStreamError } from '../../bindings/index.js';
import { BEDROCK_FIXTURES } from '../helpers/bedrock-fixtures.js';
import { SOURCES } from '../helpers/damaged-streams.js';
import { FIXTURES, reference } from '../helpers/model-fixtures.js';
import { SEED, cut, randomCuts, rng } from '../helpers/random.js';

const VARIANTS = [{}, { raw: true }, { normalize: false }, { fatal: false }] as const;

function snapshot(m: ModelStream, text: string, error: string): string {
  return JSON.stringify({
    text, error, status: m.status, finish: m.finishReason ?? null, usage: m.usage ?? null, events: m.events, heartbeats: m.heartbeats,
    calls: m.toolCalls, server: m.serverToolCalls, reasoning: m.reasoning, blocks: m.reasoningBlocks,
  });
}

/** The snapshots after each of `ends` (byte offsets) of `bytes` read as `pieces` cut inside each span; `poke`: ask the getters between pieces. */
function snapshots(options: object, bytes: Uint8Array, ends: number[], split: (span: Uint8Array) => Uint8Array[], poke: () => boolean): string[] {
  const m = new ModelStream(options as { format: 'openai' });
  const out: string[] = [];
  let text = '';
  let error = '';
  let from = 0;
  for (const end of ends) {
    if (error === '') {
      for (const piece of split(bytes.subarray(from, end))) {
        try {
          text += m.push(piece);
        } catch (e) {
          if (!(e instanceof ModelStreamError)) throw e;
          text += e.text;
          error = `${e.code} at ${e.offset}`;
          break;
        }
        if (poke()) snapshot(m, text, error);
      }
    }
    from = end;
    out.push(snapshot(m, text, error));
  }
  m.dispose();
  return out;
}

test(`between events, a stream says the same whatever the reads (seed ${SEED})`, () => {
  const r = rng(SEED + 11);
  let compared = 0;
  const streams: { name: string; format: string; bytes: Uint8Array; choice?: number; ends: number[] }[] = [];
  for (const f of FIXTURES) {
    const ref = reference(f.body, f.format, f.choice);
    if (ref.plainBody) continue;
    streams.push({ ...f, ends: [...new Set(ref.frames.filter((x) => !x.atFlush).map((x) => x.end))].sort((a, b) => a - b) });
  }
  // AWS's event stream (Bedrock, Claude on Bedrock): after each whole message
  for (const f of [...BEDROCK_FIXTURES.map((b) => ({ ...b, format: 'bedrock' })), ...SOURCES.filter((x) => x.format === 'bedrock-invoke')]) {
    const d = new EventStreamDecoder();
    let messages: { offset: number; length: number }[] = [];
    try { messages = d.push(f.bytes); } catch { continue; } // (a fixture of damage: its messages before it are not all whole)
    d.dispose();
    streams.push({ name: f.name, format: f.format, bytes: f.bytes, ends: messages.map((x) => x.offset + x.length) });
  }
  for (const f of streams) {
    const ends = f.ends;
    for (let v = 0; v < VARIANTS.length; v++) {
      const options = { format: f.format, ...(f.choice === undefined ? {} : { choice: f.choice }), ...VARIANTS[v] };
      const what = `seed ${SEED}: ${f.name} (${f.format}) ${JSON.stringify(VARIANTS[v])}`;
      const perEvent = snapshots(options, f.bytes, ends, (s) => [s], () => false);
      const cutUp = snapshots(options, f.bytes, ends, (s) => cut(s, randomCuts(s, r, 1 + Math.floor(r() * 12))), () => r() < 0.3);
      expect(cutUp, `${what}, each event cut up`).toEqual(perEvent);
      // all the events so far in one read, to a new stream
      for (let k = 0; k < ends.length; k += 1 + Math.floor(r() * 3)) {
        const fresh = snapshots(options, f.bytes, [ends[k]], (s) => [s], () => false)[0];
        expect(fresh, `${what}, the first ${k + 1} events in one read`).toBe(perEvent[k]);
        compared++;
      }
    }
  }
  expect(compared).toBeGreaterThan(800);
});
