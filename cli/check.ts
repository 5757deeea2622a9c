// `seam-stream check [FILE|-]`: validates a capture without printing its text. It reads on past
// what would stop `decode` (framing continues with U+FFFD past invalid UTF-8) to list every
// problem with its byte offset, and counts events, bytes and graphemes.
import {
  EventStreamError, LineDecoder, ModelEventReader, ModelEventStreamDecoder, SseParser, TextAssembler, TextRangeError, Utf8DecodeError, Utf8Validator,
  JSON_MAX_DEPTH, describeFormat, jsonTooDeep, wholeAnswerBudget,
  type ModelEventStreamDecoderOptions, type ModelEventStreamMessage, type SseEvent,
} from 'seam-stream';
import type { Values } from './args.js';
import { EXIT, InputError, exitCodeOf } from './errors.js';
import { completionOf, framingOf, hasTrailer, isModelFormat, type Format, type PlainFormat } from './formats.js';
import { AnswerBody, type HttpHead, failedAnswer, failedStatus, headIsSplit, withoutHttpHead } from './http.js';
import { exitWith, openInput } from './io.js';
import { limitsOf, type Limits } from './options.js';
import { LineScanner, LineStarts, SseBlocks, Utf8Errors, type SseLine } from './scan.js';
import { SNIFF_BYTES, htmlPage, htmlSaid, sniff, utf16 } from './sniff.js';
import { plural } from './status.js';
import { pushPlainText } from './stream.js';


export type ProblemKind = 'utf8' | 'unterminated' | 'completion' | 'limit' | 'provider' | 'json' | 'retry' | 'field' | 'empty' | 'arguments' | 'frame' | 'coding';

export interface Problem {
  kind: ProblemKind;
  offset: number;
  line?: number;
  message: string;
  /**
   * In what follows the provider's completion, which decode does not take for the answer (it
   * stops reading there, or, for a format that sends more after it, passes such messages over):
   * listed, but not what decode would stop at.
   */
  afterCompletion?: true;
}

const EXIT_OF: Record<ProblemKind, number> = {
  utf8: EXIT.UTF8, unterminated: EXIT.TRUNCATED, completion: EXIT.TRUNCATED, empty: EXIT.TRUNCATED, limit: EXIT.LIMIT,
  provider: EXIT.PROVIDER, json: EXIT.BAD_EVENT, retry: EXIT.WARNINGS, field: EXIT.WARNINGS,
  // AWS's event stream: a CRC that does not match, lengths that cannot be, a bad header
  frame: EXIT.BAD_EVENT,
  // a model that wrote a call's arguments as something else than one JSON value: the stream is whole, the call is not usable
  arguments: EXIT.WARNINGS,
  // the body's chunked coding or compression (its HTTP head's) broken: decode stops there, as at an input it cannot read
  coding: EXIT.USAGE,
};

const KNOWN_FIELDS = new Set(['data', 'event', 'id', 'retry']);
const dec = new TextDecoder();
const enc = new TextEncoder();

export interface CheckResult {
  input: string;
  format: Format | null;
  sniffed: boolean;
  clean: boolean;
  exitCode: number;
  bytes: number;
  lines: number;
  events: number;
  heartbeats: number;
  graphemes: number;
  utf8Bytes: number;
  completed: boolean | null;
  finishReason: string | null;
  /** A model format's client tool calls, and those whose arguments are not one JSON value (null for other formats). */
  toolCalls: number | null;
  invalidArguments: number | null;
  problemCount: number;
  problems: Problem[];
  /** The HTTP response head split off the input's start (curl -i): the counts and offsets are the body's. */
  httpHead?: HttpHead;
  /** With --format, when that format could not read the input: the model format its first bytes look like. */
  looksLike?: Format;
}

/** The checks, fed chunk by chunk. */
export class Checker {
  readonly problems: Problem[] = [];
  problemCount = 0;
  bytes = 0;
  events = 0;
  heartbeats = 0;
  done = false;
  /** The provider ended the turn with a finish reason that says it failed (the provider's error: the stream has its end, not its completion). */
  private turnFailed = false;
  /** Where the event (or line, or message) that completed the stream ended; -1 before. */
  completedEnd = -1;
  finishReason: string | undefined;
  /** Tool calls ended so far, and those among them with invalid arguments. */
  callsEnded = 0;
  invalidArguments = 0;
  private readonly framing: ReturnType<typeof framingOf>;
  /** A model format's events, read as the library reads them. */
  private readonly reader: ModelEventReader | undefined;
  private readonly text = new TextCounts();
  /**
   * decode's text limit: a text layer fed as decode's is (each event's text, each frame of a plain
   * format, each read of plain text), until the piece that would pass --max-text-bytes; null
   * after it (decode stops there).
   */
  private limiter: TextAssembler | null;
  /** Plain text: the UTF-8 bytes of the text read so far (a piece's characters' offsets). */
  private textBytes = 0;
  private readonly validator = new Utf8Validator({ ignoreBOM: true });
  private utf8Js: Utf8Errors | undefined;
  private tail = new Uint8Array(0);
  private sse?: SseParser;
  /** AWS's event stream (Bedrock): every message and both its CRCs, each read as the library reads it. */
  private es?: ModelEventStreamDecoder;
  private blocks?: SseBlocks;
  private lineDec?: LineDecoder;
  /**
   * The framing as decode's stream does it, strict, until its first error: whether a limit or
   * invalid UTF-8 stops decode first, where one event or line holds both (which byte passes the
   * limit is the library's own count of an event's bytes), and where.
   */
  private strict?: SseParser | LineDecoder;
  private strictError: { code: string; offset: number } | null = null;
  private bodyBytes = 0;
  /** The format reads on after its completion (Bedrock's metadata). */
  private readonly trailer: boolean;
  /** Reads of only white space (or a BOM) before the first other byte, which says whether a body follows. */
  private startHeld: Uint8Array[] = [];
  /** The input ended inside a character (the lenient framing made it a U+FFFD at the end). */
  private endsInsideChar = false;
  private lineStarts?: LineStarts;
  /** Plain text: its lines, counted (the other framings count theirs as they frame them). */
  private textLines?: LineScanner;
  private framingStopped = false;
  /** AWS's event stream ended inside a message: framing stopped at the end, where decode still commits the text held back. */
  private cutInMessage = false;
  private mode: 'start' | 'frames' | 'body' = 'start';
  private body: string[] = [];
  private bodyStart = 0;
  private lastError = -1;

