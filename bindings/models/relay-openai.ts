// Layer 4: a relay's client in OpenAI Chat Completions: `chat.completion.chunk` events. A role
// chunk first; text as `delta.content`, reasoning as `delta.reasoning_content` (or dropped), a
// refusal as `delta.refusal`; each
// client tool call as `tool_calls` deltas, the first with its `index`, `id`, `type` and
// `function.name` (and Gemini's thoughtSignature as `extra_content.google.thought_signature`, as
// Google's OpenAI-compatible API writes it), then `function.arguments` fragments copied as the
// escaped bytes they came as (a custom tool's call as `type: "custom"`, its name in `custom.name`
// and its input fragments in `custom.input`);
// a last chunk with the finish reason (`tool_calls` when calls were written, unless the answer was
// cut at its limit, `length`, or filtered, `content_filter`; never without calls), the usage
// once, then `data: [DONE]`. An error is `data: {"error": …}`, never `[DONE]`.
import type { DocReader } from './document.js';
import type { ModelStreamError } from './errors.js';
import { finishIn, finishWithCalls, isObj } from './formats/describe.js';
import { partTexts } from './formats/openai.js';
import type { Call } from './message.js';
import { type Aborted, type ClientWriter, DROPPED, type QuietHeads, type RelayTarget, callId, openAiError, openAiUsage, usageOf } from './writer.js';

const TEXT_END = '"},"finish_reason":null}]}\n\n';
const ARGS_END = '"}}]},"finish_reason":null}]}\n\n';
const DONE = 'data: [DONE]\n\n';

/** The bytes a relay writes to an OpenAI Chat Completions client. */
export class OpenAiWriter implements ClientWriter {
  readonly comments = true;
  /** The role chunk was written (a pass-through relay's upstream writes its own). */
  private started: boolean;
  /** `data: {…,"choices":[{"index":0,"delta":` of this relay's chunks, or of the upstream's event being written anew. */
  private open: string;
  private textHead: string | null = null;
  private reasoningHead: string | null = null;
  private refusalHead: string | null = null;
  private argsHead: string | null = null;
  /** The call the arguments' head is for (its argsKey; −1: none). */
  private argsFor = -1;
  /** What the core may write itself, for the call of this argsKey (−1: none). */
  private heads: QuietHeads | null = null;
  private headsFor = -1;
  /** Client tool calls written. */
  private calls = 0;
  /** The sources cited at an address, once each (their `annotations` written before the finish), or null: none, or the upstream's own pass. */
  private cited: { url: string; title?: string }[] | null = null;
  /** Whether it writes the sources cited anew: not when the upstream's events pass as they came (OpenAI's own), its annotations among them. */
  readonly cites: boolean;
  /** The other choices' calls, by choice: the index of each id, the next index free, the last call's (see otherCall). */
  private others: Map<number, { ids: Map<string, number>; next: number; last: number }> | null = null;

  constructor(private readonly t: RelayTarget, readonly keepsReasoning: boolean, started = false) {
    this.started = started;
    this.cites = !started;
    this.open = envelope(t.idJson, String(t.created), t.modelJson);
  }

  /** Writes the events of one upstream event anew, in the upstream's envelope and its choice's index (`null`: this relay's own again). */
  rewrite(id: string | null, created: string, model: string): void {
    this.open = id === null ? envelope(this.t.idJson, String(this.t.created), this.t.modelJson) : envelope(id, created, model, this.t.choice);
    this.textHead = this.reasoningHead = this.refusalHead = this.argsHead = null;
    this.argsFor = -1;
    this.heads = null;
  }

  /** The role an upstream event written anew names (record `role`, a string: openai-node wants it in a choice's first chunk), in a chunk of its own. */
  role(doc: DocReader, role: number): void {
    this.chunk(`{"role":${JSON.stringify(doc.string(role))}}`);
  }

  private chunk(delta: string, finish = 'null'): void {
    this.t.writeText(`${this.open}${delta}${chunkEnd(finish)}`);
    this.t.wrote(1);
  }

  /** The role chunk, once (before a refusal, OpenAI's own: no content, an empty refusal). */
  private start(refusal = false): void {
    if (this.started) return;
    this.started = true;
    this.heads = null;
    this.chunk(refusal ? '{"role":"assistant","content":null,"refusal":""}' : '{"role":"assistant","content":""}');
  }

  /** Text and reasoning once the role chunk is written (reasoning left out when dropped); the arguments of the last call while it is open. */
  quiet(last: Call | null): QuietHeads {
    const forCall = last !== null && !last.server && !last.done ? argsKey(last) : -1;
    if (this.heads !== null && this.headsFor === forCall) return this.heads;
    this.headsFor = forCall;
    const started = this.started;
    return (this.heads = {
      text: started ? { head: this.head(), end: TEXT_END } : null,
      reasoning: !this.keepsReasoning ? DROPPED : started ? { head: this.reasoningOpen(), end: TEXT_END } : null,
      args: forCall >= 0 ? { head: this.argsOpen(last!), end: ARGS_END } : null,
    });
  }

