// Layer 4 (model streams) in the core: after a frame batch (SSE events or lines, framed on the byte-level
// path so that their bytes are UTF-8 in place), each event's data or line is read as one JSON
// document with a format's path program, in one call for the whole batch; and the string spans of
// a push's text are written out as one run of UTF-16 units, so that JS makes one string per push.
// Bytes in, records out; no strings.
import {
  DF_DONE, DF_ERROR, FR_RAW_PTR, IN_CAP, IN_JOIN, IN_PTR, JF_ASCII, JF_ESCAPED, JK_NUMBER, JK_STRING, JREC_BYTES, JREC_FLAGS_SHIFT,
  JREC_KIND_SHIFT, JR_END, JR_INDEX, JR_START, JSON_READ_SLACK, JSON_UTF16_SLACK, K_COMMENT, K_EVENT, K_MASK, LINE_REC_WORDS, LR_END,
  MDOC_PTR, MDR_BLANK, MDR_CHUNKS, MDR_COMMENTS, MDR_DOCS, MDR_EMIT_LEN, MDR_EMIT_PTR, MDR_GATHERED, MDR_HIGH, MDR_NEXT, MDR_QUIET, MDR_TEXT_BYTES,
  MDR_UNITS, MD_FLAGS, MD_J0, MD_JN, MD_LEN, MD_PTR, MD_REC, ME_CHUNKS, ME_COMMENTS, ME_GATHER, ME_HIGH, ME_KEEP, ME_PASS, MGATHER_CAP,
  MGATHER_PTR, MGR_PTR, MG_WORDS, MHEAD_PTR, MJREC_CAP, MJREC_PTR, MK_LINES, MK_STRIP_DATA, MR_CHOICE, MR_LITERAL, MR_NOT_LITERAL,
  MR_TEXT, MT_HEAD_BYTES, FR_NREC, TEXT_SCRATCH_CAP, MDR_READ, MDR_SCRATCH, MT_RULE_BYTES, OUT_CAP, OUT_PTR, RES_PTR, R_RAW, SF_IN, SF_RAW, SPAN_PTR, SR_DATA0, SR_DATA1, SR_HEAD,
  SSE_REC_WORDS,
} from './abi';
import { B_KEEP, C_SPACE, bEnsure, bFree, bLen, bPtr, bSetLen, copy, isDataField } from './frames';
import { jsonEndsHigh, jsonErrorAt, jsonRead, jsonUnescape, jsonUtf8Length } from './json';
import { release, res, reserve } from './runtime';
import { isTextRecord, shapeLearn, shapeMatch } from './shape';
import { linesMore, linesPush } from './lines';
import { sseMore, ssePush } from './sse';
import { transcode } from './utf8';
import { emit, emit1, emit2, emitCapacity, emitData, emitLength, emitReset, emitStart, emitTrim } from './writer';

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
  docScratch = docScratchCap = textScratch = textScratchCap = 0;
}

/** Bytes of heap scratch held now (0 between calls once the bindings freed it). */
function modelScratchBytes(): usize {
  return docScratchCap + textScratchCap + emitCapacity();
}

/** Whether a call left heap scratch, in MDR_SCRATCH. */
// @ts-ignore: decorator
@inline function reportScratch(): void {
  res(MDR_SCRATCH, modelScratchBytes() != 0 ? 1 : 0);
}

/**
 * UTF-8 bytes of the text of a string span (escaped when `escaped`), counted as the relay counts a
 * quiet event's (jsonUtf8Length): `high` says the text before it ended in a high surrogate
 * escape; MDR_HIGH says whether this one does. For the spans of events JS reads.
 */
