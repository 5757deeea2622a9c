// The gateway under load: N concurrent streams from one upstream process through each of four
// gateways (each in its own process) to a bounded SSE client in this process, all on 127.0.0.1.
//
//   npm run bench:gateway                 # = npm run build && node bench/gateway.mjs (the full run)
//   node bench/gateway.mjs --quick        # fewer events and repetitions: a few minutes
//   node bench/gateway.mjs --profile      # seam's gateway alone under --cpu-prof: where its CPU goes
//   node bench/gateway.mjs --case event:500:200 --case cut:500:200 --reps 11   # some cases, more repetitions
//   node bench/gateway.mjs --base ../before --case event:500:200   # also the gateway of another checkout (built), interleaved
//   node bench/gateway.mjs --profile seam --case event:500:1 --reps 30   # a warm profile of some cases
//
// Gateways (bench/gateway-host.mjs): (a) seam's (examples/gateway/server.mjs), (b) the JSON
// gateway people write, (c) a plain forwarder with eventsource-parser and no JSON, (d) raw
// forwarding, (e) raw forwarding with the reads of one tick written as one (the coalescing seam's
// gateway does, alone), (f) raw forwarding through seam's gateway's own upstream client
// (examples/gateway/upstream.mjs: one write per socket read of the upstream, where (b) to (e) read
// it with http.request, one 'data' per HTTP chunk), (g) the same raw forwarding through undici's
// dispatcher (one onResponseData view per HTTP chunk, the chunks of a tick written as one): the
// gateway's own client against undici's, as (f)/(g); and seam's with its metrics off, to measure
// what prom-client costs. Regimes
// (bench/gateway-upstream.mjs): one event per write at full speed, randomly cut writes, and
// events paced 10 ms apart. Every run of a repetition is interleaved (a, b, c, d, a, b, …), and
// ratios are taken within a repetition, then their median: the machine's speed moves between
// minutes, the ratios much less. Before timing, every gateway's bytes are checked equal to the
// upstream's for each regime (the four write the same bytes for this stream).
//
// Measured: the gateway process's own CPU time (process.cpuUsage, over IPC) per 100,000 events,
// events per second (wall), p99 latency added per event (client receive time − the time the
// upstream made the event, one monotonic clock for all processes; the upstream and the client
// add theirs too, the same for every gateway), and memory per idle stream (heap + external and
// RSS of the gateway process after gc, N idle streams against none).
import { fork } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ssePeer, undiciPeer } from './peer-versions.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const profile = argv.includes('--profile');
/** `--profile [kind]`: which gateway to profile (seam unless named), `--only event|cut` the regime. */
const profiled = profile && argv[argv.indexOf('--profile') + 1] && !argv[argv.indexOf('--profile') + 1].startsWith('--') ? argv[argv.indexOf('--profile') + 1] : 'seam';
/** `--memory`: only the memory per idle stream. */
const memoryOnly = argv.includes('--memory');
const onlyRegime = argv.includes('--only') ? argv[argv.indexOf('--only') + 1] : undefined;
const onlyN = argv.includes('--n') ? Number(argv[argv.indexOf('--n') + 1]) : undefined;
/** `--reps N`: repetitions instead of the plan's (the ratios' medians are steadier with more). */
const repsArg = argv.includes('--reps') ? Number(argv[argv.indexOf('--reps') + 1]) : undefined;
/** `--warmup N`: repetitions of the full-speed cases run first and not counted (1; 0: none). */
const warmups = argv.includes('--warmup') ? Number(argv[argv.indexOf('--warmup') + 1]) : 1;
/** `--base DIR`: also run the gateway of the checkout at DIR (built), as (a′), interleaved with the rest. */
const baseDir = argv.includes('--base') ? argv[argv.indexOf('--base') + 1] : undefined;

const PLAN = quick
  ? { reps: 3, full: [[50, 1000], [500, 100]], paced: [[50, 50], [500, 50]], idle: 500, once: null }
  : { reps: 5, full: [[50, 2000], [500, 200]], paced: [[50, 100], [500, 100]], idle: 500, once: [1000, 100] };
