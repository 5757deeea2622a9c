// `seam-stream decode [FILE|-]`: a captured or live stream to its text (or its events), printed
// as it commits; logs and errors on standard error only.
import {
  EventStreamError, LineDecoder, ModelEventReader, ModelPartReader, type ModelPart, ModelEventStreamDecoder, NdjsonDecoder, SseParser, TextAssembler,
  type ModelEventStreamDecoderOptions, type ModelEventStreamMessage,
} from 'seam-stream';
import type { Values } from './args.js';
import { EXIT, UsageError, describeError, exitCodeOf } from './errors.js';
import { framingOf, hasTrailer, isModelFormat, turnFailed, type Format } from './formats.js';
import { AnswerBody, type HttpHead, failedAnswer, failedStatus, headIsSplit, headNote, withoutHttpHead } from './http.js';
import { Output, checkSavable, exitWith, openInput, saveAtomically, type Input } from './io.js';
import { limitsOf, type Limits } from './options.js';
import { LineStarts, SseBlocks } from './scan.js';
import { SNIFF_BYTES, htmlPage, htmlSaid, sniff, utf16 } from './sniff.js';
import { PartPrinter } from './parts.js';
import { JsonBody } from './body.js';
import { StatusLine, formatSeconds, plural } from './status.js';
import { ModelStream, ModelStreamError, PlainStream, type TextStream } from './stream.js';
import type { Citation, Media, ToolCall } from 'seam-stream';


interface DecodeOptions {
  format: Format | undefined;
  events: boolean;
  parts: boolean;
  report: boolean;
  json: boolean;
  save: string | undefined;
  idleTimeout: number | undefined;
  status: 'auto' | 'on' | 'off';
  fatal: boolean;
  normalize: 'NFC' | false;
  choice: number;
  allowTruncated: boolean;
  limits: Limits;
}

function options(v: Values): DecodeOptions {
  let format = v.format as Format | undefined;
  let events = v.events === true;
  const legacy = (['sse', 'ndjson', 'lines', 'text'] as const).filter((f) => v[f] === true);
  if (legacy.length > 1 || (legacy.length === 1 && format !== undefined && format !== legacy[0])) {
    throw new UsageError(`--${legacy[0]} and ${legacy[1] ? `--${legacy[1]}` : `--format ${format}`} name different formats`);
  }
  if (legacy.length === 1) {
    format = legacy[0];
    if (legacy[0] !== 'text') events = true;
  }
  if (events && format === 'text') throw new UsageError('--events needs a stream of events: plain text (--format text) has none');
  if (v.json === true && v.report !== true) throw new UsageError('--json goes with --report (the report as JSON)');
  const parts = v.parts === true;
  if (parts && events) throw new UsageError('--events prints what each event says besides its text already; --parts is for the text');
  if (parts && format !== undefined && !isModelFormat(format)) throw new UsageError(`--parts needs a model format: ${format} has no reasoning, tool calls or sources`);
  if (parts && v.status === 'on') throw new UsageError('--parts writes the reasoning on standard error, where the status line (--status on) would write over it');
  return {
    format, events, parts,
    report: v.report === true, json: v.json === true,
    save: v.save as string | undefined,
    idleTimeout: v['idle-timeout'] as number | undefined,
    status: (v.status as DecodeOptions['status'] | undefined) ?? 'auto',
    fatal: v.lenient !== true,
    normalize: v['no-nfc'] === true ? false : 'NFC',
    choice: (v.choice as number | undefined) ?? 0,
    allowTruncated: v['allow-truncated'] === true,
    limits: limitsOf(v),
  };
}

/** The text stream for a format. */
export function textStream(format: Format, o: { fatal: boolean; normalize: 'NFC' | false; choice: number; limits: Limits }, eof: 'error' | 'allow' = 'error'): TextStream {
  if (isModelFormat(format)) {
    return new ModelStream({
      format, fatal: o.fatal, normalize: o.normalize, choice: o.choice, eof,
      maxEventBytes: framingOf(format) === 'sse' || framingOf(format) === 'eventstream' ? o.limits.maxEventBytes : o.limits.maxLineBytes,
      maxTextBytes: o.limits.maxTextBytes,
    }) as unknown as TextStream;
  }
  return new PlainStream({ format, fatal: o.fatal, normalize: o.normalize, eof, ...o.limits });
}

