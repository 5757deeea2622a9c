// What a model stream's push costs beyond the core, at one event per read: ModelStream.push (raw
// mode) against its floor, the core's own call per read (`modelPush`: frame, read by the shape,
// gather and keep for the report) and the one string made from its result, with nothing else
// around them. Interleaved rounds in one process, medians, ns per event. The floor reaches into
// the bindings' internals on purpose: it is a measurement, not a use.
//   npm run build && node build/bench/model-floor.js [--rounds 15]
import { ModelStream } from '../bindings/index.js';
import { MDR_GATHERED, MDR_UNITS, ME_GATHER, ME_KEEP, MGR_PTR } from '../bindings/generated/abi.js';
import type { Core } from '../bindings/wasm.js';
import { perEvent } from './corpus.js';
import { median } from './harness.js';
import { anthropicStream, openaiStream } from './sse.js';

interface Inside { core: Core; st: number; plan: { mode: number; framing: number; prog: number; tmpl: number; choice: number } }

const argv = process.argv.slice(2);
const rounds = Number(argv[argv.indexOf('--rounds') + 1] || 15);

for (const [name, format, bytes] of [['OpenAI', 'openai', openaiStream(1 << 20)], ['Anthropic', 'anthropic', anthropicStream(1 << 20)]] as const) {
  const chunks = perEvent(bytes, 1);
  const push = () => {
    const m = new ModelStream({ format, raw: true });
    let n = 0;
    for (const c of chunks) n += m.push(c).length;
    return n;
  };
  const floor = () => {
    const m = new ModelStream({ format, raw: true }) as unknown as Inside;
    const { core, plan, st } = m;
    let n = 0;
    for (const c of chunks) {
      core.sync(); // (the kept text grows the memory now and then)
      core.u8.set(c, core.inPtr);
      core.x.modelPush(st, c.length, plan.mode, plan.framing, plan.prog, plan.tmpl, plan.choice, ME_GATHER | ME_KEEP);
      core.sync();
      const i32 = core.i32;
      const units = i32[core.res + MDR_UNITS];
      if (units >= 0) n += core.utf16(i32[core.res + MGR_PTR], units).length;
      else if (i32[core.res + MDR_GATHERED] === 1) n += core.latin1(i32[core.mgather], i32[core.mgather + 1]).length;
    }
    return n;
  };
  const ways: [string, () => number][] = [['ModelStream.push', push], ['floor: modelPush + one string', floor]];
  const want = ways[0][1]();
  for (const [w, f] of ways) if (f() !== want) throw new Error(`${w}: a different amount of text`);
  const times = ways.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < ways.length; k++) {
      const i = (k + r) % ways.length;
      const t0 = performance.now();
      for (let j = 0; j < 3; j++) ways[i][1]();
      times[i].push(((performance.now() - t0) * 1e6) / 3 / chunks.length);
    }
  }
  console.log(`${name}, one event per read (${chunks.length} events): ${ways.map(([w], i) => `${w} ${median(times[i]).toFixed(0)} ns`).join(', ')}`);
}
