// Layer 2 (frames): AWS's binary event stream (application/vnd.amazon.eventstream), the framing of
// Bedrock's ConverseStream and InvokeModelWithResponseStream. A message is a 12-byte prelude
// (total length, headers length: big-endian u32; a CRC32 of those 8 bytes), its headers (name
// length u8, name, type u8, value: ten types), its payload, and a CRC32 of everything before it.
// Both CRCs are checked here (CRC-32/ISO-HDLC, slicing by 16); a total length past the stream's
// limit is an error as soon as the prelude is read, before a byte of the message is buffered.
//
// A push frames the `len` bytes at IN_PTR, with the message the last push ended inside (held in
// the stream's buffer): one record per whole message in the span area (ES_REC_WORDS each) and
// one entry per header in the header area (ESH_WORDS each), pointing at the bytes where they lie
// (the input window, or the buffer for the message that straddled pushes): valid until the next
// call. A message cut by the end of the push is held for the next one, in a buffer that grows
// with its bytes as they arrive (not with the length its prelude claims).
import {
  ESE_HEADER, ESE_HEADERS, ESE_LENGTH, ESE_LIMIT, ESE_MESSAGE_CRC, ESE_PRELUDE_CRC, ESH_NAME, ESH_NAME_LEN, ESH_TYPE, ESH_VALUE, ESH_VALUE_LEN,
  ESH_WORDS, ESR_ERR, ESR_ERR_AT, ESR_ERR_GOT, ESR_ERR_WANT, ESR_NHDR, ESR_NREC, ES_HDR_CAP, ES_HDR_PTR, ES_MT_ERROR, ES_MT_EVENT,
  ES_MT_EXCEPTION, ES_MT_NONE, ES_MT_OTHER, ER_EVENT, ER_EVENT_LEN, ER_HDR0, ER_LEN, ER_MESSAGE, ER_MESSAGE_LEN, ER_MTYPE, ER_NHDR,
  ER_PAYLOAD, ER_PAYLOAD_LEN, ER_START, ES_MAX_TYPE, ES_REC_WORDS, ES_STATE_BYTES, ESR_MAP, ESR_MAP_N, ESR_OUT, ESR_OUT_LEN, IN_PTR,
  R_MORE, SPAN_BYTES, SPAN_PTR, ESM_NONE, ESM_READ, ESM_WRITTEN, ESMR_MAP, ESMR_MAP_N, ESMR_OUT, ESMR_OUT_LEN, IN_CAP, RES_PTR,
  JF_ESCAPED, JK_STRING, JREC_BYTES, JREC_FLAGS_SHIFT, JREC_KIND_SHIFT, JR_END, JR_HEAD, JR_START, JSON_READ_SLACK, JSON_REC_PTR, ESC_NOT_JSON,
  ESC_NO_BYTES, ESC_NOT_STRING,
} from './abi';
import { jsonRead, specialSwar } from './json';
import { modelPush, modelPushAt } from './model';
import { noLineEnd } from './frames';
import { allocZeroed, freeRecord, release, reserve, res } from './runtime';
import { bytes16 } from './vectors';

/** The headers a reader of Bedrock's streams acts on. */
const ES_MESSAGE_TYPE = ':message-type';
const ES_EVENT = ':event-type';
const ES_EXCEPTION = ':exception-type';
const ES_ERROR_CODE = ':error-code';
const ES_ERROR_MESSAGE = ':error-message';
/** InvokeModelWithResponseStream's event type: a chunk of the model's own stream, `{"bytes": base64}`. */
const ES_CHUNK = 'chunk';

// ---- CRC32 (reflected 0xEDB88320), slicing by 16 -----------------------------------------------

/** Sixteen tables of 256 words: T[k][b] is the CRC of byte b followed by k zero bytes. */
const CRC_T: usize = memory.data(16 * 256 * 4, 16);
let crcReady = false;

function crcInit(): void {
  for (let i: u32 = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = (c & 1) != 0 ? 0xEDB88320 ^ (c >>> 1) : c >>> 1;
    store<u32>(CRC_T + (<usize>i << 2), c);
  }
  for (let t: usize = 1; t < 16; t++) {
    for (let i: usize = 0; i < 256; i++) {
      const prev = load<u32>(CRC_T + ((t - 1) << 10) + (i << 2));
      store<u32>(CRC_T + (t << 10) + (i << 2), (prev >>> 8) ^ load<u32>(CRC_T + (<usize>(prev & 0xFF) << 2)));
    }
  }
  crcReady = true;
}

// A word's byte k as its entry's byte offset in a table, in two instructions (shift, mask) where
// `(b & 0xFF) << 2` takes three; the table's address is the load's constant offset, not an add.
// @ts-ignore: decorator
@inline function at0(w: u32): usize { return <usize>((w << 2) & 0x3FC); }
// @ts-ignore: decorator
@inline function at1(w: u32): usize { return <usize>((w >>> 6) & 0x3FC); }
// @ts-ignore: decorator
@inline function at2(w: u32): usize { return <usize>((w >>> 14) & 0x3FC); }
// @ts-ignore: decorator
@inline function at3(w: u32): usize { return <usize>((w >>> 22) & 0x3FC); }

