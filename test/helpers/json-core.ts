// The core's JSON reader (assembly/json.ts) as the tests drive it: its exports, a path program
// compiler, records read back, strings made by the routes the bindings will use, the values
// JSON.parse gives at the same paths, and an independent reference for errors and their offsets.
import { getCore, type Core } from '../../bindings/wasm.js';

/** The reader's exports (not yet in bindings/wasm.ts). */
export interface JsonCoreExports {
  jsonProgPtr(): number;
  jsonRecPtr(): number;
  jsonRead(prog: number, p: number, len: number, out: number, maxRecs: number): number;
  jsonReadIn(prog: number, len: number): number;
  jsonErrorAt(): number;
  jsonUnescape(p: number, len: number, out: number): number;
  jsonUtf16(p: number, len: number, out: number): number;
}

// Mirrors of assembly/json.ts
export const JSON_MAX_DEPTH = 512;
export const JSON_REC_CAP = 1024;
export const JK = { string: 1, number: 2, object: 3, array: 4, true: 5, false: 6, null: 7 } as const;
export const JF_ESCAPED = 1;
export const JF_ASCII = 2;
export const JF_INTEGER = 4;
export const JE = {
  TRUNCATED: 1, UNEXPECTED: 2, TRAILING: 3, NUMBER: 4, CONTROL: 5, ESCAPE: 6, LITERAL: 7, DEPTH: 8, RECORDS: 9,
} as const;
const JP_NO_PATH = 0xffff;

export const jx = (): JsonCoreExports => getCore().x as unknown as JsonCoreExports;

// ---------------------------------------------------------------------------------------------
// Paths and programs

/** A path step: a key, or STAR for every element of an array. */
export const STAR = Symbol('[*]');
export type Step = string | typeof STAR;

/** `choices[*].delta.content` → ['choices', STAR, 'delta', 'content']; '' is the document. */
export function parsePath(path: string): Step[] {
  const steps: Step[] = [];
  for (const m of path.matchAll(/\[\*\]|[^.[\]]+/g)) steps.push(m[0] === '[*]' ? STAR : m[0]);
  return steps;
}

interface TrieNode { id: number; keys: Map<string, TrieNode>; star: TrieNode | null }

/** The path program (layout: assembly/json.ts, "Path program") for paths; path i has id i. */
export function compilePaths(paths: string[]): Uint8Array {
  const root: TrieNode = { id: JP_NO_PATH, keys: new Map(), star: null };
  paths.forEach((path, id) => {
    let n = root;
    for (const s of parsePath(path)) {
      if (s === STAR) n = n.star ??= { id: JP_NO_PATH, keys: new Map(), star: null };
      else {
        let c = n.keys.get(s);
        if (!c) n.keys.set(s, (c = { id: JP_NO_PATH, keys: new Map(), star: null }));
        n = c;
      }
    }
    if (n.id !== JP_NO_PATH) throw new Error(`path ${path} given twice`);
    n.id = id;
  });
  // node offsets in breadth-first order, then the keys' bytes
  const order: TrieNode[] = [root];
  for (let i = 0; i < order.length; i++) {
    const n = order[i];
    for (const c of n.keys.values()) order.push(c);
    if (n.star) order.push(n.star);
  }
  const at = new Map<TrieNode, number>();
  let size = 0;
  for (const n of order) { at.set(n, size); size += 20 + 8 * n.keys.size; }
  const enc = new TextEncoder();
  let keyAt = size;
  const prog = new Uint8Array(size + [...order].reduce((k, n) => k + [...n.keys.keys()].reduce((a, s) => a + enc.encode(s).length, 0), 0));
  const dv = new DataView(prog.buffer);
  for (const n of order) {
    const o = at.get(n)!;
    dv.setUint16(o, n.id, true);
    dv.setUint16(o + 2, n.keys.size, true);
    dv.setUint32(o + 4, n.star ? at.get(n.star)! : 0, true);
    let lengths = 0;
    for (const k of n.keys.keys()) lengths |= 1 << (enc.encode(k).length & 31);
    dv.setUint32(o + 16, lengths >>> 0, true);
    let e = o + 20;
    for (const [k, c] of n.keys) {
      const b = enc.encode(k);
      if (b.length > 255) throw new Error('key too long');
      dv.setUint32(e, at.get(c)!, true);
      dv.setUint16(e + 4, b.length, true);
      dv.setUint16(e + 6, keyAt, true);
      prog.set(b, keyAt);
      keyAt += b.length;
      e += 8;
    }
  }
  return prog;
}

