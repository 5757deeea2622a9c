// Layer 4: what a model stream says, as parts in the order its reads brought them: reasoning,
// committed text, a refusal, each client tool call as it begins, grows and ends, the sources
// cited, and at the end the report. An app's view of a stream (ModelPartStream), read from the
// stream's own state after each read: nothing is read twice, and no part is made that the stream
// did not already hold.
import type { Call, Citation, Media, Message, ToolCall } from './message.js';
import { call } from './reader.js';
import { type ModelReport, ModelStream } from './stream.js';

/** A piece of what a model stream says (see {@link ModelPartStream}). */
export type ModelPart =
  /** Reasoning text as sent (never part of the answer), and the reasoning block it belongs to (0, 1, …: see `ModelStream.reasoningBlocks`). */
  | { type: 'reasoning'; text: string; block: number }
  /** The answer's committed text, as `ModelStream.push` returns it. */
  | { type: 'text'; text: string }
  /** A piece of the model's refusal, as sent (see `ModelStream.refusal`). */
  | { type: 'refusal'; text: string }
  /**
   * A client tool call begun, grown or ended: `call` as it stands (its `done` and `valid` once it
   * ended), and `delta`, the arguments this read added to it; with `replaces`, `delta` is all its
   * arguments, which replace those said before (Anthropic's `input` of the start, `{}`, until a
   * fragment brings text).
   */
  | { type: 'tool-call'; call: ToolCall; delta: string; replaces?: true }
  /**
   * A call of the provider's own tool (see `ModelStream.serverToolCalls`: Anthropic's web search,
   * Responses' hosted tools, Gemini's code execution) begun, grown, ended, or given its `result`:
   * `call` as it stands, `delta` and `replaces` as a client call's.
   */
  | { type: 'server-tool-call'; call: ToolCall; delta: string; replaces?: true }
  /** A source the answer cites (see `ModelStream.citations`). */
  | { type: 'citation'; citation: Citation }
  /** Media the model returned, an image or audio (see `ModelStream.media`): whole, once. */
  | { type: 'media'; media: Media }
  /** The stream's end: its report (`ModelStream.finish`). */
  | { type: 'finish'; report: ModelReport };

/** What the parts said of a call so far. */
interface Said {
  args: string;
  done: boolean;
  id: string;
  name: string;
  /** Its result said (the provider's own calls; '' before it came). */
  result: string;
}

/**
 * What a {@link ModelStream} says, as parts, for a caller that has its reads in hand
 * (`ModelPartStream` is the same over a `TransformStream`). `push(chunk)` pushes the read into
 * the stream and gives what it said: the reasoning, the committed text, a piece of a refusal, each
 * client tool call begun, grown or ended, and each source cited, in the order its events said
 * them (a read that holds several events is read an event at a time: the core's reader stops
 * after each event that says something, and its parts are taken there, in the same push). `flush()` ends the stream
 * and gives the rest; `finish()` on the stream is then its report (the `finish` part of a
 * `ModelPartStream`). After a `push` or `flush` that threw, `take(error.text ?? '')` gives what
 * the read said before its error. A caller that pushes into the stream itself calls
 * `take(text)` after each push with the text it returned (a read's events then give each kind's
 * parts together: its reasoning, then its text). After the stream's `reset()`, the reader gives
 * the new stream's parts from its start. The parts are read from the stream's own state:
 * nothing is read twice, and no part is made that the stream does not hold.
 */
export class ModelPartReader {
  /** The reasoning given: up to `units` of block `block`. */
  private block = 0;
  private units = 0;
  private refusal = 0;
  private citations = 0;
  private media = 0;
  private readonly calls: Said[] = [];
  private readonly serverCalls: Said[] = [];
  private readonly model: ModelStream;
  /** The parts of a read before its error (or of the push under way): given by the next `take`. */
  private held: ModelPart[] = [];
  /** During a push: the units of its committed text already given as parts (after its error: not to be given again). */
  private given = 0;
  /** The stream's `turn` when this reader last looked: another is a new stream, read from its start. */
  private turn!: object;
  /** During a push: the parts of a core call were taken. */
  private took = false;
  /** What the stream calls back during a push, after each core call (bound once). */
  private readonly order: { taken(): void };

  /** `model`: the stream whose parts are taken (anything else is a `TypeError`). */
  constructor(model: ModelStream) {
    if (!(model instanceof ModelStream)) throw new TypeError('ModelPartReader: give it the ModelStream whose parts it takes: new ModelPartReader(stream)');
    this.model = model;
    this.order = { taken: () => this.taken() };
    this.restart();
  }

  /** Pushes a read into the stream: the parts it said, in its events' order. What the stream throws is thrown (then `take`). */
  push(chunk: Uint8Array): ModelPart[] {
    return this.read(chunk, false);
  }