/** The CRC32 of the `n` bytes at `p`, continuing `crc` (0 to begin). */
export function crc32(p: usize, n: usize, crc: u32): u32 {
  if (!crcReady) crcInit();
  let c = ~crc;
  // slicing by 16: four words a step, each byte a lookup in its own table (1.2–1.3× slicing by 8
  // on Node 24 from 187 bytes to 64 KiB, 1.17–1.24× on Node 20; 16 KiB of tables). The twelve
  // lookups that do not need `c` are XORed first, in pairs, so that the step waits on `c` for one
  // lookup and three XORs, not a chain of sixteen (1.37–1.44× on Node 24, 1.07–1.23× on Node 20).
  while (n >= 16) {
    const b = load<u32>(p, 4);
    const d = load<u32>(p, 8);
    const e = load<u32>(p, 12);
    const x0 = load<u32>(at0(b), CRC_T + (11 << 10)) ^ load<u32>(at1(b), CRC_T + (10 << 10));
    const x1 = load<u32>(at2(b), CRC_T + (9 << 10)) ^ load<u32>(at3(b), CRC_T + (8 << 10));
    const x2 = load<u32>(at0(d), CRC_T + (7 << 10)) ^ load<u32>(at1(d), CRC_T + (6 << 10));
    const x3 = load<u32>(at2(d), CRC_T + (5 << 10)) ^ load<u32>(at3(d), CRC_T + (4 << 10));
    const x4 = load<u32>(at0(e), CRC_T + (3 << 10)) ^ load<u32>(at1(e), CRC_T + (2 << 10));
    const x5 = load<u32>(at2(e), CRC_T + (1 << 10)) ^ load<u32>(at3(e), CRC_T);
    const x = (x0 ^ x1) ^ (x2 ^ x3) ^ (x4 ^ x5);
    const a = load<u32>(p) ^ c;
    const y0 = load<u32>(at0(a), CRC_T + (15 << 10)) ^ load<u32>(at1(a), CRC_T + (14 << 10));
    const y1 = load<u32>(at2(a), CRC_T + (13 << 10)) ^ load<u32>(at3(a), CRC_T + (12 << 10));
    c = (x ^ y0) ^ y1;
    p += 16;
    n -= 16;
  }
  while (n >= 8) {
    const a = load<u32>(p) ^ c;
    const b = load<u32>(p, 4);
    c = load<u32>(at0(a), CRC_T + (7 << 10)) ^ load<u32>(at1(a), CRC_T + (6 << 10)) ^ load<u32>(at2(a), CRC_T + (5 << 10)) ^ load<u32>(at3(a), CRC_T + (4 << 10))
      ^ load<u32>(at0(b), CRC_T + (3 << 10)) ^ load<u32>(at1(b), CRC_T + (2 << 10)) ^ load<u32>(at2(b), CRC_T + (1 << 10)) ^ load<u32>(at3(b), CRC_T);
    p += 8;
    n -= 8;
  }
  while (n != 0) {
    c = load<u32>(at0(c ^ <u32>load<u8>(p)), CRC_T) ^ (c >>> 8);
    p++;
    n--;
  }
  return ~c;
}

// ---- the stream's state -----------------------------------------------------------------------

/** The buffer: the held message's bytes (from 0, or from O_HOLD after a message completed in it). */
const O_BUF: usize = 0;
const O_CAP: usize = 4;
/** Bytes of the held (unfinished) message. */
const O_HELD: usize = 8;
const O_MAX: usize = 12;
/** Where the held message begins in the buffer (a message that completed in it lies before). */
const O_HOLD: usize = 16;
/** A buffer replaced during the last call (its message's records pointed into it): freed by the next. */
const O_OLD: usize = 20;
const O_OLD_CAP: usize = 24;
/** Continuation after R_MORE: where the run goes on, and its end. */
const O_POS: usize = 28;
const O_END: usize = 32;
/** The events written for a model reader (esEvents): buffer, capacity, bytes; the map: buffer, capacity, entries. */
const O_OUT: usize = 36;
const O_OUT_CAP: usize = 40;
const O_OUT_LEN: usize = 44;
const O_MAP: usize = 48;
const O_MAP_CAP: usize = 52;
const O_MAP_N: usize = 56;

/** Bytes of a message's prelude, and of its smallest whole (prelude, no headers, no payload, its CRC). */
const PRELUDE: u32 = 12;
const MIN_MESSAGE: u32 = 16;
/** The buffer's first size. */
const MIN_CAP: usize = 256;

const REC_BYTES: usize = <usize>ES_REC_WORDS << 2;
const REC_MAX: i32 = <i32>(SPAN_BYTES / REC_BYTES);
const HDR_BYTES: usize = <usize>ESH_WORDS << 2;

let nrec: i32 = 0;
let nhdr: i32 = 0;

/** A new stream: frames of at most `max` bytes. */
export function esNew(max: u32): usize {
  if (!crcReady) crcInit();
  if (!wordsReady) wordsInit();
  const st = allocZeroed(ES_STATE_BYTES);
  store<u32>(st, max, O_MAX);
  return st;
}

/** Gives the stream's record and buffers back. */
export function esFree(st: usize): void {
  freeBuffers(st);
  freeRecord(st, ES_STATE_BYTES);
}

/** A new stream on the same record (the buffer is given back). */
export function esReset(st: usize): void {
  freeBuffers(st);
  store<u32>(st, 0, O_HELD);
  store<u32>(st, 0, O_HOLD);
}

/** Bytes held of an unfinished message. */
export function esHeld(st: usize): u32 {
  return load<u32>(st, O_HELD);
}

function freeBuffers(st: usize): void {
  freeBlock(st, O_BUF, O_CAP);
  dropOld(st);
  freeEvents(st);
}

function dropOld(st: usize): void {
  freeBlock(st, O_OLD, O_OLD_CAP);
}

/**
 * Room for `need` bytes from the buffer's start, where the held message ends at `most` once whole
 * (its claimed length, after the message before it when `keep`). The buffer grows with the bytes
 * that have arrived, not with the length a prelude claims: when it must grow it at least doubles
 * (a message that arrives in many reads is copied O(its length) times in all, not per read), up
 * to `most` and the JSON reader's slack after it (a chunk's payload is read where it lies), never
 * under MIN_CAP. `keep`: the bytes before O_HOLD are a message this call reported (its records
 * point into them), so the buffer is not moved: a new one is made for the held bytes, and the old
 * one kept until the next call.
 */
function room(st: usize, need: usize, most: usize, keep: bool): usize {
  const cap = <usize>load<u32>(st, O_CAP);
  let b = <usize>load<u32>(st, O_BUF);
  // (a message whole once these bytes are in: the JSON reader's slack after it, as the payload of
  // a chunk is read where it lies, and a read past the buffer could pass the memory's end)
  const want = need >= most ? need + <usize>JSON_READ_SLACK : need;
  if (want <= cap) return b;
  let nc = cap << 1;
  if (nc < want) nc = want;
  const top = most + <usize>JSON_READ_SLACK;
  if (nc > top) nc = top;
  if (nc < MIN_CAP) nc = MIN_CAP;
  if (keep && b != 0) {
    dropOld(st);
    store<u32>(st, <u32>b, O_OLD);
    store<u32>(st, <u32>cap, O_OLD_CAP);
    reserve(nc);
    b = heap.alloc(nc);
  } else {
    reserve(nc);
    b = b == 0 ? heap.alloc(nc) : heap.realloc(b, nc);
    release(cap);
  }
  store<u32>(st, <u32>b, O_BUF);
  store<u32>(st, <u32>nc, O_CAP);
  return b;
}

// @ts-ignore: decorator
@inline function be32(p: usize): u32 {
  return bswap<u32>(load<u32>(p));
}

