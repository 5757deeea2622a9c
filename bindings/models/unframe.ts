// Layer 4, Bedrock: the model formats that come as AWS's binary event stream. The core frames the
// messages and checks both CRCs (assembly/eventstream.ts, EventStreamFramer); each event message's
// payload becomes one event of the stream the core's model reader reads (its JSON under the
// message's `:event-type`: `{"contentBlockDelta": {…}}`), so that the formats' descriptions, the
// quiet events, the text layer and the relay work on Bedrock's streams as on the others. An
// exception or error message is the provider's error; damage to the framing is an error of its
// own, at the damaged message's offset. Offsets in the errors are the binary stream's.
// ModelEventStreamDecoder gives the same reading message by message, for code that shows or checks
// a stream's messages (the command's `check` and `decode --events`).
import { ES_MAX_TYPE, ES_MT_ERROR, ES_MT_EVENT, ES_MT_EXCEPTION, ES_MT_NONE } from '../core/generated/abi.js';
import { checkOptions, oneOf } from '../core/options.js';
import {
  DEFAULT_MAX_MESSAGE_BYTES, EventStreamError, EventStreamFramer, type EventStreamMessage, type FrameRecord,
} from '../frames/eventstream.js';
import { MAX_LIMIT_BYTES, frameLimit } from '../frames/frame-stream.js';
import { type ModelStreamErrorCode } from './errors.js';
import { FORMATS, MODEL_FORMATS, type ModelFormat } from './formats/index.js';
import { compilePaths } from './paths.js';
import { ownProgram } from './plan.js';

const utf8 = /* @__PURE__ */ new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
/** The bytes of a message's prelude (its length, its headers' length, their CRC). */
const PRELUDE = 12;
/** InvokeModelWithResponseStream: a chunk's payload, `{"bytes": base64}`. */
const CHUNK = /* @__PURE__ */ compilePaths(['bytes']);

/** The provider's error in an exception message, or the framing's damage: raised after the events before it. */
interface Failure { code: ModelStreamErrorCode; offset: number; message: string; providerMessage?: string; providerCode?: string }

export class Unframer {
  readonly framer: EventStreamFramer;
  /** Bytes of the binary stream consumed. */
  bytes = 0;
  /** An error made with the binary stream's offset already (not one of the events' offsets). */
  binaryError: Error | null = null;
  /** Bytes of events written for the reader before this push (its offsets). */
  private eventsBase = 0;
  /**
   * The first message of the last unframe() that is the provider's error or not an event (its
   * failure), if any; the events of the messages after it are written too, for a stream whose
   * completion came before it (then it is not the answer, as nothing after the completion is).
   */
  failure: Failure | null = null;
  /** Bytes of the last unframe()'s events that came before `failure`'s message. */
  failureAt = 0;
  /** The framing's damage in the last unframe(), after all of its events: it stops the stream. */
  broken: Failure | null = null;
  /**
   * White space (or a BOM) before the stream's first other byte: its first 12 bytes (a prelude's),
   * held unframed until that byte says whether a JSON body (Converse's whole answer, an error body)
   * or the binary stream follows; `leadBytes` counts all of it. No 12 bytes of white space (a BOM
   * first, or part of one) are a prelude whose CRC holds (checked over every one of them), so that
   * the framer fails at the 12th byte of more, whatever follows: the rest need not be kept.
   */
  private lead: Uint8Array | null = null;
  leadBytes = 0;
  private readonly onBatch = (n: number, base: number): void => this.batch(n, base);
  private readonly onRecord = (r: FrameRecord): void => this.failed(this.message(r));

  /**
   * `invoke`: InvokeModelWithResponseStream, whose `chunk` events carry the model's own events in
   * base64 (`{"bytes": …}`), each decoded by the core into one event of the inner format; otherwise
   * ConverseStream, each event's payload under its name, written by the core.
   */
  constructor(what: string, maxMessageBytes: number, private readonly invoke = false) {
    this.framer = new EventStreamFramer(what, maxMessageBytes);
  }

