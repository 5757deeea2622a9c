// Where each provider puts its text, its finish reason and usage, what completes its stream, and
// what its errors look like: one small description per format over the core's JSON records.
// A description names the paths the core locates (the path program is compiled from them once)
// and reads each event's records through a `Doc`, which makes strings only where one is needed
// (a finish reason, an error message, a usage object: once per stream, not per delta).
import { compilePaths } from './json-paths.js';

/** The formats a model stream can be read in. */
export type ModelFormat = 'openai' | 'openai-responses' | 'anthropic' | 'ollama' | 'ddg';
export const MODEL_FORMATS: readonly ModelFormat[] = ['openai', 'openai-responses', 'anthropic', 'ollama', 'ddg'];

/** A value's kind, as the core reports it (JK_*). */
export const enum Kind { String = 1, Number = 2, Object = 3, Array = 4, True = 5, False = 6, Null = 7 }

/** One event's JSON, as a description reads it: record j of path ids, kinds, spans. */
export interface Doc {
  /** Records of the event's document, in document order (dead duplicates already dropped). */
  readonly n: number;
  path(j: number): number;
  kind(j: number): Kind;
  /** Element index of the innermost `[*]` of the record's path, −1 without one. */
  index(j: number): number;
  /** The record's string value (unescaped) or the JSON text of any other value. */
  string(j: number): string;
  /** The record's value as JSON.parse gives it (objects, numbers). */
  value(j: number): unknown;
  /** A small non-negative integer value, or −1. */
  int(j: number): number;
  /** Whether the record is a string equal to `ascii` (no string is made). */
  is(j: number, ascii: Uint8Array): boolean;
  /** The whole event as JSON.parse gives it (for the rare event that is read whole). */
  whole(): unknown;
}

/** What a description reports while it reads an event. */
export interface Sink {
  /** The answer text: record j (a string) is appended. */
  onText(doc: Doc, j: number): void;
  /** Reasoning or thinking text, kept apart from the answer. */
  onReasoning(doc: Doc, j: number): void;
  onFinishReason(reason: string): void;
  /** Usage fields; merged over what came before (Anthropic sends them in two events). */
  onUsage(fields: Record<string, unknown>): void;
  /** The provider's completion: the stream is done. */
  onDone(): void;
  /** The provider's error: the stream fails with its message (and its type or code, when it gave one). */
  onError(message: string, detail?: string): void;
  /** A keep-alive event (Anthropic `ping`). */
  onPing(): void;
  /** Which choice to follow (OpenAI `index`). */
  readonly choice: number;
}

export interface FormatSpec {
  readonly framing: 'sse' | 'lines';
  /** Lines: a leading `data:` is not part of the JSON (ddg). */
  readonly stripData?: boolean;
  /** `data: [DONE]` (or a bare `[DONE]` line) completes the stream. */
  readonly doneMarker: boolean;
  /** The compiled path program. */
  readonly program: Uint8Array;
  /** What a quiet event looks like, compiled (see {@link template}): the core reads those to the end itself. */
  readonly template: Uint8Array;
  /** Reads one event (its JSON parsed without error). */
  read(doc: Doc, sink: Sink): void;
  /** A body that is not an event stream but one JSON object: its error message, if it is an error. */
  errorBody?: true;
}

const ascii = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));

/**
 * What a quiet event (a text delta and nothing else) may hold at one path of a format's program:
 * `text` (a string there is the answer's text, in the followed element), `literal` (a string that
 * must equal `literal`, and every literal rule must match), `not` (a string other than `literal`),
 * `choice` (a number equal to the followed choice: its element is the one read), or `none`. Values
 * of the `ignore`d kinds are accepted and ignored; anything else makes the event one the
 * description reads. A rule must accept exactly what the description would ignore.
 */
interface QuietRule {
  role: 'text' | 'literal' | 'not' | 'choice' | 'none';
  ignore: number;
  literal?: string;
}
const bit = (k: Kind): number => 1 << k;
/** Kinds to ignore: all of them, all but one, or one. */
const ALL = bit(Kind.String) | bit(Kind.Number) | bit(Kind.Object) | bit(Kind.Array) | bit(Kind.True) | bit(Kind.False) | bit(Kind.Null);
const allBut = (k: Kind): number => ALL & ~bit(k);
const NULL = bit(Kind.Null);
const text: QuietRule = { role: 'text', ignore: allBut(Kind.String) };
const ignored: QuietRule = { role: 'none', ignore: ALL };
const strings: QuietRule = { role: 'none', ignore: allBut(Kind.String) }; // a string is for the description
const literal = (l: string): QuietRule => ({ role: 'literal', ignore: 0, literal: l });

const ROLES = { none: 0, text: 1, literal: 2, choice: 3, not: 4 } as const;

