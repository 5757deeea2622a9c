// One event's JSON as a format's description reads it: the records the core wrote for the
// document (Doc), and what the description reports (Sink), kept in the reader's Message and
// passed to its output.
// A reader borrows the realm's one DocReader for each document it hands to its description.
import {
  JF_ASCII, JF_ESCAPED, JK_ARRAY, JK_NUMBER, JK_OBJECT, JK_STRING, JREC_WORDS, JSON_MAX_DEPTH, JR_END, JR_HEAD, JR_INDEX, JR_START, MDR_SCRATCH, MGR_PTR,
} from '../core/generated/abi.js';
import { type Core } from '../core/wasm.js';
import { utf8Length } from '../text/counts.js';
import { type Doc, type FinishWords, type Sink, finishWords } from './formats/describe.js';
import { type BuiltinCallType, type ByteSpan, type Call, type Citation, type Grounding, type Media, Message } from './message.js';

/**
 * Set by each callback through which the event being read says a part of the answer (text or
 * reasoning of some bytes, a call or its arguments, a refusal, a source not said before, media, a new finish reason
 * or usage, the completion, an error); the reader clears it before each event it reads in
 * JavaScript, and counts an event that left it clear as empty (`ModelReader.emptyEvents`). A
 * part's end alone, a ping and an envelope say nothing.
 */
export const eventSaid = { any: false };

/**
 * What the owner of a document does with the parts of the message as they come, besides keeping
 * them in its Message: a relay writes them for its client. A ModelStream keeps them only.
 */
export interface MessageOut {
  /** A reasoning fragment: record bytes (a JSON string's body, escaped when JF_ESCAPED is in flags). */
  reasoning(ptr: number, len: number, flags: number): void;
  /** A reasoning block's signature (Anthropic's signature_delta), or a redacted block's data (`redacted`). */
  signature(ptr: number, len: number, flags: number, redacted: boolean): void;
  /** The reasoning block ended. */
  reasoningEnded(): void;
  /**
   * A fragment of the model's refusal (a string's body, escaped when JF_ESCAPED is in flags);
   * `details`: it is the provider's explanation, in this JSON object (Anthropic's `stop_details`).
   */
  refusal(ptr: number, len: number, flags: number, details?: string): void;
  /** A tool call began (its id and name as far as they came). */
  callBegan(call: Call): void;
  /** A call begun without a name (a fragment came before its start) got its name, and its id if it came, from its start. */
  callNamed(call: Call): void;
  /** A fragment of a call's arguments (a string's body), or its whole arguments (`whole`: a JSON value's text). */
  callArgs(call: Call, ptr: number, len: number, flags: number, whole: boolean): void;
  /** Arguments a format's description made as JSON text (Vertex's streamed arguments), appended to a call's. */
  callText(call: Call, text: string): void;
  /** The call ended. */
  callEnded(call: Call): void;
  /**
   * The writer writes the sources cited anew (to OpenAI's clients from another format): each at an
   * address goes to `citation`, once, counted toward maxReasoningBytes. Absent or false where the
   * client's format has no field for them, or the upstream's own events carry them (a pass-through).
   */
  readonly cites?: boolean;
  /** A source the answer cites at an address, once per address (when `cites`). */
  citation?(citation: Citation & { url: string }): void;
}

/** The reader a document is read for: what it has said, the choice it follows, and where its parts go. */
export interface DocOwner {
  /** What it said so far (null before anything). */
  message: Message | null;
  readonly choice: number;
  /** A string span of the answer's text (an escaped JSON string when JF_ESCAPED is in flags). */
  span(ptr: number, len: number, flags: number): void;
  /** Keep reasoning and arguments in the Message (a stream), or only pass them to `out` (a relay). */
  readonly keeps: boolean;
  /** Where the parts go as they come (a relay), or null. */
  readonly out: MessageOut | null;
  /** The most bytes of tool-call arguments the stream keeps in all (the provider's calls' too, with their results). */
  readonly maxArgumentBytes: number;
  /** The most bytes of reasoning (and a refusal) the stream keeps in all, as sent. */
  readonly maxReasoningBytes: number;
  /** The most bytes of media data (base64, as sent) the stream keeps in all. */
  readonly maxMediaBytes: number;
  /** Its format's finish reasons (those that say the turn failed are the provider's errors). */
  readonly finishReasons: Readonly<Record<string, FinishWords>>;
  /** An event its format's clients cannot read as it is (a relay to the same format writes it anew). */
  nonCanonical?(doc: DocReader, finish: number, usage: number, annotations: number, role: number, others: boolean): void;
}