  /**
   * Frames the chunk: the bytes of its whole messages' events, which lie in core memory at
   * `eventsPtr`; `failure` says what stops the stream after them, if anything.
   */
  unframe(chunk: Uint8Array): number {
    const f = this.next();
    f.clearEvents();
    try {
      if (this.invoke) f.frame(chunk, this.onRecord);
      else f.frame(chunk, this.onRecord, undefined, this.onBatch);
    } catch (e) {
      this.damaged(e);
    }
    this.bytes = f.bytesIn;
    return f.events.len;
  }

  /** A new read: the last read's events counted in the offsets, no failure yet. */
  private next(): EventStreamFramer {
    const f = this.framer;
    this.eventsBase += f.events.len;
    this.failure = null;
    this.broken = null;
    return f;
  }

  /** The framing's damage as the failure after the events before it (any other error passes). */
  private damaged(e: unknown): void {
    if (!(e instanceof EventStreamError)) throw e;
    this.broken ??= damage(e);
  }

  /** A message's failure, if it is the first of this read: where the events before it end. */
  private failed(m: Failure | null): void {
    if (m === null || this.failure !== null) return;
    this.failure = m;
    this.failureAt = this.framer.events.len;
  }

  /**
   * As unframe(), for a chunk that fits the input window, with the model stream's read in the same
   * core call when the chunk's messages are all events (EventStreamFramer.frameRead; for
   * InvokeModelWithResponseStream, when the core decodes each chunk as chunk() would): returns the
   * core's status, ESM_READ when the events were read (their bytes in `framer.events`).
   */
  unframeRead(chunk: Uint8Array, st: number, mode: number, framing: number, prog: number, t: number, choice: number, read: number): number {
    const f = this.next();
    let r = 0;
    try {
      r = f.frameRead(chunk, this.onRecord, this.invoke ? undefined : this.onBatch, this.invoke ? chunkProgram(f) : 0, st, mode, framing, prog, t, choice, read);
    } catch (e) {
      this.damaged(e);
    }
    this.bytes = f.bytesIn;
    return r;
  }

  /** Where the events of the last unframe() lie in core memory (until the next call of this stream's framer). */
  get eventsPtr(): number {
    return this.framer.events.ptr;
  }

  /** ConverseStream: a call's records, written by the core; an exception or an event type too long is read here (`failed`). */
  private batch(n: number, base: number): void {
    const f = this.framer;
    let k = 0;
    while (k < n) {
      k = f.writeEvents(k, base);
      if (k < n) this.failed(this.message(f.recordAt(k++, base)));
    }
  }

  /** One message the core left to this reader: the provider's error, or (InvokeModelWithResponseStream) a chunk, written as one event. */
  private message(r: FrameRecord): Failure | null {
    const m = messageOf(this.framer, r, this.invoke);
    if (m === null || 'code' in m) return m;
    this.framer.writeData(m.ptr, m.len, r.offset);
    return null;
  }

  /** An offset of the events the reader read (this push's) as the binary stream's: the first byte of the message it lies in; the events' end is the stream's. */
  offsetOf(at: number, eventsEnd: number): number {
    if (at >= eventsEnd) return this.bytes;
    const ev = this.framer.events;
    if (ev.mapN === 0) return this.bytes;
    const mem = this.framer.memory;
    const map = new Float64Array(mem.buffer, ev.map, ev.mapN * 2);
    let k = ev.mapN - 1;
    while (k > 0 && this.eventsBase + map[2 * k] > at) k--;
    return map[2 * k + 1];
  }

  reset(): void {
    this.framer.reset();
    this.framer.clearEvents();
    this.bytes = 0;
    this.eventsBase = 0;
    this.leadBytes = 0;
  }

  /** White space before the stream's first other byte, held (see `lead`). */
  hold(chunk: Uint8Array): void {
    const k = Math.min(chunk.length, PRELUDE - this.leadBytes);
    if (k > 0) (this.lead ??= new Uint8Array(PRELUDE)).set(chunk.subarray(0, k), this.leadBytes);
    this.leadBytes += chunk.length;
  }

  /** The white space held, to be framed as the binary stream's first bytes (its first 12 of them); none held after. */
  takeLead(): Uint8Array {
    const b = this.lead!.slice(0, Math.min(this.leadBytes, PRELUDE));
    this.leadBytes = 0;
    return b;
  }

