// Layer 4 (model streams): a JSON reader over bytes in linear memory. It validates one whole
// document by RFC 8259 and reports where the values at a few requested paths are, as records of
// offsets. No strings, no allocation.
//
// The paths come as a path program (a trie of keys: its layout, the records' and the error codes
// are in abi.ts, "JSON reader") that JS compiles once per format and
// writes into memory. Values at paths are validated like everything else; every other subtree is
// validated and skipped (string bodies 16 bytes at a time in the SIMD build, 8 in the scalar one).
// Duplicate keys resolve as JSON.parse does: the last one wins, containers included, so the
// records made under an earlier occurrence of a key are dropped.
//
// Input contract: [p, p + len) is valid UTF-8 (the framer validated it), and memory extends at
// least JSON_READ_SLACK bytes past its end (the input window's slack does): the scanners load
// whole blocks and ignore what lies past the end. The byte at p + len is a sentinel for the
// duration of a read: the reader writes a 0 there and puts the byte back before it returns.
import {
  IN_PTR, JE_CONTROL, JE_DEPTH, JE_ESCAPE, JE_LITERAL, JE_NUMBER, JE_OK, JE_RECORDS, JE_TRAILING, JE_TRUNCATED,
  JE_UNEXPECTED, JF_ASCII, JF_ESCAPED, JF_INTEGER, JK_ARRAY, JK_FALSE, JK_NULL, JK_NUMBER, JK_OBJECT, JK_STRING,
  JK_TRUE, JP_EDGE_BYTES, JP_EDGE_CHILD, JP_EDGE_KEY_LEN, JP_EDGE_KEY_OFF, JP_NODE_DUP_END, JP_NODE_DUP_START,
  JP_NODE_EDGES, JP_NODE_ID, JP_NODE_LENGTHS, JP_NODE_NKEYS, JP_NODE_STAR, JP_NO_PATH, JREC_FLAGS_SHIFT,
  JREC_KIND_SHIFT, JSON_KEY_MAX, JSON_MAX_DEPTH, JSON_PROG_CAP, JSON_READ_SLACK, JSON_REC_CAP, JSON_REC_PTR,
  JSON_UTF16_SLACK,
} from './abi';
import { copy } from './buffers';
import { sameBytes } from './runtime';
import { transcode } from './utf8';
import { bytes16 } from './vectors';

/** Internal: the record was made under a key that a later duplicate overrode (never reported). */
const JF_DEAD: u32 = 128;

// =============================================================================================
// State of the current read
// =============================================================================================

/** The kinds of the open containers while a subtree is skipped, one byte per depth. */
const STACK: usize = memory.data(<i32>(JSON_MAX_DEPTH + 16), 16);
/** An escaped key, unescaped to UTF-8 for matching (4 bytes of room for the last character). */
const KEYBUF: usize = memory.data(<i32>(JSON_KEY_MAX + 8), 16);

let jBase: usize = 0;   // the document's first byte
let jEnd: usize = 0;    // one past its last byte
let jProg: usize = 0;   // the path program
let jOut: usize = 0;    // the record area
let jNrec: u32 = 0;     // records made (dead ones included)
let jMaxRec: u32 = 0;
let jKilled: bool = false;
let jErr: i32 = 0;
let jErrAt: usize = 0;
/** 1 when the string `stringEnd` scanned last held an escape. */
let sEscaped: u32 = 0;
/** JF_INTEGER or 0 for the number `scanNumber` scanned last. */
let nFlags: u32 = 0;

// Bytes
const QUOTE: u32 = 0x22;
const BACKSLASH: u32 = 0x5C;
const COMMA: u32 = 0x2C;
const COLON: u32 = 0x3A;
const MINUS: u32 = 0x2D;
const LBRACE: u32 = 0x7B; // '{'; '}' is LBRACE + 2
const LBRACKET: u32 = 0x5B; // '['; ']' is LBRACKET + 2

// =============================================================================================
// Errors
// =============================================================================================

/**
 * Records the error at q and returns 0, the "no position" every scanner returns on failure: the
 * code given, or JE_TRUNCATED when q is the end (the sentinel, which no token accepts).
 */
function bad(code: i32, q: usize): usize {
  if (q >= jEnd) {
    jErr = JE_TRUNCATED;
    jErrAt = jEnd;
  } else {
    jErr = code;
    jErrAt = q;
  }
  return 0;
}

// =============================================================================================
// Tokens
//
// For the read the byte at the document's end is a 0 (saved and restored around it): no token
// goes on over it (0 is no whitespace, digit, hex digit, escape letter or literal letter, and it
// ends a string body as a control byte), so the scanners test for the end only on their error
// paths, in `bad`.
// =============================================================================================

/** Whitespace (space, tab, LF, CR) from q; returns the first other address. */
function wsLoop(q: usize): usize {
  let c = <u32>load<u8>(q);
  while (c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09) c = <u32>load<u8>(++q);
  return q;
}