  private reasoningOpen(): string {
    return (this.reasoningHead ??= `${this.open}{"reasoning_content":"`);
  }

  private argsOpen(call: Call): string {
    const key = argsKey(call);
    if (this.argsFor !== key) {
      this.argsFor = key;
      this.argsHead = `${this.open}{"tool_calls":[{"index":${call.index},${call.custom ? '"custom":{"input":"' : '"function":{"arguments":"'}`;
    }
    return this.argsHead!;
  }

  private head(): string {
    return (this.textHead ??= `${this.open}{"content":"`);
  }

  text(ptr: number, len: number): void {
    if (len !== 0) this.delta(this.head(), ptr, len);
  }

  /** One chunk whose delta is a string member: its head (after the role chunk), the span's escaped bytes as they came, its end. */
  private delta(head: string, ptr: number, len: number): void {
    this.start();
    this.t.writeText(head);
    this.t.writeSpan(ptr, len);
    this.t.writeText(TEXT_END);
    this.t.wrote(1);
  }

  keepAlive(): void {}

  reasoning(ptr: number, len: number): void {
    if (this.keepsReasoning && len !== 0) this.delta(this.reasoningOpen(), ptr, len);
  }

  signature(): void {}
  reasoningEnded(): void {}

  refusal(ptr: number, len: number): void {
    if (len === 0) return; // (an explanation of none: Anthropic's stop_details without one)
    this.start(true);
    this.delta((this.refusalHead ??= `${this.open}{"refusal":"`), ptr, len);
  }

  callBegan(call: Call): void {
    if (call.server) return;
    this.start();
    this.calls++;
    // (a call's thoughtSignature, which Gemini wants back with it, where Google's OpenAI-compatible API puts it)
    const signature = call.signature === '' ? '' : `,"extra_content":{"google":{"thought_signature":${JSON.stringify(call.signature)}}}`;
    this.chunk(`{"tool_calls":[{"index":${call.index},"id":${callId(this.t, call, 'call_seam')},${typed(call, true)}${signature}}]}`);
  }

  /** The start that came after a fragment: its id and name, in a chunk as OpenAI's first one for a call (the client takes the name and id given last). */
  callNamed(call: Call): void {
    if (call.server) return;
    this.chunk(`{"tool_calls":[{"index":${call.index},"id":${callId(this.t, call, 'call_seam')},${typed(call, false)}}]}`);
  }

  callText(call: Call, text: string): void {
    if (call.server || text === '') return;
    this.chunk(`{"tool_calls":[{"index":${call.index},"function":{"arguments":${JSON.stringify(text)}}}]}`);
  }

  callArgs(call: Call, ptr: number, len: number, _flags: number, whole: boolean): void {
    if (call.server || len === 0) return;
    if (whole) {
      // a JSON value (Ollama's object): its text, as a JSON string
      const s = JSON.stringify(this.t.text(ptr, len, false));
      this.chunk(`{"tool_calls":[{"index":${call.index},"function":{"arguments":${s}}}]}`);
      return;
    }
    this.t.writeText(this.argsOpen(call));
    this.t.writeSpan(ptr, len);
    this.t.writeText(ARGS_END);
    this.t.wrote(1);
  }

  /** A call that ended with no argument text but a fallback (Anthropic's start input, Bedrock's `{}`): that, as its arguments. */
  callEnded(call: Call): void {
    if (call.server || call.bytes !== 0 || call.fallback === '') return;
    this.chunk(`{"tool_calls":[{"index":${call.index},"function":{"arguments":${JSON.stringify(call.fallback)}}}]}`);
  }

  /**
   * The end of an upstream event written anew: the sources it cites (record `annotations`, its JSON
   * as it came), its finish reason (record `finish`, as the upstream wrote it) and its usage (record
   * `usage`, its JSON as it came), each in a chunk of its own.
   */
  rewritten(doc: DocReader, finish: number, usage: number, annotations: number): void {
    if (annotations >= 0) {
      this.t.writeText(`${this.open}{"annotations":`);
      this.t.writeJsonSpan(doc.ptr(annotations), doc.len(annotations));
      this.t.writeText(`}${chunkEnd('null')}`);
      this.t.wrote(1);
    }
    if (finish >= 0) this.chunk('{}', JSON.stringify(doc.string(finish)));
    if (usage >= 0) {
      const open = this.open.slice(0, this.open.indexOf('"choices":'));
      this.t.writeText(`${open}"choices":[],"usage":`);
      this.t.writeJsonSpan(doc.ptr(usage), doc.len(usage));
      this.t.writeText('}\n\n');
      this.t.wrote(1);
    }
  }

