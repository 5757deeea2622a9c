// Where the time of a small `Utf8Decoder.push` goes, and the floor under it: each step of the
// pipeline timed alone on the same chunks, interleaved with TextDecoder in one process.
//
//   npm run build && node build/bench/floor.js [corpus: mixed|emoji|chinese|ascii|sse] [chunk bytes] [rounds]
//   node build/bench/floor.js sse [chunk bytes | event | 3events] [rounds] [openai|anthropic]
//
// Rows (ns per push; ratio = TextDecoder's time / the row's, the median of per-round ratios):
//   copy                      Uint8Array#set of the chunk into the core's input window
//   copy + validate           the same and the core's strict validation (no output)
//   floor                     copy + validate + making the chunk's string from UTF-16 that was
//                             transcoded beforehand (ucs2Slice / latin1Slice): everything but the
//                             transcoding and the bindings, so no decoder of this design can beat it
//   Utf8Decoder.push          the library, as users call it
import { createParser } from './peers.js';
import { SseParser, Utf8Decoder } from '../bindings/index.js';
import { ENC_LATIN1, ENC_MASK, ENC_UTF16, FR_ENC, FR_LEN, FR_NREC, M_IN_SPANS, M_UTF8_OUT, M_VALIDATE, SR_DATA0, SR_DATA1, SSE_REC_WORDS, U8_LEN, U8_PTR } from '../bindings/core/generated/abi.js';
import { getCore } from '../bindings/core/wasm.js';
import { frameTextMode } from '../bindings/frames/frame-stream.js';
import { asciiSse, chinese, chunked, emojiHeavy, mixed, perEvent } from './corpus.js';
import { median } from './harness.js';
import { anthropicStream, openaiStream } from './sse.js';

const M_UTF16_OUT = 0; // no mode bit: the text as UTF-16

interface NodeBuffer extends Uint8Array { ucs2Slice(a: number, b: number): string; latin1Slice(a: number, b: number): string }

/**
 * The first two steps of every breakdown: the chunk copied into the core's input window, and that
 * plus the core's strict validation (on the UTF-8 state `st`). `count` receives the results.
 */
function copySteps(pieces: Uint8Array[], st: number, count: (n: number) => void): Record<string, () => void> {
  const core = getCore();
  return {
    'copy': () => { core.sync(); const u8 = core.u8, at = core.inPtr; for (const p of pieces) u8.set(p, at); },
    'copy + validate': () => validated(pieces, st, (_, r) => count(r)),
  };
}

/**
 * Copies each piece into the core's input window and validates it (on the UTF-8 state `st`), then
 * calls `then` with its index and the core's result.
 */
function validated(pieces: Uint8Array[], st: number, then: (i: number, r: number) => void): void {
  const core = getCore();
  core.sync();
  const u8 = core.u8, at = core.inPtr;
  for (let i = 0; i < pieces.length; i++) {
    const p = pieces[i];
    u8.set(p, at);
    then(i, core.x.utf8Push(st, p.length, M_VALIDATE));
  }
}

/**
 * Runs the modes in interleaved rounds (alternating order, 3 rounds of warm-up, each mode `reps`
 * times per round) and returns a Markdown table of ns per push and of `baseline` / row, the
 * median of the per-round ratios.
 */
function breakdown(title: string, modes: Record<string, () => void>, baseline: string, pushes: number, rounds: number, reps = 1): string {
  const names = Object.keys(modes);
  const times: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
  for (let r = 0; r < rounds + 3; r++) {
    const order = r % 2 ? names : [...names].reverse();
    for (const k of order) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < reps; i++) modes[k]();
      if (r >= 3) times[k].push(Number(process.hrtime.bigint() - t0) / reps / pushes);
    }
  }
  const base = times[baseline];
  let out = `${title}, ns per push (median of ${rounds} interleaved rounds); ratio = ${baseline} / row\n\n`;
  out += `| step | ns per push | ${baseline} / step |\n|---|---:|---:|\n`;
  for (const k of names) out += `| ${k} | ${median(times[k]).toFixed(0)} | ${median(base.map((t, i) => t / times[k][i])).toFixed(2)}× |\n`;
  return out;
}

