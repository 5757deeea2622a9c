// What a relay of a model stream must write for its client, from the reference reading of the
// stream (model-fixtures.ts), and the checks of a relay's output against it: shared by the relay's
// fixture tests (test/unit/relay.test.ts) and the generated streams of the property tests.
import { expect } from 'vitest';
import { SseRelay } from '../../bindings/index.js';
import { type ClientMessage, readAnthropic, readOpenAi, sse } from './clients.js';
import { concat } from './random.js';
import { CallBook, type CallOp, innerFormat, isEventStream, reference, type Fixture, type Frame, type ModelFormat, type Reference } from './model-fixtures.js';

export type Client = 'openai' | 'anthropic';
const enc = new TextEncoder();
const utf8Length = (s: string) => enc.encode(s).length;
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The finish reasons each format sends, in the clients' words (written here, apart from the library's tables; Claude on Bedrock's are Anthropic's). */
export const WORDS: Record<Exclude<ModelFormat, 'bedrock-invoke'>, Record<string, [string, string]>> = {
  openai: { stop: ['stop', 'end_turn'], length: ['length', 'max_tokens'], tool_calls: ['tool_calls', 'tool_use'], content_filter: ['content_filter', 'refusal'] },
  anthropic: { end_turn: ['stop', 'end_turn'], max_tokens: ['length', 'max_tokens'], tool_use: ['tool_calls', 'tool_use'], stop_sequence: ['stop', 'stop_sequence'] },
  'openai-responses': { completed: ['stop', 'end_turn'], incomplete: ['length', 'max_tokens'] },
  ollama: { stop: ['stop', 'end_turn'], length: ['length', 'max_tokens'] },
  ddg: {},
  // ai.google.dev/api/generate-content#FinishReason and #BlockReason; OpenAI's own Gemini endpoint says
  // stop, length and content_filter for these
  gemini: {
    STOP: ['stop', 'end_turn'], MAX_TOKENS: ['length', 'max_tokens'], SAFETY: ['content_filter', 'refusal'], RECITATION: ['content_filter', 'refusal'],
    PROHIBITED_CONTENT: ['content_filter', 'refusal'], BLOCKLIST: ['content_filter', 'refusal'], SPII: ['content_filter', 'refusal'],
  },
  // ConverseStream's StopReason (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html): a
  // guardrail's or a filter's stop is a filter's, the context window full a limit (Anthropic's own word for it); the
  // malformed ones are not a stop but the provider's error
  bedrock: {
    end_turn: ['stop', 'end_turn'], max_tokens: ['length', 'max_tokens'], tool_use: ['tool_calls', 'tool_use'], stop_sequence: ['stop', 'stop_sequence'],
    guardrail_intervened: ['content_filter', 'refusal'], content_filtered: ['content_filter', 'refusal'],
    model_context_window_exceeded: ['length', 'model_context_window_exceeded'],
  },
};

/** The upstream's usage in one shape (input counts cached tokens), written here from each format's documentation. */
export function counts(upstream: ModelFormat, u: Obj | undefined): { input: number; output: number; read?: number; write?: number; reasoning?: number } | undefined {
  const format = innerFormat(upstream);
  if (u === undefined || format === 'ddg') return undefined;
  const n = (v: unknown) => (typeof v === 'number' ? v : undefined);
  const at = (o: unknown, k: string) => (isObj(o) ? o[k] : undefined);
  switch (format) {
    case 'openai': return { input: n(u.prompt_tokens) ?? 0, output: n(u.completion_tokens) ?? 0, read: n(at(u.prompt_tokens_details, 'cached_tokens')), reasoning: n(at(u.completion_tokens_details, 'reasoning_tokens')) };
    case 'openai-responses': return { input: n(u.input_tokens) ?? 0, output: n(u.output_tokens) ?? 0, read: n(at(u.input_tokens_details, 'cached_tokens')), reasoning: n(at(u.output_tokens_details, 'reasoning_tokens')) };
    case 'anthropic': {
      const read = n(u.cache_read_input_tokens);
      const write = n(u.cache_creation_input_tokens);
      return { input: (n(u.input_tokens) ?? 0) + (read ?? 0) + (write ?? 0), output: n(u.output_tokens) ?? 0, read, write, reasoning: n(at(u.output_tokens_details, 'thinking_tokens')) };
    }
    case 'ollama': return { input: n(u.prompt_eval_count) ?? 0, output: n(u.eval_count) ?? 0 };
    // UsageMetadata: promptTokenCount counts the cached ones; the prompts of the tools Gemini ran
    // itself (Google Search) are input beside it (totalTokenCount counts them); thoughts are output
    // beside candidatesTokenCount
    case 'gemini': {
      const thoughts = n(u.thoughtsTokenCount);
      return { input: (n(u.promptTokenCount) ?? 0) + (n(u.toolUsePromptTokenCount) ?? 0), output: (n(u.candidatesTokenCount) ?? 0) + (thoughts ?? 0), read: n(u.cachedContentTokenCount), reasoning: thoughts };
    }
    // TokenUsage: inputTokens counts neither the cache's reads nor its writes
    case 'bedrock': {
      const read = n(u.cacheReadInputTokens);
      const write = n(u.cacheWriteInputTokens);
      return { input: (n(u.inputTokens) ?? 0) + (read ?? 0) + (write ?? 0), output: n(u.outputTokens) ?? 0, read, write };
    }
  }
}