/** Stops the call with error `code` for the message at `rel` (relative to IN_PTR). */
function fail(code: i32, rel: i32, want: u32, got: u32): i32 {
  res(ESR_ERR, code);
  res(ESR_ERR_AT, rel);
  res(ESR_ERR_WANT, <i32>want);
  res(ESR_ERR_GOT, <i32>got);
  return done(0);
}

function done(status: i32): i32 {
  res(ESR_NREC, nrec);
  res(ESR_NHDR, nhdr);
  return status;
}

/** Checks the prelude at `p` (12 bytes there): 0, or the error it is (reported). */
function prelude(st: usize, p: usize, rel: i32): i32 {
  const total = be32(p);
  const hl = be32(p + 4);
  const want = be32(p + 8);
  const got = crc32(p, 8, 0);
  if (want != got) return fail(ESE_PRELUDE_CRC, rel, want, got) | 0x100;
  if (total > load<u32>(st, O_MAX)) return fail(ESE_LIMIT, rel, total, load<u32>(st, O_MAX)) | 0x100;
  if (total < MIN_MESSAGE || hl > total - MIN_MESSAGE) return fail(ESE_LENGTH, rel, total, hl) | 0x100;
  return 0;
}

// The words a message's headers are compared with, each kept as its length and its first and last
// 8 bytes (4 for a word under 8 bytes; every word here is 4 to 16 bytes): a name or value is one of
// them when its length and those two loads are equal.
const W_MESSAGE_TYPE = 0;
const W_EVENT_TYPE = 1;
const W_EXCEPTION_TYPE = 2;
const W_ERROR_CODE = 3;
const W_ERROR_MESSAGE = 4;
const W_EVENT = 5;
const W_EXCEPTION = 6;
const W_ERROR = 7;
const W_CHUNK = 8;
const WORD_BYTES: usize = 24;
const WORDS: usize = memory.data(9 * <i32>WORD_BYTES, 8);
let wordsReady = false;

function wordsInit(): void {
  word(W_MESSAGE_TYPE, ES_MESSAGE_TYPE);
  word(W_EVENT_TYPE, ES_EVENT);
  word(W_EXCEPTION_TYPE, ES_EXCEPTION);
  word(W_ERROR_CODE, ES_ERROR_CODE);
  word(W_ERROR_MESSAGE, ES_ERROR_MESSAGE);
  word(W_EVENT, 'event');
  word(W_EXCEPTION, 'exception');
  word(W_ERROR, 'error');
  word(W_CHUNK, ES_CHUNK);
  wordsReady = true;
}

function word(k: i32, w: string): void {
  const n = w.length;
  assert(n >= 4 && n <= 16);
  const m = n >= 8 ? 8 : 4;
  let lo: u64 = 0, hi: u64 = 0;
  for (let i = 0; i < m; i++) {
    lo |= <u64>w.charCodeAt(i) << (<u64>i << 3);
    hi |= <u64>w.charCodeAt(n - m + i) << (<u64>i << 3);
  }
  const e = WORDS + <usize>k * WORD_BYTES;
  store<u64>(e, <u64>n);
  store<u64>(e, lo, 8);
  store<u64>(e, hi, 16);
}

/** Whether the `n` bytes at `p` are word `k`. */
// @ts-ignore: decorator
@inline function isWord(p: usize, n: usize, k: i32): bool {
  const e = WORDS + <usize>k * WORD_BYTES;
  if (<u64>n != load<u64>(e)) return false;
  if (n >= 8) return load<u64>(p) == load<u64>(e, 8) && load<u64>(p + n - 8) == load<u64>(e, 16);
  return <u64>load<u32>(p) == load<u64>(e, 8) && <u64>load<u32>(p + n - 4) == load<u64>(e, 16);
}

/**
 * Reads the whole message at `p` (its prelude checked): its CRC, its headers, its record.
 * Returns 0, or the error it is (reported).
 */
function message(p: usize, rel: i32): i32 {
  const total = be32(p);
  const hl = be32(p + 4);
  const want = be32(p + <usize>total - 4);
  // (the first 8 bytes' CRC is the prelude's, checked equal to the one sent: the message's CRC continues from it)
  const got = crc32(p + 8, <usize>total - 12, be32(p + 8));
  if (want != got) return fail(ESE_MESSAGE_CRC, rel, want, got) | 0x100;
  const r = SPAN_PTR + <usize>nrec * REC_BYTES;
  const hdr0 = nhdr;
  let h = p + PRELUDE;
  const he = h + <usize>hl;
  let mtype = ES_MT_NONE;
  let ev: usize = 0, evLen: i32 = 0, msg: usize = 0, msgLen: i32 = 0;
  while (h < he) {
    const nl = <usize>load<u8>(h);
    const name = h + 1;
    h = name + nl;
    if (h >= he) return fail(ESE_HEADER, rel, <u32>(name - 1 - p), 0) | 0x100;
    const t = <i32>load<u8>(h);
    h++;
    let v = h;
    let vl: usize = 0;
    switch (t) {
      case 0: case 1: break;
      case 2: vl = 1; break;
      case 3: vl = 2; break;
      case 4: vl = 4; break;
      case 5: case 8: vl = 8; break;
      case 9: vl = 16; break;
      case 6: case 7: {
        if (h + 2 > he) return fail(ESE_HEADER, rel, <u32>(name - 1 - p), 0) | 0x100;
        vl = <usize>bswap<u16>(load<u16>(h));
        v = h + 2;
        break;
      }
      default: return fail(ESE_HEADER, rel, <u32>(name - 1 - p), <u32>t) | 0x100;
    }
    if (v + vl > he) return fail(ESE_HEADER, rel, <u32>(name - 1 - p), 0) | 0x100;
    if (nhdr == ES_HDR_CAP) {
      // no room: the message goes to the next call, or (alone in this one) has more headers than any call takes
      if (hdr0 == 0) return fail(ESE_HEADERS, rel, <u32>ES_HDR_CAP, 0) | 0x100;
      nhdr = hdr0;
      return -1;
    }
    const e = ES_HDR_PTR + <usize>nhdr * HDR_BYTES;
    store<i32>(e, <i32>name, ESH_NAME << 2);
    store<i32>(e, <i32>nl, ESH_NAME_LEN << 2);
    store<i32>(e, t, ESH_TYPE << 2);
    store<i32>(e, <i32>v, ESH_VALUE << 2);
    store<i32>(e, <i32>vl, ESH_VALUE_LEN << 2);
    nhdr++;
    if (t == 7 && nl > 5 && load<u8>(name) == 0x3A) {
      // the headers a reader of Bedrock's streams acts on (the last of a name wins, as in AWS's codec)
      if (isWord(name, nl, W_MESSAGE_TYPE)) {
        mtype = isWord(v, vl, W_EVENT) ? ES_MT_EVENT : isWord(v, vl, W_EXCEPTION) ? ES_MT_EXCEPTION : isWord(v, vl, W_ERROR) ? ES_MT_ERROR : ES_MT_OTHER;
      } else if (isWord(name, nl, W_EVENT_TYPE) || isWord(name, nl, W_EXCEPTION_TYPE) || isWord(name, nl, W_ERROR_CODE)) {
        // :event-type for an event, :exception-type for an exception, :error-code for an error: the message's kind
        ev = v;
        evLen = <i32>vl;
      } else if (isWord(name, nl, W_ERROR_MESSAGE)) {
        msg = v;
        msgLen = <i32>vl;
      }
    }
    h = v + vl;
  }
  store<i32>(r, rel, ER_START << 2);
  store<i32>(r, <i32>total, ER_LEN << 2);
  store<i32>(r, <i32>(p + PRELUDE + <usize>hl), ER_PAYLOAD << 2);
  store<i32>(r, <i32>(total - MIN_MESSAGE - hl), ER_PAYLOAD_LEN << 2);
  store<i32>(r, hdr0, ER_HDR0 << 2);
  store<i32>(r, nhdr - hdr0, ER_NHDR << 2);
  store<i32>(r, mtype, ER_MTYPE << 2);
  store<i32>(r, <i32>ev, ER_EVENT << 2);
  store<i32>(r, evLen, ER_EVENT_LEN << 2);
  store<i32>(r, <i32>msg, ER_MESSAGE << 2);
  store<i32>(r, msgLen, ER_MESSAGE_LEN << 2);
  nrec++;
  return 0;
}

