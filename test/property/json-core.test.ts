// Differential properties of the core's JSON reader against JSON.parse, on generated provider
// events (OpenAI Chat, Anthropic Messages) with random key orders, duplicate keys (containers
// too), whitespace everywhere, deep nesting, big numbers and every kind of string escape:
//   - the values at the paths are JSON.parse's (strings by the bindings' routes, numbers by
//     Number of the span, containers by JSON.parse of the span), after the last duplicate won;
//   - every truncation and every single-byte corruption is rejected exactly when JSON.parse
//     throws, with the code and offset of a plain reference implementation.
// Seeded: fast-check prints the seed on failure; set SEAM_SEED to replay a run.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { getCore, wasmBackend } from '../../bindings/core/wasm.js';
import {
  JE, compilePaths, expectedAt, foundIn, loadProgram, parses, readIn, referenceCheck, type ReadResult,
} from '../helpers/json-core.js';
import { SEED, rng } from '../helpers/random.js';

const enc = new TextEncoder();
const params = (numRuns: number) => ({ seed: SEED, numRuns, endOnFailure: true });

const PATHS = [...new Set([
  // OpenAI Chat
  'choices[*].index', 'choices[*].delta.content', 'choices[*].delta.reasoning_content', 'choices[*].delta.reasoning',
  'choices[*].delta.tool_calls', 'choices[*].finish_reason', 'usage', 'error', 'error.message',
  // Anthropic Messages
  'type', 'index', 'delta.type', 'delta.text', 'delta.thinking', 'delta.partial_json', 'delta.stop_reason', 'usage',
  'message.usage', 'error.message',
  // more shapes: a container and paths inside it, keys that need escapes, the document itself
  'choices[*].delta', 'choices[*]', 'message', 'x.deep[*]', 'k😀.v', 'say "hi"', 'tab\tkey', '',
])];

type Rand = () => number;
const int = (r: Rand, n: number) => Math.floor(r() * n);
const pick = <T>(r: Rand, a: readonly T[]): T => a[int(r, a.length)];
const chance = (r: Rand, p: number) => r() < p;

// ---------------------------------------------------------------------------------------------
// Documents: a tree, then its text with random spelling

type Node =
  | { t: 'obj'; members: [string, Node][] }
  | { t: 'arr'; items: Node[] }
  | { t: 'str'; s: string }
  | { t: 'raw'; text: string }; // a number or a literal, as written

const obj = (...members: [string, Node][]): Node => ({ t: 'obj', members });
const arr = (...items: Node[]): Node => ({ t: 'arr', items });
const str = (s: string): Node => ({ t: 'str', s });
const raw = (text: string): Node => ({ t: 'raw', text });

const NUMBERS = [
  '0', '-0', '1', '42', '-7', '0.5', '-0.0', '3.14159', '1e3', '1E+3', '2.5e-3', '-1.0E-10', '1e400', '-1e400', '1e-400',
  '123456789012345678901234567890', '9007199254740993', '0.1e1', '4.9e-324', '1.7976931348623157e308', '100000000000000000000000e-23',
];
function number(r: Rand): string {
  if (chance(r, 0.6)) return pick(r, NUMBERS);
  let s = chance(r, 0.3) ? '-' : '';
  s += chance(r, 0.2) ? '0' : String(1 + int(r, 9)) + Array.from({ length: int(r, 12) }, () => int(r, 10)).join('');
  if (chance(r, 0.4)) s += '.' + Array.from({ length: 1 + int(r, 8) }, () => int(r, 10)).join('');
  if (chance(r, 0.3)) s += pick(r, ['e', 'E']) + pick(r, ['', '+', '-']) + String(int(r, 400));
  return s;
}