/**
 * Whether an OpenAI client reads every frame as it is: no content array, no call without index,
 * no fragment of a call that never began (its first delta has no id).
 */
export function canonical(frames: Frame[]): boolean {
  const begun = new Map<number, string>();
  for (const fr of frames) {
    if (fr.kind !== 'event' || fr.data === '[DONE]' || fr.role === 'bad' || fr.role === 'error') continue;
    const v = JSON.parse(fr.data) as Obj;
    for (const c of Array.isArray(v.choices) ? v.choices : []) {
      if (!isObj(c) || !isObj(c.delta)) continue;
      if (Array.isArray(c.delta.content)) return false;
      // (the reasoning under both its names: a client that reads both would take it twice)
      if (typeof c.delta.reasoning_content === 'string' && typeof c.delta.reasoning === 'string') return false;
      for (const t of Array.isArray(c.delta.tool_calls) ? c.delta.tool_calls : []) {
        if (!isObj(t) || typeof t.index !== 'number') return false;
        if (typeof t.id === 'string') {
          // (a call at the index of another: Ollama's, all at index 0)
          const was = begun.get(t.index);
          if (was !== undefined && was !== '' && was !== t.id) return false;
          begun.set(t.index, t.id);
        } else if (!begun.has(t.index)) return false;
      }
    }
  }
  return true;
}

/** What a relay of a fixture must write, from the reference reading. */
export class Oracle {
  readonly ref: Reference;
  readonly frames: Frame[];
  readonly done: boolean;
  /** Frames that reach the client: all but a failing one (and [DONE], which flush writes). */
  readonly relayed: Frame[];
  readonly passThrough: boolean;
  readonly canonical: boolean;

  constructor(readonly f: Fixture, readonly to: Client) {
    this.ref = reference(isEventStream(f.format) ? f.bytes : f.body, f.format);
    this.frames = this.ref.frames;
    this.done = this.ref.status === 'done';
    this.relayed = this.frames.filter((fr) => fr.role !== 'error' && fr.role !== 'bad' && !(fr.role === 'completion' && fr.data === '[DONE]'));
    this.passThrough = f.format === to;
    this.canonical = f.format !== 'openai' || canonical(this.frames);
  }

  /** The text a client reads of the first n frames. */
  textOf(n: number): string {
    const frames = this.frames.slice(0, n).filter((fr) => this.relayed.includes(fr));
    return frames.map((fr) => fr.text).join('');
  }

  /** Pass-through: the exact bytes of the relayed frames among the first n frames. */
  wire(n: number): string {
    let s = '';
    for (const fr of this.frames.slice(0, n)) {
      if (!this.relayed.includes(fr)) continue;
      if (fr.kind === 'comment') s += `: ${fr.comment}\n\n`;
      else s += `${this.to === 'anthropic' ? `event: ${fr.type}\n` : ''}${fr.data.split('\n').map((l) => `data: ${l}\n`).join('')}\n`;
    }
    return s;
  }