/** Frames the `len` bytes at IN_PTR after what is held. Returns R_MORE when the call ran out of room (then esMore). */
export function esPush(st: usize, len: usize): i32 {
  nrec = 0;
  nhdr = 0;
  res(ESR_ERR, 0);
  dropOld(st);
  let held = <usize>load<u32>(st, O_HELD);
  let hold = <usize>load<u32>(st, O_HOLD);
  if (hold != 0) {
    // the held message after one that completed in the buffer last call: to the buffer's start
    const b = <usize>load<u32>(st, O_BUF);
    memory.copy(b, b + hold, held);
    store<u32>(st, 0, O_HOLD);
  }
  let p = IN_PTR;
  const end = IN_PTR + len;
  let keep = false;
  if (held != 0) {
    // the held message: its prelude first, then the rest of it
    const rel = -<i32>held;
    if (held < PRELUDE) {
      const take = min(<usize>PRELUDE - held, end - p);
      const b = room(st, <usize>PRELUDE, <usize>PRELUDE, false);
      memory.copy(b + held, p, take);
      p += take;
      held += take;
      store<u32>(st, <u32>held, O_HELD);
      if (held < PRELUDE) return done(0);
      const e = prelude(st, b, rel);
      if (e != 0) {
        store<u32>(st, 0, O_HELD); // (nothing of a refused message stays held)
        return e & 0xFF;
      }
    }
    const b0 = <usize>load<u32>(st, O_BUF);
    const total = <usize>be32(b0);
    const take = min(total - held, end - p);
    const b = room(st, held + take, total, false); // (what has arrived of it)
    memory.copy(b + held, p, take);
    p += take;
    held += take;
    store<u32>(st, <u32>held, O_HELD);
    if (held < total) return done(0);
    store<u32>(st, 0, O_HELD);
    held = 0;
    const e = message(b, rel);
    if (e > 0) return e & 0xFF;
    keep = true;
    store<u32>(st, <u32>total, O_HOLD); // (where a message held at the end of this call begins)
  }
  return run(st, p, end, keep);
}

/** Continues after R_MORE (the records of the last call are read). */
export function esMore(st: usize): i32 {
  nrec = 0;
  nhdr = 0;
  res(ESR_ERR, 0);
  store<u32>(st, 0, O_HOLD);
  return run(st, <usize>load<u32>(st, O_POS), <usize>load<u32>(st, O_END), false);
}

function run(st: usize, p: usize, end: usize, keep: bool): i32 {
  while (end - p >= <usize>PRELUDE) {
    const rel = <i32>(p - IN_PTR);
    const e = prelude(st, p, rel);
    if (e != 0) return e & 0xFF;
    const total = <usize>be32(p);
    if (end - p < total) break;
    if (nrec == REC_MAX) return more(st, p, end);
    const m = message(p, rel);
    if (m < 0) return more(st, p, end);
    if (m != 0) return m & 0xFF;
    p += total;
  }
  const n = end - p;
  if (n != 0) {
    // the message cut by the end of the push: its bytes held (its prelude, when whole here, was
    // checked), in room for what arrived of it, not for the length it claims
    const most = n < <usize>PRELUDE ? <usize>PRELUDE : <usize>be32(p);
    const hold = keep ? <usize>load<u32>(st, O_HOLD) : 0;
    const before = <usize>load<u32>(st, O_BUF);
    const b = room(st, hold + n, hold + most, keep);
    const at: usize = b != before ? 0 : hold; // (a new buffer: the held bytes from its start)
    memory.copy(b + at, p, n);
    store<u32>(st, <u32>at, O_HOLD);
    store<u32>(st, <u32>n, O_HELD);
  } else {
    store<u32>(st, 0, O_HOLD);
  }
  return done(0);
}

function more(st: usize, p: usize, end: usize): i32 {
  store<u32>(st, <u32>p, O_POS);
  store<u32>(st, <u32>end, O_END);
  return done(R_MORE);
}

// ---- the events a model reader reads (Bedrock) ------------------------------------------------

/** Event buffers past this size are given back when emptied (a large read's or message's events). */
const KEEP_EVENTS: u32 = 4096;
const MAP_ENTRY: usize = 16;

function freeEvents(st: usize): void {
  freeBlock(st, O_OUT, O_OUT_CAP);
  freeBlock(st, O_MAP, O_MAP_CAP);
  store<u32>(st, 0, O_OUT_LEN);
  store<u32>(st, 0, O_MAP_N);
}

