// The byte-level path's reader: the events of one `pushBytes`/`flushBytes` call as validated UTF-8
// bytes in one buffer and a table of numbers, with no JS string or object per event.
import { encodeByteEvents } from './sse-encode.js';

import { EV_DATA0, EV_DATA1, EV_ID, EV_ID_CHANGED, EV_TYPE, EV_WORDS } from '../core/generated/abi.js';

let decoder: TextDecoder | undefined;
/** One TextDecoder for the readers, made on first use. */
function utf8Decoder(): TextDecoder {
  return (decoder ??= new TextDecoder('utf-8', { ignoreBOM: true }));
}

/**
 * The events of one `pushBytes`/`flushBytes` call, for gateways: their data as validated UTF-8
 * bytes, no JS string and no JS object per event. The reader and its `bytes` are owned by the
 * parser and overwritten by its next `pushBytes`/`flushBytes`; copy what you keep.
 *
 * Layout: `bytes[dataStart(i), dataEnd(i))` is event i's data. Other bytes of the stream may lie
 * between the events' data (the parser copies a chunk once rather than each event's data out of
 * it). `type(i)` and `id(i)` are strings, built once per distinct value (a stream's types repeat;
 * its ID changes rarely).
 */
export class SseByteEvents {
  /** Number of events. */
  get length(): number { return this.n; }
  /** The bytes the events' data lie in (only `[0, byteLength)` is meaningful). */
  get bytes(): Uint8Array { return this.buf; }
  /** Bytes used in `bytes`. */
  get byteLength(): number { return this.used; }
  /** @internal The number of events (written by the parser). */
  n = 0;
  /** @internal */
  buf: Uint8Array = new Uint8Array(0);
  /** @internal */
  used = 0;
  /** @internal Per event (EV_WORDS words): data start, data end, type index, id index, id-changed flag. */
  table: Int32Array = new Int32Array(EV_WORDS * 4);
  // Distinct types and ids of this batch; counters rather than array lengths (setting an array's
  // length is a runtime call in V8).
  /** @internal The batch's distinct types (the first `nTypes`), read by the wire writer. */
  readonly types: string[] = [];
  /** @internal The batch's distinct IDs (the first `nIds`). */
  readonly ids: string[] = [];
  /** @internal */
  nTypes = 0;
  /** @internal */
  nIds = 0;

  /** Input bytes seen since `bytes` / the table were last more than a quarter used. */
  private idleBytes = 0;
  private idleTable = 0;

  /**
   * @internal Empties the reader for a call that brings `incoming` bytes. The buffers start small
   * (a gateway holds thousands of parsers) and grow with use. Once large, they are kept while
   * they are used (a stream of large events reuses them), and dropped after four times their
   * size has gone by without needing them, so that growing them again costs a small fraction of
   * the bytes that went by.
   */
  clear(incoming: number): void {
    if (this.buf.length > READER_KEEP_BYTES) {
      this.idleBytes = this.used > this.buf.length >> 2 ? 0 : this.idleBytes + incoming;
      if (this.idleBytes > 4 * this.buf.length) {
        this.buf = new Uint8Array(0);
        this.idleBytes = 0;
      }
    }
    if (this.table.length > EV_WORDS * READER_KEEP_EVENTS) {
      // (a table of 4-byte words, 5 per event, against the input that goes by)
      this.idleTable = this.n * EV_WORDS * 4 > this.table.length ? 0 : this.idleTable + incoming;
      if (this.idleTable > 16 * this.table.length) {
        this.table = new Int32Array(EV_WORDS * 4);
        this.idleTable = 0;
      }
    }
    this.n = 0;
    this.used = 0;
    this.nTypes = 0;
    this.nIds = 0;
  }

  /** @internal Appends bytes; returns their offset. */
  append(src: Uint8Array): number {
    const at = this.used;
    const need = at + src.length;
    if (need > this.buf.length) {
      const grown = new Uint8Array(Math.max(need, this.buf.length * 2, 256));
      grown.set(this.buf.subarray(0, at));
      this.buf = grown;
    }
    this.buf.set(src, at);
    this.used = need;
    return at;
  }

  /** @internal Appends an event. */
  add(d0: number, d1: number, type: string, id: string, idChanged: boolean): void {
    const k = this.n;
    const t = this.room(1);
    const w = EV_WORDS * k;
    t[w + EV_DATA0] = d0;
    t[w + EV_DATA1] = d1;
    t[w + EV_TYPE] = this.typeIndex(type);
    t[w + EV_ID] = this.idIndex(id);
    t[w + EV_ID_CHANGED] = idChanged ? 1 : 0;
    this.n = k + 1;
  }

  /** @internal The table, with room for n more events. */
  room(n: number): Int32Array {
    const need = (this.n + n) * EV_WORDS;
    if (need <= this.table.length) return this.table;
    const grown = new Int32Array(Math.max(need, this.table.length * 2));
    grown.set(this.table);
    return (this.table = grown);
  }

  /** @internal Index of `type` in the batch's types. */
  typeIndex(type: string): number {
    this.nTypes = interned(this.types, this.nTypes, type);
    return this.nTypes - 1;
  }

  /** @internal Index of `id` in the batch's IDs. */
  idIndex(id: string): number {
    this.nIds = interned(this.ids, this.nIds, id);
    return this.nIds - 1;
  }

  /** Offset of event i's data in `bytes`. */
  dataStart(i: number): number { return this.table[EV_WORDS * i + EV_DATA0]; }
  /** End offset of event i's data in `bytes`. */
  dataEnd(i: number): number { return this.table[EV_WORDS * i + EV_DATA1]; }
  /** Event i's data: a view into `bytes` (no copy). */
  data(i: number): Uint8Array {
    const w = EV_WORDS * i;
    return this.buf.subarray(this.table[w + EV_DATA0], this.table[w + EV_DATA1]);
  }
  /** Event i's data as a string (decoded on request). */
  dataText(i: number): string { return utf8Decoder().decode(this.data(i)); }
  /** Event i's type (`'message'` when none was given). */
  type(i: number): string { return this.types[this.table[EV_WORDS * i + EV_TYPE]]; }
  /** The last event ID when event i was dispatched. */
  id(i: number): string { return this.ids[this.table[EV_WORDS * i + EV_ID]]; }
  /** Whether event i changed the last event ID. */
  idChanged(i: number): boolean { return this.table[EV_WORDS * i + EV_ID_CHANGED] !== 0; }

  /**
   * All events in the SSE wire format, as a gateway forwards them: `event:` when the type is not
   * `message`, `id:` when the event changed the last event ID, one `data:` line per line of data.
   * A new array the caller keeps; with no events, one shared empty array.
   */
  encode(): Uint8Array {
    return encodeByteEvents(this);
  }

}

/**
 * Adds `s` to the first `n` strings of `list` unless it repeats the last of them (a stream's types
 * repeat and its ID changes rarely); returns the new count, `s` being at count − 1.
 */
function interned(list: string[], n: number, s: string): number {
  if (n === 0 || list[n - 1] !== s) list[n++] = s;
  return n;
}

/** A byte reader's buffers above these sizes are dropped when a call uses less than a quarter. */
const READER_KEEP_BYTES = 64 * 1024;
const READER_KEEP_EVENTS = 1024;