  constructor(readonly format: Format, private readonly limits: Limits, private readonly choice: number, private readonly maxListed: number) {
    this.framing = framingOf(format);
    this.trailer = hasTrailer(format);
    this.limiter = new TextAssembler({ maxTextBytes: limits.maxTextBytes });
    if (isModelFormat(format)) this.reader = new ModelEventReader({ format, choice });
    if (this.framing === 'eventstream') {
      this.es = new ModelEventStreamDecoder({ format: format as ModelEventStreamDecoderOptions['format'], maxMessageBytes: limits.maxEventBytes });
    } else if (this.framing === 'sse') {
      this.sse = new SseParser({ fatal: false, maxEventBytes: limits.maxEventBytes, onComment: () => void this.heartbeats++ });
      this.strict = new SseParser({ maxEventBytes: limits.maxEventBytes, onComment: () => {} }); // (comments count, as decode's stream counts them)
      this.blocks = new SseBlocks((l) => this.sseLine(l));
    } else if (this.framing === 'text') {
      this.textLines = new LineScanner(() => {});
    } else {
      this.lineDec = new LineDecoder({ fatal: false, maxLineBytes: limits.maxLineBytes });
      this.strict = new LineDecoder({ maxLineBytes: limits.maxLineBytes });
      this.lineStarts = new LineStarts();
    }
  }

  get lines(): number {
    return (this.blocks?.scanner ?? this.lineStarts?.scanner ?? this.textLines)?.lines ?? 0;
  }

  /**
   * A problem: counted; listed when it is among the first `maxListed` by offset (not by the order
   * they were found in, which depends on the reads: a read's UTF-8 is checked before its events);
   * and, when it would stop decode, kept for the exit code if it may be the first to. `stopsAt`:
   * where decode would stop at it, when that is not its offset: the end of its event (decode
   * reads an event when it is whole, after any bytes in it that are not UTF-8), or the end of the
   * stream (an event, a line or a character it ends inside).
   */
  private problem(p: Problem, stopsAt = p.offset): void {
    this.problemCount++;
    const list = this.problems;
    if (list.length < this.maxListed || (list.length !== 0 && before(p, list[list.length - 1]))) {
      let i = list.length;
      while (i > 0 && before(p, list[i - 1])) i--;
      list.splice(i, 0, p);
      if (list.length > this.maxListed) list.pop();
    }
    if (EXIT_OF[p.kind] !== EXIT.WARNINGS) this.stopping(p.kind, p.offset, stopsAt);
  }

  /**
   * The problems that would stop decode and may be the first to, whatever the completion turns
   * out to be: none that an earlier one (by offset, which decides whether it follows the
   * completion) stops decode before. Framing damage and limits of a format read on after its
   * completion stop it anywhere: of those, the first.
   */
  private readonly firstStops: { kind: ProblemKind; offset: number; stop: number }[] = [];
  private anywhere: { kind: ProblemKind; offset: number; stop: number } | null = null;

  private stopping(kind: ProblemKind, offset: number, stop: number): void {
    const c = { kind, offset, stop };
    if (this.stopsAnywhere(kind)) {
      if (this.anywhere === null || stop < this.anywhere.stop) this.anywhere = c;
      return;
    }
    const f = this.firstStops;
    if (f.some((x) => x.offset <= offset && x.stop <= stop)) return;
    for (let i = f.length - 1; i >= 0; i--) if (offset <= f[i].offset && stop <= f[i].stop) f.splice(i, 1);
    f.push(c);
  }

  /** The exit code: the first problem that would stop decode, else 8 when there are problems (tolerated ones), else 0. */
  exitCode(): number {
    let first = this.anywhere;
    for (const c of this.firstStops) {
      if (this.completedEnd >= 0 && c.offset >= this.completedEnd) continue; // (after the completion)
      if (first === null || c.stop < first.stop || (c.stop === first.stop && c.offset < first.offset)) first = c;
    }
    if (first !== null) return EXIT_OF[first.kind];
    return this.problemCount !== 0 ? EXIT.WARNINGS : EXIT.OK;
  }

  /** An answer whose HTTP status is not a success (its head at the input's start): the provider's error, at the body's start. */
  failedAnswer(message: string): void {
    this.problem({ kind: 'provider', offset: 0, message });
  }

  /** The body's coding broke (its HTTP head's chunked coding or compression): a problem where the decoded body stops. */
  codingBroken(message: string): void {
    // (decode stops at it, before the input's end: an event or a character the body ends inside is not said)
    this.problem({ kind: 'coding', offset: this.bytes, message }, this.bytes - 0.5);
  }

