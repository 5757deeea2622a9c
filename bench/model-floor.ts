// What a model stream's push costs beyond the core: ModelStream.push (raw mode) against its floor,
// the core's own call per read (`modelPush`: frame, read by the shape, gather and keep for the
// report) and the one string made from its result, with nothing else around them; and the peer
// of the raw-delta rows (TextDecoder + eventsource-parser + JSON.parse + reading the delta's
// text), so that the floor's ratio says what no binding could beat. Interleaved rounds in one
// process, medians, ns per read. The floor reaches into the bindings' internals on purpose: it is
// a measurement, not a use. A read whose batch has an event for JS (a start, a stop, a ping: a
// few in a thousand) is left there by the floor, so the floor does less than a push, never more.
//   npm run build && node build/bench/model-floor.js [--rounds 15] [--reads event,64]
import { createParser } from './peers.js';
import { ModelStream } from '../bindings/index.js';
import { FR_NREC, MDR_DOCS, MDR_GATHERED, MDR_NEXT, MDR_UNITS, ME_GATHER, ME_KEEP, MGR_PTR } from '../bindings/core/generated/abi.js';
import type { Core } from '../bindings/core/wasm.js';
import { chunked, perEvent } from './corpus.js';
import { median } from './harness.js';
import { anthropicStream, openaiStream } from './sse.js';

interface Inside { core: Core; st: number; plan: { mode: number; framing: number; prog: number; tmpl: number; choice: number } }

const argv = process.argv.slice(2);
const arg = (n: string) => { const i = argv.indexOf(n); return i >= 0 ? argv[i + 1] : undefined; };
const rounds = Number(arg('--rounds') || 15);
const readsOf = (arg('--reads') ?? 'event,64').split(',');

const textOf = {
  openai: (data: string): string => (data === '[DONE]' ? '' : ((JSON.parse(data) as { choices?: { delta?: { content?: string | null } }[] }).choices?.[0]?.delta?.content ?? '')),
  anthropic: (data: string): string => {
    const e = JSON.parse(data) as { type?: string; delta?: { type?: string; text?: string } };
    return e.type === 'content_block_delta' && e.delta?.type === 'text_delta' ? e.delta.text ?? '' : '';
  },
};

for (const reads of readsOf) {
  for (const [name, format, bytes] of [['OpenAI', 'openai', openaiStream(1 << 20)], ['Anthropic', 'anthropic', anthropicStream(1 << 20)]] as const) {
    const chunks = reads === 'event' ? perEvent(bytes, 1) : chunked(bytes, Number(reads));
    const push = () => {
      const m = new ModelStream({ format, raw: true });
      let n = 0;
      for (const c of chunks) n += m.push(c).length;
      return n;
    };
    let left = 0;
    const floor = () => {
      const m = new ModelStream({ format, raw: true }) as unknown as Inside;
      const { core, plan, st } = m;
      let n = 0;
      left = 0;
      for (const c of chunks) {
        core.sync(); // (the kept text grows the memory now and then)
        core.u8.set(c, core.inPtr);
        core.x.modelPush(st, c.length, plan.mode, plan.framing, plan.prog, plan.tmpl, plan.choice, ME_GATHER | ME_KEEP);
        core.sync();
        const i32 = core.i32;
        const r = core.res;
        if (i32[r + FR_NREC] === 0) continue; // nothing framed (the result's model words are the last batch's)
        if (i32[r + MDR_DOCS] !== 0 || i32[r + MDR_NEXT] !== i32[r + FR_NREC]) left++;
        const units = i32[r + MDR_UNITS];
        if (units >= 0) n += core.utf16(i32[r + MGR_PTR], units).length;
        else if (i32[r + MDR_GATHERED] === 1) n += core.latin1(i32[core.mgather], i32[core.mgather + 1]).length;
      }
      return n;
    };
    const peer = () => {
      let n = 0;
      const td = new TextDecoder();
      const p = createParser({ onEvent: (e) => { n += textOf[format](e.data).length; } });
      for (const c of chunks) p.feed(td.decode(c, { stream: true }));
      p.feed(td.decode());
      return n;
    };
    const ways: [string, () => number][] = [['ModelStream.push', push], ['floor: modelPush + one string', floor], ['peer', peer]];
    const want = push();
    if (peer() !== want) throw new Error('the peer read a different amount of text');
    const got = floor();
    if (reads === 'event' && got !== want) throw new Error('floor: a different amount of text');
    const times = ways.map(() => [] as number[]);
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < ways.length; k++) {
        const i = (k + r) % ways.length;
        const t0 = performance.now();
        for (let j = 0; j < 3; j++) ways[i][1]();
        times[i].push(((performance.now() - t0) * 1e6) / 3 / chunks.length);
      }
    }
    const [tp, tf, tq] = times.map(median);
    const what = reads === 'event' ? 'one event per read' : `${reads} B reads`;
    console.log(`${name}, ${what} (${chunks.length} reads${left ? `, ${left} left with an event for JS by the floor` : ''}): ${ways.map(([w], i) => `${w} ${median(times[i]).toFixed(0)} ns`).join(', ')}; `
      + `peer/push ${(tq / tp).toFixed(2)}×, peer/floor ${(tq / tf).toFixed(2)}×`);
  }
}