export function floorBreakdown(corpusName = 'mixed', size = 64, rounds = 21): string {
  const SIZE = 1 << 20;
  const gens: Record<string, () => string> = {
    ascii: () => asciiSse(SIZE), chinese: () => chinese(SIZE / 3 + 16), emoji: () => emojiHeavy(SIZE / 3), mixed: () => mixed(SIZE / 1.5),
  };
  if (!gens[corpusName]) throw new TypeError(`corpus must be one of ${Object.keys(gens).join(', ')}`);
  let bytes = new TextEncoder().encode(gens[corpusName]()).subarray(0, SIZE);
  let end = bytes.length;
  while (end > 0 && (bytes[end - 1] & 0xc0) === 0x80) end--;
  if (end > 0 && bytes[end - 1] >= 0xc0) end--;
  bytes = bytes.subarray(0, end);
  const pieces = chunked(bytes, size);

  const core = getCore();
  const x = core.x;
  const st = x.utf8New(1);
  core.sync();
  // Each piece's own text, transcoded once up front into a buffer of its own: the floor makes
  // strings from these, so it pays for the string but not for the transcoding.
  const own = pieces.map((p) => {
    core.sync();
    core.u8.set(p, core.inPtr);
    const kind = x.utf8Push(st, p.length, M_UTF16_OUT);
    core.sync();
    const ptr = core.word(U8_PTR), len = core.word(U8_LEN);
    const utf16 = (kind & ENC_MASK) === ENC_UTF16;
    return { utf16, units: len, buf: Buffer.from(core.u8.slice(ptr, ptr + (utf16 ? 2 * len : len))) as unknown as NodeBuffer };
  });
  x.utf8Reset(st);
  const decoder = new Utf8Decoder();
  const td = new TextDecoder('utf-8', { fatal: true });
  let sink = 0;
  const modes: Record<string, () => void> = {
    ...copySteps(pieces, st, (n) => { sink += n; }),
    'floor': () => validated(pieces, st, (i) => {
      const o = own[i];
      if (o.units !== 0) sink += (o.utf16 ? o.buf.ucs2Slice(0, 2 * o.units) : o.buf.latin1Slice(0, o.units)).length;
    }),
    'Utf8Decoder.push': () => { for (const p of pieces) sink += decoder.push(p).length; },
    'TextDecoder': () => { for (const p of pieces) sink += td.decode(p, { stream: true }).length; },
  };
  const table = breakdown(`${corpusName}, ${size} B chunks`, modes, 'TextDecoder', pieces.length, rounds, Math.max(1, Math.round(2e6 / bytes.length)));
  decoder.dispose();
  x.stateFree(st);
  if (sink < 0) console.log(sink);
  return table;
}

const SSE_BYTES_MODE = M_UTF8_OUT | M_IN_SPANS; // what SseParser.pushBytes asks of the core in Node

/**
 * The same for a push of the SSE paths on the OpenAI- or Anthropic-shaped stream (`size` bytes
 * per read, or −n: n whole events per read), against TextDecoder + eventsource-parser:
 *   copy                      Uint8Array#set of the chunk into the core's input window
 *   copy + validate           and the core's strict validation
 *   copy + SSE core           and the core's whole SSE framing (records of the dispatched events),
 *                             with nothing read back in JS: what the core alone costs
 *   string floor              copy + validate, then the read's one string of its events' data,
 *                             made as the core route makes a batch's (latin1Slice / ucs2Slice,
 *                             String.fromCharCode up to 16 units) from units transcoded
 *                             beforehand, each event's data sliced from it and its event object:
 *                             what the string path cannot do without, with no framing, no
 *                             transcoding and no bookkeeping (it makes the same strings as the
 *                             rows below, so within a run it measures near them, not always under)
 *   copy + SSE core, string path   the same framing as `push` asks of it (the events' data
 *                             transcoded into the batch's text), nothing read back
 *   that + the batch's string      and JS making each batch's string (latin1Slice / ucs2Slice)
 *   that + an event object each    and an event object per record, its data sliced from it: all
 *                             of `push` but the bindings' own bookkeeping (each record is taken
 *                             as an event of the type 'message': no flags read, no type string
 *                             made when the type changes)
 *   SseParser.pushBytes       the library, as users call it (events delivered into the reader)
 *   SseParser.push            the string path
 */
