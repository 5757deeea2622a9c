// Layer 4 (model streams) in the core: after a frame batch (SSE events or lines, framed on the byte-level
// path so that their bytes are UTF-8 in place), each event's data or line is read as one JSON
// document with a format's path program, in one call for the whole batch; and the string spans of
// a push's text are written out as one run of UTF-16 units, so that JS makes one string per push.
// Bytes in, records out; no strings.
import {
  CH_ARGS, CH_OF_KIND, CH_REASONING, CH_TEXT, DF_DONE, DF_ERROR, DF_LAST, FR_NREC, FR_RAW_PTR, IN_CAP, IN_JOIN, IN_PTR, JF_ASCII, JF_ESCAPED, JK_NUMBER,
  JK_STRING, JREC_BYTES, JREC_FLAGS_SHIFT, JREC_KIND_SHIFT, JR_END, JR_INDEX, JR_START, JSON_READ_SLACK, JSON_REC_PTR, JSON_UTF16_SLACK,
  K_COMMENT, K_EVENT, K_MASK, LINE_REC_WORDS, LR_END, MDOC_PTR, MDR_ARGS_BYTES, MDR_BLANK, MDR_CHUNKS, MDR_COMMENTS, MDR_DOCS,
  MDR_EMIT_LEN, MDR_EMIT_PTR, MDR_EMPTY, MDR_GATHERED, MDR_HIGH, MDR_LOGGED, MDR_NEXT, MDR_QUIET, MDR_READ, MDR_REASON_BYTES, MDR_SCRATCH, MDR_TEXT_BYTES, MDR_TEXT_CHARS,
  MDR_UNITS, ME_LOUD, MD_FLAGS, MD_J0, MD_JN, MD_LEN, MD_PTR, MD_REC, ME_CHARS, ME_CHUNKS, ME_COMMENTS, ME_GATHER, ME_HIGH, ME_KEEP, ME_NAMED, ME_ORDER, ME_PASS,
  ME_TEXT, MG_KEEP, MG_TEXT, MGATHER_CAP, MGATHER_PTR, MGR_PTR, MG_WORDS, MHEAD_PTR, MHEAD_SLOT, MJREC_CAP, MJREC_PTR, MK_LINES, MK_STRIP_DATA, MR_CALL, MR_CHOICE,
  MR_KIND, MR_LITERAL, MR_NOT_LITERAL, MR_SCOPE, MR_TEXT, MRF_ALIAS, MT_CHOICE, MT_HEAD_BYTES, MT_KIND_BYTES, MT_RULE_BYTES, OUT_CAP, OUT_PTR,
  RES_PTR, R_RAW, SF_IN, SF_RAW, SF_SLACK, SPAN_PTR, SR_DATA0, SR_DATA1, SR_HEAD, SSE_REC_WORDS, TEXT_SCRATCH_CAP,
} from './abi';
import { NO_LIMIT, bAppend, bEnsure, bFree, bLen, bPtr, bSetLen, copy } from './buffers';
import { C_SPACE, isDataField } from './frames';
import { MS_ARGS, MS_ARGS_LEFT, MS_CALL, MS_HIGH, MS_KEEP, MS_LAST, MS_REASON, MS_TEXT, argsLeft, currentCall, keepLast, lastChanged, lastUnchanged, modelState, modelStateOf, modelStateTrim } from './model-state';
import { jsonChars, jsonEndsHigh, jsonErrorAt, jsonRead, jsonUnescape, jsonUtf8, jsonUtf8High, jsonUtf8Length, putUtf8 } from './json';
import { release, res, reserve } from './runtime';
import { channelOn, isTextRecord, lastRecord, quietChannel, quietKind, setQuiet, shapeLearn, shapeMatch } from './shape';
import { linesMore, linesPush } from './lines';
import { sseEventsAt, sseMore, ssePush } from './sse';
import { transcode } from './utf8';
import { emit, emit1, emit2, emitCapacity, emitEvent, emitLength, emitReset, emitStart, emitTrim } from './writer';

// Scratch of one call, given back before the next (nothing is held between calls, so that the
// core's memory in use is the streams' own):
// - a copy of a document that lies in a stream's own buffers (an event larger than the output
//   window): the reader needs JSON_READ_SLACK readable bytes past a document's end, which a heap
//   block does not promise; a heap block for the call;
// - the UTF-16 units of a gather: a static area, or a heap block for the call when larger.
let docScratch: usize = 0;
let docScratchCap: usize = 0;
let textScratch: usize = 0;
let textScratchCap: usize = 0;
// - a copy of a text JS checks (a tool call's arguments, modelCheckArea): a heap block for the call.
let checkScratch: usize = 0;
let checkScratchCap: usize = 0;
const TEXT_STATIC: usize = memory.data(TEXT_SCRATCH_CAP, 16);

/** A block of at least `need` bytes for this call. */
function scratchFor(isText: bool, need: usize): usize {
  if (isText && need <= <usize>TEXT_SCRATCH_CAP) return TEXT_STATIC;
  let ptr = isText ? textScratch : docScratch;
  let cap = isText ? textScratchCap : docScratchCap;
  if (need > cap) {
    if (ptr != 0) {
      heap.free(ptr);
      release(cap);
    }
    reserve(need);
    ptr = heap.alloc(need);
    cap = need;
    if (isText) {
      textScratch = ptr;
      textScratchCap = cap;
    } else {
      docScratch = ptr;
      docScratchCap = cap;
    }
  }
  return ptr;
}

