// Layer 2: AWS's binary event stream (application/vnd.amazon.eventstream), framed in the core
// (assembly/eventstream.ts): both CRCs checked there, every header read there (ten value types),
// a message longer than the limit refused at its prelude. Here the records become messages:
// headers as AWS's own codec gives them, and the payload's bytes.
import {
  ESE_HEADER, ESE_HEADERS, ESE_LENGTH, ESE_LIMIT, ESE_MESSAGE_CRC, ESE_PRELUDE_CRC, ESH_NAME, ESH_NAME_LEN, ESH_TYPE, ESH_VALUE,
  ESH_VALUE_LEN, ESH_WORDS, ESR_ERR, ESR_ERR_AT, ESR_ERR_GOT, ESR_ERR_WANT, ESR_NREC, ESR_OUT, ES_REC_WORDS, ER_EVENT, ER_EVENT_LEN,
  ER_HDR0, ER_LEN, ER_MESSAGE, ER_MESSAGE_LEN, ER_MTYPE, ER_NHDR, ER_PAYLOAD, ER_PAYLOAD_LEN, ER_START, ESC_NOT_JSON, ESC_NOT_STRING, ESC_NO_BYTES, JF_ESCAPED, JREC_FLAGS_SHIFT,
  JREC_WORDS, JR_END, JR_HEAD, JR_START, R_MORE, ESM_NONE, ESM_READ, ESM_WRITTEN, ESMR_OUT,
} from '../core/generated/abi.js';
import { checkOptions } from '../core/options.js';
import { CoreStream, type StateKind } from '../core/stream.js';
import { type Core, type CoreExports } from '../core/wasm.js';
import { MAX_LIMIT_BYTES, frameLimit } from './frame-stream.js';

/** A header's value, typed as AWS's codec types it. */
export type EventStreamHeader =
  | { type: 'boolean'; value: boolean }
  | { type: 'byte' | 'short' | 'integer'; value: number }
  | { type: 'long'; value: bigint }
  | { type: 'binary'; value: Uint8Array }
  | { type: 'string'; value: string }
  | { type: 'timestamp'; value: Date }
  | { type: 'uuid'; value: string };

/** One message of an event stream. */
export interface EventStreamMessage {
  /** Its headers by name (a name sent twice: the last). */
  headers: Record<string, EventStreamHeader>;
  /** Its payload (a copy). */
  payload: Uint8Array;
  /** Absolute byte offset of its first byte, and its total length. */
  offset: number;
  length: number;
}

export type EventStreamErrorCode =
  | 'ERR_CRC_MISMATCH' // the prelude's or the message's CRC32 does not match
  | 'ERR_BAD_FRAME' // lengths that cannot be, or a header that runs past the headers or has no type of the ten
  | 'ERR_FRAME_TOO_LARGE' // a message longer than maxMessageBytes (refused at its prelude)
  | 'ERR_STREAM_TRUNCATED'; // the stream ended inside a message

/** A damaged event stream: the code, the absolute offset of the damaged message's first byte, and the messages of the call before it. */
export class EventStreamError extends Error {
  readonly code: EventStreamErrorCode;
  readonly offset: number;
  /** The messages this call framed before the damaged one. */
  readonly messages: EventStreamMessage[];
  /** ERR_CRC_MISMATCH: which CRC. */
  readonly crc: 'prelude' | 'message' | undefined;
  constructor(code: EventStreamErrorCode, offset: number, message: string, messages: EventStreamMessage[], crc?: 'prelude' | 'message') {
    super(message);
    this.name = 'EventStreamError';
    this.code = code;
    this.offset = offset;
    this.messages = messages;
    this.crc = crc;
  }

  /** @internal The same error without the messages it carried. */
  withoutOutput(): EventStreamError {
    return new EventStreamError(this.code, this.offset, this.message, [], this.crc);
  }
}

/** Default of `maxMessageBytes`: 16 MiB (AWS's own limit for a message is 16 MiB too). */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

const ES_STATE: StateKind = { reset: (x, st) => x.esReset(st), free: (x, st) => x.esFree(st) };
const utf8 = /* @__PURE__ */ new TextDecoder('utf-8', { ignoreBOM: true });
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