  /**
   * The client's tool calls. A call the upstream sent without an id gets one made by the relay. To
   * Anthropic each call is a tool_use block, and a fragment of a call whose block has ended (calls
   * that interleave) is written in a block of its own, with the same id.
   */
  calls(): { id: string | RegExp; name: string; arguments: string }[] {
    const made = this.to === 'openai' ? /^call_seam/ : /^toolu_seam/;
    const id = (c: { id: string }) => (c.id === '' && !(this.passThrough && this.canonical) ? made : c.id);
    if (this.to === 'openai' || this.passThrough) return this.ref.clientCalls.map((c) => ({ ...c, id: id(c) }));
    type Call = CallBook['calls'][number];
    const book = new CallBook();
    const blocks: { id: string | RegExp; name: string; arguments: string; call: Call }[] = [];
    let open: Call | null = null;
    // A call begun by a fragment, with no name yet, is held until its start names it, it ends, or
    // anything else is written (another call, text, reasoning; those held before it first): a
    // stream that fails first never writes it.
    const held: Call[] = [];
    const release = (c: Call) => { const k = held.indexOf(c); if (k >= 0) held.splice(0, k + 1); };
    for (const fr of this.relayed) {
      if (fr.text !== '' || fr.reasoning !== '' || fr.signature !== undefined || fr.redacted !== undefined) held.length = 0;
      for (const op of fr.calls) {
        const { call, began, text } = book.apply(op);
        if (op.op === 'end' || op.op === 'endAll') {
          if (op.op === 'endAll') held.length = 0;
          else for (const c of book.calls) if (c.key === op.key && c.done) release(c);
          // (the end of a Gemini call in parts writes what closes its arguments)
          if (call !== undefined && open === call && text !== '') blocks[blocks.length - 1].arguments += text;
          if (open !== null && open.done) open = null;
          continue;
        }
        if (call === undefined || call.server) continue;
        if (began && call.name === '') held.push(call);
        else if (held.includes(call)) { if (call.name !== '') release(call); }
        else if (began || text !== '') held.length = 0;
        if (began || (open !== call && text !== '')) {
          blocks.push({ id: id(call), name: call.name, arguments: '', call });
          open = call;
        }
        if (open === call) {
          const b = blocks[blocks.length - 1];
          b.name = call.name;
          b.arguments += text;
        }
        if (op.op === 'whole' || (op.op === 'gemini' && call.done)) open = null;
      }
    }
    return blocks.filter((b) => this.done || !held.includes(b.call)).map(({ call: _, ...b }) => b);
  }

  /**
   * To Anthropic: the signatures and redacted blocks' data the client reads, in its blocks' order:
   * each reasoning block's, and a Gemini call's thoughtSignature, in a thinking block of its own
   * right before the call's first tool_use block. Computed from the frames (a Gemini chunk's parts
   * in their order), apart from the relay's writer.
   */
  signatures(): string[] {
    const out: string[] = [];
    const book = new CallBook();
    const apply = (op: CallOp) => {
      const { call, began } = book.apply(op);
      if (began && call !== undefined && !call.server && call.signature !== undefined && !this.passThrough) out.push(call.signature);
    };
    for (const fr of this.relayed) {
      const ops = [...fr.calls];
      if (this.f.format === 'gemini' && fr.kind === 'event') {
        // (the followed candidate's parts in order: a signature of a part that is not a call ends a
        // reasoning block; a call's part is the call's next op)
        const v = JSON.parse(fr.data) as Obj;
        const cands = Array.isArray(v.candidates) ? v.candidates : [];
        const byPosition = cands.every((c) => !isObj(c) || c.index === undefined);
        for (const [i, c] of cands.entries()) {
          if (!isObj(c) || !(byPosition ? i === 0 : c.index === 0)) continue;
          const parts = isObj(c.content) && Array.isArray(c.content.parts) ? c.content.parts : [];
          for (const part of parts) {
            if (!isObj(part)) continue;
            if (isObj(part.functionCall)) apply(ops.shift()!);
            else if (typeof part.thoughtSignature === 'string') out.push(part.thoughtSignature);
          }
        }
      } else {
        if (fr.signature !== undefined) out.push(fr.signature);
        if (fr.redacted !== undefined) out.push(fr.redacted);
      }
      for (const op of ops) apply(op);
    }
    return out;
  }

  /** To OpenAI: each client call's thoughtSignature ('' for none), as the relay writes it in the call's first chunk. */
  callSignatures(): string[] {
    // (passed as it came: the upstream's own, Google's OpenAI-compatible API's)
    if (this.passThrough) return this.ref.toolCalls.map((c) => c.signature ?? '');
    return this.ref.toolCalls.map((c) => c.signature ?? '');
  }