  dispose(): void {
    this.framer.dispose();
  }

  /** The model stream ended: the framer's record goes back with the stream's own (reset() makes a new one). */
  retire(): void {
    this.framer.ended(); // (its event buffers go with its record: nothing to empty first)
  }
}

/**
 * What a message the core leaves to JavaScript is, for every reader of it: the provider's error
 * (an exception or error message), an event that is not one (an event type too long; for
 * InvokeModelWithResponseStream, a chunk that is not one), or a chunk's bytes, decoded from base64
 * by the core in place (where they lie in core memory); null for a message no model reads (a
 * ConverseStream event, which the core writes itself; an event or message of another type).
 */
function messageOf(f: EventStreamFramer, r: FrameRecord, invoke: boolean): Failure | { ptr: number; len: number } | null {
  if (r.messageType === ES_MT_EVENT) {
    if (r.eventLength > ES_MAX_TYPE) {
      return { code: 'ERR_BAD_EVENT', offset: r.offset, message: `The message at byte offset ${r.offset} names an event type of ${r.eventLength} bytes` };
    }
    if (!invoke || !f.isChunk(r)) return null; // (an event of another type than chunk: none is a model's)
    const got = f.chunkOf(r, chunkProgram(f));
    if ('error' in got) return { code: 'ERR_BAD_EVENT', offset: r.offset, message: `The chunk at byte offset ${r.offset} is not one: ${got.error}` };
    return got;
  }
  if (r.messageType === ES_MT_EXCEPTION || r.messageType === ES_MT_ERROR) {
    const mem = f.memory;
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
  // a message of no :message-type, or of another than event, exception and error: AWS's SDKs
  // refuse it ("Unrecognizable event type"), and an event sent without its type would be lost
  const what = r.messageType === ES_MT_NONE ? 'has no :message-type header' : 'has a :message-type other than event, exception and error';
  return { code: 'ERR_BAD_EVENT', offset: r.offset, message: `The message at byte offset ${r.offset} ${what}` };
}

/** Where the path program of a chunk's `bytes` lies in the framer's core. */
function chunkProgram(f: EventStreamFramer): number {
  return ownProgram(f.shared, 'bedrock chunk', CHUNK);
}

/** One message of a Bedrock format's stream, with what the format reads of it ({@link ModelEventStreamDecoder}). */
export interface ModelEventStreamMessage extends EventStreamMessage {
  /**
   * The event the format reads of it, as a ModelStream of the format reads it (what
   * ModelEventReader.read takes): ConverseStream's payload under its `:event-type`
   * (`{"contentBlockDelta": {…}}`), an InvokeModelWithResponseStream chunk's bytes decoded from
   * base64; '' for a message it does not read (an exception or error, an event of another type).
   */
  data: string;
  /**
   * What stops a ModelStream of the format at this message, before its completion: the
   * provider's error (`ERR_PROVIDER`: an exception or error message, with its message and its type
   * or code), or a message that is not an event of the format (`ERR_BAD_EVENT`: a chunk whose
   * payload is not `{"bytes": base64}`, an event type too long, a message of no `:message-type` or
   * of another than event, exception and error). `message` is the stream's error message. After
   * the stream's completion (Bedrock's messageStop, Claude's message_stop) a ModelStream passes
   * such a message over, as every format passes over what follows its completion; the message
   * still has its `error` here.
   */
  error?: { code: ModelStreamErrorCode; message: string; providerMessage?: string; providerCode?: string };
}

/** Options of {@link ModelEventStreamDecoder}. */
export interface ModelEventStreamDecoderOptions {
  /** A format that comes as AWS's event stream. */
  format: 'bedrock' | 'bedrock-invoke';
  /** As EventStreamDecoder's (a ModelStream's `maxEventBytes`). @defaultValue 16 MiB */
  maxMessageBytes?: number;
}

/** The formats that come as AWS's event stream. */
const EVENTSTREAM_FORMATS = /* @__PURE__ */ MODEL_FORMATS.filter((f) => FORMATS[f].framing === 'eventstream');

/**
 * A Bedrock format's stream (AWS's binary event stream) message by message, each read as a
 * {@link ModelStream} of the format reads it: `push(chunk)` gives the messages the chunk completed,
 * each with its headers, its payload, the event the format reads of it (`data`: a chunk's base64
 * decoded by the same core code) and what would stop the stream there (`error`: the provider's
 * error, a chunk that is not one; what the event itself says, a stop reason that says the turn
 * failed among it, is its `data`'s reading by ModelEventReader), so that a tool showing or
 * checking a capture's messages says what the stream says of each. Damage to the framing is an EventStreamError as
 * EventStreamDecoder's, with the messages before it; `flush()` ends the stream.
 */
export class ModelEventStreamDecoder {
  readonly format: 'bedrock' | 'bedrock-invoke';
  private readonly framer: EventStreamFramer;
  private readonly invoke: boolean;

  constructor(options: ModelEventStreamDecoderOptions) {
    if (options === undefined) throw new TypeError("ModelEventStreamDecoder: options are required: new ModelEventStreamDecoder({ format: 'bedrock' })");
    checkOptions(options, 'ModelEventStreamDecoder', ['format', 'maxMessageBytes']);
    this.format = oneOf(options.format, 'format', 'ModelEventStreamDecoder', EVENTSTREAM_FORMATS, undefined) as 'bedrock' | 'bedrock-invoke';
    const max = frameLimit(options.maxMessageBytes, 'maxMessageBytes', 'ModelEventStreamDecoder', DEFAULT_MAX_MESSAGE_BYTES);
    this.framer = new EventStreamFramer('ModelEventStreamDecoder', Math.min(max, MAX_LIMIT_BYTES));
    this.invoke = FORMATS[this.format].invoke === true;
  }

  push(chunk: Uint8Array): ModelEventStreamMessage[] {
    if (!(chunk instanceof Uint8Array)) throw new TypeError('ModelEventStreamDecoder.push() expects a Uint8Array (or Buffer) of bytes');
    const out: ModelEventStreamMessage[] = [];
    const f = this.framer;
    f.frame(chunk, (r) => out.push(this.message(r)), () => out);
    return out;
  }

  /** End of stream: throws ERR_STREAM_TRUNCATED when it ended inside a message. */
  flush(): void {
    this.framer.end();
  }

  reset(): void { this.framer.reset(); }
  dispose(): void { this.framer.dispose(); }

  /** As EventStreamDecoder's: the limit, the bytes pushed so far, and the bytes held of a message not yet whole. */
  get maxMessageBytes(): number { return this.framer.maxMessageBytes; }
  get bytesIn(): number { return this.framer.bytesIn; }
  get pendingBytes(): number { return this.framer.pendingBytes; }

  private message(r: FrameRecord): ModelEventStreamMessage {
    const f = this.framer;
    const headers = f.headersOf(r);
    const payload = f.memory.slice(r.payload, r.payload + r.payloadLength); // (before a chunk is decoded in place)
    const m: ModelEventStreamMessage = { headers, payload, offset: r.offset, length: r.length, data: '' };
    const read = messageOf(f, r, this.invoke);
    if (read !== null && 'code' in read) {
      const { code, message, providerMessage, providerCode } = read;
      m.error = code === 'ERR_PROVIDER' ? { code, message, providerMessage, providerCode } : { code, message };
    } else if (read !== null) {
      m.data = utf8.decode(f.memory.subarray(read.ptr, read.ptr + read.len));
    } else if (r.messageType === ES_MT_EVENT && !this.invoke) {
      // ConverseStream: the payload under its type, as the core writes it for the stream (esEvents:
      // the type a JSON string, its invalid UTF-8 as U+FFFD; an empty payload `{}`)
      const type = utf8.decode(f.memory.subarray(r.event, r.event + r.eventLength));
      m.data = `{${JSON.stringify(type)}:${r.payloadLength === 0 ? '{}' : utf8.decode(payload)}}`;
    }
    return m;
  }
}

function damage(e: EventStreamError): Failure {
  const code: ModelStreamErrorCode = e.code === 'ERR_FRAME_TOO_LARGE' ? 'ERR_EVENT_TOO_LARGE' : e.code;
  return { code, offset: e.offset, message: e.message };
}