/** The first address from q that is no whitespace: one test when there is none (compact JSON). */
// @ts-ignore: decorator
@inline function ws(q: usize): usize {
  return <u32>load<u8>(q) > 0x20 ? q : wsLoop(q);
}

// @ts-ignore: decorator
@inline function isDigit(c: u32): bool {
  return c - 0x30 < 10;
}

// @ts-ignore: decorator
@inline function isHex(c: u32): bool {
  return c - 0x30 < 10 || (c | 0x20) - 0x61 < 6;
}

// @ts-ignore: decorator
@inline function hexVal(c: u32): u32 {
  return c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57;
}

/** The code unit of a validated `\uXXXX`, its four digits at q. */
// @ts-ignore: decorator
@inline function hex4(q: usize): u32 {
  return (hexVal(load<u8>(q)) << 12) | (hexVal(load<u8>(q, 1)) << 8)
    | (hexVal(load<u8>(q, 2)) << 4) | hexVal(load<u8>(q, 3));
}

/** The byte a one-letter escape stands for (`\"` `\\` `\/` `\b` `\f` `\n` `\r` `\t`), or 0x100. */
// @ts-ignore: decorator
@inline function shortEscape(e: u32): u32 {
  switch (e) {
    case 0x22: return 0x22;
    case 0x5C: return 0x5C;
    case 0x2F: return 0x2F;
    case 0x62: return 0x08; // b
    case 0x66: return 0x0C; // f
    case 0x6E: return 0x0A; // n
    case 0x72: return 0x0D; // r
    case 0x74: return 0x09; // t
    default: return 0x100;
  }
}

/** Bit i set when byte i of v is `"`, `\` or below 0x20 (the bytes that stop a string body). */
// @ts-ignore: decorator
@inline function specialMask(v: v128): i32 {
  // `"` is 0x22: after XOR 0x02 it is 0x20 and the control bytes stay below 0x20, so one
  // "at most 0x20" test finds both
  const u = v128.xor(v, bytes16(0x02));
  return i8x16.bitmask(v128.or(
    i8x16.eq(i8x16.min_u(u, bytes16(0x20)), u),
    i8x16.eq(v, bytes16(BACKSLASH))));
}

/**
 * The same for the 8 bytes of w, in bit 8·i + 7 of byte i. Only the lowest set bit is exact (a
 * borrow may flag bytes above it, never a word with none), which is all the scans use.
 */
// @ts-ignore: decorator
@inline export function specialSwar(w: u64): u64 {
  const ones: u64 = 0x0101010101010101;
  const u = w ^ (ones * 0x02);
  const b = w ^ (ones * 0x5C);
  return (((u - ones * 0x21) & ~u) | ((b - ones) & ~b)) & 0x8080808080808080;
}

/** Address of the first byte from q that stops a string body (one always does: the sentinel). */
// @ts-ignore: decorator
@inline function nextSpecial(q: usize): usize {
  if (ASC_FEATURE_SIMD) {
    while (true) {
      const m = specialMask(v128.load(q));
      if (m != 0) return q + <usize>ctz(m);
      q += 16;
    }
  } else {
    while (true) {
      const t = specialSwar(load<u64>(q));
      if (t != 0) return q + <usize>(ctz(t) >> 3);
      q += 8;
    }
  }
  return 0;
}

/**
 * The rest of a string body from q, past escapes: validates them and the control bytes and
 * returns the address of the closing quote (sEscaped: 1 when there was an escape), or 0.
 */
function scanString(q: usize): usize {
  let escaped: u32 = 0;
  while (true) {
    q = nextSpecial(q);
    const c = <u32>load<u8>(q);
    if (c == QUOTE) break;
    if (c != BACKSLASH) return bad(JE_CONTROL, q);
    escaped = 1;
    const e = <u32>load<u8>(q, 1);
    if (e == 0x75) { // u
      for (let i: usize = 2; i < 6; i++) {
        if (!isHex(<u32>load<u8>(q + i))) return bad(JE_ESCAPE, q + i);
      }
      q += 6;
    } else {
      if (shortEscape(e) > 0xFF) return bad(JE_ESCAPE, q + 1);
      q += 2;
    }
  }
  sEscaped = escaped;
  return q;
}

/**
 * The closing quote of the string whose body starts at q, or 0. Inline: a string that ends
 * within its first block without an escape (most keys and short values) costs one block test,
 * the first quote found with no backslash or control byte before it.
 */
// @ts-ignore: decorator
@inline function stringEnd(q: usize): usize {
  if (ASC_FEATURE_SIMD) {
    const v = v128.load(q);
    const quotes = ctz(i8x16.bitmask(i8x16.eq(v, bytes16(0x22))));
    const others = ctz(i8x16.bitmask(v128.or(
      i8x16.eq(i8x16.min_u(v, bytes16(0x1F)), v),
      i8x16.eq(v, bytes16(BACKSLASH)))));
    if (quotes < others) {
      sEscaped = 0;
      return q + <usize>quotes;
    }
  } else {
    const w = load<u64>(q);
    const ones: u64 = 0x0101010101010101;
    const x = w ^ (ones * 0x22);
    const y = w ^ (ones * 0x5C);
    const quotes = ctz((x - ones) & ~x & 0x8080808080808080);
    const others = ctz((((w - ones * 0x20) & ~w) | ((y - ones) & ~y)) & 0x8080808080808080);
    if (quotes < others) {
      sEscaped = 0;
      return q + <usize>(quotes >> 3);
    }
  }
  return scanString(q);
}