  /**
   * Ends the stream: the parts of the text and calls it held, and of the events read at the end
   * (a last line; a whole answer, read as its stream's events, in their order). What the stream
   * throws is thrown (then `take`).
   */
  flush(): ModelPart[] {
    return this.read(null, true);
  }

  /** A push of `chunk` into the stream, or its flush (`end`), with its parts taken after each event. */
  private read(chunk: Uint8Array | null, end: boolean): ModelPart[] {
    const model = this.model;
    if (model.turn !== this.turn) this.restart();
    this.given = 0;
    this.took = false;
    call.order = this.order;
    try {
      if (end) model.flush();
      else model.push(chunk as Uint8Array); // (anything else: the stream's own TypeError)
    } finally {
      call.order = null;
    }
    const out = this.held;
    this.held = [];
    const rest = call.fresh;
    call.fresh = '';
    this.given = 0;
    // (the parts of the last core call were taken after it, unless text came after it)
    return this.took && rest === '' ? out : this.parts(rest, out);
  }

  /**
   * The parts since the last call, with `text` (what the read committed) in its place: reasoning,
   * text, refusal, calls, citations, media. `text` that is not a string is a `TypeError`. After a push
   * that threw, with the error's text: the parts its events said before the error, then the rest.
   */
  take(text = ''): ModelPart[] {
    if (typeof text !== 'string') throw new TypeError(`ModelPartReader.take(text): text is the string push() or flush() returned, not ${text === null ? 'null' : typeof text}`);
    if (this.model.turn !== this.turn) this.restart();
    const out = this.held;
    this.held = [];
    // (after a push that threw: the text its parts gave before the error is not given again)
    const given = this.given;
    this.given = 0;
    return this.parts(given === 0 ? text : text.slice(given), out);
  }

  /** During a push, after a core call: the parts of what it read, held for the push's result. */
  private taken(): void {
    const text = call.fresh;
    call.fresh = '';
    this.given += text.length;
    this.took = true;
    this.parts(text, this.held);
  }

  /** The parts since the last look, with `text` in its place, appended to `out`. */
  private parts(text: string, out: ModelPart[]): ModelPart[] {
    const model = this.model;
    model.takeParts();
    const m = model.message;
    if (m !== null) this.reasoning(m, out);
    if (text !== '') out.push({ type: 'text', text });
    if (m === null) return out;
    if (m.refusal.length > this.refusal) {
      out.push({ type: 'refusal', text: m.refusal.slice(this.refusal) });
      this.refusal = m.refusal.length;
    }
    said(m.calls, this.calls, 'tool-call', out);
    if (m.serverCalls.length !== 0) said(m.serverCalls, this.serverCalls, 'server-tool-call', out);
    const cited = m.citations;
    for (; this.citations < cited.length; this.citations++) out.push({ type: 'citation', citation: cited[this.citations] });
    const media = m.media;
    if (media !== null) for (; this.media < media.length; this.media++) out.push({ type: 'media', media: { ...media[this.media] } });
    return out;
  }

  /** A new stream (the first, or the stream was `reset()`): its parts are given from its start. */
  private restart(): void {
    this.turn = this.model.turn;
    this.block = this.units = this.refusal = this.citations = this.media = this.given = 0;
    this.calls.length = 0;
    this.serverCalls.length = 0;
    this.held = [];
  }

  /** The reasoning given since the last call, a part per block it lies in. */
  private reasoning(m: Message, out: ModelPart[]): void {
    const blocks = m.thinking;
    for (let b = this.block; b < blocks.length; b++) {
      const t = blocks[b].text;
      const from = b === this.block ? this.units : 0;
      if (t.length > from) out.push({ type: 'reasoning', text: t.slice(from), block: b });
      this.block = b;
      this.units = t.length;
    }
  }
}

/** A part for each call of `calls` that changed since `saids` (what the parts said of them), appended to `out`. */
function said(calls: readonly Call[], saids: Said[], type: 'tool-call' | 'server-tool-call', out: ModelPart[]): void {
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i];
    const args = c.args();
    const was = saids[i];
    if (was !== undefined && was.args === args && was.done === c.done && was.id === c.id && was.name === c.name && was.result === c.result) continue;
    const grows = was === undefined || args.startsWith(was.args);
    const part: Extract<ModelPart, { type: 'tool-call' | 'server-tool-call' }> = { type, call: c.snapshot(), delta: grows ? args.slice(was?.args.length ?? 0) : args };
    if (!grows) part.replaces = true;
    out.push(part);
    saids[i] = { args, done: c.done, id: c.id, name: c.name, result: c.result };
  }
}