  /**
   * The choices other than the followed one of an upstream event written anew (`n` above 1), which
   * the reader does not follow: read here by JSON.parse (an event of content as parts with more
   * than one choice is rare) and written as their clients read them, a chunk each in the event's
   * envelope: text parts joined as `content`, thinking parts as `reasoning_content` (when reasoning
   * passes), a call without `index` given one (its choice's next, by its id), the rest of the
   * choice (its finish reason, logprobs, …) as it came.
   */
  otherChoices(json: string): void {
    let v: unknown;
    try {
      v = JSON.parse(json);
    } catch {
      return; // (the core read it as JSON: not reached)
    }
    const choices = (v as { choices?: unknown } | null)?.choices;
    if (!Array.isArray(choices)) return;
    const head = this.open.slice(0, this.open.indexOf('"choices":'));
    for (const c of choices as unknown[]) {
      if (!isObj(c) || typeof c.index !== 'number' || c.index === this.t.choice) continue;
      const out = isObj(c.delta) ? { ...c, delta: this.readable(c.index, c.delta) } : c;
      this.t.writeText(`${head}"choices":[${JSON.stringify(out)}]}\n\n`);
      this.t.wrote(1);
    }
  }

  /** Another choice's delta as OpenAI's clients read it (see otherChoices). */
  private readable(choice: number, delta: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(delta)) {
      if (k === 'content' && Array.isArray(x)) {
        const { text, thinking } = partTexts(x as unknown[]);
        if (thinking !== '' && this.keepsReasoning) out.reasoning_content = thinking;
        if (text !== '') out.content = text;
      } else if (k === 'tool_calls' && Array.isArray(x)) {
        out.tool_calls = (x as unknown[]).map((call) => {
          if (!isObj(call)) return call;
          const { index, ...rest } = call;
          const at = this.otherCall(choice, typeof index === 'number' ? index : -1, call.id);
          return index === at ? call : { index: at, ...rest };
        });
      } else {
        out[k] = x;
      }
    }
    return out;
  }

  /**
   * The index of a call of another choice (`index` −1: it came without one), as the followed
   * choice's reader keys its calls: its own index when it has one; else the index of its id, or the
   * choice's next free one for a new id; with neither, the last call's (a fragment of it). Of the
   * calls of the events written anew (those that pass as they came are not read here).
   */
  private otherCall(choice: number, index: number, id: unknown): number {
    const others = (this.others ??= new Map());
    let c = others.get(choice);
    if (c === undefined) others.set(choice, (c = { ids: new Map(), next: 0, last: -1 }));
    let at = index;
    if (at < 0) at = typeof id === 'string' ? c.ids.get(id) ?? c.next : c.last >= 0 ? c.last : c.next;
    if (typeof id === 'string' && !c.ids.has(id)) c.ids.set(id, at);
    c.next = Math.max(c.next, at + 1);
    c.last = at;
    return at;
  }

  /** A source at an address, from another format: written at the completion, as OpenAI's `url_citation` annotations. */
  citation(c: { url: string; title?: string }): void {
    (this.cited ??= []).push(c.title === undefined ? { url: c.url } : { url: c.url, title: c.title });
  }

  /**
   * The last chunks: the sources cited, if any, as `annotations` (one chunk with all of them, as
   * OpenAI's search models say them and openai-node keeps the list said last: see
   * {@link openAiAnnotations}), the finish reason in OpenAI's words (`tool_calls` when calls were
   * written and the answer was neither cut at a limit nor filtered; never without calls), then the usage.
   */
  completed(): void {
    this.start();
    if (this.cited !== null) this.chunk(`{"annotations":${JSON.stringify(openAiAnnotations(this.cited, this.t.textChars))}}`);
    const why = this.t.message?.finishReason;
    const reason = finishWithCalls(why === undefined ? 'stop' : finishIn(this.t.spec, why, 'openai', this.t.message!.refused), 'openai', this.calls !== 0);
    this.chunk('{}', JSON.stringify(reason));
    this.usage();
  }

  /** The usage once, in a chunk of its own with no choices (as OpenAI writes it). */
  private usage(): void {
    const u = usageOf(this.t);
    if (u === undefined) return;
    const open = this.open.slice(0, this.open.indexOf('"choices":'));
    this.t.writeText(`${open}"choices":[],"usage":${JSON.stringify(openAiUsage(u))}}\n\n`);
    this.t.wrote(1);
  }

  end(): void {
    this.t.writeText(DONE);
    this.t.wrote(1);
  }

  error(e: ModelStreamError): void {
    this.errorEvent(openAiError(e));
  }

  aborted(reason: Aborted): void {
    this.errorEvent({ message: reason.message, type: ABORT_TYPES[reason.kind], code: reason.code });
  }

  /** OpenAI's error event: `data: {"error": …}`. */
  private errorEvent(error: Record<string, unknown>): void {
    this.t.writeText(`data: ${JSON.stringify({ error })}\n\n`);
    this.t.wrote(1);
  }
}