/**
 * A template in the core's layout (assembly/abi.ts, "Templates"): a header, one rule per path id,
 * then the literals' bytes.
 */
export function template(rules: readonly QuietRule[]): Uint8Array {
  const lits = rules.map((r) => (r.literal === undefined ? new Uint8Array(0) : ascii(r.literal)));
  const head = 8 + rules.length * 8;
  const out = new Uint8Array(head + lits.reduce((n, l) => n + l.length, 0));
  const v = new DataView(out.buffer);
  v.setUint16(0, rules.length, true);
  v.setUint16(2, rules.filter((r) => r.role === 'literal').length, true);
  v.setUint16(4, rules.some((r) => r.role === 'choice') ? 1 : 0, true);
  let at = head;
  rules.forEach((r, i) => {
    const o = 8 + i * 8;
    if (r.role === 'text' && r.ignore & bit(Kind.String)) throw new Error('seam: a text rule cannot ignore strings');
    out[o] = ROLES[r.role];
    out[o + 1] = r.ignore;
    v.setUint16(o + 2, lits[i].length, true);
    v.setUint16(o + 4, at, true);
    out.set(lits[i], at);
    at += lits[i].length;
  });
  return out;
}

/** The string at record j, or undefined when there is none or it is not a string. */
function stringAt(doc: Doc, j: number): string | undefined {
  return j >= 0 && doc.kind(j) === Kind.String ? doc.string(j) : undefined;
}

/** The first record of path p, or −1. */
function find(doc: Doc, p: number): number {
  for (let j = 0; j < doc.n; j++) if (doc.path(j) === p) return j;
  return -1;
}

/** The message of an `error` value: a string, or an object's `message` (else its JSON). */
function errorMessage(doc: Doc, errorRec: number, messageRec: number): string {
  if (messageRec >= 0 && doc.kind(messageRec) === Kind.String) return doc.string(messageRec);
  if (doc.kind(errorRec) === Kind.String) return doc.string(errorRec);
  return doc.string(errorRec);
}

// ---- OpenAI Chat Completions -------------------------------------------------------------------
const O = { index: 0, content: 1, reasoningContent: 2, reasoning: 3, finish: 4, usage: 5, error: 6, errorMessage: 7, errorType: 8, errorCode: 9 } as const;
const openai: FormatSpec = {
  framing: 'sse',
  doneMarker: true,
  errorBody: true,
  program: compilePaths([
    'choices[*].index', 'choices[*].delta.content', 'choices[*].delta.reasoning_content', 'choices[*].delta.reasoning',
    'choices[*].finish_reason', 'usage', 'error', 'error.message', 'error.type', 'error.code',
  ]),
  // a delta of the followed choice: no reasoning, finish reason, usage object or error
  template: template([
    { role: 'choice', ignore: 0 }, text, strings, strings, strings, { role: 'none', ignore: allBut(Kind.Object) }, { role: 'none', ignore: NULL },
    ignored, ignored, ignored,
  ]),
  read(doc, sink) {
    const n = doc.n;
    // the element of `choices` to follow: the one whose index is the choice (by position without one)
    let el = -1;
    let sawIndex = false;
    let errorRec = -1;
    let messageRec = -1;
    for (let j = 0; j < n; j++) {
      const p = doc.path(j);
      if (p === O.index) {
        sawIndex = true;
        if (doc.int(j) === sink.choice) el = doc.index(j);
      } else if (p === O.usage) {
        if (doc.kind(j) === Kind.Object) sink.onUsage(doc.value(j) as Record<string, unknown>);
      } else if (p === O.error) {
        if (doc.kind(j) !== Kind.Null) errorRec = j;
      } else if (p === O.errorMessage) {
        messageRec = j;
      }
    }
    if (errorRec >= 0) {
      sink.onError(errorMessage(doc, errorRec, messageRec), stringAt(doc, find(doc, O.errorCode)) ?? stringAt(doc, find(doc, O.errorType)));
      return;
    }
    if (!sawIndex) el = sink.choice;
    if (el < 0) return;
    for (let j = 0; j < n; j++) {
      if (doc.index(j) !== el) continue;
      const p = doc.path(j);
      if (doc.kind(j) !== Kind.String) continue;
      if (p === O.content) sink.onText(doc, j);
      else if (p === O.reasoningContent || p === O.reasoning) sink.onReasoning(doc, j);
      else if (p === O.finish) sink.onFinishReason(doc.string(j));
    }
  },
};