  /** The message the client ends with. */
  expected(): Partial<Omit<ClientMessage, 'calls'>> & { calls?: ReturnType<Oracle['calls']> } {
    const { f, ref, to } = this;
    const calls = this.calls();
    const out: ReturnType<Oracle['expected']> = { text: this.textOf(this.frames.length), reasoning: ref.reasoning, calls, done: this.done };
    if (this.passThrough) {
      out.finish = to === 'openai' ? lastFinish(this.relayed) : (ref.finishReason ?? null);
      return out;
    }
    if (this.done) {
      const w = ref.finishReason === undefined ? undefined : WORDS[innerFormat(f.format)][ref.finishReason];
      let finish = w === undefined ? ref.finishReason ?? (to === 'openai' ? 'stop' : 'end_turn') : w[to === 'openai' ? 0 : 1];
      // (an answer cut at a limit or filtered keeps its reason with its calls: the last may be cut short)
      if (calls.length) finish = ['length', 'content_filter', 'max_tokens', 'model_context_window_exceeded', 'refusal'].includes(finish) ? finish : to === 'openai' ? 'tool_calls' : 'tool_use';
      else if (finish === 'tool_calls' || finish === 'tool_use') finish = to === 'openai' ? 'stop' : 'end_turn';
      out.finish = finish;
      const u = counts(f.format, ref.usage);
      if (to === 'openai') {
        out.usage = u === undefined ? null : {
          prompt_tokens: u.input, completion_tokens: u.output, total_tokens: u.input + u.output,
          ...(u.read !== undefined ? { prompt_tokens_details: { cached_tokens: u.read } } : {}),
          ...(u.reasoning !== undefined ? { completion_tokens_details: { reasoning_tokens: u.reasoning } } : {}),
        };
      } else {
        out.usage = u === undefined ? { input_tokens: 0, output_tokens: 0 } : {
          input_tokens: u.input - (u.read ?? 0) - (u.write ?? 0), output_tokens: u.output,
          ...(u.read !== undefined ? { cache_read_input_tokens: u.read } : {}), ...(u.write !== undefined ? { cache_creation_input_tokens: u.write } : {}),
          ...(u.reasoning !== undefined ? { output_tokens_details: { thinking_tokens: u.reasoning } } : {}),
        };
      }
    } else {
      out.finish = null;
    }
    return out;
  }

  seen(bytes: number): [number, number] {
    let lo = 0;
    while (lo < this.frames.length && !this.frames[lo].atFlush && this.frames[lo].end <= bytes) lo++;
    const next = this.frames[lo];
    return [lo, next && !next.atFlush && next.crlf && next.end - 1 === bytes ? lo + 1 : lo];
  }
}

/** The finish_reason of the last relayed OpenAI chunk that had one. */
export function lastFinish(frames: Frame[]): string | null {
  let finish: string | null = null;
  for (const fr of frames) {
    if (fr.kind !== 'event' || fr.data === '[DONE]' || fr.role === 'bad' || fr.role === 'error') continue;
    const v = JSON.parse(fr.data) as Obj;
    for (const c of Array.isArray(v.choices) ? v.choices : []) if (isObj(c) && (c.index ?? 0) === 0 && typeof c.finish_reason === 'string') finish = c.finish_reason;
  }
  return finish;
}


export { concat };

/** The client's reading; a pass-through OpenAI stream's chunks are the upstream's own (not checked for the fields a relay writes). */
export const read = (to: Client, bytes: Uint8Array, upstreams = false) => (to === 'openai' ? readOpenAi(bytes, !upstreams) : readAnthropic(bytes));

/** Expected calls with a made id as a pattern. */
export const matching = (calls: { id: string | RegExp; name: string; arguments: string }[]) => calls.map((c) => ({ ...c, id: c.id instanceof RegExp ? expect.stringMatching(c.id) : c.id }));

/** Whether a text is one JSON value. */
export const isJson = (t: string) => { try { JSON.parse(t); return true; } catch { return false; } };