/** True when every byte of [p, end) is ASCII (reads whole blocks; lanes past end are ignored). */
function asciiSpan(p: usize, end: usize): bool {
  if (ASC_FEATURE_SIMD) {
    let acc = i8x16.splat(0);
    while (p + 16 <= end) {
      acc = v128.or(acc, v128.load(p));
      p += 16;
    }
    let m = i8x16.bitmask(acc);
    if (p < end) m |= i8x16.bitmask(v128.load(p)) & ((1 << <i32>(end - p)) - 1);
    return m == 0;
  } else {
    let acc: u64 = 0;
    while (p + 8 <= end) {
      acc |= load<u64>(p);
      p += 8;
    }
    if (p < end) acc |= load<u64>(p) & ((<u64>1 << (<u64>(end - p) << 3)) - 1);
    return (acc & 0x8080808080808080) == 0;
  }
}

/** A number from q (at `-` or a digit); returns the address after it (nFlags), or 0. */
// @ts-ignore: decorator
@inline function scanNumber(q: usize): usize {
  let c = <u32>load<u8>(q);
  if (c == MINUS) {
    c = <u32>load<u8>(++q);
    if (!isDigit(c)) return bad(JE_NUMBER, q);
  }
  q++;
  if (c == 0x30) {
    if (isDigit(<u32>load<u8>(q))) return bad(JE_NUMBER, q);
  } else {
    while (isDigit(<u32>load<u8>(q))) q++;
  }
  c = <u32>load<u8>(q);
  let flags = JF_INTEGER;
  if (c == 0x2E) { // .
    flags = 0;
    if (!isDigit(<u32>load<u8>(++q))) return bad(JE_NUMBER, q);
    q++;
    while (isDigit(<u32>load<u8>(q))) q++;
    c = <u32>load<u8>(q);
  }
  if ((c | 0x20) == 0x65) { // e E
    flags = 0;
    c = <u32>load<u8>(++q);
    if (c == 0x2B || c == MINUS) c = <u32>load<u8>(++q);
    if (!isDigit(c)) return bad(JE_NUMBER, q);
    q++;
    while (isDigit(<u32>load<u8>(q))) q++;
  }
  nFlags = flags;
  return q;
}

/** `true`, `false` or `null` at q (first byte c); returns the address after it, or 0. */
// @ts-ignore: decorator
@inline function scanLiteral(q: usize, c: u32): usize {
  // the literal's bytes, little-endian, and its length
  let word: u64 = 0x65757274; // true
  let n: usize = 4;
  if (c == 0x66) { word = 0x65736C6166; n = 5; } // false
  else if (c == 0x6E) word = 0x6C6C756E;         // null
  if ((load<u64>(q) & ((<u64>1 << <u64>(n << 3)) - 1)) == word) return q + n;
  // unlikely: the first wrong byte (the sentinel is one)
  let i: usize = 1;
  while (<u64>load<u8>(q + i) == ((word >> <u64>(i << 3)) & 0xFF)) i++;
  return bad(JE_LITERAL, q + i);
}

/**
 * After a key's closing quote at q: the `:` and the whitespace around it; returns the address of
 * the value's first byte, or 0. Compact JSON (`":` and the value) takes one load and one test.
 */
// @ts-ignore: decorator
@inline function afterKey(q: usize): usize {
  const w = load<u32>(q);
  if ((w & 0xFF00) == (COLON << 8) && ((w >> 16) & 0xFF) > 0x20) return q + 2;
  q = ws(q + 1);
  if (<u32>load<u8>(q) != COLON) return bad(JE_UNEXPECTED, q);
  return ws(q + 1);
}

/** A string, number or literal at q (first byte c); returns the address after it, or 0. */
// @ts-ignore: decorator
@inline function scalarValue(q: usize, c: u32): usize {
  if (c == QUOTE) {
    q = stringEnd(q + 1);
    return q == 0 ? 0 : q + 1;
  }
  if (c == MINUS || isDigit(c)) return scanNumber(q);
  if (c == 0x74 || c == 0x66 || c == 0x6E) return scanLiteral(q, c);
  return bad(JE_UNEXPECTED, q);
}

// =============================================================================================
// Skipping a subtree no path reaches
// =============================================================================================

/**
 * Validates and skips the container at q (`{` or `[`, byte c) whose parent is at `depth`.
 * Iterative: the kinds of the open containers are on STACK. Returns the address after it, or 0.
 */