  /** An input of no bytes: a problem at its start. */
  empty(name: string): void {
    this.problem({ kind: 'empty', offset: 0, message: `${name} is empty (0 bytes)` });
  }

  push(chunk: Uint8Array): void {
    const base = this.bytes;
    this.bytes += chunk.length;
    if (this.es === undefined) this.utf8(chunk, base); // (a binary stream's UTF-8 is its payloads', read as events)
    if (this.mode === 'start' && isModelFormat(this.format) && this.framing !== 'ndjson' && this.framing !== 'lines') {
      // a JSON object instead of an event stream (a provider's error answer), as the library
      // sniffs one: a line format's error is a line of it
      let k = 0;
      while (k < chunk.length && (chunk[k] === 0x20 || chunk[k] === 0x09 || chunk[k] === 0x0a || chunk[k] === 0x0d || (base + k < 3 && chunk[k] === [0xef, 0xbb, 0xbf][base + k]))) k++;
      if (k < chunk.length) {
        // (`[`: a JSON array, where the format's provider answers one: Gemini without alt=sse)
        if (chunk[k] === 0x7b || (chunk[k] === 0x5b && describeFormat(this.format).arrayBody)) {
          // the body from its `{` or `[` (what came before, white space or a BOM, is no part of it)
          this.mode = 'body';
          this.bodyStart = base + k;
          if (this.es !== undefined) {
            // (AWS's event stream: a JSON body in its place is UTF-8 text, checked as decode checks
            // it, from the input's start; its later reads below)
            let at = 0;
            for (const c of this.startHeld) {
              this.utf8(c, at);
              at += c.length;
            }
            this.utf8(chunk, base);
          }
          this.startHeld = [];
          chunk = chunk.subarray(k);
          this.bodyRead(chunk);
          return;
        } else this.framesFromStart();
      } else if (base + chunk.length <= SNIFF_BYTES) {
        // only white space (or a BOM) so far: held until the first other byte says what follows
        this.startHeld.push(chunk);
        return;
      } else this.framesFromStart();
    }
    if (this.mode === 'body') {
      if (this.es !== undefined) this.utf8(chunk, base);
      this.bodyRead(chunk);
      return;
    }
    this.framesOf(chunk);
  }

  private bodyRead(chunk: Uint8Array): void {
    // (decode keeps a body up to --max-event-bytes, as an event)
    if (this.bodyBytes <= this.limits.maxEventBytes) {
      this.bodyBytes += chunk.length;
      if (this.bodyBytes <= this.limits.maxEventBytes) this.body.push(dec.decode(chunk, { stream: true }));
    }
  }

  /** No body: the reads held at the start go to the framing. */
  private framesFromStart(): void {
    this.mode = 'frames';
    for (const c of this.startHeld.splice(0)) this.framesOf(c);
  }

  private framesOf(chunk: Uint8Array): void {
    this.strictFrames(chunk);
    this.frames(chunk);
  }

  private strictFrames(chunk: Uint8Array | null): void {
    const p = this.strict;
    if (p === undefined || this.strictError !== null) return;
    try {
      if (chunk) p.push(chunk);
      else p.flush();
    } catch (e) {
      const x = e as { code?: string; offset?: number };
      this.strictError = { code: x.code ?? '', offset: x.offset ?? this.bytes };
      p.dispose();
    }
  }

  end(): void {
    this.utf8End();
    if (this.mode === 'body') return this.bodyEnd();
    this.framesFromStart();
    this.strictFrames(null);
    this.frames(null);
    // (a stream cut inside its last message ends as any other: decode commits the text held back first)
    if (this.framing !== 'text' && (!this.framingStopped || this.cutInMessage)) this.heldText();
    if (this.framing === 'sse' && !this.framingStopped && this.sse!.truncated) {
      const at = this.blocks!.blockStart >= 0 ? this.blocks!.blockStart : this.bytes;
      this.problem({ kind: 'unterminated', offset: at, message: `the stream ends inside an event that starts at byte ${at}: without the blank line that ends it, it is not dispatched` }, this.bytes);
    }
    if (isModelFormat(this.format) && !this.done && !this.turnFailed && !this.framingStopped) {
      this.problem({ kind: 'completion', offset: this.bytes, message: `the stream ends without its completion (${completionOf(this.format)})` });
    }
  }

  /**
   * Marks the problems that lie after the completion's event and would not stop decode: every one
   * where the command stops reading at the completion; where the format sends more after it
   * (Bedrock's metadata, read to the end), all but damage to the framing and limits, which stop
   * a stream anywhere.
   */
  markAfterCompletion(): void {
    if (this.completedEnd < 0) return;
    for (const p of this.problems) {
      if (p.offset >= this.completedEnd && !this.stopsAnywhere(p.kind)) p.afterCompletion = true;
    }
  }

  /** Framing damage and limits of a format read on after its completion (Bedrock's) stop a stream anywhere, after the completion too. */
  private stopsAnywhere(kind: ProblemKind): boolean {
    return (kind === 'frame' || kind === 'limit') && this.trailer;
  }

  graphemes(): { graphemes: number; utf8Bytes: number } {
    return this.report ?? { graphemes: 0, utf8Bytes: 0 };
  }

  private report: { graphemes: number; utf8Bytes: number } | undefined;

  // ---- UTF-8: every invalid sequence ------------------------------------------------------------