/** One message record, as the core wrote it (addresses in core memory, valid until the next call). */
export interface FrameRecord {
  /** Absolute offset and length. */
  offset: number;
  length: number;
  payload: number;
  payloadLength: number;
  hdr0: number;
  nhdr: number;
  /** ES_MT_* */
  messageType: number;
  /** `:event-type` / `:exception-type` / `:error-code` value (address, length), `:error-message` (address, length). */
  event: number;
  eventLength: number;
  errorMessage: number;
  errorMessageLength: number;
}

/**
 * The core's framer for a stream, for the decoder below and for the Bedrock model formats: `frame`
 * calls `each` for every whole message of a chunk, in order, and throws EventStreamError on damage.
 */
export class EventStreamFramer extends CoreStream {
  readonly maxMessageBytes: number;

  constructor(what: string, maxMessageBytes: number) {
    super(what, ES_STATE, (x) => x.esNew(maxMessageBytes));
    this.maxMessageBytes = maxMessageBytes;
  }

  /** Bytes held of an unfinished message. */
  get pendingBytes(): number {
    return this.st === 0 ? 0 : this.core.x.esHeld(this.st);
  }

  /** @internal The model stream that frames with it ended: its record goes back now (`reset()` makes a new one). */
  ended(): void {
    this.retire();
    this.noEvents();
  }

  protected override remake(x: CoreExports): number {
    return x.esNew(this.maxMessageBytes);
  }

  /**
   * Frames the chunk: `each` for every whole message; the damage, if any, as EventStreamError after
   * the messages before it. With `batch`, each call's records are handed over as a batch instead
   * (their number, and the absolute offset the input window stands for), to be read by index.
   */
  frame(chunk: Uint8Array, each: (r: FrameRecord) => void, delivered: () => EventStreamMessage[] = () => [], batch?: (n: number, base: number) => void): void {
    if (this.failure !== null) this.rethrow();
    const cap = this.core.inCap;
    if (chunk.length <= cap) this.piece(chunk, each, delivered, batch);
    else for (let i = 0; i < chunk.length; i += cap) this.piece(chunk.subarray(i, i + cap), each, delivered, batch);
  }

  private piece(piece: Uint8Array, each: (r: FrameRecord) => void, delivered: () => EventStreamMessage[], batch?: (n: number, base: number) => void): void {
    const base = this.putIn(piece);
    let r: number;
    try {
      r = this.core.x.esPush(this.st, piece.length);
    } catch (e) {
      throw this.trapped(e, base);
    }
    this.drain(r, base, each, delivered, batch);
  }

  /**
   * @internal Bedrock's usual read (esModelPush in the core): `piece` (at most the input window)
   * framed and, when its messages are all events, their events read by the model stream `st` with
   * the arguments after it, in one call. `chunks`: 0 for ConverseStream (each event's payload under
   * its name); for InvokeModelWithResponseStream, the path program of a chunk's `bytes`, each chunk
   * decoded into one event. Returns the core's status: with ESM_READ the model stream's (and
   * `events` says where the events lie); otherwise the framing went on as frame()'s does, its
   * records to `each`, or as batches to `batch`. A trap of the core is the caller's to turn into
   * its error.
   */
  frameRead(piece: Uint8Array, each: (r: FrameRecord) => void, batch: ((n: number, base: number) => void) | undefined, chunks: number,
    st: number, mode: number, framing: number, prog: number, t: number, choice: number, read: number): number {
    if (this.failure !== null) this.rethrow();
    const base = this.putIn(piece);
    this.noEvents(); // (the core empties the event buffer itself)
    const r = this.core.x.esModelPush(this.st, piece.length, base, st, mode, framing, prog, t, choice, read, chunks);
    if (r & ESM_READ) this.eventsOut(ESMR_OUT);
    else if (r & (ESM_NONE | ESM_WRITTEN)) this.eventsOut(ESR_OUT);
    else this.drain(r, base, each, () => [], batch);
    return r;
  }

  /** Copies a piece (at most the input window) into the input window: the absolute offset it starts at. */
  private putIn(piece: Uint8Array): number {
    const core = this.core;
    core.sync();
    core.u8.set(piece, core.inPtr);
    const base = this.bytesIn;
    this.bytesIn += piece.length;
    return base;
  }