function skipContainer(q: usize, c: u32, depth: u32): usize {
  let d = depth;
  while (true) {
    // open the container at q (c: `{` or `[`)
    d++;
    if (d > JSON_MAX_DEPTH) return bad(JE_DEPTH, q);
    store<u8>(STACK + <usize>d, <u8>c);
    let b = <u32>load<u8>(++q);
    if (b <= 0x20) b = <u32>load<u8>(q = wsLoop(q));
    let close = b == c + 2;
    if (close) q++;
    // its members, until one opens a container (break) or the outermost one closes (return)
    while (true) {
      if (close) {
        d--;
        if (d == depth) return q;
        c = <u32>load<u8>(STACK + <usize>d);
      } else {
        if (c == LBRACE) {
          if (b != QUOTE) return bad(JE_UNEXPECTED, q);
          q = stringEnd(q + 1);
          if (q == 0) return 0;
          q = afterKey(q);
          if (q == 0) return 0;
          b = <u32>load<u8>(q);
        }
        if ((b | 0x20) == LBRACE) break; // `{` or `[`: open it
        q = scalarValue(q, b);
        if (q == 0) return 0;
      }
      // after a member: `,` and the next one, or the container's end
      b = <u32>load<u8>(q);
      if (b <= 0x20) b = <u32>load<u8>(q = wsLoop(q));
      if (b == COMMA) {
        b = <u32>load<u8>(++q);
        if (b <= 0x20) b = <u32>load<u8>(q = wsLoop(q));
        close = false;
      } else if (b == c + 2) {
        q++;
        close = true;
      } else {
        return bad(JE_UNEXPECTED, q);
      }
    }
    c = b;
  }
  return 0;
}

/** Validates and skips the value at q (first byte c) whose parent is at `depth`. */
// @ts-ignore: decorator
@inline function skipValue(q: usize, c: u32, depth: u32): usize {
  if ((c | 0x20) == LBRACE) return skipContainer(q, c, depth);
  return scalarValue(q, c);
}

// =============================================================================================
// Following the paths
// =============================================================================================


/** The child of `node` for the key of n UTF-8 bytes at k, or 0. */
function matchEdges(node: usize, k: usize, n: usize): usize {
  const prog = jProg;
  let e = node + JP_NODE_EDGES;
  const stop = e + (<usize>load<u16>(node, JP_NODE_NKEYS) << 3);
  while (e < stop) {
    if (<usize>load<u16>(e, JP_EDGE_KEY_LEN) == n
      && sameBytes(prog + <usize>load<u16>(e, JP_EDGE_KEY_OFF), k, n)) {
      return prog + <usize>load<u32>(e, JP_EDGE_CHILD);
    }
    e += JP_EDGE_BYTES;
  }
  return 0;
}

/** The same, inline: most keys of an object are no edge's length and need no search. */
// @ts-ignore: decorator
@inline function matchKey(node: usize, k: usize, n: usize): usize {
  return (load<u32>(node, JP_NODE_LENGTHS) & (1 << <u32>(n & 31))) == 0 ? 0 : matchEdges(node, k, n);
}

/** Writes the UTF-8 of code point cp at o; returns the new end. Surrogates take 3 bytes. */
// @ts-ignore: decorator
@inline export function putUtf8(o: usize, cp: u32): usize {
  if (cp < 0x80) {
    store<u8>(o, <u8>cp);
    return o + 1;
  }
  if (cp < 0x800) {
    store<u8>(o, <u8>(0xC0 | (cp >> 6)));
    store<u8>(o, <u8>(0x80 | (cp & 0x3F)), 1);
    return o + 2;
  }
  if (cp < 0x10000) {
    store<u8>(o, <u8>(0xE0 | (cp >> 12)));
    store<u8>(o, <u8>(0x80 | ((cp >> 6) & 0x3F)), 1);
    store<u8>(o, <u8>(0x80 | (cp & 0x3F)), 2);
    return o + 3;
  }
  store<u8>(o, <u8>(0xF0 | (cp >> 18)));
  store<u8>(o, <u8>(0x80 | ((cp >> 12) & 0x3F)), 1);
  store<u8>(o, <u8>(0x80 | ((cp >> 6) & 0x3F)), 2);
  store<u8>(o, <u8>(0x80 | (cp & 0x3F)), 3);
  return o + 4;
}

/**
 * The child of `node` for the validated escaped key [k, ke): unescaped into KEYBUF (a surrogate
 * pair as one 4-byte character, a lone surrogate as 3 bytes no well-formed key holds), or 0.
 */
function matchEscapedKey(node: usize, k: usize, ke: usize): usize {
  let o = KEYBUF;
  const stop = KEYBUF + <usize>JSON_KEY_MAX;
  while (k < ke) {
    if (o > stop) return 0; // longer than any key of a program
    const c = <u32>load<u8>(k);
    if (c != BACKSLASH) {
      store<u8>(o, <u8>c);
      o++;
      k++;
      continue;
    }
    const e = <u32>load<u8>(k, 1);
    if (e != 0x75) {
      store<u8>(o, <u8>shortEscape(e));
      o++;
      k += 2;
      continue;
    }
    let cp = hex4(k + 2);
    k += 6;
    if (cp - 0xD800 < 0x400 && k + 6 <= ke && <u32>load<u8>(k) == BACKSLASH && <u32>load<u8>(k, 1) == 0x75) {
      const lo = hex4(k + 2);
      if (lo - 0xDC00 < 0x400) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        k += 6;
      }
    }
    o = putUtf8(o, cp);
  }
  return o > stop ? 0 : matchKey(node, KEYBUF, o - KEYBUF);
}

