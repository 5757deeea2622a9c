// Model-stream fixtures: each provider's stream shapes written out as the bytes a client reads,
// with the results a correct reader gets from them, written by hand. A small reference reader
// (below: its own SSE and line scanner with byte offsets, eventsource-parser as a second SSE
// reading, JSON.parse for every event, and a JSON prefix checker for error offsets) computes the
// same results from the bytes; test/unit/model-fixtures.test.ts checks that both agree, so the
// fixtures are themselves tested before they test ModelStream and SseRelay.
//
// Decisions the fixtures encode (where the contract leaves a choice):
// - ModelStreamError.offset: ERR_BAD_EVENT at the first byte where the event's JSON stops being
//   a prefix of valid JSON (its end when the JSON is cut short), ERR_PROVIDER at the first byte
//   of the error event's JSON (a line's JSON; a plain error body's first `{`); exact when that
//   JSON lies in one chunk. ERR_STREAM_TRUNCATED at the stream's length.
// - events: every SSE event (an Anthropic ping is one; comments are not), every non-blank
//   NDJSON or ddg line ([DONE] included), the bad or error event included; a plain JSON error
//   body is one event; an event or line the stream ends inside is not one.
// - An unterminated last line (NDJSON, ddg) is read at flush(): complete JSON (or [DONE]) counts;
//   JSON cut short by the end of the stream is a truncated stream, not ERR_BAD_EVENT.
// - openai-responses: finishReason is response.status of response.completed ('completed' here).
// - reasoning: OpenAI's reasoning_content / reasoning, Anthropic's thinking, the Responses API's
//   reasoning text and summary deltas, Ollama's thinking; never part of the text.
// - OpenAI: the followed choice is the one whose index is the option; in a chunk whose choices
//   carry no index, the one at that position. An `error` or `done_reason` that is null is none.
// - ddg: a data line whose JSON has an `error` member is ERR_PROVIDER (message: error.message), and so
//   is one with `"action": "error"` (message: its `type`); such a line's text is not the answer's.
// - usage: OpenAI's last non-null `usage`; Anthropic's message_start.message.usage with
//   message_delta.usage's members over it (shallow); Responses' response.usage; Ollama's
//   top-level numeric members of the done line; Gemini's usageMetadata of the last chunk that has
//   one (every chunk carries running totals: the last one's are the stream's, completed, cut short
//   or failed).
// - gemini: the followed candidate is the one whose index is the option (by position in chunks
//   whose candidates carry no index); a chunk whose followed candidate has a finishReason, or
//   whose promptFeedback has a blockReason (no candidates: the prompt was refused), completes the
//   stream, with that reason; a part's thoughtSignature is a signature that ends its reasoning
//   block; a functionCall's arguments are its args object's JSON as written ('{}' without args).
// - bedrock and bedrock-invoke (AWS's binary event stream, read from the bytes: AWS's codec decodes
//   each message, JSON.parse reads its payload; for bedrock-invoke the base64 `bytes` of each
//   `chunk`, an Anthropic event read as anthropic): a frame is a message, its offsets the message's
//   (an error, of any kind, is at the message's first byte); an exception message is ERR_PROVIDER
//   (its payload's message, the exception type as the provider's code), and so is an error message
//   (its :error-message, its :error-code), and neither is an event; in bedrock-invoke an event of
//   another type than chunk is no model's and not an event either (in bedrock, an event of a type no
//   model stream has is read, and counts, as any event); a message cut by the end of the stream
//   never arrived; damage to the framing fails the stream anywhere, after the completion too.
//   Bedrock's messageStop completes the stream (its stopReason the finish reason, every call still
//   open ended; a stopReason that says the turn failed, malformed_tool_use or
//   malformed_model_output, is ERR_PROVIDER at its message instead, with the reason as finish reason
//   and provider code, no call ended, once the message after it came: an event, which counts and
//   whose metadata's usage is merged, an exception or damage, or the end); after it the stream is
//   read on: its events count, metadata's usage is merged, an exception is passed over. A contentBlockStart's toolUse begins a call whose
//   arguments are `{}` until a fragment brings text (a `type` of server_tool_use: the provider's);
//   contentBlockStop ends its block's call and reasoning block.
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { createParser } from 'eventsource-parser';

/** The formats read from text (SSE, lines); and every format, with the two AWS's binary event stream carries. */
export type TextFormat = 'openai' | 'openai-responses' | 'anthropic' | 'ollama' | 'ddg' | 'gemini';
export type ModelFormat = TextFormat | 'bedrock' | 'bedrock-invoke';
export type FinalStatus = 'done' | 'truncated' | 'failed';
export type ModelErrorCode = 'ERR_STREAM_TRUNCATED' | 'ERR_PROVIDER' | 'ERR_BAD_EVENT' | 'ERR_CRC_MISMATCH' | 'ERR_BAD_FRAME';

/** The formats carried in AWS's binary event stream. */
export const isEventStream = (format: ModelFormat): format is 'bedrock' | 'bedrock-invoke' => format === 'bedrock' || format === 'bedrock-invoke';
/** The format of the events a stream carries (bedrock-invoke's chunks: Anthropic's). */
export const innerFormat = (format: ModelFormat): Exclude<ModelFormat, 'bedrock-invoke'> => (format === 'bedrock-invoke' ? 'anthropic' : format);

/** AWS's own codec of the binary event stream (@smithy/eventstream-codec). */
export const codec = new EventStreamCodec((b: Uint8Array) => new TextDecoder().decode(b), (s: string) => new TextEncoder().encode(s));

export interface Expected {
  /** The answer as sent: the deltas joined, no NFC. */
  text: string;
  /** The reasoning as sent. */
  reasoning: string;
  status: FinalStatus;
  finishReason?: string;
  usage?: Record<string, unknown>;
  events: number;
  /** SSE comments (keep-alives), their text as a parser reports it. */
  comments: string[];
  error?: { code: ModelErrorCode; message?: string; offset: number; providerCode?: string };
  /** The client's tool calls at the end (id, name, arguments as joined, done, valid), when the fixture has any. */
  toolCalls?: ExpectedCall[];
  /** The provider's own tool calls at the end, when it made any. */
  serverToolCalls?: ExpectedCall[];
  /** Reasoning blocks' signatures and redacted data, in order, when there are any. */
  signatures?: string[];
  /**
   * Gemini's grounding: each source at an address placed in the text (the last grounding metadata's
   * supports, in the order of its sources, each source once by its address, then its supports in
   * order), `start` and `end` in characters (code points) of the text: the `url_citation`s of its
   * whole answer to OpenAI's clients.
   */
  groundedSpans?: GroundedSpan[];
}

/** A source placed in the text: its address and title, and the span, in code points. */
export interface GroundedSpan { url: string; title: string; start: number; end: number }

/** A tool call as a stream ends with it. */
export interface ExpectedCall {
  index: number;
  id: string;
  name: string;
  arguments: string;
  done: boolean;
  valid?: boolean;
  /** Gemini's thoughtSignature of the call's part. */
  signature?: string;
  /** A call of a tool the API defines: its item type (Responses'). */
  type?: string;
  /** The provider's own tool's result, as sent. */
  result?: string;
}

export interface Fixture {
  name: string;
  format: ModelFormat;
  /** ModelStream's `choice` option, when not the default. */
  choice?: number;
  /** What the fixture shows. */
  note: string;
  body: string;
  bytes: Uint8Array;
  expected: Expected;
}

const enc = new TextEncoder();
const utf8Length = (s: string) => enc.encode(s).length;

/** The body with every LF turned into CR LF. */
const crlf = (s: string) => s.replace(/\n/g, '\r\n');

/** Byte offset of `needle` (which must occur once) in `body`, plus `chars` UTF-16 units into it. */
function at(body: string, needle: string, chars = 0): number {
  const i = body.indexOf(needle);
  if (i < 0 || body.indexOf(needle, i + 1) >= 0) throw new Error(`fixture offset: ${JSON.stringify(needle)} must occur exactly once`);
  return utf8Length(body.slice(0, i + chars));
}

// ---------------------------------------------------------------------------------------------
// The reference reader

/** One provider frame (SSE event, line) or comment, with its place in the bytes. */
export interface Frame {
  kind: 'event' | 'comment';
  /** What the frame is to the format. */
  role: 'delta' | 'completion' | 'error' | 'bad' | 'other' | 'comment';
  /** Byte offsets: the frame's first byte, its JSON's first byte and end, the byte after its terminator. */
  start: number; dataStart: number; dataEnd: number; end: number;
  /** The terminator ends with CR LF: a reader may see the frame one byte before `end`. */
  crlf: boolean;
  /** An unterminated last line: read at flush(). */
  atFlush: boolean;
  /** SSE event type ('message' when none), '' for lines. */
  type: string;
  /** SSE data, or the line's JSON (ddg: after `data: `). */
  data: string;
  /** The answer and reasoning deltas of the frame, as sent. */
  text: string;
  reasoning: string;
  /** The raw JSON string literals of the frame's answer deltas (what a relay copies). */
  literals: string[];
  /** OpenAI only: choices[0].delta.content of the chunk, as a client that follows choices[0] reads it. */
  clientContent: string;
  /** The comment's text (kind 'comment'). */
  comment?: string;
  /** What the frame does to the message's tool calls, in order. */
  calls: CallOp[];
  /** Reasoning blocks: the frame ends one, or brings a signature or a redacted block's data. */
  reasoningEnd?: boolean;
  signature?: string;
  redacted?: string;
}

/** A frame's doing to the tool calls (as the contract reads each format, computed with JSON.parse). */
export type CallOp =
  | { op: 'begin'; key: number; id: string; name: string; server: boolean; input?: string; type?: string; signature?: string }
  | { op: 'args'; key: number; text: string; ifNone?: boolean }
  | { op: 'whole'; id: string; name: string; args: string; signature?: string }
  // a Gemini functionCall part: whole (args), or a part of a call whose arguments come as partialArgs
  | { op: 'gemini'; id: string; name?: string; args?: string; more: boolean; partials: Partial[]; signature?: string }
  | { op: 'end'; key: number }
  | { op: 'endAll' }
  // a server tool's result (Anthropic's *_tool_result block): for the server call with its id
  | { op: 'result'; id: string; name: string; text: string };

export interface Reference {
  /** Frames in stream order up to the one that ends the reading (completion, error, bad event). */
  frames: Frame[];
  text: string;
  reasoning: string;
  status: FinalStatus;
  finishReason?: string;
  usage?: Record<string, unknown>;
  events: number;
  comments: string[];
  error?: { code: ModelErrorCode; message?: string; offset: number; providerCode?: string };
  /** The body is one plain JSON error document, not a stream. */
  plainBody: boolean;
  /** The tool calls at the end, client's and server's. */
  toolCalls: ExpectedCall[];
  serverToolCalls: ExpectedCall[];
  /** Signatures and redacted data of the reasoning blocks, in order. */
  signatures: string[];
  /** The client's tool calls as a relay's client reads them: the fragments joined (a start's input once the call ended without any). */
  clientCalls: { id: string; name: string; arguments: string }[];
  /** Gemini's sources placed in the text (see Expected.groundedSpans), when its grounding metadata placed any. */
  groundedSpans?: GroundedSpan[];
}

/** One of Vertex's partialArgs: its JSON path, its value (a string's piece, or any other value), and whether the string goes on. */
export interface Partial { path: string; value: unknown; more: boolean }

type Path = (string | number)[];

