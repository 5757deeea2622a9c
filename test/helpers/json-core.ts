// The core's JSON reader (assembly/json.ts) as the tests drive it: its exports, a path program
// compiler, records read back, strings made by the routes the bindings will use, the values
// JSON.parse gives at the same paths, and an independent reference for errors and their offsets.
import { getCore, type Core } from '../../bindings/core/wasm.js';

import * as A from '../../bindings/core/generated/abi.js';
import { JF_ASCII, JF_ESCAPED, JF_INTEGER, JSON_MAX_DEPTH, JSON_REC_CAP } from '../../bindings/core/generated/abi.js';
import { compilePaths, parsePath, STAR, type Step } from '../../bindings/models/paths.js';

export { JF_ASCII, JF_ESCAPED, JF_INTEGER, JSON_MAX_DEPTH, JSON_REC_CAP, compilePaths, parsePath, STAR, type Step };
export const JK = { string: A.JK_STRING, number: A.JK_NUMBER, object: A.JK_OBJECT, array: A.JK_ARRAY, true: A.JK_TRUE, false: A.JK_FALSE, null: A.JK_NULL } as const;
export const JE = {
  TRUNCATED: A.JE_TRUNCATED, UNEXPECTED: A.JE_UNEXPECTED, TRAILING: A.JE_TRAILING, NUMBER: A.JE_NUMBER, CONTROL: A.JE_CONTROL,
  ESCAPE: A.JE_ESCAPE, LITERAL: A.JE_LITERAL, DEPTH: A.JE_DEPTH, RECORDS: A.JE_RECORDS,
} as const;

export const jx = () => getCore().x;

// ---------------------------------------------------------------------------------------------
// Paths and programs

/** Writes a program into the core's program area at `offset`; returns its address. */
export function loadProgram(prog: Uint8Array, offset = 0): number {
  const core = getCore();
  core.sync();
  const addr = (jx().JSON_PROG_PTR.value as number) + offset;
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

/** Copies the document into the input window and reads it with the program at `prog` (a document the window cannot hold throws). */
export function readIn(prog: number, doc: Uint8Array): ReadResult {
  const core = getCore();
  if (doc.length > core.inCap) throw new RangeError(`a document of ${doc.length} bytes does not fit the input window (${core.inCap} bytes)`);
  core.sync();
  core.u8.set(doc, core.inPtr);
  const n = jx().jsonReadIn(prog, doc.length);
  if (n < 0) return { ok: false, code: -n, offset: jx().jsonErrorAt() };
  return { ok: true, recs: records(core, jx().JSON_REC_PTR.value as number, n) };
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