/**
 * The sources an answer cites at an address as OpenAI Chat's message `annotations`: a
 * `url_citation` for each address once, in the order they were cited, with the source's title
 * (`""` when the provider gave none) and a span of the whole content, `start_index` 0 and
 * `end_index` the content's length in characters (code points, as JavaScript's string iterator
 * and Python count them: a surrogate pair is one, also when its halves came in two deltas as
 * escapes, which a client that joins decoded deltas in Python counts as two). OpenAI's typed
 * clients require every field. `chars`: the content's characters (`[...content].length`).
 * With `content`, the content itself, a source placed in it (its `spans`, Gemini's grounding
 * supports, in UTF-16 units) has a `url_citation` for each of its spans instead, in order, its
 * `start_index` and `end_index` in characters of the content. A relay does not place a source in
 * the text it writes (it keeps no text): its annotations span the whole content.
 */
export function openAiAnnotations(citations: readonly { url?: string; title?: string; spans?: readonly { start: number; end: number }[] }[], chars: number, content?: string): OpenAiAnnotation[] {
  const out: OpenAiAnnotation[] = [];
  const seen = new Set<string>();
  // (UTF-16 offsets of the spans in characters: counted once, for all of them)
  const placed = content === undefined ? [] : citations.flatMap((c) => (c.url === undefined ? [] : c.spans ?? []));
  const at = placed.length === 0 ? null : codePointOffsets(content!, placed.flatMap((s) => [s.start, s.end]));
  for (const c of citations) {
    if (c.url === undefined || seen.has(c.url)) continue;
    seen.add(c.url);
    const title = c.title ?? '';
    if (at !== null && c.spans !== undefined && c.spans.length !== 0) {
      for (const s of c.spans) out.push({ type: 'url_citation', url_citation: { end_index: at.get(s.end)!, start_index: at.get(s.start)!, title, url: c.url } });
    } else out.push({ type: 'url_citation', url_citation: { end_index: chars, start_index: 0, title, url: c.url } });
  }
  return out;
}

/** The code point offset in `text` of each UTF-16 offset of `units` (one inside a pair: its pair's end). */
function codePointOffsets(text: string, units: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  let i = 0;
  let cps = 0;
  for (const u of [...new Set(units)].sort((a, b) => a - b)) {
    while (i < u && i < text.length) {
      const c = text.charCodeAt(i);
      i += (c & 0xfc00) === 0xd800 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
      cps++;
    }
    out.set(u, cps);
  }
  return out;
}

/** An annotation of OpenAI Chat's message: a source cited at an address, and the span of the content it is cited for. */
export interface OpenAiAnnotation {
  type: 'url_citation';
  url_citation: { end_index: number; start_index: number; title: string; url: string };
}

/** A gateway's reasons to end a stream (SseRelay.abort) as OpenAI error types. */
const ABORT_TYPES: Readonly<Record<Aborted['kind'], string>> = { timeout: 'timeout', overloaded: 'overloaded', server: 'server_error' };

/** `data: {…,"choices":[{"index":0,"delta":` with these id, created and model (JSON texts). */
/** A chunk's end after its delta: its finish reason (JSON: `null` or a string), its choice's, and the event's. */
const chunkEnd = (finish: string): string => `,"finish_reason":${finish}}]}\n\n`;

function envelope(id: string, created: string, model: string, index = 0): string {
  return `data: {"id":${id},"object":"chat.completion.chunk","created":${created},"model":${model},"choices":[{"index":${index},"delta":`;
}

/**
 * Which arguments' head a call takes: its index, and its kind (a call begun by a fragment is named
 * a custom tool's by its start, and its head changes with it).
 */
function argsKey(call: Call): number {
  return 2 * call.index + (call.custom ? 1 : 0);
}

/** A call's type and name, in its first chunk (`begins`: with its arguments empty, as OpenAI's first) or in the chunk that names it later. */
function typed(call: Call, begins: boolean): string {
  const name = JSON.stringify(call.name);
  return call.custom
    ? `"type":"custom","custom":{"name":${name}${begins ? ',"input":""' : ''}}`
    : `"type":"function","function":{"name":${name}${begins ? ',"arguments":""' : ''}}`;
}