  private utf8(chunk: Uint8Array, base: number): void {
    if (this.utf8Js) return this.utf8Js.push(chunk, base);
    try {
      this.validator.push(chunk);
    } catch (e) {
      if (!(e instanceof Utf8DecodeError)) throw e;
      // from the first error on, every sequence in JavaScript
      this.utf8Js = new Utf8Errors((offset, truncated) => this.utf8Problem(offset, truncated));
      const tailBase = base - this.tail.length;
      if (e.offset < base) {
        this.utf8Js.push(this.tail.subarray(e.offset - tailBase), e.offset);
        this.utf8Js.push(chunk, base);
      } else this.utf8Js.push(chunk.subarray(e.offset - base), e.offset);
      return;
    }
    if (chunk.length >= 3) this.tail = chunk.slice(-3);
    else {
      const j = new Uint8Array(this.tail.length + chunk.length);
      j.set(this.tail);
      j.set(chunk, this.tail.length);
      this.tail = j.slice(-3);
    }
  }

  private utf8End(): void {
    if (this.utf8Js) return this.utf8Js.end();
    try {
      this.validator.flush();
    } catch (e) {
      if (!(e instanceof Utf8DecodeError)) throw e;
      this.utf8Problem(e.offset, true);
    }
  }

  private utf8Problem(offset: number, truncated: boolean): void {
    if (offset === this.lastError) return;
    this.lastError = offset;
    // (a model stream that ends inside a character is a stream cut short, as decode reads it)
    if (truncated) this.endsInsideChar = true;
    if (truncated && isModelFormat(this.format)) {
      this.problem({ kind: 'unterminated', offset, message: `the input ends inside a character that starts at byte ${offset}` }, this.bytes);
    } else this.problem({ kind: 'utf8', offset, message: truncated ? `the input ends inside a character that starts at byte ${offset}` : `invalid UTF-8 at byte ${offset}` });
  }

  // ---- frames -----------------------------------------------------------------------------------

  private frames(chunk: Uint8Array | null): void {
    if (this.framing === 'text') {
      // (its lines are counted, as a check of any other framing counts them: it said 0)
      if (chunk) this.textLines!.push(chunk);
      else this.textLines!.end();
      this.plainText(chunk ? dec.decode(chunk, { stream: true }) : dec.decode());
      if (chunk === null) this.heldText();
      return;
    }
    if (this.framingStopped) {
      // (no event is framed after a limit; the lines are still counted and their fields checked,
      // as those of the read that passed the limit were)
      const scan = this.blocks ?? this.lineStarts;
      if (scan !== undefined) {
        if (chunk) scan.push(chunk);
        else scan.end();
        if (this.blocks) this.blocks.dataStarts.length = this.blocks.dataEnds.length = 0;
        else this.lineStarts!.starts.length = this.lineStarts!.ends.length = 0;
      }
      return;
    }
    if (this.es) {
      try {
        if (chunk) for (const m of this.es.push(chunk)) this.esMessage(m);
        else this.es.flush();
      } catch (e) {
        if (!(e instanceof EventStreamError)) throw e;
        for (const m of e.messages as ModelEventStreamMessage[]) this.esMessage(m);
        this.framingStopped = true;
        const kind: ProblemKind = e.code === 'ERR_STREAM_TRUNCATED' ? 'unterminated' : e.code === 'ERR_FRAME_TOO_LARGE' ? 'limit' : 'frame';
        this.cutInMessage = kind === 'unterminated';
        this.problem({ kind, offset: e.offset, message: `${e.message}${kind === 'frame' ? ': framing stopped there' : ''}` }, kind === 'unterminated' ? this.bytes : e.offset);
      }
    } else if (this.sse) {
      if (chunk) this.blocks!.push(chunk);
      else this.blocks!.end();
      let events: SseEvent[];
      try {
        events = chunk ? this.sse.push(chunk) : this.sse.flush();
      } catch (e) {
        events = (e as { events?: SseEvent[] }).events ?? [];
        for (const ev of events) this.sseEvent(ev, this.blocks!.nextEvent());
        return this.limit(e);
      }
      for (const ev of events) this.sseEvent(ev, this.blocks!.nextEvent());
    } else {
      if (chunk) this.lineStarts!.push(chunk);
      else this.lineStarts!.end();
      let lines: string[];
      try {
        lines = chunk ? this.lineDec!.push(chunk) : this.lineDec!.flush();
      } catch (e) {
        for (const l of ((e as { lines?: string[] }).lines ?? [])) this.line(l, false);
        return this.limit(e);
      }
      // (what flush gives is a last line without its line end; decode reads it without the
      // character the stream ended inside, which the lenient framing made a U+FFFD)
      for (const l of lines) this.line(chunk === null && this.endsInsideChar && l.endsWith('\uFFFD') ? l.slice(0, -1) : l, chunk === null);
    }
  }

  /**
   * A message of AWS's event stream, as the library reads it: its event, read; or what stops a
   * stream there (the provider's exception or error; a chunk that is not one), a problem at it.
   */
  private esMessage(m: ModelEventStreamMessage): void {
    const e = m.error;
    const end = m.offset + m.length;
    if (e !== undefined) {
      this.events++;
      if (e.code === 'ERR_PROVIDER') {
        this.problem({ kind: 'provider', offset: m.offset, message: `the provider sent an error: ${e.providerMessage}${e.providerCode !== undefined ? ` (${e.providerCode})` : ''}` }, end);
      } else this.problem({ kind: 'json', offset: m.offset, message: e.message }, end);
      return;
    }
    if (m.data === '') return;
    this.events++;
    this.payloadUtf8(m);
    this.modelFrame(m.data, m.offset, end, undefined, false);
  }