/** Marks records [r0, r1) dead: a later duplicate key overrode the value that made them. */
function kill(r0: u32, r1: u32): void {
  for (let r = r0; r < r1; r++) {
    const w = jOut + (<usize>r << 4);
    store<u32>(w, load<u32>(w) | (JF_DEAD << JREC_FLAGS_SHIFT));
  }
  jKilled = true;
}

/** Drops the dead records, keeping the order of the rest; returns how many are left. */
function compact(): u32 {
  let o: u32 = 0;
  for (let r: u32 = 0; r < jNrec; r++) {
    const src = jOut + (<usize>r << 4);
    if ((load<u32>(src) & (JF_DEAD << JREC_FLAGS_SHIFT)) != 0) continue;
    if (o != r) {
      const dst = jOut + (<usize>o << 4);
      store<u64>(dst, load<u64>(src));
      store<u64>(dst, load<u64>(src, 8), 8);
    }
    o++;
  }
  return o;
}

/**
 * The value at q (first byte c) at a node no step leads on from (so a path ends there): its
 * record, and the address after it, or 0. Inline where objects meet their members.
 */
// @ts-ignore: decorator
@inline function readLeaf(node: usize, idx: i32, q: usize, c: u32, depth: u32): usize {
  if (jNrec >= jMaxRec) return bad(JE_RECORDS, q);
  const r = jNrec++;
  let kind: u32;
  let flags: u32 = 0;
  let s = q, e: usize;
  if (c == QUOTE) {
    kind = JK_STRING;
    s = q + 1;
    e = stringEnd(s);
    if (e == 0) return 0;
    q = e + 1;
    flags = (sEscaped != 0 ? JF_ESCAPED : 0) | (asciiSpan(s, e) ? JF_ASCII : 0);
  } else {
    if (c == MINUS || isDigit(c)) {
      kind = JK_NUMBER;
      q = scanNumber(q);
      flags = nFlags;
    } else if ((c | 0x20) == LBRACE) {
      kind = c == LBRACE ? JK_OBJECT : JK_ARRAY;
      q = skipContainer(q, c, depth);
    } else if (c == 0x74 || c == 0x66 || c == 0x6E) {
      kind = c == 0x74 ? JK_TRUE : c == 0x66 ? JK_FALSE : JK_NULL;
      q = scanLiteral(q, c);
    } else {
      return bad(JE_UNEXPECTED, q);
    }
    if (q == 0) return 0;
    e = q;
  }
  writeRecord(r, <u32>load<u16>(node, JP_NODE_ID) | (kind << JREC_KIND_SHIFT) | (flags << JREC_FLAGS_SHIFT), idx, s, e);
  return q;
}

// @ts-ignore: decorator
@inline function writeRecord(r: u32, word0: u32, idx: i32, s: usize, e: usize): void {
  const w = jOut + (<usize>r << 4);
  store<u32>(w, word0);
  store<i32>(w, idx, 4);
  store<u32>(w, <u32>(s - jBase), 8);
  store<u32>(w, <u32>(e - jBase), 12);
}

/** True when no step leads on from `node` (no key edges, no [*]). */
// @ts-ignore: decorator
@inline function isLeaf(node: usize): bool {
  return (load<u64>(node) & 0xFFFFFFFFFFFF0000) == 0;
}

/**
 * The value at q (first byte c) that the program's `node` matches, inside a parent at `depth`;
 * `idx` is the element index of the innermost [*] step so far. Writes its record when a path
 * ends at the node and follows the node's steps into it. Returns the address after it, or 0.
 */
function readValue(node: usize, idx: i32, q: usize, c: u32, depth: u32): usize {
  if (isLeaf(node)) return readLeaf(node, idx, q, c, depth);
  const id = <u32>load<u16>(node, JP_NODE_ID);
  let r: u32 = 0;
  if (id != JP_NO_PATH) {
    if (jNrec >= jMaxRec) return bad(JE_RECORDS, q);
    r = jNrec++;
  }
  const start = q;
  let kind: u32 = 0;
  let flags: u32 = 0;
  let s = q, e: usize = 0;
  if (c == QUOTE) {
    kind = JK_STRING;
    q = stringEnd(q + 1);
    if (q == 0) return 0;
    s = start + 1;
    e = q;
    q++;
    if (id != JP_NO_PATH) flags = (sEscaped != 0 ? JF_ESCAPED : 0) | (asciiSpan(s, e) ? JF_ASCII : 0);
  } else if (c == LBRACE) {
    kind = JK_OBJECT;
    q = load<u16>(node, JP_NODE_NKEYS) != 0 ? readObject(node, idx, q, depth + 1) : skipContainer(q, c, depth);
  } else if (c == LBRACKET) {
    kind = JK_ARRAY;
    const star = <usize>load<u32>(node, JP_NODE_STAR);
    q = star != 0 ? readArray(jProg + star, q, depth + 1) : skipContainer(q, c, depth);
  } else if (c == MINUS || isDigit(c)) {
    kind = JK_NUMBER;
    q = scanNumber(q);
    flags = nFlags;
  } else if (c == 0x74 || c == 0x66 || c == 0x6E) {
    kind = c == 0x74 ? JK_TRUE : c == 0x66 ? JK_FALSE : JK_NULL;
    q = scanLiteral(q, c);
  } else {
    return bad(JE_UNEXPECTED, q);
  }
  if (q == 0) return 0;
  if (id != JP_NO_PATH) {
    if (kind != JK_STRING) e = q;
    writeRecord(r, id | (kind << JREC_KIND_SHIFT) | (flags << JREC_FLAGS_SHIFT), idx, s, e);
  }
  return q;
}