/** Gives back the heap block whose address and capacity the state keeps at offsets `at` and `capAt`. */
function freeBlock(st: usize, at: usize, capAt: usize): void {
  const b = <usize>load<u32>(st + at);
  if (b == 0) return;
  heap.free(b);
  release(<usize>load<u32>(st + capAt));
  store<u32>(st + at, 0);
  store<u32>(st + capAt, 0);
}

/** Room for `n` more bytes after `used` in the block at `at`: its address. */
function grow(st: usize, at: usize, capAt: usize, used: usize, n: usize): usize {
  let b = <usize>load<u32>(st + at);
  const cap = <usize>load<u32>(st + capAt);
  if (used + n <= cap) return b;
  let nc = cap < 1024 ? <usize>1024 : cap << 1;
  if (nc < used + n) nc = used + n;
  reserve(nc);
  b = b == 0 ? heap.alloc(nc) : heap.realloc(b, nc);
  release(cap);
  store<u32>(st + at, <u32>b);
  store<u32>(st + capAt, <u32>nc);
  return b;
}

/** Empties the event buffer and its map (a large one is given back). */
export function esClear(st: usize): void {
  if (load<u32>(st, O_OUT_CAP) > KEEP_EVENTS) freeBlock(st, O_OUT, O_OUT_CAP);
  if (load<u32>(st, O_MAP_CAP) > KEEP_EVENTS) freeBlock(st, O_MAP, O_MAP_CAP);
  store<u32>(st, 0, O_OUT_LEN);
  store<u32>(st, 0, O_MAP_N);
}

function eventsRes(st: usize): void {
  res(ESR_OUT, <i32>load<u32>(st, O_OUT));
  res(ESR_OUT_LEN, <i32>load<u32>(st, O_OUT_LEN));
  res(ESR_MAP, <i32>load<u32>(st, O_MAP));
  res(ESR_MAP_N, <i32>load<u32>(st, O_MAP_N));
}

/** A map entry for the event that begins now, from the message at absolute offset `at`. */
function mapAdd(st: usize, at: f64): void {
  const n = <usize>load<u32>(st, O_MAP_N);
  const m = grow(st, O_MAP, O_MAP_CAP, n * MAP_ENTRY, MAP_ENTRY) + n * MAP_ENTRY;
  store<f64>(m, <f64>load<u32>(st, O_OUT_LEN));
  store<f64>(m, at, 8);
  store<u32>(st, <u32>(n + 1), O_MAP_N);
}

/** Line breaks (CR, LF, CRLF as one) in the n bytes at p. */
function lineBreaks(p: usize, n: usize): usize {
  if (noLineEnd(p, p + n)) return 0;
  let k: usize = 0;
  const end = p + n;
  for (; p < end; p++) {
    const b = load<u8>(p);
    if (b == 0x0A) k++;
    else if (b == 0x0D) {
      k++;
      if (p + 1 < end && load<u8>(p + 1) == 0x0A) p++;
    }
  }
  return k;
}

/** Writes the n bytes at p as SSE data at o (room made: n + 7 per line break): a line break begins another `data: ` line. Returns the end. */
function dataLines(o: usize, p: usize, n: usize, breaks: usize): usize {
  if (breaks == 0) {
    memory.copy(o, p, n);
    return o + n;
  }
  const end = p + n;
  let from = p;
  for (let i = p; i < end; i++) {
    const b = load<u8>(i);
    if (b != 0x0A && b != 0x0D) continue;
    memory.copy(o, from, i - from);
    o += i - from;
    store<u8>(o, 0x0A);
    store<u32>(o + 1, 0x61746164); // data
    store<u16>(o + 5, 0x203A); // ": "
    o += 7;
    if (b == 0x0D && i + 1 < end && load<u8>(i + 1) == 0x0A) i++;
    from = i + 1;
  }
  memory.copy(o, from, end - from);
  return o + (end - from);
}

/** The bytes of the UTF-8 sequence at p (< end) when valid, else 0 — and, through `bad`, how many bytes its maximal invalid subpart takes. */
let badLen: usize = 0;
function seqLen(p: usize, end: usize): usize {
  const b0 = <u32>load<u8>(p);
  let need: usize = 0;
  let lo: u32 = 0x80, hi: u32 = 0xBF;
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) need = 1;
  else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2;
    if (b0 == 0xE0) lo = 0xA0;
    else if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3;
    if (b0 == 0xF0) lo = 0x90;
    else if (b0 == 0xF4) hi = 0x8F;
  } else {
    badLen = 1;
    return 0;
  }
  for (let i: usize = 1; i <= need; i++) {
    if (p + i >= end) { badLen = i; return 0; }
    const c = <u32>load<u8>(p + i);
    if (c < lo || c > hi) { badLen = i; return 0; }
    lo = 0x80;
    hi = 0xBF;
  }
  return need + 1;
}

const HEX: string = '0123456789abcdef';
/** Whether the n bytes at p are printable ASCII with no `"` or `\\` (a JSON string's bytes as they are), eight at a time. */
function plainJson(p: usize, n: usize): bool {
  const end = p + n;
  for (; p + 8 <= end; p += 8) {
    const x = load<u64>(p);
    // a byte the JSON reader stops a string at (`"`, `\\`, under 0x20), or one from 0x80
    if ((specialSwar(x) | (x & 0x8080808080808080)) != 0) return false;
  }
  for (; p < end; p++) {
    const b = load<u8>(p);
    if (b < 0x20 || b >= 0x80 || b == 0x22 || b == 0x5C) return false;
  }
  return true;
}

/**
 * Writes the n bytes at p (an event type: a header's string) at o as a JSON string, as
 * JSON.stringify writes the text a UTF-8 decoder that replaces makes of them: `"` and `\`
 * escaped, control characters as \b \f \n \r \t or \u00XX, each maximal invalid subpart as
 * U+FFFD (a name with none of these, as event types are, is copied as it is). Room: n * 6 + 2.
 * Returns the end.
 */