const ASCII = 'abcdefghijklmnopqrstuvwxyz ABCDEFXYZ0123456789.,;:!?-_()[]{}<>=+*&^%$#@~`\'|';
const WIDE = ['é', 'ß', 'ñ', '中', '文', '日本', '\u2028', '\u2029', '\ufeff', '\ufffd', '\u00a0', '\u07ff', '\u0800', '\uffff'];
const ASTRAL = ['😀', '🇯🇵', '👩‍💻', '\u{10000}', '\u{10ffff}', '🔥'];
const LONE = ['\ud800', '\udbff', '\udc00', '\udfff', '\ud83d'];

/** A string with runs of every kind of character the escapes and the scan care about. */
function text(r: Rand, maxLen: number): string {
  const n = int(r, maxLen + 1);
  const kind = int(r, 4); // mostly ASCII, mostly non-ASCII, escapes galore, anything
  let s = '';
  while (s.length < n) {
    const x = r();
    if (kind === 0 ? x < 0.9 : kind === 1 ? x < 0.2 : kind === 2 ? x < 0.4 : x < 0.5) s += ASCII[int(r, ASCII.length)];
    else if (kind === 1 ? x < 0.85 : x < 0.65) s += pick(r, chance(r, 0.7) ? WIDE : ASTRAL);
    else if (x < 0.8) s += pick(r, ['"', '\\', '/', '"', '\\\\', '\\"']);
    else if (x < 0.93) s += String.fromCharCode(chance(r, 0.5) ? int(r, 0x20) : pick(r, [0x00, 0x09, 0x0a, 0x0d, 0x7f, 0x1f]));
    else s += pick(r, LONE);
  }
  return s;
}

const hex4 = (r: Rand, u: number) => {
  const h = u.toString(16).padStart(4, '0');
  return '\\u' + (chance(r, 0.5) ? h : h.toUpperCase());
};
const SHORT: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A JSON string literal for s: each unit raw where it may be, else escaped, at the given rate. */
function spell(r: Rand, s: string, escapeRate: number): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    const pair = u >= 0xd800 && u <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    const ch = pair ? s.slice(i, i + 2) : s[i];
    const lone = !pair && (u & 0xf800) === 0xd800;
    const must = u < 0x20 || u === 0x22 || u === 0x5c || lone;
    if (!must && !chance(r, escapeRate)) out += ch;
    else if (SHORT[ch] !== undefined && chance(r, 0.7)) out += SHORT[ch];
    else if (ch === '/' && chance(r, 0.5)) out += '\\/';
    else out += pair ? hex4(r, u) + hex4(r, s.charCodeAt(i + 1)) : hex4(r, u);
    if (pair) i++;
  }
  return out + '"';
}

interface Style { ws: number; escapeRate: number; keyEscapeRate: number }

function write(r: Rand, n: Node, st: Style): string {
  const w = () => {
    if (!chance(r, st.ws)) return '';
    let s = '';
    for (let k = 1 + int(r, 3); k > 0; k--) s += pick(r, [' ', ' ', '\t', '\n', '\r', '\r\n']);
    return s;
  };
  const go = (n: Node): string => {
    switch (n.t) {
      case 'raw': return n.text;
      case 'str': return spell(r, n.s, st.escapeRate);
      case 'arr': return '[' + w() + n.items.map((x) => go(x)).join(w() + ',' + w()) + w() + ']';
      case 'obj': return '{' + w() + n.members.map(([k, v]) => spell(r, k, st.keyEscapeRate) + w() + ':' + w() + go(v)).join(w() + ',' + w()) + w() + '}';
    }
  };
  return w() + go(n) + w();
}