if (repsArg) PLAN.reps = repsArg;
const KINDS = ['seam', 'json', 'plain', 'raw', 'rawtick', 'rawsock', 'rawundici'];
/** The kinds of every regime: with `--base`, the other checkout's gateway too. */
const COMPARED = [...KINDS, ...(baseDir ? ['seam-base'] : [])];
const NAMES = { 'seam-base': "(a') seam, the --base checkout", seam: '(a) seam', json: '(b) JSON gateway', plain: '(c) plain forwarder', raw: '(d) raw forwarding', rawtick: '(e) raw forwarding, the reads of a tick in one write', rawsock: "(f) raw forwarding through seam's upstream client", rawundici: "(g) raw forwarding through undici's dispatcher, the chunks of a tick in one write", 'seam-nometrics': '(a) seam, metrics off' };

// ---------------------------------------------------------------------------------------------
// Processes

function start(script, args, execArgv = []) {
  const child = fork(join(here, script), args, { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map();
  let id = 0;
  child.on('message', (m) => {
    if (m.id !== undefined) { waiting.get(m.id)?.(m); waiting.delete(m.id); }
  });
  const ready = new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`${script} ${args.join(' ')} exited (${code})`)));
  });
  return {
    child, ready,
    usage: (gc = false) => new Promise((resolve) => { const k = id++; waiting.set(k, resolve); child.send({ cmd: 'usage', id: k, gc }); }),
    stop: () => new Promise((resolve) => { child.once('exit', resolve); child.disconnect(); }),
  };
}

// ---------------------------------------------------------------------------------------------
// The load client: N streams at once, each body read as SSE events (blank-line framed), the
// latency of each event from its "t" field.

const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
const LF_LF = Buffer.from('\n\n');
const T_KEY = Buffer.from('"t":');
const DONE = Buffer.from('data: [DONE]');
const clock = () => Number(process.hrtime.bigint() / 1000n);

/** One stream: resolves { events, done, bytes } once its body ended; latencies go into `lat`. */
function stream(port, model, lat, idle) {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'Bench' }] });
    const req = http.request({ host: '127.0.0.1', port, path: '/v1/chat/completions', method: 'POST', agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let carry = null;
      let events = 0;
      let done = false;
      let bytes = 0;
      res.on('data', (chunk) => {
        bytes += chunk.length;
        const at = clock();
        const buf = carry === null ? chunk : Buffer.concat([carry, chunk]);
        let start = 0;
        for (let i = buf.indexOf(LF_LF, start); i !== -1; i = buf.indexOf(LF_LF, start)) {
          events++;
          const k = buf.lastIndexOf(T_KEY, i);
          if (k >= start) {
            let t = 0;
            for (let j = k + 4; buf[j] >= 48 && buf[j] <= 57; j++) t = t * 10 + buf[j] - 48;
            if (t !== 0) lat.push(at - t);
          } else if (i - start === DONE.length && buf.compare(DONE, 0, DONE.length, start, i) === 0) done = true;
          start = i + 2;
        }
        carry = start < buf.length ? buf.subarray(start) : null;
        if (idle && events > 0) idle(req);
      });
      res.on('end', () => resolve({ events, done, bytes }));
      res.on('error', (e) => (idle ? resolve({ events, done, bytes }) : reject(e)));
      res.on('close', () => resolve({ events, done, bytes }));
    });
    req.on('error', (e) => (idle ? resolve({ events: 0, done: false, bytes: 0 }) : reject(e)));
    req.end(body);
  });
}

/** Latency samples, growing as needed. */
class Samples {
  constructor() { this.a = new Float64Array(1 << 16); this.n = 0; }
  push(v) {
    if (this.n === this.a.length) { const b = new Float64Array(this.a.length * 2); b.set(this.a); this.a = b; }
    this.a[this.n++] = v;
  }
  quantile(q) {
    if (this.n === 0) return NaN;
    const s = this.a.slice(0, this.n).sort();
    return s[Math.min(this.n - 1, Math.floor(q * this.n))];
  }
}