export function modelTextBytes(p: usize, len: usize, high: i32): usize {
  const n = jsonUtf8Length(p, len, high != 0);
  res(MDR_HIGH, jsonEndsHigh() ? 1 : 0);
  return n;
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

// `"},"finish_reason":null}]}` LF LF: the end of a chunk written with ME_CHUNKS.
const CONTENT_END: usize = memory.data<u8>([
  0x22, 0x7D, 0x2C, 0x22, 0x66, 0x69, 0x6E, 0x69, 0x73, 0x68, 0x5F, 0x72, 0x65, 0x61, 0x73, 0x6F, 0x6E, 0x22, 0x3A,
  0x6E, 0x75, 0x6C, 0x6C, 0x7D, 0x5D, 0x7D, 0x0A, 0x0A,
]);
const CONTENT_END_LEN: usize = 28;

/** Whether the string record at `w` of a document at `p` is the literal of rule `rule` in template `t`. */
// @ts-ignore: decorator
@inline function isLiteral(t: usize, rule: usize, p: usize, w: usize): bool {
  if (((load<u32>(w) >>> JREC_FLAGS_SHIFT) & JF_ESCAPED) != 0) return false;
  const s = p + <usize>load<i32>(w, JR_START << 2);
  const n = <usize>(load<i32>(w, JR_END << 2) - load<i32>(w, JR_START << 2));
  if (n != <usize>load<u16>(rule, 2)) return false;
  const l = t + <usize>load<u16>(rule, 4);
  let i: usize = 0;
  for (; i + 8 <= n; i += 8) if (load<u64>(s + i) != load<u64>(l + i)) return false;
  for (; i < n; i++) if (load<u8>(s + i) != load<u8>(l + i)) return false;
  return true;
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

/**
 * Whether the `nrec` records of the document at `p` make a quiet event by template `t` (see abi.ts,
 * "Templates"): nothing in it but text of the followed element and what the template ignores.
 * Returns its number of text records, or −1 when the event is one for JS.
 */
function quietText(t: usize, p: usize, nrec: i32, choice: i32): i32 {
  const nrules = <u32>load<u16>(t);
  let lits: u32 = 0;
  let chosen: i32 = -2;
  let textEl: i32 = -2;
  let ntext: i32 = 0;
  let follows = false;
  for (let j = 0; j < nrec; j++) {
    const w = MJREC_PTR + (<usize>j * JREC_BYTES);
    const head = load<u32>(w);
    const id = head & 0xFFFF;
    if (id >= nrules) return -1;
    const kind = (head >>> JREC_KIND_SHIFT) & 0xFF;
    const rule = t + MT_HEAD_BYTES + <usize>id * MT_RULE_BYTES;
    if (((<u32>load<u8>(rule, 1) >>> kind) & 1) != 0) continue;
    const role = <i32>load<u8>(rule);
    if (kind != JK_STRING && role != MR_CHOICE) return -1;
    if (role == MR_TEXT) {
      const el = load<i32>(w, JR_INDEX << 2);
      if (textEl == -2) textEl = el;
      else if (textEl != el) follows = true;
      ntext++;
    } else if (role == MR_LITERAL) {
      if (!isLiteral(t, rule, p, w)) return -1;
      lits++;
    } else if (role == MR_NOT_LITERAL) {
      if (isLiteral(t, rule, p, w) || ((head >>> JREC_FLAGS_SHIFT) & JF_ESCAPED) != 0) return -1;
    } else if (role == MR_CHOICE) {
      if (kind != JK_NUMBER || chosen != -2 || smallInt(p, w) != choice) return -1;
      chosen = load<i32>(w, JR_INDEX << 2);
    } else {
      return -1;
    }
  }
  if (lits != <u32>load<u16>(t, 2)) return -1;
  if ((load<u16>(t, 4) & 1) != 0 && ntext != 0) {
    // text of one element only, the followed one (by its index, or by position without one)
    if (follows || textEl != (chosen != -2 ? chosen : choice)) return -1;
  }
  return ntext;
}

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
  let textBytes: usize = 0;
  let high = (emitMode & ME_HIGH) != 0;
  emitReset();
  if (lines && k > 0) prevEnd = <usize>load<i32>(SPAN_PTR + (<usize>(k - 1) * LINE_REC_WORDS << 2), LR_END << 2);
  for (; k < nrec; k++) {
    let p: usize, n: usize;
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
    }
    if (isBlank(p, n)) {
      blank++;
      prevEnd = lineEnd;
      continue;
    }
    const inWindow = p >= IN_PTR - IN_JOIN && p + n <= IN_PTR + IN_CAP;
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
      if (t != 0 && shapeMatch(st, t, prog, choice, p, n)) {
        got = nt = 1; // the shape of the quiet event before it: its text record
      } else {
        got = jsonRead(prog, p, n, MJREC_PTR, <u32>MJREC_CAP);
        if (got < 0) {
          flags = DF_ERROR;
        } else if (t != 0) {
          nt = quietText(t, p, got, choice);
          if (nt == 1) shapeLearn(st, t, prog, choice, p, n, got);
        }
      }
      if (nt >= 0) {
        if (g + nt > MGATHER_CAP) break; // the gather list is full: JS takes it, then calls again
        for (let j = 0; j < got; j++) {
          const w = MJREC_PTR + (<usize>j * JREC_BYTES);
          const head = load<u32>(w);
          if (!isTextRecord(t, head)) continue;
          const sp = p + <usize>load<i32>(w, JR_START << 2);
          const sl = <usize>(load<i32>(w, JR_END << 2) - load<i32>(w, JR_START << 2));
          const jf = head >>> JREC_FLAGS_SHIFT;
          if (emitMode & (ME_PASS | ME_CHUNKS)) {
            if ((jf & JF_ESCAPED) != 0) {
              textBytes += jsonUtf8Length(sp, sl, high);
              high = jsonEndsHigh();
            } else if (sl != 0) {
              if (high) textBytes += 3;
              high = false;
              textBytes += sl;
            }
            if ((emitMode & ME_CHUNKS) != 0 && sl != 0) {
              emit(MHEAD_PTR + 4, <usize>load<u32>(MHEAD_PTR));
              emit(sp, sl);
              emit(CONTENT_END, CONTENT_END_LEN);
              chunks++;
            }
          } else {
            const e = MGATHER_PTR + (<usize>g * MG_WORDS << 2);
            store<i32>(e, <i32>sp);
            store<i32>(e, <i32>sl, 4);
            store<i32>(e, <i32>jf, 8);
            g++;
          }
        }
        if ((emitMode & ME_PASS) != 0) emitData(p, n, 2);
        quiet++;
        prevEnd = lineEnd;
        continue;
      }
    }
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
    store<i32>(e, flags, MD_FLAGS << 2);
    nd = 1;
    k++;
    prevEnd = lineEnd;
    break;
  }
  res(MDR_DOCS, nd);
  res(MDR_NEXT, k);
  res(MDR_QUIET, quiet);
  res(MDR_BLANK, blank);
  res(MDR_COMMENTS, comments);
  res(MDR_CHUNKS, chunks);
  res(MDR_EMIT_PTR, <i32>emitStart());
  res(MDR_EMIT_LEN, <i32>emitLength());
  res(MDR_TEXT_BYTES, <i32>textBytes);
  res(MDR_HIGH, high ? 1 : 0);
  let units: i32 = -1;
  if ((emitMode & ME_GATHER) != 0 && nd == 0 && k == nrec && g != 0) {
    // the batch read to the end with nothing for JS: its text now (one ASCII span with no escape
    // is its own bytes, which JS reads as they are, unless the text is kept)
    const keep = (emitMode & ME_KEEP) != 0;
    if (keep || g > 1 || (load<i32>(MGATHER_PTR, 8) & (JF_ASCII | JF_ESCAPED)) != JF_ASCII) {
      units = <i32>modelGather(st, g, keep ? 1 : 0);
      g = 0;
    }
  }
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