  /**
   * AWS's event stream: a message's event is UTF-8 (ConverseStream's payload; an
   * InvokeModelWithResponseStream chunk's bytes, decoded from base64), which the message's data
   * has read leniently; decode stops at the message whose event is not, at its first byte (check
   * said such a stream was clean).
   */
  private payloadUtf8(m: ModelEventStreamMessage): void {
    const invoke = this.format === 'bedrock-invoke';
    let bytes = m.payload;
    if (invoke) {
      try {
        bytes = Buffer.from(String((JSON.parse(dec.decode(m.payload)) as { bytes?: unknown }).bytes), 'base64');
      } catch {
        return; // (not a chunk: the stream's error says it)
      }
    }
    const v = new Utf8Validator();
    try {
      v.push(bytes);
      v.flush();
    } catch (e) {
      if (!(e instanceof Utf8DecodeError)) throw e;
      // (the payload's first byte: before its CRC, the message's last 4 bytes)
      const at = invoke ? `at byte ${e.offset} of its chunk's bytes (decoded from base64)` : `at byte ${m.offset + m.length - 4 - m.payload.length + e.offset}`;
      this.problem({ kind: 'utf8', offset: m.offset, message: `invalid UTF-8 in the event of the message at byte ${m.offset}, ${at}` });
    } finally {
      v.dispose();
    }
  }

  private limit(e: unknown): void {
    const code = exitCodeOf(e);
    if (code !== EXIT.LIMIT) throw e;
    this.framingStopped = true;
    const offset = (e as { offset?: number }).offset ?? this.bytes;
    // (decode stops at the limit unless bytes that are not UTF-8 come before the byte that passes it)
    const first = this.strictError;
    const stop = first !== null && first.code !== (e as { code?: string }).code ? Math.max(offset, first.offset + 0.5) : offset;
    this.problem({ kind: 'limit', offset, message: `${(e as Error).message}: framing stopped there` }, stop);
  }

  /** A piece of the text, as decode's text layer takes it: the text of the event or line at `offset`, which ends at `end`. */
  private textPiece(s: string, offset: number, end: number): void {
    if (!s) return;
    this.text.push(s);
    if (this.passes((l) => l.push(s))) {
      this.problem({ kind: 'limit', offset, message: `the text of the event or line at byte ${offset} would pass --max-text-bytes (${this.limits.maxTextBytes} bytes): decode stops before it` }, end);
    }
  }

  /** A read of plain text: past the limit, the character that passes it, as decode's plain stream finds it (pushPlainText). */
  private plainText(s: string): void {
    if (!s) return;
    this.text.push(s);
    const before = this.textBytes;
    this.textBytes += Buffer.byteLength(s);
    const l = this.limiter;
    if (l === null) return;
    const refused = pushPlainText(l, s, () => {});
    if (refused === null) return;
    this.limiter = null;
    const at = before + Buffer.byteLength(s.slice(0, refused.at));
    this.problem({ kind: 'limit', offset: at, message: `the text would pass --max-text-bytes (${this.limits.maxTextBytes} bytes) at byte ${at}: decode stops there` });
  }

  /** The text held back, committed as decode commits it at the completion, at `offset` (the completion's event, which ends at `end`), or at the end. */
  private heldText(offset = this.bytes, end = this.bytes - 0.25): void {
    if (this.passes((l) => l.flush())) {
      // (at the end decode commits it before it says the stream was cut short: it stops there first)
      this.problem({ kind: 'limit', offset, message: `the text held back ${offset === this.bytes ? 'at the end' : `until the completion at byte ${offset}`} would pass --max-text-bytes (${this.limits.maxTextBytes} bytes): decode stops there` }, end);
    }
  }

  /** Feeds decode's text layer; true when that passes --max-text-bytes (decode stops there, and the layer is given up). */
  private passes(feed: (l: TextAssembler) => unknown): boolean {
    const l = this.limiter;
    if (l === null) return false;
    try {
      feed(l);
      return false;
    } catch (e) {
      if (!(e instanceof TextRangeError)) throw e;
      this.limiter = null;
      return true;
    }
  }

  private sseLine(l: SseLine): void {
    if (l.comment) return;
    if (l.longName) {
      this.problem({ kind: 'field', offset: l.start, message: `unknown field starting ${JSON.stringify(l.field.slice(0, 20))}… (ignored by clients)` });
      return;
    }
    if (!KNOWN_FIELDS.has(l.field)) {
      this.problem({ kind: 'field', offset: l.start, message: `unknown field ${JSON.stringify(l.field)} (ignored by clients)` });
    } else if (l.field === 'retry' && !/^\d+$/.test(l.value)) {
      this.problem({ kind: 'retry', offset: l.start, message: `retry ${JSON.stringify(l.value)} is not all ASCII digits (ignored by clients)` });
    }
  }

  private sseEvent(ev: SseEvent, [offset, end]: [number, number]): void {
    this.events++;
    if (!isModelFormat(this.format)) {
      this.textPiece(`${ev.data}\n`, offset, end);
      return;
    }
    this.modelFrame(ev.data, offset, end, undefined, false);
  }