async function load(gw, port, regime, n, events, seed) {
  const lat = new Samples();
  const before = await gw.usage();
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: n }, (_, k) => stream(port, `${regime}:${events}:${seed + k}`, lat)));
  const wall = (performance.now() - t0) / 1000;
  const after = await gw.usage();
  const got = results.reduce((s, r) => s + r.events, 0);
  const bad = results.filter((r) => !r.done || r.events !== events + 2).length;
  if (bad) throw new Error(`${regime} N=${n}: ${bad} streams did not end with ${events} events, the finish chunk and [DONE]`);
  const cpu = (after.cpu.user - before.cpu.user + after.cpu.system - before.cpu.system) / 1e6;
  const counted = got - n; // the [DONE] lines are not events of the answer
  return { events: counted, cpu, wall, cpuPer100k: (cpu / counted) * 1e5, eps: counted / wall, perCpuSec: counted / cpu, p99: lat.quantile(0.99), p50: lat.quantile(0.5) };
}

/** Memory per idle stream: N streams that got their first event and wait, against none (after gc). */
async function idleMemory(gw, port, n) {
  const base = await gw.usage(true);
  const reqs = new Set();
  let all;
  const ready = new Promise((resolve) => { all = resolve; });
  const ends = Array.from({ length: n }, (_, k) => stream(port, `idle:1:${k + 1}`, new Samples(), (req) => {
    if (reqs.has(req)) return;
    reqs.add(req);
    if (reqs.size === n) all();
  }));
  await ready;
  await new Promise((w) => setTimeout(w, 200));
  const held = await gw.usage(true);
  for (const r of reqs) r.destroy();
  await Promise.all(ends);
  await new Promise((w) => setTimeout(w, 300));
  const js = (m) => m.heapUsed + m.external;
  return { heapPerStream: (js(held.mem) - js(base.mem)) / n, rssPerStream: (held.mem.rss - base.mem.rss) / n };
}

/** The bytes one stream of a regime comes out as, with every timestamp 0. */
async function bytesOf(port, regime) {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ model: `${regime}:${regime === 'paced' ? 20 : 300}:0`, stream: true, messages: [] });
    const req = http.request({ host: '127.0.0.1', port, path: '/v1/chat/completions', method: 'POST', agent, headers: { 'content-length': Buffer.byteLength(body) } }, (res) => {
      const parts = [];
      res.on('data', (b) => parts.push(b));
      res.on('end', () => resolve(Buffer.concat(parts)));
    });
    req.on('error', reject);
    req.end(body);
  });
}

// ---------------------------------------------------------------------------------------------

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const fmt = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '–');