// ---- OpenAI Responses ----------------------------------------------------------------------------
const R = { type: 0, delta: 1, usage: 2, status: 3, errorMessage: 4, message: 5, incomplete: 6, code: 7, errorCode: 8 } as const;
const R_TEXT = ascii('response.output_text.delta');
const R_REASONING = ascii('response.reasoning_text.delta');
const R_SUMMARY = ascii('response.reasoning_summary_text.delta');
const R_COMPLETED = ascii('response.completed');
const R_INCOMPLETE = ascii('response.incomplete');
const R_FAILED = ascii('response.failed');
const R_ERROR = ascii('error');
const responses: FormatSpec = {
  framing: 'sse',
  doneMarker: false,
  errorBody: true,
  program: compilePaths([
    'type', 'delta', 'response.usage', 'response.status', 'response.error.message', 'message',
    'response.incomplete_details.reason', 'code', 'response.error.code',
  ]),
  template: template([literal('response.output_text.delta'), text, ignored, ignored, ignored, ignored, ignored, ignored, ignored]),
  read(doc, sink) {
    const n = doc.n;
    let t = -1;
    for (let j = 0; j < n; j++) if (doc.path(j) === R.type) t = j;
    if (t < 0) return;
    const at = (p: number) => find(doc, p);
    if (doc.is(t, R_TEXT)) {
      const d = at(R.delta);
      if (d >= 0 && doc.kind(d) === Kind.String) sink.onText(doc, d);
    } else if (doc.is(t, R_REASONING) || doc.is(t, R_SUMMARY)) {
      const d = at(R.delta);
      if (d >= 0 && doc.kind(d) === Kind.String) sink.onReasoning(doc, d);
    } else if (doc.is(t, R_COMPLETED) || doc.is(t, R_INCOMPLETE)) {
      const u = at(R.usage);
      if (u >= 0 && doc.kind(u) === Kind.Object) sink.onUsage(doc.value(u) as Record<string, unknown>);
      const why = at(R.incomplete);
      const st = at(R.status);
      if (why >= 0 && doc.kind(why) === Kind.String) sink.onFinishReason(doc.string(why));
      else if (st >= 0 && doc.kind(st) === Kind.String) sink.onFinishReason(doc.string(st));
      else sink.onFinishReason(doc.is(t, R_COMPLETED) ? 'completed' : 'incomplete');
      sink.onDone();
    } else if (doc.is(t, R_FAILED)) {
      const m = at(R.errorMessage);
      sink.onError(stringAt(doc, m) ?? 'response.failed', stringAt(doc, at(R.errorCode)));
    } else if (doc.is(t, R_ERROR)) {
      const m = at(R.message);
      const c = at(R.code);
      sink.onError(stringAt(doc, m) ?? (c >= 0 ? doc.string(c) : 'error'), stringAt(doc, c));
    }
  },
};

// ---- Anthropic Messages --------------------------------------------------------------------------
const A = { type: 0, deltaType: 1, text: 2, thinking: 3, stopReason: 4, usage: 5, messageUsage: 6, errorMessage: 7, error: 8, errorType: 9 } as const;
const A_DELTA = ascii('content_block_delta');
const A_TEXT = ascii('text_delta');
const A_THINKING = ascii('thinking_delta');
const A_MESSAGE_DELTA = ascii('message_delta');
const A_MESSAGE_START = ascii('message_start');
const A_STOP = ascii('message_stop');
const A_ERROR = ascii('error');
const A_PING = ascii('ping');
const anthropic: FormatSpec = {
  framing: 'sse',
  doneMarker: false,
  errorBody: true,
  program: compilePaths([
    'type', 'delta.type', 'delta.text', 'delta.thinking', 'delta.stop_reason', 'usage', 'message.usage', 'error.message', 'error',
    'error.type',
  ]),
  template: template([literal('content_block_delta'), literal('text_delta'), text, ignored, ignored, ignored, ignored, ignored, ignored, ignored]),
  read(doc, sink) {
    const n = doc.n;
    let t = -1;
    let dt = -1;
    for (let j = 0; j < n; j++) {
      const p = doc.path(j);
      if (p === A.type) t = j;
      else if (p === A.deltaType) dt = j;
    }
    if (t < 0) return;
    if (doc.is(t, A_DELTA)) {
      if (dt < 0) return;
      const want = doc.is(dt, A_TEXT) ? A.text : doc.is(dt, A_THINKING) ? A.thinking : -1;
      if (want < 0) return; // input_json_delta, signature_delta: not text
      for (let j = 0; j < n; j++) {
        if (doc.path(j) !== want || doc.kind(j) !== Kind.String) continue;
        if (want === A.text) sink.onText(doc, j);
        else sink.onReasoning(doc, j);
      }
    } else if (doc.is(t, A_MESSAGE_DELTA)) {
      for (let j = 0; j < n; j++) {
        const p = doc.path(j);
        if (p === A.stopReason && doc.kind(j) === Kind.String) sink.onFinishReason(doc.string(j));
        else if (p === A.usage && doc.kind(j) === Kind.Object) sink.onUsage(doc.value(j) as Record<string, unknown>);
      }
    } else if (doc.is(t, A_MESSAGE_START)) {
      for (let j = 0; j < n; j++) {
        if (doc.path(j) === A.messageUsage && doc.kind(j) === Kind.Object) sink.onUsage(doc.value(j) as Record<string, unknown>);
      }
    } else if (doc.is(t, A_STOP)) {
      sink.onDone();
    } else if (doc.is(t, A_PING)) {
      sink.onPing();
    } else if (doc.is(t, A_ERROR)) {
      let e = -1;
      let m = -1;
      for (let j = 0; j < n; j++) {
        if (doc.path(j) === A.error) e = j;
        else if (doc.path(j) === A.errorMessage) m = j;
      }
      sink.onError(e >= 0 ? errorMessage(doc, e, m) : 'error', stringAt(doc, find(doc, A.errorType)));
    }
  },
};

