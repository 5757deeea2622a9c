// Model streams in the core: after a frame batch (SSE events or lines, framed on the byte-level
// path so that their bytes are UTF-8 in place), each event's data or line is read as one JSON
// document with a format's path program, in one call for the whole batch; and the string spans of
// a push's text are written out as one run of UTF-16 units, so that JS makes one string per push.
// Bytes in, records out; no strings.
import {
  DF_BLANK, DF_DONE, DF_ERROR, ENC_UTF8, FR_ENC, FR_RAW_PTR, IN_JOIN, IN_PTR, JF_ESCAPED, JREC_BYTES, JSON_READ_SLACK,
  JE_RECORDS, JSON_UTF16_SLACK, K_EVENT, K_MASK, LINE_REC_WORDS, LR_END, MDOC_CAP, MDOC_PTR, MDOC_WORDS, MDR_DOCS, MDR_NEXT, MD_FLAGS,
  MD_J0, MD_JN, MD_LEN, MD_PTR, MD_REC, MGATHER_PTR, MGR_PTR, MG_WORDS, MJREC_CAP, MJREC_PTR, MK_LINES, MK_STRIP_DATA,
  OUT_CAP, OUT_PTR, RES_PTR, R_RAW, SF_IN, SF_RAW, SPAN_PTR, SR_DATA0, SR_DATA1, SR_HEAD, SSE_REC_WORDS, IN_CAP,
} from './abi';
import { C_SPACE, copy, isDataField } from './frames';
import { jsonErrorAt, jsonRead, jsonUnescape } from './json';
import { release, res, reserve } from './runtime';
import { transcode } from './utf8';

// A block for documents that lie in a stream's own buffers (events larger than the output window):
// the reader needs JSON_READ_SLACK readable bytes past a document's end, which a heap block does
// not promise, so such a document is read from a copy.
let docScratch: usize = 0;
let docScratchCap: usize = 0;
// The UTF-16 units of a gather.
let textScratch: usize = 0;
let textScratchCap: usize = 0;

