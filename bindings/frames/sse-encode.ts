// The SSE wire format, written: one event from strings (encodeSse), and the events of a byte-path
// reader as a gateway forwards them.
import { EV_WORDS, MDR_EMIT_PTR, MDR_SCRATCH, SPAN_BYTES, SW_STR_CAP } from '../core/generated/abi.js';
import { type Core, getCore } from '../core/wasm.js';

const EMPTY = /* @__PURE__ */ new Uint8Array(0);

/**
 * What the wire writer reads of a byte-path reader (SseByteEvents): its bytes, its event table
 * (EV_WORDS words per event, the layout of assembly/abi.ts) and the batch's distinct types and IDs.
 */
export interface ByteEventsTable {
  readonly length: number;
  readonly bytes: Uint8Array;
  readonly byteLength: number;
  readonly table: Int32Array;
  readonly types: readonly string[];
  readonly ids: readonly string[];
  readonly nTypes: number;
  readonly nIds: number;
  data(i: number): Uint8Array;
  type(i: number): string;
  id(i: number): string;
  idChanged(i: number): boolean;
}
const DATA_PREFIX = /* @__PURE__ */ new Uint8Array([100, 97, 116, 97, 58, 32]); // 'data: '

let encoder: TextEncoder | undefined;
function utf8Encoder(): TextEncoder {
  return (encoder ??= new TextEncoder());
}

/**
 * The events of a byte-path reader in the SSE wire format: `event:` when the type is not
 * `message`, `id:` when the event changed the last event ID, one `data:` line per line of data.
 * The core writes them (its SSE writer) from a copy of the reader's bytes and table; JS copies
 * the result out once. A batch larger than the core's windows is written here.
 */
export function encodeByteEvents(events: ByteEventsTable): Uint8Array {
  const n = events.length;
  // (most small reads hold no whole event: one shared empty array, not a new buffer a call, which
  // cost a 64 B read as much as the framing)
  if (n === 0) return EMPTY;
  const core = getCore();
  if (events.byteLength > core.inCap || n * EV_WORDS * 4 > SPAN_BYTES) return encodeInJs(events);
  core.sync();
  if (!putStrings(core, events)) return encodeInJs(events);
  core.u8.set(events.bytes.subarray(0, events.byteLength), core.inPtr);
  core.i32.set(events.table.subarray(0, n * EV_WORDS), core.span);
  const len = core.x.sseWrite(n, core.inPtr, core.span << 2, events.nTypes);
  core.sync();
  const at = core.word(MDR_EMIT_PTR);
  const out = core.u8.slice(at, at + len);
  if (core.word(MDR_SCRATCH) !== 0) core.x.modelScratchFree(); // (a run larger than the writer's static area)
  return out;
}

/** What the strings area holds (per slot: the string whose bytes are there), for the realm's core. */
const slots: string[] = [];
const slotIsType: boolean[] = [];
let slotsOf: Core | null = null;
let slotsEnd = 0;

/**
 * The batch's types, then its IDs, in the core's strings area as (offset, length) entries and
 * UTF-8 bytes; a slot that holds the same string as last time is kept. When the bytes reach the
 * area's end, the area starts over once (`fresh`: every slot written anew from its start). False
 * when they do not fit even so (the caller writes the batch in JS).
 */