async function main() {
  const upstream = start('gateway-upstream.mjs', []);
  const upPort = await upstream.ready;
  const upUrl = `http://127.0.0.1:${upPort}`;
  const profDir = join(here, '..', 'build', 'bench', 'gateway-prof');
  const kinds = profile ? [profiled] : [...COMPARED, 'seam-nometrics'];
  if (profile) { rmSync(profDir, { recursive: true, force: true }); mkdirSync(profDir, { recursive: true }); }
  const gws = Object.fromEntries(kinds.map((k) => [k, start('gateway-host.mjs', [k, upUrl, ...(k === 'seam-base' ? [baseDir] : [])],
    ['--expose-gc', ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [])])]));
  const ports = {};
  for (const k of kinds) ports[k] = await gws[k].ready;

  // every gateway writes the upstream's bytes (this stream is canonical: one event per blank line)
  for (const regime of ['event', 'cut', 'paced']) {
    const want = await bytesOf(upPort, regime);
    for (const k of kinds) {
      const got = await bytesOf(ports[k], regime);
      if (!got.equals(want)) throw new Error(`${NAMES[k]} wrote other bytes than the upstream's for ${regime} (${got.length} against ${want.length})`);
    }
  }
  console.error(`checked: every gateway writes the upstream's bytes, for each regime`);

  // `--case regime:N:events` (repeatable) runs those cases instead of the plan's
  const named = argv.flatMap((x, i) => (x === '--case' ? [argv[i + 1].split(':')] : [])).map(([r, n, e]) => [r, Number(n), Number(e)]);
  if (profile) {
    // the plan's full-speed cases once (or the named ones, `--reps` times: a warm process)
    const runs = named.length ? Array.from({ length: repsArg ?? 1 }, () => named).flat()
      : PLAN.full.flatMap(([n, e]) => [['event', n, e], ['cut', n, e]]).filter(([r, n]) => !(onlyRegime && r !== onlyRegime) && !(onlyN && n !== onlyN));
    for (const [regime, n, e] of runs) {
      const r = await load(gws[profiled], ports[profiled], regime, n, e, 1);
      console.error(`profiled ${regime} N=${n} E=${e}: ${fmt(r.cpuPer100k)} CPU-s per 100k events`);
    }
    await Promise.all(Object.values(gws).map((g) => g.stop()));
    await upstream.stop();
    return printProfile(profDir);
  }

  /** results[key][kind] = one result per repetition */
  const results = {};
  const add = (key, kind, r) => ((results[key] ??= {})[kind] ??= []).push(r);
  const cases = named.length ? named : [
    ...PLAN.full.flatMap(([n, e]) => [['event', n, e], ['cut', n, e]]),
    ...PLAN.paced.map(([n, e]) => ['paced', n, e]),
  ];
  // Warm-up: each full-speed case once through every gateway, not counted. A gateway runs for
  // days; its first thousands of streams run code V8 has not optimized yet (the first repetition
  // of a fresh process cost up to 2× the later ones, for every gateway, and the kinds warm at
  // different speeds), so that a cold repetition measures the JIT, not the gateway.
  if (!memoryOnly && warmups > 0) {
    for (let w = 0; w < warmups; w++) {
      for (const [regime, n, e] of cases) {
        if (regime === 'paced') continue;
        for (const k of kinds) await load(gws[k], ports[k], regime, n, e, 104729 + w);
      }
    }
    console.error(`warmed up: ${warmups} repetition(s) of the full-speed cases through every gateway, not counted`);
  }
  const t0 = performance.now();
  for (let rep = 0; rep < PLAN.reps; rep++) {
    for (const [regime, n, e] of memoryOnly ? [] : cases) {
      const order = regime === 'event' ? kinds : COMPARED;
      for (const k of order) {
        const r = await load(gws[k], ports[k], regime, n, e, 1 + rep * 7919);
        add(named.length ? `${regime} N=${n} E=${e}` : `${regime} N=${n}`, k, r);
      }
      console.error(`rep ${rep + 1}/${PLAN.reps} ${regime} N=${n} E=${e}: ${KINDS.map((k) => `${k} ${fmt(results[named.length ? `${regime} N=${n} E=${e}` : `${regime} N=${n}`][k].at(-1).cpuPer100k)}`).join(', ')} CPU-s/100k events (${fmt((performance.now() - t0) / 1000, 0)} s)`);
    }
    if (!named.length) for (const k of COMPARED) add('idle', k, await idleMemory(gws[k], ports[k], PLAN.idle));
  }
  if (PLAN.once && !named.length && !memoryOnly) {
    const [n, e] = PLAN.once;
    for (const k of KINDS) add(`event N=${n} (once)`, k, await load(gws[k], ports[k], 'event', n, e, 3));
  }
  await Promise.all(Object.values(gws).map((g) => g.stop()));
  await upstream.stop();
  report(results);
}

/** Per repetition, a/x; then the median. */
function ratio(rows, x, f) {
  const a = rows.seam;
  const b = rows[x];
  return median(a.map((r, i) => f(r, b[i])));
}