function jsonName(o: usize, p: usize, n: usize): usize {
  store<u8>(o++, 0x22);
  const end = p + n;
  if (plainJson(p, n)) {
    memory.copy(o, p, n);
    store<u8>(o + n, 0x22);
    return o + n + 1;
  }
  while (p < end) {
    const b = <u32>load<u8>(p);
    if (b >= 0x20 && b < 0x80) {
      if (b == 0x22 || b == 0x5C) store<u8>(o++, 0x5C);
      store<u8>(o++, <u8>b);
      p++;
    } else if (b < 0x20) {
      store<u8>(o++, 0x5C);
      if (b == 0x08) store<u8>(o++, 0x62);
      else if (b == 0x0C) store<u8>(o++, 0x66);
      else if (b == 0x0A) store<u8>(o++, 0x6E);
      else if (b == 0x0D) store<u8>(o++, 0x72);
      else if (b == 0x09) store<u8>(o++, 0x74);
      else {
        store<u32>(o, 0x30303075); // u000
        store<u8>(o + 3, <u8>HEX.charCodeAt(<i32>(b >> 4)));
        store<u8>(o + 4, <u8>HEX.charCodeAt(<i32>(b & 15)));
        o += 5;
      }
      p++;
    } else {
      const k = seqLen(p, end);
      if (k != 0) {
        memory.copy(o, p, k);
        o += k;
        p += k;
      } else {
        store<u8>(o, 0xEF);
        store<u8>(o + 1, 0xBF);
        store<u8>(o + 2, 0xBD);
        o += 3;
        p += badLen;
      }
    }
  }
  store<u8>(o++, 0x22);
  return o;
}

/** Whether the message of record `r` is one esEvents leaves to its caller: an exception, an error, an event type past ES_MAX_TYPE. */
// @ts-ignore: decorator
@inline function callersMessage(r: usize): bool {
  const mt = load<i32>(r, ER_MTYPE << 2);
  // (an exception or error; an event type too long; a message of no type or another, which AWS's
  // SDKs refuse too: all end the stream, in the caller's words)
  return mt != ES_MT_EVENT || load<i32>(r, ER_EVENT_LEN << 2) > ES_MAX_TYPE;
}

/**
 * After esPush or esMore: writes the event messages among its records from record `from` on as
 * the events a model reader reads, `base` the absolute offset IN_PTR stands for. Stops at a
 * message that is not an event (an exception, an error, a message of no `:message-type` or
 * another), or an event type longer than ES_MAX_TYPE: returns its record's index for the caller,
 * or the records' number when all were written.
 */
export function esEvents(st: usize, from: i32, base: f64): i32 {
  let k = from;
  for (; k < nrec; k++) {
    const r = SPAN_PTR + <usize>k * REC_BYTES;
    if (callersMessage(r)) break;
    const tl = load<i32>(r, ER_EVENT_LEN << 2);
    const p = <usize>load<i32>(r, ER_PAYLOAD << 2);
    const n = <usize>load<i32>(r, ER_PAYLOAD_LEN << 2);
    const breaks = lineBreaks(p, n);
    mapAdd(st, base + <f64>load<i32>(r, ER_START << 2));
    const used = <usize>load<u32>(st, O_OUT_LEN);
    // (then the JSON reader's slack, as the events may be read here: modelPushAt)
    const b = grow(st, O_OUT, O_OUT_CAP, used, 7 + <usize>tl * 6 + 3 + (n == 0 ? 2 : n + breaks * 7) + 3 + <usize>JSON_READ_SLACK);
    let o = b + used;
    store<u32>(o, 0x61746164); // data
    store<u16>(o + 4, 0x203A); // ": "
    store<u8>(o + 6, 0x7B); // {
    o = jsonName(o + 7, <usize>load<i32>(r, ER_EVENT << 2), <usize>tl);
    store<u8>(o++, 0x3A); // :
    if (n == 0) {
      store<u16>(o, 0x7D7B); // {}
      o += 2;
    } else {
      o = dataLines(o, p, n, breaks);
    }
    store<u8>(o, 0x7D); // }
    store<u16>(o + 1, 0x0A0A);
    store<u32>(st, <u32>(o + 3 - b), O_OUT_LEN);
    dataSpan(used + 6, o + 1 - (b + used + 6), breaks == 0);
  }
  eventsRes(st);
  return k;
}

/**
 * The events esModelPush wrote (esEvents, chunkEvents), up to DATA_MAX: each one's data value as
 * its offset in the event buffer and its length, for modelPushAt to read them where they lie.
 */
const DATA_MAX: usize = 16;
const DATA_SPANS: usize = memory.data(<i32>DATA_MAX << 3);
/** The events counted since esModelPush began; past DATA_MAX (none can be read in place then), for an event whose value is not one data line too. */
let dataN: usize = 0;

/** An event's data value: `n` bytes from offset `v` of the event buffer (an offset: the buffer may move as it grows); `whole` false when it was written as several data lines. */
// @ts-ignore: decorator
@inline function dataSpan(v: usize, n: usize, whole: bool): void {
  if (dataN < DATA_MAX) {
    const e = DATA_SPANS + (dataN << 3);
    store<u32>(e, <u32>v);
    store<u32>(e, <u32>n, 4);
  }
  dataN = whole ? dataN + 1 : DATA_MAX + 1;
}

/**
 * Bedrock's usual read in one call: frames the `len` bytes at IN_PTR (esPush on `es`); when that
 * needs no continuation, found no damage, and every message it completed is an event of a type a
 * model stream has (no exception or error), writes their events (esEvents, `base` the absolute
 * offset IN_PTR stands for) and reads them where they lie with the model stream `st` (modelPushAt,
 * with the arguments after `st`; where that declines them, a copy in the input window, modelPush). Returns modelPush's status | ESM_READ,
 * the event buffer in ESMR_*; ESM_NONE when no event came, ESM_WRITTEN when the events are larger
 * than the window (both: the event buffer in ESR_OUT…, for the caller to read); otherwise esPush's
 * status, its records and results left to the caller as after esPush. With `chunks` (the path
 * program of a chunk's `bytes`: InvokeModelWithResponseStream), the events are the chunks' decoded
 * bytes (chunkEvents), and a chunk that one does not take leaves the read to the caller too.
 */
export function esModelPush(es: usize, len: usize, base: f64, st: usize, mode: u32, framing: i32, prog: usize, t: usize, choice: i32, emitMode: i32, chunks: usize): i32 {
  esClear(es);
  const r = esPush(es, len);
  if (r != 0 || load<i32>(RES_PTR, ESR_ERR << 2) != 0) return r;
  for (let k = 0; k < nrec; k++) if (callersMessage(SPAN_PTR + <usize>k * REC_BYTES)) return r;
  dataN = 0;
  if (chunks == 0) {
    esEvents(es, 0, base);
  } else if (!chunkEvents(es, base, chunks)) {
    esClear(es);
    return r;
  }
  const n = <usize>load<u32>(es, O_OUT_LEN);
  if (n == 0) return ESM_NONE;
  if (n > IN_CAP) return ESM_WRITTEN;
  // (the events are read where they were written: the window's copy and its scan for line ends are not needed)
  let status = dataN <= DATA_MAX ? modelPushAt(st, <usize>load<u32>(es, O_OUT), n, DATA_SPANS, dataN, mode, framing, prog, t, choice, emitMode) : -1;
  if (status < 0) {
    memory.copy(IN_PTR, <usize>load<u32>(es, O_OUT), n);
    status = modelPush(st, n, mode, framing, prog, t, choice, emitMode);
  }
  res(ESMR_OUT, <i32>load<u32>(es, O_OUT));
  res(ESMR_OUT_LEN, <i32>n);
  res(ESMR_MAP, <i32>load<u32>(es, O_MAP));
  res(ESMR_MAP_N, <i32>load<u32>(es, O_MAP_N));
  return status | ESM_READ;
}

