// Layer 4, Bedrock: the model formats that come as AWS's binary event stream. The core frames the
// messages and checks both CRCs (assembly/eventstream.ts, EventStreamFramer); each event message's
// payload becomes one event of the stream the core's model reader reads (its JSON under the
// message's `:event-type`: `{"contentBlockDelta": {…}}`), so that the formats' descriptions, the
// quiet events, the text layer and the relay work on Bedrock's streams as on the others. An
// exception or error message is the provider's error; damage to the framing is an error of its
// own, at the damaged message's offset. Offsets in the errors are the binary stream's.
import { ES_MT_ERROR, ES_MT_EVENT, ES_MT_EXCEPTION } from '../core/generated/abi.js';
import { EventStreamError, EventStreamFramer, type FrameRecord } from '../frames/eventstream.js';
import { type ModelStreamErrorCode } from './errors.js';
import { compilePaths } from './paths.js';
import { ownProgram } from './plan.js';

const enc = /* @__PURE__ */ new TextEncoder();
const utf8 = /* @__PURE__ */ new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
const HEAD = /* @__PURE__ */ enc.encode('data: {');
const TAIL = /* @__PURE__ */ enc.encode('}\n\n');
const NEXT_LINE = /* @__PURE__ */ enc.encode('\ndata: ');
/** An event type longer than this is not one of a model's streams. */
const MAX_TYPE_BYTES = 256;
/** InvokeModelWithResponseStream: a chunk's payload, `{"bytes": base64}`. */
const CHUNK = /* @__PURE__ */ compilePaths(['bytes']);
const CHUNK_TYPE = /* @__PURE__ */ enc.encode('chunk');

/** The provider's error in an exception message, or the framing's damage: raised after the events before it. */
interface Failure { code: ModelStreamErrorCode; offset: number; message: string; providerMessage?: string; providerCode?: string }

export class Unframer {
  readonly framer: EventStreamFramer;
  /** Bytes of the binary stream consumed. */
  bytes = 0;
  /** An error made with the binary stream's offset already (not one of the events' offsets). */
  binaryError: Error | null = null;
  /** Bytes of events written for the reader before this push (its offsets), and where each event of this push begins in them and in the stream. */
  private eventsBase = 0;
  private eventAt: number[] = [];
  private frameAt: number[] = [];
  private out: Uint8Array = new Uint8Array(1024);
  private used = 0;

  /**
   * `invoke`: InvokeModelWithResponseStream, whose `chunk` events carry the model's own events in
   * base64 (`{"bytes": …}`), each decoded by the core into one event of the inner format; otherwise
   * ConverseStream, each event's payload under its name.
   */
  constructor(what: string, maxMessageBytes: number, private readonly invoke = false) {
    this.framer = new EventStreamFramer(what, maxMessageBytes);
  }

  /** The events of the chunk's whole messages, and the failure that stops the stream after them, if any. */
  unframe(chunk: Uint8Array): { events: Uint8Array; failure: Failure | null } {
    this.eventsBase += this.used;
    this.used = 0;
    this.eventAt.length = 0;
    this.frameAt.length = 0;
    let failure: Failure | null = null;
    const f = this.framer;
    try {
      f.frame(chunk, (r) => {
        if (failure === null) failure = this.message(r);
      });
    } catch (e) {
      if (!(e instanceof EventStreamError)) throw e;
      failure ??= damage(e);
    }
    this.bytes = f.bytesIn;
    return { events: this.out.subarray(0, this.used), failure };
  }

  /** One message: an event written for the reader, or the provider's error. */
  private message(r: FrameRecord): Failure | null {
    const mem = this.framer.memory;
    if (r.messageType === ES_MT_EVENT) {
      if (r.eventLength > MAX_TYPE_BYTES) {
        return { code: 'ERR_BAD_EVENT', offset: r.offset, message: `The message at byte offset ${r.offset} names an event type of ${r.eventLength} bytes` };
      }
      if (this.invoke) return this.chunk(r);
      const name = this.nameOf(mem, r.event, r.eventLength);
      this.eventAt.push(this.eventsBase + this.used);
      this.frameAt.push(r.offset);
      this.room(HEAD.length + name.length + 1 + r.payloadLength * NEXT_LINE.length + 2 + TAIL.length);
      this.put(HEAD);
      this.put(name);
      this.out[this.used++] = 0x3a; // :
      if (r.payloadLength === 0) this.put(enc.encode('{}'));
      else this.payload(mem, r.payload, r.payloadLength);
      this.put(TAIL);
      return null;
    }
    if (r.messageType === ES_MT_EXCEPTION || r.messageType === ES_MT_ERROR) {
      const type = r.eventLength !== 0 ? utf8.decode(mem.subarray(r.event, r.event + r.eventLength)) : undefined;
      let said: string | undefined = r.errorMessageLength !== 0 ? utf8.decode(mem.subarray(r.errorMessage, r.errorMessage + r.errorMessageLength)) : undefined;
      if (said === undefined) {
        try {
          const v = JSON.parse(utf8.decode(mem.subarray(r.payload, r.payload + r.payloadLength))) as { message?: unknown; Message?: unknown };
          said = typeof v.message === 'string' ? v.message : typeof v.Message === 'string' ? v.Message : undefined;
        } catch {
          said = undefined;
        }
      }
      const message = said ?? type ?? 'error';
      return {
        code: 'ERR_PROVIDER', offset: r.offset, providerMessage: message, providerCode: type,
        message: `The provider sent an error at byte offset ${r.offset}: ${message}${type !== undefined ? ` (${type})` : ''}`,
      };
    }
    return null; // (a message of no type a model stream has: skipped)
  }