/**
 * An object at q that `node` (which has key edges) matches, at `depth`. Members whose key is an
 * edge are followed; a key seen again in the same object kills what its earlier value made.
 */
function readObject(node: usize, idx: i32, q: usize, depth: u32): usize {
  if (depth > JSON_MAX_DEPTH) return bad(JE_DEPTH, q);
  const prog = jProg;
  // a new instance of the object: no member seen yet
  const e0 = node + JP_NODE_EDGES;
  const stop = e0 + (<usize>load<u16>(node, JP_NODE_NKEYS) << 3);
  for (let e = e0; e < stop; e += JP_EDGE_BYTES) store<u64>(prog + <usize>load<u32>(e), 0, JP_NODE_DUP_START);
  q = ws(q + 1);
  let b = <u32>load<u8>(q);
  if (b == LBRACE + 2) return q + 1;
  while (true) {
    if (b != QUOTE) return bad(JE_UNEXPECTED, q);
    const k = q + 1;
    const ke = stringEnd(k);
    if (ke == 0) return 0;
    const child = sEscaped != 0 ? matchEscapedKey(node, k, ke) : matchKey(node, k, ke - k);
    q = afterKey(ke);
    if (q == 0) return 0;
    b = <u32>load<u8>(q);
    if (child != 0) {
      const r0 = load<u32>(child, JP_NODE_DUP_START);
      const r1 = load<u32>(child, JP_NODE_DUP_END);
      if (r1 > r0) kill(r0, r1);
      const first = jNrec;
      q = isLeaf(child) ? readLeaf(child, idx, q, b, depth) : readValue(child, idx, q, b, depth);
      store<u32>(child, first, JP_NODE_DUP_START);
      store<u32>(child, jNrec, JP_NODE_DUP_END);
    } else {
      q = skipValue(q, b, depth);
    }
    if (q == 0) return 0;
    b = <u32>load<u8>(q);
    if (b <= 0x20) b = <u32>load<u8>(q = wsLoop(q));
    if (b == COMMA) {
      b = <u32>load<u8>(++q);
      if (b <= 0x20) b = <u32>load<u8>(q = wsLoop(q));
      continue;
    }
    if (b == LBRACE + 2) return q + 1;
    return bad(JE_UNEXPECTED, q);
  }
  return 0;
}

/** An array at q whose elements the program's `elem` node matches, at `depth`. */
function readArray(elem: usize, q: usize, depth: u32): usize {
  if (depth > JSON_MAX_DEPTH) return bad(JE_DEPTH, q);
  q = ws(q + 1);
  let b = <u32>load<u8>(q);
  if (b == LBRACKET + 2) return q + 1;
  let i: i32 = 0;
  while (true) {
    q = readValue(elem, i, q, b, depth);
    if (q == 0) return 0;
    b = <u32>load<u8>(q);
    if (b <= 0x20) b = <u32>load<u8>(q = wsLoop(q));
    if (b == COMMA) {
      b = <u32>load<u8>(++q);
      if (b <= 0x20) b = <u32>load<u8>(q = wsLoop(q));
      i++;
      continue;
    }
    if (b == LBRACKET + 2) return q + 1;
    return bad(JE_UNEXPECTED, q);
  }
  return 0;
}

// =============================================================================================
// Exports
// =============================================================================================

/**
 * Validates the JSON document [p, p + len) in full and writes a record (abi.ts, "JSON reader:
 * records") at `out` for every value at a path of the program at `prog`, at most `maxRecs`.
 * Returns the number of records, or −JE_* (`jsonErrorAt` gives the offset).
 */
export function jsonRead(prog: usize, p: usize, len: usize, out: usize, maxRecs: u32): i32 {
  const end = p + len;
  jBase = p;
  jEnd = end;
  jProg = prog;
  jOut = out;
  jNrec = 0;
  jMaxRec = maxRecs;
  jKilled = false;
  jErr = JE_OK;
  jErrAt = 0;
  const saved = load<u8>(end);
  store<u8>(end, 0); // the sentinel (see "Tokens")
  let q = ws(p);
  q = readValue(prog, -1, q, <u32>load<u8>(q), 0);
  if (q != 0) {
    q = ws(q);
    if (q < end) {
      jErr = JE_TRAILING;
      jErrAt = q;
      q = 0;
    }
  }
  store<u8>(end, saved);
  if (q == 0) return -jErr;
  return <i32>(jKilled ? compact() : jNrec);
}