/** Any value, with nesting up to `depth`; sometimes a narrow tower of the full depth. */
function anyValue(r: Rand, depth: number): Node {
  const x = r();
  if (depth > 0 && x < 0.04) {
    // a deep tower
    let v: Node = randomScalar(r);
    for (let d = int(r, depth); d > 0; d--) v = chance(r, 0.5) ? arr(v) : obj([pick(r, ['a', 'content', 'delta', '']), v]);
    return v;
  }
  if (depth > 0 && x < 0.2) return arr(...Array.from({ length: int(r, 4) }, () => anyValue(r, depth - 1)));
  if (depth > 0 && x < 0.35) return obj(...Array.from({ length: int(r, 4) }, (): [string, Node] => [randomKey(r), anyValue(r, depth - 1)]));
  return randomScalar(r);
}
function randomScalar(r: Rand): Node {
  const x = r();
  if (x < 0.45) return str(text(r, 24));
  if (x < 0.8) return raw(number(r));
  return raw(pick(r, ['true', 'false', 'null']));
}
const KEYS = ['id', 'object', 'model', 'content', 'Content', 'content ', 'contents', 'conten', 'delta', 'choices', 'usage', 'error',
  'message', 'index', 'type', 'text', 'x', 'deep', 'k😀', 'v', 'say "hi"', 'tab\tkey', '', '__proto__', 'é', 'role'];
const randomKey = (r: Rand) => (chance(r, 0.8) ? pick(r, KEYS) : text(r, 8));

/** Shuffles members, duplicates some (with a value of the same shape or any other), adds noise. */
function perturb(r: Rand, n: Node, gen: () => Node, depth: number): Node {
  if (n.t === 'arr') return arr(...n.items.map((x) => perturb(r, x, () => anyValue(r, 2), depth)));
  if (n.t !== 'obj') return n;
  let members = n.members.map(([k, v]): [string, Node] => [k, perturb(r, v, () => anyValue(r, 2), depth)]);
  for (let i = members.length - 1; i > 0; i--) {
    if (chance(r, 0.7)) {
      const j = int(r, i + 1);
      [members[i], members[j]] = [members[j], members[i]];
    }
  }
  if (members.length && chance(r, 0.25)) {
    // a duplicate key, before or after, with a different value: often one of the same shape,
    // sometimes an empty container or a scalar
    const [k, v] = pick(r, members);
    const other: Node = chance(r, 0.5) ? perturb(r, structuredClone(v), gen, depth) : pick(r, [arr(), obj(), raw('null'), str('dup'), anyValue(r, 2)]);
    members.splice(int(r, members.length + 1), 0, [k, other]);
  }
  if (chance(r, 0.3)) members.splice(int(r, members.length + 1), 0, [randomKey(r), anyValue(r, depth)]);
  if (chance(r, 0.05)) members = [];
  return obj(...members);
}

function openaiEvent(r: Rand): Node {
  const delta = (): Node => {
    const m: [string, Node][] = [];
    if (chance(r, 0.3)) m.push(['role', str('assistant')]);
    if (chance(r, 0.8)) m.push(['content', chance(r, 0.1) ? raw('null') : str(text(r, 80))]);
    if (chance(r, 0.2)) m.push(['reasoning_content', str(text(r, 40))]);
    if (chance(r, 0.1)) m.push(['reasoning', str(text(r, 40))]);
    if (chance(r, 0.15)) {
      m.push(['tool_calls', arr(...Array.from({ length: 1 + int(r, 2) }, (_, i) => obj(['index', raw(String(i))], ['id', str('call_' + i)],
        ['type', str('function')], ['function', obj(['name', str('get_weather')], ['arguments', str('{"city": "' + text(r, 10) + '"}')])])))]);
    }
    return obj(...m);
  };
  const choice = (i: number): Node => obj(['index', raw(String(i))], ['delta', delta()], ['logprobs', raw('null')],
    ['finish_reason', chance(r, 0.8) ? raw('null') : str(pick(r, ['stop', 'length', 'tool_calls', 'content_filter']))]);
  const m: [string, Node][] = [['id', str('chatcmpl-' + int(r, 1e9))], ['object', str('chat.completion.chunk')],
    ['created', raw(String(1732900000 + int(r, 1e6)))], ['model', str('gpt-4o-2024-08-06')], ['system_fingerprint', str('fp_d28bcae782')]];
  const nChoices = chance(r, 0.1) ? 0 : chance(r, 0.8) ? 1 : 2 + int(r, 3);
  m.push(['choices', arr(...Array.from({ length: nChoices }, (_, i) => choice(i)))]);
  if (chance(r, 0.15)) m.push(['usage', chance(r, 0.2) ? raw('null') : obj(['prompt_tokens', raw(number(r))], ['completion_tokens', raw('12')], ['total_tokens', raw('21')])]);
  if (chance(r, 0.05)) m.push(['error', obj(['message', str(text(r, 30))], ['type', str('server_error')], ['code', raw('null')])]);
  return obj(...m);
}