/** `$.a.b[0]['c.d']` as its steps (the shapes the fixtures use). */
function pathSteps(p: string): Path {
  if (!p.startsWith('$')) throw new Error(`reference: jsonPath ${p}`);
  const out: Path = [];
  for (const m of p.slice(1).matchAll(/\.([^.[]+)|\[(\d+)\]|\['([^']*)'\]/g)) out.push(m[1] ?? (m[2] !== undefined ? Number(m[2]) : m[3]));
  return out;
}

/**
 * A Gemini call whose arguments come in parts, read as a tree: each partialArg sets (or, for the
 * next piece of an open string, extends) the value at its path. Its arguments so far are the
 * tree's JSON without the closing characters of what is still open: the containers of the last
 * value written (the root included) and the open string's quote.
 */
class PartTree {
  root: Record<string, unknown> = {};
  depth = 1;
  open: string | null = null;
  private leaf: { parent: Record<string | number, unknown>; key: string | number } | null = null;

  set(pa: Partial): void {
    if (this.open !== null && this.open === pa.path && typeof pa.value === 'string') {
      this.leaf!.parent[this.leaf!.key] = `${this.leaf!.parent[this.leaf!.key] as string}${pa.value}`;
      if (!pa.more) this.open = null;
      return;
    }
    const steps = pathSteps(pa.path);
    let node: Record<string | number, unknown> = this.root;
    for (let i = 0; i < steps.length - 1; i++) {
      node[steps[i]] ??= typeof steps[i + 1] === 'number' ? [] : {};
      node = node[steps[i]] as Record<string | number, unknown>;
    }
    const key = steps[steps.length - 1];
    node[key] = pa.value;
    this.leaf = { parent: node, key };
    this.depth = steps.length;
    this.open = typeof pa.value === 'string' && pa.more ? pa.path : null;
  }

  text(): string {
    const s = JSON.stringify(this.root);
    return s.slice(0, s.length - this.depth - (this.open !== null ? 1 : 0));
  }
}

/** The tool calls of a message, as frames change them: the contract's reading, with JSON.parse. */
export class CallBook {
  readonly calls: (ExpectedCall & { key: number; server: boolean; fallback: string })[] = [];
  private last: CallBook['calls'][number] | null = null;
  /** Gemini: the call whose arguments come in parts, while it is open. */
  private part: { call: CallBook['calls'][number]; tree: PartTree } | null = null;

  /** The call in parts ends: its arguments the tree's JSON. */
  private partEnd(): { call?: CallBook['calls'][number]; text: string } {
    const p = this.part;
    if (p === null) return { text: '' };
    this.part = null;
    const before = p.call.arguments;
    p.call.arguments = JSON.stringify(p.tree.root);
    this.end(p.call);
    return { call: p.call, text: p.call.arguments.slice(before.length) };
  }

  private gemini(op: Extract<CallOp, { op: 'gemini' }>): { call?: CallBook['calls'][number]; began: boolean; text: string } {
    let text = '';
    if (op.name !== undefined && this.part !== null) this.partEnd();
    let began = false;
    if (this.part === null && (op.more || op.partials.length > 0)) {
      const c = this.make(-1, false);
      Object.assign(c, { id: op.id, name: op.name ?? '' });
      if (op.signature !== undefined) c.signature = op.signature;
      this.last = null;
      this.part = { call: c, tree: new PartTree() };
      began = true;
      c.arguments = '{';
      text = '{';
    }
    const p = this.part;
    if (p !== null) {
      const before = p.call.arguments;
      for (const pa of op.partials) p.tree.set(pa);
      p.call.arguments = p.tree.text();
      text += p.call.arguments.slice(before.length);
      if (!op.more) text += this.partEnd().text;
      return { call: p.call, began, text };
    }
    if (op.name === undefined && op.args === undefined && op.id === '') return { began: false, text: '' }; // (the end of no call in parts)
    const c = this.make(-1, false);
    this.last = null;
    Object.assign(c, { id: op.id, name: op.name ?? '', arguments: op.args ?? '{}' });
    if (op.signature !== undefined) c.signature = op.signature;
    this.end(c);
    return { call: c, began: true, text: c.arguments };
  }

  private find(key: number, id: string, server: boolean) {
    if (key >= 0) {
      for (const kind of [false, true]) {
        const list = this.calls.filter((c) => c.server === kind && c.key === key && !c.done);
        if (list.length) return list[list.length - 1];
      }
      return undefined;
    }
    if (id !== '') return this.calls.find((c) => c.server === server && c.id === id);
    return this.last !== null && this.last.server === server ? this.last : undefined;
  }

  private make(key: number, server: boolean): CallBook['calls'][number] {
    const c: CallBook['calls'][number] = { index: this.calls.filter((x) => x.server === server).length, id: '', name: '', arguments: '', done: false, key, server, fallback: '' };
    this.calls.push(c);
    return c;
  }

  /** Applies a frame's op; says which call it touched, whether it began it, and the argument text it appended. */
  apply(op: CallOp): { call?: CallBook['calls'][number]; began: boolean; text: string } {
    if (op.op === 'begin') {
      let c = this.find(op.key, op.id, op.server);
      // (another id at the key of an open call: another call (Ollama gives every call index 0))
      if (c !== undefined && op.key >= 0 && op.id !== '' && c.id !== '' && c.id !== op.id) c = undefined;
      const began = c === undefined;
      if (c === undefined) c = this.make(op.key, op.server);
      this.last = c;
      if (c.id === '' && op.id !== '') c.id = op.id;
      if (c.name === '' && op.name !== '') c.name = op.name;
      if (op.input !== undefined) c.fallback = op.input;
      if (op.type !== undefined) c.type = op.type;
      if (op.signature !== undefined && c.signature === undefined) c.signature = op.signature;
      return { call: c, began, text: '' };
    }
    if (op.op === 'args') {
      let c = this.find(op.key, '', false);
      const began = c === undefined;
      if (c === undefined) c = this.make(op.key, false);
      this.last = c;
      if (op.ifNone && (c.arguments !== '' || op.text === '')) return { call: c, began, text: '' };
      c.arguments += op.text;
      return { call: c, began, text: op.text };
    }
    if (op.op === 'gemini') return this.gemini(op);
    if (op.op === 'result') {
      let c = this.calls.find((x) => x.server && x.id === op.id);
      if (c === undefined) {
        c = this.make(-1, true);
        Object.assign(c, { id: op.id, name: op.name, fallback: '{}' });
        this.end(c);
      }
      c.result = op.text;
      return { began: false, text: '' };
    }
    if (op.op === 'whole') {
      const c = this.make(-1, false);
      this.last = null;
      Object.assign(c, { id: op.id, name: op.name, arguments: op.args });
      this.end(c);
      return { call: c, began: true, text: op.args };
    }
    if (op.op === 'end') {
      for (const c of this.calls) if (c.key === op.key && !c.done) this.end(c);
    } else {
      const ended = this.partEnd();
      for (const c of this.calls) if (!c.done) this.end(c);
      if (ended.call !== undefined) return { call: ended.call, began: false, text: ended.text };
    }
    return { began: false, text: '' };
  }

  private end(c: CallBook['calls'][number]): void {
    c.done = true;
    if (c.arguments === '') c.arguments = c.fallback;
    try { JSON.parse(c.arguments); c.valid = true; } catch { c.valid = false; }
  }

  /** The calls of one kind, as a stream reports them. */
  of(server: boolean): ExpectedCall[] {
    return this.calls.filter((c) => c.server === server).map((c) => {
      const args = c.arguments === '' ? c.fallback : c.arguments;
      const out: ExpectedCall = { index: c.index, id: c.id, name: c.name, arguments: args, done: c.done };
      if (c.valid !== undefined) out.valid = c.valid;
      if (c.signature !== undefined) out.signature = c.signature;
      if (c.type !== undefined) out.type = c.type;
      if (c.result !== undefined) out.result = c.result;
      return out;
    });
  }
}

interface RawLine { text: string; start: number; contentEnd: number; end: number; crlf: boolean; terminated: boolean }

/** UTF-8 offset of each UTF-16 index of `s` (s has no lone surrogates). */
function byteIndex(s: string): number[] {
  const off = new Array<number>(s.length + 1);
  let b = 0;
  for (let i = 0; i < s.length; i++) {
    off[i] = b;
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) { off[i + 1] = b + 2; b += 4; i++; continue; }
    b += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
  }
  off[s.length] = b;
  return off;
}

/** Lines at CR LF, LF or a lone CR, with byte offsets. */
function scanLines(s: string, off: number[]): RawLine[] {
  const lines: RawLine[] = [];
  let i = 0;
  while (i < s.length) {
    let j = i;
    while (j < s.length && s[j] !== '\n' && s[j] !== '\r') j++;
    if (j === s.length) { lines.push({ text: s.slice(i), start: off[i], contentEnd: off[j], end: off[j], crlf: false, terminated: false }); break; }
    const two = s[j] === '\r' && s[j + 1] === '\n';
    const k = j + (two ? 2 : 1);
    lines.push({ text: s.slice(i, j), start: off[i], contentEnd: off[j], end: off[k], crlf: two, terminated: true });
    i = k;
  }
  return lines;
}

interface RawEvent { type: string; data: string; start: number; dataStart: number; dataEnd: number; end: number; crlf: boolean }
type RawItem = { kind: 'event'; ev: RawEvent } | { kind: 'comment'; text: string; start: number; contentEnd: number; end: number; crlf: boolean };

/** The WHATWG event stream interpretation, with each event's byte offsets. */
function scanSse(s: string, off: number[]): RawItem[] {
  const items: RawItem[] = [];
  let data: string[] = [];
  let type = '';
  let start = -1;
  let dataStart = -1;
  let dataEnd = -1;
  for (const line of scanLines(s, off)) {
    if (!line.terminated) break; // the stream ended inside a line: that event is never dispatched
    if (line.text === '') {
      if (data.length) items.push({ kind: 'event', ev: { type: type || 'message', data: data.join('\n'), start, dataStart, dataEnd, end: line.end, crlf: line.crlf } });
      data = []; type = ''; start = -1;
      continue;
    }
    if (line.text.startsWith(':')) {
      items.push({ kind: 'comment', text: line.text.slice(1).replace(/^ /, ''), start: line.start, contentEnd: line.contentEnd, end: line.end, crlf: line.crlf });
      continue;
    }
    if (start < 0) start = line.start;
    const c = line.text.indexOf(':');
    const field = c < 0 ? line.text : line.text.slice(0, c);
    let vi = c < 0 ? line.text.length : c + 1;
    if (line.text[vi] === ' ') vi++;
    const value = line.text.slice(vi);
    if (field === 'data') {
      if (!data.length) dataStart = line.start + utf8Length(line.text.slice(0, vi));
      dataEnd = line.contentEnd;
      data.push(value);
    } else if (field === 'event') type = value;
  }
  return items;
}

/** Every event and comment of an SSE body by the scanner above (the whole body, not only up to an error). */
export function scanSseBody(s: string): { events: { type: string; data: string }[]; comments: string[] } {
  const items = scanSse(s, byteIndex(s));
  return {
    events: items.flatMap((it) => (it.kind === 'event' ? [{ type: it.ev.type, data: it.ev.data }] : [])),
    comments: items.flatMap((it) => (it.kind === 'comment' ? [it.text] : [])),
  };
}

/** The same stream read by eventsource-parser: the second opinion on events and comments. */
export function eventsourceParse(s: string): { events: { type: string; data: string }[]; comments: string[] } {
  const events: { type: string; data: string }[] = [];
  const comments: string[] = [];
  const p = createParser({ onEvent: (e) => events.push({ type: e.event ?? 'message', data: e.data }), onComment: (c) => comments.push(c) });
  p.feed(s);
  return { events, comments };
}

/**
 * Where a JSON text stops being a prefix of some valid JSON text (a UTF-16 index), with
 * `truncated` when all of it is such a prefix but incomplete; null when it is valid JSON.
 */
export function jsonErrorAt(s: string): { at: number; truncated: boolean } | null {
  let i = 0;
  class Stop { constructor(readonly at: number) {} }
  const stop = (): never => { throw new Stop(i); };
  const ws = () => { while (i < s.length && ' \t\n\r'.includes(s[i])) i++; };
  const need = (pred: (c: string) => boolean) => { if (i >= s.length || !pred(s[i])) stop(); i++; };
  const digit = (c: string) => c >= '0' && c <= '9';
  const str = () => {
    need((c) => c === '"');
    for (;;) {
      if (i >= s.length) stop();
      const c = s[i];
      if (c === '"') { i++; return; }
      if (c.charCodeAt(0) < 0x20) stop();
      if (c === '\\') {
        i++;
        if (i >= s.length) stop();
        if (s[i] === 'u') { i++; for (let k = 0; k < 4; k++) need((h) => /[0-9a-fA-F]/.test(h)); } else need((e) => '"\\/bfnrt'.includes(e));
      } else i++;
    }
  };
  const num = () => {
    if (s[i] === '-') i++;
    if (s[i] === '0') i++; else { need((c) => c >= '1' && c <= '9'); while (i < s.length && digit(s[i])) i++; }
    if (s[i] === '.') { i++; need(digit); while (i < s.length && digit(s[i])) i++; }
    if (s[i] === 'e' || s[i] === 'E') { i++; if (s[i] === '+' || s[i] === '-') i++; need(digit); while (i < s.length && digit(s[i])) i++; }
  };
  const value = (): void => {
    ws();
    if (i >= s.length) stop();
    const c = s[i];
    if (c === '{') {
      i++; ws();
      if (s[i] === '}') { i++; return; }
      for (;;) { ws(); str(); ws(); need((x) => x === ':'); value(); ws(); if (s[i] === ',') { i++; continue; } need((x) => x === '}'); return; }
    }
    if (c === '[') {
      i++; ws();
      if (s[i] === ']') { i++; return; }
      for (;;) { value(); ws(); if (s[i] === ',') { i++; continue; } need((x) => x === ']'); return; }
    }
    if (c === '"') return str();
    if (c === '-' || digit(c)) return num();
    for (const lit of ['true', 'false', 'null']) if (c === lit[0]) { for (const l of lit) need((x) => x === l); return; }
    stop();
  };
  try {
    value(); ws();
    if (i < s.length) stop();
    return null;
  } catch (e) {
    if (!(e instanceof Stop)) throw e;
    return { at: e.at, truncated: e.at >= s.length };
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The raw JSON literal of each string member named `key` that holds one of `values`, in order.
 * With `parts` (every string the document holds under `key`, in order, and whether it is one of
 * `values`), each part takes the next literal of its value in document order: a part of the same
 * value but another role before it (Gemini's reasoning part, spelled with other escapes) keeps its own.
 */
function literalsOf(json: string, key: string, values: string[], parts?: { text: string; answer: boolean }[]): string[] {
  const re = new RegExp(`"${key}"\\s*:\\s*("(?:[^"\\\\]|\\\\.)*")`, 'g');
  const found = [...json.matchAll(re)].map((m) => m[1]);
  const out: string[] = [];
  if (parts !== undefined) {
    let at = 0;
    for (const p of parts) {
      while (at < found.length && JSON.parse(found[at]) !== p.text) at++;
      if (at === found.length) throw new Error(`reference: no literal for ${JSON.stringify(p.text)} under "${key}"`);
      if (p.answer) out.push(found[at]);
      at++;
    }
    return out;
  }
  for (const v of values) {
    const k = found.findIndex((lit) => JSON.parse(lit) === v);
    if (k < 0) throw new Error(`reference: no literal for ${JSON.stringify(v)} under "${key}"`);
    out.push(found.splice(k, 1)[0]);
  }
  return out;
}

interface Reading {
  role: Frame['role'];
  calls?: CallOp[];
  reasoningEnd?: boolean; signature?: string; redacted?: string;
  text?: string; reasoning?: string; finishReason?: string;
  usage?: Obj; mergeUsage?: Obj;
  message?: string;
  /** The provider's code of an error (Bedrock's failed turn: its stop reason). */
  providerCode?: string;
  /** The member that holds the answer text (for the raw literal). */
  textKey?: string;
  /** The answer's pieces when the frame has several (Gemini's parts), for their raw literals. */
  texts?: string[];
  /** Every text part of the document in order (Gemini's), and whether it is one of `texts`. */
  textParts?: { text: string; answer: boolean }[];
  /** Gemini: the followed candidate's groundingMetadata. */
  grounding?: Obj;
  /** Signatures when the frame has several (Gemini's parts). */
  signatures?: string[];
  clientContent?: string;
}

/** Responses' items of the tools the API defines that a client may run, and their tools' names ('': the item's own name). */
/** A hosted tool's item at its end: its call's arguments, the item's members but its envelope (and an image generation's result). */
function hosted(item: Obj): string {
  const { type: _t, id: _i, call_id: _c, status: _s, created_by: _b, ...args } = item;
  if (item.type === 'image_generation_call') delete args.result;
  return JSON.stringify(args);
}

const BUILTIN: Record<string, string> = {
  computer_call: 'computer', local_shell_call: 'local_shell', shell_call: 'shell', apply_patch_call: 'apply_patch', tool_search_call: 'tool_search',
  mcp_approval_request: '',
};

/** Bedrock's stop reasons that say the model's turn failed (ConverseStream's StopReason). */
const BEDROCK_FAILED = new Set(['malformed_tool_use', 'malformed_model_output']);

const errorText = (e: unknown): string => (typeof e === 'string' ? e : isObj(e) && typeof e.message === 'string' ? e.message : JSON.stringify(e));

function interpret(format: ModelFormat, type: string, data: string, choice: number): Reading {
  if (format === 'openai' && data === '[DONE]') return { role: 'completion' };
  if (format === 'ddg' && data === '[DONE]') return { role: 'completion' };
  const bad = jsonErrorAt(data);
  if (bad) return { role: 'bad' };
  const v: unknown = JSON.parse(data);
  if (!isObj(v)) return { role: 'other' };
  switch (format) {
    case 'openai': {
      if (v.error != null) return { role: 'error', message: errorText(v.error) };
      const r: Reading = { role: 'other' };
      const choices = Array.isArray(v.choices) ? v.choices : [];
      const c0 = choices[0];
      if (isObj(c0) && isObj(c0.delta) && typeof c0.delta.content === 'string') r.clientContent = c0.delta.content;
      // the choice whose index is the option; in chunks that give no index, the one at that position
      const byPosition = choices.every((c) => !isObj(c) || c.index === undefined);
      for (const [i, c] of choices.entries()) {
        if (!isObj(c) || (byPosition ? i !== choice : c.index !== choice)) continue;
        const d = isObj(c.delta) ? c.delta : {};
        if (typeof d.content === 'string') { r.text = d.content; r.textKey = 'content'; r.role = 'delta'; }
        if (Array.isArray(d.content)) {
          // Mistral's parts: text parts are text, thinking parts (a string, or text parts) reasoning
          for (const part of d.content) {
            if (!isObj(part)) continue;
            if ((part.type === 'text' || part.type === undefined) && typeof part.text === 'string') { r.text = (r.text ?? '') + part.text; r.textKey = 'text'; r.role = 'delta'; }
            if (typeof part.thinking === 'string') r.reasoning = (r.reasoning ?? '') + part.thinking;
            if (Array.isArray(part.thinking)) for (const t of part.thinking) if (isObj(t) && typeof t.text === 'string') r.reasoning = (r.reasoning ?? '') + t.text;
          }
        }
        // (both: one text said twice, reasoning_content's read unless it is empty)
        if (typeof d.reasoning === 'string') r.reasoning = d.reasoning;
        if (typeof d.reasoning_content === 'string' && (d.reasoning_content !== '' || typeof d.reasoning !== 'string')) r.reasoning = d.reasoning_content;
        // (OpenRouter's reasoning_details: a text's or a summary's item is reasoning, the same text
        // its `reasoning` says again, then read from here; a text's signature ends its block; an
        // Anthropic model's encrypted data is a redacted block's, another model's no signature)
        if (Array.isArray(d.reasoning_details)) {
          let said: string | undefined;
          for (const x of d.reasoning_details) {
            if (!isObj(x)) continue;
            const t = x.type === 'reasoning.text' ? x.text : x.type === 'reasoning.summary' ? x.summary : undefined;
            if (typeof t === 'string') said = (said ?? '') + t;
            if (x.type === 'reasoning.text' && typeof x.signature === 'string' && x.signature !== '') { r.signature = x.signature; r.reasoningEnd = true; }
            if (x.type === 'reasoning.encrypted' && x.format === 'anthropic-claude-v1' && typeof x.data === 'string' && x.data !== '') r.redacted = x.data;
          }
          if (said !== undefined) r.reasoning = said;
        }
        if (Array.isArray(d.tool_calls)) {
          for (const tc of d.tool_calls) {
            if (!isObj(tc)) continue;
            const key = typeof tc.index === 'number' ? tc.index : -1;
            const fn = isObj(tc.function) ? tc.function : {};
            const id = typeof tc.id === 'string' ? tc.id : '';
            const name = typeof fn.name === 'string' ? fn.name : '';
            // (Gemini's signature of the call, from Google's OpenAI-compatible API)
            const g = isObj(tc.extra_content) && isObj(tc.extra_content.google) ? tc.extra_content.google.thought_signature : undefined;
            const signature = typeof g === 'string' ? g : undefined;
            if (typeof tc.id === 'string' || name !== '' || signature !== undefined) (r.calls ??= []).push({ op: 'begin', key, id, name, server: false, ...(signature !== undefined ? { signature } : {}) });
            if (typeof fn.arguments === 'string') (r.calls ??= []).push({ op: 'args', key, text: fn.arguments });
          }
        }
        if (typeof c.finish_reason === 'string') { r.finishReason = c.finish_reason; (r.calls ??= []).push({ op: 'endAll' }); }
      }
      if (isObj(v.usage)) r.usage = v.usage;
      return r;
    }
    case 'openai-responses': {
      const t = v.type;
      if (t !== type) throw new Error(`reference: event ${type} holds type ${String(t)}`);
      const resp = isObj(v.response) ? v.response : {};
      if (t === 'response.output_text.delta') return { role: 'delta', text: v.delta as string, textKey: 'delta' };
      if ((t === 'response.reasoning_text.delta' || t === 'response.reasoning_summary_text.delta') && typeof v.delta === 'string') return { role: 'other', reasoning: v.delta };
      const key = typeof v.output_index === 'number' ? v.output_index : -1;
      const item = isObj(v.item) ? v.item : undefined;
      if (t === 'response.function_call_arguments.delta' && typeof v.delta === 'string') return { role: 'other', calls: [{ op: 'args', key, text: v.delta }] };
      if (t === 'response.function_call_arguments.done' && typeof v.arguments === 'string') return { role: 'other', calls: [{ op: 'args', key, text: v.arguments, ifNone: true }] };
      if ((t === 'response.output_item.added' || t === 'response.output_item.done') && item !== undefined && typeof item.type === 'string') {
        const done = t === 'response.output_item.done';
        const calls: CallOp[] = [];
        if (item.type === 'function_call') {
          calls.push({ op: 'begin', key, id: typeof item.call_id === 'string' ? item.call_id : '', name: typeof item.name === 'string' ? item.name : '', server: false });
          if (typeof item.arguments === 'string') calls.push({ op: 'args', key, text: item.arguments, ifNone: true });
        } else if (item.type === 'reasoning') {
          return { role: 'other', reasoningEnd: done };
        } else if (Object.hasOwn(BUILTIN, item.type)) {
          // a tool the API defines: whole at its item's end, which says who runs it
          if (!done) return { role: 'other' };
          const env = item.environment;
          const client = item.type === 'shell_call' ? env === null || env === undefined || (isObj(env) && env.type === 'local')
            : item.type === 'tool_search_call' ? item.execution === 'client' : true;
          const str = (x: unknown) => (typeof x === 'string' ? x : '');
          if (client) {
            const { type: _t, id: _i, call_id: _c, status: _s, created_by: _b, ...args } = item;
            calls.push({ op: 'begin', key, id: str(item.type === 'mcp_approval_request' ? item.id : item.call_id), name: BUILTIN[item.type] || str(item.name), server: false, type: item.type });
            calls.push({ op: 'args', key, text: JSON.stringify(args) });
          } else {
            calls.push({ op: 'begin', key, id: str(item.id), name: item.type, server: true, input: hosted(item) });
          }
        } else if (item.type !== 'message') {
          calls.push({ op: 'begin', key, id: typeof item.id === 'string' ? item.id : '', name: item.type, server: true, input: done ? hosted(item) : undefined });
        }
        if (done && calls.length) calls.push({ op: 'end', key });
        return { role: 'other', calls };
      }
      if (t === 'response.completed') return { role: 'completion', finishReason: (resp.status as string) ?? 'completed', usage: resp.usage as Obj };
      if (t === 'response.failed') return { role: 'error', message: errorText(resp.error) };
      // (an error event's message at its top, or in its `error` object, with its code)
      if (t === 'error') {
        const e = typeof v.message === 'string' || !isObj(v.error) ? v : v.error;
        const code = [v.code, isObj(v.error) ? v.error.code : undefined, isObj(v.error) ? v.error.type : undefined].find((c) => typeof c === 'string');
        return { role: 'error', message: errorText(e), ...(code !== undefined ? { providerCode: code as string } : {}) };
      }
      return { role: 'other' };
    }
    case 'anthropic': {
      const t = v.type;
      if (t !== type) throw new Error(`reference: event ${type} holds type ${String(t)}`);
      if (t === 'content_block_delta' && isObj(v.delta)) {
        if (v.delta.type === 'text_delta') return typeof v.delta.text === 'string' ? { role: 'delta', text: v.delta.text, textKey: 'text' } : { role: 'other' };
        if (v.delta.type === 'thinking_delta') return { role: 'other', reasoning: v.delta.thinking as string };
        if (v.delta.type === 'signature_delta') return { role: 'other', signature: v.delta.signature as string };
        if (v.delta.type === 'input_json_delta' && typeof v.index === 'number') return { role: 'other', calls: [{ op: 'args', key: v.index, text: v.delta.partial_json as string }] };
        return { role: 'other' };
      }
      if (t === 'content_block_start' && isObj(v.content_block) && typeof v.index === 'number') {
        const b = v.content_block;
        if (b.type === 'tool_use' || b.type === 'server_tool_use' || b.type === 'mcp_tool_use') {
          return { role: 'other', calls: [{ op: 'begin', key: v.index, id: String(b.id ?? ''), name: String(b.name ?? ''), server: b.type !== 'tool_use', input: isObj(b.input) ? JSON.stringify(b.input) : undefined }] };
        }
        if (b.type === 'redacted_thinking' && typeof b.data === 'string') return { role: 'other', redacted: b.data };
        // (the fixtures' blocks are compact: JSON.stringify gives them as sent)
        if (typeof b.type === 'string' && b.type.endsWith('_tool_result') && typeof b.tool_use_id === 'string') {
          return { role: 'other', calls: [{ op: 'result', id: b.tool_use_id, name: b.type.slice(0, -'_tool_result'.length), text: JSON.stringify(b) }] };
        }
        return { role: 'other' };
      }
      if (t === 'content_block_stop' && typeof v.index === 'number') return { role: 'other', reasoningEnd: true, calls: [{ op: 'end', key: v.index }] };
      if (t === 'message_start' && isObj(v.message) && isObj(v.message.usage)) return { role: 'other', usage: v.message.usage };
      if (t === 'message_delta') {
        const r: Reading = { role: 'other' };
        if (isObj(v.delta) && typeof v.delta.stop_reason === 'string') r.finishReason = v.delta.stop_reason;
        if (isObj(v.usage)) r.mergeUsage = v.usage;
        return r;
      }
      if (t === 'message_stop') return { role: 'completion', calls: [{ op: 'endAll' }] };
      if (t === 'error') return { role: 'error', message: errorText(v.error), ...(isObj(v.error) && typeof v.error.type === 'string' ? { providerCode: v.error.type } : {}) };
      return { role: 'other' };
    }
    case 'ollama': {
      if (v.error != null) return { role: 'error', message: errorText(v.error) };
      const r: Reading = { role: 'other' };
      if (isObj(v.message) && typeof v.message.thinking === 'string') r.reasoning = v.message.thinking;
      if (typeof v.thinking === 'string') r.reasoning = (r.reasoning ?? '') + v.thinking;
      if (isObj(v.message) && typeof v.message.content === 'string') { r.text = v.message.content; r.textKey = 'content'; r.role = 'delta'; }
      if (typeof v.response === 'string') { r.text = v.response; r.textKey = 'response'; r.role = 'delta'; }
      if (isObj(v.message) && Array.isArray(v.message.tool_calls)) {
        // a call's arguments: a string's text, or an object's JSON text as it came
        const raw = rawValues(data, 'arguments');
        let k = 0;
        for (const tc of v.message.tool_calls) {
          if (!isObj(tc)) continue;
          const fn = isObj(tc.function) ? tc.function : {};
          const text = fn.arguments === undefined ? '' : typeof fn.arguments === 'string' ? fn.arguments : raw[k];
          if (fn.arguments !== undefined) k++;
          (r.calls ??= []).push({ op: 'whole', id: typeof tc.id === 'string' ? tc.id : '', name: typeof fn.name === 'string' ? fn.name : '', args: text });
        }
      }
      if (v.done === true) {
        r.role = 'completion';
        if (typeof v.done_reason === 'string') r.finishReason = v.done_reason;
        const usage: Obj = {};
        for (const [k, x] of Object.entries(v)) if (typeof x === 'number') usage[k] = x;
        r.usage = usage;
      }
      return r;
    }
    case 'gemini': {
      // a GenerateContentResponse (ai.google.dev/api/generate-content), or {"error": {code, message, status}}
      if (v.error != null) return { role: 'error', message: errorText(v.error), ...(isObj(v.usageMetadata) ? { usage: v.usageMetadata } : {}) };
      const r: Reading = { role: 'other' };
      const cands = Array.isArray(v.candidates) ? v.candidates : [];
      const byPosition = cands.every((c) => !isObj(c) || c.index === undefined);
      const rawArgs = rawValues(data, 'args');
      let k = 0;
      for (const [i, c] of cands.entries()) {
        const parts = isObj(c) && isObj(c.content) && Array.isArray(c.content.parts) ? c.content.parts : [];
        // (a candidate without an index beside one with: candidate 0, whose zero proto3's JSON leaves out)
        const followed = isObj(c) && (byPosition ? i === choice : (c.index ?? 0) === choice);
        for (const part of parts) {
          if (!isObj(part)) continue;
          const args = isObj(part.functionCall) ? part.functionCall.args : undefined;
          const raw = args === undefined ? undefined : rawArgs[k++];
          if (typeof part.text === 'string') (r.textParts ??= []).push({ text: part.text, answer: followed && part.thought !== true });
          if (!followed) continue;
          if (typeof part.text === 'string') {
            if (part.thought === true) r.reasoning = (r.reasoning ?? '') + part.text;
            else { r.text = (r.text ?? '') + part.text; (r.texts ??= []).push(part.text); r.textKey = 'text'; r.role = 'delta'; }
          }
          const signature = typeof part.thoughtSignature === 'string' ? part.thoughtSignature : undefined;
          if (signature !== undefined) {
            // a call's part: the signature is the call's; any other part's ends a reasoning block
            if (!isObj(part.functionCall)) (r.signatures ??= []).push(signature);
            r.reasoningEnd = true;
          }
          if (isObj(part.functionCall)) {
            const fc = part.functionCall;
            const text = args === undefined || args === null || typeof args === 'string' ? undefined : raw!;
            const partials: Partial[] = [];
            for (const pa of Array.isArray(fc.partialArgs) ? fc.partialArgs : []) {
              if (!isObj(pa) || typeof pa.jsonPath !== 'string') continue;
              const value = 'stringValue' in pa ? pa.stringValue : 'numberValue' in pa ? pa.numberValue : 'boolValue' in pa ? pa.boolValue : 'nullValue' in pa ? null : undefined;
              if (value !== undefined) partials.push({ path: pa.jsonPath, value, more: pa.willContinue === true });
            }
            const op: CallOp = { op: 'gemini', id: typeof fc.id === 'string' ? fc.id : '', more: fc.willContinue === true, partials };
            if (typeof fc.name === 'string') op.name = fc.name;
            if (text !== undefined) op.args = text;
            if (signature !== undefined) op.signature = signature;
            (r.calls ??= []).push(op);
          }
        }
        if (followed && typeof c.finishReason === 'string') {
          r.role = 'completion';
          r.finishReason = c.finishReason;
        }
        if (followed && isObj(c.groundingMetadata)) r.grounding = c.groundingMetadata;
      }
      const pf = isObj(v.promptFeedback) ? v.promptFeedback : {};
      if (r.role !== 'completion' && typeof pf.blockReason === 'string') {
        r.role = 'completion';
        r.finishReason = pf.blockReason;
      }
      if (isObj(v.usageMetadata)) r.usage = v.usageMetadata;
      return r;
    }
    case 'bedrock': {
      // ConverseStream's events: the payload of a message, named by its :event-type
      const key = typeof v.contentBlockIndex === 'number' ? v.contentBlockIndex : -1;
      if (type === 'contentBlockDelta' && isObj(v.delta)) {
        const d = v.delta;
        const r: Reading = { role: 'other' };
        if (typeof d.text === 'string') Object.assign(r, { role: 'delta', text: d.text, textKey: 'text' });
        if (isObj(d.toolUse) && typeof d.toolUse.input === 'string') r.calls = [{ op: 'args', key, text: d.toolUse.input }];
        const rc = isObj(d.reasoningContent) ? d.reasoningContent : {};
        if (typeof rc.text === 'string') r.reasoning = rc.text;
        if (typeof rc.signature === 'string') r.signature = rc.signature;
        if (typeof rc.redactedContent === 'string') r.redacted = rc.redactedContent;
        return r;
      }
      if (type === 'contentBlockStart' && isObj(v.start) && isObj(v.start.toolUse)) {
        const t = v.start.toolUse;
        return { role: 'other', calls: [{ op: 'begin', key, id: String(t.toolUseId ?? ''), name: String(t.name ?? ''), server: t.type === 'server_tool_use', input: '{}' }] };
      }
      if (type === 'contentBlockStop') return { role: 'other', reasoningEnd: true, calls: [{ op: 'end', key }] };
      if (type === 'messageStop') {
        const reason = typeof v.stopReason === 'string' ? v.stopReason : undefined;
        if (reason !== undefined && BEDROCK_FAILED.has(reason)) return { role: 'error', finishReason: reason, providerCode: reason };
        return { role: 'completion', finishReason: reason, reasoningEnd: true };
      }
      if (type === 'metadata' && isObj(v.usage)) return { role: 'other', mergeUsage: v.usage };
      return { role: 'other' };
    }
    case 'bedrock-invoke': return interpret('anthropic', type, data, choice);
    case 'ddg': {
      if (v.error != null) return { role: 'error', message: errorText(v.error) };
      if (v.action === 'error') return { role: 'error', message: typeof v.type === 'string' ? v.type : 'error' };
      if (typeof v.message === 'string') return { role: 'delta', text: v.message, textKey: 'message' };
      if (typeof v.content === 'string') return { role: 'delta', text: v.content, textKey: 'content' };
      return { role: 'other' };
    }
  }
}

/** A frame as the framing found it (before the format reads it), with its place in the bytes. */
interface RawFrame {
  kind: 'event' | 'comment'; type: string; data: string; start: number; dataStart: number; dataEnd: number; end: number; crlf: boolean; atFlush: boolean;
  comment?: string;
  /** AWS's event stream: an exception message (its :exception-type), or damage to the framing (the error it is). */
  exception?: string;
  damage?: ModelErrorCode;
}

/**
 * AWS's binary event stream, message by message as AWS's codec decodes it: each event (its
 * :event-type, its payload; for bedrock-invoke a `chunk`'s base64 bytes decoded, named by the
 * event's own type), each exception; the damaged message where the codec refuses one; nothing of a
 * message the stream ends inside.
 */
function eventStreamFrames(bytes: Uint8Array, format: 'bedrock' | 'bedrock-invoke'): RawFrame[] {
  const dec = new TextDecoder();
  const out: RawFrame[] = [];
  for (let at = 0; bytes.length - at >= 12;) {
    const total = new DataView(bytes.buffer, bytes.byteOffset + at).getUint32(0);
    if (bytes.length - at < total) break; // (the stream ended inside this message)
    const place = { start: at, dataStart: at, dataEnd: at + total, end: at + total, crlf: false, atFlush: false };
    let m: ReturnType<typeof codec.decode>;
    try {
      m = codec.decode(bytes.subarray(at, at + total));
    } catch (e) {
      out.push({ kind: 'event', type: '', data: '', ...place, damage: /checksum/i.test(String(e)) ? 'ERR_CRC_MISMATCH' : 'ERR_BAD_FRAME' });
      break;
    }
    const header = (name: string) => String(m.headers[name]?.value ?? '');
    let data = dec.decode(m.body);
    let type = header(':event-type');
    if (header(':message-type') === 'exception') out.push({ kind: 'event', type: '', data, ...place, exception: header(':exception-type') });
    else if (header(':message-type') === 'error') {
      // (its code and message in headers; as an exception's payload, for the reading below)
      out.push({ kind: 'event', type: '', data: JSON.stringify({ message: header(':error-message') }), ...place, exception: header(':error-code') });
    } else if (header(':message-type') === 'event') {
      if (format === 'bedrock-invoke') {
        if (type !== 'chunk') { at += total; continue; } // (an event of another type: no model's)
        const b64 = (JSON.parse(data) as { bytes: string }).bytes;
        data = dec.decode(Buffer.from(b64, 'base64'));
        if (Buffer.from(data).toString('base64') !== b64) throw new Error(`reference: a chunk's bytes that are not base64: ${b64}`);
        const inner = jsonErrorAt(data) === null ? (JSON.parse(data) as { type?: unknown }).type : undefined;
        type = typeof inner === 'string' ? inner : 'message';
      }
      out.push({ kind: 'event', type, data, ...place });
    } else throw new Error(`reference: a message of type ${header(':message-type')}`);
    at += total;
  }
  return out;
}

/**
 * Reads a body as `format` the way the contract says, from the bytes up (a body in AWS's event
 * stream as its bytes).
 */
export function reference(body: string | Uint8Array, format: ModelFormat, choice = 0): Reference {
  const ref: Reference = {
    frames: [], text: '', reasoning: '', status: 'truncated', events: 0, comments: [], plainBody: false, toolCalls: [], serverToolCalls: [],
    signatures: [], clientCalls: [],
  };
  const book = new CallBook();
  let grounding: Obj | undefined;
  const calls = (): Reference => {
    ref.toolCalls = book.of(false);
    ref.serverToolCalls = book.of(true);
    ref.clientCalls = book.calls.filter((c) => !c.server).map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
    return ref;
  };

  let raw: RawFrame[];
  let length: number;
  if (isEventStream(format)) {
    const bytes = typeof body === 'string' ? enc.encode(body) : body;
    length = bytes.length;
    raw = eventStreamFrames(bytes, format);
  } else {
    if (typeof body !== 'string') throw new Error(`reference: ${format} is read from its text`);
    const off = byteIndex(body);
    length = off[body.length];

    // A plain JSON error document instead of a stream (Ollama's is an ordinary error line).
    const lead = body.length - body.trimStart().length;
    if (format !== 'ollama' && body[lead] === '{') {
      const v: unknown = JSON.parse(body);
      if (!isObj(v) || v.error === undefined) throw new Error('reference: a JSON body that is not an error');
      ref.plainBody = true;
      ref.events = 1;
      ref.status = 'failed';
      ref.error = { code: 'ERR_PROVIDER', message: errorText(v.error), offset: off[lead] };
      return ref;
    }

    if (format === 'ollama' || format === 'ddg') {
      raw = [];
      for (const l of scanLines(body, off)) {
        if (l.text.trim() === '') continue;
        let data = l.text;
        let skip = 0;
        if (format === 'ddg') {
          if (data.startsWith('data: ')) skip = 6; else if (data.startsWith('data:')) skip = 5; else if (data !== '[DONE]') throw new Error(`reference: ddg line ${data}`);
          data = data.slice(skip);
        }
        if (!l.terminated && data !== '[DONE]' && jsonErrorAt(data)?.truncated) break; // the stream ended inside this line
        raw.push({ kind: 'event', type: '', data, start: l.start, dataStart: l.start + skip, dataEnd: l.contentEnd, end: l.end, crlf: l.crlf, atFlush: !l.terminated });
      }
    } else {
      raw = scanSse(body, off).map((it) => (it.kind === 'comment'
        ? { kind: 'comment' as const, type: '', data: '', start: it.start, dataStart: it.start, dataEnd: it.contentEnd, end: it.end, crlf: it.crlf, atFlush: false, comment: it.text }
        : { kind: 'event' as const, ...it.ev, atFlush: false }));
    }
  }

  /** Bedrock's stop that says the turn failed: the stream fails there once the next message came. */
  let failedStop = false;
  for (const r of raw) {
    const { exception, damage, ...fr } = r;
    const frame: Frame = {
      ...fr, role: 'comment', text: '', reasoning: '', literals: [], clientContent: '', calls: [],
    };
    ref.frames.push(frame);
    if (failedStop) {
      // (an event after it counts, and its metadata's usage is the failed turn's; then the stream fails)
      frame.role = 'other';
      if (damage === undefined && exception === undefined) {
        ref.events++;
        const m = interpret(format, r.type, r.data, choice);
        if (m.mergeUsage !== undefined) ref.usage = { ...ref.usage, ...m.mergeUsage };
      }
      return calls();
    }
    if (damage !== undefined) {
      // (the framing's damage fails the stream wherever it comes)
      frame.role = 'bad';
      ref.status = 'failed';
      ref.error = { code: damage, offset: r.start };
      return calls();
    }
    if (ref.status === 'done') {
      // after the completion (Bedrock's stream is read to its end): an exception is passed over, an
      // event counts, and the metadata's usage is read
      frame.role = 'other';
      if (exception !== undefined) continue;
      ref.events++;
      const m = interpret(format, r.type, r.data, choice);
      if (m.mergeUsage !== undefined) ref.usage = { ...ref.usage, ...m.mergeUsage };
      continue;
    }
    if (r.kind === 'comment') { ref.comments.push(r.comment!); continue; }
    if (exception !== undefined) {
      frame.role = 'error';
      ref.status = 'failed';
      ref.error = { code: 'ERR_PROVIDER', message: errorText(JSON.parse(r.data)), offset: r.start, providerCode: exception };
      return calls();
    }
    ref.events++;
    const m = interpret(format, r.type || 'message', r.data, choice);
    frame.role = m.role;
    if (m.role === 'bad') {
      const bad = jsonErrorAt(r.data)!;
      ref.status = 'failed';
      ref.error = { code: 'ERR_BAD_EVENT', offset: isEventStream(format) ? r.start : r.dataStart + utf8Length(r.data.slice(0, bad.at)) };
      return calls();
    }
    if (m.role === 'error') {
      ref.status = 'failed';
      if (format === 'gemini' && m.usage !== undefined) ref.usage = { ...m.usage }; // (the running usage of the chunk that failed)
      ref.error = { code: 'ERR_PROVIDER', message: m.message, offset: r.dataStart };
      if (m.providerCode !== undefined) ref.error.providerCode = m.providerCode;
      if (m.finishReason !== undefined) ref.finishReason = m.finishReason;
      if (format === 'bedrock' && m.finishReason !== undefined) {
        failedStop = true;
        continue;
      }
      return calls();
    }
    if (m.text !== undefined) {
      frame.text = m.text;
      frame.literals = literalsOf(r.data, m.textKey!, m.texts ?? [m.text], m.textParts);
      ref.text += m.text;
    }
    if (m.reasoning !== undefined) { frame.reasoning = m.reasoning; ref.reasoning += m.reasoning; }
    if (m.signature !== undefined) { frame.signature = m.signature; ref.signatures.push(m.signature); }
    for (const sg of m.signatures ?? []) { frame.signature = sg; ref.signatures.push(sg); }
    if (m.redacted !== undefined) { frame.redacted = m.redacted; ref.signatures.push(m.redacted); }
    if (m.reasoningEnd) frame.reasoningEnd = true;
    frame.calls = m.calls ?? [];
    if (m.role === 'completion') frame.calls = [...frame.calls, { op: 'endAll' }];
    for (const op of frame.calls) book.apply(op);
    if (m.clientContent !== undefined) frame.clientContent = m.clientContent;
    if (m.finishReason !== undefined) ref.finishReason = m.finishReason;
    if (m.grounding !== undefined) grounding = m.grounding;
    if (m.usage !== undefined) ref.usage = { ...m.usage };
    if (m.mergeUsage !== undefined) ref.usage = { ...ref.usage, ...m.mergeUsage };
    if (m.role === 'completion') {
      ref.status = 'done';
      if (!isEventStream(format)) break;
    }
  }
  if (ref.status !== 'done' && !failedStop) ref.error = { code: 'ERR_STREAM_TRUNCATED', offset: length };
  if (grounding !== undefined) {
    const spans = groundedSpans(grounding, ref.text);
    if (spans.length !== 0) ref.groundedSpans = spans;
  }
  return calls();
}

/**
 * The sources a grounding metadata places in `text`: its supports' segments are bytes of the
 * text's UTF-8 from its start (a left-out startIndex 0), each where its bytes decode to the
 * segment's text (a fatal TextDecoder of the bytes: a cut inside a character fails), in code points.
 */
function groundedSpans(meta: Obj, text: string): GroundedSpan[] {
  const bytes = enc.encode(text);
  const dec = new TextDecoder('utf-8', { fatal: true });
  const cps = (n: number) => [...dec.decode(bytes.subarray(0, n))].length;
  const chunks = Array.isArray(meta.groundingChunks) ? meta.groundingChunks : [];
  const supports = Array.isArray(meta.groundingSupports) ? meta.groundingSupports : [];
  const out: GroundedSpan[] = [];
  const seen = new Set<string>();
  chunks.forEach((chunk, k) => {
    const src = isObj(chunk) ? Object.values(chunk).find(isObj) : undefined;
    if (src === undefined || typeof src.uri !== 'string' || seen.has(src.uri)) return;
    seen.add(src.uri);
    for (const s of supports) {
      if (!isObj(s) || !isObj(s.segment) || !Array.isArray(s.groundingChunkIndices) || !s.groundingChunkIndices.includes(k)) continue;
      const start = typeof s.segment.startIndex === 'number' ? s.segment.startIndex : 0;
      const end = s.segment.endIndex as number;
      let said: string;
      try {
        said = dec.decode(bytes.subarray(start, end));
        cps(start);
      } catch {
        continue;
      }
      if (end > bytes.length || (typeof s.segment.text === 'string' && said !== s.segment.text)) continue;
      out.push({ url: src.uri, title: typeof src.title === 'string' ? src.title : '', start: cps(start), end: cps(end) });
    }
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// The fixtures

const ZWJ = '\u200d';
const TAB = '\t';
const fixtures: Fixture[] = [];

function add(f: Omit<Fixture, 'bytes'>): void {
  if (fixtures.some((g) => g.name === f.name)) throw new Error(`duplicate fixture ${f.name}`);
  fixtures.push({ ...f, bytes: enc.encode(f.body) });
}

// ----- OpenAI Chat Completions -----------------------------------------------------------------

{
  const body = String.raw`data: {"id":"chatcmpl-C1a9kQ","object":"chat.completion.chunk","created":1754300000,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C1a9kQ","object":"chat.completion.chunk","created":1754300000,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{"content":"Sure! Here\u2019s a short note in three languages:\n\n"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C1a9kQ","object":"chat.completion.chunk","created":1754300000,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{"content":"1. 中文：你好，"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C1a9kQ","object":"chat.completion.chunk","created":1754300000,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{"content":"世界！这是一个流式回答。\n"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C1a9kQ","object":"chat.completion.chunk","created":1754300000,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{"content":"2. Français : le cafe"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C1a9kQ","object":"chat.completion.chunk","created":1754300000,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{"content":"\u0301 est prêt, dit-il \"vite\".\n"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C1a9kQ","object":"chat.completion.chunk","created":1754300000,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{"content":"3. Emoji : 👩"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C1a9kQ","object":"chat.completion.chunk","created":1754300000,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{"content":"${ZWJ}💻 au travail, drapeaux 🇯"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C1a9kQ","object":"chat.completion.chunk","created":1754300000,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{"content":"🇵 et 🇫🇷, sourire \ud83d\ude00 et \ud83d"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C1a9kQ","object":"chat.completion.chunk","created":1754300000,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{"content":"\ude4f.\n"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C1a9kQ","object":"chat.completion.chunk","created":1754300000,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{"content":"Chemin : C:\\temp\\new\\, tab:\tfin."},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C1a9kQ","object":"chat.completion.chunk","created":1754300000,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}

data: [DONE]

`;
  add({
    name: 'openai-basic',
    format: 'openai',
    note: 'role chunk, escapes (\\u2019, \\n, \\", \\\\, \\t), NFD e + U+0301 and a ZWJ sequence and a flag split across deltas, a surrogate pair split into two escaped deltas, finish chunk, [DONE]',
    body,
    expected: {
      text: 'Sure! Here\u2019s a short note in three languages:\n\n1. 中文：你好，世界！这是一个流式回答。\n2. Français : le cafe\u0301 est prêt, dit-il "vite".\n'
        + '3. Emoji : 👩\u200d💻 au travail, drapeaux 🇯🇵 et 🇫🇷, sourire 😀 et 🙏.\nChemin : C:\\temp\\new\\, tab:\tfin.',
      reasoning: '',
      status: 'done',
      finishReason: 'stop',
      events: 13,
      comments: [],
    },
  });
}

{
  const body = crlf(String.raw`data: {"id":"chatcmpl-C2u7","object":"chat.completion.chunk","created":1754300020,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-C2u7","object":"chat.completion.chunk","created":1754300020,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":{"content":"日本語：こんにちは。"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-C2u7","object":"chat.completion.chunk","created":1754300020,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":{"content":"今日は良い天気ですね。\n"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-C2u7","object":"chat.completion.chunk","created":1754300020,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":{"content":"한국어: 안녕하세요, "},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-C2u7","object":"chat.completion.chunk","created":1754300020,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":{"content":"\u1112"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-C2u7","object":"chat.completion.chunk","created":1754300020,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":{"content":"\u1161\u11ab국어 "},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-C2u7","object":"chat.completion.chunk","created":1754300020,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":{"content":"텍스트입니다. Then the answer went on and on until max_tok"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-C2u7","object":"chat.completion.chunk","created":1754300020,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":{"content":"ens cut it mid-"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-C2u7","object":"chat.completion.chunk","created":1754300020,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}],"usage":null}

data: {"id":"chatcmpl-C2u7","object":"chat.completion.chunk","created":1754300020,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[],"usage":{"prompt_tokens":42,"completion_tokens":64,"total_tokens":106,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}

data: [DONE]

`);
  add({
    name: 'openai-usage-crlf',
    format: 'openai',
    note: 'stream_options.include_usage: "usage":null on every chunk, then the choices: [] chunk with usage; finish_reason length; conjoining Hangul jamo (NFC composes them) split across escaped deltas; CRLF',
    body,
    expected: {
      text: '日本語：こんにちは。今日は良い天気ですね。\n한국어: 안녕하세요, \u1112\u1161\u11ab국어 텍스트입니다. Then the answer went on and on until max_tokens cut it mid-',
      reasoning: '',
      status: 'done',
      finishReason: 'length',
      usage: {
        prompt_tokens: 42, completion_tokens: 64, total_tokens: 106,
        prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      },
      events: 11,
      comments: [],
    },
  });
}

{
  const body = String.raw`data: {"id":"chatcmpl-C3tc","object":"chat.completion.chunk","created":1754300040,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C3tc","object":"chat.completion.chunk","created":1754300040,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{"content":"Let me check the weather in "},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C3tc","object":"chat.completion.chunk","created":1754300040,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{"content":"東京 and Zürich 🌦️ first."},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C3tc","object":"chat.completion.chunk","created":1754300040,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{"content":null,"tool_calls":[{"index":0,"id":"call_Jx7uBhD1","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C3tc","object":"chat.completion.chunk","created":1754300040,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C3tc","object":"chat.completion.chunk","created":1754300040,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"東京\",\"unit\":\"c\"}"}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C3tc","object":"chat.completion.chunk","created":1754300040,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{"content":null,"tool_calls":[{"index":1,"id":"call_Qm2sLw9P","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C3tc","object":"chat.completion.chunk","created":1754300040,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"city\":\"Z\u00fcrich\"}"}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C3tc","object":"chat.completion.chunk","created":1754300040,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{"content":" (Two calls sent.)"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C3tc","object":"chat.completion.chunk","created":1754300040,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}

data: [DONE]

`;
  add({
    name: 'openai-tool-calls',
    format: 'openai',
    note: 'text, two parallel tool_calls whose argument fragments hold quotes and Chinese (content: null beside them), text again, finish_reason tool_calls',
    body,
    expected: {
      text: 'Let me check the weather in 東京 and Zürich 🌦️ first. (Two calls sent.)',
      reasoning: '',
      status: 'done',
      finishReason: 'tool_calls',
      events: 11,
      comments: [],
      toolCalls: [
        { index: 0, id: 'call_Jx7uBhD1', name: 'get_weather', arguments: '{"city":"東京","unit":"c"}', done: true, valid: true },
        { index: 1, id: 'call_Qm2sLw9P', name: 'get_weather', arguments: '{"city":"Zürich"}', done: true, valid: true },
      ],
    },
  });
}

{
  const body = String.raw`: keep-alive

data: {"id":"5f0c1e2a-7b7e-4f9a-9d7e-1b1e0c6f2a11","object":"chat.completion.chunk","created":1754300060,"model":"deepseek-reasoner","system_fingerprint":"fp_7e73fd9a08_prod0425fp8","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""},"logprobs":null,"finish_reason":null}]}

data: {"id":"5f0c1e2a-7b7e-4f9a-9d7e-1b1e0c6f2a11","object":"chat.completion.chunk","created":1754300060,"model":"deepseek-reasoner","system_fingerprint":"fp_7e73fd9a08_prod0425fp8","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"用户问的是 1+1。"},"logprobs":null,"finish_reason":null}]}

: keep-alive

data: {"id":"5f0c1e2a-7b7e-4f9a-9d7e-1b1e0c6f2a11","object":"chat.completion.chunk","created":1754300060,"model":"deepseek-reasoner","system_fingerprint":"fp_7e73fd9a08_prod0425fp8","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"\n答案显然是 2，但要解释\u201c为什么\u201d。"},"logprobs":null,"finish_reason":null}]}

data: {"id":"5f0c1e2a-7b7e-4f9a-9d7e-1b1e0c6f2a11","object":"chat.completion.chunk","created":1754300060,"model":"deepseek-reasoner","system_fingerprint":"fp_7e73fd9a08_prod0425fp8","choices":[{"index":0,"delta":{"content":"1 + 1 = 2。\n\n","reasoning_content":null},"logprobs":null,"finish_reason":null}]}

data: {"id":"5f0c1e2a-7b7e-4f9a-9d7e-1b1e0c6f2a11","object":"chat.completion.chunk","created":1754300060,"model":"deepseek-reasoner","system_fingerprint":"fp_7e73fd9a08_prod0425fp8","choices":[{"index":0,"delta":{"content":"原因：在皮亚诺公理中，","reasoning_content":null},"logprobs":null,"finish_reason":null}]}

data: {"id":"5f0c1e2a-7b7e-4f9a-9d7e-1b1e0c6f2a11","object":"chat.completion.chunk","created":1754300060,"model":"deepseek-reasoner","system_fingerprint":"fp_7e73fd9a08_prod0425fp8","choices":[{"index":0,"delta":{"content":"2 被定义为 1 的后继。✅","reasoning_content":null},"logprobs":null,"finish_reason":null}]}

data: {"id":"5f0c1e2a-7b7e-4f9a-9d7e-1b1e0c6f2a11","object":"chat.completion.chunk","created":1754300060,"model":"deepseek-reasoner","system_fingerprint":"fp_7e73fd9a08_prod0425fp8","choices":[{"index":0,"delta":{"content":"","reasoning_content":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":85,"total_tokens":97,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":41},"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":12}}

data: [DONE]

`;
  add({
    name: 'openai-reasoning-content',
    format: 'openai',
    note: 'DeepSeek style: reasoning_content deltas beside content: null, then content beside reasoning_content: null; usage on the finish chunk (choices not empty); ": keep-alive" comments',
    body,
    expected: {
      text: '1 + 1 = 2。\n\n原因：在皮亚诺公理中，2 被定义为 1 的后继。✅',
      reasoning: '用户问的是 1+1。\n答案显然是 2，但要解释“为什么”。',
      status: 'done',
      finishReason: 'stop',
      usage: {
        prompt_tokens: 12, completion_tokens: 85, total_tokens: 97,
        prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 41 },
        prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: 12,
      },
      events: 8,
      comments: ['keep-alive', 'keep-alive'],
    },
  });
}

{
  const body = String.raw`: OPENROUTER PROCESSING

: OPENROUTER PROCESSING

data: {"id":"gen-1754300080-Kx2vQ","provider":"Anthropic","model":"anthropic/claude-sonnet-4","object":"chat.completion.chunk","created":1754300080,"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"The user wants a haiku about autumn 🍁. "},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}

data: {"id":"gen-1754300080-Kx2vQ","provider":"Anthropic","model":"anthropic/claude-sonnet-4","object":"chat.completion.chunk","created":1754300080,"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"Count syllables: 5\u20137\u20135."},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}

:ping

data: {"id":"gen-1754300080-Kx2vQ","provider":"Anthropic","model":"anthropic/claude-sonnet-4","object":"chat.completion.chunk","created":1754300080,"choices":[{"index":0,"delta":{"role":"assistant","content":"Crisp maple leaves fall \u2014\n"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}

data: {"id":"gen-1754300080-Kx2vQ","provider":"Anthropic","model":"anthropic/claude-sonnet-4","object":"chat.completion.chunk","created":1754300080,"choices":[{"index":0,"delta":{"role":"assistant","content":"whispers of a cooling wind,\n"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}

data: {"id":"gen-1754300080-Kx2vQ","provider":"Anthropic","model":"anthropic/claude-sonnet-4","object":"chat.completion.chunk","created":1754300080,"choices":[{"index":0,"delta":{"role":"assistant","content":"the year exhales slow. 🍂"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}

data: {"id":"gen-1754300080-Kx2vQ","provider":"Anthropic","model":"anthropic/claude-sonnet-4","object":"chat.completion.chunk","created":1754300080,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop","native_finish_reason":"end_turn","logprobs":null}]}

data: {"id":"gen-1754300080-Kx2vQ","provider":"Anthropic","model":"anthropic/claude-sonnet-4","object":"chat.completion.chunk","created":1754300080,"choices":[],"usage":{"prompt_tokens":31,"completion_tokens":58,"total_tokens":89,"cost":0.000963,"is_byok":false,"completion_tokens_details":{"reasoning_tokens":19}}}

data: [DONE]

`;
  add({
    name: 'openai-reasoning-keepalive',
    format: 'openai',
    note: 'OpenRouter style: processing comments before the first event and ":ping" (no space) between events, reasoning deltas (the "reasoning" member), usage chunk with choices: []',
    body,
    expected: {
      text: 'Crisp maple leaves fall —\nwhispers of a cooling wind,\nthe year exhales slow. 🍂',
      reasoning: 'The user wants a haiku about autumn 🍁. Count syllables: 5–7–5.',
      status: 'done',
      finishReason: 'stop',
      usage: { prompt_tokens: 31, completion_tokens: 58, total_tokens: 89, cost: 0.000963, is_byok: false, completion_tokens_details: { reasoning_tokens: 19 } },
      events: 8,
      comments: ['OPENROUTER PROCESSING', 'OPENROUTER PROCESSING', 'ping'],
    },
  });
}

{
  // Ollama's OpenAI-compatible API: a turn's calls each whole in a chunk of its own, every one at
  // index 0 with its own id (ollama/ollama#15457): two calls, not one with both arguments joined
  const body = String.raw`data: {"id":"chatcmpl-718","object":"chat.completion.chunk","created":1775731200,"model":"qwen2.5-coder:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"Ich lege beide Dateien an."},"finish_reason":null}]}

data: {"id":"chatcmpl-718","object":"chat.completion.chunk","created":1775731200,"model":"qwen2.5-coder:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_pn8k2v4q","index":0,"type":"function","function":{"name":"file_write","arguments":"{\"content\":\"print(\\\"hello\\\")\",\"filePath\":\"hello.py\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-718","object":"chat.completion.chunk","created":1775731200,"model":"qwen2.5-coder:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_x7c0m3ba","index":0,"type":"function","function":{"name":"file_write","arguments":"{\"content\":\"print(\\\"wörld\\\")\",\"filePath\":\"world.py\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-718","object":"chat.completion.chunk","created":1775731200,"model":"qwen2.5-coder:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"tool_calls"}]}

data: [DONE]

`;
  add({
    name: 'openai-ollama-calls-one-index',
    format: 'openai',
    note: 'Ollama style: two calls in two chunks, both at index 0 with different ids: two calls',
    body,
    expected: {
      text: 'Ich lege beide Dateien an.',
      reasoning: '',
      status: 'done',
      finishReason: 'tool_calls',
      events: 5,
      comments: [],
      toolCalls: [
        { index: 0, id: 'call_pn8k2v4q', name: 'file_write', arguments: "{\"content\":\"print(\\\"hello\\\")\",\"filePath\":\"hello.py\"}", done: true, valid: true },
        { index: 1, id: 'call_x7c0m3ba', name: 'file_write', arguments: "{\"content\":\"print(\\\"wörld\\\")\",\"filePath\":\"world.py\"}", done: true, valid: true },
      ],
    },
  });
}

{
  // Google's OpenAI-compatible API (generativelanguage.googleapis.com/v1beta/openai/): a Gemini 3
  // call's thoughtSignature in the call's extra_content.google.thought_signature (the first of
  // parallel calls has one), which the caller must send back with the call
  const body = String.raw`data: {"choices":[{"delta":{"content":"Ich sehe nach.","extra_content":{"google":{"thought_signature":"CoMBAdHtim9q"}},"role":"assistant"},"index":0}],"created":1764000000,"id":"k3bGaL2uF9-Cz7IP0J6xuQw","model":"gemini-3-pro-preview","object":"chat.completion.chunk"}

data: {"choices":[{"delta":{"role":"assistant","tool_calls":[{"extra_content":{"google":{"thought_signature":"EjQKMgHR7YpvXq+8z/A="}},"function":{"arguments":"{\"city\":\"Zürich\"}","name":"get_weather"},"id":"function-call-5961542118447730171","index":0,"type":"function"},{"function":{"arguments":"{\"city\":\"Genf\"}","name":"get_weather"},"id":"function-call-5961542118447730172","index":1,"type":"function"}]},"finish_reason":"tool_calls","index":0}],"created":1764000000,"id":"k3bGaL2uF9-Cz7IP0J6xuQw","model":"gemini-3-pro-preview","object":"chat.completion.chunk","usage":{"completion_tokens":31,"prompt_tokens":58,"total_tokens":171}}

data: [DONE]

`;
  add({
    name: 'openai-gemini-call-signatures',
    format: 'openai',
    note: 'Google\'s OpenAI-compatible API: parallel calls whole in one chunk, the first with its thought_signature in extra_content (kept with the call)',
    body,
    expected: {
      text: 'Ich sehe nach.',
      reasoning: '',
      status: 'done',
      finishReason: 'tool_calls',
      usage: { completion_tokens: 31, prompt_tokens: 58, total_tokens: 171 },
      events: 3,
      comments: [],
      toolCalls: [
        { index: 0, id: 'function-call-5961542118447730171', name: 'get_weather', arguments: '{"city":"Zürich"}', done: true, valid: true, signature: 'EjQKMgHR7YpvXq+8z/A=' },
        { index: 1, id: 'function-call-5961542118447730172', name: 'get_weather', arguments: '{"city":"Genf"}', done: true, valid: true },
      ],
    },
  });
}

{
  // OpenRouter, Claude thinking: each reasoning delta says its text twice, as `reasoning` and as a
  // `reasoning.text` item of `reasoning_details` (read once); the block's signature comes in an
  // item of its own, then a redacted block's encrypted data (format anthropic-claude-v1), each of
  // which the caller sends back; text deltas carry an empty reasoning_details
  const env = '"id":"gen-1761052928-cSHiiIJW","provider":"Anthropic","model":"anthropic/claude-sonnet-4","object":"chat.completion.chunk","created":1761052928';
  const ev = (delta: string, finish = 'null', more = '') => `data: {${env},"choices":[{"index":0,"delta":${delta},"finish_reason":${finish},"native_finish_reason":${finish === 'null' ? 'null' : '"end_turn"'},"logprobs":null}]${more}}\n\n`;
  const item = (rest: string) => `{"type":"reasoning.text",${rest},"format":"anthropic-claude-v1","index":0}`;
  const body = ev('{"role":"assistant","content":"","reasoning":null,"reasoning_details":[]}')
    + ev(`{"role":"assistant","content":"","reasoning":"Der Nutzer fragt nach","reasoning_details":[${item('"text":"Der Nutzer fragt nach"')}]}`)
    + ev(`{"role":"assistant","content":"","reasoning":" dem Wetter in Zürich – e\u0301 👩‍💻.","reasoning_details":[${item('"text":" dem Wetter in Zürich – e\\u0301 👩‍💻."')}]}`)
    + ev(`{"role":"assistant","content":"","reasoning":"","reasoning_details":[${item('"text":"","signature":"EqQBCgIYAhIM1gbc+/A="')}]}`)
    + ev('{"role":"assistant","content":"","reasoning":null,"reasoning_details":[{"type":"reasoning.encrypted","data":"UmVkYWN0ZWQ=","id":null,"format":"anthropic-claude-v1","index":1}]}')
    + ev('{"role":"assistant","content":"Ich sehe nach.","reasoning":null,"reasoning_details":[]}')
    + ev('{"role":"assistant","content":"","reasoning":null,"reasoning_details":[]}', '"stop"')
    + `data: {${env},"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":31,"total_tokens":71}}\n\n`
    + 'data: [DONE]\n\n';
  add({
    name: 'openai-openrouter-reasoning-details',
    format: 'openai',
    note: 'OpenRouter (Claude): reasoning as `reasoning` and `reasoning_details` at once (read once), a signature item, a redacted block\'s encrypted item',
    body,
    expected: {
      text: 'Ich sehe nach.',
      reasoning: 'Der Nutzer fragt nach dem Wetter in Zürich – e\u0301 👩‍💻.',
      status: 'done',
      finishReason: 'stop',
      usage: { prompt_tokens: 40, completion_tokens: 31, total_tokens: 71 },
      events: 9,
      comments: [],
      signatures: ['EqQBCgIYAhIM1gbc+/A=', 'UmVkYWN0ZWQ='],
    },
  });
}

{
  // OpenRouter, an OpenAI reasoning model: summaries as `reasoning.summary` items alone (no
  // `reasoning` string beside them, as a server may send), two in one delta, then the encrypted
  // reasoning (format openai-responses-v1: kept with its block, no signature of a block)
  const env = '"id":"gen-1758885012-2qVPBxGH","provider":"OpenAI","model":"openai/gpt-5","object":"chat.completion.chunk","created":1758885012';
  const ev = (delta: string, finish = 'null') => `data: {${env},"choices":[{"index":0,"delta":${delta},"finish_reason":${finish}}]}\n\n`;
  const summary = (text: string) => `{"type":"reasoning.summary","summary":${JSON.stringify(text)},"format":"openai-responses-v1","index":0}`;
  const body = ev(`{"role":"assistant","content":"","reasoning_details":[${summary('**Rechnen**\n\n2+3')}]}`)
    + ev(`{"content":"","reasoning_details":[${summary(' und 2·3')},${summary(', ganz einfach.')}]}`)
    + ev('{"content":"","reasoning_details":[{"type":"reasoning.encrypted","data":"gAAAAABo1w==","id":"rs_0d1c","format":"openai-responses-v1","index":1}]}')
    + ev('{"content":"5 und 6."}')
    + ev('{}', '"stop"')
    + 'data: [DONE]\n\n';
  add({
    name: 'openai-openrouter-summary-details',
    format: 'openai',
    note: 'OpenRouter (OpenAI): reasoning.summary items alone, two in one delta, then encrypted reasoning (not a signature)',
    body,
    expected: {
      text: '5 und 6.',
      reasoning: '**Rechnen**\n\n2+3 und 2·3, ganz einfach.',
      status: 'done',
      finishReason: 'stop',
      events: 6,
      comments: [],
    },
  });
}

{
  // a server that keeps the older name of the reasoning beside the newer one: each reasoning delta
  // says its text under both (mlx-vlm's ChatMessage syncs reasoning_content and reasoning), and is
  // read once
  const body = String.raw`data: {"id":"chatcmpl-5b1e","object":"chat.completion.chunk","created":1754300090,"model":"mlx-community/Qwen3-VL-4B-Thinking-4bit","choices":[{"index":0,"finish_reason":null,"delta":{"role":"assistant","content":null,"reasoning_content":"Zwei Zahlen: ","reasoning":"Zwei Zahlen: ","tool_calls":null,"tool_call_id":null,"name":null},"logprobs":null}],"usage":null,"timings":{"predicted_per_second":41.7}}

data: {"id":"chatcmpl-5b1e","object":"chat.completion.chunk","created":1754300090,"model":"mlx-community/Qwen3-VL-4B-Thinking-4bit","choices":[{"index":0,"finish_reason":null,"delta":{"role":"assistant","content":null,"reasoning_content":"2 + 2 = 4 ✓","reasoning":"2 + 2 = 4 ✓","tool_calls":null,"tool_call_id":null,"name":null},"logprobs":null}],"usage":null,"timings":{"predicted_per_second":41.7}}

data: {"id":"chatcmpl-5b1e","object":"chat.completion.chunk","created":1754300090,"model":"mlx-community/Qwen3-VL-4B-Thinking-4bit","choices":[{"index":0,"finish_reason":null,"delta":{"role":"assistant","content":null,"reasoning_content":"\n","reasoning":"\n","tool_calls":null,"tool_call_id":null,"name":null},"logprobs":null}],"usage":null,"timings":{"predicted_per_second":41.7}}

data: {"id":"chatcmpl-5b1e","object":"chat.completion.chunk","created":1754300090,"model":"mlx-community/Qwen3-VL-4B-Thinking-4bit","choices":[{"index":0,"finish_reason":null,"delta":{"role":"assistant","content":"Die Antwort ist ","reasoning_content":null,"reasoning":null,"tool_calls":null,"tool_call_id":null,"name":null},"logprobs":null}],"usage":null,"timings":{"predicted_per_second":41.7}}

data: {"id":"chatcmpl-5b1e","object":"chat.completion.chunk","created":1754300090,"model":"mlx-community/Qwen3-VL-4B-Thinking-4bit","choices":[{"index":0,"finish_reason":null,"delta":{"role":"assistant","content":"4.","reasoning_content":null,"reasoning":null,"tool_calls":null,"tool_call_id":null,"name":null},"logprobs":null}],"usage":null,"timings":{"predicted_per_second":41.7}}

data: {"id":"chatcmpl-5b1e","object":"chat.completion.chunk","created":1754300090,"model":"mlx-community/Qwen3-VL-4B-Thinking-4bit","choices":[{"index":0,"finish_reason":"stop","delta":{"role":"assistant","content":null,"reasoning_content":null,"reasoning":null,"tool_calls":null,"tool_call_id":null,"name":null},"logprobs":null}],"usage":{"prompt_tokens":14,"completion_tokens":9,"total_tokens":23},"timings":{"predicted_per_second":41.7}}

data: [DONE]

`;
  add({
    name: 'openai-reasoning-under-both-names',
    format: 'openai',
    note: 'mlx-vlm style: every reasoning delta with reasoning_content and reasoning, the same text, every field written (nulls too)',
    body,
    expected: {
      text: 'Die Antwort ist 4.',
      reasoning: 'Zwei Zahlen: 2 + 2 = 4 ✓\n',
      status: 'done',
      finishReason: 'stop',
      usage: { prompt_tokens: 14, completion_tokens: 9, total_tokens: 23 },
      events: 7,
      comments: [],
    },
  });
}

{
  const body = crlf(String.raw`data: {"id":"chatcmpl-C4n2","object":"chat.completion.chunk","created":1754300100,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-C4n2","object":"chat.completion.chunk","created":1754300100,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":1,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-C4n2","object":"chat.completion.chunk","created":1754300100,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":{"content":"Option A: 北京烤鸭"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-C4n2","object":"chat.completion.chunk","created":1754300100,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":1,"delta":{"content":"Option B: Ελληνικά"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-C4n2","object":"chat.completion.chunk","created":1754300100,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":1,"delta":{"content":" \u2014 καλημέρα! 🇬"},"logprobs":null,"finish_reason":null},{"index":0,"delta":{"content":" 🦆 is crispy"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-C4n2","object":"chat.completion.chunk","created":1754300100,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":{"content":", served with 葱 and 酱."},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-C4n2","object":"chat.completion.chunk","created":1754300100,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":1,"delta":{"content":"🇷 Ο καφές είναι"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-C4n2","object":"chat.completion.chunk","created":1754300100,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}

data: {"id":"chatcmpl-C4n2","object":"chat.completion.chunk","created":1754300100,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":1,"delta":{},"logprobs":null,"finish_reason":"length"}],"usage":null}

data: {"id":"chatcmpl-C4n2","object":"chat.completion.chunk","created":1754300100,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[],"usage":{"prompt_tokens":18,"completion_tokens":40,"total_tokens":58,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}

data: [DONE]

`);
  const usage = {
    prompt_tokens: 18, completion_tokens: 40, total_tokens: 58,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
  add({
    name: 'openai-choices-0',
    format: 'openai',
    note: 'n = 2: each chunk carries one choice or both (index 1 first in the array); followed by index, default choice 0; CRLF',
    body,
    expected: {
      text: 'Option A: 北京烤鸭 🦆 is crispy, served with 葱 and 酱.',
      reasoning: '',
      status: 'done',
      finishReason: 'stop',
      usage,
      events: 11,
      comments: [],
    },
  });
  add({
    name: 'openai-choices-1',
    format: 'openai',
    choice: 1,
    note: 'the same stream with choice: 1: index 1 is followed (its flag split across two chunks), finish_reason length',
    body,
    expected: {
      text: 'Option B: Ελληνικά — καλημέρα! 🇬🇷 Ο καφές είναι',
      reasoning: '',
      status: 'done',
      finishReason: 'length',
      usage,
      events: 11,
      comments: [],
    },
  });
}

{
  const body = String.raw`data: {"id":"chatcmpl-C5ee","object":"chat.completion.chunk","created":1754300120,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C5ee","object":"chat.completion.chunk","created":1754300120,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"Der Bericht über die Größe der Städte: "},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C5ee","object":"chat.completion.chunk","created":1754300120,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"München, Köln, Düsseldorf \u2014 und das Caf"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C5ee","object":"chat.completion.chunk","created":1754300120,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"e"},"logprobs":null,"finish_reason":null}]}

data: {"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}

`;
  add({
    name: 'openai-error-mid',
    format: 'openai',
    note: 'deltas, then an error event (the connection then closes): ERR_PROVIDER; the last delta ends on a cluster that may still grow',
    body,
    expected: {
      text: 'Der Bericht über die Größe der Städte: München, Köln, Düsseldorf — und das Cafe',
      reasoning: '',
      status: 'failed',
      events: 5,
      comments: [],
      error: { code: 'ERR_PROVIDER', message: 'The server had an error while processing your request', offset: at(body, '{"error":{"message":"The server') },
    },
  });
}

{
  const body = `{
    "error": {
        "message": "Incorrect API key provided: sk-test***. You can find your API key at https://platform.openai.com/account/api-keys.",
        "type": "invalid_request_error",
        "param": null,
        "code": "invalid_api_key"
    }
}
`;
  add({
    name: 'openai-error-body',
    format: 'openai',
    note: 'a failed request: a pretty-printed JSON error document over several lines, no SSE framing',
    body,
    expected: {
      text: '', reasoning: '', status: 'failed', events: 1, comments: [],
      error: { code: 'ERR_PROVIDER', message: 'Incorrect API key provided', offset: 0 },
    },
  });
}

{
  const body = String.raw`data: {"id":"chatcmpl-C6tr","object":"chat.completion.chunk","created":1754300140,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}

: keep-alive

data: {"id":"chatcmpl-C6tr","object":"chat.completion.chunk","created":1754300140,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"西安的城墙很古老，"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C6tr","object":"chat.completion.chunk","created":1754300140,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"骑自行车一圈大约需要"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C6tr","object":"chat.completion.chunk","created":1754300140,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"两个小时 🚲"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C6tr","object":"chat.completion.chunk","created":1754300140,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"。另外半`;
  add({
    name: 'openai-truncated',
    format: 'openai',
    note: 'the connection drops inside an event (no blank line, no [DONE]): ERR_STREAM_TRUNCATED, that event is not read',
    body,
    expected: {
      text: '西安的城墙很古老，骑自行车一圈大约需要两个小时 🚲',
      reasoning: '', status: 'truncated', events: 4, comments: ['keep-alive'],
      error: { code: 'ERR_STREAM_TRUNCATED', offset: utf8Length(body) },
    },
  });
}

{
  const body = String.raw`data: {"id":"chatcmpl-C7nd","object":"chat.completion.chunk","created":1754300160,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-C7nd","object":"chat.completion.chunk","created":1754300160,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{"content":"Ça y est : "},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-C7nd","object":"chat.completion.chunk","created":1754300160,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{"content":"la réponse est complète. 🏳️‍🌈"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-C7nd","object":"chat.completion.chunk","created":1754300160,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}

data: {"id":"chatcmpl-C7nd","object":"chat.completion.chunk","created":1754300160,"model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":14,"total_tokens":23}}

`;
  add({
    name: 'openai-truncated-after-finish',
    format: 'openai',
    note: 'finish_reason and usage arrived, then the connection closed without data: [DONE]: still truncated',
    body,
    expected: {
      text: 'Ça y est : la réponse est complète. 🏳️‍🌈',
      reasoning: '', status: 'truncated', finishReason: 'stop',
      usage: { prompt_tokens: 9, completion_tokens: 14, total_tokens: 23 },
      events: 5, comments: [],
      error: { code: 'ERR_STREAM_TRUNCATED', offset: utf8Length(body) },
    },
  });
}

{
  const body = String.raw`data: {"id":"chatcmpl-C8bx","object":"chat.completion.chunk","created":1754300180,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C8bx","object":"chat.completion.chunk","created":1754300180,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"Columns: name"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C8bx","object":"chat.completion.chunk","created":1754300180,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"${TAB}size${TAB}Größe"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-C8bx","object":"chat.completion.chunk","created":1754300180,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":" and more"},"logprobs":null,"finish_reason":null}]}

data: [DONE]

`;
  add({
    name: 'openai-bad-event',
    format: 'openai',
    note: 'a proxy unescaped \\t: a raw TAB inside a JSON string is invalid JSON: ERR_BAD_EVENT at the TAB, the text before it kept',
    body,
    expected: {
      text: 'Columns: name',
      reasoning: '', status: 'failed', events: 3, comments: [],
      error: { code: 'ERR_BAD_EVENT', offset: at(body, '"content":"\tsize', 11) },
    },
  });
}

{
  const body = String.raw`data: {"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}}]}

data: {"choices":[{"content_filter_results":{},"delta":{"content":null,"role":"assistant","refusal":null},"finish_reason":null,"index":0,"logprobs":null}],"created":1754300200,"id":"chatcmpl-C9az","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_ee1d74bde0"}

data: {"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"delta":{"content":"Tie\u0302\u0301ng Vie\u0323\u0302t: "},"finish_reason":null,"index":0,"logprobs":null}],"created":1754300200,"id":"chatcmpl-C9az","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_ee1d74bde0"}

data: {"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"delta":{"content":null},"finish_reason":null,"index":0,"logprobs":null}],"created":1754300200,"id":"chatcmpl-C9az","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_ee1d74bde0"}

data: {"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"delta":{"content":"xin chào. हिन्दी: नमस्ते"},"finish_reason":null,"index":0,"logprobs":null}],"created":1754300200,"id":"chatcmpl-C9az","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_ee1d74bde0"}

data: {"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"delta":{"content":" दुनिया 🙏🏽"},"finish_reason":null,"index":0,"logprobs":null}],"created":1754300200,"id":"chatcmpl-C9az","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_ee1d74bde0"}

data: {"choices":[{"content_filter_results":{},"delta":{"content":null},"finish_reason":"stop","index":0,"logprobs":null}],"created":1754300200,"id":"chatcmpl-C9az","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_ee1d74bde0"}

data: [DONE]

`;
  add({
    name: 'openai-content-null',
    format: 'openai',
    note: 'Azure style: a first chunk with choices: [] and prompt_filter_results, members in another order, content: null in the role, middle and finish chunks; Vietnamese in NFD escapes, Devanagari, a skin-tone emoji',
    body,
    expected: {
      text: 'Tie\u0302\u0301ng Vie\u0323\u0302t: xin chào. हिन्दी: नमस्ते दुनिया 🙏🏽',
      reasoning: '', status: 'done', finishReason: 'stop', events: 8, comments: [],
    },
  });
}

// ----- OpenAI Responses ------------------------------------------------------------------------

{
  const body = String.raw`event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_68a1f0c2b5e08190a3e4","object":"response","created_at":1754300300,"status":"in_progress","error":null,"incomplete_details":null,"model":"gpt-4.1-2025-04-14","output":[],"parallel_tool_calls":true,"temperature":1.0,"tool_choice":"auto","tools":[],"top_p":1.0,"usage":null,"metadata":{}}}

event: response.in_progress
data: {"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_68a1f0c2b5e08190a3e4","object":"response","created_at":1754300300,"status":"in_progress","error":null,"incomplete_details":null,"model":"gpt-4.1-2025-04-14","output":[],"usage":null,"metadata":{}}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"msg_68a1f0c3d9f48190b7a1","type":"message","status":"in_progress","content":[],"role":"assistant"}}

event: response.content_part.added
data: {"type":"response.content_part.added","sequence_number":3,"item_id":"msg_68a1f0c3d9f48190b7a1","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_68a1f0c3d9f48190b7a1","output_index":0,"content_index":0,"delta":"Привет! ","logprobs":[]}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_68a1f0c3d9f48190b7a1","output_index":0,"content_index":0,"delta":"Вот ответ: ¿Qué tal? 🇪","logprobs":[]}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":6,"item_id":"msg_68a1f0c3d9f48190b7a1","output_index":0,"content_index":0,"delta":"🇸🇲🇽 \u2014 «n\u0303» y \"comillas\"","logprobs":[]}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_68a1f0c3d9f48190b7a1","output_index":0,"content_index":0,"delta":", a\\b, \ud83d\udc4b\ud83c\udffd.","logprobs":[]}

event: response.output_text.done
data: {"type":"response.output_text.done","sequence_number":8,"item_id":"msg_68a1f0c3d9f48190b7a1","output_index":0,"content_index":0,"text":"Привет! Вот ответ: ¿Qué tal? 🇪🇸🇲🇽 \u2014 «n\u0303» y \"comillas\", a\\b, \ud83d\udc4b\ud83c\udffd.","logprobs":[]}

event: response.content_part.done
data: {"type":"response.content_part.done","sequence_number":9,"item_id":"msg_68a1f0c3d9f48190b7a1","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":"Привет! Вот ответ: ¿Qué tal? 🇪🇸🇲🇽 \u2014 «n\u0303» y \"comillas\", a\\b, \ud83d\udc4b\ud83c\udffd."}}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":10,"output_index":0,"item":{"id":"msg_68a1f0c3d9f48190b7a1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Привет! Вот ответ: ¿Qué tal? 🇪🇸🇲🇽 \u2014 «n\u0303» y \"comillas\", a\\b, \ud83d\udc4b\ud83c\udffd."}],"role":"assistant"}}

event: response.completed
data: {"type":"response.completed","sequence_number":11,"response":{"id":"resp_68a1f0c2b5e08190a3e4","object":"response","created_at":1754300300,"status":"completed","error":null,"incomplete_details":null,"model":"gpt-4.1-2025-04-14","output":[{"id":"msg_68a1f0c3d9f48190b7a1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Привет! Вот ответ: ¿Qué tal? 🇪🇸🇲🇽 \u2014 «n\u0303» y \"comillas\", a\\b, \ud83d\udc4b\ud83c\udffd."}],"role":"assistant"}],"usage":{"input_tokens":37,"input_tokens_details":{"cached_tokens":0},"output_tokens":29,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":66},"metadata":{}}}

`;
  add({
    name: 'responses-basic',
    format: 'openai-responses',
    note: 'created, in_progress, item and part added, text deltas (a flag pair split, an escaped NFD ñ, quotes, a backslash, an escaped emoji with skin tone), then the done events that repeat the whole text (not text again), completed with usage',
    body,
    expected: {
      text: 'Привет! Вот ответ: ¿Qué tal? 🇪🇸🇲🇽 — «n\u0303» y "comillas", a\\b, 👋🏽.',
      reasoning: '', status: 'done', finishReason: 'completed',
      usage: { input_tokens: 37, input_tokens_details: { cached_tokens: 0 }, output_tokens: 29, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 66 },
      events: 12, comments: [],
    },
  });
}

{
  const body = String.raw`event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_68a1f1a0c1d88190","object":"response","created_at":1754300320,"status":"in_progress","model":"o4-mini-2025-04-16","output":[],"usage":null}}

: keep-alive

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"rs_68a1f1a1e2f08190","type":"reasoning","summary":[]}}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":2,"output_index":0,"item":{"id":"rs_68a1f1a1e2f08190","type":"reasoning","summary":[]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":3,"output_index":1,"item":{"id":"msg_68a1f1a2a0b48190","type":"message","status":"in_progress","content":[],"role":"assistant"}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_68a1f1a2a0b48190","output_index":1,"content_index":0,"delta":"I'll look up the rate for ","logprobs":[]}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_68a1f1a2a0b48190","output_index":1,"content_index":0,"delta":"¥ \u2192 € (円からユーロ).","logprobs":[]}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":6,"output_index":1,"item":{"id":"msg_68a1f1a2a0b48190","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"text":"I'll look up the rate for ¥ \u2192 € (円からユーロ)."}],"role":"assistant"}}

: keep-alive

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":7,"output_index":2,"item":{"id":"fc_68a1f1a3b1c58190","type":"function_call","status":"in_progress","arguments":"","call_id":"call_xR4bW2","name":"exchange_rate"}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":8,"item_id":"fc_68a1f1a3b1c58190","output_index":2,"delta":"{\"from\":\"JPY\","}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":9,"item_id":"fc_68a1f1a3b1c58190","output_index":2,"delta":"\"to\":\"EUR\"}"}

event: response.function_call_arguments.done
data: {"type":"response.function_call_arguments.done","sequence_number":10,"item_id":"fc_68a1f1a3b1c58190","output_index":2,"arguments":"{\"from\":\"JPY\",\"to\":\"EUR\"}"}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":11,"output_index":2,"item":{"id":"fc_68a1f1a3b1c58190","type":"function_call","status":"completed","arguments":"{\"from\":\"JPY\",\"to\":\"EUR\"}","call_id":"call_xR4bW2","name":"exchange_rate"}}

event: response.completed
data: {"type":"response.completed","sequence_number":12,"response":{"id":"resp_68a1f1a0c1d88190","object":"response","created_at":1754300320,"status":"completed","model":"o4-mini-2025-04-16","output":[],"usage":{"input_tokens":81,"input_tokens_details":{"cached_tokens":64},"output_tokens":152,"output_tokens_details":{"reasoning_tokens":128},"total_tokens":233}}}

`;
  add({
    name: 'responses-tool-call',
    format: 'openai-responses',
    note: 'a reasoning item, a message, then a function call whose argument deltas also have a "delta" member (not text); keep-alive comments',
    body,
    expected: {
      text: "I'll look up the rate for ¥ → € (円からユーロ).",
      reasoning: '', status: 'done', finishReason: 'completed',
      usage: { input_tokens: 81, input_tokens_details: { cached_tokens: 64 }, output_tokens: 152, output_tokens_details: { reasoning_tokens: 128 }, total_tokens: 233 },
      events: 13, comments: ['keep-alive', 'keep-alive'],
      toolCalls: [{ index: 0, id: 'call_xR4bW2', name: 'exchange_rate', arguments: '{"from":"JPY","to":"EUR"}', done: true, valid: true }],
    },
  });
}

{
  const body = crlf(String.raw`event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_68a1f2","object":"response","created_at":1754300340,"status":"in_progress","model":"gpt-4.1-2025-04-14","output":[],"usage":null}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_68a1f2","type":"message","status":"in_progress","content":[],"role":"assistant"}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_68a1f2","output_index":0,"content_index":0,"delta":"Schritt 1: Öffnen Sie die Datei \"config.yml\"","logprobs":[]}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_68a1f2","output_index":0,"content_index":0,"delta":" und ändern Sie 👨‍👩‍👧‍👦","logprobs":[]}

event: response.failed
data: {"type":"response.failed","sequence_number":4,"response":{"id":"resp_68a1f2","object":"response","created_at":1754300340,"status":"failed","error":{"code":"server_error","message":"The model produced invalid content. Consider modifying your prompt if you are seeing this error persistently."},"incomplete_details":null,"model":"gpt-4.1-2025-04-14","output":[],"usage":null}}

`);
  add({
    name: 'responses-failed-crlf',
    format: 'openai-responses',
    note: 'text deltas (a family ZWJ sequence), then response.failed with response.error; CRLF',
    body,
    expected: {
      text: 'Schritt 1: Öffnen Sie die Datei "config.yml" und ändern Sie 👨‍👩‍👧‍👦',
      reasoning: '', status: 'failed', events: 5, comments: [],
      error: { code: 'ERR_PROVIDER', message: 'The model produced invalid content', offset: at(body, '{"type":"response.failed"') },
    },
  });
}

{
  const body = String.raw`event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_68a1f3","object":"response","created_at":1754300360,"status":"in_progress","model":"gpt-4.1-mini-2025-04-14","output":[],"usage":null}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_68a1f3","output_index":0,"content_index":0,"delta":"Un momento… ","logprobs":[]}

event: error
data: {"type":"error","sequence_number":2,"code":"rate_limit_exceeded","message":"Rate limit reached for gpt-4.1-mini in organization org-Xy on tokens per min (TPM): Limit 200000, Used 199412, Requested 1337.","param":null}

`;
  add({
    name: 'responses-error-event',
    format: 'openai-responses',
    note: 'an "error" event after a delta: ERR_PROVIDER with its message',
    body,
    expected: {
      text: 'Un momento… ',
      reasoning: '', status: 'failed', events: 3, comments: [],
      error: { code: 'ERR_PROVIDER', message: 'Rate limit reached for gpt-4.1-mini', offset: at(body, '{"type":"error"') },
    },
  });
}

{
  // the error event as the API sends a rate limit mid-stream: its message and code in an `error`
  // object, not at the event's top as the reference documents them (openai/openai-dotnet#881;
  // openai-node reads `data.error` of an `error` event)
  const body = String.raw`event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_68a1f4","object":"response","created_at":1754300370,"status":"in_progress","model":"gpt-4.1-mini-2025-04-14","output":[],"usage":null}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_68a1f4","output_index":0,"content_index":0,"delta":"Einen Moment… ","logprobs":[]}

event: error
data: {"type":"error","sequence_number":2,"error":{"type":"too_many_requests","code":"too_many_requests","message":"Too Many Requests","param":null}}

`;
  add({
    name: 'responses-error-event-nested',
    format: 'openai-responses',
    note: 'an "error" event whose message and code are in its error object: ERR_PROVIDER with that message and code',
    body,
    expected: {
      text: 'Einen Moment… ',
      reasoning: '', status: 'failed', events: 3, comments: [],
      error: { code: 'ERR_PROVIDER', message: 'Too Many Requests', offset: at(body, '{"type":"error"'), providerCode: 'too_many_requests' },
    },
  });
}

{
  const body = '{"error":{"message":"The model \'gpt-9\' does not exist or you do not have access to it.","type":"invalid_request_error","param":"model","code":"model_not_found"}}';
  add({
    name: 'responses-error-body',
    format: 'openai-responses',
    note: 'a compact JSON error document without a final newline: ERR_PROVIDER (from push or flush)',
    body,
    expected: {
      text: '', reasoning: '', status: 'failed', events: 1, comments: [],
      error: { code: 'ERR_PROVIDER', message: "The model 'gpt-9' does not exist", offset: 0 },
    },
  });
}

{
  const body = String.raw`event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_68a1f4","object":"response","created_at":1754300380,"status":"in_progress","model":"gpt-4.1-2025-04-14","output":[],"usage":null}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_68a1f4","output_index":0,"content_index":0,"delta":"Η απάντηση: ","logprobs":[]}

: keep-alive

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_68a1f4","output_index":0,"content_index":0,"delta":"ο\u0301λα καλα\u0301 ✔️","logprobs":[]}

event: response.output_text.done
data: {"type":"response.output_text.done","sequence_number":3,"item_id":"msg_68a1f4","output_index":0,"content_index":0,"text":"Η απάντηση: ο\u0301λα καλα\u0301 ✔️","logprobs":[]}

`;
  add({
    name: 'responses-truncated',
    format: 'openai-responses',
    note: 'the stream stops after output_text.done, between whole events, without response.completed: truncated; Greek with escaped combining accents',
    body,
    expected: {
      text: 'Η απάντηση: ο\u0301λα καλα\u0301 ✔️',
      reasoning: '', status: 'truncated', events: 4, comments: ['keep-alive'],
      error: { code: 'ERR_STREAM_TRUNCATED', offset: utf8Length(body) },
    },
  });
}

// ----- Anthropic Messages ----------------------------------------------------------------------

{
  const body = String.raw`event: message_start
data: {"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":2,"service_tier":"standard"}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type":"ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"مرحبا بالعالم! "}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"שלום עולם. Good job 👍"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"🏽 \u2014 here\u2019s the list:\n- item \"one\"\n"}}

event: ping
data: {"type":"ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"- item two: 100\u00a0% ✓\n- Zoë and Noe\u0308l"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":48}}

event: message_stop
data: {"type":"message_stop"}

`;
  add({
    name: 'anthropic-basic',
    format: 'anthropic',
    note: 'message_start with usage, a text block with pings among its deltas (Arabic, Hebrew, a skin tone split from its emoji, \\u00a0, NFD ë), message_delta end_turn with usage, message_stop',
    body,
    expected: {
      text: 'مرحبا بالعالم! שלום עולם. Good job 👍🏽 — here’s the list:\n- item "one"\n- item two: 100\u00a0% ✓\n- Zoë and Noe\u0308l',
      reasoning: '', status: 'done', finishReason: 'end_turn',
      usage: {
        input_tokens: 472, cache_creation_input_tokens: 0, cache_read_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, output_tokens: 48, service_tier: 'standard',
      },
      events: 11, comments: [],
    },
  });
}

{
  const body = crlf(String.raw`event: message_start
data: {"type":"message_start","message":{"id":"msg_01ThinkKx9","type":"message","role":"assistant","model":"claude-opus-4-1-20250805","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":90,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":4}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"先算 27 × 453："}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"27 × 453 = 12231.\nCheck: 453 × 30 = 13590, minus 1359 → 12231 ✓"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDdcvCJ2Oqo8iMN2AiMAp6QmF7gkTv9qfhVIKPHB+nmg+7b0DoeJZS6KMF0Rl1cYF4xeBoAUsQ9Q=="}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"27 × 453 = **12 231**。"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"\n\n验证：453 × 30 − 453 × 3 = 13 590 − 1 359"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"input_tokens":90,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":256}}

event: message_stop
data: {"type":"message_stop"}

`);
  add({
    name: 'anthropic-thinking-crlf',
    format: 'anthropic',
    note: 'a thinking block (thinking_delta into reasoning, signature_delta its signature), then a text block; stop_reason max_tokens; message_delta usage overrides message_start usage; CRLF',
    body,
    expected: {
      text: '27 × 453 = **12 231**。\n\n验证：453 × 30 − 453 × 3 = 13 590 − 1 359',
      reasoning: '先算 27 × 453：27 × 453 = 12231.\nCheck: 453 × 30 = 13590, minus 1359 → 12231 ✓',
      status: 'done', finishReason: 'max_tokens',
      usage: { input_tokens: 90, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 256 },
      events: 12, comments: [],
      signatures: ['EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDdcvCJ2Oqo8iMN2AiMAp6QmF7gkTv9qfhVIKPHB+nmg+7b0DoeJZS6KMF0Rl1cYF4xeBoAUsQ9Q=='],
    },
  });
}

{
  const body = String.raw`event: message_start
data: {"type": "message_start", "message": {"id": "msg_014p7gG3wDgGV9EUtLvnow3U", "type": "message", "role": "assistant", "model": "claude-3-5-haiku-20241022", "stop_sequence": null, "usage": {"input_tokens": 472, "output_tokens": 2}, "content": [], "stop_reason": null}}

event: content_block_start
data: {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Okay, let\u2019s check the weather for "}}

event: content_block_delta
data: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "San Francisco (旧金山), CA 🌉:"}}

event: content_block_stop
data: {"type": "content_block_stop", "index": 0}

event: content_block_start
data: {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "get_weather", "input": {}}}

event: content_block_delta
data: {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}}

event: content_block_delta
data: {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"location\": \"San Fra"}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "ncisco, CA\", \"unit\": \"fahrenheit\", \"note\": \"text: \\u00e9\"}"}}

event: content_block_stop
data: {"type": "content_block_stop", "index": 1}

event: message_delta
data: {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 89}}

event: message_stop
data: {"type": "message_stop"}

`;
  add({
    name: 'anthropic-tool-use',
    format: 'anthropic',
    note: 'JSON with spaces after colons and commas; a text block, then a tool_use block whose input_json_delta fragments hold quotes and a "text" key (not text); pings; stop_reason tool_use',
    body,
    expected: {
      text: 'Okay, let’s check the weather for San Francisco (旧金山), CA 🌉:',
      reasoning: '', status: 'done', finishReason: 'tool_use',
      usage: { input_tokens: 472, output_tokens: 89 },
      events: 14, comments: [],
      toolCalls: [{
        index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather',
        arguments: String.raw`{"location": "San Francisco, CA", "unit": "fahrenheit", "note": "text: \u00e9"}`, done: true, valid: true,
      }],
    },
  });
}

{
  const body = String.raw`event: message_start
data: {"type":"message_start","message":{"id":"msg_01Ovl","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":15,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Voici le début de la réponse : "}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"les élèves étudient à l\u2019école"}}

event: error
data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}

`;
  add({
    name: 'anthropic-error-mid',
    format: 'anthropic',
    note: 'deltas, then event: error (overloaded_error) mid-stream: ERR_PROVIDER "Overloaded"',
    body,
    expected: {
      text: 'Voici le début de la réponse : les élèves étudient à l’école',
      reasoning: '', status: 'failed', usage: { input_tokens: 15, output_tokens: 1 }, events: 5, comments: [],
      error: { code: 'ERR_PROVIDER', message: 'Overloaded', offset: at(body, '{"type":"error"') },
    },
  });
}

{
  const body = '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}\n';
  add({
    name: 'anthropic-error-body',
    format: 'anthropic',
    note: 'a failed request: Anthropic\'s JSON error document (type, error, request_id), no SSE framing',
    body,
    expected: {
      text: '', reasoning: '', status: 'failed', events: 1, comments: [],
      error: { code: 'ERR_PROVIDER', message: 'invalid x-api-key', offset: 0 },
    },
  });
}

{
  const body = String.raw`event: message_start
data: {"type":"message_start","message":{"id":"msg_01Trn","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":30,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Türkçe: İstanbul’da "}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hava güzel ☀️"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":12}}

`;
  add({
    name: 'anthropic-truncated',
    format: 'anthropic',
    note: 'message_delta arrived (stop_reason, usage) but not message_stop: truncated, finishReason kept',
    body,
    expected: {
      text: 'Türkçe: İstanbul’da hava güzel ☀️',
      reasoning: '', status: 'truncated', finishReason: 'end_turn',
      usage: { input_tokens: 30, output_tokens: 12 },
      events: 6, comments: [],
      error: { code: 'ERR_STREAM_TRUNCATED', offset: utf8Length(body) },
    },
  });
}

{
  const body = String.raw`event: message_start
data: {"type":"message_start","message":{"id":"msg_01Bad","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":22,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Русский текст: всё "}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"хорошо, продолж

event: message_stop
data: {"type":"message_stop"}

`;
  add({
    name: 'anthropic-bad-event',
    format: 'anthropic',
    note: 'an event whose JSON is cut short before its blank line: ERR_BAD_EVENT at the end of its data',
    body,
    expected: {
      text: 'Русский текст: всё ',
      reasoning: '', status: 'failed', usage: { input_tokens: 22, output_tokens: 1 }, events: 4, comments: [],
      error: { code: 'ERR_BAD_EVENT', offset: at(body, 'хорошо, продолж\n', 15) },
    },
  });
}

// ----- Ollama ----------------------------------------------------------------------------------

{
  const body = `{"model":"qwen3:8b","created_at":"2025-08-04T10:15:30.123456Z","message":{"role":"assistant","content":"Bonjour"},"done":false}
{"model":"qwen3:8b","created_at":"2025-08-04T10:15:30.150211Z","message":{"role":"assistant","content":" ! Voilà"},"done":false}
{"model":"qwen3:8b","created_at":"2025-08-04T10:15:30.176903Z","message":{"role":"assistant","content":" une réponse en 中文和日本語"},"done":false}
{"model":"qwen3:8b","created_at":"2025-08-04T10:15:30.203377Z","message":{"role":"assistant","content":"：\\"引用\\" 🧑"},"done":false}
{"model":"qwen3:8b","created_at":"2025-08-04T10:15:30.230014Z","message":{"role":"assistant","content":"\\u200d🍳 et\\nune ligne"},"done":false}
{"model":"qwen3:8b","created_at":"2025-08-04T10:15:30.256620Z","message":{"role":"assistant","content":" de plus."},"done":false}
{"model":"qwen3:8b","created_at":"2025-08-04T10:15:30.283155Z","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"total_duration":4883583458,"load_duration":1334875,"prompt_eval_count":26,"prompt_eval_duration":342546000,"eval_count":282,"eval_duration":4535599000}
`;
  add({
    name: 'ollama-chat',
    format: 'ollama',
    note: '/api/chat lines: message.content deltas (escaped quotes, an escaped ZWJ joining a split sequence, \\n), the done line with done_reason stop and its counts and durations',
    body,
    expected: {
      text: 'Bonjour ! Voilà une réponse en 中文和日本語："引用" 🧑‍🍳 et\nune ligne de plus.',
      reasoning: '', status: 'done', finishReason: 'stop',
      usage: { total_duration: 4883583458, load_duration: 1334875, prompt_eval_count: 26, prompt_eval_duration: 342546000, eval_count: 282, eval_duration: 4535599000 },
      events: 7, comments: [],
    },
  });
}

{
  const body = `{"model":"llama3.2","created_at":"2025-08-04T10:20:01.000000Z","response":"Once","done":false}
{"model":"llama3.2","created_at":"2025-08-04T10:20:01.021000Z","response":" upon a time, in Kraków","done":false}
{"model":"llama3.2","created_at":"2025-08-04T10:20:01.042000Z","response":", a dragon 🐉 named Smok","done":false}
{"model":"llama3.2","created_at":"2025-08-04T10:20:01.063000Z","response":" said \\"cze\\u015b\\u0107\\" to","done":false}
{"model":"llama3.2","created_at":"2025-08-04T10:20:01.084000Z","response":" everyone","done":false}
{"model":"llama3.2","created_at":"2025-08-04T10:20:01.105000Z","response":"","done":true,"done_reason":"length","context":[128006,9125,128007,271,38766,1303,33025,2696],"total_duration":1102931250,"load_duration":20463084,"prompt_eval_count":31,"prompt_eval_duration":91000000,"eval_count":8,"eval_duration":990000000}`;
  add({
    name: 'ollama-generate',
    format: 'ollama',
    note: '/api/generate lines: "response" deltas; the done line (done_reason length, a context array that is not usage) has no final newline: read at flush',
    body,
    expected: {
      text: 'Once upon a time, in Kraków, a dragon 🐉 named Smok said "cześć" to everyone',
      reasoning: '', status: 'done', finishReason: 'length',
      usage: { total_duration: 1102931250, load_duration: 20463084, prompt_eval_count: 31, prompt_eval_duration: 91000000, eval_count: 8, eval_duration: 990000000 },
      events: 6, comments: [],
    },
  });
}

{
  const body = `{"model":"llama3.1","created_at":"2025-08-04T10:25:00.000000Z","message":{"role":"assistant","content":"Je vérifie la météo à "},"done":false}
{"model":"llama3.1","created_at":"2025-08-04T10:25:00.030000Z","message":{"role":"assistant","content":"Montréal 🍁…"},"done":false}
{"model":"llama3.1","created_at":"2025-08-04T10:25:00.900000Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_current_weather","arguments":{"city":"Montréal","format":"celsius","content":"not text"}}}]},"done":false}
{"model":"llama3.1","created_at":"2025-08-04T10:25:00.930000Z","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"total_duration":885095291,"load_duration":3753500,"prompt_eval_count":122,"prompt_eval_duration":328493000,"eval_count":33,"eval_duration":552222000}
`;
  add({
    name: 'ollama-tool-calls',
    format: 'ollama',
    note: 'text, then a line with message.tool_calls (arguments as an object holding a "content" key): not text',
    body,
    expected: {
      text: 'Je vérifie la météo à Montréal 🍁…',
      reasoning: '', status: 'done', finishReason: 'stop',
      usage: { total_duration: 885095291, load_duration: 3753500, prompt_eval_count: 122, prompt_eval_duration: 328493000, eval_count: 33, eval_duration: 552222000 },
      events: 4, comments: [],
      toolCalls: [{ index: 0, id: '', name: 'get_current_weather', arguments: '{"city":"Montréal","format":"celsius","content":"not text"}', done: true, valid: true }],
    },
  });
}

{
  const body = `{"model":"mistral","created_at":"2025-08-04T10:30:00.000000Z","message":{"role":"assistant","content":"Hier ist die Antwort: "},"done":false}
{"model":"mistral","created_at":"2025-08-04T10:30:00.040000Z","message":{"role":"assistant","content":"Straße, Maß, Fuß "},"done":false}
{"error":"an error was encountered while running the model: unexpected EOF"}
`;
  add({
    name: 'ollama-error-mid',
    format: 'ollama',
    note: 'deltas, then an {"error": "..."} line: ERR_PROVIDER',
    body,
    expected: {
      text: 'Hier ist die Antwort: Straße, Maß, Fuß ',
      reasoning: '', status: 'failed', events: 3, comments: [],
      error: { code: 'ERR_PROVIDER', message: 'unexpected EOF', offset: at(body, '{"error"') },
    },
  });
}

{
  const body = '{"error":"model \\"llama9\\" not found, try pulling it first"}\n';
  add({
    name: 'ollama-error-body',
    format: 'ollama',
    note: 'a failed request (404): one JSON error line',
    body,
    expected: {
      text: '', reasoning: '', status: 'failed', events: 1, comments: [],
      error: { code: 'ERR_PROVIDER', message: 'model "llama9" not found, try pulling it first', offset: 0 },
    },
  });
}

{
  const body = `{"model":"gemma3","created_at":"2025-08-04T10:35:00.000000Z","message":{"role":"assistant","content":"Ελληνικά και "},"done":false}
{"model":"gemma3","created_at":"2025-08-04T10:35:00.025000Z","message":{"role":"assistant","content":"עברית 🕎"},"done":false}
{"model":"gemma3","created_at":"2025-08-04T10:35:00.050000Z","message":{"role":"assistant","content":" και ακόμα`;
  add({
    name: 'ollama-truncated',
    format: 'ollama',
    note: 'the connection drops inside a line (its JSON cut short): truncated, not a bad line',
    body,
    expected: {
      text: 'Ελληνικά και עברית 🕎',
      reasoning: '', status: 'truncated', events: 2, comments: [],
      error: { code: 'ERR_STREAM_TRUNCATED', offset: utf8Length(body) },
    },
  });
}

{
  const body = `{"model":"phi4","created_at":"2025-08-04T10:40:00.000000Z","message":{"role":"assistant","content":"Ok: "},"done":false}
{"model":"phi4","created_at":"2025-08-04T10:40:00.020000Z","message":{"role":"assistant","content":"naïve café"},"done":False}
{"model":"phi4","created_at":"2025-08-04T10:40:00.040000Z","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"eval_count":3}
`;
  add({
    name: 'ollama-bad-line',
    format: 'ollama',
    note: 'a line a Python proxy wrote (False): ERR_BAD_EVENT at the F',
    body,
    expected: {
      text: 'Ok: ',
      reasoning: '', status: 'failed', events: 2, comments: [],
      error: { code: 'ERR_BAD_EVENT', offset: at(body, 'False', 0) },
    },
  });
}

// ----- ddg -------------------------------------------------------------------------------------

{
  const body = String.raw`data: {"role":"assistant","message":"","created":1754300600,"id":"chatcmpl-DDG1","action":"success","model":"gpt-4o-mini-2024-07-18"}

data: {"role":"assistant","message":"DuckDuckGo 的回答：","created":1754300600,"id":"chatcmpl-DDG1","action":"success","model":"gpt-4o-mini-2024-07-18"}

data: {"role":"assistant","message":"隐私很重要 🦆","created":1754300600,"id":"chatcmpl-DDG1","action":"success","model":"gpt-4o-mini-2024-07-18"}

data: {"role":"assistant","message":"\n\u2014 \"quoted\", back\\slash, e\u0301","created":1754300600,"id":"chatcmpl-DDG1","action":"success","model":"gpt-4o-mini-2024-07-18"}

data: {"role":"assistant","message":" and 🇨","created":1754300600,"id":"chatcmpl-DDG1","action":"success","model":"gpt-4o-mini-2024-07-18"}

data: {"role":"assistant","message":"🇭.","created":1754300600,"id":"chatcmpl-DDG1","action":"success","model":"gpt-4o-mini-2024-07-18"}

data: [DONE]

`;
  add({
    name: 'ddg-message',
    format: 'ddg',
    note: 'data lines with "message" (blank lines between them), escapes, a flag split across lines, ended by data: [DONE]',
    body,
    expected: {
      text: 'DuckDuckGo 的回答：隐私很重要 🦆\n— "quoted", back\\slash, e\u0301 and 🇨🇭.',
      reasoning: '', status: 'done', events: 7, comments: [],
    },
  });
}

{
  const body = crlf(String.raw`data: {"content":"Hola, "}
data: {"content":"¿cómo estás? "}
data: {"content":"Aquí tienes: 👨‍👩‍👧"}
data: {"content":"${ZWJ}👦 una familia"}
data: {"content":" y \u00f1and\u00fa \\o/"}
[DONE]
`);
  add({
    name: 'ddg-content-crlf',
    format: 'ddg',
    note: 'translated lines with "content", CRLF, a ZWJ family split between lines, ended by a bare [DONE] line',
    body,
    expected: {
      text: 'Hola, ¿cómo estás? Aquí tienes: 👨‍👩‍👧‍👦 una familia y ñandú \\o/',
      reasoning: '', status: 'done', events: 6, comments: [],
    },
  });
}

{
  const body = String.raw`data: {"message":"Português: "}
data: {"message":"ação, coração, maçã"}
data: {"message":" 🍎"}
[DONE]`;
  add({
    name: 'ddg-done-at-eof',
    format: 'ddg',
    note: 'the bare [DONE] line has no final newline: read at flush, the stream is done',
    body,
    expected: {
      text: 'Português: ação, coração, maçã 🍎',
      reasoning: '', status: 'done', events: 4, comments: [],
    },
  });
}

{
  const body = String.raw`data: {"message":"Svenska: "}
data: {"message":"smörgåsbord och "}
data: {"message":"kött\u00adbullar"}
`;
  add({
    name: 'ddg-truncated',
    format: 'ddg',
    note: 'whole lines, then the end without [DONE]: truncated',
    body,
    expected: {
      text: 'Svenska: smörgåsbord och kött\u00adbullar',
      reasoning: '', status: 'truncated', events: 3, comments: [],
      error: { code: 'ERR_STREAM_TRUNCATED', offset: utf8Length(body) },
    },
  });
}

{
  const body = '{"error":{"message":"Too many requests: the conversation limit was reached, try again later","type":"rate_limit_error"}}';
  add({
    name: 'ddg-error-body',
    format: 'ddg',
    note: 'a failed request: a plain JSON error document, no data: prefix',
    body,
    expected: {
      text: '', reasoning: '', status: 'failed', events: 1, comments: [],
      error: { code: 'ERR_PROVIDER', message: 'Too many requests', offset: 0 },
    },
  });
}

{
  const body = String.raw`data: {"message":"Nederlands: "}
data: {"message":"één, twee, drie"}
data: {"error":{"message":"upstream closed the conversation (ERR_CONVERSATION_LIMIT)","type":"upstream_error"}}
`;
  add({
    name: 'ddg-error-line',
    format: 'ddg',
    note: 'a data line holding an error object mid-stream: ERR_PROVIDER',
    body,
    expected: {
      text: 'Nederlands: één, twee, drie',
      reasoning: '', status: 'failed', events: 3, comments: [],
      error: { code: 'ERR_PROVIDER', message: 'upstream closed the conversation', offset: at(body, '{"error"') },
    },
  });
}

{
  const body = String.raw`data: {"message":"Polski: "}
data: {"message":"zażółć gęślą jaźń"}
data: {'message': 'repr of a dict'}
data: [DONE]
`;
  add({
    name: 'ddg-bad-line',
    format: 'ddg',
    note: 'a line that is not JSON (single quotes): ERR_BAD_EVENT at its second byte',
    body,
    expected: {
      text: 'Polski: zażółć gęślą jaźń',
      reasoning: '', status: 'failed', events: 3, comments: [],
      error: { code: 'ERR_BAD_EVENT', offset: at(body, "{'message'", 1) },
    },
  });
}

// ----- The whole message: tool calls, reasoning, server tools ------------------------------------
// Recorded shapes of agents' streams: parallel calls and calls with no arguments, text before and
// between calls, the provider's own tools beside the client's, thinking with its signature,
// Mistral's content arrays and calls without `index`, invalid arguments, a fragment for a call
// that never began, and streams cut inside a call's arguments.

{
  const c = (delta: string, finish = 'null') => `data: {"id":"chatcmpl-Dk9q","object":"chat.completion.chunk","created":1764600000,"model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}]}\n\n`;
  const body = c('{"role":"assistant","content":null}')
    + c('{"tool_calls":[{"index":0,"id":"call_A1","type":"function","function":{"name":"read_file","arguments":""}}]}')
    + c('{"tool_calls":[{"index":0,"function":{"arguments":"{\\"path\\": \\"src/é.ts"}}]}')
    + c('{"tool_calls":[{"index":0,"function":{"arguments":"\\"}"}}]}')
    + c('{"tool_calls":[{"index":1,"id":"call_B2","type":"function","function":{"name":"list_dir","arguments":""}}]}')
    + c('{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}')
    + c('{"tool_calls":[{"index":2,"id":"call_C3","type":"function","function":{"name":"now","arguments":""}}]}')
    + c('{}', '"tool_calls"')
    + 'data: {"id":"chatcmpl-Dk9q","object":"chat.completion.chunk","created":1764600000,"model":"gpt-4.1-2025-04-14","choices":[],"usage":{"prompt_tokens":41,"completion_tokens":30,"total_tokens":71,"prompt_tokens_details":{"cached_tokens":32}}}\n\n'
    + 'data: [DONE]\n\n';
  add({
    name: 'openai-parallel-calls',
    format: 'openai',
    note: 'three parallel calls: escaped quotes and a non-ASCII path in fragments, one with `{}`, one with no arguments at all (invalid: empty); usage chunk with no choices',
    body,
    expected: {
      text: '', reasoning: '', status: 'done', finishReason: 'tool_calls', events: 10, comments: [],
      usage: { prompt_tokens: 41, completion_tokens: 30, total_tokens: 71, prompt_tokens_details: { cached_tokens: 32 } },
      toolCalls: [
        { index: 0, id: 'call_A1', name: 'read_file', arguments: '{"path": "src/é.ts"}', done: true, valid: true },
        { index: 1, id: 'call_B2', name: 'list_dir', arguments: '{}', done: true, valid: true },
        { index: 2, id: 'call_C3', name: 'now', arguments: '', done: true, valid: false },
      ],
    },
  });
}

{
  const c = (delta: string, finish = 'null') => `data: {"id":"0199a1b2","object":"chat.completion.chunk","created":1764600010,"model":"deepseek-chat","choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}]}\n\n`;
  const body = c('{"role":"assistant","content":"","reasoning_content":"The user wants "}')
    + c('{"content":null,"reasoning_content":"two lookups."}')
    + c('{"content":"Checking "}')
    + c('{"content":"both: "}')
    + c('{"tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"name":"weather","arguments":""}}]}')
    + c('{"tool_calls":[{"index":0,"id":"","type":"function","function":{"name":"","arguments":"{\\"city\\":"}}]}')
    + c('{"tool_calls":[{"index":0,"function":{"arguments":" \\"Oslo\\"}"}}]}')
    + c('{"content":" then "}')
    + c('{"tool_calls":[{"index":3,"function":{"arguments":"{\\"x\\":"}}]}')
    + c('{"tool_calls":[{"index":0,"function":{"arguments":"trailing"}}]}')
    + c('{}', '"tool_calls"')
    + 'data: [DONE]\n\n';
  add({
    name: 'openai-reasoning-calls-text',
    format: 'openai',
    note: 'reasoning_content, text before and between calls, a name sent again as "", a fragment for index 3 that never began (it begins a call), arguments made invalid by a late fragment',
    body,
    expected: {
      text: 'Checking both:  then ', reasoning: 'The user wants two lookups.', status: 'done', finishReason: 'tool_calls', events: 12, comments: [],
      toolCalls: [
        { index: 0, id: 'call_0', name: 'weather', arguments: '{"city": "Oslo"}trailing', done: true, valid: false },
        { index: 1, id: '', name: '', arguments: '{"x":', done: true, valid: false },
      ],
    },
  });
}

{
  const c = (delta: string, finish = 'null') => `data: {"id":"6f1e","object":"chat.completion.chunk","created":1764600020,"model":"magistral-medium-2509","choices":[{"index":0,"delta":${delta},"finish_reason":${finish}}]}\n\n`;
  const body = c('{"role":"assistant","content":""}')
    + c('{"content":[{"type":"thinking","thinking":[{"type":"text","text":"Need the "}]}]}')
    + c('{"content":[{"type":"thinking","thinking":[{"type":"text","text":"rate. "}]}]}')
    + c('{"content":[{"type":"text","text":"Let me look "}]}')
    + c('{"content":[{"type":"text","text":"it up. 💱"}]}')
    + c('{"tool_calls":[{"id":"k9Xq2","function":{"name":"rate","arguments":"{\\"pair\\": \\"EUR/JPY\\"}"}},{"id":"Wm3pL","function":{"name":"clock","arguments":"{}"}}]}', '"tool_calls"')
    + 'data: {"id":"6f1e","object":"chat.completion.chunk","created":1764600020,"model":"magistral-medium-2509","choices":[],"usage":{"prompt_tokens":20,"total_tokens":45,"completion_tokens":25}}\n\n'
    + 'data: [DONE]\n\n';
  add({
    name: 'openai-mistral-arrays',
    format: 'openai',
    note: "Mistral: content as arrays of thinking and text parts; two calls whole, without index, in one delta with the finish",
    body,
    expected: {
      text: 'Let me look it up. 💱', reasoning: 'Need the rate. ', status: 'done', finishReason: 'tool_calls', events: 8, comments: [],
      usage: { prompt_tokens: 20, total_tokens: 45, completion_tokens: 25 },
      toolCalls: [
        { index: 0, id: 'k9Xq2', name: 'rate', arguments: '{"pair": "EUR/JPY"}', done: true, valid: true },
        { index: 1, id: 'Wm3pL', name: 'clock', arguments: '{}', done: true, valid: true },
      ],
    },
  });
}

{
  const c = (delta: string) => `data: {"id":"chatcmpl-Ew2","object":"chat.completion.chunk","created":1764600030,"model":"gpt-4o","choices":[{"index":0,"delta":${delta},"finish_reason":null}]}\n\n`;
  const body = c('{"role":"assistant","content":"Writing it."}')
    + c('{"tool_calls":[{"index":0,"id":"call_W","type":"function","function":{"name":"write_file","arguments":""}}]}')
    + c('{"tool_calls":[{"index":0,"function":{"arguments":"{\\"path\\":\\"a.txt\\",\\"content\\":\\"Hello"}}]}')
    + c('{"tool_calls":[{"index":0,"function":{"arguments":", wor"}}]}');
  add({
    name: 'openai-cut-in-call',
    format: 'openai',
    note: "the stream is cut inside a call's arguments: truncated, the call not done",
    body,
    expected: {
      text: 'Writing it.', reasoning: '', status: 'truncated', events: 4, comments: [],
      error: { code: 'ERR_STREAM_TRUNCATED', offset: utf8Length(body) },
      toolCalls: [{ index: 0, id: 'call_W', name: 'write_file', arguments: '{"path":"a.txt","content":"Hello, wor', done: false }],
    },
  });
}

{
  const a = (type: string, data: string) => `event: ${type}\ndata: ${data}\n\n`;
  const body = a('message_start', '{"type":"message_start","message":{"id":"msg_01Srv","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":2048,"cache_creation_input_tokens":0,"cache_read_input_tokens":1024,"output_tokens":3}}}')
    + a('content_block_start', '{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}')
    + a('content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Search, then "}}')
    + a('content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"call the tool."}}')
    + a('content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EuYBCkQYAiJA0sig=="}}')
    + a('content_block_stop', '{"type":"content_block_stop","index":0}')
    + a('content_block_start', '{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xl"}}')
    + a('content_block_stop', '{"type":"content_block_stop","index":1}')
    + a('content_block_start', '{"type":"content_block_start","index":2,"content_block":{"type":"server_tool_use","id":"srvtoolu_014","name":"web_search","input":{}}}')
    + a('content_block_delta', '{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}')
    + a('content_block_delta', '{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\\"query\\": \\"Zürich weather\\"}"}}')
    + a('content_block_stop', '{"type":"content_block_stop","index":2}')
    + a('content_block_start', '{"type":"content_block_start","index":3,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_014","content":[{"type":"web_search_result","title":"Wetter","url":"https://example.com","encrypted_content":"Eq8B"}]}}')
    + a('content_block_stop', '{"type":"content_block_stop","index":3}')
    + a('content_block_start', '{"type":"content_block_start","index":4,"content_block":{"type":"text","text":""}}')
    + a('content_block_delta', '{"type":"content_block_delta","index":4,"delta":{"type":"text_delta","text":"Found it; "}}')
    + a('content_block_stop', '{"type":"content_block_stop","index":4}')
    + a('ping', '{"type": "ping"}')
    + a('content_block_start', '{"type":"content_block_start","index":5,"content_block":{"type":"tool_use","id":"toolu_01Ab","name":"save_note","input":{}}}')
    + a('content_block_delta', '{"type":"content_block_delta","index":5,"delta":{"type":"input_json_delta","partial_json":""}}')
    + a('content_block_delta', '{"type":"content_block_delta","index":5,"delta":{"type":"input_json_delta","partial_json":"{\\"text\\": \\"3°C, ☁\\"}"}}')
    + a('content_block_stop', '{"type":"content_block_stop","index":5}')
    + a('content_block_start', '{"type":"content_block_start","index":6,"content_block":{"type":"tool_use","id":"toolu_01Cd","name":"ping_host","input":{}}}')
    + a('content_block_stop', '{"type":"content_block_stop","index":6}')
    + a('message_delta', '{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":187}}')
    + a('message_stop', '{"type":"message_stop"}');
  add({
    name: 'anthropic-server-tools-thinking',
    format: 'anthropic',
    note: "thinking with its signature, a redacted block, a server tool call and its result (the provider's own), text, then two client calls (one with no input: its start's {}); a ping",
    body,
    expected: {
      text: 'Found it; ', reasoning: 'Search, then call the tool.', status: 'done', finishReason: 'tool_use', events: 26, comments: [],
      usage: { input_tokens: 2048, cache_creation_input_tokens: 0, cache_read_input_tokens: 1024, output_tokens: 187 },
      signatures: ['EuYBCkQYAiJA0sig==', 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xl'],
      toolCalls: [
        { index: 0, id: 'toolu_01Ab', name: 'save_note', arguments: '{"text": "3°C, ☁"}', done: true, valid: true },
        { index: 1, id: 'toolu_01Cd', name: 'ping_host', arguments: '{}', done: true, valid: true },
      ],
      serverToolCalls: [{
        index: 0, id: 'srvtoolu_014', name: 'web_search', arguments: '{"query": "Zürich weather"}', done: true, valid: true,
        result: '{"type":"web_search_tool_result","tool_use_id":"srvtoolu_014","content":[{"type":"web_search_result","title":"Wetter","url":"https://example.com","encrypted_content":"Eq8B"}]}',
      }],
    },
  });
}

{
  const a = (type: string, data: string) => `event: ${type}\ndata: ${data}\n\n`;
  const body = a('message_start', '{"type":"message_start","message":{"id":"msg_01Cut","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":30,"output_tokens":1}}}')
    + a('content_block_start', '{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01Ed","name":"edit","input":{}}}')
    + a('content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"old\\": \\"a\\", "}}')
    + 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\\"new\\": ';
  add({
    name: 'anthropic-cut-in-call',
    format: 'anthropic',
    note: "cut inside an event of a call's arguments: truncated, the call not done, no message_stop",
    body,
    expected: {
      text: '', reasoning: '', status: 'truncated', events: 3, comments: [],
      usage: { input_tokens: 30, output_tokens: 1 },
      error: { code: 'ERR_STREAM_TRUNCATED', offset: utf8Length(body) },
      toolCalls: [{ index: 0, id: 'toolu_01Ed', name: 'edit', arguments: '{"old": "a", ', done: false }],
    },
  });
}

{
  const e = (type: string, data: string) => `event: ${type}\ndata: ${data}\n\n`;
  const body = e('response.created', '{"type":"response.created","sequence_number":0,"response":{"id":"resp_9","object":"response","status":"in_progress","output":[]}}')
    + e('response.output_item.added', '{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}')
    + e('response.reasoning_summary_text.delta', '{"type":"response.reasoning_summary_text.delta","sequence_number":2,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"**Plan** search first"}')
    + e('response.output_item.done', '{"type":"response.output_item.done","sequence_number":3,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"**Plan** search first"}]}}')
    + e('response.output_item.added', '{"type":"response.output_item.added","sequence_number":4,"output_index":1,"item":{"id":"ws_2","type":"web_search_call","status":"in_progress"}}')
    + e('response.output_item.done', '{"type":"response.output_item.done","sequence_number":5,"output_index":1,"item":{"id":"ws_2","type":"web_search_call","status":"completed","action":{"type":"search","query":"jpy eur"}}}')
    + e('response.output_item.added', '{"type":"response.output_item.added","sequence_number":6,"output_index":2,"item":{"id":"fc_3","type":"function_call","status":"in_progress","arguments":"","call_id":"call_AAA","name":"convert"}}')
    + e('response.function_call_arguments.delta', '{"type":"response.function_call_arguments.delta","sequence_number":7,"item_id":"fc_3","output_index":2,"delta":"{\\"amount\\":"}')
    + e('response.function_call_arguments.delta', '{"type":"response.function_call_arguments.delta","sequence_number":8,"item_id":"fc_3","output_index":2,"delta":"100}"}')
    + e('response.function_call_arguments.done', '{"type":"response.function_call_arguments.done","sequence_number":9,"item_id":"fc_3","output_index":2,"arguments":"{\\"amount\\":100}"}')
    + e('response.output_item.done', '{"type":"response.output_item.done","sequence_number":10,"output_index":2,"item":{"id":"fc_3","type":"function_call","status":"completed","arguments":"{\\"amount\\":100}","call_id":"call_AAA","name":"convert"}}')
    + e('response.output_item.added', '{"type":"response.output_item.added","sequence_number":11,"output_index":3,"item":{"id":"fc_4","type":"function_call","status":"in_progress","arguments":"","call_id":"call_BBB","name":"noop"}}')
    + e('response.function_call_arguments.done', '{"type":"response.function_call_arguments.done","sequence_number":12,"item_id":"fc_4","output_index":3,"arguments":"{}"}')
    + e('response.output_item.done', '{"type":"response.output_item.done","sequence_number":13,"output_index":3,"item":{"id":"fc_4","type":"function_call","status":"completed","arguments":"{}","call_id":"call_BBB","name":"noop"}}')
    + e('response.completed', '{"type":"response.completed","sequence_number":14,"response":{"id":"resp_9","object":"response","status":"completed","usage":{"input_tokens":88,"input_tokens_details":{"cached_tokens":0},"output_tokens":40,"output_tokens_details":{"reasoning_tokens":20},"total_tokens":128}}}');
  add({
    name: 'responses-hosted-and-calls',
    format: 'openai-responses',
    note: "a reasoning summary, a hosted web search (the provider's own), a function call in fragments with .done repeating the whole, and one whose arguments come only in .done",
    body,
    expected: {
      text: '', reasoning: '**Plan** search first', status: 'done', finishReason: 'completed', events: 15, comments: [],
      usage: { input_tokens: 88, input_tokens_details: { cached_tokens: 0 }, output_tokens: 40, output_tokens_details: { reasoning_tokens: 20 }, total_tokens: 128 },
      toolCalls: [
        { index: 0, id: 'call_AAA', name: 'convert', arguments: '{"amount":100}', done: true, valid: true },
        { index: 1, id: 'call_BBB', name: 'noop', arguments: '{}', done: true, valid: true },
      ],
      serverToolCalls: [{ index: 0, id: 'ws_2', name: 'web_search_call', arguments: '{"action":{"type":"search","query":"jpy eur"}}', done: true, valid: true }],
    },
  });
}

{
  const e = (type: string, data: string) => `event: ${type}\ndata: ${data}\n\n`;
  const shell = '"id":"sh_1","type":"shell_call","call_id":"call_sh","environment":{"type":"local"}';
  const patch = '"id":"apc_2","type":"apply_patch_call","call_id":"call_ap","operation":{"type":"update_file","path":"src/été.ts","diff":"@@\\n-a\\n+\\"b\\" 🚀\\n"}';
  const hosted = '"id":"sh_3","type":"shell_call","call_id":"call_hs","environment":{"type":"container_reference","container_id":"cntr_1"}';
  const ask = '"id":"mcpr_4","type":"mcp_approval_request","server_label":"docs","name":"ask","arguments":"{\\"q\\":\\"x\\"}"';
  const body = e('response.created', '{"type":"response.created","sequence_number":0,"response":{"id":"resp_7","object":"response","status":"in_progress","output":[]}}')
    + e('response.output_item.added', `{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{${shell},"status":"in_progress","action":{"commands":[],"timeout_ms":null}}}`)
    + e('response.shell_call_command.added', '{"type":"response.shell_call_command.added","sequence_number":2,"output_index":0,"command_index":0,"command":""}')
    + e('response.shell_call_command.delta', '{"type":"response.shell_call_command.delta","sequence_number":3,"output_index":0,"command_index":0,"delta":"ls -la"}')
    + e('response.shell_call_command.done', '{"type":"response.shell_call_command.done","sequence_number":4,"output_index":0,"command_index":0,"command":"ls -la"}')
    + e('response.output_item.done', `{"type":"response.output_item.done","sequence_number":5,"output_index":0,"item":{${shell},"status":"completed","action":{"commands":["ls -la"],"timeout_ms":null}}}`)
    + e('response.output_item.added', `{"type":"response.output_item.added","sequence_number":6,"output_index":1,"item":{${patch},"status":"in_progress"}}`)
    + e('response.output_item.done', `{"type":"response.output_item.done","sequence_number":7,"output_index":1,"item":{${patch},"status":"completed"}}`)
    + e('response.output_item.added', `{"type":"response.output_item.added","sequence_number":8,"output_index":2,"item":{${hosted},"status":"in_progress","action":{"commands":["pwd"],"timeout_ms":null}}}`)
    + e('response.output_item.done', `{"type":"response.output_item.done","sequence_number":9,"output_index":2,"item":{${hosted},"status":"completed","action":{"commands":["pwd"],"timeout_ms":null}}}`)
    + e('response.output_item.added', `{"type":"response.output_item.added","sequence_number":10,"output_index":3,"item":{${ask}}}`)
    + e('response.output_item.done', `{"type":"response.output_item.done","sequence_number":11,"output_index":3,"item":{${ask}}}`)
    + e('response.completed', '{"type":"response.completed","sequence_number":12,"response":{"id":"resp_7","object":"response","status":"completed","usage":{"input_tokens":50,"output_tokens":30,"total_tokens":80}}}');
  add({
    name: 'responses-client-run-tools',
    format: 'openai-responses',
    note: "the items of the API's tools the client runs, said whole by their item's end: a shell call in the local environment (its command streamed), an apply_patch call (accents, an emoji and escapes in its operation), an MCP approval request; and a shell call in a container, the provider's own",
    body,
    expected: {
      text: '', reasoning: '', status: 'done', finishReason: 'completed', events: 13, comments: [],
      usage: { input_tokens: 50, output_tokens: 30, total_tokens: 80 },
      toolCalls: [
        { index: 0, id: 'call_sh', name: 'shell', arguments: '{"environment":{"type":"local"},"action":{"commands":["ls -la"],"timeout_ms":null}}', done: true, valid: true, type: 'shell_call' },
        { index: 1, id: 'call_ap', name: 'apply_patch', arguments: '{"operation":{"type":"update_file","path":"src/été.ts","diff":"@@\\n-a\\n+\\"b\\" 🚀\\n"}}', done: true, valid: true, type: 'apply_patch_call' },
        { index: 2, id: 'mcpr_4', name: 'ask', arguments: '{"server_label":"docs","name":"ask","arguments":"{\\"q\\":\\"x\\"}"}', done: true, valid: true, type: 'mcp_approval_request' },
      ],
      serverToolCalls: [{ index: 0, id: 'sh_3', name: 'shell_call', arguments: '{"environment":{"type":"container_reference","container_id":"cntr_1"},"action":{"commands":["pwd"],"timeout_ms":null}}', done: true, valid: true }],
    },
  });
}

{
  const body = '{"model":"qwen3","created_at":"2026-11-30T10:00:00Z","message":{"role":"assistant","content":"","thinking":"Two cities."},"done":false}\n'
    + '{"model":"qwen3","created_at":"2026-11-30T10:00:01Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"weather","arguments":{"city":"Lyon"}}},{"function":{"name":"weather","arguments":{"city":"Köln","days":[1,2]}}}]},"done":false}\n'
    + '{"model":"qwen3","created_at":"2026-11-30T10:00:02Z","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"total_duration":5000,"prompt_eval_count":12,"eval_count":30}\n';
  add({
    name: 'ollama-parallel-calls',
    format: 'ollama',
    note: 'thinking, then two whole calls in one line (arguments objects, one with an array)',
    body,
    expected: {
      text: '', reasoning: 'Two cities.', status: 'done', finishReason: 'stop', events: 3, comments: [],
      usage: { total_duration: 5000, prompt_eval_count: 12, eval_count: 30 },
      toolCalls: [
        { index: 0, id: '', name: 'weather', arguments: '{"city":"Lyon"}', done: true, valid: true },
        { index: 1, id: '', name: 'weather', arguments: '{"city":"Köln","days":[1,2]}', done: true, valid: true },
      ],
    },
  });
}

// ----- Gemini (streamGenerateContent?alt=sse) --------------------------------------------------
// Written from ai.google.dev/api/generate-content (GenerateContentResponse, Candidate, Part,
// FunctionCall, UsageMetadata, PromptFeedback) and the streams the API sends: CR LF line ends,
// Google's JSON spacing (a space after each colon), usageMetadata in every chunk.

{
  const c = (text: string, extra = '') => `data: {"candidates": [{"content": {"parts": [{"text": ${JSON.stringify(text)}}],"role": "model"}${extra},"index": 0}],"usageMetadata": {"promptTokenCount": 9,"totalTokenCount": 9},"modelVersion": "gemini-2.5-flash","responseId": "mJ4vaLnrMs"}\n\n`;
  const body = crlf(c('Grüße aus 東京 ')
    + c(`🇯🇵 und e${'\u0301'} — "Zitat"\\`)
    + `data: {"candidates": [{"content": {"parts": [{"text": "\\tEnde.\\n"}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 9,"candidatesTokenCount": 14,"totalTokenCount": 23,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 9}]},"modelVersion": "gemini-2.5-flash","responseId": "mJ4vaLnrMs"}\n\n`);
  add({
    name: 'gemini-basic',
    format: 'gemini',
    note: 'CR LF events, text in parts, the last chunk with finishReason STOP and the whole usageMetadata completes it',
    body,
    expected: {
      text: `Grüße aus 東京 🇯🇵 und e${'\u0301'} — "Zitat"\\\tEnde.\n`,
      reasoning: '', status: 'done', finishReason: 'STOP', events: 3, comments: [],
      usage: { promptTokenCount: 9, candidatesTokenCount: 14, totalTokenCount: 23, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 9 }] },
    },
  });
}

{
  const body = crlf(`data: {"candidates":[{"content":{"parts":[{"text":"**Weighing the options**\\nThe user asks for","thought":true}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":12,"totalTokenCount":40,"thoughtsTokenCount":28},"modelVersion":"gemini-2.5-pro"}

data: {"candidates":[{"content":{"parts":[{"text":" a haiku.","thought":true}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":12,"totalTokenCount":52,"thoughtsTokenCount":40},"modelVersion":"gemini-2.5-pro"}

data: {"candidates":[{"content":{"parts":[{"text":"古池や\\n","thoughtSignature":"CiQBVKhc7v2Pw3t0k5Z9yPq0sQ=="}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":4,"totalTokenCount":56,"thoughtsTokenCount":40},"modelVersion":"gemini-2.5-pro"}

data: {"candidates":[{"content":{"parts":[{"text":"蛙飛び込む\\n水の音"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":11,"totalTokenCount":63,"thoughtsTokenCount":40},"modelVersion":"gemini-2.5-pro"}

data: {"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":11,"totalTokenCount":63,"cachedContentTokenCount":4,"thoughtsTokenCount":40},"modelVersion":"gemini-2.5-pro"}

`);
  add({
    name: 'gemini-thinking',
    format: 'gemini',
    note: 'thought: true parts are reasoning, never text; the thoughtSignature on the first answer part is kept',
    body,
    expected: {
      text: '古池や\n蛙飛び込む\n水の音',
      reasoning: '**Weighing the options**\nThe user asks for a haiku.', status: 'done', finishReason: 'STOP', events: 5, comments: [],
      usage: { promptTokenCount: 12, candidatesTokenCount: 11, totalTokenCount: 63, cachedContentTokenCount: 4, thoughtsTokenCount: 40 },
      signatures: ['CiQBVKhc7v2Pw3t0k5Z9yPq0sQ=='],
    },
  });
}

{
  // Grounding with Google Search: the answer in chunks (one of two parts), its non-ASCII text making
  // bytes and UTF-16 units differ (ü, ö, a narrow no-break space as an escape, „“, a flag); the last
  // chunk says the sources, the spans each backs (bytes of the answer's UTF-8 from its start; a
  // zero startIndex left out, as proto3's JSON does; confidenceScores on one support only), the
  // queries and the Search Suggestions (Google's JSON writes < and > as escapes). Its spans in
  // the test that reads them: test/unit/grounding.test.ts.
  const c = (parts: string, extra = '', usage = '"promptTokenCount": 11,"totalTokenCount": 61,"thoughtsTokenCount": 50') => `data: {"candidates": [{"content": {"parts": [${parts}],"role": "model"}${extra},"index": 0}],"usageMetadata": {${usage}},"modelVersion": "gemini-2.5-flash","responseId": "gRndaPq9Ho2Az7IPkZ3ZoQo"}\n\n`;
  const body = crlf(c(`{"text": "**Checking the numbers**\\nLooking up Zürich's population and where its name comes from.","thought": true}`)
    + c(`{"text": "Zürich ist mit rund 443\\u202f000 Einwohnern ","thoughtSignature": "CrcBAdHtim8Vq3e+"}`)
    + c(`{"text": "die größte Stadt der Schweiz. "}`)
    + c(`{"text": "Der Name geht auf das keltische „Turicum“ zurück"},{"text": " 🇨🇭. "}`)
    + c(`{"text": "Die Altstadt liegt an der Limmat."}`, `,"finishReason": "STOP","groundingMetadata": {"searchEntryPoint": {"renderedContent": "\\u003cstyle\\u003e\\n.container { display: flex; }\\n\\u003c/style\\u003e\\n\\u003cdiv class=\\"container\\"\\u003e\\u003ca class=\\"chip\\" href=\\"https://www.google.com/search?q=Z%C3%BCrich+Einwohner\\"\\u003eZürich Einwohner\\u003c/a\\u003e\\u003c/div\\u003e\\n"},"groundingChunks": [{"web": {"uri": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQH1","title": "stadt-zuerich.ch"}},{"web": {"uri": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQH2","title": "wikipedia.org"}},{"web": {"uri": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQH3","title": "nzz.ch"}}],"groundingSupports": [{"segment": {"endIndex": 73,"text": "Zürich ist mit rund 443\\u202f000 Einwohnern die größte Stadt der Schweiz."},"groundingChunkIndices": [0,1],"confidenceScores": [0.95,0.81]},{"segment": {"startIndex": 74,"endIndex": 137,"text": "Der Name geht auf das keltische „Turicum“ zurück 🇨🇭."},"groundingChunkIndices": [1,2]},{"segment": {"startIndex": 138,"endIndex": 171,"text": "Die Altstadt liegt an der Limmat."},"groundingChunkIndices": [2]}],"retrievalMetadata": {},"webSearchQueries": ["Zürich Einwohner 2025","Zürich Name Herkunft Turicum"]}`,
      '"promptTokenCount": 11,"candidatesTokenCount": 52,"totalTokenCount": 245,"toolUsePromptTokenCount": 132,"thoughtsTokenCount": 50'));
  add({
    name: 'gemini-grounded',
    format: 'gemini',
    note: 'Grounding with Google Search: non-ASCII text over chunks and parts, the grounding metadata in the last chunk with the finish',
    body,
    expected: {
      text: 'Zürich ist mit rund 443\u202f000 Einwohnern die größte Stadt der Schweiz. Der Name geht auf das keltische „Turicum“ zurück 🇨🇭. Die Altstadt liegt an der Limmat.',
      reasoning: "**Checking the numbers**\nLooking up Zürich's population and where its name comes from.", status: 'done', finishReason: 'STOP', events: 5, comments: [],
      usage: { promptTokenCount: 11, candidatesTokenCount: 52, totalTokenCount: 245, toolUsePromptTokenCount: 132, thoughtsTokenCount: 50 },
      signatures: ['CrcBAdHtim8Vq3e+'],
      // (characters: the flag is two, four UTF-16 units and eight bytes)
      groundedSpans: [
        { url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQH1', title: 'stadt-zuerich.ch', start: 0, end: 68 },
        { url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQH2', title: 'wikipedia.org', start: 0, end: 68 },
        { url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQH2', title: 'wikipedia.org', start: 69, end: 121 },
        { url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQH3', title: 'nzz.ch', start: 69, end: 121 },
        { url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQH3', title: 'nzz.ch', start: 122, end: 155 },
      ],
    },
  });
}

{
  const body = crlf(`data: {"candidates": [{"content": {"parts": [{"text": "Ich sehe nach: "}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 70,"totalTokenCount": 70},"modelVersion": "gemini-2.5-flash"}

data: {"candidates": [{"content": {"parts": [{"functionCall": {"id": "call-7f3a","name": "get_weather","args": {"city": "Zürich","units": "celsius","text": "not the answer's"}},"thoughtSignature": "EpQCAcu98PBz"},{"functionCall": {"name": "get_time","args": {"zones": ["Europe/Zurich", "Asia/Tokyo"],"nested": {"a": [1, 2.5e3, true, null]}}}},{"functionCall": {"name": "list_alerts"}}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 70,"candidatesTokenCount": 31,"totalTokenCount": 101},"modelVersion": "gemini-2.5-flash"}

`);
  add({
    name: 'gemini-function-calls',
    format: 'gemini',
    note: 'text, then three whole functionCalls in one chunk: with an id and a thoughtSignature (the call\'s), nested args, and no args at all ({}); STOP with calls',
    body,
    expected: {
      text: 'Ich sehe nach: ',
      reasoning: '', status: 'done', finishReason: 'STOP', events: 2, comments: [],
      usage: { promptTokenCount: 70, candidatesTokenCount: 31, totalTokenCount: 101 },
      toolCalls: [
        { index: 0, id: 'call-7f3a', name: 'get_weather', arguments: '{"city": "Zürich","units": "celsius","text": "not the answer\'s"}', done: true, valid: true, signature: 'EpQCAcu98PBz' },
        { index: 1, id: '', name: 'get_time', arguments: '{"zones": ["Europe/Zurich", "Asia/Tokyo"],"nested": {"a": [1, 2.5e3, true, null]}}', done: true, valid: true },
        { index: 2, id: '', name: 'list_alerts', arguments: '{}', done: true, valid: true },
      ],
    },
  });
}

{
  // Vertex AI with toolConfig.functionCallingConfig.streamFunctionCallArguments (Gemini 3): each
  // call begins with a part of its name and willContinue (its thoughtSignature beside), its
  // arguments come as partialArgs (a JSON path and a value; a string in pieces while willContinue),
  // an empty functionCall ends it; shapes as Vertex sends them (aiplatform v1 FunctionCall,
  // PartialArg; recorded streams of the Vercel AI SDK's tests)
  const v = (parts: string, extra = '') => `data: {"candidates":[{"content":{"role":"model","parts":[${parts}]}${extra}}],"usageMetadata":{"trafficType":"ON_DEMAND"},"modelVersion":"gemini-3.1-pro-preview","createTime":"2026-04-07T16:49:58.333958Z","responseId":"tjXVaYaxFISTq8YP"}\n\n`;
  const pa = (args: string, more = true) => v(`{"functionCall":{"partialArgs":[${args}]${more ? ',"willContinue":true' : ''}}}`);
  const body = crlf(v('{"text":"Ich koche: "}')
    + v('{"functionCall":{"name":"cookRecipe","willContinue":true},"thoughtSignature":"CmIBjz1rX0OQ+/8="}')
    + pa('{"jsonPath":"$.recipe.name","stringValue":"Lasagne \\"al forno\\" für ","willContinue":true}')
    + pa('{"jsonPath":"$.recipe.name","stringValue":"4 Personen 🍝","willContinue":true}')
    + pa('{"jsonPath":"$.recipe.name","stringValue":""}')
    + pa('{"jsonPath":"$.recipe.ingredients[0].amount","stringValue":"16 oz","willContinue":true}')
    + pa('{"jsonPath":"$.recipe.ingredients[0].amount","stringValue":""}')
    + pa('{"jsonPath":"$.recipe.ingredients[0].grams","numberValue":453.5},{"jsonPath":"$.recipe.ingredients[0].fresh","boolValue":false}')
    + v('{"functionCall":{"willContinue":true}}')
    + pa('{"jsonPath":"$.recipe.ingredients[1].amount","stringValue":"1\\nlb"},{"jsonPath":"$.recipe.ingredients[1].note","nullValue":"NULL_VALUE"}')
    + pa('{"jsonPath":"$.recipe[\'oven.temp\']","numberValue":180},{"jsonPath":"$.steps[0]","stringValue":"Heat","willContinue":true}')
    + pa('{"jsonPath":"$.steps[0]","stringValue":" the oven."}')
    + pa('{"jsonPath":"$.steps[1]","stringValue":"Layer, bake."},{"jsonPath":"$.vegetarian","boolValue":true}')
    + v('{"functionCall":{}}')
    + v('{"functionCall":{"name":"setTimer","willContinue":true}}')
    + pa('{"jsonPath":"$.minutes","numberValue":45}')
    + v('{"functionCall":{}}', ',"finishReason":"STOP"').replace('"usageMetadata":{"trafficType":"ON_DEMAND"}', '"usageMetadata":{"promptTokenCount":31,"candidatesTokenCount":684,"totalTokenCount":1741,"trafficType":"ON_DEMAND","thoughtsTokenCount":1026}'));
  const recipe = {
    recipe: {
      name: 'Lasagne "al forno" für 4 Personen 🍝',
      ingredients: [{ amount: '16 oz', grams: 453.5, fresh: false }, { amount: '1\nlb', note: null }],
      'oven.temp': 180,
    },
    steps: ['Heat the oven.', 'Layer, bake.'],
    vegetarian: true,
  };
  add({
    name: 'gemini-streamed-args',
    format: 'gemini',
    note: 'Vertex\'s streamed function-call arguments: two calls in parts (strings in pieces, numbers, booleans, null, nested objects and arrays, a bracketed name), each one JSON text, the first with its signature',
    body,
    expected: {
      text: 'Ich koche: ', reasoning: '', status: 'done', finishReason: 'STOP', events: 17, comments: [],
      usage: { promptTokenCount: 31, candidatesTokenCount: 684, totalTokenCount: 1741, trafficType: 'ON_DEMAND', thoughtsTokenCount: 1026 },
      toolCalls: [
        { index: 0, id: '', name: 'cookRecipe', arguments: JSON.stringify(recipe), done: true, valid: true, signature: 'CmIBjz1rX0OQ+/8=' },
        { index: 1, id: '', name: 'setTimer', arguments: '{"minutes":45}', done: true, valid: true },
      ],
    },
  });

  // no empty functionCall at the end: the call's last part has no willContinue; the finish after it
  const end = crlf(v('{"functionCall":{"id":"fc-1","name":"writeItems","willContinue":true},"thoughtSignature":"AY89a19Z"}')
    + pa('{"jsonPath":"$.operations[0].action","stringValue":"add","willContinue":true}')
    + pa('{"jsonPath":"$.operations[0].action","stringValue":""}')
    + pa('{"jsonPath":"$.operations[0].price","numberValue":0.5}')
    + pa('{"jsonPath":"$.operations[1].action","stringValue":"add"},{"jsonPath":"$.operations[1].price","numberValue":0.3}', false)
    + v('{"text":""}', ',"finishReason":"STOP"'));
  add({
    name: 'gemini-streamed-args-unterminated',
    format: 'gemini',
    note: 'a call in parts whose last part has no willContinue (no empty functionCall after it) ends there; then the finish',
    body: end,
    expected: {
      text: '', reasoning: '', status: 'done', finishReason: 'STOP', events: 6, comments: [],
      usage: { trafficType: 'ON_DEMAND' },
      toolCalls: [
        { index: 0, id: 'fc-1', name: 'writeItems', arguments: '{"operations":[{"action":"add","price":0.5},{"action":"add","price":0.3}]}', done: true, valid: true, signature: 'AY89a19Z' },
      ],
    },
  });

  // the connection drops while a call's arguments stream: the call stays open, its arguments as far as they came
  const cut = crlf(v('{"functionCall":{"name":"search","willContinue":true}}')
    + pa('{"jsonPath":"$.query","stringValue":"Wetter in ","willContinue":true}')
    + pa('{"jsonPath":"$.query","stringValue":"Zürich","willContinue":true}')
    + 'data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.query","stri');
  add({
    name: 'gemini-streamed-args-cut',
    format: 'gemini',
    note: 'the stream ends inside an event while a call\'s arguments stream: truncated, the call not done, its arguments as far as they came',
    body: cut,
    expected: {
      text: '', reasoning: '', status: 'truncated', events: 3, comments: [],
      error: { code: 'ERR_STREAM_TRUNCATED', offset: utf8Length(cut) },
      toolCalls: [{ index: 0, id: '', name: 'search', arguments: '{"query":"Wetter in Zürich', done: false }],
      usage: { trafficType: 'ON_DEMAND' }, // (the last chunk's usageMetadata, which Vertex sends without counts until the end)
    },
  });
}

{
  const body = crlf(`data: {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT","safetyRatings": [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT","probability": "HIGH"}]},"usageMetadata": {"promptTokenCount": 31,"totalTokenCount": 31},"modelVersion": "gemini-2.5-flash"}

`);
  add({
    name: 'gemini-blocked',
    format: 'gemini',
    note: 'a refused prompt: promptFeedback.blockReason and no candidates, the one chunk; done with that reason',
    body,
    expected: {
      text: '', reasoning: '', status: 'done', finishReason: 'PROHIBITED_CONTENT', events: 1, comments: [],
      usage: { promptTokenCount: 31, totalTokenCount: 31 },
    },
  });
}

{
  const body = crlf(`data: {"candidates": [{"content": {"parts": [{"text": "Der Anfang, "}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 5,"totalTokenCount": 5}}

data: {"candidates": [{"content": {"parts": [{"text": "und dann"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 5,"totalTokenCount": 5}}

data: {"error": {"code": 503,"message": "The model is overloaded. Please try again later.","status": "UNAVAILABLE"}}

`);
  add({
    name: 'gemini-error-mid',
    format: 'gemini',
    note: 'text, then an {"error": {code, message, status}} chunk: ERR_PROVIDER, never a quiet end',
    body,
    expected: {
      text: 'Der Anfang, und dann',
      reasoning: '', status: 'failed', events: 3, comments: [],
      error: { code: 'ERR_PROVIDER', message: 'The model is overloaded.', offset: at(body, '{"error"') },
      usage: { promptTokenCount: 5, totalTokenCount: 5 }, // (the running usage of the last chunk before the error)
    },
  });
}

{
  const body = `{
  "error": {
    "code": 400,
    "message": "API key not valid. Please pass a valid API key.",
    "status": "INVALID_ARGUMENT",
    "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]
  }
}
`;
  add({
    name: 'gemini-error-body',
    format: 'gemini',
    note: 'a failed request (400): one JSON error body, as Google writes it',
    body,
    expected: {
      text: '', reasoning: '', status: 'failed', events: 1, comments: [],
      error: { code: 'ERR_PROVIDER', message: 'API key not valid. Please pass a valid API key.', offset: 0 },
    },
  });
}

{
  // throttled: 429 with Google's RESOURCE_EXHAUSTED body (its RetryInfo among the details)
  const body = `{
  "error": {
    "code": 429,
    "message": "You exceeded your current quota, please check your plan and billing details.",
    "status": "RESOURCE_EXHAUSTED",
    "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "38s"}]
  }
}
`;
  add({
    name: 'gemini-rate-limited',
    format: 'gemini',
    note: 'a throttled request (429): RESOURCE_EXHAUSTED in one JSON error body',
    body,
    expected: {
      text: '', reasoning: '', status: 'failed', events: 1, comments: [],
      error: { code: 'ERR_PROVIDER', message: 'You exceeded your current quota', offset: 0 },
    },
  });
}

{
  const body = crlf(`data: {"candidates": [{"content": {"parts": [{"text": "Ein Satz, "}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 5,"totalTokenCount": 5}}

data: {"candidates": [{"content": {"parts": [{"text": "der nie endet 👩${ZWJ}💻"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 5,"totalTokenCount": 5}}

`);
  add({
    name: 'gemini-truncated',
    format: 'gemini',
    note: 'every event whole, but no chunk with a finishReason before EOF: truncated',
    body,
    expected: {
      text: `Ein Satz, der nie endet 👩${ZWJ}💻`,
      reasoning: '', status: 'truncated', events: 2, comments: [],
      error: { code: 'ERR_STREAM_TRUNCATED', offset: utf8Length(body) },
      usage: { promptTokenCount: 5, totalTokenCount: 5 }, // (the running usage of the last chunk)
    },
  });
}

{
  const body = crlf(`data: {"candidates": [{"content": {"parts": [{"text": "Bis hier"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 5,"totalTokenCount": 5}}

data: {"candidates": [{"content": {"parts": [{"text": " und nicht weiter"}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 5,"candidatesTokenCount": 6,"totalTok`);
  add({
    name: 'gemini-cut-in-event',
    format: 'gemini',
    note: 'the connection drops inside the finishing chunk: that event never ends, the stream is truncated',
    body,
    expected: {
      text: 'Bis hier',
      reasoning: '', status: 'truncated', events: 1, comments: [],
      error: { code: 'ERR_STREAM_TRUNCATED', offset: utf8Length(body) },
      usage: { promptTokenCount: 5, totalTokenCount: 5 }, // (the running usage of the last whole chunk)
    },
  });
}

{
  const body = crlf(`data: {"candidates": [{"content": {"parts": [{"text": "Gut"}],"role": "model"},"index": 0}]}

data: {"candidates": [{"content": {"parts": [{"text": "so"}],"role": "model"},"index": 0,}]}

`);
  add({
    name: 'gemini-bad-event',
    format: 'gemini',
    note: 'a trailing comma: ERR_BAD_EVENT at the ]',
    body,
    expected: {
      text: 'Gut',
      reasoning: '', status: 'failed', events: 2, comments: [],
      error: { code: 'ERR_BAD_EVENT', offset: at(body, '0,}]', 2) },
    },
  });
}

{
  // two candidates (candidateCount: 2), the chunks without index fields, several text parts in one chunk
  const body = crlf(`data: {"candidates":[{"content":{"parts":[{"text":"A: "},{"text":"ja"}],"role":"model"}},{"content":{"parts":[{"text":"B: "},{"text":"nein"}],"role":"model"}}],"modelVersion":"gemini-2.0-flash"}

data: {"candidates":[{"content":{"parts":[{"text":", gern."}],"role":"model"}},{"content":{"parts":[{"text":", leider."}],"role":"model"}}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":8,"totalTokenCount":11}}

data: {"candidates":[{"content":{"parts":[{"text":" Ende"}],"role":"model"},"finishReason":"MAX_TOKENS"},{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":10,"totalTokenCount":13}}

`);
  add({
    name: 'gemini-candidates',
    format: 'gemini',
    note: 'two candidates without index fields, followed by position; several text parts in a chunk; MAX_TOKENS',
    body,
    expected: {
      text: 'A: ja, gern. Ende',
      reasoning: '', status: 'done', finishReason: 'MAX_TOKENS', events: 3, comments: [],
      usage: { promptTokenCount: 3, candidatesTokenCount: 10, totalTokenCount: 13 },
    },
  });
  add({
    name: 'gemini-candidates-choice-1',
    format: 'gemini',
    choice: 1,
    note: 'the same stream, following the second candidate (its own finishReason)',
    body,
    expected: {
      text: 'B: nein, leider.',
      reasoning: '', status: 'done', finishReason: 'STOP', events: 3, comments: [],
      usage: { promptTokenCount: 3, candidatesTokenCount: 10, totalTokenCount: 13 },
    },
  });
}

{
  // Vertex AI with candidateCount 2: its Candidate's index is a plain proto3 int32, which JSON
  // leaves out when it is 0, so the first candidate has no index and the second has "index": 1
  // (the Gemini API's is an optional field, written even when 0)
  const meta = '"modelVersion":"gemini-2.5-flash","createTime":"2026-03-02T10:15:04.123456Z","responseId":"qE3GaPXkBpqGm9IPv4mD-Q4"';
  const body = crlf(`data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Ja: "}]}},{"content":{"role":"model","parts":[{"text":"Nein: "}]},"index":1}],"usageMetadata":{"promptTokenCount":7,"totalTokenCount":7,"trafficType":"ON_DEMAND"},${meta}}

data: {"candidates":[{"content":{"role":"model","parts":[{"text":"das geht."}]}},{"content":{"role":"model","parts":[{"text":"das geht nicht."}]},"index":1}],"usageMetadata":{"promptTokenCount":7,"totalTokenCount":7,"trafficType":"ON_DEMAND"},${meta}}

data: {"candidates":[{"content":{"role":"model","parts":[{"text":" Gern."}]},"finishReason":"STOP"},{"content":{"role":"model","parts":[{"text":" Leider."}]},"finishReason":"STOP","index":1}],"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":12,"totalTokenCount":19,"trafficType":"ON_DEMAND"},${meta}}

`);
  const usage = { promptTokenCount: 7, candidatesTokenCount: 12, totalTokenCount: 19, trafficType: 'ON_DEMAND' };
  add({
    name: 'gemini-vertex-candidates',
    format: 'gemini',
    note: 'Vertex AI, two candidates in every chunk: the first without an index (proto3 leaves out the 0) is candidate 0',
    body,
    expected: { text: 'Ja: das geht. Gern.', reasoning: '', status: 'done', finishReason: 'STOP', events: 3, comments: [], usage },
  });
  add({
    name: 'gemini-vertex-candidates-choice-1',
    format: 'gemini',
    choice: 1,
    note: 'the same stream, following the candidate with "index": 1',
    body,
    expected: { text: 'Nein: das geht nicht. Leider.', reasoning: '', status: 'done', finishReason: 'STOP', events: 3, comments: [], usage },
  });
}

export const FIXTURES: readonly Fixture[] = fixtures;
export const FORMATS: readonly ModelFormat[] = ['openai', 'openai-responses', 'anthropic', 'ollama', 'ddg', 'gemini'];

/** The JSON texts, as written, of the values of every member named `key` (spelled without escapes) in a JSON text, in order. */
export function rawValues(json: string, key: string): string[] {
  const out: string[] = [];
  const name = JSON.stringify(key);
  const ws = (i: number) => { while (i < json.length && ' \t\r\n'.includes(json[i])) i++; return i; };
  const stringEnd = (i: number) => { for (i++; json[i] !== '"'; i++) if (json[i] === '\\') i++; return i + 1; };
  const valueEnd = (i: number): number => {
    if (json[i] === '"') return stringEnd(i);
    if (json[i] === '{' || json[i] === '[') {
      let depth = 0;
      for (; i < json.length; i++) {
        if (json[i] === '"') { i = stringEnd(i) - 1; continue; }
        if (json[i] === '{' || json[i] === '[') depth++;
        else if (json[i] === '}' || json[i] === ']') { depth--; if (depth === 0) return i + 1; }
      }
      return i;
    }
    while (i < json.length && !',}] \t\r\n'.includes(json[i])) i++;
    return i;
  };
  for (let i = 0; i < json.length; i++) {
    if (json[i] !== '"') continue;
    const end = stringEnd(i);
    const colon = ws(end);
    if (json.slice(i, end) === name && json[colon] === ':') {
      const v = ws(colon + 1);
      out.push(json.slice(v, valueEnd(v)));
    }
    i = end - 1;
  }
  return out;
}