/** A heap block of at least `need` bytes in (ptr, cap) (kept for the next call, grown by 2×). */
function scratchFor(isText: bool, need: usize): usize {
  let ptr = isText ? textScratch : docScratch;
  let cap = isText ? textScratchCap : docScratchCap;
  if (need > cap) {
    let nc: usize = cap < 4096 ? 4096 : cap << 1;
    if (nc < need) nc = need;
    if (ptr != 0) {
      heap.free(ptr);
      release(cap);
    }
    reserve(nc);
    ptr = heap.alloc(nc);
    cap = nc;
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

/** Returns the scratch blocks to the heap (after a large event; the bindings call it). */
export function modelScratchFree(): void {
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

/** Bytes of scratch the model streams hold (for the bindings' retained-memory figures). */
export function modelScratchBytes(): u32 {
  return <u32>(docScratchCap + textScratchCap);
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

/**
 * Reads the JSON documents of the batch the last frame call wrote (records `first` to `nrec` − 1),
 * with the path program at `prog`: one document entry each (MD_*), and the JSON records in the
 * model record area. Stops before a document whose records would not fit; MDR_NEXT says where to
 * continue. `framing`: MK_SSE or MK_LINES, with MK_STRIP_DATA for lines that carry "data: ".
 * Returns the number of entries.
 */
export function modelDocs(first: i32, nrec: i32, framing: i32, prog: usize): i32 {
  const lines = (framing & MK_LINES) != 0;
  const strip = (framing & MK_STRIP_DATA) != 0;
  const rawLine = lines && (load<i32>(RES_PTR, 0) & R_RAW) != 0;
  let nd: i32 = 0;
  let jrec: u32 = 0;
  let k = first;
  let prevEnd: usize = 0;
  if (lines && k > 0) prevEnd = <usize>load<i32>(SPAN_PTR + (<usize>(k - 1) * LINE_REC_WORDS << 2), LR_END << 2);
  for (; k < nrec; k++) {
    let p: usize, n: usize;
    if (lines) {
      const end = <usize>load<i32>(SPAN_PTR + (<usize>k * LINE_REC_WORDS << 2), LR_END << 2);
      if (rawLine) {
        p = <usize>load<i32>(RES_PTR, FR_RAW_PTR << 2);
        n = end;
      } else {
        p = OUT_PTR + prevEnd;
        n = end - prevEnd;
      }
      prevEnd = end;
      if (strip && isDataField(p, p + n)) {
        let v: usize = 5;
        if (v < n && load<u8>(p + v) == C_SPACE) v++;
        p += v;
        n -= v;
      }
    } else {
      const r = SPAN_PTR + (<usize>k * SSE_REC_WORDS << 2);
      const head = load<i32>(r, SR_HEAD << 2);
      if ((head & K_MASK) != K_EVENT) continue;
      const d0 = load<i32>(r, SR_DATA0 << 2), d1 = load<i32>(r, SR_DATA1 << 2);
      n = <usize>(d1 - d0);
      p = (head & SF_RAW) != 0 ? <usize>d0 : (head & SF_IN) != 0 ? IN_PTR + <usize>d0 : OUT_PTR + <usize>d0;
    }
    let flags: i32 = 0;
    if (nd == MDOC_CAP) break;
    const inWindow = p >= IN_PTR - IN_JOIN && p + n <= IN_PTR + IN_CAP;
    if (!inWindow && (p < OUT_PTR || p + n > OUT_PTR + OUT_CAP)) {
      // unlikely: a document in a stream buffer or a raw line: read a copy with slack
      const s = scratchFor(false, n + JSON_READ_SLACK + 16);
      copy(s, p, n);
      p = s;
    }
    const e = MDOC_PTR + (<usize>nd * MDOC_WORDS << 2);
    store<i32>(e, k, MD_REC << 2);
    store<i32>(e, <i32>p, MD_PTR << 2);
    store<i32>(e, <i32>n, MD_LEN << 2);
    if (isDone(p, n)) flags = DF_DONE;
    else if (isBlank(p, n)) flags = DF_BLANK;
    if (flags != 0) {
      store<i32>(e, <i32>jrec, MD_J0 << 2);
      store<i32>(e, 0, MD_JN << 2);
    } else {
      const got = jsonRead(prog, p, n, MJREC_PTR + jrec * JREC_BYTES, <u32>MJREC_CAP - jrec);
      if (got == -JE_RECORDS && jrec != 0) break; // with earlier documents: continue in the next call
      if (got < 0) {
        flags = DF_ERROR;
        store<i32>(e, jsonErrorAt(), MD_J0 << 2);
        store<i32>(e, -got, MD_JN << 2);
      } else {
        store<i32>(e, <i32>jrec, MD_J0 << 2);
        store<i32>(e, got, MD_JN << 2);
        jrec += <u32>got;
      }
    }
    store<i32>(e, flags, MD_FLAGS << 2);
    nd++;
  }
  res(MDR_DOCS, nd);
  res(MDR_NEXT, k);
  return nd;
}

/**
 * Writes the text of `n` string spans (gather entries: address, length, JSON flags) as one run of
 * UTF-16 units: escaped spans unescaped, the others transcoded. MGR_PTR is the run's address.
 * Returns the number of units.
 */
export function modelGather(n: i32): usize {
  let bytes: usize = 0;
  for (let i = 0; i < n; i++) bytes += <usize>load<i32>(MGATHER_PTR + (<usize>i * MG_WORDS << 2), 4);
  const out = scratchFor(true, (bytes << 1) + JSON_UTF16_SLACK);
  let o = out;
  for (let i = 0; i < n; i++) {
    const g = MGATHER_PTR + (<usize>i * MG_WORDS << 2);
    const p = <usize>load<i32>(g), len = <usize>load<i32>(g, 4), f = load<i32>(g, 8);
    o += ((f & JF_ESCAPED) != 0 ? jsonUnescape(p, len, o) : transcode(p, p + len, o)) << 1;
  }
  res(MGR_PTR, <i32>out);
  return (o - out) >> 1;
}
