// Layer 4: what a model stream says, as parts in the order its reads brought them: reasoning,
// committed text, a refusal, each client tool call as it begins, grows and ends, the sources
// cited, and at the end the report. An app's view of a stream (ModelPartStream), read from the
// stream's own state after each read: nothing is read twice, and no part is made that the stream
// did not already hold.
import type { Citation, Message, ToolCall } from './message.js';
import type { ModelReport, ModelStream } from './stream.js';

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
  /** A source the answer cites (see `ModelStream.citations`). */
  | { type: 'citation'; citation: Citation }
  /** The stream's end: its report (`ModelStream.finish`). */
  | { type: 'finish'; report: ModelReport };

/** What the parts said of a call so far. */
interface Said {
  args: string;
  done: boolean;
  id: string;
  name: string;
}

/** Where the parts of a stream stand: what of its reasoning, refusal, calls and citations was given. */
export class PartCursor {
  /** The reasoning given: up to `units` of block `block`. */
  private block = 0;
  private units = 0;
  private refusal = 0;
  private citations = 0;
  private readonly calls: Said[] = [];

  constructor(private readonly model: ModelStream) {}

  /** The parts since the last call, with `text` (what the read committed) in its place: reasoning, text, refusal, calls, citations. */
  take(text: string, out: ModelPart[]): ModelPart[] {
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
    const calls = m.calls;
    for (let i = 0; i < calls.length; i++) {
      const c = calls[i];
      const args = c.args();
      const was = this.calls[i];
      if (was !== undefined && was.args === args && was.done === c.done && was.id === c.id && was.name === c.name) continue;
      const grows = was === undefined || args.startsWith(was.args);
      const part: ModelPart = { type: 'tool-call', call: c.snapshot(), delta: grows ? args.slice(was?.args.length ?? 0) : args };
      if (!grows) part.replaces = true;
      out.push(part);
      this.calls[i] = { args, done: c.done, id: c.id, name: c.name };
    }
    const cited = m.citations;
    for (; this.citations < cited.length; this.citations++) out.push({ type: 'citation', citation: cited[this.citations] });
    return out;
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