/**
 * A block for one document of `n` bytes that JS writes (a document larger than the input window,
 * read with jsonRead), with the slack the reader needs past its end, zeroed. JS gives it back with
 * modelScratchFree once it has read the records.
 */
export function modelScratch(n: usize): usize {
  const p = scratchFor(false, n + JSON_READ_SLACK + 16);
  memory.fill(p + n, 0, JSON_READ_SLACK + 16);
  return p;
}

/**
 * The text of a JSON string's body [p, p + len) (escaped, as the reader found it) as UTF-16 units
 * in scratch: MGR_PTR is their address. Returns their number. (Strings a description reads: a
 * reasoning delta, a call's arguments, an error message.)
 */
export function modelUnescape(p: usize, len: usize): usize {
  const out = scratchFor(true, (len << 1) + JSON_UTF16_SLACK);
  const n = jsonUnescape(p, len, out);
  res(MGR_PTR, <i32>out);
  reportScratch();
  return n;
}

// A path program of one path, the document itself (a root node with path id 0, no keys, no [*]).
const WHOLE: usize = memory.data<u8>([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 4);

/**
 * Whether [p, p + len) (valid UTF-8, JSON_READ_SLACK readable bytes after it) is one complete JSON
 * value: a tool call's arguments, checked when the call ends. Its one record goes to the built-in
 * record area, apart from a batch's. Returns 1 or 0.
 */
export function modelValid(p: usize, len: usize): i32 {
  return jsonRead(WHOLE, p, len, JSON_REC_PTR, 1) >= 0 ? 1 : 0;
}

/**
 * A block of at least `n` bytes, and JSON_READ_SLACK zeroed bytes after them, for a text JS writes
 * to have it checked (modelValid) while a batch is being read: apart from the batch's own scratch.
 */
export function modelCheckArea(n: usize): usize {
  const need = n + JSON_READ_SLACK + 16;
  if (need > checkScratchCap) {
    if (checkScratch != 0) {
      heap.free(checkScratch);
      release(checkScratchCap);
    }
    reserve(need);
    checkScratch = heap.alloc(need);
    checkScratchCap = need;
  }
  memory.fill(checkScratch + n, 0, JSON_READ_SLACK + 16);
  reportScratch();
  return checkScratch;
}

/** Gives the heap blocks of the last call's scratch back (the bindings call it when MDR_SCRATCH says there are some). */
export function modelScratchFree(): void {
  emitTrim();
  if (docScratch != 0) {
    heap.free(docScratch);
    release(docScratchCap);
  }
  if (textScratch != 0) {
    heap.free(textScratch);
    release(textScratchCap);
  }
  if (checkScratch != 0) {
    heap.free(checkScratch);
    release(checkScratchCap);
  }
  docScratch = docScratchCap = textScratch = textScratchCap = checkScratch = checkScratchCap = 0;
}

/** Bytes of heap scratch held now (0 between calls once the bindings freed it). */
function modelScratchBytes(): usize {
  return docScratchCap + textScratchCap + checkScratchCap + emitCapacity();
}

/** Whether a call left heap scratch, in MDR_SCRATCH. */
// @ts-ignore: decorator
@inline function reportScratch(): void {
  res(MDR_SCRATCH, modelScratchBytes() != 0 ? 1 : 0);
}

/**
 * UTF-8 bytes of the text of a string span (escaped or not), counted as the relay counts a
 * quiet event's (jsonUtf8Length): `high` says the text before it ended in a high surrogate
 * escape; MDR_HIGH says whether this one does. For the spans of events JS reads.
 */
export function modelTextBytes(p: usize, len: usize, high: i32): usize {
  const n = jsonUtf8Length(p, len, high != 0);
  res(MDR_HIGH, jsonEndsHigh() ? 1 : 0);
  return n;
}

/**
 * Characters (code points) of the text of a string span with these record flags (JF_*), as a
 * relay with ME_CHARS counts a quiet event's (jsonChars; `high` as modelTextBytes'). For the
 * spans of events JS reads.
 */
export function modelTextChars(p: usize, len: usize, flags: u32, high: i32): usize {
  return jsonChars(p, len, flags, high != 0);
}

// @ts-ignore: decorator
@inline function isBlank(p: usize, n: usize): bool {
  for (let i: usize = 0; i < n; i++) {
    const b = load<u8>(p + i);
    if (b != C_SPACE && b != 9 && b != 10 && b != 13) return false;
  }
  return true;
}

// @ts-ignore: decorator
@inline function isDone(p: usize, n: usize): bool {
  // "[DONE]"
  return n == 6 && load<u32>(p) == 0x4E4F445B && load<u16>(p, 4) == 0x5D45;
}

/** Whether the string record at `w` of a document at `p` is the literal [l, l + n) (no escape in it). */
// @ts-ignore: decorator
@inline function isBytes(l: usize, n: usize, p: usize, w: usize): bool {
  if (((load<u32>(w) >>> JREC_FLAGS_SHIFT) & JF_ESCAPED) != 0) return false;
  const s = p + <usize>load<i32>(w, JR_START << 2);
  if (n != <usize>(load<i32>(w, JR_END << 2) - load<i32>(w, JR_START << 2))) return false;
  let i: usize = 0;
  for (; i + 8 <= n; i += 8) if (load<u64>(s + i) != load<u64>(l + i)) return false;
  for (; i < n; i++) if (load<u8>(s + i) != load<u8>(l + i)) return false;
  return true;
}

/** Whether the string record at `w` of a document at `p` is the literal of rule `rule` in template `t`. */
// @ts-ignore: decorator
@inline function isLiteral(t: usize, rule: usize, p: usize, w: usize): bool {
  return isBytes(t + <usize>load<u16>(rule, 4), <usize>load<u16>(rule, 2), p, w);
}

/** The value of a number record that is a small non-negative integer in plain digits, or −1. */
function smallInt(p: usize, w: usize): i32 {
  let v: i32 = 0;
  const e = p + <usize>load<i32>(w, JR_END << 2);
  for (let q = p + <usize>load<i32>(w, JR_START << 2); q < e; q++) {
    const d = <i32>load<u8>(q) - 0x30;
    if (<u32>d > 9 || v > 100000000) return -1;
    v = v * 10 + d;
  }
  return v;
}

/** The address of kind `k` of template `t`. */
// @ts-ignore: decorator
@inline function kindAt(t: usize, k: i32): usize {
  return t + MT_HEAD_BYTES + <usize>load<u16>(t) * MT_RULE_BYTES + <usize>k * MT_KIND_BYTES;
}

/**
 * Whether the `nrec` records of the document at `p` make a quiet event by template `t` (see abi.ts,
 * "Templates"): nothing in it but content of one channel, in the followed element, and what the
 * template ignores; an event of the arguments channel (even an empty fragment, which would begin
 * a call) names the stream's current call. An empty string of text says nothing and is ignored;
 * any reasoning string (an empty one begins a block) makes the event one of reasoning; strings at
 * two paths of one content's names (MRF_ALIAS) make it one for JS. Returns its number of content records that are not empty (setQuiet
 * keeps of what), or −1 when the event is one for JS.
 */
function quietText(st: usize, t: usize, p: usize, nrec: i32, choice: i32): i32 {
  const nrules = <u32>load<u16>(t);
  const nkinds = <i32>load<u16>(t, 6);
  let lits: u32 = 0;
  let chosen: i32 = -2;
  let textEl: i32 = -2;
  let scopeEl: i32 = -2;
  let ntext: i32 = 0;
  let channel: i32 = -1;
  let kind: i32 = -1;
  let call: usize = 0;
  let args = false;
  let reason = false;
  let aliases = 0;
  for (let j = 0; j < nrec; j++) {
    const w = MJREC_PTR + (<usize>j * JREC_BYTES);
    const head = load<u32>(w);
    const id = head & 0xFFFF;
    if (id >= nrules) return -1;
    const jk = (head >>> JREC_KIND_SHIFT) & 0xFF;
    const rule = t + MT_HEAD_BYTES + <usize>id * MT_RULE_BYTES;
    if (((<u32>load<u8>(rule, 1) >>> jk) & 1) != 0) continue;
    const role = <i32>load<u8>(rule);
    if (role == MR_CHOICE) {
      if (jk != JK_NUMBER || chosen != -2 || smallInt(p, w) != choice) return -1;
      chosen = load<i32>(w, JR_INDEX << 2);
    } else if (role == MR_CALL) {
      if (jk != JK_NUMBER || call != 0) return -1;
      call = w;
    } else if (role == MR_SCOPE) {
      const el = load<i32>(w, JR_INDEX << 2);
      if (scopeEl == -2) scopeEl = el;
      else if (scopeEl != el) return -1;
    } else if (jk != JK_STRING) {
      return -1;
    } else if (role == MR_TEXT) {
      const ch = <i32>load<u8>(rule, 6);
      if (ch == CH_ARGS) args = true;
      else if (ch == CH_REASONING) reason = true;
      // (the same content under two of its names, even one of them empty: JS reads one)
      if ((<i32>load<u8>(rule, 7) & MRF_ALIAS) != 0 && ++aliases > 1) return -1;
      if (load<i32>(w, JR_END << 2) == load<i32>(w, JR_START << 2)) continue; // (empty)
      if (channel == -1) channel = ch;
      else if (channel != ch) return -1;
      const el = load<i32>(w, JR_INDEX << 2);
      if (textEl == -2) textEl = el;
      else if (textEl != el) return -1; // (content of one element only)
      ntext++;
    } else if (role == MR_LITERAL) {
      if (!isLiteral(t, rule, p, w)) return -1;
      lits++;
    } else if (role == MR_NOT_LITERAL) {
      if (isLiteral(t, rule, p, w) || ((head >>> JREC_FLAGS_SHIFT) & JF_ESCAPED) != 0) return -1;
    } else if (role == MR_KIND) {
      if (kind != -1) return -1;
      for (let k = 0; k < nkinds; k++) {
        const ka = kindAt(t, k);
        if (isBytes(t + <usize>load<u16>(ka, 2), <usize>load<u16>(ka), p, w)) {
          kind = k;
          break;
        }
      }
      if (kind < 0) return -1;
    } else {
      return -1;
    }
  }
  if (lits != <u32>load<u16>(t, 2)) return -1;
  if (nkinds != 0 && kind < 0) return -1; // (a template with kinds: a quiet event names one)
  if (kind >= 0) {
    // the kind says the channel: content of another is for JS
    const kc = <i32>load<u8>(kindAt(t, kind), 4);
    if (channel != -1 && channel != CH_OF_KIND && channel != kc) return -1;
    channel = kc;
    if (kc == CH_REASONING && ntext == 0) return -1; // (an empty reasoning delta begins a block: for JS)
  } else if (channel == CH_OF_KIND) {
    return -1;
  }
  if (args) {
    if (channel == -1) channel = CH_ARGS;
    else if (channel != CH_ARGS) return -1;
  }
  if (reason && channel != CH_REASONING) return -1; // (so is an empty reasoning string beside other content)
  if (channel == CH_ARGS && (call == 0 || smallInt(p, call) + 1 != currentCall(st))) return -1;
  if (ntext != 0 && (load<u16>(t, 4) & MT_CHOICE) != 0) {
    // the content lies in the followed choice (its delta's element, when a call's element holds it)
    const followed = chosen != -2 ? chosen : choice;
    if ((scopeEl != -2 ? scopeEl : textEl) != followed) return -1;
  }
  setQuiet(channel, kind, call != 0 ? smallInt(p, call) : -1);
  return ntext;
}

/**
 * Whether the quiet event quietText just read (its `nrec` records at MJREC_PTR) may be read to the
 * end in `mode`: its channel is on, and arguments kept by the core (no client) fit the stream's
 * budget (a fragment past it is for JS, which fails the stream with its offset).
 */
function quietFits(st: usize, t: usize, nrec: i32, mode: i32): bool {
  if (!channelOn(quietChannel(), mode)) return false;
  if (quietChannel() != CH_ARGS || (mode & (ME_PASS | ME_CHUNKS)) != 0) return true;
  let need: u32 = 0;
  for (let j = 0; j < nrec; j++) {
    const w = MJREC_PTR + (<usize>j * JREC_BYTES);
    if (isTextRecord(t, load<u32>(w))) need += <u32>(load<i32>(w, JR_END << 2) - load<i32>(w, JR_START << 2));
  }
  return need <= argsLeft(st);
}

/** Writes a content span for the client in channel `ch`'s slot of the head area: its head, the span, its end. False when the slot is empty (the channel is dropped). */
function emitSlot(ch: i32, sp: usize, sl: usize): bool {
  const slot = MHEAD_PTR + <usize>ch * MHEAD_SLOT;
  const hl = <usize>load<u32>(slot);
  const el = <usize>load<u32>(slot, 4);
  if ((hl | el) == 0) return false;
  emit(slot + 8, hl);
  emit(sp, sl);
  emit(slot + 8 + hl, el);
  return true;
}

/** Writes `event: ` and the name of kind `k` of template `t`, and a LF. */
function emitName(t: usize, k: i32): void {
  const ka = kindAt(t, k);
  emit(EVENT_FIELD, 7);
  emit(t + <usize>load<u16>(ka, 8), <usize>load<u16>(ka, 6));
  emit1(0x0A);
}
const EVENT_FIELD: usize = memory.data<u8>([0x65, 0x76, 0x65, 0x6E, 0x74, 0x3A, 0x20, 0]);

/**
 * Reads the JSON documents of the batch the last frame call wrote, from record `first` up to
 * `nrec` − 1, with the path program at `prog`. Blank documents, comments and, with a template `t`
 * (0: none), quiet events are read to the end here: a quiet event's text spans become gather
 * entries after the `gathered` ones JS wrote (or, with ME_PASS / ME_CHUNKS in `emit`, bytes for
 * the client; ME_COMMENTS writes the comments too). The first other document becomes one
 * document entry (MD_*), its JSON records in the model record area, and the call stops after it,
 * so that JS reads it in order. MDR_NEXT says where to continue. `framing`: MK_SSE or MK_LINES,
 * with MK_STRIP_DATA for lines that carry "data: ". Returns the number of entries (0 or 1).
 */
export function modelDocs(st: usize, first: i32, nrec: i32, framing: i32, prog: usize, t: usize, choice: i32, gathered: i32, emitMode: i32): i32 {
  const lines = (framing & MK_LINES) != 0;
  const strip = (framing & MK_STRIP_DATA) != 0;
  const rawLine = lines && (load<i32>(RES_PTR, 0) & R_RAW) != 0;
  let nd: i32 = 0;
  let k = first;
  let prevEnd: usize = 0;
  let g = gathered;
  let quiet: i32 = 0, blank: i32 = 0, comments: i32 = 0, chunks: i32 = 0;
  let empty: i32 = 0; // (quiet events with no content of a byte)
  let textBytes: usize = 0, textChars: usize = 0; // (textChars: with ME_CHARS)
  let reasonBytes: usize = 0, argsBytes: usize = 0;
  let high = (emitMode & ME_HIGH) != 0;
  const order = (emitMode & ME_ORDER) != 0;
  let said = false; // (ME_ORDER: the call read a quiet event with content)
  emitReset();
  if (lines && k > 0) prevEnd = <usize>load<i32>(SPAN_PTR + (<usize>(k - 1) * LINE_REC_WORDS << 2), LR_END << 2);
  for (; k < nrec; k++) {
    let p: usize, n: usize;
    let slack = false; // (the document lies where the reader has its slack: read there)
    let lineEnd: usize = prevEnd;
    if (lines) {
      lineEnd = <usize>load<i32>(SPAN_PTR + (<usize>k * LINE_REC_WORDS << 2), LR_END << 2);
      if (rawLine) {
        p = <usize>load<i32>(RES_PTR, FR_RAW_PTR << 2);
        n = lineEnd;
      } else {
        p = OUT_PTR + prevEnd;
        n = lineEnd - prevEnd;
      }
      if (strip && isDataField(p, p + n)) {
        let v: usize = 5;
        if (v < n && load<u8>(p + v) == C_SPACE) v++;
        p += v;
        n -= v;
      }
    } else {
      const r = SPAN_PTR + (<usize>k * SSE_REC_WORDS << 2);
      const head = load<i32>(r, SR_HEAD << 2);
      const kind = head & K_MASK;
      if (kind == K_COMMENT) {
        comments++;
        if ((emitMode & ME_COMMENTS) != 0) {
          const d0 = load<i32>(r, SR_DATA0 << 2), d1 = load<i32>(r, SR_DATA1 << 2);
          if (d1 > d0) {
            emit2(0x3A, C_SPACE); // ": "
            emit((head & SF_RAW) != 0 ? <usize>d0 : OUT_PTR + <usize>d0, <usize>(d1 - d0));
          } else {
            emit1(0x3A); // ":"
          }
          emit2(0x0A, 0x0A);
        }
        continue;
      }
      if (kind != K_EVENT) continue;
      const d0 = load<i32>(r, SR_DATA0 << 2), d1 = load<i32>(r, SR_DATA1 << 2);
      n = <usize>(d1 - d0);
      p = (head & SF_RAW) != 0 ? <usize>d0 : (head & SF_IN) != 0 ? IN_PTR + <usize>d0 : OUT_PTR + <usize>d0;
      slack = (head & SF_SLACK) != 0;
    }
    if (isBlank(p, n)) {
      blank++;
      prevEnd = lineEnd;
      continue;
    }
    const inWindow = slack || (p >= IN_PTR - IN_JOIN && p + n <= IN_PTR + IN_CAP);
    if (!inWindow && (p < OUT_PTR || p + n > OUT_PTR + OUT_CAP)) {
      // unlikely: a document in a stream buffer or a raw line: read a copy with slack (after JS
      // took the text spans gathered so far, which may lie in the copy of the one before)
      if (g != 0) break;
      const s = scratchFor(false, n + JSON_READ_SLACK + 16);
      copy(s, p, n);
      p = s;
    }
    let flags: i32 = 0;
    let got: i32 = 0;
    if (isDone(p, n)) {
      flags = DF_DONE;
    } else {
      let nt: i32 = -1;
      lastUnchanged();
      if (t != 0 && (emitMode & ME_LOUD) == 0 && shapeMatch(st, t, prog, choice, p, n, emitMode)) {
        got = nt = 1; // the shape of the quiet event before it: its content record
      } else {
        got = jsonRead(prog, p, n, MJREC_PTR, <u32>MJREC_CAP);
        if (got < 0) {
          flags = DF_ERROR;
        } else if (t != 0) {
          // (the event's object at the MR_LAST rule, for JS's event or a quiet one alike)
          const lw = lastRecord(t, got);
          if (lw != 0) keepLast(st, p + <usize>load<i32>(lw, JR_START << 2), <usize>(load<i32>(lw, JR_END << 2) - load<i32>(lw, JR_START << 2)));
          if ((emitMode & ME_LOUD) == 0) {
            nt = quietText(st, t, p, got, choice);
            if (nt >= 0 && !quietFits(st, t, got, emitMode)) nt = -1;
            if (nt == 1) shapeLearn(st, t, prog, choice, p, n, got);
          }
        }
      }
      if (nt >= 0) {
        if (g + nt > MGATHER_CAP) break; // the gather list is full: JS takes it, then calls again
        const ch = quietChannel();
        if (order && nt != 0) {
          if (said) break; // (JS takes the content before it first)
          said = true;
        }
        let spoke = false;
        for (let j = 0; j < got; j++) {
          const w = MJREC_PTR + (<usize>j * JREC_BYTES);
          const head = load<u32>(w);
          if (!isTextRecord(t, head)) continue;
          const sp = p + <usize>load<i32>(w, JR_START << 2);
          const sl = <usize>(load<i32>(w, JR_END << 2) - load<i32>(w, JR_START << 2));
          if (sl == 0) continue;
          spoke = true;
          const jf = head >>> JREC_FLAGS_SHIFT;
          if (ch != CH_TEXT) {
            // reasoning, or the current call's arguments: written for the client, or kept for JS
            if (ch == CH_REASONING) reasonBytes += sl;
            else argsBytes += sl;
            if ((emitMode & (ME_PASS | ME_CHUNKS)) == 0) {
              const ms = modelStateOf(st);
              bAppend(ms, ch == CH_REASONING ? MS_REASON : MS_ARGS, sp, sl, NO_LIMIT);
              if (ch == CH_ARGS) store<u32>(ms, load<u32>(ms, MS_ARGS_LEFT) - <u32>sl, MS_ARGS_LEFT);
            } else if ((emitMode & ME_CHUNKS) != 0 && emitSlot(ch, sp, sl)) {
              chunks++;
            }
          } else if (emitMode & (ME_PASS | ME_CHUNKS)) {
            if ((emitMode & ME_CHARS) != 0) textChars += jsonChars(sp, sl, jf, high);
            if ((jf & JF_ESCAPED) != 0) {
              textBytes += jsonUtf8Length(sp, sl, high);
              high = jsonEndsHigh();
            } else {
              if (high) textBytes += 3;
              high = false;
              textBytes += sl;
            }
            if ((emitMode & ME_CHUNKS) != 0 && emitSlot(CH_TEXT, sp, sl)) chunks++;
          } else {
            const e = MGATHER_PTR + (<usize>g * MG_WORDS << 2);
            store<i32>(e, <i32>sp);
            store<i32>(e, <i32>sl, 4);
            store<i32>(e, <i32>jf, 8);
            g++;
          }
        }
        if ((emitMode & ME_PASS) != 0) {
          if ((emitMode & ME_NAMED) != 0 && quietKind() >= 0) emitName(t, quietKind()); // (the event's name, for a format that names them)
          emitEvent(p, n);
        }
        quiet++;
        if (!spoke && !lastChanged) empty++; // (new running usage, Gemini's, is something)
        prevEnd = lineEnd;
        continue;
      }
    }
    if (order && said) break; // (a document after quiet content: JS takes that content first)
    // a document for JS: its entry, and the call stops after it
    const e = MDOC_PTR;
    store<i32>(e, k, MD_REC << 2);
    store<i32>(e, <i32>p, MD_PTR << 2);
    store<i32>(e, <i32>n, MD_LEN << 2);
    if ((flags & DF_ERROR) != 0) {
      store<i32>(e, jsonErrorAt(), MD_J0 << 2);
      store<i32>(e, -got, MD_JN << 2);
    } else {
      store<i32>(e, 0, MD_J0 << 2);
      store<i32>(e, got, MD_JN << 2);
    }
    // (a JS event's new running usage, which its description does not say until the completion)
    store<i32>(e, flags == 0 && lastChanged ? DF_LAST : flags, MD_FLAGS << 2);
    nd = 1;
    k++;
    prevEnd = lineEnd;
    break;
  }
  res(MDR_DOCS, nd);
  res(MDR_NEXT, k);
  res(MDR_QUIET, quiet);
  res(MDR_EMPTY, empty);
  res(MDR_BLANK, blank);
  res(MDR_COMMENTS, comments);
  res(MDR_CHUNKS, chunks);
  res(MDR_EMIT_PTR, <i32>emitStart());
  res(MDR_EMIT_LEN, <i32>emitLength());
  res(MDR_TEXT_BYTES, <i32>textBytes);
  res(MDR_TEXT_CHARS, <i32>textChars);
  res(MDR_HIGH, high ? 1 : 0);
  res(MDR_REASON_BYTES, <i32>reasonBytes);
  res(MDR_ARGS_BYTES, <i32>argsBytes);
  let units: i32 = -1;
  let logged: i32 = 0;
  if ((emitMode & ME_GATHER) != 0 && nd == 0 && k == nrec && g != 0) {
    // the batch read to the end with nothing for JS: its text now (one ASCII span with no escape
    // is its own bytes, which JS reads as they are, unless the text is kept)
    const keep = (emitMode & ME_KEEP) != 0;
    if (keep || g > 1 || (load<i32>(MGATHER_PTR, 8) & (JF_ASCII | JF_ESCAPED)) != JF_ASCII) {
      units = <i32>modelGather(st, g, (keep ? MG_KEEP : 0) | ((emitMode & ME_TEXT) != 0 ? MG_TEXT : 0));
      g = 0;
    } else if ((emitMode & ME_TEXT) != 0) {
      modelTextSpans(st, g);
      logged = g;
    }
  }
  res(MDR_LOGGED, logged);
  res(MDR_GATHERED, g);
  res(MDR_UNITS, units);
  reportScratch();
  return nd;
}

/** After a frame call: the batch's documents read from its first record (modelDocs), in the same call. */
// @ts-ignore: decorator
@inline function readBatch(st: usize, r: i32, framing: i32, prog: usize, t: usize, choice: i32, emitMode: i32): i32 {
  const nrec = load<i32>(RES_PTR, FR_NREC << 2);
  if (nrec > 0) {
    modelDocs(st, 0, nrec, framing, prog, t, choice, 0, emitMode);
    res(MDR_READ, 1);
  } else {
    res(MDR_READ, 0);
  }
  return r;
}

/**
 * A model stream's push in one call: the frame push (ssePush or linesPush) and the read of its
 * batch's documents (modelDocs from record 0, with no gather entries yet). Returns the frame status.
 */
export function modelPush(st: usize, len: usize, mode: u32, framing: i32, prog: usize, t: usize, choice: i32, emitMode: i32): i32 {
  const r = (framing & MK_LINES) != 0 ? linesPush(st, len, mode) : ssePush(st, len, mode);
  return readBatch(st, r, framing, prog, t, choice, emitMode);
}

/**
 * A model stream's read of whole SSE events that lie outside the input window (sseEventsAt: `k`
 * events in the `len` bytes at `at`, their values' spans at `spans`) and of its batch's documents,
 * in one call, as modelPush reads the same bytes in the window. −1, with nothing changed, where
 * sseEventsAt does not take them (or the stream's framing is lines): the caller pushes them.
 */
export function modelPushAt(st: usize, at: usize, len: usize, spans: usize, k: usize, mode: u32, framing: i32, prog: usize, t: usize, choice: i32, emitMode: i32): i32 {
  if ((framing & MK_LINES) != 0 || !sseEventsAt(st, at, len, spans, k, mode)) return -1;
  return readBatch(st, 0, framing, prog, t, choice, emitMode);
}

/** The frame continuation after R_MORE (sseMore or linesMore) and the read of its batch, in one call. */
export function modelMore(st: usize, framing: i32, prog: usize, t: usize, choice: i32, emitMode: i32): i32 {
  const r = (framing & MK_LINES) != 0 ? linesMore(st) : sseMore(st);
  return readBatch(st, r, framing, prog, t, choice, emitMode);
}

/**
 * Writes the text of `n` string spans (gather entries: address, length, JSON flags) as one run of
 * UTF-16 units: escaped spans unescaped, the others transcoded. MGR_PTR is the run's address.
 * `flags`: MG_TEXT appends the text's UTF-8 to the stream's TEXT buffer first (see ME_TEXT). With
 * MG_KEEP (a raw model stream's text, kept for its report) the run is appended to the
 * stream's kept text (KEEP) instead of scratch, and MDR_TEXT_BYTES is its UTF-8 length (each
 * delta counted alone: a surrogate pair split between two deltas counts as two U+FFFD, as each
 * half is until its other half comes). Returns the number of units.
 */
export function modelGather(st: usize, n: i32, flags: i32): usize {
  if ((flags & MG_TEXT) != 0) modelTextSpans(st, n);
  const keep = flags & MG_KEEP;
  let bytes: usize = 0;
  for (let i = 0; i < n; i++) bytes += <usize>load<i32>(MGATHER_PTR + (<usize>i * MG_WORDS << 2), 4);
  const room = (bytes << 1) + JSON_UTF16_SLACK;
  const ms = keep != 0 ? modelStateOf(st) : 0;
  const kept = keep != 0 ? bLen(ms, MS_KEEP) : 0;
  const out = keep != 0 ? bEnsure(ms, MS_KEEP, kept + room) + kept : scratchFor(true, room);
  let o = out;
  let utf8: usize = 0;
  for (let i = 0; i < n; i++) {
    const g = MGATHER_PTR + (<usize>i * MG_WORDS << 2);
    const p = <usize>load<i32>(g), len = <usize>load<i32>(g, 4), f = load<i32>(g, 8);
    if ((f & JF_ESCAPED) != 0) {
      o += jsonUnescape(p, len, o) << 1;
      if (keep != 0) utf8 += jsonUtf8Length(p, len, false);
    } else {
      o += transcode(p, p + len, o) << 1;
      utf8 += len;
    }
  }
  if (keep != 0) {
    bSetLen(ms, MS_KEEP, kept + (o - out));
    res(MDR_TEXT_BYTES, <i32>utf8);
  }
  res(MGR_PTR, <i32>out);
  reportScratch();
  return (o - out) >> 1;
}

/**
 * Appends the text of gather entries [0, n) to the stream's TEXT buffer: its UTF-8 as the joined
 * text encodes it (jsonUtf8; a high surrogate escape that ends it waits in MS_HIGH for its pair).
 * modelGather with MG_TEXT and modelDocs with ME_TEXT call it; JS, for text it read otherwise.
 */
export function modelTextSpans(st: usize, n: i32): void {
  const ms = modelStateOf(st);
  let high = load<u32>(ms, MS_HIGH);
  for (let i = 0; i < n; i++) {
    const g = MGATHER_PTR + (<usize>i * MG_WORDS << 2);
    const p = <usize>load<i32>(g), len = <usize>load<i32>(g, 4);
    const at = bLen(ms, MS_TEXT);
    const o = bEnsure(ms, MS_TEXT, at + len + 3) + at;
    let w: usize;
    if ((load<i32>(g, 8) & JF_ESCAPED) != 0) {
      w = jsonUtf8(p, len, o, high);
      high = jsonUtf8High();
    } else {
      w = high != 0 ? putUtf8(o, 0xFFFD) - o : 0; // (the lone high surrogate before)
      high = 0;
      copy(o + w, p, len);
      w += len;
    }
    bSetLen(ms, MS_TEXT, at + w);
  }
  store<u32>(ms, high, MS_HIGH);
}

/**
 * The stream's TEXT buffer, `n` bytes of which JS is about to hash: MGR_PTR is its address (0 when
 * it has none). When it holds fewer than `n` and a high surrogate is pending, that surrogate ended
 * the text alone, and is written as U+FFFD first. Returns the bytes it holds.
 */
export function modelTextLog(st: usize, n: usize): usize {
  const ms = modelState(st);
  if (ms == 0) {
    res(MGR_PTR, 0);
    return 0;
  }
  let len = bLen(ms, MS_TEXT);
  if (len < n && load<u32>(ms, MS_HIGH) != 0) {
    // (room is there: modelTextSpans left it when the surrogate's escape wrote nothing, and the buffer
    // is not given back while a surrogate is pending, so this allocates nothing and cannot fail)
    putUtf8(bEnsure(ms, MS_TEXT, len + 3) + len, 0xFFFD);
    len += 3;
    bSetLen(ms, MS_TEXT, len);
    store<u32>(ms, 0, MS_HIGH);
  }
  res(MGR_PTR, <i32>bPtr(ms, MS_TEXT));
  return len;
}

/** A TEXT buffer larger than this (a read of much text) is shrunk once what it holds fits in a fourth of it, */
const TEXT_KEPT_CAP: usize = 4096;
/** to this, or to what it holds and a little room. */
const TEXT_SHRUNK_CAP: usize = 1024;

/**
 * Drops the first `n` bytes of the stream's TEXT buffer (JS hashed them). Allocates nothing, so
 * that it cannot fail: a buffer grown past TEXT_KEPT_CAP by a read of much text is shrunk in place
 * once what it holds fits in a fourth of it. `n` past the buffer's length (TEXT_LOG_END): the text
 * layer hashes strings from here on, and the buffer goes back, with a high surrogate pending.
 */
export function modelTextDrop(st: usize, n: usize): void {
  const ms = modelState(st);
  if (ms == 0) return;
  const len = bLen(ms, MS_TEXT);
  if (n > len) {
    bFree(ms, MS_TEXT);
    store<u32>(ms, 0, MS_HIGH);
    modelStateTrim(st);
    return;
  }
  const rest = len - n;
  const p = bPtr(ms, MS_TEXT);
  if (rest != 0 && n != 0) memory.copy(p, p + n, rest);
  bSetLen(ms, MS_TEXT, rest);
  const cap = <usize>load<u32>(ms + MS_TEXT, 8);
  if (cap > TEXT_KEPT_CAP && rest <= cap >> 2) {
    const nc = rest + 16 > TEXT_SHRUNK_CAP ? rest + 16 : TEXT_SHRUNK_CAP; // (room for a pending surrogate's U+FFFD)
    store<u32>(ms + MS_TEXT, <u32>heap.realloc(p, nc)); // (smaller: split in place, TLSF's realloc)
    store<u32>(ms + MS_TEXT, <u32>nc, 8);
    release(cap - nc);
  }
}

/** A raw model stream's kept text: MGR_PTR is the address of its units. Returns their number. */
export function modelKept(st: usize): usize {
  const ms = modelState(st);
  res(MGR_PTR, ms == 0 ? 0 : <i32>bPtr(ms, MS_KEEP));
  return ms == 0 ? 0 : bLen(ms, MS_KEEP) >> 1;
}

/** Gives back a raw model stream's kept text (JS took it). */
export function modelKeepFree(st: usize): void {
  const ms = modelState(st);
  if (ms == 0) return;
  bFree(ms, MS_KEEP);
  modelStateTrim(st);
}

/**
 * The stream's current tool call: `key` is the provider's key for it (−1: none, and no argument
 * event is quiet), `argsLeft` the bytes of arguments the core may still keep for it (within the
 * stream's budget, maxArgumentBytes).
 */
export function modelSetCall(st: usize, key: i32, left: u32): void {
  if (key < 0 && modelState(st) == 0) return;
  const ms = modelStateOf(st);
  store<i32>(ms, key < 0 ? 0 : key + 1, MS_CALL);
  store<u32>(ms, left, MS_ARGS_LEFT);
  if (key < 0) modelStateTrim(st);
}

/**
 * What the stream holds for JS as it was sent, where it lies (MGR_PTR), with nothing allocated (a
 * stream failing for the heap's budget can still take it): `which` 0 the reasoning of quiet events,
 * 1 the current call's arguments (escaped string bodies, joined), 2 the last object at its
 * template's MR_LAST rule. Returns its length (0: none). With `free` its buffer is given back instead.
 */
export function modelHeld(st: usize, which: i32, free: i32): usize {
  const ms = modelState(st);
  const b = which == 0 ? MS_REASON : which == 1 ? MS_ARGS : MS_LAST;
  if (free != 0) {
    if (ms != 0) {
      bFree(ms, b);
      modelStateTrim(st);
    }
    return 0;
  }
  const len: usize = ms == 0 ? 0 : bLen(ms, b);
  res(MGR_PTR, len == 0 ? 0 : <i32>bPtr(ms, b));
  return len;
}

/**
 * The reasoning (`which` 0) or arguments (1) the core kept from quiet events since JS last took
 * them, unescaped as one run of UTF-16 units (MGR_PTR; the strings' bodies joined, so that a pair
 * split between two fragments is whole, as joining their strings makes it); the buffer is given
 * back. Returns the number of units.
 */
export function modelPart(st: usize, which: i32): usize {
  const ms = modelState(st);
  const b = which == 0 ? MS_REASON : MS_ARGS;
  const len: usize = ms == 0 ? 0 : bLen(ms, b);
  if (len == 0) {
    res(MGR_PTR, 0);
    reportScratch();
    return 0;
  }
  // the reader's unescape reads past the end: the buffer has the slack (its block is not the
  // document's) only when room is made for it
  const q = bEnsure(ms, b, len + JSON_READ_SLACK + 16);
  memory.fill(q + len, 0, JSON_READ_SLACK + 16);
  const out = scratchFor(true, (len << 1) + JSON_UTF16_SLACK);
  const units = jsonUnescape(q, len, out);
  bFree(ms, b); // (taken at JS's events and at the end, rarely: nothing is held for the next)
  modelStateTrim(st);
  res(MGR_PTR, <i32>out);
  reportScratch();
  return units;
}