  private line(l: string, last: boolean): void {
    const number = this.lineStarts!.line;
    const [offset, end] = this.lineStarts!.next();
    if (this.format === 'lines') {
      this.events++;
      this.textPiece(`${l}\n`, offset, end);
      return;
    }
    if (this.format === 'ndjson') {
      if (l.trim() === '') return;
      this.events++;
      try {
        this.textPiece(`${JSON.stringify(JSON.parse(l))}\n`, offset, end);
      } catch (e) {
        this.problem({ kind: 'json', offset, line: number, message: `invalid JSON on line ${number}: ${(e as Error).message}` }, end);
      }
      return;
    }
    this.modelFrame(l, offset, end, number, last);
  }

  /**
   * An event (or line, or message) at `offset` that ends at `end`: what it says, read as the
   * library reads it. `last`: a line the stream ended inside (a JSON text it cut short there is a
   * stream cut short, as decode reads it).
   */
  private modelFrame(data: string, offset: number, end: number, line: number | undefined, last: boolean): void {
    const r = this.reader!.read(data);
    if (r.blank) return;
    if (line !== undefined) this.events++;
    if (r.invalid !== undefined) {
      const where = line !== undefined ? `on line ${line}` : `in the event at byte ${offset}`;
      if (last && r.invalid.json && r.invalid.offset >= Buffer.byteLength(data.replace(/^data: ?/, ''))) {
        this.problem({ kind: 'unterminated', offset, line, message: `the stream ends inside ${where.replace('on ', '')}, its JSON cut short` }, this.bytes);
      } else {
        this.problem({ kind: 'json', offset, line, message: `${r.invalid.json ? 'invalid JSON' : `not an event of the ${this.format} format`} ${where}: ${r.invalid.message}` }, end);
      }
      return;
    }
    if (r.heartbeat) this.heartbeats++;
    // after the completion (or a turn that failed) nothing is the answer: its text is not counted,
    // its finish reason not taken
    const after = this.done || this.turnFailed;
    if (r.finishReason !== undefined && !after) this.finishReason = r.finishReason;
    if (r.text && !after) this.textPiece(r.text, offset, end);
    if (r.error !== undefined) {
      this.problem({ kind: 'provider', offset, line, message: `the provider sent an error: ${described(r.error)}` }, end);
      if (r.finishReason !== undefined && !after) this.turnFailed = true;
    }
    // (decode stops there: exit 4)
    if (r.limit !== undefined && !after) this.problem({ kind: 'limit', offset, line, message: r.limit.message }, end);
    if (r.done && !after) {
      this.heldText(offset, end);
      this.done = true;
      this.completedEnd = end;
    }
    this.calls(offset, line);
  }

  get toolCalls(): number {
    return this.reader?.toolCalls.length ?? 0;
  }

  /** The calls the event ended: one whose arguments are not one JSON value is a problem at the event. */
  private calls(offset: number, line: number | undefined): void {
    const calls = this.reader!.toolCalls;
    let ended = 0;
    for (const c of calls) if (c.done) ended++;
    if (ended === this.callsEnded) return;
    this.callsEnded = ended;
    let bad = 0;
    for (const c of calls) {
      if (c.valid !== false) continue;
      if (++bad <= this.invalidArguments) continue;
      this.problem({ kind: 'arguments', offset, line, message: `tool call ${c.index} (${JSON.stringify(c.name)}${c.id ? `, id ${c.id}` : ''}) ended with arguments that are not one JSON value` });
    }
    this.invalidArguments = bad;
  }

  private bodyEnd(): void {
    this.events = 1;
    if (this.bodyBytes > this.limits.maxEventBytes) {
      this.problem({ kind: 'limit', offset: this.bodyStart, message: `the input is a JSON body larger than --max-event-bytes (${this.limits.maxEventBytes} bytes)` });
      return;
    }
    const text = this.body.join('') + dec.decode();
    // (nested deeper than seam's JSON reader reads an event: where decode stops, at that bracket;
    // writing such an answer's events overflowed JavaScript's stack, an internal error)
    const deep = jsonTooDeep(enc.encode(text));
    if (deep >= 0) {
      this.problem({ kind: 'json', offset: this.bodyStart + deep, message: `the input is a JSON body nested deeper than ${JSON_MAX_DEPTH} levels` });
      return;
    }
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      this.problem({ kind: 'json', offset: this.bodyStart, message: `the input is neither an event stream nor a JSON body: ${(e as Error).message}` });
      return;
    }
    const facts = describeFormat(this.format as Exclude<Format, PlainFormat>);
    // (an answer with its error beside its output, a failed Responses response, is an answer: its stream says its error)
    // (within what decode reads of them: 4 × --max-event-bytes and 1 MiB, before they are written)
    const most = wholeAnswerBudget(this.limits.maxEventBytes);
    const whole = facts.wholeAnswerEvents(v, most);
    if (whole === null) {
      this.problem({ kind: 'limit', offset: this.bodyStart, message: `the whole answer would be read as events of more than ${most} bytes (4 × --max-event-bytes and 1 MiB): decode stops there` });
      return;
    }
    if (whole !== undefined) {
      // a whole answer (asked without streaming): read as the events of its stream, each at the body
      this.events = 0;
      for (const e of whole) {
        this.events++;
        this.modelFrame(e.data, this.bodyStart, this.bytes, undefined, false);
      }
      this.heldText();
      if (!this.done && !this.turnFailed) this.problem({ kind: 'completion', offset: this.bytes, message: `the answer ends without its completion (${completionOf(this.format)})` });
      return;
    }
    const err = facts.errorOfBody(v);
    if (err !== undefined) this.problem({ kind: 'provider', offset: this.bodyStart, message: `the provider answered with an error body: ${described(err)}` });
    else if (Array.isArray(v) && facts.arrayBodyNote !== undefined) this.problem({ kind: 'json', offset: this.bodyStart, message: `the input is a JSON array (${facts.arrayBodyNote}), not a ${this.format} event stream` });
    else this.problem({ kind: 'json', offset: this.bodyStart, message: `the input is a JSON document, not a ${this.format} event stream` });
  }

  finishCounts(): void {
    const r = this.text.finish();
    this.report = { graphemes: r.graphemes, utf8Bytes: r.utf8Bytes };
  }
}