/**
 * InvokeModelWithResponseStream's usual read, after esPush: each `chunk` event's payload read by
 * the path program `prog` (its `bytes`), the base64 decoded straight into the event buffer as one
 * event (`data: ` and the model's own event), as the caller's reading of the records does with
 * jsonRead, b64Decode and esData; events of other types skipped, as there. False, with
 * some events written (the caller empties the buffer), at a chunk it leaves to the caller: a
 * payload that is not JSON or has no plain `bytes` string (none, another kind, or with an escape),
 * base64 that is not, or decoded bytes that hold a line break (esData writes those as data lines).
 */
function chunkEvents(st: usize, base: f64, prog: usize): bool {
  for (let k = 0; k < nrec; k++) {
    const r = SPAN_PTR + <usize>k * REC_BYTES;
    // (every record is an event message here: esModelPush leaves a read with any other message to the caller)
    if (!isWord(<usize>load<i32>(r, ER_EVENT << 2), <usize>load<i32>(r, ER_EVENT_LEN << 2), W_CHUNK)) continue;
    const p = <usize>load<i32>(r, ER_PAYLOAD << 2);
    const j = esChunkBytes(prog, p, <usize>load<i32>(r, ER_PAYLOAD_LEN << 2));
    if (j < 0) return false;
    const jr = JSON_REC_PTR + <usize>j * JREC_BYTES;
    if (((load<u32>(jr, JR_HEAD << 2) >>> JREC_FLAGS_SHIFT) & JF_ESCAPED) != 0) return false;
    const from = p + <usize>load<i32>(jr, JR_START << 2);
    const n = <usize>(load<i32>(jr, JR_END << 2) - load<i32>(jr, JR_START << 2));
    mapAdd(st, base + <f64>load<i32>(r, ER_START << 2));
    const used = <usize>load<u32>(st, O_OUT_LEN);
    // (decoded: at most n bytes; then the JSON reader's slack, as the events are read here: modelPushAt)
    const b = grow(st, O_OUT, O_OUT_CAP, used, 6 + n + 2 + <usize>JSON_READ_SLACK);
    const o = b + used;
    const d = b64Decode(from, n, o + 6);
    if (d < 0 || (b64Low && !noLineEnd(o + 6, o + 6 + <usize>d))) return false;
    store<u32>(o, 0x61746164); // data
    store<u16>(o + 4, 0x203A); // ": "
    store<u16>(o + 6 + <usize>d, 0x0A0A);
    store<u32>(st, <u32>(used + 8 + <usize>d), O_OUT_LEN);
    dataSpan(used + 6, <usize>d, true);
  }
  eventsRes(st);
  return true;
}

/** The records a chunk's payload is read into. */
const CHUNK_RECS: u32 = 16;

/**
 * A chunk's payload (`n` bytes at `p`) read by the path program `prog`, whose path 0 is `bytes`,
 * into the JSON record area: the index of the `bytes` string's record there, or ESC_NOT_JSON,
 * ESC_NO_BYTES or ESC_NOT_STRING. (chunkEvents, and the caller's reading of the chunks it leaves.)
 */
export function esChunkBytes(prog: usize, p: usize, n: usize): i32 {
  const m = jsonRead(prog, p, n, JSON_REC_PTR, CHUNK_RECS);
  if (m < 0) return ESC_NOT_JSON;
  for (let j = 0; j < m; j++) {
    const head = load<u32>(JSON_REC_PTR + <usize>j * JREC_BYTES, JR_HEAD << 2);
    if ((head & 0xFFFF) != 0) continue;
    return ((head >>> JREC_KIND_SHIFT) & 0xFF) == JK_STRING ? j : ESC_NOT_STRING;
  }
  return ESC_NO_BYTES;
}

/** Whether the `n` bytes at `p` (a message's event type) name InvokeModelWithResponseStream's chunk: for the caller's reading of the messages chunkEvents leaves to it. */
export function esIsChunk(p: usize, n: usize): bool {
  if (!wordsReady) wordsInit();
  return isWord(p, n, W_CHUNK);
}

/** Writes the n bytes at p (a chunk's decoded bytes) as one event, from the message at absolute offset `at`. */
export function esData(st: usize, p: usize, n: usize, at: f64): void {
  const breaks = lineBreaks(p, n);
  mapAdd(st, at);
  const used = <usize>load<u32>(st, O_OUT_LEN);
  const b = grow(st, O_OUT, O_OUT_CAP, used, 6 + n + breaks * 7 + 2);
  let o = b + used;
  store<u32>(o, 0x61746164); // data
  store<u16>(o + 4, 0x203A); // ": "
  o = dataLines(o + 6, p, n, breaks);
  store<u16>(o, 0x0A0A);
  store<u32>(st, <u32>(o + 2 - b), O_OUT_LEN);
  eventsRes(st);
}

// ---- base64 (Bedrock's InvokeModelWithResponseStream: each chunk's `bytes`) -------------------

/** The value of each base64 byte (RFC 4648, the standard alphabet), 0xFF for a byte that is not one. */
const B64: usize = memory.data(256, 16);
let b64Ready = false;

function b64Init(): void {
  memory.fill(B64, 0xFF, 256);
  for (let i = 0; i < 26; i++) {
    store<u8>(B64 + 65 + <usize>i, <u8>i);
    store<u8>(B64 + 97 + <usize>i, <u8>(26 + i));
  }
  for (let i = 0; i < 10; i++) store<u8>(B64 + 48 + <usize>i, <u8>(52 + i));
  store<u8>(B64 + 43, 62);
  store<u8>(B64 + 47, 63);
  b64Ready = true;
}