function anthropicEvent(r: Rand): Node {
  const x = r();
  if (x < 0.6) {
    const [dt, key] = pick(r, [['text_delta', 'text'], ['thinking_delta', 'thinking'], ['input_json_delta', 'partial_json']] as const);
    return obj(['type', str('content_block_delta')], ['index', raw(String(int(r, 4)))], ['delta', obj(['type', str(dt)], [key, str(text(r, 80))])]);
  }
  if (x < 0.7) return obj(['type', str('message_delta')], ['delta', obj(['stop_reason', str('end_turn')], ['stop_sequence', raw('null')])], ['usage', obj(['output_tokens', raw(number(r))])]);
  if (x < 0.8) {
    return obj(['type', str('message_start')], ['message', obj(['id', str('msg_01')], ['type', str('message')], ['role', str('assistant')],
      ['content', arr()], ['usage', obj(['input_tokens', raw('25')], ['output_tokens', raw('1')])])]);
  }
  if (x < 0.9) return obj(['type', str('error')], ['error', obj(['type', str('overloaded_error')], ['message', str(text(r, 30))])]);
  return obj(['type', str(pick(r, ['ping', 'message_stop', 'content_block_stop']))], ['index', raw('0')]);
}

/** Extra members that reach the odd paths: containers under `message`, `x.deep[*]`, escaped keys. */
function oddMembers(r: Rand): [string, Node][] {
  const m: [string, Node][] = [];
  if (chance(r, 0.3)) m.push(['x', obj(['deep', arr(...Array.from({ length: int(r, 4) }, () => anyValue(r, 4)))])]);
  if (chance(r, 0.2)) m.push(['k😀', obj(['v', anyValue(r, 3)])]);
  if (chance(r, 0.2)) m.push([pick(r, ['say "hi"', 'tab\tkey']), anyValue(r, 2)]);
  if (chance(r, 0.05)) m.push(['deep', anyValue(r, 120)]);
  return m;
}

function event(seed: number, small = false): Uint8Array {
  for (;;) {
    const doc = eventOnce(seed, small);
    // the mutation properties check every byte: keep their documents near an event's size; the
    // others within the input window (a deep member can make a document of a megabyte)
    if (small ? doc.length <= 700 : doc.length <= getCore().inCap) return doc;
    seed = (seed + 0x9e3779b9) | 0;
  }
}

function eventOnce(seed: number, small: boolean): Uint8Array {
  const r = rng(seed);
  const base = chance(r, 0.5) ? openaiEvent(r) : anthropicEvent(r);
  if (base.t === 'obj' && !small) base.members.push(...oddMembers(r));
  const doc = perturb(r, base, () => anyValue(r, 2), small ? 2 : 6);
  const style: Style = {
    ws: pick(r, [0, 0, 0.1, 0.5, 1]),
    escapeRate: pick(r, [0, 0, 0.05, 0.3, 1]),
    keyEscapeRate: pick(r, [0, 0, 0.1, 0.5]),
  };
  return enc.encode(write(r, doc, style));
}

// ---------------------------------------------------------------------------------------------

