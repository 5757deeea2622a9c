// STAND-IN for the library's ModelStream (API.md, "Model streams"), which is not built yet.
//
// It has ModelStream's surface (push, flush, finish, status, finishReason, usage; errors
// ModelStreamError with code, offset, text) and is written over the layers that exist:
// SseParser / LineDecoder, JSON.parse, TextAssembler. The command imports it only through
// cli/stream.ts; when the library exports ModelStream, that file's one import changes to
// 'seam-stream' and this file is deleted.
//
// Beyond API.md, the command uses (and asks the library for):
//   - `events` and `heartbeats`: counts so far, for the status line ("heartbeats are not progress");
//   - `maxTextBytes`, passed to the TextAssembler;
//   - every error thrown by push/flush carries `text`, the text committed by that call before the
//     error (a Utf8DecodeError's `text` is then that, not the raw decoded bytes), and `finish()`
//     works after an error (the report of the text committed so far, the held cluster included).
import {
  LineDecoder, SseLimitError, SseParser, TextAssembler, Utf8DecodeError, Utf8Decoder,
  type FinalReport, type SseEvent,
} from 'seam-stream';
import { COMPLETION, errorMessage, frameJson, framingOf, interpret, isErrorBody, type ModelFormat, type Reading } from './formats.js';
import { LineStarts, SseBlocks } from './scan.js';

export type { ModelFormat } from './formats.js';

export type ModelStatus = 'open' | 'done' | 'truncated' | 'failed';

export interface ModelStreamOptions {
  format: ModelFormat;
  fatal?: boolean;
  maxEventBytes?: number;
  normalize?: 'NFC' | false;
  choice?: number;
  eof?: 'error' | 'allow';
  /** Not in API.md: the TextAssembler's limit. */
  maxTextBytes?: number;
}

export interface ModelReport extends FinalReport {
  status: 'done' | 'truncated' | 'failed';
  finishReason?: string;
  usage?: Record<string, unknown>;
  events: number;
}

export class ModelStreamError extends Error {
  readonly code: 'ERR_STREAM_TRUNCATED' | 'ERR_PROVIDER' | 'ERR_BAD_EVENT';
  readonly offset: number;
  readonly text: string;

  constructor(code: ModelStreamError['code'], message: string, offset: number, text: string) {
    super(message);
    this.name = 'ModelStreamError';
    this.code = code;
    this.offset = offset;
    this.text = text;
  }
}

const DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024;

/** Whether a byte at absolute offset `at` is only space before the first frame (or the BOM). */
function isLead(b: number, at: number): boolean {
  return b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d || (at < 3 && b === [0xef, 0xbb, 0xbf][at]);
}

export class ModelStream {
  readonly format: ModelFormat;
  readonly fatal: boolean;
  readonly maxEventBytes: number;
  private readonly choice: number;
  private readonly eof: 'error' | 'allow';
  private readonly normalize: 'NFC' | false;
  private readonly text: TextAssembler;

  private mode: 'start' | 'frames' | 'body' = 'start';
  private sse?: SseParser;
  private blocks?: SseBlocks;
  private lines?: LineDecoder;
  private lineStarts?: LineStarts;
  private body?: { start: number; decoder: Utf8Decoder; parts: string[]; bytes: number };

  private _status: ModelStatus = 'open';
  private _finishReason: string | undefined;
  private _usage: Record<string, unknown> | undefined;
  private _events = 0;
  private _heartbeats = 0;
  private bytes = 0;
  private committedUnits = 0;
  /** Text committed by the current call. */
  private out = '';
  private failure: unknown;
  private final: FinalReport | undefined;

  constructor(options: ModelStreamOptions) {
    this.format = options.format;
    this.fatal = options.fatal ?? true;
    this.maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    this.choice = options.choice ?? 0;
    this.eof = options.eof ?? 'error';
    this.normalize = options.normalize ?? 'NFC';
    this.text = new TextAssembler({ normalize: this.normalize, maxTextBytes: options.maxTextBytes });
    if (framingOf(this.format) === 'sse') {
      this.sse = new SseParser({ fatal: this.fatal, maxEventBytes: this.maxEventBytes, onComment: () => void this._heartbeats++ });
      this.blocks = new SseBlocks();
    } else {
      this.lines = new LineDecoder({ fatal: this.fatal, maxLineBytes: this.maxEventBytes });
      this.lineStarts = new LineStarts();
    }
  }

