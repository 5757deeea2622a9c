// One event's JSON as a format's description reads it: the records the core wrote for the
// document (Doc), and what the description reports (Sink), written into the stream's `said`.
// A reader borrows the realm's one DocReader for each document it hands to its description.
import { JF_ASCII, JF_ESCAPED, JK_NUMBER, JK_STRING, JREC_WORDS, JR_END, JR_HEAD, JR_INDEX, JR_START } from '../core/generated/abi.js';
import { type Core } from '../core/wasm.js';
import type { Doc, Sink } from './formats/describe.js';

/** What a stream's events said: written by its format's description, read by the stream. */
export interface Said {
  finishReason: string | undefined;
  usage: Record<string, unknown> | undefined;
  reasoning: string;
  pings: number;
  done: boolean;
  /** The error a description reported while reading a document. */
  error: string | null;
  errorDetail: string | undefined;
}

/** What a stream that read nothing has said (shared, never written). */
export const NOTHING_SAID: Said = /* @__PURE__ */ Object.freeze({
  finishReason: undefined, usage: undefined, reasoning: '', pings: 0, done: false, error: null, errorDetail: undefined,
}) as Said;

/** The reader a document is read for: what it has said, the choice it follows, and its text spans. */
export interface DocOwner {
  said: Said;
  readonly choice: number;
  /** A string span of the answer's text (an escaped JSON string when JF_ESCAPED is in flags). */
  span(ptr: number, len: number, flags: number): void;
}

/** The JSON reader's error codes (JE_* of assembly/abi.ts, by number), for messages. */
export const JSON_ERRORS: readonly string[] = [
  '', 'the document ends too early', 'an unexpected byte', 'more after the value', 'a broken number',
  'a control character in a string', 'a bad escape', 'a broken literal', 'nested too deep', 'too many values',
];

let realm: { core: Core; reader: DocReader } | null = null;

/** The realm's DocReader, set to the document of `len` bytes at `ptr` whose `n` records start at record area index `rec`. */
export function borrowDoc(core: Core, owner: DocOwner, ptr: number, len: number, rec: number, n: number): DocReader {
  if (realm === null || realm.core !== core) realm = { core, reader: new DocReader(core) };
  const r = realm.reader;
  r.owner = owner;
  r.dPtr = ptr;
  r.dLen = len;
  r.dRec = rec;
  r.n = n;
  return r;
}

/**
 * The document being read, for a format's description (Doc), and what it reports, written into
 * its owner's `said` (Sink). One per realm: a document is read at a time, and the fields are set
 * for each.
 */
export class DocReader implements Doc, Sink {
  /** The document being read: its address, length, first record (as an i32 index) and records. */
  dPtr = 0;
  dLen = 0;
  dRec = 0;
  n = 0;
  owner: DocOwner | null = null;

  constructor(private readonly core: Core) {}

  get choice(): number {
    return this.owner!.choice;
  }

  /** The owner's record of what was said, made the first time something is. */
  private get said(): Said {
    const owner = this.owner!;
    let said = owner.said;
    if (said === NOTHING_SAID) {
      said = owner.said = { finishReason: undefined, usage: undefined, reasoning: '', pings: 0, done: false, error: null, errorDetail: undefined };
    }
    return said;
  }

  onText(_doc: Doc, j: number): void {
    const i32 = this.core.i32;
    const w = this.dRec + j * JREC_WORDS;
    const start = i32[w + JR_START];
    this.owner!.span(this.dPtr + start, i32[w + JR_END] - start, i32[w + JR_HEAD] >>> 24);
  }

  onReasoning(doc: Doc, j: number): void {
    this.said.reasoning += doc.string(j);
  }

  onFinishReason(reason: string): void {
    this.said.finishReason = reason;
  }

  onUsage(fields: Record<string, unknown>): void {
    const said = this.said;
    said.usage = said.usage === undefined ? fields : { ...said.usage, ...fields };
  }

  onDone(): void {
    this.said.done = true;
  }

  onPing(): void {
    this.said.pings++;
  }

  onError(message: string, detail?: string): void {
    const said = this.said;
    said.error = message;
    said.errorDetail = detail;
  }

  // ---- Doc: the records of the document being read --------------------------------------------

  path(j: number): number { return this.core.i32[this.dRec + j * JREC_WORDS + JR_HEAD] & 0xffff; }
  kind(j: number): number { return (this.core.i32[this.dRec + j * JREC_WORDS + JR_HEAD] >>> 16) & 0xff; }
  index(j: number): number { return this.core.i32[this.dRec + j * JREC_WORDS + JR_INDEX]; }

  string(j: number): string {
    const i32 = this.core.i32;
    const w = this.dRec + j * JREC_WORDS;
    const head = i32[w + JR_HEAD];
    const a = this.dPtr + i32[w + JR_START];
    const len = i32[w + JR_END] - i32[w + JR_START];
    const flags = head >>> 24;
    if (((head >>> 16) & 0xff) !== JK_STRING) return this.core.utf8(a, len);
    if (flags & JF_ESCAPED) return JSON.parse(`"${this.core.utf8(a, len)}"`) as string;
    return flags & JF_ASCII ? this.core.latin1(a, len) : this.core.utf8(a, len);
  }

  value(j: number): unknown {
    const i32 = this.core.i32;
    const w = this.dRec + j * JREC_WORDS;
    return JSON.parse(this.core.utf8(this.dPtr + i32[w + JR_START], i32[w + JR_END] - i32[w + JR_START]));
  }

  int(j: number): number {
    const i32 = this.core.i32;
    const w = this.dRec + j * JREC_WORDS;
    if (((i32[w + JR_HEAD] >>> 16) & 0xff) !== JK_NUMBER) return -1;
    const u8 = this.core.u8;
    let v = 0;
    for (let p = this.dPtr + i32[w + JR_START], end = this.dPtr + i32[w + JR_END]; p < end; p++) {
      const d = u8[p] - 48;
      if (d < 0 || d > 9 || v > 1e9) return -1;
      v = v * 10 + d;
    }
    return v;
  }

  is(j: number, ascii: Uint8Array): boolean {
    const i32 = this.core.i32;
    const w = this.dRec + j * JREC_WORDS;
    const head = i32[w + JR_HEAD];
    if (((head >>> 16) & 0xff) !== JK_STRING) return false;
    const start = i32[w + JR_START];
    const len = i32[w + JR_END] - start;
    if ((head >>> 24) & JF_ESCAPED) return this.string(j) === String.fromCharCode(...ascii);
    if (len !== ascii.length) return false;
    const u8 = this.core.u8;
    const p = this.dPtr + start;
    for (let k = len - 1; k >= 0; k--) if (u8[p + k] !== ascii[k]) return false;
    return true;
  }

  whole(): unknown {
    return JSON.parse(this.core.utf8(this.dPtr, this.dLen));
  }
}