/** Feeds the chunks (copying each returned view), checking what was written after every push; then flushes. */
export function relay(o: Oracle, chunks: Uint8Array[], why: string): { r: SseRelay; pushed: Uint8Array[]; flushed: Uint8Array } {
  const r = new SseRelay({ from: o.f.format, to: o.to, id: o.to === 'openai' ? 'chatcmpl-t' : 'msg_t', model: 'm' });
  expect(r.status, why).toBe('open');
  const pushed: Uint8Array[] = [];
  let bytes = 0;
  for (let k = 0; k < chunks.length; k++) {
    bytes += chunks[k].length;
    const out = r.push(chunks[k]);
    expect(out, why).toBeInstanceOf(Uint8Array);
    pushed.push(out.slice());
    const [lo, hi] = o.seen(bytes);
    // whole events only, and the text of the frames complete so far
    const text = read(o.to, concat(pushed), o.passThrough).text;
    const want = [o.textOf(lo), o.textOf(hi)];
    if (!want.includes(text)) expect(text, `${why}: text written after push ${k} (${bytes} bytes in)`).toBe(want[0]);
  }
  return { r, pushed, flushed: r.flush().slice() };
}

export function settle(o: Oracle, chunks: Uint8Array[], why: string): void {
  const { r, pushed, flushed } = relay(o, chunks, why);
  const e = o.f.expected;
  const all = concat([...pushed, flushed]);
  const m = read(o.to, all, o.passThrough);
  const want = o.expected();
  for (const k of Object.keys(want) as (keyof ClientMessage)[]) {
    if (k === 'calls') {
      // to Anthropic a call with no fragments has its start's input, `{}`
      const args = (calls: { arguments: string }[]) => (o.to === 'anthropic' ? calls.map((c) => ({ ...c, arguments: c.arguments === '' ? '{}' : c.arguments })) : calls);
      expect(args(m.calls), `${why}: client's calls`).toEqual(args(matching(want.calls!)));
    }
    else expect(m[k], `${why}: client's ${k}`).toEqual(want[k]);
  }
  if (o.to === 'anthropic') expect(m.signatures, `${why}: the client's signatures`).toEqual(o.signatures());
  else expect(m.callSignatures, `${why}: the calls' signatures`).toEqual(o.callSignatures());
  if (o.done) {
    expect(m.error, `${why}: no error`).toBeNull();
  } else {
    expect(m.error, `${why}: the error event`).not.toBeNull();
    const err = m.error!;
    if (o.to === 'openai') {
      expect(err.code, why).toBe(e.error!.code);
      expect(typeof err.type === 'string' && err.type.length > 0, why).toBe(true);
    } else {
      expect(err.type, why).toMatch(/_error$/);
    }
    if (e.error!.message !== undefined) expect(err.message, why).toContain(e.error!.message);
    expect(sse(flushed).events.length, `${why}: flush writes the error event`).toBe(1);
  }
  if (o.passThrough && o.canonical) {
    // byte for byte: the relayed frames, then the completion (written at the upstream's, in the
    // push that brought it) or the error event (at the end)
    const end = o.to === 'openai' ? 'data: [DONE]\n\n' : '';
    const tail = new TextDecoder().decode(flushed);
    if (o.done && !o.frames[o.frames.length - 1].atFlush) {
      expect(new TextDecoder().decode(concat(pushed)), `${why}: pass-through`).toBe(o.wire(o.frames.length) + end);
      expect(tail, `${why}: flush after a completed upstream`).toBe('');
    } else {
      expect(new TextDecoder().decode(concat(pushed)), `${why}: pass-through`).toBe(o.wire(o.frames.length));
      if (o.done) expect(tail.endsWith(end), why).toBe(true);
    }
  }
  if (!o.passThrough) {
    // each text is the provider's JSON string literal, copied as it was
    const field = o.to === 'openai' ? 'content' : 'text';
    const literals = sse(all).events.flatMap((ev) => [...ev.data.matchAll(new RegExp(`"${field}"\\s*:\\s*("(?:[^"\\\\]|\\\\.)*")`, 'g'))].map((x) => x[1]));
    expect(literals.filter((l) => l !== '""'), `${why}: literals`).toEqual(o.relayed.flatMap((fr) => fr.literals).filter((l) => l !== '""'));
  }
  expect(r.textBytes, `${why}: textBytes`).toBe(utf8Length(o.relayed.map((fr) => fr.text).join('')));
  expect(r.status, `${why}: status`).toBe(e.status);
  expect(r.finishReason, `${why}: finishReason`).toBe(e.finishReason);
  expect(r.usage, `${why}: usage`).toEqual(e.usage);
}