/** The frame continuation after R_MORE (sseMore or linesMore) and the read of its batch, in one call. */
export function modelMore(st: usize, framing: i32, prog: usize, t: usize, choice: i32, emitMode: i32): i32 {
  const r = (framing & MK_LINES) != 0 ? linesMore(st) : sseMore(st);
  return readBatch(st, r, framing, prog, t, choice, emitMode);
}

/**
 * Writes the text of `n` string spans (gather entries: address, length, JSON flags) as one run of
 * UTF-16 units: escaped spans unescaped, the others transcoded. MGR_PTR is the run's address.
 * With `keep` (a raw model stream's text, kept for its report) the run is appended to the
 * stream's kept text (KEEP) instead of scratch, and MDR_TEXT_BYTES is its UTF-8 length (each
 * delta counted alone: a surrogate pair split between two deltas counts as two U+FFFD, as each
 * half is until its other half comes). Returns the number of units.
 */
export function modelGather(st: usize, n: i32, keep: i32): usize {
  let bytes: usize = 0;
  for (let i = 0; i < n; i++) bytes += <usize>load<i32>(MGATHER_PTR + (<usize>i * MG_WORDS << 2), 4);
  const room = (bytes << 1) + JSON_UTF16_SLACK;
  const kept = keep != 0 ? bLen(st, B_KEEP) : 0;
  const out = keep != 0 ? bEnsure(st, B_KEEP, kept + room) + kept : scratchFor(true, room);
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
    bSetLen(st, B_KEEP, kept + (o - out));
    res(MDR_TEXT_BYTES, <i32>utf8);
  }
  res(MGR_PTR, <i32>out);
  reportScratch();
  return (o - out) >> 1;
}

/** A raw model stream's kept text: MGR_PTR is the address of its units. Returns their number. */
export function modelKept(st: usize): usize {
  res(MGR_PTR, <i32>bPtr(st, B_KEEP));
  return bLen(st, B_KEEP) >> 1;
}

/** Gives back a raw model stream's kept text (JS took it). */
export function modelKeepFree(st: usize): void {
  bFree(st, B_KEEP);
}