/** UTF-16 units of text a counting text layer takes before its counts are taken and a new one goes on. */
const COUNT_UNITS = 16 * 1024 * 1024;

/**
 * The graphemes and UTF-8 bytes of a text pushed piece by piece, as a TextAssembler counts them,
 * without keeping the text: one layer kept it all (check of a capture with more than 512 Mi UTF-16
 * units of text failed, "Invalid string length", exit 1, after taking twice its size). Every
 * COUNT_UNITS the layer's counts are taken, less those of the text it held back (the last
 * cluster, from a boundary), which a new layer goes on from.
 */
class TextCounts {
  private layer = new TextAssembler({ maxTextBytes: Infinity });
  private units = 0;
  private graphemes = 0;
  private utf8Bytes = 0;

  push(s: string): void {
    this.layer.push(s);
    this.units += s.length;
    if (this.units >= COUNT_UNITS) this.next();
  }

  private next(): void {
    const held = this.layer.pending;
    const r = this.layer.finish();
    this.graphemes += r.graphemes;
    this.utf8Bytes += r.utf8Bytes;
    this.layer = new TextAssembler({ maxTextBytes: Infinity });
    this.units = held.length;
    if (held === '') return;
    // (the held text, counted alone as the finish above counted it, is the next layer's)
    const alone = new TextAssembler({ maxTextBytes: Infinity });
    alone.push(held);
    const h = alone.finish();
    this.graphemes -= h.graphemes;
    this.utf8Bytes -= h.utf8Bytes;
    this.layer.push(held);
  }

  finish(): { graphemes: number; utf8Bytes: number } {
    const r = this.layer.finish();
    return { graphemes: this.graphemes + r.graphemes, utf8Bytes: this.utf8Bytes + r.utf8Bytes };
  }
}

/** The kinds in the order a list shows problems at one offset. */
const KIND_ORDER: readonly ProblemKind[] = ['empty', 'utf8', 'frame', 'limit', 'field', 'retry', 'json', 'provider', 'arguments', 'coding', 'unterminated', 'completion'];

/** Whether problem a comes before b in the list: by offset, then by kind. */
function before(a: Problem, b: Problem): boolean {
  return a.offset !== b.offset ? a.offset < b.offset : KIND_ORDER.indexOf(a.kind) < KIND_ORDER.indexOf(b.kind);
}

/** A provider's error as one line: its message, then its type or code. */
function described(e: { message: string; detail?: string }): string {
  return e.detail !== undefined && e.detail !== e.message ? `${e.message} (${e.detail})` : e.message;
}