export function sseFloorBreakdown(size = 64, rounds = 21, corpus = 'openai'): string {
  if (corpus !== 'openai' && corpus !== 'anthropic') throw new TypeError(`the SSE stream must be openai or anthropic, got ${corpus}`);
  if (!Number.isInteger(size) || size === 0) throw new TypeError(`a read is a number of bytes or of events, got ${size}`);
  const stream = corpus === 'anthropic' ? anthropicStream() : openaiStream();
  const pieces = size < 0 ? perEvent(stream, -size) : chunked(stream, size);
  // Each read's dispatched events, from the peer, and their data joined as the units the core
  // route would copy out for the read's batch (Latin-1 bytes when all of it is ASCII, else
  // UTF-16LE), made up front: the floor makes one string a read and slices each event's data.
  const own: { types: string[]; ends: number[]; latin1: boolean; units: number; codes: number[]; at: number }[] = [];
  const texts: string[] = [];
  {
    const dec = new TextDecoder();
    let datas: string[] = [];
    let types: string[] = [];
    const q = createParser({ onEvent: (e) => { datas.push(e.data); types.push(e.event ?? 'message'); } });
    for (const p of pieces) {
      q.feed(dec.decode(p, { stream: true }));
      const text = datas.join('');
      const latin1 = !/[^\x00-\x7f]/.test(text);
      let end = 0;
      own.push({
        types, ends: datas.map((d) => (end += d.length)), latin1, units: text.length,
        codes: text.length <= 16 ? Array.from({ length: text.length }, (_, k) => text.charCodeAt(k)) : [], at: 0,
      });
      texts.push(text);
      datas = [];
      types = [];
    }
  }
  // (all in one buffer, in order, as the core's output is read from one place)
  let bytes = 0;
  for (let i = 0; i < own.length; i++) {
    own[i].at = bytes;
    bytes += ((own[i].latin1 ? 1 : 2) * own[i].units + 7) & ~7;
  }
  const units = Buffer.alloc(bytes) as unknown as NodeBuffer & { write(s: string, at: number, enc: string): number };
  own.forEach((o, i) => units.write(texts[i], o.at, o.latin1 ? 'latin1' : 'utf16le'));
  const core = getCore();
  const x = core.x;
  const vst = x.utf8New(1);
  const st = x.sseNew(1, 16 << 20);
  const sst = x.sseNew(1, 16 << 20);
  const textMode = frameTextMode(core);
  const bytesParser = new SseParser();
  const parser = new SseParser();
  let sink = 0;
  /** The core's framing of every read on the stream `state` in `mode`, with nothing read back. */
  const coreOnly = (state: number, mode: number): void => {
    for (const p of pieces) {
      core.sync();
      core.u8.set(p, core.inPtr);
      let r = x.ssePush(state, p.length, mode);
      while (r & 1) r = x.sseMore(state);
      sink += r;
    }
    sink += x.sseFlush(state, mode);
  };
  /** The core's string path, and JS reading back each batch's string (and making the events' objects). */
  const stringPath = (objects: boolean): void => {
    for (const p of pieces) {
      core.sync();
      core.u8.set(p, core.inPtr);
      let r = x.ssePush(sst, p.length, textMode);
      for (;;) {
        core.sync();
        const i32 = core.i32, res = core.res, n = i32[res + FR_NREC];
        if (n !== 0) {
          const len = i32[res + FR_LEN];
          const text = i32[res + FR_ENC] === ENC_LATIN1 ? core.latin1(core.outPtr, len) : core.utf16(core.outPtr, len);
          if (objects) {
            const out = new Array<{ type: string; data: string; id: string }>(n);
            for (let k = 0, w = core.span; k < n; k++, w += SSE_REC_WORDS) out[k] = { type: 'message', data: text.slice(i32[w + SR_DATA0], i32[w + SR_DATA1]), id: '' };
            sink += out.length;
          } else {
            sink += text.length;
          }
        }
        if (!(r & 1)) break;
        r = x.sseMore(sst);
      }
    }
    sink += x.sseFlush(sst, textMode);
  };
  const modes: Record<string, () => void> = {
    ...copySteps(pieces, vst, (n) => { sink += n; }),
    'string floor': () => validated(pieces, vst, (i) => {
      const o = own[i];
      const n = o.ends.length;
      if (n === 0) return;
      const text = o.units <= 16 ? String.fromCharCode(...o.codes) : o.latin1 ? units.latin1Slice(o.at, o.at + o.units) : units.ucs2Slice(o.at, o.at + 2 * o.units);
      const out = new Array<{ type: string; data: string; id: string }>(n);
      for (let k = 0, from = 0; k < n; k++) {
        const to = o.ends[k];
        out[k] = { type: o.types[k], data: from === 0 && to === o.units ? text : text.slice(from, to), id: '' };
        from = to;
      }
      sink += out.length;
    }),
    'copy + SSE core': () => coreOnly(st, SSE_BYTES_MODE),
    'copy + SSE core, string path': () => coreOnly(sst, textMode),
    'that + the batch\'s string': () => stringPath(false),
    'that + an event object each': () => stringPath(true),
    'SseParser.pushBytes': () => { for (const p of pieces) sink += bytesParser.pushBytes(p).length; sink += bytesParser.flushBytes().length; },
    'SseParser.push': () => { for (const p of pieces) sink += parser.push(p).length; sink += parser.flush().length; },
    'TextDecoder + eventsource-parser': () => {
      const dec = new TextDecoder();
      const q = createParser({ onEvent: () => { sink++; } });
      for (const p of pieces) q.feed(dec.decode(p, { stream: true }));
      q.feed(dec.decode());
    },
  };
  const table = breakdown(`${corpus === 'anthropic' ? 'Anthropic' : 'OpenAI'}-shaped SSE, ${size < 0 ? `${-size} event(s)` : `${size} B`} per read`, modes, 'TextDecoder + eventsource-parser', pieces.length, rounds);
  x.stateFree(vst);
  x.frameFree(st);
  x.frameFree(sst);
  bytesParser.dispose();
  parser.dispose();
  if (sink < 0) console.log(sink);
  return table;
}

const isMain = process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain) {
  const [corpus, size, rounds, stream] = process.argv.slice(2);
  // (for sse: a size in bytes, or `event` / `3events`: whole events per read; and the stream,
  // `openai` or `anthropic`)
  const events = size ? /^(\d*)events?$/.exec(size) : null;
  const n = events ? -Number(events[1] || 1) : size ? Number(size) : undefined;
  if (n !== undefined && !(n > 0 || (n < 0 && corpus === 'sse'))) throw new TypeError(`a read is a number of bytes (or, for sse, of events: event, 3events), got ${size}`);
  const k = rounds ? Number(rounds) : undefined;
  console.log(corpus === 'sse' ? sseFloorBreakdown(n, k, stream) : floorBreakdown(corpus, n, k));
}
