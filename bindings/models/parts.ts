// Layer 4: what a model stream says, as parts in the order its reads brought them: reasoning,
// committed text, a refusal, each client tool call as it begins, grows and ends, the sources
// cited, and at the end the report. An app's view of a stream (ModelPartStream), read from the
// stream's own state after each read: nothing is read twice, and no part is made that the stream
// did not already hold.
import type { Citation, Message, ToolCall } from './message.js';
import { describeFormat } from './formats/index.js';
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

/**
 * What a {@link ModelStream} says, as parts, for a caller that has its reads in hand
 * (`ModelPartStream` is the same over a `TransformStream`). `push(chunk)` pushes the read into
 * the stream and gives what it said: the reasoning, the committed text, a piece of a refusal, each
 * client tool call begun, grown or ended, and each source cited, in the order its events said
 * them (a read that holds several events is pushed an event at a time). `flush()` ends the stream
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
  private readonly calls: Said[] = [];
  private readonly model: ModelStream;
  private ends!: EventEnds;
  /** The parts of a read's events before the one whose push threw: given by the next `take`. */
  private held: ModelPart[] = [];
  /** The stream's `turn` when this reader last looked: another is a new stream, read from its start. */
  private turn!: object;

  /** `model`: the stream whose parts are taken (anything else is a `TypeError`). */
  constructor(model: ModelStream) {
    if (!(model instanceof ModelStream)) throw new TypeError('ModelPartReader: give it the ModelStream whose parts it takes: new ModelPartReader(stream)');
    this.model = model;
    this.restart();
  }

  /** Pushes a read into the stream: the parts it said, in its events' order. What the stream throws is thrown (then `take`). */
  push(chunk: Uint8Array): ModelPart[] {
    const model = this.model;
    // (anything but bytes: the stream's own TypeError, and where the events end is left as it was)
    if (!(chunk instanceof Uint8Array)) return this.take(model.push(chunk));
    if (model.turn !== this.turn) this.restart();
    const ends = this.ends;
    if (!ends.cut(chunk)) return this.take(model.push(chunk)); // (one event at most: the usual read)
    const out = this.held;
    this.held = [];
    const at = ends.at;
    let from = 0;
    for (let k = 0; k <= at.length; k++) {
      const to = k < at.length ? at[k] : chunk.length;
      let text: string;
      try {
        text = model.push(chunk.subarray(from, to));
      } catch (e) {
        this.held = out;
        throw e;
      }
      this.take(text, out);
      from = to;
    }
    return out;
  }

  /** Ends the stream: the parts of the text and calls it held. What the stream throws is thrown (then `take`). */
  flush(): ModelPart[] {
    const text = this.model.flush();
    return this.take(text);
  }

  /**
   * The parts since the last call, with `text` (what the read committed) in its place: reasoning,
   * text, refusal, calls, citations. `text` that is not a string is a `TypeError`.
   */
  take(text = '', out?: ModelPart[]): ModelPart[] {
    if (typeof text !== 'string') throw new TypeError(`ModelPartReader.take(text): text is the string push() or flush() returned, not ${text === null ? 'null' : typeof text}`);
    const model = this.model;
    if (model.turn !== this.turn) this.restart();
    if (out === undefined) {
      out = this.held.length === 0 ? [] : this.held;
      if (out === this.held) this.held = [];
    }
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

  /**
   * A new stream (the first, or the stream was `reset()`): its parts are given from its start, and
   * its events found from its first byte (what was held of the last one, never taken, is dropped).
   */
  private restart(): void {
    this.turn = this.model.turn;
    this.block = this.units = this.refusal = this.citations = 0;
    this.calls.length = 0;
    this.held = [];
    this.ends = new EventEnds(describeFormat(this.model.format).framing);
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

/**
 * Where a read's events end, so that each piece completes one event at most: in SSE after each
 * blank line (its line end following another: LF, CR or CR LF), in lines and NDJSON after each LF,
 * in AWS's event stream at each message's end (the total length its prelude begins with). A read
 * that completes one event at most is one piece, itself. Cutting finer than the events costs only
 * pushes: the stream reads any cutting the same. A message length that cannot be one (under a
 * prelude and its CRC) leaves the rest of the stream uncut, for the stream to refuse.
 */
class EventEnds {
  /** The ends found inside the last read given to `cut` (not at its end), in order. */
  readonly at: number[] = [];
  /** SSE: the last byte ended a line (or none came yet), and whether it was a CR (whose LF is part of its line end). */
  private lineStart = true;
  private cr = false;
  /** Event stream: bytes of the message being read still to come, 0 while its total length is read. */
  private left = 0;
  private length = 0;
  private lengthBytes = 0;
  private uncut = false;

  constructor(private readonly framing: 'sse' | 'lines' | 'ndjson' | 'eventstream') {}

  /** Finds where events end inside `chunk` (in `at`): whether any does (else it is one piece). */
  cut(chunk: Uint8Array): boolean {
    const at = this.at;
    at.length = 0;
    const n = chunk.length;
    if (this.framing === 'eventstream') {
      let i = 0;
      while (i < n && !this.uncut) {
        if (this.left === 0) {
          for (; this.lengthBytes < 4 && i < n; i++, this.lengthBytes++) this.length = this.length * 256 + chunk[i];
          if (this.lengthBytes < 4) break;
          if (this.length < 16) {
            this.uncut = true;
            break;
          }
          this.left = this.length - 4;
          this.length = this.lengthBytes = 0;
        }
        const take = Math.min(this.left, n - i);
        i += take;
        if ((this.left -= take) === 0 && i < n) at.push(i);
      }
    } else if (this.framing !== 'sse') {
      for (let i = chunk.indexOf(10); i >= 0 && i + 1 < n; i = chunk.indexOf(10, i + 1)) at.push(i + 1);
    } else {
      // (one pass over the bytes: faster than indexOf for the LFs of a read of one event, whose
      // calls cost more than the bytes between them)
      let lineStart = this.lineStart;
      let cr = this.cr;
      for (let i = 0; i < n; i++) {
        const b = chunk[i];
        if (b > 13) {
          lineStart = cr = false;
        } else if (b === 10) {
          if (cr) {
            cr = false; // (the LF of a CR LF whose CR ended the last read)
            continue;
          }
          if (lineStart && i + 1 < n) at.push(i + 1);
          lineStart = true;
        } else if (b === 13) {
          const blank = lineStart;
          lineStart = true;
          cr = i + 1 === n; // (its LF may begin the next read)
          if (!cr && chunk[i + 1] === 10) i++; // (CR LF: one line end, cut after both)
          if (blank && i + 1 < n) at.push(i + 1);
        } else {
          lineStart = cr = false;
        }
      }
      this.lineStart = lineStart;
      this.cr = cr;
    }
    return at.length !== 0;
  }
}