export async function check(values: Values, positionals: string[]): Promise<void> {
  const limits = limitsOf(values);
  const maxListed = (values['max-problems'] as number | undefined) ?? 50;
  const choice = (values.choice as number | undefined) ?? 0;
  const input = openInput(positionals[0]);
  let format = values.format as Format | undefined;
  const sniffed = format === undefined;
  let checker: Checker | undefined = format ? new Checker(format, limits, choice, maxListed) : undefined;
  const held: Uint8Array[] = [];
  let heldLen = 0;
  let total = 0;
  let head: HttpHead | undefined;
  const chunks = headIsSplit(format) ? withoutHttpHead(input.chunks, (h) => void (head = h)) : input.chunks;
  // an answer whose status is not a success, or an HTML page: its body (up to --max-event-bytes), not a stream
  let answer: AnswerBody | undefined;
  let html: string | undefined;
  const keep = (c: Uint8Array) => (answer ??= new AnswerBody(limits.maxEventBytes)).keep(c);
  /** The format sniffed from what is held: an HTML page's bytes are kept as the answer instead. */
  const sniffed_ = (f: Format | 'empty' | undefined): void => {
    const joined = Buffer.concat(held, heldLen);
    const title = f === undefined || f === 'text' ? htmlPage(joined) : undefined;
    if (title !== undefined) {
      html = title;
      for (const c of held.splice(0)) keep(c);
      return;
    }
    format = f === undefined || f === 'empty' ? 'text' : f;
    checker = new Checker(format, limits, choice, maxListed);
    for (const c of held.splice(0)) checker.push(c);
  };
  // the first bytes, to say what the input looks like when it cannot be read (another format, UTF-16)
  const first: Uint8Array[] = [];
  let firstLen = 0;
  // (the body's chunked coding or compression broken: a problem where its decoded bytes stop, the
  // problems before it listed, as decode stops there)
  let broken: string | undefined;
  const read = async function* (): AsyncGenerator<Uint8Array> {
    try {
      yield* chunks;
    } catch (e) {
      if (!(e instanceof InputError) || head?.undone === undefined || (!head.undone.chunked && head.undone.encoding === '')) throw e;
      broken = e.message;
    }
  };
  for await (const chunk of read()) {
    if (firstLen < SNIFF_BYTES) {
      first.push(chunk);
      firstLen += chunk.length;
    }
    total += chunk.length;
    if (answer !== undefined || failedStatus(head)) {
      keep(chunk);
      continue;
    }
    if (checker) {
      checker.push(chunk);
      continue;
    }
    held.push(chunk);
    heldLen += chunk.length;
    const f = sniff(Buffer.concat(held, heldLen), false);
    if (f === undefined && heldLen < SNIFF_BYTES) continue;
    sniffed_(f);
  }
  let empty = false;
  if (answer === undefined && !failedStatus(head) && !checker) {
    const f = sniff(Buffer.concat(held, heldLen), true);
    empty = f === 'empty';
    sniffed_(f);
  }
  if (answer !== undefined || failedStatus(head)) {
    const body = answer === undefined ? '' : answer.end();
    checker ??= new Checker(format ?? 'text', limits, choice, maxListed);
    checker.bytes = total;
    if (broken !== undefined) checker.codingBroken(broken);
    checker.failedAnswer(failedStatus(head) ? failedAnswer(head!, body, format) : `the input is ${htmlSaid(html ?? '')} (--format text reads it as text)`);
    checker.finishCounts();
  } else {
    if (broken !== undefined) checker!.codingBroken(broken);
    checker!.end();
    checker!.markAfterCompletion();
    checker!.finishCounts();
    if (empty || (sniffed && total === 0)) checker!.empty(head !== undefined ? `the body after the HTTP response head of ${input.name}` : input.name);
  }
  checker = checker!;
  const problems = checker.problems;
  const exitCode = checker.exitCode();
  const counts = checker.graphemes();
  const result: CheckResult = {
    input: input.name, format: format ?? null, sniffed, clean: checker.problemCount === 0, exitCode,
    bytes: checker.bytes, lines: checker.lines, events: checker.events, heartbeats: checker.heartbeats,
    graphemes: counts.graphemes, utf8Bytes: counts.utf8Bytes,
    completed: isModelFormat(format!) ? checker.done : null, finishReason: checker.finishReason ?? null,
    toolCalls: isModelFormat(format!) ? checker.toolCalls : null, invalidArguments: isModelFormat(format!) ? checker.invalidArguments : null,
    problemCount: checker.problemCount, problems,
  };
  if (head !== undefined) result.httpHead = head;
  const p0 = problems[0];
  const wide = p0?.kind === 'utf8' && p0.offset === 0 ? utf16(Buffer.concat(first, firstLen)) : undefined;
  if (wide !== undefined) p0.message += wide;
  if (!sniffed && answer === undefined && !failedStatus(head) && firstLen !== 0) {
    const failed = ([EXIT.UTF8, EXIT.TRUNCATED, EXIT.BAD_EVENT] as number[]).includes(exitCode);
    const nothing = exitCode === EXIT.OK && isModelFormat(format!) && counts.graphemes === 0 && checker.toolCalls === 0;
    const f = failed || nothing ? sniff(Buffer.concat(first, firstLen), true) : undefined;
    if (f !== undefined && f !== 'empty' && f !== format && isModelFormat(f)) result.looksLike = f;
  }
  process.stdout.write(values.json === true ? `${JSON.stringify(result)}\n` : humanCheck(result));
  exitWith(exitCode);
}

export function humanCheck(r: CheckResult): string {
  const h = r.httpHead;
  const undone = [h?.undone?.chunked ? 'its chunked coding' : '', h?.undone?.encoding ? `its ${h.undone.encoding} compression` : ''].filter(Boolean).join(' and ');
  const head = h !== undefined ? ` after an HTTP response head (${h.statusLine}; ${plural(h.bytes, 'byte')}, skipped: the counts and offsets are the body's${undone ? `, ${undone} undone` : ''})` : '';
  let s = `${r.input}: ${r.format ?? 'no stream'}${r.sniffed && r.format !== null ? ' (sniffed)' : ''}${head}, ${plural(r.bytes, 'byte')}, ${plural(r.lines, 'line')}, `
    + `${plural(r.events, 'event')}, ${plural(r.heartbeats, 'heartbeat')}, ${plural(r.graphemes, 'grapheme')} of text`
    + `${r.toolCalls ? `, ${plural(r.toolCalls, 'tool call')}${r.invalidArguments ? ` (${r.invalidArguments} with invalid arguments)` : ''}` : ''}`
    + `${r.completed === true ? ', completed' : ''}${r.finishReason ? ` (finish reason ${JSON.stringify(r.finishReason)})` : ''}\n`;
  const hint = r.looksLike !== undefined ? `the input looks like ${r.looksLike}, not ${r.format}: try --format ${r.looksLike} (or leave --format out: it is then sniffed)\n` : '';
  if (r.clean) return `${s}clean\n${hint}`;
  s += `${plural(r.problemCount, 'problem')}${r.problems.length < r.problemCount ? ` (the first ${r.problems.length} listed)` : ''}:\n`;
  // (not Math.max(...list): with --max-problems past some 100,000 listed, its arguments overflowed the stack)
  const w = r.problems.reduce((most, p) => Math.max(most, String(p.offset).length), 0);
  for (const p of r.problems) s += `  byte ${String(p.offset).padStart(w)}  ${p.message}${p.afterCompletion ? ' (after the completion: decode does not take it for the answer)' : ''}\n`;
  return s + hint + `exit code ${r.exitCode}\n`;
}