/** The version of a peer package (by its name in node_modules), from its package.json. */
function peerVersion(dir) {
  return JSON.parse(readFileSync(join(here, '..', 'node_modules', dir, 'package.json'), 'utf8')).version;
}

function report(results) {
  const lines = [];
  const out = (s = '') => lines.push(s);
  out(`Node ${process.version}, ${quick ? 'quick' : 'full'} run, ${PLAN.reps} interleaved repetitions after ${warmups} of warm-up, medians; the gateway's own CPU time; `
    + `eventsource-parser ${peerVersion(ssePeer)}, undici ${peerVersion(undiciPeer)}.`);
  out();
  out('| regime | N | events/run | (a) CPU-s per 100k events | (b) | (c) | (d) | (e) | (f) | (g) | events per CPU-second: a/b | a/c | a/d | a/e | a/f | a/g | f/g | events/s a/b | a/c | a/d | p99 added latency a, ms | a/b | a/d |');
  out('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const [key, rows] of Object.entries(results)) {
    if (key === 'idle') continue;
    const [regime, nPart] = key.split(' N=');
    if (!rows.seam) continue;
    const med = (k, f) => median(rows[k].map(f));
    const per = (x) => ratio(rows, x, (a, b) => a.perCpuSec / b.perCpuSec);
    const eps = (x) => ratio(rows, x, (a, b) => a.eps / b.eps);
    const lat = (x) => ratio(rows, x, (a, b) => a.p99 / b.p99);
    const fg = median(rows.rawsock.map((r, i) => r.perCpuSec / rows.rawundici[i].perCpuSec)); // the own client against undici's, in the same repetition
    out(`| ${regime} | ${nPart} | ${rows.seam[0].events} | ${fmt(med('seam', (r) => r.cpuPer100k))} | ${fmt(med('json', (r) => r.cpuPer100k))} | ${fmt(med('plain', (r) => r.cpuPer100k))} | ${fmt(med('raw', (r) => r.cpuPer100k))} | ${fmt(med('rawtick', (r) => r.cpuPer100k))} | ${fmt(med('rawsock', (r) => r.cpuPer100k))} | ${fmt(med('rawundici', (r) => r.cpuPer100k))} `
      + `| **${fmt(per('json'))}×** | **${fmt(per('plain'))}×** | **${fmt(per('raw'))}×** | ${fmt(per('rawtick'))}× | ${fmt(per('rawsock'))}× | ${fmt(per('rawundici'))}× | ${fmt(fg)}× | ${fmt(eps('json'))}× | ${fmt(eps('plain'))}× | ${fmt(eps('raw'))}× `
      + `| ${fmt(med('seam', (r) => r.p99 / 1000), 1)} | ${fmt(lat('json'))}× | ${fmt(lat('raw'))}× |`);
  }
  const based = Object.entries(results).filter(([, rows]) => rows['seam-base']);
  if (based.length) {
    out();
    out(`This change against the build before it (--base ${baseDir}), events per CPU-second, a/a′ (> 1: this build is faster):`);
    for (const [key, rows] of based) out(`- ${key}: ${fmt(ratio(rows, 'seam-base', (a, b) => a.perCpuSec / b.perCpuSec), 3)}× (per repetition: ${rows.seam.map((a, i) => fmt(a.perCpuSec / rows['seam-base'][i].perCpuSec, 3)).join(', ')}); a′/b ${fmt(median(rows['seam-base'].map((r, i) => r.perCpuSec / rows.json[i].perCpuSec)))}×, a′/d ${fmt(median(rows['seam-base'].map((r, i) => r.perCpuSec / rows.raw[i].perCpuSec)))}×`);
  }
  const metricsOff = Object.entries(results).filter(([, rows]) => rows['seam-nometrics']);
  if (metricsOff.length) {
    out();
    out('prom-client\'s cost: seam\'s gateway with metrics on against off (events per CPU-second, on/off; < 1 means the metrics cost):');
    for (const [key, rows] of metricsOff) out(`- ${key}: ${fmt(ratio(rows, 'seam-nometrics', (a, b) => a.perCpuSec / b.perCpuSec), 3)}× (per repetition: ${rows.seam.map((a, i) => fmt(a.perCpuSec / rows['seam-nometrics'][i].perCpuSec, 3)).join(', ')})`);
  }
  const idle = results.idle;
  if (!idle) return finish(lines, results);
  out();
  out(`Memory per idle stream (${PLAN.idle} streams that got their first event, after gc; medians):`);
  out();
  out('| gateway | heap + external per stream | RSS per stream | heap + external − (b)\'s |');
  out('|---|---:|---:|---:|');
  for (const k of COMPARED) {
    const h = median(idle[k].map((r) => r.heapPerStream));
    const diff = median(idle[k].map((r, i) => r.heapPerStream - idle.json[i].heapPerStream));
    out(`| ${NAMES[k]} | ${fmt(h / 1024)} KiB | ${fmt(median(idle[k].map((r) => r.rssPerStream)) / 1024)} KiB | ${fmt(diff / 1024)} KiB |`);
  }
  if (idle['seam-base']) out(`\n(a) − (a′), heap + external per idle stream: ${fmt(median(idle.seam.map((r, i) => r.heapPerStream - idle['seam-base'][i].heapPerStream)) / 1024)} KiB (median of the repetitions' differences)`);
  finish(lines, results);
}