function putStrings(core: Core, events: ByteEventsTable, fresh = false): boolean {
  const total = events.nTypes + events.nIds;
  const head = total * 8;
  if (head > SW_STR_CAP / 2) return false;
  if (slotsOf !== core) {
    slotsOf = core;
    slots.length = 0;
  }
  const base = core.x.SW_STR_PTR.value as number;
  const i32 = core.i32;
  const w0 = base >> 2;
  // bytes go after the largest head written so far; a changed slot is written anew at the end
  let end = Math.max(slotsEnd, SW_STR_CAP / 2);
  for (let i = 0; i < total; i++) {
    const s = i < events.nTypes ? events.types[i] : events.ids[i - events.nTypes];
    const isType = i < events.nTypes;
    if (slots[i] === s && slotIsType[i] === isType) continue;
    let len = 0;
    if (!(isType && s === 'message')) {
      if (end + s.length * 3 > SW_STR_CAP) {
        // full: start the bytes over (every slot is written again), once
        slots.length = 0;
        slotsEnd = 0;
        return fresh ? false : putStrings(core, events, true);
      }
      len = utf8Encoder().encodeInto(s, core.u8.subarray(base + end, base + SW_STR_CAP)).written;
    }
    i32[w0 + 2 * i] = end;
    i32[w0 + 2 * i + 1] = len;
    end += len;
    slots[i] = s;
    slotIsType[i] = isType;
  }
  slotsEnd = end;
  return true;
}

/** The same, written in JS (batches larger than the core's windows). */
function encodeInJs(events: ByteEventsTable): Uint8Array {
  let size = 0;
  const head: Uint8Array[] = [];
  for (let i = 0; i < events.length; i++) {
    const t = events.type(i);
    let h = t === 'message' ? '' : `event: ${t}\n`;
    if (events.idChanged(i)) h += `id: ${events.id(i)}\n`;
    const hb = h === '' ? EMPTY : utf8Encoder().encode(h);
    head.push(hb);
    const d = events.data(i);
    let lines = 1;
    for (let j = d.indexOf(10); j !== -1; j = d.indexOf(10, j + 1)) lines++;
    size += hb.length + d.length - (lines - 1) + lines * 7 + 1; // each LF of the data becomes a line end
  }
  const out = new Uint8Array(size);
  let o = 0;
  for (let i = 0; i < events.length; i++) {
    out.set(head[i], o);
    o += head[i].length;
    const d = events.data(i);
    let s = 0;
    for (;;) {
      const j = d.indexOf(10, s);
      const e = j === -1 ? d.length : j;
      out.set(DATA_PREFIX, o);
      o += 6;
      out.set(d.subarray(s, e), o);
      o += e - s;
      out[o++] = 10;
      if (j === -1) break;
      s = j + 1;
    }
    out[o++] = 10;
  }
  return out;
}

function checkField(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new TypeError(`encodeSse: ${name} must be a string, got ${typeof value}`);
  if (/[\r\n]/.test(value)) throw new TypeError(`encodeSse: ${name} must not contain CR or LF (it would end the field), got ${JSON.stringify(value)}`);
  return value;
}

/**
 * One event in the SSE wire format, ending with the blank line that dispatches it. Multi-line
 * data becomes one `data:` line per line (CR, LF and CRLF all split, so a parser rebuilds the data
 * with LF). CR or LF in `type` or `id` and NUL in `id` throw a TypeError; `retry` must be a
 * non-negative integer.
 */
export function encodeSse(event: { data: string; type?: string; id?: string; retry?: number }): string {
  if (event === null || typeof event !== 'object') throw new TypeError(`encodeSse expects an event object, got ${event === null ? 'null' : typeof event}`);
  const { data } = event;
  if (typeof data !== 'string') throw new TypeError(`encodeSse: data must be a string, got ${typeof data}`);
  const type = checkField(event.type, 'type');
  const id = checkField(event.id, 'id');
  if (id !== undefined && id.includes('\0')) throw new TypeError('encodeSse: id must not contain NUL (a parser would ignore the field)');
  let out = '';
  if (type !== undefined && type !== '') out += `event: ${type}\n`;
  if (id !== undefined) out += id === '' ? 'id\n' : `id: ${id}\n`;
  if (event.retry !== undefined) {
    const r = event.retry;
    if (typeof r !== 'number' || !Number.isSafeInteger(r) || r < 0) throw new TypeError(`encodeSse: retry must be a non-negative integer, got ${String(r)}`);
    out += `retry: ${r}\n`;
  }
  if (data.indexOf('\n') === -1 && data.indexOf('\r') === -1) return `${out}data: ${data}\n\n`;
  for (const line of data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return `${out}\n`;
}
