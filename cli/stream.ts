// The text streams of the command: the library's ModelStream for the model formats, and a
// PlainStream (below) for plain SSE, NDJSON, lines and text.
export { ModelStream, ModelStreamError, type ModelReport } from 'seam-stream';

import {
  LineDecoder, NdjsonDecoder, SseParser, TextAssembler, TextRangeError, Utf8Decoder, type Citation, type FinalReport, type ToolCall,
} from 'seam-stream';
import type { PlainFormat } from './formats.js';

/** What decode reads text from: a ModelStream, or a PlainStream for the formats without a model. */
export interface TextStream {
  push(chunk: Uint8Array): string;
  flush(): string;
  finish(): FinalReport & { status: 'done' | 'truncated' | 'failed'; finishReason?: string; usage?: Record<string, unknown>; events: number };
  readonly status: 'open' | 'done' | 'truncated' | 'failed';
  readonly finishReason: string | undefined;
  readonly usage: Record<string, unknown> | undefined;
  readonly events: number;
  readonly heartbeats: number;
  /** A model stream's events that carried a part of the answer: not its keep-alives (Anthropic's pings), nor events that said none (`{}`, an envelope alone, an empty delta, the same usage again). */
  readonly progressEvents?: number;
  /** A model stream's reasoning, refusal, citations, client tool calls and the provider's own calls. */
  readonly reasoning?: string;
  readonly refusal?: string;
  readonly citations?: readonly Citation[];
  readonly toolCalls?: readonly ToolCall[];
  readonly serverToolCalls?: readonly ToolCall[];
}

/**
 * A read of plain text to a text layer: whole, or past its maxTextBytes its characters one by one,
 * so that the text stops at the character that passes the limit, whatever the reads. `took` gets
 * what each push commits. Null when all of it was taken; else the index in `text` of the character
 * that would pass the limit (nothing from it on was taken), with the text layer's error.
 */
export function pushPlainText(a: TextAssembler, text: string, took: (committed: string) => void): { at: number; error: TextRangeError } | null {
  try {
    took(a.push(text));
    return null;
  } catch (e) {
    if (!(e instanceof TextRangeError)) throw e;
  }
  let at = 0;
  for (const ch of text) {
    try {
      took(a.push(ch));
    } catch (e) {
      if (!(e instanceof TextRangeError)) throw e;
      return { at, error: e };
    }
    at += ch.length;
  }
  return null;
}

/** The end of a plain SSE stream inside an event: the same code a ModelStream gives. */
export class PlainTruncatedError extends Error {
  readonly code = 'ERR_STREAM_TRUNCATED' as const;
  constructor(message: string, readonly offset: number, readonly text: string) {
    super(message);
  }
}

export interface PlainOptions {
  format: PlainFormat;
  fatal: boolean;
  maxEventBytes?: number;
  maxLineBytes?: number;
  maxTextBytes?: number;
  normalize?: 'NFC' | false;
  eof?: 'error' | 'allow';
}

/**
 * The text of a stream that has no model: an SSE stream's event data, an NDJSON stream's values,
 * a stream's lines (each followed by a line feed), or the text itself; whole graphemes and NFC as
 * for a model. Plain SSE is complete when its last event was ended by a blank line.
 */
export class PlainStream implements TextStream {
  private readonly text: TextAssembler;
  private readonly frames: (chunk: Uint8Array | null) => string[];
  private readonly eof: 'error' | 'allow';
  private _status: TextStream['status'] = 'open';
  private _events = 0;
  private _heartbeats = 0;
  private bytes = 0;
  private out = '';
  private failure: unknown;
  private final: FinalReport | undefined;
  private sse?: SseParser;

  constructor(readonly options: PlainOptions) {
    this.text = new TextAssembler({ normalize: options.normalize ?? 'NFC', maxTextBytes: options.maxTextBytes });
    this.eof = options.eof ?? 'error';
    const { fatal } = options;
    switch (options.format) {
      case 'sse': {
        const p = (this.sse = new SseParser({ fatal, maxEventBytes: options.maxEventBytes, onComment: () => void this._heartbeats++ }));
        this.frames = (c) => (c ? p.push(c) : p.flush()).map((e) => `${e.data}\n`);
        break;
      }
      case 'ndjson': {
        const d = new NdjsonDecoder({ fatal, maxLineBytes: options.maxLineBytes });
        this.frames = (c) => (c ? d.push(c) : d.flush()).map((v) => `${JSON.stringify(v)}\n`);
        break;
      }
      case 'lines': {
        const d = new LineDecoder({ fatal, maxLineBytes: options.maxLineBytes });
        this.frames = (c) => (c ? d.push(c) : d.flush()).map((l) => `${l}\n`);
        break;
      }
      default: {
        const d = new Utf8Decoder({ fatal });
        this.frames = (c) => {
          const s = c ? d.push(c) : d.flush();
          return s ? [s] : [];
        };
      }
    }
  }

  get status(): TextStream['status'] { return this._status; }
  get finishReason(): string | undefined { return undefined; }
  get usage(): Record<string, unknown> | undefined { return undefined; }
  get events(): number { return this._events; }
  get heartbeats(): number { return this._heartbeats; }

  push(chunk: Uint8Array): string {
    if (this.failure !== undefined) throw this.failure;
    this.out = '';
    this.bytes += chunk.length;
    this.run(chunk);
    return this.out;
  }

  flush(): string {
    if (this.failure !== undefined) throw this.failure;
    if (this.final !== undefined) return '';
    this.out = '';
    this.run(null);
    const out = this.out + this.text.flush();
    this.final = this.text.finish();
    if (this.sse?.truncated) {
      this._status = 'truncated';
      if (this.eof === 'error') {
        throw new PlainTruncatedError(`the stream ended inside an event, without the blank line that ends it, after ${this.bytes} bytes: that event was not dispatched`, this.bytes, out);
      }
    } else this._status = 'done';
    return out;
  }

  finish(): ReturnType<TextStream['finish']> {
    if (this.final === undefined) {
      if (this.failure === undefined) {
        try {
          this.flush();
        } catch {
          /* the status says what happened */
        }
      }
      this.final ??= this.text.finish();
    }
    return { ...this.final, status: this._status === 'open' ? 'truncated' : this._status, events: this._events };
  }

  private run(chunk: Uint8Array | null): void {
    let frames: string[];
    let err: unknown;
    try {
      frames = this.frames(chunk);
    } catch (e) {
      const x = e as { events?: { data: string }[]; lines?: unknown[]; values?: unknown[]; text?: string; code?: string };
      err = e;
      if (this.options.format === 'sse') frames = (x.events ?? []).map((ev) => `${ev.data}\n`);
      else if (this.options.format === 'lines') frames = ((x.lines ?? []) as string[]).map((l) => `${l}\n`);
      else if (this.options.format === 'ndjson') frames = ((x.code === 'ERR_NDJSON_PARSE' ? x.values : x.lines) ?? []).map((v) => `${JSON.stringify(v)}\n`);
      else frames = x.text ? [x.text] : [];
    }
    try {
      for (const f of frames) {
        if (this.options.format !== 'text') {
          this._events++;
          this.out += this.text.push(f); // (a frame's text is taken whole)
          continue;
        }
        const refused = pushPlainText(this.text, f, (c) => {
          this.out += c;
        });
        if (refused !== null) throw refused.error;
      }
    } catch (e) {
      err = e;
    }
    if (err !== undefined) {
      this._status = 'failed';
      if (typeof err === 'object' && err !== null) Object.defineProperty(err, 'text', { value: this.out, enumerable: true, configurable: true });
      this.failure = err;
      throw err;
    }
  }
}