/** The JSON reader's error codes (JE_* of assembly/abi.ts, by number), for messages. */
export const JSON_ERRORS: readonly string[] = [
  '', 'the document ends too early', 'an unexpected byte', 'more after the value', 'a broken number',
  'a control character in a string', 'a bad escape', 'a broken literal', 'nested too deep', 'too many values',
];

/** The arguments of a call that has none. */
const NO_ARGS = '{}';

let realm: { core: Core; reader: DocReader } | null = null;
const enc = /* @__PURE__ */ new TextEncoder();

/**
 * Where the JSON text `b` opens an array or object deeper than seam's JSON reader reads any event
 * (JSON_MAX_DEPTH levels, the outermost value at 1): that bracket's byte offset, or −1. One pass
 * over its structure, each string stepped over with indexOf; text that is not JSON may be read
 * wrong (JSON.parse is what says it is not). A whole answer past it is refused before it is parsed
 * (writing its events would overflow JavaScript's stack), by a model stream and by the command's
 * check; the gateway refuses a request past it.
 */
export function jsonTooDeep(b: Uint8Array): number {
  let depth = 0;
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    if (c === 0x22) {
      // (to the closing quote: one not escaped, after an even run of backslashes)
      for (;;) {
        const j = b.indexOf(0x22, i + 1);
        if (j === -1) return -1;
        let k = j - 1;
        while (b[k] === 0x5c) k--;
        i = j;
        if (((j - 1 - k) & 1) === 0) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > JSON_MAX_DEPTH) return i;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return -1;
}

/** The text of the escaped JSON string body at [ptr, ptr + len), unescaped in the core (no JSON.parse). */
export function unescaped(core: Core, ptr: number, len: number): string {
  const units = core.x.modelUnescape(ptr, len);
  core.sync();
  const s = core.utf16(core.word(MGR_PTR), units);
  if (core.word(MDR_SCRATCH) !== 0) core.x.modelScratchFree();
  return s;
}

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
 * The document being read, for a format's description (Doc), and what it reports, kept in its
 * owner's Message and passed to its `out` (Sink). One per realm: a document is read at a time, and the fields are set
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

  /** The owner's Message, made the first time something is said. */
  private get said(): Message {
    const owner = this.owner!;
    return (owner.message ??= new Message());
  }

  onText(_doc: Doc, j: number): void {
    if (this.len(j) !== 0) eventSaid.any = true;
    this.owner!.span(this.ptr(j), this.len(j), this.flags(j));
  }

  onReasoning(_doc: Doc, j: number): void {
    if (this.len(j) !== 0) eventSaid.any = true;
    const owner = this.owner!;
    if (owner.keeps) {
      if (!this.reasoningRoom(this.len(j))) return;
      this.said.block().text += this.string(j);
    }
    owner.out?.reasoning(this.ptr(j), this.len(j), this.flags(j));
  }

  onReasoningSignature(_doc: Doc, j: number, redacted = false): void {
    eventSaid.any = true;
    const owner = this.owner!;
    if (owner.keeps) {
      if (!this.reasoningRoom(this.len(j))) return;
      const m = this.said;
      if (redacted) {
        m.thinking.push({ text: '', redacted: this.string(j) });
        m.thinkingOpen = false;
      } else {
        const b = m.block();
        b.signature = (b.signature ?? '') + this.string(j);
      }
    }
    owner.out?.signature(this.ptr(j), this.len(j), this.flags(j), redacted);
  }

  onReasoningEncrypted(_doc: Doc, j: number): void {
    eventSaid.any = true;
    // (a relay's clients, OpenAI Chat's and Anthropic's, have no field for it: it is not written as
    // another provider's signature, which the client would send back to that provider)
    if (!this.owner!.keeps || !this.reasoningRoom(this.len(j))) return;
    this.said.block().encrypted = this.string(j);
  }

  onReasoningItem(doc: Doc, j: number, done: boolean): void {
    eventSaid.any = true;
    const owner = this.owner!;
    if (!owner.keeps) return;
    const m = this.said;
    const id = j >= 0 && doc.kind(j) === JK_STRING ? this.string(j) : null;
    if (!done) {
      // (its blocks are its own: the last item's block ends)
      m.thinkingOpen = false;
      m.reasoningItem = id !== null && this.reasoningRoom(this.len(j)) ? id : null;
      return;
    }
    // (an item whose beginning was not read is named at its end)
    if (m.reasoningItem === null && id !== null && this.reasoningRoom(this.len(j))) m.reasoningItem = id;
    const t = m.thinking;
    if (m.reasoningItem !== null && (t.length === 0 || t[t.length - 1].id !== m.reasoningItem)) {
      t.push({ text: '', id: m.reasoningItem });
      m.thinkingOpen = false;
    }
    m.reasoningItem = null;
  }

  onReasoningEnd(): void {
    const owner = this.owner!;
    if (owner.message !== null) owner.message.thinkingOpen = false;
    owner.out?.reasoningEnded();
  }

  onRefusal(_doc: Doc, j: number, details = -1): void {
    const owner = this.owner!;
    const len = j >= 0 ? this.len(j) : 0;
    if (len === 0 && details < 0) return;
    eventSaid.any = true;
    const m = this.said;
    m.refusing = true;
    if (owner.keeps && len !== 0) {
      if (!this.reasoningRoom(len)) return;
      m.refusal += this.string(j);
    }
    // (the details as one line of JSON: they go into a `data:` line as they are, and a stream keeps
    // them, within maxReasoningBytes, for the whole answer that writes them as a relay does)
    const said = details >= 0 ? JSON.stringify(this.value(details)) : undefined;
    if (owner.keeps && said !== undefined) {
      if (!this.reasoningRoom(this.len(details))) return;
      m.refusalDetails = said;
    }
    owner.out?.refusal(j >= 0 ? this.ptr(j) : 0, len, j >= 0 ? this.flags(j) : 0, said);
  }

  onToolCall(doc: Doc, key: number, id: number, name: number, server = false, input = -1, noArgs = '', custom = false, signature = -1): void {
    const owner = this.owner!;
    // (the arguments it has when no fragment brings any, its start's input or its item's members,
    // kept as its fragments are: within maxArgumentBytes, past which the call neither begins nor
    // changes, and the stream fails at this event)
    const hasInput = input >= 0 && doc.kind(input) === JK_OBJECT;
    if (owner.keeps && (hasInput || noArgs !== '') && !this.argumentRoom(hasInput ? this.len(input) : utf8Length(noArgs))) return;
    const idText = id >= 0 && doc.kind(id) === JK_STRING ? this.string(id) : '';
    const { call, began } = this.said.call(key, idText, server);
    // (a call's start said again, its id and name as they were, as some servers send them with
    // every fragment, is no news without a fragment of its arguments)
    let news = began;
    if (custom) call.custom = true;
    if (call.signature === '' && signature >= 0 && doc.kind(signature) === JK_STRING) {
      call.signature = this.string(signature);
      news = true;
    }
    if (call.id === '' && idText !== '') {
      call.id = idText;
      news = true;
    }
    const named = call.name === '' && name >= 0 && doc.kind(name) === JK_STRING;
    if (named) call.name = this.string(name);
    // (a relay writes no call of the provider's own: it keeps no arguments of one)
    if (owner.keeps || !server) {
      const was = call.fallback;
      if (hasInput) call.fallback = this.string(input);
      else if (noArgs !== '') call.fallback = noArgs;
      if (call.fallback !== was) news = true;
    }
    if (news || (named && call.name !== '')) eventSaid.any = true;
    if (began) owner.out?.callBegan(call);
    else if (named && call.name !== '') owner.out?.callNamed(call);
  }

  onToolArguments(doc: Doc, key: number, j: number, ifNone = false, custom = false): void {
    // (an object: the whole arguments, its JSON text as sent, in place of what came before)
    const whole = doc.kind(j) === JK_OBJECT && !custom;
    if (doc.kind(j) !== JK_STRING && !whole) return;
    if (whole || this.len(j) !== 0) eventSaid.any = true;
    const { call, began } = this.said.call(key, '', false);
    if (custom) call.custom = true;
    if (began) this.owner!.out?.callBegan(call);
    if (ifNone && (call.bytes !== 0 || this.len(j) === 0)) return;
    this.fragment(call, j, whole);
  }

  onWholeToolCall(doc: Doc, id: number, name: number, args: number, noArgs = '', signature = -1): void {
    eventSaid.any = true;
    const owner = this.owner!;
    // (the arguments of a call that has none, Gemini's `{}`, kept as sent ones are: within maxArgumentBytes)
    if (args < 0 && owner.keeps && noArgs !== '' && !this.argumentRoom(utf8Length(noArgs))) return;
    const call = this.said.whole();
    this.named(doc, call, id, name, signature);
    if (args < 0) call.fallback = noArgs;
    owner.out?.callBegan(call);
    if (args >= 0) this.fragment(call, args, doc.kind(args) !== JK_STRING);
    this.ended(call);
  }

  /** A new call's id, name and signature (string records; −1: none). */
  private named(doc: Doc, call: Call, id: number, name: number, signature: number): void {
    if (id >= 0 && doc.kind(id) === JK_STRING) call.id = this.string(id);
    if (name >= 0 && doc.kind(name) === JK_STRING) call.name = this.string(name);
    if (signature >= 0 && doc.kind(signature) === JK_STRING) call.signature = this.string(signature);
  }

  onServerCall(doc: Doc, id: number, name: string, args: number, signature = -1): void {
    eventSaid.any = true;
    const owner = this.owner!;
    const call = this.said.serverWhole();
    this.named(doc, call, id, -1, signature);
    call.name = name;
    owner.out?.callBegan(call);
    this.fragment(call, args, true);
    this.ended(call);
  }

  onServerResult(doc: Doc, id: number, result: number, name: string): void {
    eventSaid.any = true;
    const owner = this.owner!;
    if (!owner.keeps) return;
    const m = this.said;
    const idText = id >= 0 && doc.kind(id) === JK_STRING ? this.string(id) : '';
    // (by its id; without one the first whole call still waiting for its result: each result
    // follows its code)
    let call: Call | undefined;
    for (const c of m.serverCalls) {
      if (idText !== '' ? c.id === idText : c.key === -1 && c.result === '') {
        call = c;
        break;
      }
    }
    // (counted with the arguments, the `{}` of a call made to hold it too: what a stream keeps of its calls)
    if (!this.argumentRoom(this.len(result) + (call === undefined ? NO_ARGS.length : 0))) return;
    if (call === undefined) {
      // (a result whose call never came: a call of no arguments that holds it)
      call = m.serverWhole();
      call.id = idText;
      call.name = name;
      call.fallback = NO_ARGS;
      this.ended(call);
    }
    call.result = this.string(result);
  }

  onPartCall(doc: Doc, id: number, name: number, signature: number, state: object): void {
    eventSaid.any = true;
    const m = this.said;
    if (m.partCall !== null) this.onPartCallEnd();
    const call = m.whole();
    this.named(doc, call, id, name, signature);
    m.partCall = { call, state };
    this.owner!.out?.callBegan(call);
  }

  partCall(): object | null {
    return this.owner!.message?.partCall?.state ?? null;
  }

  onBuiltinCall(doc: Doc, key: number, id: number, name: string, type: BuiltinCallType, args: string): void {
    eventSaid.any = true;
    const owner = this.owner!;
    const len = utf8Length(args);
    // (past maxArgumentBytes the call does not begin: the stream fails at this event, with the calls as they stood before it)
    if (owner.keeps && !this.argumentRoom(len)) return;
    const idText = id >= 0 && doc.kind(id) === JK_STRING ? this.string(id) : '';
    const { call, began } = this.said.call(key, idText, false);
    call.builtin = type;
    if (call.id === '') call.id = idText;
    const named = call.name === '' && name !== '';
    if (named) call.name = name;
    if (began) owner.out?.callBegan(call);
    else if (named) owner.out?.callNamed(call);
    if (owner.keeps) call.text += args;
    call.bytes += len;
    owner.out?.callText(call, args);
    if (!call.done) this.ended(call);
  }

  onCitation(citation: Citation, once = false, counted = false): Citation | null {
    const owner = this.owner!;
    if (!owner.keeps) {
      // (a relay: a source at an address goes to a writer that writes them, once per address, and
      // what the writer keeps of it until the completion counts toward maxReasoningBytes)
      const url = citation.url;
      const out = owner.out;
      // (a source said once in the stream's terms, Gemini's metadata that each chunk may say again,
      // is news only where the relay knows it is new: at an address its writer writes)
      if (url === undefined || out === null || out.cites !== true) {
        if (!once) eventSaid.any = true;
        return null;
      }
      const seen = (this.said.cited ??= new Map());
      if (seen.has(url)) return null;
      eventSaid.any = true;
      if (!this.reasoningRoom(utf8Length(url) + utf8Length(citation.title ?? ''))) return null;
      seen.set(url, null);
      out.citation!({ ...citation, url });
      return null;
    }
    const m = this.said;
    const json = JSON.stringify(citation.source);
    if (once) {
      const seen = (m.cited ??= new Map());
      const key = citation.url ?? json;
      // (said again: no news; the one kept is the source's, found by its key, not by a walk of
      // the citations: metadata of many sources said again would walk them all for each)
      const kept = seen.get(key);
      if (kept !== undefined) return kept;
      seen.set(key, null);
    }
    eventSaid.any = true;
    // (counted with the reasoning: what a stream keeps beside its answer and calls)
    if (!counted && !this.reasoningRoom(utf8Length(json))) return null;
    m.citations.push(citation);
    if (once) m.cited!.set(citation.url ?? json, citation);
    return citation;
  }

  onMetadata(_doc: Doc, j: number): boolean {
    if (!this.owner!.keeps) return true;
    const lists = (this.said.citedLists ??= new Map());
    const text = this.string(j);
    // (said again as it was, as Gemini may in every chunk: no news)
    if (lists.get(this.path(j)) === text) return false;
    eventSaid.any = true;
    if (!this.reasoningRoom(this.len(j))) return false;
    lists.set(this.path(j), text);
    return true;
  }

  onCitedSpans(spans: ByteSpan[]): void {
    if (!this.owner!.keeps) return;
    this.said.byteSpans = spans.length === 0 ? null : spans;
  }

  onGrounding(grounding: Partial<Grounding>): void {
    if (!this.owner!.keeps) return; // (no client's format of a relay has a place for it)
    const m = this.said;
    const g = (m.grounding ??= { queries: [] });
    if (grounding.queries !== undefined) g.queries = grounding.queries;
    if ('searchSuggestions' in grounding) {
      if (grounding.searchSuggestions === undefined) delete g.searchSuggestions;
      else g.searchSuggestions = grounding.searchSuggestions;
    }
    if (grounding.urls !== undefined) g.urls = grounding.urls;
  }

  onMediaId(_doc: Doc, j: number): void {
    // (the same id again, as OpenAI says its audio's in its last chunk too, is no news: a relay
    // keeps it as well, to know)
    const id = this.string(j);
    if (id === this.said.mediaId) return;
    eventSaid.any = true;
    this.said.mediaId = id;
  }

  onMedia(doc: Doc, mimeType: number | string, data: number, thought: boolean, signature: number, as?: 'url' | 'uri', expires = -1): void {
    // (media of no data, an audio chunk's empty `data`, says nothing)
    if (as !== undefined || signature >= 0 || (data >= 0 && (doc.kind(data) !== JK_STRING || this.len(data) !== 0))) eventSaid.any = true;
    // (a relay's clients have no place for media in an answer: OpenAI Chat's chunks and Anthropic's content blocks have none)
    const owner = this.owner!;
    if (!owner.keeps) return;
    let len = data >= 0 && doc.kind(data) === JK_STRING ? this.len(data) : 0;
    let type = typeof mimeType === 'string' ? mimeType : mimeType >= 0 && doc.kind(mimeType) === JK_STRING ? this.string(mimeType) : '';
    let base64: string | null = null;
    let uri: string | null = null;
    if (as !== undefined) {
      // an address (an event's, within maxEventBytes), or a `data:` URL: its type from its head, its data after the comma
      const url = len !== 0 ? this.string(data) : '';
      if (url === '') return;
      if (as === 'url' && url.startsWith('data:')) {
        const comma = url.indexOf(',');
        const head = url.slice(0, comma);
        if (!head.endsWith(';base64')) return;
        type = head.slice(5, -7);
        base64 = url.slice(comma + 1);
        len = base64.length;
      } else {
        uri = url;
        len = utf8Length(url);
      }
    }
    const m = this.said;
    const list = (m.media ??= []);
    const media: Media = { mimeType: type, data: '', bytes: len };
    if (m.mediaBytes + len > owner.maxMediaBytes) {
      media.omitted = true;
    } else if (len !== 0) {
      if (uri !== null) media.uri = uri;
      else media.data = base64 ?? this.string(data);
      m.mediaBytes += len;
    }
    if (thought) media.thought = true;
    if (signature >= 0 && doc.kind(signature) === JK_STRING) media.signature = this.string(signature);
    if (m.mediaId !== null) media.id = m.mediaId;
    if (expires >= 0 && doc.kind(expires) === JK_NUMBER) media.expiresAt = doc.value(expires) as number;
    list.push(media);
  }

  onCitationList(_doc: Doc, j: number, read: (list: readonly unknown[]) => Citation[]): void {
    if (this.kind(j) !== JK_ARRAY) return;
    const lists = (this.said.citedLists ??= new Map());
    const text = this.string(j);
    // (said again as it was, as in every event of a stream: read once, and no news)
    if (lists.get(this.path(j)) === text) return;
    eventSaid.any = true;
    if (!this.owner!.keeps) {
      // (a relay reads no list: it keeps the last of each, an event's bytes at the most, to know the next is the same)
      lists.set(this.path(j), text);
      return;
    }
    // (a new list counts toward the limit as it was sent, its sources then kept without counting
    // them again: a stream's n bytes count for at most n, whatever its sources become)
    if (!this.reasoningRoom(this.len(j))) return;
    lists.set(this.path(j), text);
    for (const c of read(JSON.parse(text) as unknown[])) this.onCitation(c, true, true);
  }

  onPartArguments(text: string): void {
    const owner = this.owner!;
    const p = owner.message?.partCall;
    if (p === undefined || p === null || text === '' || owner.message!.error !== null) return;
    eventSaid.any = true;
    const call = p.call;
    const len = utf8Length(text);
    if (owner.keeps) {
      if (!this.argumentRoom(len)) return;
      call.text += text;
    }
    call.bytes += len;
    owner.out?.callText(call, text);
  }

  onPartCallEnd(): void {
    const m = this.owner!.message;
    const p = m?.partCall;
    if (m === null || m === undefined || p === null || p === undefined) return;
    m.partCall = null;
    if (!p.call.done) this.ended(p.call);
  }

  onBadEvent(why: string): void {
    eventSaid.any = true;
    this.said.bad ??= why;
  }

  onToolCallEnd(_doc: Doc, key: number): void {
    const m = this.owner!.message;
    if (m === null) return;
    for (const list of [m.calls, m.serverCalls]) {
      for (const c of list) if (c.key === key && !c.done) this.ended(c);
    }
  }

  keyTaken(key: number, id: string): boolean {
    const m = this.owner!.message;
    if (m === null || id === '') return false;
    for (const list of [m.calls, m.serverCalls]) {
      for (let i = list.length - 1; i >= 0; i--) {
        const c = list[i];
        if (c.key === key && !c.done) return c.id !== '' && c.id !== id;
      }
    }
    return false;
  }

  hasCall(key: number): boolean {
    const m = this.owner!.message;
    return m !== null && (m.calls.some((c) => c.key === key && !c.done) || m.serverCalls.some((c) => c.key === key && !c.done));
  }

  onToolCallsEnd(): void {
    const m = this.owner!.message;
    if (m === null) return;
    m.partCall = null;
    for (const c of m.calls) if (!c.done) this.ended(c);
    for (const c of m.serverCalls) if (!c.done) this.ended(c);
  }

  /** Whether `len` more bytes of kept reasoning (or refusal, or citations) fit maxReasoningBytes (then counted); past it the stream is marked too long. */
  private reasoningRoom(len: number): boolean {
    const m = this.said;
    if (m.reasoningTooLong || m.reasoningBytes + len > this.owner!.maxReasoningBytes) {
      m.reasoningTooLong = true;
      return false;
    }
    m.reasoningBytes += len;
    return true;
  }

  /** Whether `len` more bytes of kept arguments fit maxArgumentBytes (then counted); past it the stream is marked too long. */
  private argumentRoom(len: number): boolean {
    const m = this.said;
    if (m.argumentBytes + len > this.owner!.maxArgumentBytes) {
      m.tooLong = true;
      return false;
    }
    m.argumentBytes += len;
    return true;
  }

  /** A fragment (or the whole) of a call's arguments: kept within the limit, and passed on. */
  private fragment(call: Call, j: number, whole: boolean): void {
    const owner = this.owner!;
    const len = this.len(j);
    if (owner.keeps) {
      if (!this.argumentRoom(len)) return;
      const text = this.string(j);
      call.text = whole ? text : call.text + text;
    }
    call.bytes += len;
    owner.out?.callArgs(call, this.ptr(j), len, this.flags(j), whole);
  }

  /** A call ended: done, and (kept) its arguments checked in the core (a custom tool's are free text). */
  ended(call: Call): void {
    const owner = this.owner!;
    // (past maxArgumentBytes, or in a turn that failed, no call ends: the stream fails at this event,
    // with the calls as they stood before it)
    const m = owner.message;
    if (m !== null && (m.tooLong || m.error !== null)) return;
    call.done = true;
    if (owner.keeps && !call.custom) call.valid = this.validJson(call.args());
    owner.out?.callEnded(call);
    // (a relay, which keeps no arguments, keeps a start's input only until its writer wrote the call's end)
    if (!owner.keeps) call.fallback = '';
  }

  /**
   * Whether `text` is one complete JSON value, read by the core's JSON reader (no JSON.parse), in a
   * block of its own: a batch's documents and text may lie in every other area.
   */
  private validJson(text: string): boolean {
    const core = this.core;
    const bytes = enc.encode(text);
    const at = core.x.modelCheckArea(bytes.length);
    core.sync();
    core.u8.set(bytes, at);
    return core.x.modelValid(at, bytes.length) === 1;
  }

  onNonCanonical(_doc: Doc, finish: number, usage: number, annotations: number, role: number, others: boolean): void {
    this.owner!.nonCanonical?.(this, finish, usage, annotations, role, others);
  }

  onFinishReason(reason: string, refused = false, note?: string): void {
    const said = this.said;
    if (said.finishReason !== reason || said.refused !== refused) eventSaid.any = true;
    said.finishReason = reason;
    said.refused = refused;
    const failed = finishWords(this.owner!.finishReasons, reason)?.failed;
    if (failed !== undefined) {
      // (a turn that failed: the provider's error, its reason the code, whatever follows it)
      said.error = note === undefined || note === '' ? failed : note;
      said.errorDetail = reason;
    }
  }

  onUsage(fields: Record<string, unknown>): void {
    const said = this.said;
    if (!eventSaid.any) {
      // (the same usage again, as Gemini's every chunk may say it, is no news)
      const was = said.usage;
      for (const k in fields) {
        if (was === undefined || (!Object.is(was[k], fields[k]) && JSON.stringify(was[k]) !== JSON.stringify(fields[k]))) {
          eventSaid.any = true;
          break;
        }
      }
    }
    said.usage = said.usage === undefined ? fields : { ...said.usage, ...fields };
  }

  onDone(): void {
    eventSaid.any = true;
    this.said.done = true;
  }

  onPing(): void {
    this.said.pings++;
  }

  onError(message: string, detail?: string): void {
    eventSaid.any = true;
    const said = this.said;
    said.error = message;
    said.errorDetail = detail;
  }

  /** Record j's address, length and flags. */
  ptr(j: number): number { return this.dPtr + this.core.i32[this.dRec + j * JREC_WORDS + JR_START]; }
  len(j: number): number {
    const w = this.dRec + j * JREC_WORDS;
    return this.core.i32[w + JR_END] - this.core.i32[w + JR_START];
  }
  flags(j: number): number { return this.core.i32[this.dRec + j * JREC_WORDS + JR_HEAD] >>> 24; }

  // ---- Doc: the records of the document being read --------------------------------------------

  path(j: number): number { return this.core.i32[this.dRec + j * JREC_WORDS + JR_HEAD] & 0xffff; }
  kind(j: number): number { return (this.core.i32[this.dRec + j * JREC_WORDS + JR_HEAD] >>> 16) & 0xff; }
  index(j: number): number { return this.core.i32[this.dRec + j * JREC_WORDS + JR_INDEX]; }
  start(j: number): number { return this.core.i32[this.dRec + j * JREC_WORDS + JR_START]; }
  end(j: number): number { return this.core.i32[this.dRec + j * JREC_WORDS + JR_END]; }

  string(j: number): string {
    const i32 = this.core.i32;
    const w = this.dRec + j * JREC_WORDS;
    const head = i32[w + JR_HEAD];
    const a = this.dPtr + i32[w + JR_START];
    const len = i32[w + JR_END] - i32[w + JR_START];
    const flags = head >>> 24;
    if (((head >>> 16) & 0xff) !== JK_STRING) return this.core.utf8(a, len);
    if (flags & JF_ESCAPED) return unescaped(this.core, a, len);
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