const dec = new TextDecoder();
const show = (doc: Uint8Array) => JSON.stringify(dec.decode(doc));
/** expect(got).toEqual(want), with the message made only when they differ (the loops are hot). */
function same(got: unknown, want: unknown, what: () => string): void {
  if (typeof got === 'object' ? JSON.stringify(got) !== JSON.stringify(want) : got !== want) expect(got, what()).toEqual(want);
}
const verdict = (res: ReadResult, len: number) => (res.ok ? { code: 0, offset: len } : { code: res.code, offset: res.offset });

describe(`JSON reader against JSON.parse (${wasmBackend()})`, () => {
  const prog = loadProgram(compilePaths(PATHS), 1024);

  it('generated events: the values at every path are JSON.parse’s', () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const doc = event(seed);
        const res = readIn(prog, doc);
        if (!res.ok) throw new Error(`rejected (${res.code} at ${res.offset}): ${show(doc)}`);
        const want = expectedAt(JSON.parse(dec.decode(doc)), PATHS);
        expect(foundIn(getCore(), doc, res.recs), show(doc)).toEqual(want);
      }),
      params(2000),
    );
  });

  it('every truncation: rejected as truncated at its end exactly when JSON.parse throws', () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const doc = event(seed, true);
        for (let n = 0; n < doc.length; n++) {
          const cut = doc.subarray(0, n);
          const res = readIn(prog, cut);
          const ok = parses(cut);
          same(res.ok, ok, () => `${n}: ${show(cut)}`);
          if (!res.ok) same([res.code, res.offset], [JE.TRUNCATED, n], () => show(cut));
          else expect(foundIn(getCore(), cut, res.recs)).toEqual(expectedAt(JSON.parse(dec.decode(cut)), PATHS));
        }
      }),
      params(60),
    );
  });

  it('every single-byte corruption: rejected exactly when JSON.parse throws, at the reference’s code and offset', () => {
    // ASCII for ASCII (the input stays valid UTF-8, as the framer hands it over); the bytes that
    // matter to the grammar, and any other
    const POOL = [...'{}[]:,"\\/ \t\n\r0123456789.eE+-tfnulrsabxU'].map((c) => c.charCodeAt(0)).concat([0x00, 0x08, 0x0c, 0x1f, 0x7f]);
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const doc = event(seed, true);
        const r = rng(seed ^ 0x5eed);
        const bad = doc.slice();
        for (let i = 0; i < doc.length; i++) {
          if (doc[i] >= 0x80) continue;
          for (let k = 0; k < 2; k++) {
            const v = k === 1 ? int(r, 0x80) : pick(r, POOL);
            if (v === doc[i]) continue;
            bad[i] = v;
            const res = readIn(prog, bad);
            const ok = parses(bad);
            same(res.ok, ok, () => `${i} → ${v}: ${show(bad)}`);
            same(verdict(res, bad.length), referenceCheck(bad), () => `${i} → ${v}: ${show(bad)}`);
            if (res.ok) expect(foundIn(getCore(), bad, res.recs)).toEqual(expectedAt(JSON.parse(dec.decode(bad)), PATHS));
          }
          bad[i] = doc[i];
          // and without the byte
          const del = new Uint8Array(doc.length - 1);
          del.set(doc.subarray(0, i));
          del.set(doc.subarray(i + 1), i);
          const res = readIn(prog, del);
          same(res.ok, parses(del), () => `delete ${i}: ${show(del)}`);
          same(verdict(res, del.length), referenceCheck(del), () => `delete ${i}: ${show(del)}`);
        }
      }),
      params(25),
    );
  });

  it('the reference agrees with JSON.parse on what it accepts (so its offsets mean something)', () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const doc = event(seed);
        expect(referenceCheck(doc).code).toBe(0);
        const r = rng(seed);
        const bad = doc.slice();
        const i = int(r, bad.length);
        if (bad[i] >= 0x80) return;
        bad[i] = pick(r, [0x22, 0x2c, 0x7d, 0x5d, 0x3a, 0x5c, 0x30, 0x2d]);
        expect(referenceCheck(bad).code === 0).toBe(parses(bad));
      }),
      params(500),
    );
  });
});