/**
 * The vectors b64Simd works with (with `/` and the nibble mask from assembly/vectors.ts), read from
 * memory where the loop begins: as constants in the loop, V8 makes each again in every step (2.4×
 * slower on Node 24). Each byte's low and high nibble
 * select a bit set whose AND is zero only for a base64 byte; the high nibble (one less for `/`)
 * selects what to add to a byte to make its value.
 */
const B64V: usize = memory.data<u8>([
  0x15, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x13, 0x1A, 0x1B, 0x1B, 0x1B, 0x1A, // by the low nibble
  0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x08, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, // by the high nibble
  0, 16, 19, 4, 0xBF, 0xBF, 0xB9, 0xB9, 0, 0, 0, 0, 0, 0, 0, 0, // what to add: `/`, `+`, digits, A–Z, a–z
  0xFF, 0, 0xFF, 0, 0xFF, 0, 0xFF, 0, 0xFF, 0, 0xFF, 0, 0xFF, 0, 0xFF, 0, // a pair's first value
  0, 0x10, 1, 0, 0, 0x10, 1, 0, 0, 0x10, 1, 0, 0, 0x10, 1, 0, // two pairs to 24 bits: ×4096 and ×1
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, // the lanes of a block's store past its 12 bytes
], 16);

/**
 * After b64Decode: false when no byte it wrote is below 14, so that none is a CR or LF (a caller
 * that needs none skips its own scan); true otherwise, and always in the scalar build.
 */
let b64Low = true;

/**
 * Decodes whole blocks of 16 base64 bytes (no `=`) of the `n` at `src` into `dst` (which may be
 * `src`: a block's 16-byte store ends inside the block just read), up to the first block that holds
 * a byte that is not base64. Returns the quartets decoded (12 bytes written each, 4 more bytes
 * overwritten past them); the caller decodes the rest and finds the bad byte.
 */
// @ts-ignore: decorator
@inline function b64Simd(src: usize, n: usize, dst: usize): usize {
  const byLo = v128.load(B64V), byHi = v128.load(B64V, 16), add = v128.load(B64V, 32);
  const first = v128.load(B64V, 48), join = v128.load(B64V, 64), slash = bytes16(0x2F), nib = bytes16(0x0F);
  const past = v128.load(B64V, 80);
  let low = bytes16(0xFF); // (the least byte written)
  let i: usize = 0;
  let o = dst;
  while (i + 16 <= n) {
    const v = v128.load(src + i);
    // (high nibbles by a 16-bit shift and the mask: V8 has no byte shift and builds one from a mask
    // it makes at every i8x16.shr_u; 1.05–1.2× here)
    const hi = v128.and(i16x8.shr_u(v, 4), nib);
    if (v128.any_true(v128.and(i8x16.swizzle(byLo, v128.and(v, nib)), i8x16.swizzle(byHi, hi)))) break;
    const s = i8x16.add(v, i8x16.swizzle(add, i8x16.add(i8x16.eq(v, slash), hi)));
    // each pair (a, b) as a·64 + b, then each two pairs as p·4096 + q: 24 bits a lane
    const w = i32x4.dot_i16x8_s(v128.or(i16x8.shl(v128.and(s, first), 6), i16x8.shr_u(s, 8)), join);
    const out = i8x16.shuffle(w, w, 2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, 3, 7, 11, 15);
    v128.store(o, out);
    low = i8x16.min_u(low, v128.or(out, past));
    i += 16;
    o += 12;
  }
  b64Low = v128.any_true(i8x16.lt_u(low, bytes16(14)));
  return i >>> 2;
}

/**
 * Decodes the `len` bytes of base64 at `src` (padded to a multiple of 4, `=` only at the end) into
 * `dst`, which has room for `len` bytes (the SIMD build writes past the decoded bytes) or is `src`
 * (it never passes what it read). Returns the bytes written, or
 * −(1 + the offset of the first byte that is not base64 there).
 */
export function b64Decode(src: usize, len: usize, dst: usize): i32 {
  if (!b64Ready) b64Init();
  if ((len & 3) != 0) return -(1 + <i32>(len & ~(<usize>3)));
  let pad: usize = 0;
  if (len != 0 && load<u8>(src + len - 1) == 0x3D) pad = load<u8>(src + len - 2) == 0x3D ? <usize>2 : <usize>1;
  const full = len - (pad != 0 ? <usize>4 : <usize>0);
  let o = dst;
  let i: usize = 0;
  b64Low = true;
  if (ASC_FEATURE_SIMD) {
    const q = b64Simd(src, full, o);
    i = q << 2;
    o += q * 3;
  }
  for (; i < full; i += 4) {
    const a = <u32>load<u8>(B64 + <usize>load<u8>(src + i));
    const b = <u32>load<u8>(B64 + <usize>load<u8>(src + i + 1));
    const c = <u32>load<u8>(B64 + <usize>load<u8>(src + i + 2));
    const d = <u32>load<u8>(B64 + <usize>load<u8>(src + i + 3));
    if ((a | b | c | d) > 63) {
      let k: usize = 0;
      while (load<u8>(B64 + <usize>load<u8>(src + i + k)) != 0xFF) k++;
      return -(1 + <i32>(i + k));
    }
    const v = (a << 18) | (b << 12) | (c << 6) | d;
    store<u8>(o, <u8>(v >>> 16));
    store<u8>(o + 1, <u8>(v >>> 8));
    store<u8>(o + 2, <u8>v);
    o += 3;
  }
  if (pad != 0) {
    const a = <u32>load<u8>(B64 + <usize>load<u8>(src + i));
    const b = <u32>load<u8>(B64 + <usize>load<u8>(src + i + 1));
    if (a == 0xFF) return -(1 + <i32>i);
    if (b == 0xFF) return -(2 + <i32>i);
    let v = (a << 18) | (b << 12);
    store<u8>(o, <u8>(v >>> 16));
    o++;
    if (pad == 1) {
      const c = <u32>load<u8>(B64 + <usize>load<u8>(src + i + 2));
      if (c == 0xFF) return -(3 + <i32>i);
      v |= c << 6;
      store<u8>(o, <u8>(v >>> 8));
      o++;
    }
  }
  if (ASC_FEATURE_SIMD) {
    // the bytes after the blocks' (at most 11): in the last 16 written, or all scanned by the caller
    if (o - dst < 16) b64Low = true;
    else if (!b64Low) b64Low = v128.any_true(i8x16.lt_u(v128.load(o - 16), bytes16(14)));
  }
  return <i32>(o - dst);
}