  /** The last event type's bytes and its JSON string (a stream sends a few types, mostly the same one in a row). */
  private lastType: Uint8Array = new Uint8Array(0);
  private lastName: Uint8Array = new Uint8Array(0);

  /** An event type as a JSON string's bytes. */
  private nameOf(mem: Uint8Array, at: number, n: number): Uint8Array {
    const t = this.lastType;
    if (t.length === n) {
      let same = true;
      for (let i = 0; i < n; i++) if (mem[at + i] !== t[i]) { same = false; break; }
      if (same) return this.lastName;
    }
    this.lastType = mem.slice(at, at + n);
    return (this.lastName = enc.encode(JSON.stringify(utf8.decode(this.lastType))));
  }

  /** A chunk of InvokeModelWithResponseStream: its bytes, decoded from base64 in the core, are one event of the inner format. */
  private chunk(r: FrameRecord): Failure | null {
    const f = this.framer;
    let mem = f.memory;
    const isChunk = r.eventLength === CHUNK_TYPE.length && CHUNK_TYPE.every((b, i) => mem[r.event + i] === b);
    if (!isChunk) return null; // (an event of another type: none is a model's)
    const got = f.chunkOf(r, ownProgram(f.shared, 'bedrock chunk', CHUNK));
    if ('error' in got) return { code: 'ERR_BAD_EVENT', offset: r.offset, message: `The chunk at byte offset ${r.offset} is not one: ${got.error}` };
    mem = f.memory;
    this.eventAt.push(this.eventsBase + this.used);
    this.frameAt.push(r.offset);
    this.room(HEAD.length + got.len * NEXT_LINE.length + TAIL.length);
    this.put(HEAD.subarray(0, HEAD.length - 1)); // data: 
    this.payload(mem, got.ptr, got.len);
    this.put(TAIL.subarray(1));
    return null;
  }

  /** The payload as data lines: a line break in it (white space of its JSON, or a byte that makes it invalid) begins another `data:` line, as SSE joins them. */
  private payload(mem: Uint8Array, p: number, n: number): void {
    const end = p + n;
    let from = p;
    for (let i = p; i < end; i++) {
      const b = mem[i];
      if (b !== 0x0a && b !== 0x0d) continue;
      this.out.set(mem.subarray(from, i), this.used);
      this.used += i - from;
      this.put(NEXT_LINE);
      if (b === 0x0d && i + 1 < end && mem[i + 1] === 0x0a) i++;
      from = i + 1;
    }
    this.out.set(mem.subarray(from, end), this.used);
    this.used += end - from;
  }

  private put(b: Uint8Array): void {
    this.out.set(b, this.used);
    this.used += b.length;
  }

  private room(n: number): void {
    if (this.used + n <= this.out.length) return;
    const next = new Uint8Array(Math.max(this.out.length * 2, this.used + n));
    next.set(this.out.subarray(0, this.used));
    this.out = next;
  }

  /** An offset of the events the reader read (this push's) as the binary stream's: the first byte of the message it lies in; the events' end is the stream's. */
  offsetOf(at: number, eventsEnd: number): number {
    if (at >= eventsEnd) return this.bytes;
    let k = this.eventAt.length - 1;
    while (k > 0 && this.eventAt[k] > at) k--;
    return k >= 0 ? this.frameAt[k] : this.bytes;
  }

  reset(): void {
    this.framer.reset();
    this.bytes = 0;
    this.eventsBase = 0;
    this.used = 0;
    this.eventAt.length = 0;
    this.frameAt.length = 0;
    if (this.out.length > 65536) this.out = new Uint8Array(1024);
  }

  dispose(): void {
    this.framer.dispose();
  }
}

function damage(e: EventStreamError): Failure {
  const code: ModelStreamErrorCode = e.code === 'ERR_FRAME_TOO_LARGE' ? 'ERR_EVENT_TOO_LARGE' : e.code;
  return { code, offset: e.offset, message: e.message };
}