/**
 * For a reader that knows a document's shape (shape.ts): the closing quote of the string body at
 * q, validated as a read validates it, or 0; `jsonEscaped` then says whether it held an escape.
 * The document's end must hold the sentinel (a 0) and its slack must follow.
 */
export function jsonStringEnd(q: usize): usize {
  return stringEnd(q);
}

/** The same for a number at q: the address after it, validated as a read validates it, or 0. */
export function jsonNumberEnd(q: usize): usize {
  const c = <u32>load<u8>(q);
  if (c != MINUS && !isDigit(c)) return 0;
  return scanNumber(q);
}

/** Whether the body `jsonStringEnd` scanned last held an escape. */
export function jsonEscaped(): bool {
  return sEscaped != 0;
}

/** Whether [p, end) is all ASCII (whole blocks are read: the document's slack). */
export function jsonAscii(p: usize, end: usize): bool {
  return asciiSpan(p, end);
}

/** `jsonRead` of the len bytes at the input window, its records in the built-in record area. */
export function jsonReadIn(prog: usize, len: usize): i32 {
  return jsonRead(prog, IN_PTR, len, JSON_REC_PTR, JSON_REC_CAP);
}

/**
 * Offset of the last read's error, relative to the document (abi.ts, "JSON reader: results and
 * errors"), or −1 when it succeeded.
 */
export function jsonErrorAt(): i32 {
  return jErr == JE_OK ? -1 : <i32>(jErrAt - jBase);
}

/** Address of the first `\` in [q, end), or end. Reads whole blocks (the document's slack). */
// @ts-ignore: decorator
@inline function nextBackslash(q: usize, end: usize): usize {
  if (ASC_FEATURE_SIMD) {
    while (q < end) {
      const m = i8x16.bitmask(i8x16.eq(v128.load(q), bytes16(BACKSLASH)));
      if (m != 0) return min(q + <usize>ctz(m), end);
      q += 16;
    }
  } else {
    while (q < end) {
      const b = load<u64>(q) ^ 0x5C5C5C5C5C5C5C5C;
      const t = (b - 0x0101010101010101) & ~b & 0x8080808080808080;
      if (t != 0) return min(q + <usize>(ctz(t) >> 3), end);
      q += 8;
    }
  }
  return end;
}

/**
 * The text of a string span [p, p + len) that `jsonRead` validated (between the quotes, escapes
 * and all) as UTF-16 code units at `out`, exactly as JSON.parse gives it: every `\uXXXX` is its
 * code unit, so a lone surrogate stays one. Returns the number of units (≤ len). `out` needs
 * 2·len + JSON_UTF16_SLACK writable bytes.
 */
export function jsonUnescape(p: usize, len: usize, out: usize): usize {
  const end = p + len;
  let o = out;
  while (p < end) {
    const r = nextBackslash(p, end);
    if (r > p) o += transcode(p, r, o) << 1;
    if (r >= end) break;
    const e = <u32>load<u8>(r, 1);
    if (e == 0x75) {
      store<u16>(o, <u16>hex4(r + 2));
      p = r + 6;
    } else {
      store<u16>(o, <u16>shortEscape(e));
      p = r + 2;
    }
    o += 2;
  }
  return (o - out) >> 1;
}

/**
 * UTF-16 code units of the valid UTF-8 at [p, p + len), written at `out` (the core's transcoder):
 * the text of a string span without escapes that is not all ASCII. Returns the number of units.
 */
export function jsonUtf16(p: usize, len: usize, out: usize): usize {
  return transcode(p, p + len, out);
}

/** Whether the text jsonUtf8Length counted ended in a high surrogate escape (its pair may follow). */
let pendingHigh: bool = false;

/**
 * UTF-8 bytes of a validated string span's text as the joined text of a stream holds it: a
 * surrogate pair of `\u` escapes is one character of 4 bytes, a lone surrogate 3 (U+FFFD once
 * encoded). `high`: the text before the span ended in a high surrogate escape; afterwards
 * `jsonEndsHigh()` says whether this one does (a pair split across two deltas is one character).
 */
export function jsonUtf8Length(p: usize, len: usize, high: bool): usize {
  const end = p + len;
  let n: usize = 0;
  while (p < end) {
    const r = nextBackslash(p, end);
    if (r > p) {
      if (high) n += 3;
      high = false;
      n += r - p;
    }
    if (r >= end) break;
    const e = <u32>load<u8>(r, 1);
    if (e == 0x75) {
      const c = hex4(r + 2);
      p = r + 6;
      if (c >= 0xD800 && c <= 0xDBFF) {
        if (high) n += 3;
        high = true;
        continue;
      }
      if (c >= 0xDC00 && c <= 0xDFFF) {
        n += high ? 4 : 3;
        high = false;
        continue;
      }
      if (high) n += 3;
      high = false;
      n += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
    } else {
      if (high) n += 3;
      high = false;
      n += 1;
      p = r + 2;
    }
  }
  pendingHigh = high;
  return n;
}