/** Whether a line is one JSON text (an NDJSON decoder's value). */
function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * A message of AWS's event stream as a frame: its offset, its headers' values, and `data`: the
 * event its model format reads of it, as the library reads it (a ConverseStream event's payload
 * under its `:event-type`; an InvokeModelWithResponseStream chunk's bytes, decoded; '' for none);
 * with `error`, what stops the stream at it (the provider's error, a chunk that is not one).
 */
function messageFrame(m: ModelEventStreamMessage): { offset: number; headers: Record<string, unknown>; data: string; error?: { code: string; message: string } } {
  const headers: Record<string, unknown> = {};
  for (const [k, h] of Object.entries(m.headers)) {
    headers[k] = typeof h.value === 'bigint' ? String(h.value) : h.value instanceof Uint8Array ? Buffer.from(h.value).toString('base64') : h.value;
  }
  const f: ReturnType<typeof messageFrame> = { offset: m.offset, headers, data: m.data };
  if (m.error !== undefined) f.error = { code: m.error.code, message: m.error.message };
  return f;
}

/**
 * What a read printed with --events holds: its frames and comments, each where it begins (`at`;
 * -1: not known) and where the stream has it whole (`whole`: an SSE event at its blank line, a
 * comment at its line), in that order.
 */
type Printed = { at: number; whole: number; frame: unknown } | { at: number; whole: number; comment: string };

/**
 * Prints the frames of a stream as JSON, one per line. For a model format each event is also read
 * as the library reads it: after its line, `{"reasoning": …}` with the reasoning it holds,
 * `{"refusal": …}` with the piece of the model's refusal it holds, `{"citation": {url, title,
 * citedText, source}}` for each source it cites, and
 * `{"toolCall": {index, id, name, arguments, done, valid, type}}` for each tool call it begins, adds
 * arguments to (the fragment it adds) or ends (`valid`: its arguments are one JSON value); with
 * `replaces: true` when its arguments so far were replaced (Anthropic's `{}` of the start);
 * `{"media": {mimeType, bytes, uri, thought, signature}}` for each image or sound it carries (its
 * data is in the event's line); and `{"serverToolCall": {index, id, name, arguments, done, valid, result}}`
 * for each of the provider's own calls it begins, adds to, ends or gives the result of (`result`
 * once, as the provider sent it).
 */
class EventPrinter {
  private frames: (chunk: Uint8Array | null) => unknown[];
  /** A model format read from SSE or AWS's event stream: a JSON body in its place (a whole answer) is told apart, and its events printed at the end. */
  private body?: JsonBody;
  private readonly key: 'events' | 'lines' | 'values';
  private sse?: SseParser;
  /** SSE: where each event and comment begins, so that a read's are printed in order, and none past where the stream stopped. */
  private blocks?: SseBlocks;
  private readonly commentAt: number[] = [];
  /** A model format of lines: where each frame's line begins and ends, in order (the frame layer's lines carry no offsets). */
  private lineSpans?: [number, number][];
  private readonly comments: string[] = [];
  private readonly reader: ModelEventReader | undefined;
  /** Each call's arguments printed so far, and whether its end was. */
  private readonly printed: { args: string; done: boolean }[] = [];
  /** The same of the provider's own calls, and whether their result was printed. */
  private readonly serverPrinted: { args: string; done: boolean; result: string | undefined }[] = [];
  /** A Bedrock stream's message stopped it (before its completion): nothing after it is printed. */
  private stopped = false;
  /**
   * A Bedrock stop that says the turn failed was printed: the message after it (its metadata), which
   * the stream reads for the failed turn's usage before it fails, is printed too, then nothing.
   */
  private waiting = false;
  private readonly trailer: boolean;
  /** AWS's event stream: each frame is a message with its offset. */
  private readonly messages: boolean;
  /** The provider's completion was read (a format read on after it, Bedrock's, goes on). */
  private done = false;

  /** The completion came, in a format that sends nothing after it that is read: nothing after it is printed (decode stops reading there). */
  private get completed(): boolean {
    return this.done && !this.trailer;
  }

  constructor(format: Format, o: DecodeOptions, private readonly write: (s: string) => void) {
    const { fatal } = o;
    const framing = framingOf(format);
    if (framing === 'eventstream') {
      // AWS's event stream: each message with its headers and the event its format reads of it;
      // nothing after a message that stops the stream (the stream's own error then ends the command)
      const d = new ModelEventStreamDecoder({ format: format as ModelEventStreamDecoderOptions['format'], maxMessageBytes: o.limits.maxEventBytes });
      this.frames = (c) => {
        if (c === null) {
          d.flush();
          return [];
        }
        return d.push(c).map(messageFrame);
      };
      this.key = 'events';
    } else if (framing === 'sse') {
      const p = (this.sse = new SseParser({ fatal, maxEventBytes: o.limits.maxEventBytes, onComment: (c) => void this.comments.push(c) }));
      const blocks = (this.blocks = new SseBlocks((l) => (l.comment ? void this.commentAt.push(l.start) : undefined)));
      this.frames = (c) => {
        if (c) blocks.push(c);
        else blocks.end();
        return c ? p.push(c) : p.flush();
      };
      this.key = 'events';
    } else if (framing === 'ndjson') {
      const d = new NdjsonDecoder({ fatal, maxLineBytes: o.limits.maxLineBytes });
      const spans = isModelFormat(format) ? this.linesBeside(o, true) : undefined;
      this.frames = (c) => {
        spans?.(c);
        return c ? d.push(c) : d.flush();
      };
      this.key = 'values';
    } else {
      const d = new LineDecoder({ fatal, maxLineBytes: o.limits.maxLineBytes });
      const spans = isModelFormat(format) ? this.linesBeside(o, false) : undefined;
      this.frames = (c) => {
        spans?.(c);
        return c ? d.push(c) : d.flush();
      };
      this.key = 'lines';
    }
    if (isModelFormat(format)) this.reader = new ModelEventReader({ format, choice: o.choice });
    if (isModelFormat(format) && (framing === 'sse' || framing === 'eventstream')) {
      // (a JSON body in place of the stream, as the library's model stream tells it: a whole answer
      // is read as the events of its stream, printed in the format's frame shape, each at the body)
      const body = (this.body = new JsonBody(format, fatal, o.limits.maxEventBytes, framing === 'eventstream'));
      const framed = this.frames;
      this.frames = (c) => {
        if (c === null) {
          if (body.state === 'body') {
            return body.events().map((e) => (framing === 'sse' ? { type: e.event ?? 'message', data: e.data, id: '' } : { offset: body.at, headers: {}, data: e.data }));
          }
          // (white space alone, held: no frame, as the stream frames none of it; the stream's end says what it lacks)
          return framed(null);
        }
        const next = body.push(c);
        return next === null ? [] : framed(next);
      };
    }
    this.trailer = hasTrailer(format);
    this.messages = framing === 'eventstream';
  }

  /**
   * A model format of lines: each frame's line, found beside the frame layer, so that a read's
   * frames are printed only up to where its stream stopped (a provider's error line, a bad
   * event), as when the reads end there. The frame layer's lines and the scanner's are one to one;
   * NDJSON's values are the lines that are JSON (the decoder skips blank lines and stops at the
   * first other line that is not).
   */
  private linesBeside(o: DecodeOptions, values: boolean): (chunk: Uint8Array | null) => void {
    const starts = new LineStarts();
    const lines = new LineDecoder({ fatal: o.fatal, maxLineBytes: o.limits.maxLineBytes });
    const spans: [number, number][] = (this.lineSpans = []);
    return (chunk) => {
      let got: string[];
      if (chunk) starts.push(chunk);
      else starts.end();
      try {
        got = chunk ? lines.push(chunk) : lines.flush();
      } catch (e) {
        got = ((e as { lines?: string[] }).lines) ?? [];
      }
      for (const line of got) {
        const span = starts.next();
        if (values && !isJson(line)) continue;
        spans.push(span);
      }
    };
  }

  private frame(f: unknown): void {
    if (this.completed || this.stopped) return;
    const stops = this.messages && (f as { error?: unknown }).error !== undefined;
    if (this.waiting) {
      // (the stream's failure, which came first, ends it at a message that is an error itself)
      this.stopped = true;
      if (stops) return;
    }
    this.write(`${JSON.stringify(f)}\n`);
    // a message that stops a Bedrock stream is the last printed; after the completion the stream
    // passes such a message over and reads on (its metadata), and so does this
    if (stops) {
      if (!this.done) this.stopped = true;
      return;
    }
    const reader = this.reader;
    if (reader === undefined) return;
    const r = reader.read(this.key === 'events' ? (f as { data: string }).data : this.key === 'lines' ? (f as string) : JSON.stringify(f));
    if (r.done) this.done = true;
    if (this.trailer && !this.stopped && r.finishReason !== undefined && r.error !== undefined) this.waiting = true;
    if (r.reasoning !== '') this.write(`${JSON.stringify({ reasoning: r.reasoning })}\n`);
    if (r.refusal !== undefined) this.write(`${JSON.stringify({ refusal: r.refusal })}\n`);
    for (const c of r.citations ?? []) this.write(`${JSON.stringify({ citation: c })}\n`);
    for (const c of reader.toolCalls) {
      const was = this.printed[c.index];
      if (was !== undefined && c.arguments === was.args && c.done === was.done) continue;
      const call = callSaid(c, was);
      this.write(`${JSON.stringify({ toolCall: call })}\n`);
      this.printed[c.index] = { args: c.arguments, done: c.done };
    }
    // (the media's data is in the event's line above: what it is, its size, where it lies)
    for (const m of r.media ?? []) this.write(`${JSON.stringify({ media: mediaSaid(m) })}\n`);
    // the provider's own calls (its web search, its code execution): as the client's, and the
    // result once the event that carries it came, as the provider sent it
    for (const c of reader.serverToolCalls) {
      const was = this.serverPrinted[c.index];
      // (a result said again for the call replaces the first: it is printed too)
      const result = c.result;
      if (was !== undefined && c.arguments === was.args && c.done === was.done && result === was.result) continue;
      const call = callSaid(c, was);
      if (result !== undefined && result !== was?.result) call.result = result;
      this.write(`${JSON.stringify({ serverToolCall: call })}\n`);
      this.serverPrinted[c.index] = { args: c.arguments, done: c.done, result };
    }
  }

  get truncated(): boolean {
    return this.sse?.truncated ?? false;
  }

  /**
   * The read's frames and comments, in order, each at its offset where it is known (SSE's events
   * and comments, Bedrock's messages); and what the framing threw after them.
   */
  take(chunk: Uint8Array | null): { printed: Printed[]; error?: { e: unknown } } {
    let frames: unknown[];
    let error: { e: unknown } | undefined;
    try {
      frames = this.frames(chunk);
    } catch (e) {
      const x = e as Record<string, unknown>;
      frames = ((x.code === 'ERR_NDJSON_PARSE' ? x.values : x instanceof EventStreamError ? (x.messages as ModelEventStreamMessage[]).map(messageFrame) : x[this.key] ?? x.lines ?? x.events) as unknown[] | undefined) ?? [];
      error = { e };
    }
    const printed: Printed[] = frames.map((frame) => {
      // (a whole answer's events: each at the body, whole at its end)
      if (this.body?.state === 'body') return { at: this.body.at, whole: this.body.bytes, frame };
      if (this.blocks) {
        const [at, whole] = this.blocks.nextEvent();
        return { at, whole, frame };
      }
      if (this.lineSpans) {
        const [at, whole] = this.lineSpans.shift() ?? [-1, -1];
        return { at, whole, frame };
      }
      const at = this.messages ? (frame as { offset: number }).offset : -1;
      return { at, whole: at, frame };
    });
    if (this.comments.length !== 0) {
      for (const comment of this.comments.splice(0)) {
        const at = this.commentAt.shift() ?? -1;
        printed.push({ at, whole: at, comment });
      }
      printed.sort((a, b) => a.whole - b.whole);
    }
    return { printed, error };
  }

  /**
   * Prints what a read held, up to where a stream stopped at byte `stop`: what it had whole by
   * then, and the event it stopped inside (whole when the stream read it), with the comments in it.
   */
  print(printed: Printed[], stop = Infinity): void {
    let upTo = stop;
    for (const p of printed) if ('frame' in p && p.at >= 0 && p.at <= stop && stop < p.whole) upTo = p.whole;
    for (const p of printed) {
      if (this.completed || this.stopped) break; // (after the completion nothing is read: see frame())
      // (past where the stream stopped, but for the message after a failed stop, which it read)
      if (p.whole > upTo && !this.waiting) continue;
      if ('comment' in p) this.write(`${JSON.stringify({ comment: p.comment })}\n`);
      else this.frame(p.frame);
    }
  }
}

/**
 * A call as --events prints it: the fragment the event added to its arguments; or, when the
 * arguments so far were replaced (Anthropic's `input` of the start, `{}`, until a fragment brings
 * text), all of them with `replaces`.
 */
function callSaid(c: ToolCall, was: { args: string } | undefined): Record<string, unknown> {
  const grows = was === undefined || c.arguments.startsWith(was.args);
  const call: Record<string, unknown> = { index: c.index, id: c.id, name: c.name, arguments: grows ? c.arguments.slice(was?.args.length ?? 0) : c.arguments };
  if (!grows) call.replaces = true;
  call.done = c.done;
  if (c.valid !== undefined) call.valid = c.valid;
  if (c.type !== undefined) call.type = c.type;
  return call;
}

/** A medium as --events prints it after its event: its type, its size, its address, not its data (the event's line holds it). */
function mediaSaid(m: Media): Record<string, unknown> {
  const said: Record<string, unknown> = { mimeType: m.mimeType, bytes: m.bytes };
  if (m.uri !== undefined) said.uri = m.uri;
  if (m.thought) said.thought = true;
  if (m.signature !== undefined) said.signature = m.signature;
  return said;
}

type Ending =
  | { kind: 'done' }
  | { kind: 'error'; error: unknown; fromPrinter?: boolean; answer?: boolean }
  | { kind: 'interrupted'; signal: 'SIGINT' | 'SIGTERM' }
  | { kind: 'idle' }
  | { kind: 'empty' };

class DecodeRun {
  private readonly out = new Output();
  private readonly t0 = performance.now();
  private lastTextAt = performance.now();
  /** When an event that says a part of the answer (text, reasoning, a call's arguments, …) last came: --idle-timeout's clock. */
  private lastProgressAt = performance.now();
  /** The stream's events less its keep-alives and empty events at the last read: more since are progress. */
  private seenProgress = 0;
  private anyText = false;
  private bytes = 0;
  private stream: TextStream | undefined;
  private printer: EventPrinter | undefined;
  /** --parts: what the model stream says besides its text, taken after each read, and where it is printed. */
  private parts: { reader: ModelPartReader; printer: PartPrinter } | undefined;
  /** The answer's text printed so far does not end its line. */
  private textMidLine = false;
  private format: Format | undefined;
  private sniffed = false;
  /** The format sends something after its completion (describeFormat's `trailer`): the input is read to its end. */
  private trailer = false;
  private sniffBuf: Uint8Array[] = [];
  /** The first bytes (up to SNIFF_BYTES), to say what the input looks like when it cannot be read (another format, UTF-16). */
  private readonly first: Uint8Array[] = [];
  private firstLen = 0;
  private sniffLen = 0;
  private printedUnits = 0;
  private readonly keep: string[] | undefined;
  private status: StatusLine | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private ended = false;
  /** The HTTP response head split off the input's start (curl -i), if any. */
  private head: HttpHead | undefined;
  /** The head's status is not a success, or the input is an HTML page: the body is the server's answer, kept (up to --max-event-bytes), not a stream. */
  private answer: AnswerBody | undefined;
  /** The input is an HTML page (sniffed): its title. */
  private html: string | undefined;

  constructor(private readonly o: DecodeOptions, private readonly input: Input) {
    this.keep = o.save !== undefined || o.report ? [] : undefined;
    this.format = o.format;
    if (this.format) this.begin(this.format);
  }

  async run(): Promise<void> {
    this.out.whenClosed(() => {
      // the reader of standard output went away (… | head): nothing more to say
      this.ended = true;
      this.input.close();
      exitWith(EXIT.OK);
    });
    // (SIGTERM, as `timeout 60 seam-stream decode …` sends it, ends the run as Ctrl+C does: --save keeps the text so far)
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => this.end({ kind: 'interrupted', signal }));
    // (--parts writes on standard error as the stream goes: no status line there)
    const statusOn = this.o.status === 'on' || (this.o.status === 'auto' && !this.o.parts && process.stderr.isTTY === true && process.stdout.isTTY !== true);
    if (statusOn) {
      this.status = new StatusLine(() => ({
        bytes: this.bytes, events: this.stream?.events ?? 0, heartbeats: this.stream?.heartbeats ?? 0,
        sinceText: performance.now() - this.lastTextAt, anyText: this.anyText,
      }));
    }
    if (this.o.idleTimeout !== undefined) {
      const limit = this.o.idleTimeout * 1000;
      this.idleTimer = setInterval(() => {
        if (performance.now() - this.lastProgressAt < limit) return;
        // after the completion, waiting for what the format sends after it: the stream is whole (or
        // after a finish reason that says the turn failed: the stream's end is that error)
        const s = this.stream;
        if (s?.status === 'done' || (s !== undefined && this.format !== undefined && turnFailed(this.format, s.finishReason))) this.complete();
        else this.end({ kind: 'idle' });
      }, Math.max(20, Math.min(250, limit / 4)));
    }
    const chunks = headIsSplit(this.o.format) ? withoutHttpHead(this.input.chunks, (h) => this.onHead(h)) : this.input.chunks;
    try {
      for await (const chunk of chunks) {
        if (this.ended) return;
        this.bytes += chunk.length;
        if (this.firstLen < SNIFF_BYTES) {
          this.first.push(chunk);
          this.firstLen += chunk.length;
        }
        if (this.answer !== undefined) this.answer.keep(chunk);
        else if (this.stream === undefined) this.sniffMore(chunk);
        else this.feed(chunk);
        if (this.ended) return;
        // a reader slower than the input holds the reading back, instead of the text piling up here
        const drained = this.out.drained();
        if (drained) await drained;
        if (this.ended) return;
        // the provider's completion arrived: what follows it is not read (a live connection may stay
        // open), unless the format sends more after it (its trailer: Bedrock's usage), read to the end
        if (this.finished) break;
      }
    } catch (e) {
      if (this.ended) return;
      return this.end({ kind: 'error', error: e });
    }
    if (this.ended) return;
    this.complete();
  }

  /** An HTTP response head at the input's start: said, and when its status is not a success, its body is kept as the answer. */
  private onHead(h: HttpHead): void {
    this.head = h;
    if (failedStatus(h)) {
      this.answer = new AnswerBody(this.o.limits.maxEventBytes);
      return;
    }
    if (!(this.o.report && this.o.json)) this.say(headNote(h));
  }

  /** The input ended (or reading stopped after the completion): what is held is read, and the command ends. */
  private complete(): void {
    if (this.ended) return;
    if (this.answer === undefined && this.stream === undefined) {
      const f = sniff(this.joined(), true);
      if (f === 'empty') return this.end({ kind: 'empty' });
      this.begin(f ?? 'text', true);
      if (this.ended) return;
    }
    if (this.answer !== undefined) {
      const body = this.answer.end();
      const said = failedStatus(this.head)
        ? failedAnswer(this.head!, body, this.o.format)
        // (the page's title as the whole page has it: it may have come after the reads that told a page)
        : `the input is ${htmlSaid(this.html === undefined ? '' : htmlPage(Buffer.from(body)) ?? this.html)} (--format text reads it as text)`;
      return this.end({ kind: 'error', error: Object.assign(new Error(said), { code: 'ERR_PROVIDER' }), answer: true });
    }
    let text: string;
    const printer = this.printer;
    if (printer !== undefined) {
      const { printed, error } = printer.take(null);
      // (after the completion: a message of what follows it cut short, which the stream passes over)
      if (error !== undefined && this.stream!.status !== 'done') {
        // (both may stop at the end: a turn that failed before a message cut short)
        let failed: unknown;
        try {
          this.stream!.flush();
        } catch (e) {
          failed = e;
        }
        return this.endFirst(printed, error, failed);
      }
      printer.print(printed);
    }
    try {
      text = this.stream!.flush();
    } catch (e) {
      return this.end({ kind: 'error', error: e });
    }
    this.took(text);
    this.end({ kind: 'done' });
  }

  private joined(): Uint8Array {
    return this.sniffBuf.length === 1 ? this.sniffBuf[0] : Buffer.concat(this.sniffBuf, this.sniffLen);
  }

  private sniffMore(chunk: Uint8Array): void {
    this.sniffBuf.push(chunk);
    this.sniffLen += chunk.length;
    const f = sniff(this.joined(), false);
    if (f === undefined && this.sniffLen < SNIFF_BYTES) return;
    this.begin(f === undefined || f === 'empty' ? 'text' : f, true);
  }

  /** Builds the pipeline for `format` and feeds it what sniffing read. */
  private begin(format: Format, sniffed = false): void {
    if (sniffed && format === 'text') {
      // an HTML page in place of a stream: the server's answer, not text to print
      const title = htmlPage(this.joined());
      if (title !== undefined) {
        this.html = title;
        const answer = (this.answer = new AnswerBody(this.o.limits.maxEventBytes));
        for (const c of this.sniffBuf.splice(0)) answer.keep(c);
        return;
      }
    }
    this.format = format;
    this.sniffed = sniffed;
    this.trailer = hasTrailer(format);
    if (this.o.events && format === 'text') {
      this.end({ kind: 'error', error: new UsageError('--events needs a stream of events, and the input looks like plain text (give --format)') });
      return;
    }
    this.stream = textStream(format, this.o);
    if (this.o.parts && !isModelFormat(format)) this.say(`--parts: the input looks like ${format}, which has no reasoning, tool calls or sources: its text only`);
    if (this.o.parts && isModelFormat(format)) {
      const terminal = process.stderr.isTTY === true;
      const sameTerminal = terminal && process.stdout.isTTY === true;
      this.parts = {
        reader: new ModelPartReader(this.stream as unknown as ModelStream),
        printer: new PartPrinter((s) => process.stderr.write(s), terminal && !process.env.NO_COLOR, () => {
          if (!sameTerminal || !this.textMidLine) return false;
          this.textMidLine = false; // (standard error ends the line on the terminal both write to)
          return true;
        }),
      };
    }
    if (this.o.events) this.printer = new EventPrinter(format, this.o, (s) => this.out.write(s));
    const held = this.sniffBuf;
    this.sniffBuf = [];
    for (const c of held) {
      this.feed(c);
      if (this.ended || this.finished) return;
    }
  }

  /** The provider's completion arrived, and the format sends nothing after it that is read: the rest of the input is not read. */
  private get finished(): boolean {
    return this.stream?.status === 'done' && !this.trailer;
  }

  private feed(chunk: Uint8Array): void {
    let text = '';
    let parts: ModelPart[] | undefined;
    const printer = this.printer;
    const { printed, error: printerError } = printer?.take(chunk) ?? { printed: [] };
    try {
      // (--parts: the reader pushes a read an event at a time, and gives what each said in its order)
      if (this.parts !== undefined) parts = this.parts.reader.push(chunk);
      else text = this.stream!.push(chunk);
    } catch (e) {
      // (a ModelStreamError once the stream is done is about what follows the completion; a text
      // limit passed at the completion or before it fails the stream, whose status is then not done)
      if (this.stream!.status === 'done' && e instanceof ModelStreamError) {
        printer?.print(printed);
        return this.afterCompletion(e);
      }
      return this.endFirst(printed, printerError, e);
    }
    printer?.print(printed);
    // (an event that says a part of the answer is progress, reasoning too: a reasoning model thinks
    // for minutes before its text. Keep-alives are not, nor events that say nothing (`{}`, an empty
    // delta, the same usage again: a model stream's progressEvents counts neither), which an upstream
    // can send for ever; Anthropic's pings are events and SSE comments are not: a read of a comment
    // and an event brought an event that is not a keep-alive)
    const s = this.stream!;
    const progress = s.progressEvents ?? s.events; // (a plain stream's events are all progress: it has no pings nor empty events)
    if (progress > this.seenProgress) this.lastProgressAt = performance.now();
    this.seenProgress = progress;
    if (parts !== undefined) this.show(parts);
    else this.emit(text);
    if (printerError !== undefined) {
      if (this.stream!.status === 'done') return this.afterCompletion(undefined);
      this.end({ kind: 'error', error: printerError.e, fromPrinter: true });
    }
  }

  /**
   * The stream stopped with `e`, or the printer with its error, or both: the error that comes first
   * in the stream ends the command (the printer's where they name one offset), as it would have had
   * the read ended between the two; nothing past it is printed.
   */
  private endFirst(printed: Printed[], printerError: { e: unknown } | undefined, e: unknown): void {
    if (printerError !== undefined && (e === undefined || offsetOf(printerError.e) <= offsetOf(e))) {
      this.printer!.print(printed);
      this.end({ kind: 'error', error: printerError.e, fromPrinter: true });
    } else {
      this.printer?.print(printed, offsetOf(e));
      this.end({ kind: 'error', error: e });
    }
  }

  /**
   * An error in what follows the provider's completion: not the answer, and not read (the
   * command stops reading at the completion, whichever read the bytes after it came in; a format
   * whose stream goes on after it is read by a stream that passes them over or fails itself).
   * The stream is whole: the command ends as at its end.
   */
  private afterCompletion(e: unknown): void {
    const t = (e as { text?: unknown } | undefined)?.text;
    this.took(typeof t === 'string' ? t : '');
    this.end({ kind: 'done' });
  }

  /** Text the stream committed (flushed, or carried by an error): with --parts, with what else was said before it. */
  private took(text: string): void {
    if (this.parts === undefined) this.emit(text);
    else this.show(this.parts.reader.take(text));
  }

  /** --parts: the answer's text to standard output, the rest to standard error, in their order. */
  private show(parts: ModelPart[]): void {
    const printer = this.parts!.printer;
    for (const p of parts) {
      if (p.type !== 'text') {
        printer.show(p);
        continue;
      }
      printer.text();
      this.emit(p.text);
    }
  }

  private emit(text: string): void {
    if (text === '') return;
    this.textMidLine = !text.endsWith('\n');
    this.lastTextAt = this.lastProgressAt = performance.now();
    this.anyText = true;
    this.printedUnits += text.length;
    this.keep?.push(text);
    if (!this.o.events) this.out.write(text);
  }

  private say(line: string): void {
    this.status?.clear();
    process.stderr.write(`seam-stream: ${line}\n`);
  }

  /** Ends the command: the rest of the text, one message, the saved file, the report, the exit code. */
  private end(ending: Ending): void {
    if (this.ended) return;
    this.ended = true;
    this.input.close();
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.status?.stop();
    let code: number = EXIT.OK;
    let partial = true;
    let message: string | undefined;
    switch (ending.kind) {
      case 'done':
        partial = false;
        break;
      case 'empty':
        code = EXIT.TRUNCATED;
        message = `${this.head !== undefined ? `the body after the HTTP response head of ${this.input.name}` : this.input.name} is empty (0 bytes): there is no stream to decode`;
        break;
      case 'interrupted':
        code = ending.signal === 'SIGINT' ? EXIT.INTERRUPTED : EXIT.TERMINATED;
        message = `${ending.signal === 'SIGINT' ? 'interrupted (Ctrl+C)' : 'terminated (SIGTERM)'} after ${plural(this.bytes, 'byte')} and ${plural(this.stream?.events ?? 0, 'event')}: reading stopped`;
        break;
      case 'idle':
        code = EXIT.IDLE;
        message = `nothing but keep-alives and empty events for ${this.o.idleTimeout} s (--idle-timeout), after ${plural(this.bytes, 'byte')}, ${plural(this.stream?.events ?? 0, 'event')} and ${plural(this.stream?.heartbeats ?? 0, 'heartbeat')}: stopped`;
        break;
      case 'error': {
        const e = ending.error;
        // the text decoded before the error comes first: what this call committed, then what was held
        const t = (e as { text?: unknown } | null)?.text;
        if (typeof t === 'string' && !ending.fromPrinter && (e as { code?: string }).code !== undefined) this.took(t);
        code = exitCodeOf(e);
        message = describeError(e);
        if (code === EXIT.TRUNCATED && this.o.allowTruncated) {
          message = `warning: ${message} (--allow-truncated)`;
          code = EXIT.OK;
        } else if (code === EXIT.TRUNCATED && (this.stream?.events ?? 0) !== 0) message += ' (--allow-truncated takes the text as it is, exit 0)';
        // (what to do: the option that reads on)
        else if (code === EXIT.UTF8) message += utf16(Buffer.concat(this.first, this.firstLen)) ?? ' (--lenient reads it as U+FFFD and goes on)';
        break;
      }
    }
    let report: Record<string, unknown> | undefined;
    if (ending.kind === 'done' || (ending.kind === 'error' && ending.answer !== true)) {
      // the held rest (the last cluster) is complete once the stream has ended
      try {
        const r = this.stream?.finish();
        if (r) {
          if (ending.kind === 'error') this.emit(r.text.slice(this.printedUnits));
          report = this.reportOf(r, code);
        }
      } catch {
        /* a failed stream may have no report: it says nothing more */
      }
    }
    this.parts?.printer.end(this.stream?.toolCalls, this.stream?.serverToolCalls);
    // (--parts: a part on standard error may have ended the text's line on the same terminal)
    const textOpen = this.parts !== undefined ? this.textMidLine : !(this.keep?.at(-1) ?? '\n').endsWith('\n');
    if (process.stdout.isTTY && this.printedUnits > 0 && !this.o.events && textOpen) this.out.write('\n');
    // (a refusal is not the answer's text, which alone goes to standard output; --events prints it
    // after its events, and --report --json, whose report is standard error's one line, holds it)
    const refusal = this.stream?.refusal;
    if (refusal !== undefined && refusal !== '' && !this.o.events && !(this.o.report && this.o.json)) this.say(`the model refused: ${refusal}`);
    if (message !== undefined) this.say(message);
    const hint = this.formatHint(code, ending);
    if (hint !== undefined) this.say(hint);
    if (this.o.save !== undefined && this.keep !== undefined) {
      const text = this.keep.join('');
      try {
        saveAtomically(this.o.save, text);
        if (partial) this.say(`the partial text (${plural(Buffer.byteLength(text), 'byte')}, all that was committed) was saved to ${this.o.save}`);
      } catch (e) {
        this.say(describeError(e));
        if (code === EXIT.OK) code = EXIT.USAGE;
      }
    } else if (ending.kind === 'interrupted' || ending.kind === 'idle') {
      this.say('nothing was saved (--save FILE keeps the text committed so far)');
    }
    if (this.o.report) {
      report ??= this.reportOfPrinted(code, ending.kind);
      process.stderr.write(this.o.json ? `${JSON.stringify(report)}\n` : humanReport(report));
    }
    exitWith(code);
  }

  /**
   * With --format: when the stream failed as that format cannot fail on its own kind of input (bad
   * UTF-8, a bad event, no completion), or a model format found nothing in it, and its first bytes
   * look like another model format's, what to try.
   */
  private formatHint(code: number, ending: Ending): string | undefined {
    const given = this.o.format;
    if (given === undefined || this.firstLen === 0) return undefined;
    const failed = ending.kind === 'error' && ending.answer !== true && ([EXIT.UTF8, EXIT.TRUNCATED, EXIT.BAD_EVENT] as number[]).includes(exitCodeOf(ending.error));
    const s = this.stream;
    const nothing = ending.kind === 'done' && isModelFormat(given) && !this.anyText && (s?.toolCalls?.length ?? 0) === 0 && !s?.reasoning && !s?.refusal;
    if (!failed && !nothing) return undefined;
    const first = Buffer.concat(this.first, this.firstLen);
    const f = sniff(first, true);
    const title = failed && f === 'text' ? htmlPage(first) : undefined;
    if (title !== undefined) return `the input looks like ${htmlSaid(title)}`;
    if (f === undefined || f === 'empty' || f === given || !isModelFormat(f)) return undefined;
    return `the input looks like ${f}, not ${given}: try --format ${f} (or leave --format out: it is then sniffed)`;
  }

  private reportOf(r: ReturnType<TextStream['finish']>, code: number): Record<string, unknown> {
    const { text: _text, ...counts } = r;
    return {
      input: this.input.name, format: this.format ?? null, sniffed: this.sniffed,
      status: r.status, finishReason: r.finishReason ?? null, usage: r.usage ?? null,
      bytes: this.bytes, events: this.stream?.events ?? 0, heartbeats: this.stream?.heartbeats ?? 0,
      utf8Bytes: counts.utf8Bytes, codePoints: counts.codePoints, utf16Units: counts.utf16Units, graphemes: counts.graphemes,
      normalizationChanged: counts.normalizationChanged, sha256: counts.sha256,
      ...this.messageOf(),
      ...(this.head !== undefined ? { httpHead: { ...this.head } } : {}),
      seconds: Number(((performance.now() - this.t0) / 1000).toFixed(3)), exitCode: code,
    };
  }

  /** A model stream's reasoning (its UTF-8 bytes) and client tool calls, for the report. */
  private messageOf(): Record<string, unknown> {
    const s = this.stream;
    if (s?.toolCalls === undefined) return {};
    const refusal = s.refusal === undefined || s.refusal === '' ? {} : { refusal: s.refusal };
    const citations = s.citations === undefined || s.citations.length === 0 ? {} : { citations: s.citations.slice() };
    return { reasoningBytes: Buffer.byteLength(s.reasoning ?? ''), ...refusal, ...citations, toolCalls: s.toolCalls.map((c) => ({ ...c })) };
  }

  /** The report of the text printed so far, when the stream did not end (interrupted, idle, empty, or an error before any stream: failed). */
  private reportOfPrinted(code: number, kind: Ending['kind']): Record<string, unknown> {
    const a = new TextAssembler({ normalize: false });
    a.push((this.keep ?? []).join(''));
    const r = a.finish();
    return {
      ...this.reportOf({ ...r, status: 'truncated', events: this.stream?.events ?? 0 }, code),
      status: kind === 'interrupted' ? 'interrupted' : kind === 'idle' ? 'idle-timeout' : kind === 'empty' ? 'empty' : 'failed',
      finishReason: this.stream?.finishReason ?? null, usage: this.stream?.usage ?? null,
      normalizationChanged: null,
    };
  }
}

export function humanReport(r: Record<string, unknown>): string {
  const line = (k: string, v: string) => `  ${k.padEnd(14)}${v}\n`;
  let s = 'seam-stream: report\n';
  s += line('input', `${r.input}, ${r.format ?? 'unknown format'}${r.sniffed ? ' (sniffed)' : ''}`);
  const head = r.httpHead as HttpHead | undefined;
  if (head !== undefined) s += line('http head', `${head.statusLine} (${plural(head.bytes, 'byte')}, skipped: the byte counts and offsets are the body's)`);
  s += line('status', `${r.status}${r.finishReason ? `, finish reason ${JSON.stringify(r.finishReason)}` : ''}`);
  if (r.usage) s += line('usage', JSON.stringify(r.usage));
  s += line('read', `${plural(r.bytes as number, 'byte')}, ${plural(r.events as number, 'event')}, ${plural(r.heartbeats as number, 'heartbeat')}`);
  s += line('text', `${plural(r.utf8Bytes as number, 'UTF-8 byte')}, ${plural(r.codePoints as number, 'code point')}, ${plural(r.utf16Units as number, 'UTF-16 unit')}, ${plural(r.graphemes as number, 'grapheme')}`);
  if (typeof r.reasoningBytes === 'number' && r.reasoningBytes > 0) s += line('reasoning', plural(r.reasoningBytes, 'UTF-8 byte'));
  if (typeof r.refusal === 'string') s += line('refusal', JSON.stringify(r.refusal));
  (r.citations as Citation[] | undefined)?.forEach((c, i) => {
    const said = c.url !== undefined ? `${c.url}${c.title !== undefined ? ` (${c.title})` : ''}` : c.title ?? JSON.stringify(c.source);
    s += line(i === 0 ? 'citations' : '', `${i}: ${said.length > 200 ? `${said.slice(0, 200)}…` : said}`);
  });
  for (const c of (r.toolCalls as ToolCall[] | undefined) ?? []) {
    const state = !c.done ? 'not ended' : c.type === 'custom' ? 'a custom tool\'s input' : c.valid ? 'valid JSON' : 'invalid JSON';
    // (a call of a tool the API defines with its item type: what the client answers it with)
    const kind = c.type !== undefined && c.type !== 'custom' ? ` [${c.type}]` : '';
    s += line(c.index === 0 ? 'tool calls' : '', `${c.index}: ${c.name}${kind}${c.id ? ` (${c.id})` : ''} ${c.arguments.length > 200 ? `${c.arguments.slice(0, 200)}…` : c.arguments} (${state})`);
  }
  s += line('NFC', r.normalizationChanged === null ? 'not known (the stream did not end)' : r.normalizationChanged ? 'changed the raw text' : 'changed nothing');
  s += line('sha256', String(r.sha256));
  s += line('time', formatSeconds((r.seconds as number) * 1000));
  s += line('exit code', String(r.exitCode));
  return s;
}

export async function decode(values: Values, positionals: string[]): Promise<void> {
  const o = options(values);
  // (a path that cannot be saved to is said before the stream is read, not after it)
  if (o.save !== undefined) checkSavable(o.save);
  const input = openInput(positionals[0]);
  await new DecodeRun(o, input).run();
}

/** The byte offset an error names (Infinity for one that names none). */
function offsetOf(e: unknown): number {
  const at = (e as { offset?: unknown } | null)?.offset;
  return typeof at === 'number' ? at : Infinity;
}