/** Writes a program into the core's program area at `offset`; returns its address. */
export function loadProgram(prog: Uint8Array, offset = 0): number {
  const core = getCore();
  core.sync();
  const addr = jx().jsonProgPtr() + offset;
  core.u8.set(prog, addr);
  return addr;
}

// ---------------------------------------------------------------------------------------------
// Reading

export interface Rec { path: number; kind: number; flags: number; index: number; start: number; end: number }
export type ReadResult = { ok: true; recs: Rec[] } | { ok: false; code: number; offset: number };

/** Records as the core wrote them at `out`. */
export function records(core: Core, out: number, n: number): Rec[] {
  const recs: Rec[] = [];
  const i32 = core.i32;
  for (let r = 0; r < n; r++) {
    const w = (out >> 2) + 4 * r;
    const w0 = i32[w];
    recs.push({ path: w0 & 0xffff, kind: (w0 >>> 16) & 0xff, flags: w0 >>> 24, index: i32[w + 1], start: i32[w + 2], end: i32[w + 3] });
  }
  return recs;
}

/** Copies the document into the input window and reads it with the program at `prog`. */
export function readIn(prog: number, doc: Uint8Array): ReadResult {
  const core = getCore();
  core.sync();
  core.u8.set(doc, core.inPtr);
  const n = jx().jsonReadIn(prog, doc.length);
  if (n < 0) return { ok: false, code: -n, offset: jx().jsonErrorAt() };
  return { ok: true, recs: records(core, jx().jsonRecPtr(), n) };
}

/**
 * The text of a string record of the document at `base`, by the routes the bindings will take:
 * escaped → jsonUnescape + utf16; ASCII → latin1; otherwise the core's transcoder + utf16.
 */
export function recString(core: Core, base: number, r: Rec): string {
  const ptr = base + r.start, len = r.end - r.start;
  if (r.flags & JF_ESCAPED) return core.utf16(core.outPtr, jx().jsonUnescape(ptr, len, core.outPtr));
  if (r.flags & JF_ASCII) return core.latin1(ptr, len);
  return core.utf16(core.outPtr, jx().jsonUtf16(ptr, len, core.outPtr));
}

const utf8 = new TextDecoder();
const textOf = (doc: Uint8Array, r: Rec) => utf8.decode(doc.subarray(r.start, r.end));

/** The JS value of a record of `doc` (read at the input window), checking its flags on the way. */
export function recValue(core: Core, doc: Uint8Array, r: Rec): unknown {
  const span = doc.subarray(r.start, r.end);
  switch (r.kind) {
    case JK.string: {
      const escaped = span.includes(0x5c), ascii = span.every((b) => b < 0x80);
      if (((r.flags & JF_ESCAPED) !== 0) !== escaped || ((r.flags & JF_ASCII) !== 0) !== ascii) {
        throw new Error(`string flags ${r.flags} for ${textOf(doc, r)}`);
      }
      return recString(core, core.inPtr, r);
    }
    case JK.number: {
      const t = textOf(doc, r);
      if (((r.flags & JF_INTEGER) !== 0) !== !/[.eE]/.test(t)) throw new Error(`number flags ${r.flags} for ${t}`);
      return Number(t);
    }
    case JK.object:
    case JK.array: return JSON.parse(textOf(doc, r));
    case JK.true: return true;
    case JK.false: return false;
    case JK.null: return null;
    default: throw new Error(`kind ${r.kind}`);
  }
}

export function kindOf(v: unknown): number {
  if (typeof v === 'string') return JK.string;
  if (typeof v === 'number') return JK.number;
  if (v === true) return JK.true;
  if (v === false) return JK.false;
  if (v === null) return JK.null;
  return Array.isArray(v) ? JK.array : JK.object;
}

export interface Found { path: number; index: number; kind: number; value: unknown }

/** What JSON.parse's value holds at the paths (the last duplicate key won already). */
export function expectedAt(value: unknown, paths: string[]): Found[] {
  const out: Found[] = [];
  paths.forEach((p, id) => {
    const steps = parsePath(p);
    const walk = (v: unknown, k: number, index: number) => {
      if (k === steps.length) { out.push({ path: id, index, kind: kindOf(v), value: v }); return; }
      const s = steps[k];
      if (s === STAR) {
        if (Array.isArray(v)) v.forEach((e, i) => walk(e, k + 1, i));
      } else if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, s)) {
        walk((v as Record<string, unknown>)[s], k + 1, index);
      }
    };
    walk(value, 0, -1);
  });
  return sortFound(out);
}

/** The records' values in the same form. */
export function foundIn(core: Core, doc: Uint8Array, recs: Rec[]): Found[] {
  return sortFound(recs.map((r) => ({ path: r.path, index: r.index, kind: r.kind, value: recValue(core, doc, r) })));
}