  get status(): ModelStatus { return this._status; }
  get finishReason(): string | undefined { return this._finishReason; }
  get usage(): Record<string, unknown> | undefined { return this._usage; }
  /** Not in API.md: provider events (or lines) read so far. */
  get events(): number { return this._events; }
  /** Not in API.md: keep-alives read so far (SSE comments, Anthropic ping events). */
  get heartbeats(): number { return this._heartbeats; }

  /** The text committed by this chunk: whole graphemes, NFC. */
  push(chunk: Uint8Array): string {
    if (this.failure !== undefined) throw this.failure;
    if (this.final !== undefined) throw new TypeError('ModelStream.push() after flush()');
    this.out = '';
    const base = this.bytes;
    this.bytes += chunk.length;
    try {
      let rest = chunk;
      if (this.mode === 'start') {
        let k = 0;
        while (k < chunk.length && isLead(chunk[k], base + k)) k++;
        if (k < chunk.length) {
          const b = chunk[k];
          if ((b === 0x7b || b === 0x5b) && this.format !== 'ollama') {
            // not an event stream: a JSON body (an error, as providers answer a failed request)
            this.mode = 'body';
            this.body = { start: base + k, decoder: new Utf8Decoder({ fatal: this.fatal }), parts: [], bytes: 0 };
            rest = chunk.subarray(k);
          } else this.mode = 'frames';
        }
      }
      if (this.mode === 'body') this.bodyPush(rest);
      else this.framesPush(chunk);
      return this.out;
    } catch (e) {
      throw this.fail(e);
    }
  }

  /** End of stream: the held rest of the text. Throws ERR_STREAM_TRUNCATED without the completion (eof: 'error'). */
  flush(): string {
    if (this.failure !== undefined) throw this.failure;
    if (this.final !== undefined) return '';
    this.out = '';
    try {
      if (this.mode === 'body') this.bodyEnd();
      else this.framesEnd();
    } catch (e) {
      throw this.fail(e);
    }
    this.final = this.text.finish();
    const rest = this.final.text.slice(this.committedUnits);
    this.committedUnits = this.final.text.length;
    const out = this.out + rest;
    if (this._status !== 'done') {
      this._status = 'truncated';
      if (this.eof === 'error') {
        throw new ModelStreamError(
          'ERR_STREAM_TRUNCATED',
          `the stream ended without its completion (${COMPLETION[this.format]}) after ${this.bytes} bytes: the text is incomplete`,
          this.bytes, out,
        );
      }
    }
    return out;
  }

  finish(options?: { expected?: string }): ModelReport {
    if (this.final === undefined) {
      if (this.failure === undefined) {
        try {
          this.flush();
        } catch {
          /* truncated: the status says so */
        }
      }
      this.final ??= this.text.finish();
    }
    const r: ModelReport = { ...this.final, status: this._status === 'open' ? 'truncated' : this._status, events: this._events };
    if (this._finishReason !== undefined) r.finishReason = this._finishReason;
    if (this._usage !== undefined) r.usage = this._usage;
    if (options?.expected !== undefined) {
      r.mismatch = (this.normalize === 'NFC' ? options.expected.normalize('NFC') : options.expected) !== r.text;
    }
    return r;
  }

  // ---- frames ----------------------------------------------------------------------------------

  private framesPush(chunk: Uint8Array): void {
    if (this.sse) {
      this.blocks!.push(chunk);
      let events: SseEvent[];
      let err: unknown;
      try {
        events = this.sse.push(chunk);
      } catch (e) {
        events = ((e as { events?: SseEvent[] }).events as SseEvent[] | undefined) ?? [];
        err = e;
      }
      for (const ev of events) this.sseEvent(ev, this.blocks!.nextEvent());
      if (err !== undefined) throw err;
    } else {
      this.lineStarts!.push(chunk);
      let lines: string[];
      let err: unknown;
      try {
        lines = this.lines!.push(chunk);
      } catch (e) {
        lines = ((e as { lines?: string[] }).lines as string[] | undefined) ?? [];
        err = e;
      }
      for (const l of lines) this.line(l);
      if (err !== undefined) throw err;
    }
  }