  /** After esPush: its records to `each` (or `batch`), its damage as the stream's error, and its continuations. */
  private drain(r: number, base: number, each: (r: FrameRecord) => void, delivered: () => EventStreamMessage[], batch?: (n: number, base: number) => void): void {
    const core = this.core;
    for (;;) {
      core.sync();
      const n = core.i32[core.res + ESR_NREC];
      if (batch !== undefined) {
        try {
          batch(n, base);
        } catch (e) {
          throw this.trapped(e, base);
        }
      } else {
        for (let k = 0; k < n; k++) each(this.recordAt(k, base));
      }
      core.sync();
      const i32 = core.i32;
      const res = core.res;
      const err = i32[res + ESR_ERR];
      if (err !== 0) this.stop(this.damage(err, base + i32[res + ESR_ERR_AT], i32[res + ESR_ERR_WANT] >>> 0, i32[res + ESR_ERR_GOT] >>> 0, delivered()));
      if (!(r & R_MORE)) break;
      r = core.x.esMore(this.st);
    }
  }

  /** Record `k` of the last call, `base` the absolute offset the input window stood for. */
  recordAt(k: number, base: number): FrameRecord {
    const core = this.core;
    core.sync();
    const i32 = core.i32;
    const w = core.span + k * ES_REC_WORDS;
    return {
      offset: base + i32[w + ER_START], length: i32[w + ER_LEN] >>> 0, payload: i32[w + ER_PAYLOAD], payloadLength: i32[w + ER_PAYLOAD_LEN],
      hdr0: i32[w + ER_HDR0], nhdr: i32[w + ER_NHDR], messageType: i32[w + ER_MTYPE], event: i32[w + ER_EVENT], eventLength: i32[w + ER_EVENT_LEN],
      errorMessage: i32[w + ER_MESSAGE], errorMessageLength: i32[w + ER_MESSAGE_LEN],
    };
  }

  /**
   * @internal The events a model reader reads, written by the core into the stream's event buffer:
   * the event messages of the last call's records from `from` on (see esEvents in
   * assembly/eventstream.ts). Returns the index of the first record left to the caller (an
   * exception, an error, an event type too long), or the records' number.
   */
  writeEvents(from: number, base: number): number {
    const k = this.core.x.esEvents(this.st, from, base);
    this.eventsOut();
    return k;
  }

  /** @internal One event of `n` bytes at `p` in core memory (a chunk's decoded bytes), from the message at absolute offset `at`. */
  writeData(p: number, n: number, at: number): void {
    this.core.x.esData(this.st, p, n, at);
    this.eventsOut();
  }

  /** @internal Empties the event buffer. */
  clearEvents(): void {
    if (this.st !== 0) this.core.x.esClear(this.st);
    this.noEvents();
  }

  private noEvents(): void {
    const e = this.events;
    e.ptr = e.len = e.map = e.mapN = 0;
  }

  /** @internal Where the event buffer and its map are (after writeEvents or writeData; until the next clearEvents). */
  readonly events = { ptr: 0, len: 0, map: 0, mapN: 0 };

  /** The event buffer and its map, from the result words at `w` (ESR_OUT, or ESMR_OUT after a read: four words in the same order). */
  private eventsOut(w = ESR_OUT): void {
    const core = this.core;
    core.sync();
    const i32 = core.i32;
    const r = core.res + w;
    const e = this.events;
    e.ptr = i32[r] >>> 0;
    e.len = i32[r + 1] >>> 0;
    e.map = i32[r + 2] >>> 0;
    e.mapN = i32[r + 3];
  }

  /** End of stream: a message cut short is ERR_STREAM_TRUNCATED at the stream's end. Then a new stream. */
  end(delivered: EventStreamMessage[] = []): void {
    if (this.failure !== null) this.rethrow();
    const held = this.pendingBytes;
    const at = this.bytesIn;
    if (held !== 0) {
      this.stop(new EventStreamError('ERR_STREAM_TRUNCATED', at, `The event stream ended inside a message: ${held} bytes of the message at byte offset ${at - held} arrived`, delivered));
    }
    this.bytesIn = 0;
  }

  /** @internal The core this framer's stream lives in. */
  get shared(): Core {
    return this.core;
  }

  /** @internal The core's memory, where a record's bytes lie. */
  get memory(): Uint8Array {
    this.core.sync();
    return this.core.u8;
  }

