// The language a format's description is written in: the records of one event's JSON as the core
// reports them (Doc), what a description reports while it reads them (Sink), the description
// itself (FormatSpec: every fact of one provider's stream), and the template of its quiet events.
// A description names the paths the core locates (compiled once into a path program) and reads
// each event through a Doc, which makes strings only where one is needed (a finish reason, an
// error message, a usage object: once per stream, not per delta).
import {
  CH_ARGS, CH_OF_KIND, CH_REASONING, CH_TEXT, JK_ARRAY, JK_FALSE, JK_NULL, JK_NUMBER, JK_OBJECT, JK_STRING, JK_TRUE, MR_CALL, MR_CHOICE,
  MR_KIND, MR_LITERAL, MR_NONE, MR_NOT_LITERAL, MR_SCOPE, MR_TEXT, MR_LAST, MRF_ALIAS, MT_CHOICE, MT_HEAD_BYTES, MT_LAST, MT_KIND_BYTES, MT_RULE_BYTES,
} from '../../core/generated/abi.js';
import type { BuiltinCallType, ByteSpan, Citation, Grounding } from '../message.js';

/** One event's JSON, as a description reads it: record j of path ids, kinds (JK_*), spans. */
export interface Doc {
  /** Records of the event's document, in document order (dead duplicates already dropped). */
  readonly n: number;
  path(j: number): number;
  /** The record's value kind: JK_STRING, JK_NUMBER, JK_OBJECT, JK_ARRAY, JK_TRUE, JK_FALSE or JK_NULL. */
  kind(j: number): number;
  /** Element index of the innermost `[*]` of the record's path, −1 without one. */
  index(j: number): number;
  /** Where the record's value begins and ends in the document (a string's body; any other value whole). */
  start(j: number): number;
  end(j: number): number;
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
  /** Reasoning or thinking text, kept apart from the answer (record j, a string, is appended to the reasoning block). */
  onReasoning(doc: Doc, j: number): void;
  /** A reasoning block's signature (record j, a string); with `redacted`, a redacted block's data. */
  onReasoningSignature(doc: Doc, j: number, redacted?: boolean): void;
  /** The reasoning block ended: the next reasoning begins another. */
  onReasoningEnd(): void;
  /**
   * Responses' `encrypted_content` of a reasoning item (record j, a string), kept with the open
   * reasoning block (a new one when none is open): a stream keeps it; no client's format of a relay
   * has a place for it.
   */
  onReasoningEncrypted(doc: Doc, j: number): void;
  /**
   * A reasoning item (Responses') began, or with `done` ended, its id record j (a string; −1:
   * none): each block of it has its id (counted toward the reasoning's limit once), the item one
   * block at least (of no text when it said none); a relay keeps nothing of it.
   */
  onReasoningItem(doc: Doc, j: number, done: boolean): void;
  /**
   * The model's refusal, in place of the answer (OpenAI's `refusal` deltas): record j, a string,
   * is appended to it, apart from the answer's text. `details`: the record of the object that
   * explains it, when j is that explanation (−1: it has none) (Anthropic's `stop_details`), which
   * a writer in the provider's own words writes as it came.
   */
  onRefusal(doc: Doc, j: number, details?: number): void;
  /**
   * A tool call begins, or says more of itself. `key` is the provider's own for the call (OpenAI's
   * `index`, Anthropic's block index, Responses' output index), −1 when it sent none (Mistral: the
   * call is then found by its id, or is the last one); `id`, `name`: records (−1: none); `server`:
   * the provider runs the tool itself; `input`: Anthropic's start input (an object record), the
   * arguments when no fragment has text; `noArgs`: those arguments when the start has no `input`
   * record (Bedrock's toolUse start carries none: a call with no input fragment has `{}`);
   * `custom`: a custom tool's call, whose arguments are free text (OpenAI's freeform tools);
   * `signature`: a string record the caller sends back with the call (Gemini's thoughtSignature,
   * as Google's OpenAI-compatible API gives it), −1 for none.
   */
  onToolCall(doc: Doc, key: number, id: number, name: number, server?: boolean, input?: number, noArgs?: string, custom?: boolean, signature?: number): void;
  /**
   * A fragment of a call's arguments (record j, a string: its text is appended as sent). A
   * fragment for a call that never began begins one (id '', name '').
   */
  /**
   * A fragment of a call's arguments, record j, with `ifNone`: the whole arguments again (Responses'
   * `.done`), taken only when the call has none yet; `custom`: a custom tool's free-text input
   * (which a fragment before its call's start says). Record j an object (OpenAI-compatible servers
   * that send `function.arguments` as one): the whole arguments, its JSON text as sent, in place of
   * what the call had.
   */
  onToolArguments(doc: Doc, key: number, j: number, ifNone?: boolean, custom?: boolean): void;
  /**
   * A whole call in one: begun, its arguments a JSON value (record `args`: Ollama's or Gemini's
   * object), ended. `noArgs`: the arguments when there is no `args` record (Gemini's `{}`);
   * `signature`: a string record the caller sends back with the call (Gemini's thoughtSignature).
   */
  onWholeToolCall(doc: Doc, id: number, name: number, args: number, noArgs?: string, signature?: number): void;
  /**
   * A whole call of the provider's own tool (Gemini's `executableCode`, run by Google): begun, its
   * arguments the JSON value of record `args` as sent, ended. `id`, `signature`: string records
   * (−1: none); `name` the tool's.
   */
  onServerCall(doc: Doc, id: number, name: string, args: number, signature?: number): void;
  /**
   * The result of a call of the provider's own tool (Gemini's `codeExecutionResult`, Anthropic's
   * `*_tool_result` block): record
   * `result`, a JSON value kept as sent, for the server call whose id is record `id`'s string, or
   * without an id the first whole one with no result yet; a result of no call begins one, named `name`.
   */
  onServerResult(doc: Doc, id: number, result: number, name: string): void;
  /**
   * A call whose arguments come in parts that the description turns into JSON text itself
   * (Vertex's streamed function-call arguments): begun with its id, name and signature records
   * (−1: none) and `state`, the description's own state for it, kept with the call.
   */
  onPartCall(doc: Doc, id: number, name: number, signature: number, state: object): void;
  /**
   * A call of a tool the API defines and the client runs (Responses' computer, shell and
   * apply_patch calls, an MCP server's approval request), whole: begun, its arguments (JSON text
   * the description made from the item as sent), ended. `key` as for {@link Sink.onToolCall}, `id`
   * a string record (−1: none), `name` the tool's, `type` the item's.
   */
  onBuiltinCall(doc: Doc, key: number, id: number, name: string, type: BuiltinCallType, args: string): void;
  /**
   * A source the answer cites, as the description read it from the provider's citation; `once`:
   * not kept when the stream has a citation of the same source already (the same address, or
   * without one the same JSON).
   */
  onCitation(citation: Citation, once?: boolean, counted?: boolean): Citation | null;
  /**
   * Metadata the format says whole again in later events (Gemini's `groundingMetadata`), record j
   * (an object): whether it is news, to be read (a stream keeps the JSON text of the last one at
   * each path, counted toward maxReasoningBytes, and the same again is not: false). A relay, which
   * keeps none of it, reads each.
   */
  onMetadata(doc: Doc, j: number): boolean;
  /**
   * The spans of the answer's text its sources back, in bytes of its UTF-8 (Gemini's
   * `groundingSupports`), each with the citation {@link Sink.onCitation} kept for its source: in
   * place of those said before, placed on the citations when the answer's text is whole.
   */
  onCitedSpans(spans: ByteSpan[]): void;
  /** What the provider says of the searches behind the answer (its members given: in place of those said before). */
  onGrounding(grounding: Partial<Grounding>): void;
  /**
   * A list of sources (record j, an array) that the format says whole again in later events
   * (Perplexity's `citations` and `search_results`): read by `read` only when it is not the list
   * this path said last (counted toward the limit as sent), each source kept once.
   */
  onCitationList(doc: Doc, j: number, read: (list: readonly unknown[]) => Citation[]): void;
  /**
   * Media the model returned (Gemini's `inlineData` and `fileData`, Responses' generated image,
   * OpenAI's audio chunks, OpenRouter's images): its media type (a string record, −1: none, or the
   * type itself) and a record of its base64 data (a string; −1: none), whether it is a thought, its
   * signature (a string record, −1: none). `as`: the data record is an address, kept as the
   * media's `uri` (`'uri'`: Gemini's `fileUri`), or a URL (`'url'`: OpenRouter's), a `data:` URL
   * (`data:image/png;base64,…`) whose head says the media type and whose base64 is its data (one
   * that is not base64 is not read), another an address. `expires`: a number record (−1: none),
   * when the media stops being the provider's to refer to (OpenAI Chat's audio `expires_at`).
   */
  onMedia(doc: Doc, mimeType: number | string, data: number, thought: boolean, signature: number, as?: 'url' | 'uri', expires?: number): void;
  /**
   * The provider's id of the media the answer returns (OpenAI Chat's `audio.id`, which a later
   * turn names to send the answer's audio back), a string record: the id of the stream's media
   * from here on (its chunks come after it, or with it).
   */
  onMediaId(doc: Doc, j: number): void;
  /** The state of the open part call (null when none is open). */
  partCall(): object | null;
  /** JSON text the description made, appended to the open part call's arguments. */
  onPartArguments(text: string): void;
  /** The open part call ended. */
  onPartCallEnd(): void;
  /** The event is not one of the format (what the description found wrong): ERR_BAD_EVENT at the event. */
  onBadEvent(why: string): void;
  /** The call with `key` ended. */
  onToolCallEnd(doc: Doc, key: number): void;
  /** Every call ended (OpenAI's finish reason). */
  onToolCallsEnd(): void;
  /** Whether a call with this key began and has not ended. */
  hasCall(key: number): boolean;
  /**
   * Whether the open call with this key has an id other than `id`: a delta of `id` at the key
   * begins another call (Ollama's OpenAI-compatible API gives every call of a turn index 0).
   */
  keyTaken(key: number, id: string): boolean;
  /**
   * The event is not in its format's usual form, which every client reads (Mistral's content
   * array, calls without `index`): a relay to the same format writes it anew (in the envelope the
   * format's `envelope` program finds). Records (−1: none): its finish reason, its usage, the
   * sources it cites (OpenAI's `annotations` array) and the role its delta names (a choice's first
   * chunk has one: openai-node wants it there), each written as it came. Reported first.
   */
  onNonCanonical(doc: Doc, finish: number, usage: number, annotations: number, role: number, others: boolean): void;
  /**
   * `refused`: the provider refused the prompt (Gemini's `promptFeedback.blockReason`): a client
   * reads it as a filter's or a refusal's, whatever the word. `note`: what the provider said of the
   * finish (Gemini's `finishMessage`). A reason its format lists as `failed` is the provider's error.
   */
  onFinishReason(reason: string, refused?: boolean, note?: string): void;
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

/** A provider's error, read from an error event or an error body. */
export interface ProviderError {
  /** The provider's message. */
  message: string;
  /** Its type (`invalid_request_error`, `overloaded_error`, …), when it gave one. */
  type?: string;
  /** Its code (`invalid_api_key`, …), when it gave one. */
  code?: string;
  /** What a message shows beside it: the code, else the type (or a status). */
  detail?: string;
}

/** A finish reason in OpenAI's words (`finish_reason`) and in Anthropic's (`stop_reason`). */
export interface FinishWords {
  readonly openai: string;
  readonly anthropic: string;
  /**
   * The turn failed: what the reason means. The model's output cannot be used (a call it could not
   * write), so the stream ends with the provider's error (`ERR_PROVIDER`, the reason as its code),
   * not a completion that a client would take for an answer.
   */
  readonly failed?: string;
}

/** Token counts in one shape, whatever the provider calls them. */
export interface Usage {
  /** Input (prompt) tokens, cached ones included. */
  input?: number;
  output?: number;
  /** Input tokens read from the provider's cache, and written to it. */
  cacheRead?: number;
  cacheWrite?: number;
  /** Output tokens spent on reasoning. */
  reasoning?: number;
}

/** Everything seam knows of one provider's stream: one object per format, the only place its facts are written. */
export interface FormatSpec {
  /** Server-Sent Events, lines, or AWS's binary event stream (each message's payload an event, under its `:event-type`). */
  readonly framing: 'sse' | 'lines' | 'eventstream';
  /** The media type its stream comes as. */
  readonly contentType: string;
  /** Lines: a leading `data:` is not part of the JSON (ddg). */
  readonly stripData?: boolean;
  /** `data: [DONE]` (or a bare `[DONE]` line) completes the stream. */
  readonly doneMarker: boolean;
  /** What completes the stream, as messages name it. */
  readonly completion: string;
  /** The finish reasons it sends, in OpenAI's and Anthropic's words (a reason not listed is passed on as it is). */
  readonly finishReasons: Readonly<Record<string, FinishWords>>;
  /** The compiled path program. */
  readonly program: Uint8Array;
  /** What a quiet event looks like, compiled (see {@link template}): the core reads those to the end itself. */
  readonly template: Uint8Array;
  /**
   * Its errors' types (an exception's type, a status: a `ModelStreamError`'s `providerCode`) in
   * Anthropic's words (`rate_limit_error`, `overloaded_error`, …), for a relay to Anthropic's
   * clients, whose SDKs act on them; a type not listed (and not one of Anthropic's) is `api_error`.
   */
  readonly errorTypes?: Readonly<Record<string, string>>;
  /** Reads one event (its JSON parsed without error). */
  read(doc: Doc, sink: Sink): void;
  /** AWS's event stream of InvokeModelWithResponseStream: each `chunk` message's `bytes` (base64) is one event of this format. */
  readonly invoke?: boolean;
  /** Reads an event that comes after the completion, for its usage only (Bedrock's `metadata` after `messageStop`). */
  readonly trailer?: (doc: Doc, sink: Pick<Sink, 'onUsage'>) => void;
  /** A body that is not an event stream but one JSON value (an HTTP error answer): the provider's error in it, if it is one. */
  errorBody(body: unknown): ProviderError | undefined;
  /**
   * Its provider may answer a JSON array in place of its stream (Gemini's streamGenerateContent
   * without alt=sse, an error among them): a stream that begins with `[` is read as such a body.
   * What asks for that array and how to ask for the stream instead, for the error an array of
   * chunks is.
   */
  readonly arrayBody?: string;
  /**
   * A body that is one JSON value and not an error, where it is the format's whole answer (asked
   * without streaming): the events of the stream the same answer comes as, read as that stream;
   * else undefined (the body is an error of its own). A format of AWS's event stream writes each
   * event as the core writes a message of it for the reader (ConverseStream's payload under its
   * `:event-type`, a chunk's decoded bytes), read as they are, with no binary framing.
   */
  wholeAnswer?(body: unknown): WholeEvent[] | undefined;
  /** Whether a JSON value is the format's whole answer: the shape its `wholeAnswer` reads (which reads no other). */
  isWholeAnswer?(body: unknown): boolean;
  /**
   * How the JSON text of its whole answer begins (its first keys, in the order its provider writes
   * them), for a body too long to parse whole: a test of its first 4 KiB.
   */
  readonly wholeAnswerHead?: RegExp;
  /** Its usage object's counts. */
  usage(fields: Record<string, unknown>): Usage;
  /** The paths of an event's envelope (OpenAI's `id`, `created`, `model`), for an event written anew. */
  readonly envelope?: Uint8Array;
  /**
   * SSE formats that name their events (Anthropic, Responses): an event's name (its `event:` line)
   * is its data's `type` member, path 0 of the program (a quiet event's: its template kind's name).
   */
  readonly namedEvents?: boolean;
}

// A description's data is built by calls at import (path programs, templates, key bytes), each
// marked pure where it is made, so that a bundler drops a description nothing imports.

/** The bytes of an ASCII string. */
export function ascii(s: string): Uint8Array {
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

/** The bytes of each of a format's names (its event types, block types), to compare records with. */
export function names<K extends string>(words: Readonly<Record<K, string>>): Readonly<Record<K, Uint8Array>> {
  const out = {} as Record<K, Uint8Array>;
  for (const k of Object.keys(words) as K[]) out[k] = ascii(words[k]);
  return out;
}

/**
 * What a quiet event (a delta of the answer's text, of reasoning, or of the current tool call's
 * arguments, and nothing else) may hold at one path of a format's program:
 * - `text`: a string there is content of the rule's `channel` (`'kind'`: of the channel the
 *   event's kind says), in the followed element;
 * - `literal`: a string that must equal `literal` (every literal rule must match); `not`: a
 *   string other than `literal`;
 * - `kind`: a string equal to one of the template's kinds (the event is of that kind's channel);
 * - `choice`: a number equal to the followed choice (its element is the one read);
 * - `call`: a number, the provider's key of the call (an arguments event's must be the current call's);
 * - `scope`: the followed choice's delta (content of a call's element lies in it);
 * - `none`.
 * Values of the `ignore`d kinds are accepted and ignored; anything else makes the event one the
 * description reads. A rule must accept exactly what the description would ignore, or read as
 * the core does (its text appended, its reasoning appended to the open block, its fragment
 * appended to the current call).
 */
export interface QuietRule {
  role: 'text' | 'literal' | 'not' | 'choice' | 'kind' | 'call' | 'scope' | 'last' | 'none';
  ignore: number;
  literal?: string;
  channel?: QuietChannel;
  /**
   * A text rule at one of the names a format gives the same content (OpenAI's `reasoning_content`
   * and `reasoning`): an event with strings at two of them is for the description, which reads one.
   */
  alias?: boolean;
}
/** The channels of quiet content: the answer's text, reasoning, the current call's arguments, or the kind's. */
export type QuietChannel = 'text' | 'reasoning' | 'args' | 'kind';
/** An event kind of a template: the string a `kind` rule's value equals, its channel, and the event's name (its `event:` line). */
export interface QuietKind {
  literal: string;
  channel: Exclude<QuietChannel, 'kind'>;
  name: string;
}
/** Kinds to ignore (bit 1 << JK_*): all of them, all but one, or one. */
const ALL = (1 << JK_STRING) | (1 << JK_NUMBER) | (1 << JK_OBJECT) | (1 << JK_ARRAY) | (1 << JK_TRUE) | (1 << JK_FALSE) | (1 << JK_NULL);
const NOT_STRING = (1 << JK_NUMBER) | (1 << JK_OBJECT) | (1 << JK_ARRAY) | (1 << JK_TRUE) | (1 << JK_FALSE) | (1 << JK_NULL);
export const NULL = 1 << JK_NULL;
export const OBJECT = 1 << JK_OBJECT;
export const text: QuietRule = { role: 'text', ignore: NOT_STRING, channel: 'text' };
/** Reasoning text (a string; any reasoning string, even empty, makes the event one of reasoning). */
export const reasoningText: QuietRule = { role: 'text', ignore: NOT_STRING, channel: 'reasoning' };
/** Reasoning text at one of its names (see {@link QuietRule.alias}). */
export const reasoningAlias: QuietRule = { role: 'text', ignore: NOT_STRING, channel: 'reasoning', alias: true }; // (written out: a spread is work at import)
/** A fragment of the current call's arguments (a string). */
export const argsText: QuietRule = { role: 'text', ignore: NOT_STRING, channel: 'args' };
/** Neither a string nor an object. */
const NOT_STRING_OR_OBJECT = (1 << JK_NUMBER) | (1 << JK_ARRAY) | (1 << JK_TRUE) | (1 << JK_FALSE) | (1 << JK_NULL);
/**
 * A fragment of the current call's arguments (a string), or the whole arguments as an object (as
 * some OpenAI-compatible servers send them), which makes the event one for the description.
 */
export const argsOrObject: QuietRule = { role: 'text', ignore: NOT_STRING_OR_OBJECT, channel: 'args' };
/** Content of the channel the event's kind says. */
export const kindText: QuietRule = { role: 'text', ignore: NOT_STRING, channel: 'kind' };
/** The event's kind: one of the template's kinds. */
export const kind: QuietRule = { role: 'kind', ignore: 0 };
/** The call's key (a number): an arguments event's call must be the current one. */
export const callKey: QuietRule = { role: 'call', ignore: NULL };
/** The followed choice's delta. */
export const scope: QuietRule = { role: 'scope', ignore: 0 };
export const ignored: QuietRule = { role: 'none', ignore: ALL };
/**
 * A running usage (an object in every event, the totals so far): ignored, but the stream keeps the
 * last one, in the core (at most LAST_CAP bytes), and one cut short or failed before its completion
 * brought the usage reports that.
 */
export const runningUsage: QuietRule = { role: 'last', ignore: ALL };
/** A string is for the description. */
export const strings: QuietRule = { role: 'none', ignore: NOT_STRING };
export const choice: QuietRule = { role: 'choice', ignore: 0 };
/** Any value here is for the description: the event is never quiet. */
export const never: QuietRule = { role: 'none', ignore: 0 };
export function literal(l: string): QuietRule {
  return { role: 'literal', ignore: 0, literal: l };
}
export function notLiteral(l: string): QuietRule {
  return { role: 'not', ignore: NOT_STRING, literal: l };
}
/** Anything but a value of kind `k`, which is for the description. */
export function noneOf(k: number): QuietRule {
  return { role: 'none', ignore: ALL & ~(1 << k) };
}

const ROLES: Readonly<Record<QuietRule['role'], number>> = {
  none: MR_NONE, text: MR_TEXT, literal: MR_LITERAL, choice: MR_CHOICE, not: MR_NOT_LITERAL, kind: MR_KIND, call: MR_CALL, scope: MR_SCOPE, last: MR_LAST,
};
const CHANNELS: Readonly<Record<QuietChannel, number>> = { text: CH_TEXT, reasoning: CH_REASONING, args: CH_ARGS, kind: CH_OF_KIND };

/** The path id of a template's runningUsage rule (MR_LAST, flagged MT_LAST in its header), or −1 when it has none. */
export function runningUsagePath(t: Uint8Array): number {
  if ((t[4] & MT_LAST) === 0) return -1;
  const rules = t[0] | (t[1] << 8);
  for (let i = 0; i < rules; i++) if (t[MT_HEAD_BYTES + i * MT_RULE_BYTES] === MR_LAST) return i;
  return -1;
}

/**
 * A template in the core's layout (assembly/abi.ts, "Templates"): a header, one rule per path id,
 * the kinds, then the literals' and names' bytes.
 */
export function template(rules: readonly QuietRule[], kinds: readonly QuietKind[] = []): Uint8Array {
  const lits = rules.map((r) => (r.literal === undefined ? new Uint8Array(0) : ascii(r.literal)));
  const kindBytes = kinds.map((k) => [ascii(k.literal), ascii(k.name)]);
  const head = MT_HEAD_BYTES + rules.length * MT_RULE_BYTES + kinds.length * MT_KIND_BYTES;
  const out = new Uint8Array(head + lits.reduce((n, l) => n + l.length, 0) + kindBytes.reduce((n, [l, m]) => n + l.length + m.length, 0));
  const v = new DataView(out.buffer);
  v.setUint16(0, rules.length, true);
  v.setUint16(2, rules.filter((r) => r.role === 'literal').length, true);
  v.setUint16(4, (rules.some((r) => r.role === 'choice') ? MT_CHOICE : 0) | (rules.some((r) => r.role === 'last') ? MT_LAST : 0), true);
  v.setUint16(6, kinds.length, true);
  if (rules.some((r) => r.role === 'kind') !== (kinds.length !== 0)) throw new Error('seam: a template has kinds exactly when it has a kind rule');
  let at = head;
  const put = (b: Uint8Array): number => {
    out.set(b, at);
    at += b.length;
    return at - b.length;
  };
  rules.forEach((r, i) => {
    const o = MT_HEAD_BYTES + i * MT_RULE_BYTES;
    if (r.role === 'text' && r.ignore & (1 << JK_STRING)) throw new Error('seam: a text rule cannot ignore strings');
    out[o] = ROLES[r.role];
    out[o + 1] = r.ignore;
    v.setUint16(o + 2, lits[i].length, true);
    v.setUint16(o + 4, put(lits[i]), true);
    out[o + 6] = CHANNELS[r.channel ?? 'text'];
    if (r.alias === true) {
      if (r.role !== 'text') throw new Error('seam: only a text rule is an alias');
      out[o + 7] = MRF_ALIAS;
    }
  });
  kinds.forEach((k, i) => {
    const o = MT_HEAD_BYTES + rules.length * MT_RULE_BYTES + i * MT_KIND_BYTES;
    const [l, name] = kindBytes[i];
    v.setUint16(o, l.length, true);
    v.setUint16(o + 2, put(l), true);
    out[o + 4] = CHANNELS[k.channel];
    v.setUint16(o + 6, name.length, true);
    v.setUint16(o + 8, put(name), true);
  });
  return out;
}

/** The string at record j, or undefined when there is none or it is not a string. */
export function stringAt(doc: Doc, j: number): string | undefined {
  return j >= 0 && doc.kind(j) === JK_STRING ? doc.string(j) : undefined;
}

/**
 * The citation the object `source` is, its address, title and quoted passage at the provider's
 * keys for them in `fields` (`source` itself, or the object in it that holds them): the address and
 * the title at the first of `urls` and `titles` there; null when either is not an object.
 */
export function citationOf(source: unknown, urls: readonly string[], titles: readonly string[], cited?: string, fields: unknown = source): Citation | null {
  if (!isObj(source) || !isObj(fields)) return null;
  const c: Citation = { source };
  const s = (k: string | undefined) => (k !== undefined && typeof fields[k] === 'string' ? fields[k] : undefined);
  const u = s(urls.find((k) => typeof fields[k] === 'string'));
  const t = s(titles.find((k) => typeof fields[k] === 'string'));
  const q = s(cited);
  if (u !== undefined) c.url = u;
  if (t !== undefined) c.title = t;
  if (q !== undefined) c.citedText = q;
  return c;
}

/** The member `key` of the object `o` (undefined when `o` is not an object). */
export function member(o: unknown, key: string): unknown {
  return isObj(o) ? o[key] : undefined;
}

/** The first record of path p, or −1. */
export function find(doc: Doc, p: number): number {
  for (let j = 0; j < doc.n; j++) if (doc.path(j) === p) return j;
  return -1;
}

/** The message of an `error` value: a string, or an object's `message` (else its JSON). */
export function errorMessage(doc: Doc, errorRec: number, messageRec: number): string {
  if (messageRec >= 0 && doc.kind(messageRec) === JK_STRING) return doc.string(messageRec);
  return doc.string(errorRec);
}

type Obj = Record<string, unknown>;
/** Whether `v` is a JSON object (not an array, not null). */
/** One event of the stream a whole answer comes as: its name (its `event:` line, where the format names its events) and its data. */
export interface WholeEvent {
  readonly event?: string;
  readonly data: string;
}

/** While {@link wholeEventsWithin} writes a whole answer's events: the UTF-16 units of data they may still take. */
let wholeLeft = Infinity;
/** Thrown by {@link sseEvent} when a whole answer's events pass their budget. */
const PAST_BUDGET = /* @__PURE__ */ new Error('past the whole answer\'s budget');

/** The event whose data is the JSON of `value`, named `event` (where the format names its events). */
export function sseEvent(value: unknown, event?: string): WholeEvent {
  const data = JSON.stringify(value);
  // (each event is about the size of the body at most: the budget is passed by one event's units, no more)
  if ((wholeLeft -= data.length) < 0) throw PAST_BUDGET;
  return event === undefined ? { data } : { event, data };
}

/**
 * The most a whole answer's events may be (UTF-16 units of their data) where a stream's events may
 * hold `maxEventBytes`: 4 × that and 1 MiB (a Responses answer's events are about 3 × its body,
 * each with its envelope), at most 256 MiB (within a JS string's length). A model stream reads no
 * more of them, and the command's check neither.
 */
export function wholeAnswerBudget(maxEventBytes: number): number {
  return Math.min(4 * maxEventBytes + 1024 * 1024, 256 * 1024 * 1024);
}

/**
 * `spec`'s events of the whole answer `body` (its `wholeAnswer`), or null when their data would
 * pass `units` UTF-16 units: a body held within a limit may say a long member again in each of
 * many events (an envelope in the chunk of each of many choices), which are not written whole first.
 */
export function wholeEventsWithin(spec: FormatSpec, body: unknown, units: number): WholeEvent[] | undefined | null {
  const before = wholeLeft;
  wholeLeft = units;
  try {
    return spec.wholeAnswer?.(body);
  } catch (e) {
    if (e === PAST_BUDGET) return null;
    throw e;
  } finally {
    wholeLeft = before;
  }
}

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * The error in a JSON error body as the providers write them: `{"error": "…"}` (Ollama),
 * `{"error": {"message", "type", "code"}}` (OpenAI), `{"type": "error", "error": {"type",
 * "message"}}` (Anthropic), and, from OpenAI-compatible servers, a bare `{"message"}` or
 * `{"detail"}`. Undefined when the body holds none.
 */
export function errorOfBody(body: unknown): ProviderError | undefined {
  if (!isObj(body)) return undefined;
  const err = body.error;
  if (err === undefined || err === null) {
    const message = str(body.message) ?? str(body.detail);
    return message === undefined ? undefined : providerError(message, str(body.type), str(body.code));
  }
  if (typeof err === 'string') return { message: err };
  if (!isObj(err)) return { message: JSON.stringify(err) };
  return providerError(str(err.message) ?? JSON.stringify(err), str(err.type), str(err.code));
}

/** A provider's error with its type and code, and the one of them a message shows. */
export function providerError(message: string, type?: string, code?: string): ProviderError {
  const e: ProviderError = { message };
  if (type !== undefined) e.type = type;
  if (code !== undefined) e.code = code;
  const detail = code ?? type;
  if (detail !== undefined) e.detail = detail;
  return e;
}

/** A provider's error type (`providerCode`) in Anthropic's words: its own when it is one of them, else the format's, else `api_error`. */
export function anthropicErrorType(spec: FormatSpec, code: string | undefined): string {
  if (code === undefined) return 'api_error';
  // (Anthropic's own types: another provider's word of the same shape, OpenAI's `server_error`, is not one)
  if (/^(?:invalid_request|authentication|permission|not_found|rate_limit|api|overloaded|billing|timeout)_error$|^request_too_large$/.test(code)) return code;
  const types = spec.errorTypes;
  if (types === undefined) return 'api_error';
  // (AWS's error bodies may name the type with a namespace: `com.amazon.bedrock#ThrottlingException`, or a suffix after `:`)
  const key = Object.hasOwn(types, code) ? code : code.replace(/^.*#/, '').replace(/:.*$/, '');
  return Object.hasOwn(types, key) ? types[key] : 'api_error';
}

/** What a format says of one of its finish reasons (its words, whether the turn failed), or undefined for one it does not list. */
export function finishWords(reasons: FormatSpec['finishReasons'], reason: string): FinishWords | undefined {
  return Object.hasOwn(reasons, reason) ? reasons[reason] : undefined;
}

/** A format's finish reason in the words of a client's format (one it does not list, as it is). */
export function finishIn(spec: FormatSpec, reason: string, to: 'openai' | 'anthropic', refused = false): string {
  if (refused) return FILTERED[to];
  return finishWords(spec.finishReasons, reason)?.[to] ?? reason;
}

/**
 * A client's finish reason once it is known whether calls were written: with calls its word for
 * calls (`tool_calls`, `tool_use`), but an answer cut at a limit, filtered or refused keeps that
 * reason, as the providers' own do (the last call's arguments may be cut short, and a client must
 * not run it); without calls never its word for calls (its plain end instead).
 */
export function finishWithCalls(reason: string, to: 'openai' | 'anthropic', calls: boolean): string {
  if (calls) return KEPT_WITH_CALLS[to].has(reason) ? reason : TOOLS[to];
  return reason === TOOLS[to] ? STOP[to] : reason;
}

/** The client's finish reasons that stay when calls were written: a limit, a filter, a refusal. */
const KEPT_WITH_CALLS: Readonly<Record<'openai' | 'anthropic', ReadonlySet<string>>> = {
  openai: /* @__PURE__ */ new Set(['length', 'content_filter']),
  anthropic: /* @__PURE__ */ new Set(['max_tokens', 'model_context_window_exceeded', 'refusal']),
};

/** A number at `path` (dot-separated) of `o`, or undefined. */
export function count(o: unknown, path: string): number | undefined {
  let v: unknown = o;
  for (const k of path.split('.')) v = isObj(v) ? v[k] : undefined;
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** A format whose stream comes as Server-Sent Events (`text/event-stream`). */
export function sseFormat(spec: Omit<FormatSpec, 'framing' | 'contentType'>): FormatSpec {
  return { framing: 'sse', contentType: 'text/event-stream', ...spec };
}

/** OpenAI's error types and codes (Chat's error bodies and events, Responses' `response.failed`) in Anthropic's words. */
export const OPENAI_ERRORS: Readonly<Record<string, string>> = {
  server_error: 'api_error', rate_limit_exceeded: 'rate_limit_error', too_many_requests: 'rate_limit_error', insufficient_quota: 'billing_error', invalid_api_key: 'authentication_error',
  context_length_exceeded: 'invalid_request_error', invalid_prompt: 'invalid_request_error', model_not_found: 'not_found_error',
  unsupported_parameter: 'invalid_request_error', invalid_value: 'invalid_request_error', vector_store_timeout: 'timeout_error',
  // (DeepSeek's finish reason for an answer its inference system ran short of resources to finish)
  insufficient_system_resource: 'overloaded_error',
  // (Responses' failed responses: an input the model cannot take)
  invalid_image: 'invalid_request_error', invalid_image_format: 'invalid_request_error', invalid_base64_image: 'invalid_request_error',
  invalid_image_url: 'invalid_request_error', image_too_large: 'invalid_request_error', image_too_small: 'invalid_request_error',
  image_parse_error: 'invalid_request_error', image_content_policy_violation: 'invalid_request_error', invalid_image_mode: 'invalid_request_error',
  image_file_too_large: 'invalid_request_error', unsupported_image_media_type: 'invalid_request_error', empty_image_file: 'invalid_request_error',
  failed_to_download_image: 'invalid_request_error', image_file_not_found: 'invalid_request_error',
};

/** Finish reasons that OpenAI and Anthropic share the meaning of, in both words. */
export const STOP: FinishWords = { openai: 'stop', anthropic: 'end_turn' };
export const LENGTH: FinishWords = { openai: 'length', anthropic: 'max_tokens' };
export const TOOLS: FinishWords = { openai: 'tool_calls', anthropic: 'tool_use' };
export const FILTERED: FinishWords = { openai: 'content_filter', anthropic: 'refusal' };
/** The model's context window was full: a limit to OpenAI's clients, Anthropic's own word for it to Anthropic's. */
export const CONTEXT_FULL: FinishWords = { openai: 'length', anthropic: 'model_context_window_exceeded' };
/** A reason that says the turn failed (see {@link FinishWords.failed}), with what it means. */
export const failedTurn = (meaning: string): FinishWords => ({ ...STOP, failed: meaning });