const sortKey = (f: Found) => `${f.path}\u0000${f.index}\u0000${typeof f.value === 'number' ? String(f.value) : JSON.stringify(f.value)}`;
function sortFound(a: Found[]): Found[] {
  return a.map((f) => [sortKey(f), f] as const).sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)).map((x) => x[1]);
}

// ---------------------------------------------------------------------------------------------
// An independent reference for the verdict, the error code and its offset (assembly/json.ts,
// "Results and errors"), written for clarity: one byte at a time, recursive.

class Stop { constructor(readonly code: number, readonly offset: number) {} }

export function referenceCheck(b: Uint8Array, maxDepth = JSON_MAX_DEPTH): { code: number; offset: number } {
  const n = b.length;
  let i = 0;
  const stop = (code: number, at: number): never => { throw new Stop(code, at); };
  const need = () => { if (i >= n) stop(JE.TRUNCATED, n); };
  const ws = () => { while (i < n && (b[i] === 0x20 || b[i] === 0x09 || b[i] === 0x0a || b[i] === 0x0d)) i++; };
  const digit = (c: number) => c >= 0x30 && c <= 0x39;
  const hex = (c: number) => digit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
  const expect = (c: number) => { need(); if (b[i] !== c) stop(JE.UNEXPECTED, i); i++; };
  const string = () => {
    i++; // "
    for (;;) {
      need();
      const c = b[i];
      if (c === 0x22) { i++; return; }
      if (c < 0x20) stop(JE.CONTROL, i);
      if (c === 0x5c) {
        i++;
        need();
        if (b[i] === 0x75) {
          for (let k = 0; k < 4; k++) { i++; need(); if (!hex(b[i])) stop(JE.ESCAPE, i); }
        } else if (!'"\\/bfnrt'.includes(String.fromCharCode(b[i]))) stop(JE.ESCAPE, i);
      }
      i++;
    }
  };
  const digits = () => { while (i < n && digit(b[i])) i++; };
  const number = () => {
    if (b[i] === 0x2d) { i++; need(); if (!digit(b[i])) stop(JE.NUMBER, i); }
    if (b[i] === 0x30) { i++; if (i < n && digit(b[i])) stop(JE.NUMBER, i); } else digits();
    if (i < n && b[i] === 0x2e) { i++; need(); if (!digit(b[i])) stop(JE.NUMBER, i); digits(); }
    if (i < n && (b[i] === 0x65 || b[i] === 0x45)) {
      i++;
      need();
      if (b[i] === 0x2b || b[i] === 0x2d) { i++; need(); }
      if (!digit(b[i])) stop(JE.NUMBER, i);
      digits();
    }
  };
  const literal = (word: string) => {
    for (let k = 1; k < word.length; k++) {
      if (i + k >= n) stop(JE.TRUNCATED, n);
      if (b[i + k] !== word.charCodeAt(k)) stop(JE.LITERAL, i + k);
    }
    i += word.length;
  };
  const value = (depth: number): void => {
    need();
    const c = b[i];
    if (c === 0x7b || c === 0x5b) {
      if (depth + 1 > maxDepth) stop(JE.DEPTH, i);
      const close = c + 2;
      i++;
      ws();
      need();
      if (b[i] === close) { i++; return; }
      for (;;) {
        if (c === 0x7b) {
          need();
          if (b[i] !== 0x22) stop(JE.UNEXPECTED, i);
          string();
          ws();
          expect(0x3a);
          ws();
        }
        value(depth + 1);
        ws();
        need();
        if (b[i] === 0x2c) { i++; ws(); continue; }
        if (b[i] === close) { i++; return; }
        stop(JE.UNEXPECTED, i);
      }
    }
    if (c === 0x22) return string();
    if (c === 0x2d || digit(c)) return number();
    if (c === 0x74) return literal('true');
    if (c === 0x66) return literal('false');
    if (c === 0x6e) return literal('null');
    stop(JE.UNEXPECTED, i);
  };
  try {
    ws();
    need();
    value(0);
    ws();
    if (i < n) stop(JE.TRAILING, i);
    return { code: 0, offset: n };
  } catch (e) {
    if (e instanceof Stop) return { code: e.code, offset: e.offset };
    throw e;
  }
}

/** The verdict of JSON.parse on the bytes (decoded as the framer's valid UTF-8 would be). */
export function parses(doc: Uint8Array): boolean {
  try {
    JSON.parse(utf8.decode(doc));
    return true;
  } catch {
    return false;
  }
}