  private damage(code: number, at: number, want: number, got: number, messages: EventStreamMessage[]): EventStreamError {
    const hx = (v: number) => `0x${v.toString(16).padStart(8, '0')}`;
    switch (code) {
      case ESE_PRELUDE_CRC:
        return new EventStreamError('ERR_CRC_MISMATCH', at, `The prelude CRC32 of the message at byte offset ${at} does not match: sent ${hx(want)}, computed ${hx(got)}`, messages, 'prelude');
      case ESE_MESSAGE_CRC:
        return new EventStreamError('ERR_CRC_MISMATCH', at, `The CRC32 of the message at byte offset ${at} does not match: sent ${hx(want)}, computed ${hx(got)}`, messages, 'message');
      case ESE_LIMIT:
        return new EventStreamError('ERR_FRAME_TOO_LARGE', at, `The message at byte offset ${at} says it is ${want} bytes long, past maxMessageBytes (${got}); nothing of it was buffered`, messages);
      case ESE_LENGTH:
        return new EventStreamError('ERR_BAD_FRAME', at, `The message at byte offset ${at} has lengths that cannot be: ${want} bytes in all, ${got} of headers`, messages);
      case ESE_HEADER:
        return new EventStreamError('ERR_BAD_FRAME', at, `The message at byte offset ${at} has a bad header at byte ${want} of it${got > 9 ? ` (type ${got} is none of the ten)` : ': it runs past the headers'}`, messages);
      case ESE_HEADERS:
      default:
        return new EventStreamError('ERR_BAD_FRAME', at, `The message at byte offset ${at} has more than ${want} headers`, messages);
    }
  }

  /** @internal Whether a record's event type is InvokeModelWithResponseStream's chunk (the core knows the name). */
  isChunk(r: FrameRecord): boolean {
    return this.core.x.esIsChunk(r.event, r.eventLength) !== 0;
  }

  /**
   * @internal InvokeModelWithResponseStream: the `bytes` member of a chunk's payload (found by the
   * core with path program `prog`, whose path 0 is `bytes`: esChunkBytes) decoded from base64 by
   * the core, in place: where the inner event's bytes lie, or what is wrong.
   */
  chunkOf(r: FrameRecord, prog: number): { ptr: number; len: number } | { error: string } {
    const core = this.core;
    const j = core.x.esChunkBytes(prog, r.payload, r.payloadLength);
    if (j === ESC_NOT_JSON) return { error: 'its payload is not JSON' };
    if (j === ESC_NO_BYTES) return { error: 'its payload has no bytes' };
    if (j === ESC_NOT_STRING) return { error: 'its bytes are not a string' };
    core.sync();
    const i32 = core.i32;
    const w = ((core.x.JSON_REC_PTR.value as number) >> 2) + j * JREC_WORDS;
    const start = r.payload + i32[w + JR_START];
    const len = i32[w + JR_END] - i32[w + JR_START];
    if (((i32[w + JR_HEAD] >>> JREC_FLAGS_SHIFT) & JF_ESCAPED) !== 0) {
      // (a JSON encoder that escapes `/`: the string unescaped first, written back in place: it is shorter)
      const s = JSON.parse(`"${utf8.decode(core.u8.subarray(start, start + len))}"`) as string;
      let k = 0;
      for (; k < s.length; k++) {
        const c = s.charCodeAt(k);
        if (c > 0x7f) return { error: `its bytes are not base64 (at byte ${k} of them)` };
        core.u8[start + k] = c;
      }
      return this.decoded(start, k);
    }
    return this.decoded(start, len);
  }

  private decoded(start: number, len: number): { ptr: number; len: number } | { error: string } {
    const d = this.core.x.b64Decode(start, len, start);
    if (d < 0) return { error: `its bytes are not base64 (at byte ${-d - 1} of them)` };
    return { ptr: start, len: d };
  }