/**
 * Code points of valid UTF-8 [p, end): its bytes less its continuation bytes (10xxxxxx). Reads
 * whole blocks (the document's slack, as nextBackslash), the bytes past `end` masked off.
 */
function utf8Chars(p: usize, end: usize): usize {
  let cont: usize = 0;
  if (ASC_FEATURE_SIMD) {
    for (let q = p; q < end; q += 16) {
      // (0x80..0xBF are the signed bytes below −0x40)
      let m = <u32>i8x16.bitmask(i8x16.lt_s(v128.load(q), bytes16(0xC0)));
      if (end - q < 16) m &= (<u32>1 << <u32>(end - q)) - 1;
      cont += <usize>popcnt(m);
    }
  } else {
    for (let q = p; q < end; q += 8) {
      const x = load<u64>(q);
      let t = x & ~(x << 1) & 0x8080808080808080;
      if (end - q < 8) t &= (<u64>1 << (<u64>(end - q) << 3)) - 1;
      cont += <usize>popcnt(t);
    }
  }
  return end - p - cont;
}

/**
 * Characters (code points) of a validated string span's text (`flags`: its record's JF_* flags),
 * as jsonUtf8Length counts its bytes: a pair of surrogate escapes one character, also when its
 * halves end one span and begin the next (`high`: the text before ended in a high surrogate
 * escape, a character here unless this span begins with its low half), a lone surrogate one, and
 * a high surrogate escape this span ends in none yet. Only for a relay that says where its
 * client's content ends (ME_CHARS): the other paths count bytes alone.
 */
export function jsonChars(p: usize, len: usize, flags: u32, high: bool): usize {
  const ascii = (flags & JF_ASCII) != 0;
  if ((flags & JF_ESCAPED) == 0) return (high ? 1 : 0) + (ascii ? len : utf8Chars(p, p + len));
  const end = p + len;
  let chars: usize = 0;
  while (p < end) {
    const r = nextBackslash(p, end);
    if (r > p) {
      if (high) chars++;
      high = false;
      chars += ascii ? r - p : utf8Chars(p, r);
    }
    if (r >= end) break;
    if (<u32>load<u8>(r, 1) == 0x75) {
      const c = hex4(r + 2);
      p = r + 6;
      if (c >= 0xDC00 && c <= 0xDFFF) {
        // (the low half: one character with a high one before it, or alone)
        chars++;
        high = false;
        continue;
      }
      if (high) chars++;
      high = c >= 0xD800 && c <= 0xDBFF;
      if (!high) chars++;
    } else {
      if (high) chars++;
      high = false;
      chars++;
      p = r + 2;
    }
  }
  return chars;
}

/** After jsonUtf8Length: whether its span's text ended in a high surrogate escape. */
export function jsonEndsHigh(): bool {
  return pendingHigh;
}

/** After jsonUtf8: the high surrogate escape its span's text ended in (0: none). */
let endHigh: u32 = 0;

/**
 * The UTF-8 of a validated string span's text, written at `out`, as the joined text of a stream
 * encodes it (the bytes jsonUtf8Length counts): a pair of `\u` escapes is one 4-byte character,
 * also when its halves end one span and begin the next; a lone surrogate is U+FFFD (EF BF BD), as
 * TextEncoder and Node's hash encode one. `high`: the high surrogate escape the text before ended
 * in (0: none), written here (as its pair's half, or as U+FFFD); afterwards `jsonUtf8High()` gives
 * the one this span ends in, not yet written. Returns the bytes written: at most len + 3.
 */
export function jsonUtf8(p: usize, len: usize, out: usize, high: u32): usize {
  const end = p + len;
  let o = out;
  while (p < end) {
    const r = nextBackslash(p, end);
    if (r > p) {
      if (high != 0) o = putUtf8(o, 0xFFFD);
      high = 0;
      copy(o, p, r - p);
      o += r - p;
    }
    if (r >= end) break;
    const e = <u32>load<u8>(r, 1);
    let c: u32;
    if (e == 0x75) {
      c = hex4(r + 2);
      p = r + 6;
    } else {
      c = shortEscape(e);
      p = r + 2;
    }
    if (c - 0xDC00 < 0x400) {
      o = putUtf8(o, high != 0 ? 0x10000 + ((high - 0xD800) << 10) + (c - 0xDC00) : 0xFFFD);
      high = 0;
      continue;
    }
    if (high != 0) o = putUtf8(o, 0xFFFD);
    high = c - 0xD800 < 0x400 ? c : 0;
    if (high == 0) o = putUtf8(o, c);
  }
  endHigh = high;
  return o - out;
}

/** After jsonUtf8: the high surrogate escape its span's text ended in, not written (0: none). */
export function jsonUtf8High(): u32 {
  return endHigh;
}