function finish(lines, results) {
  const text = lines.join('\n');
  console.log(text);
  mkdirSync(join(here, '..', 'build', 'bench'), { recursive: true });
  writeFileSync(join(here, '..', 'build', 'bench', 'gateway.json'), JSON.stringify({ node: process.version, quick, results }, null, 1));
  writeFileSync(join(here, '..', 'build', 'bench', 'gateway.md'), `${text}\n`);
}

/** Self time by function in the profiles written, the largest first. */
function printProfile(dir) {
  const self = new Map();
  let total = 0;
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.cpuprofile'))) {
    const p = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    const byId = new Map(p.nodes.map((nd) => [nd.id, nd]));
    const dt = new Map();
    for (let i = 0; i < p.samples.length; i++) dt.set(p.samples[i], (dt.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
    for (const [id, us] of dt) {
      const cf = byId.get(id).callFrame;
      const name = `${cf.functionName || '(anonymous)'} ${cf.url.replace(/^.*\/(node_modules|examples|dist|bench)\//, '$1/').replace(/^node:/, 'node:')}${cf.url ? `:${cf.lineNumber + 1}` : ''}`;
      self.set(name, (self.get(name) ?? 0) + us);
      total += us;
    }
  }
  const groups = new Map();
  for (const [name, us] of self) {
    const g = name.startsWith('wasm-function') ? 'seam: WebAssembly' : / dist\//.test(name) ? 'seam: bindings (dist)' : / examples\//.test(name) ? 'the gateway (examples/gateway)'
      : / node_modules\/prom-client/.test(name) ? 'prom-client' : / node_modules\//.test(name) ? 'other packages' : / bench\//.test(name) ? 'bench host'
        : name.startsWith('(') ? name.trim() : / node:/.test(name) ? 'node (JS)' : 'native (no URL)';
    groups.set(g, (groups.get(g) ?? 0) + us);
  }
  console.log('by part:');
  for (const [g, us] of [...groups].sort((a, b) => b[1] - a[1])) console.log(`${fmt((100 * us) / total, 1).padStart(5)}%  ${fmt(us / 1e6, 2)} s  ${g}`);
  const idleNames = ['(idle) ', '(program) ', '(garbage collector) '];
  const busy = total - idleNames.reduce((s, n) => s + (self.get(n) ?? 0), 0);
  console.log(`self time of the ${profiled} gateway's process (${fmt(total / 1e6)} s sampled, ${fmt(busy / 1e6)} s not idle; % of the whole):`);
  for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${fmt((100 * us) / total, 1).padStart(5)}%  ${name}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