  /** The headers of a record, as AWS's codec gives them. */
  headersOf(r: FrameRecord): Record<string, EventStreamHeader> {
    const core = this.core;
    const i32 = core.i32;
    const u8 = core.u8;
    const out: Record<string, EventStreamHeader> = {};
    const hp = (core.x.ES_HDR_PTR.value as number) >> 2;
    for (let k = 0; k < r.nhdr; k++) {
      const w = hp + (r.hdr0 + k) * ESH_WORDS;
      const name = this.text(u8, i32[w + ESH_NAME], i32[w + ESH_NAME_LEN]);
      const t = i32[w + ESH_TYPE];
      const v = i32[w + ESH_VALUE];
      const n = i32[w + ESH_VALUE_LEN];
      let h: EventStreamHeader;
      switch (t) {
        case 0: case 1: h = { type: 'boolean', value: t === 0 }; break;
        case 2: h = { type: 'byte', value: (u8[v] << 24) >> 24 }; break;
        case 3: h = { type: 'short', value: ((u8[v] << 24) | (u8[v + 1] << 16)) >> 16 }; break;
        case 4: h = { type: 'integer', value: (u8[v] << 24) | (u8[v + 1] << 16) | (u8[v + 2] << 8) | u8[v + 3] }; break;
        case 5: h = { type: 'long', value: new DataView(u8.buffer, v, 8).getBigInt64(0) }; break;
        case 6: h = { type: 'binary', value: u8.slice(v, v + n) }; break;
        case 7: h = { type: 'string', value: this.text(u8, v, n) }; break;
        case 8: h = { type: 'timestamp', value: new Date(Number(new DataView(u8.buffer, v, 8).getBigInt64(0))) }; break;
        default: {
          const x = hex(u8.subarray(v, v + n));
          h = { type: 'uuid', value: `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}` };
        }
      }
      if (name === '__proto__') Object.defineProperty(out, name, { value: h, enumerable: true, configurable: true, writable: true }); // (a key, not the prototype)
      else out[name] = h;
    }
    return out;
  }

  /**
   * A header's name or string value as text: the short ones a stream repeats (`:event-type`,
   * `contentBlockDelta`, …) from a small cache of the last ones seen, compared byte for byte.
   */
  private text(u8: Uint8Array, p: number, n: number): string {
    if (n > TEXT_CACHE_BYTES) return utf8.decode(u8.subarray(p, p + n));
    const c = this.cache;
    for (let i = 0; i < c.length; i++) {
      const e = c[i];
      const b = e.bytes;
      if (b.length !== n) continue;
      let j = 0;
      while (j < n && b[j] === u8[p + j]) j++;
      if (j === n) return e.text;
    }
    const bytes = u8.slice(p, p + n);
    const text = utf8.decode(bytes);
    if (c.length < TEXT_CACHE_ENTRIES) c.push({ bytes, text });
    else c[this.cacheNext++ % TEXT_CACHE_ENTRIES] = { bytes, text };
    return text;
  }

  private readonly cache: { bytes: Uint8Array; text: string }[] = [];
  private cacheNext = 0;
}

/** The header texts a framer remembers, and the longest it remembers. */
const TEXT_CACHE_ENTRIES = 16;
const TEXT_CACHE_BYTES = 64;

/**
 * AWS's binary event stream, message by message: `push(chunk)` gives the messages the chunk
 * completed (any cutting of the bytes), `flush()` ends the stream. Damage (a CRC that does not
 * match, lengths that cannot be, a bad header, a message longer than `maxMessageBytes`) is an
 * EventStreamError at the damaged message's offset, with the messages before it; the decoder
 * then stays failed until `reset()`.
 */
export class EventStreamDecoder {
  private readonly framer: EventStreamFramer;

  constructor(options: { maxMessageBytes?: number } = {}) {
    checkOptions(options, 'EventStreamDecoder', ['maxMessageBytes']);
    const max = frameLimit(options.maxMessageBytes, 'maxMessageBytes', 'EventStreamDecoder', DEFAULT_MAX_MESSAGE_BYTES);
    this.framer = new EventStreamFramer('EventStreamDecoder', Math.min(max, MAX_LIMIT_BYTES));
  }

  get maxMessageBytes(): number { return this.framer.maxMessageBytes; }
  /** Bytes consumed since the stream began. */
  get bytesIn(): number { return this.framer.bytesIn; }
  /** Bytes held of an unfinished message. */
  get pendingBytes(): number { return this.framer.pendingBytes; }

  push(chunk: Uint8Array): EventStreamMessage[] {
    if (!(chunk instanceof Uint8Array)) throw new TypeError('EventStreamDecoder.push() expects a Uint8Array (or Buffer) of bytes');
    const out: EventStreamMessage[] = [];
    const f = this.framer;
    f.frame(chunk, (r) => {
      out.push({ headers: f.headersOf(r), payload: f.memory.slice(r.payload, r.payload + r.payloadLength), offset: r.offset, length: r.length });
    }, () => out);
    return out;
  }

  /** End of stream: throws ERR_STREAM_TRUNCATED when it ended inside a message. */
  flush(): void {
    this.framer.end();
  }

  reset(): void { this.framer.reset(); }
  dispose(): void { this.framer.dispose(); }
}