// ---- Ollama (NDJSON) -----------------------------------------------------------------------------
const L = { content: 0, response: 1, done: 2, doneReason: 3, error: 4, thinking: 5, genThinking: 6 } as const;
const OLLAMA_USAGE = ['prompt_eval_count', 'eval_count', 'total_duration', 'load_duration', 'prompt_eval_duration', 'eval_duration'];
const ollama: FormatSpec = {
  framing: 'lines',
  doneMarker: false,
  program: compilePaths(['message.content', 'response', 'done', 'done_reason', 'error', 'message.thinking', 'thinking']),
  // a line that is not the last: text, and no error, thinking or reason
  template: template([text, text, { role: 'none', ignore: allBut(Kind.True) }, strings, { role: 'none', ignore: NULL }, strings, strings]),
  read(doc, sink) {
    const n = doc.n;
    let done = false;
    for (let j = 0; j < n; j++) {
      const p = doc.path(j);
      const k = doc.kind(j);
      if (p === L.error && k !== Kind.Null) {
        sink.onError(doc.string(j));
        return;
      }
      if (k === Kind.String) {
        if (p === L.content || p === L.response) sink.onText(doc, j);
        else if (p === L.thinking || p === L.genThinking) sink.onReasoning(doc, j);
        else if (p === L.doneReason) sink.onFinishReason(doc.string(j));
      } else if (p === L.done && k === Kind.True) {
        done = true;
      }
    }
    if (done) {
      // the final line carries the counts: those fields, as JSON.parse gives them
      const all = doc.whole() as Record<string, unknown>;
      const usage: Record<string, unknown> = {};
      for (const f of OLLAMA_USAGE) if (typeof all[f] === 'number') usage[f] = all[f];
      if (Object.keys(usage).length !== 0) sink.onUsage(usage);
      sink.onDone();
    }
  },
};

// ---- ddg: `data: {json}` lines, then a bare [DONE] ----------------------------------------------
const D = { message: 0, content: 1, error: 2, errorMessage: 3, action: 4, type: 5, status: 6 } as const;
const D_ERROR = ascii('error');
const ddg: FormatSpec = {
  framing: 'lines',
  stripData: true,
  doneMarker: true,
  program: compilePaths(['message', 'content', 'error', 'error.message', 'action', 'type', 'status']),
  template: template([text, text, { role: 'none', ignore: NULL }, ignored, { role: 'not', ignore: allBut(Kind.String), literal: 'error' }, ignored, ignored]),
  read(doc, sink) {
    const n = doc.n;
    let action = -1;
    let type = -1;
    for (let j = 0; j < n; j++) {
      const p = doc.path(j);
      if (p === D.error && doc.kind(j) !== Kind.Null) {
        let m = -1;
        for (let i = 0; i < n; i++) if (doc.path(i) === D.errorMessage) m = i;
        sink.onError(errorMessage(doc, j, m));
        return;
      }
      if (p === D.action) action = j;
      else if (p === D.type) type = j;
    }
    // `"action": "error"` (with the error's `type` and `status`): the line is an error, not text
    if (action >= 0 && doc.is(action, D_ERROR)) {
      const status = find(doc, D.status);
      sink.onError(type >= 0 ? doc.string(type) : 'error', status >= 0 ? `status ${doc.string(status)}` : undefined);
      return;
    }
    for (let j = 0; j < n; j++) {
      const p = doc.path(j);
      if ((p === D.message || p === D.content) && doc.kind(j) === Kind.String) sink.onText(doc, j);
    }
  },
};

export const FORMATS: Readonly<Record<ModelFormat, FormatSpec>> = {
  openai, 'openai-responses': responses, anthropic, ollama, ddg,
};