  private framesEnd(): void {
    if (this.sse) {
      this.blocks!.end();
      let events: SseEvent[];
      let err: unknown;
      try {
        events = this.sse.flush();
      } catch (e) {
        events = ((e as { events?: SseEvent[] }).events as SseEvent[] | undefined) ?? [];
        err = e;
      }
      for (const ev of events) this.sseEvent(ev, this.blocks!.nextEvent());
      if (err !== undefined) throw err;
    } else {
      this.lineStarts!.end();
      let lines: string[];
      let err: unknown;
      try {
        lines = this.lines!.flush();
      } catch (e) {
        lines = ((e as { lines?: string[] }).lines as string[] | undefined) ?? [];
        err = e;
      }
      for (const l of lines) this.line(l);
      if (err !== undefined) throw err;
    }
  }

  private sseEvent(ev: SseEvent, offset: number): void {
    this._events++;
    if (this._status === 'done') return;
    const f = frameJson(this.format, ev.data);
    if ('skip' in f) return;
    if ('done' in f) {
      this._status = 'done';
      return;
    }
    let v: unknown;
    try {
      v = JSON.parse(f.json);
    } catch (e) {
      throw new ModelStreamError('ERR_BAD_EVENT', `invalid JSON in the event at byte offset ${offset}: ${(e as Error).message}`, offset, this.out);
    }
    this.apply(interpret(this.format, ev.type, v, this.choice), offset);
  }

  private line(l: string): void {
    const number = this.lineStarts!.line;
    const offset = this.lineStarts!.next();
    const f = frameJson(this.format, l);
    if ('skip' in f) return;
    this._events++;
    if (this._status === 'done') return;
    if ('done' in f) {
      this._status = 'done';
      return;
    }
    let v: unknown;
    try {
      v = JSON.parse(f.json);
    } catch (e) {
      throw new ModelStreamError('ERR_BAD_EVENT', `invalid JSON on line ${number} (byte offset ${offset}): ${(e as Error).message}`, offset, this.out);
    }
    this.apply(interpret(this.format, 'message', v, this.choice), offset);
  }

  private apply(r: Reading, offset: number): void {
    if (r.heartbeat) this._heartbeats++;
    if (r.usage !== undefined) this._usage = { ...this._usage, ...r.usage };
    if (r.finishReason !== undefined) this._finishReason = r.finishReason;
    if (r.text !== undefined && r.text !== '') this.commit(r.text);
    if (r.error !== undefined) {
      throw new ModelStreamError('ERR_PROVIDER', `the provider sent an error at byte offset ${offset}: ${r.error}`, offset, this.out);
    }
    if (r.done) this._status = 'done';
  }

  private commit(delta: string): void {
    const c = this.text.push(delta);
    this.out += c;
    this.committedUnits += c.length;
  }

  // ---- a JSON body instead of a stream -----------------------------------------------------------

  private bodyPush(bytes: Uint8Array): void {
    const b = this.body!;
    b.bytes += bytes.length;
    if (b.bytes > this.maxEventBytes) throw new SseLimitError(b.start, this.maxEventBytes, []);
    try {
      b.parts.push(b.decoder.push(bytes));
    } catch (e) {
      throw this.bodyUtf8(e);
    }
  }

  private bodyEnd(): void {
    const b = this.body!;
    let text: string;
    try {
      text = b.parts.join('') + b.decoder.flush();
    } catch (e) {
      throw this.bodyUtf8(e);
    }
    this._events++;
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      throw new ModelStreamError('ERR_BAD_EVENT', `the input is neither an event stream nor a JSON body: invalid JSON at byte offset ${b.start}: ${(e as Error).message}`, b.start, '');
    }
    if (isErrorBody(v)) {
      throw new ModelStreamError('ERR_PROVIDER', `the provider answered with an error body: ${errorMessage(v)}`, b.start, '');
    }
    throw new ModelStreamError('ERR_BAD_EVENT', `the input is a JSON document at byte offset ${b.start}, not a ${this.format} event stream`, b.start, '');
  }

  /** A body decoder's error, with the stream's offset. */
  private bodyUtf8(e: unknown): unknown {
    if (!(e instanceof Utf8DecodeError)) return e;
    return new Utf8DecodeError(e.code, e.offset + this.body!.start, '', e.bytes);
  }

  // ---- failure -----------------------------------------------------------------------------------

  private fail(e: unknown): unknown {
    this._status = 'failed';
    if (e !== null && typeof e === 'object' && !(e instanceof ModelStreamError)) {
      // the text committed by this call before the error travels with it
      Object.defineProperty(e, 'text', { value: this.out, enumerable: true, configurable: true });
    }
    this.failure = e;
    return e;
  }
}
