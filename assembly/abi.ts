// The numeric contract between the core and the bindings: fixed windows in linear memory, the mode
// bits of a call, the words of the result record, the span records, and the parts of a state
// record that JS reads. No strings cross it.
//
// This file holds only that contract: every `export const` here is exported from the module as a
// global (assembly/index.ts re-exports this file), and scripts/gen-abi.mjs generates
// bindings/generated/abi.ts from it, so that the two sides cannot drift. At instantiation the
// bindings check ABI_VERSION; a test checks every constant against both builds of the core.
//
// Linear memory (addresses grow downwards in this picture):
//   static data (tables)
//   IN window   [IN_HEAD bytes of headroom | IN_CAP bytes the caller writes | IN_SLACK zero bytes]
//               A stream's carried bytes (an incomplete UTF-8 tail, at most 3) are copied into the
//               headroom right before the window, so the core sees carry + chunk as one run.
//   OUT window  OUT_CAP bytes: UTF-16 text (2 bytes per unit, never more units than input bytes)
//               or UTF-8 / ASCII bytes, written by the core, read by JS.
//   RES record  RES_WORDS i32 results of the last call.
//   SPAN        SPAN_BYTES of span records written by the framers.
//   heap        state records and buffers (TLSF, `heap.alloc`/`heap.free`).

/** Version of this contract: bump it with any change of meaning. The bindings refuse another. */
export const ABI_VERSION: i32 = 2;

// ---------------------------------------------------------------------------------------------
// Windows

/** Bytes JS may write into the input window per call; larger chunks go in window-sized pieces. */
export const IN_CAP: usize = 65536;
/**
 * Bytes before the window where the SSE byte-level path may place the first part of an event's
 * data (held from earlier chunks), so that it and the rest, in the chunk, are one span.
 */
export const IN_JOIN: usize = 4096;
/** Headroom before the window: the join area, then the carried bytes (UTF-8 tail ≤ 3). */
export const IN_HEAD: usize = IN_JOIN + 64;
/** Zeroed slack after the window: SIMD loads of a final partial block never read foreign bytes. */
export const IN_SLACK: usize = 64;
/** UTF-16 output: one unit per input byte at most, plus the carry, plus slack for 16-byte stores. */
export const OUT_CAP: usize = (IN_CAP + IN_HEAD) * 2 + 128;
/** Words of the result record. */
export const RES_WORDS: usize = 16;
/** Bytes of span records the framers may write per call. */
export const SPAN_BYTES: usize = 65536;

const inBase: usize = memory.data(<i32>(IN_HEAD + IN_CAP + IN_SLACK), 16);
/** Address of the input window. */
export const IN_PTR: usize = inBase + IN_HEAD;
/** Address of the output window. */
export const OUT_PTR: usize = memory.data(<i32>OUT_CAP, 16);
/** Address of the result record. */
export const RES_PTR: usize = memory.data(<i32>(RES_WORDS * 4), 16);
/** Address of the span records. */
export const SPAN_PTR: usize = memory.data(<i32>SPAN_BYTES, 16);

// ---------------------------------------------------------------------------------------------
// Text encodings: of a UTF-8 push's text (ENC_MASK bits of its kind) and of a frame batch

/** ASCII bytes: a length in bytes. */
export const ENC_LATIN1: i32 = 0;
/** UTF-16 units: a length in units. */
export const ENC_UTF16: i32 = 1;
/** Validated UTF-8 bytes (or, when not strict, bytes to be decoded with replacement). */
export const ENC_UTF8: i32 = 2;
/** The encoding bits of a UTF-8 push's kind. */
export const ENC_MASK: i32 = 3;

// ---------------------------------------------------------------------------------------------
// Mode bits of a push or flush (one space for every stream kind)

/** Text as UTF-8 bytes (runtimes without a UTF-16 copy route, the byte-level path). */
export const M_UTF8_OUT: i32 = 1;
/** UTF-8 decoder: validate only, report no text. */
export const M_VALIDATE: i32 = 2;
/** SSE: report comments. */
export const M_COMMENTS: i32 = 4;
/** SSE flush: dispatch an unterminated event. */
export const M_EOF_DISPATCH: i32 = 8;
/** SSE byte-level path: data still in the run is not copied (SF_IN). */
export const M_IN_SPANS: i32 = 16;

// ---------------------------------------------------------------------------------------------
// State records: what every kind shares (the frame kit extends it; JS reads only these)

/** Carried bytes: an incomplete sequence at the end of the input so far, at most 3 (u8[4]). */
export const ST_CARRY: i32 = 0;
/** Number of carried bytes (u8). */
export const ST_NCARRY: i32 = 4;
/** Flags (u8, F_*). */
export const ST_FLAGS: i32 = 5;
/** Size of a UTF-8 decoder's record. */
export const UTF8_STATE_BYTES: i32 = 8;

/** Strict: the first bad sequence stops the stream. */
export const F_FATAL: i32 = 1;
/** Keep a leading U+FEFF as text. */
export const F_IGNORE_BOM: i32 = 2;
/** The first character of the stream has been seen (core only). */
export const F_BOM_DONE: i32 = 4;

// ---------------------------------------------------------------------------------------------
// Result record of utf8Push

/** Word: the kind, an encoding (ENC_*) plus UTF8_ERROR. */
export const U8_KIND: i32 = 0;
/** Word: address of the text. */
export const U8_PTR: i32 = 1;
/** Word: length of the text, in its encoding's units. */
export const U8_LEN: i32 = 2;
/** Word: with UTF8_ERROR, the bad sequence's address − IN_PTR. */
export const U8_ERR: i32 = 3;
/** Added to the kind when a strict stream met a bad sequence; the text is what came before it. */
export const UTF8_ERROR: i32 = 4;

// ---------------------------------------------------------------------------------------------
// Result record of the framers (lines and SSE)

/** Word: status bits (R_*). */
export const FR_STATUS: i32 = 0;
/** Word: encoding of the batch's text (ENC_*). */
export const FR_ENC: i32 = 1;
/** Word: length of the batch's text (units or bytes); with R_RAW, of the raw line in bytes. */
export const FR_LEN: i32 = 2;
/** Word: number of span records. */
export const FR_NREC: i32 = 3;
/** Word: with R_UTF8, R_LIMIT or R_TRUNC, the offset it concerns, relative to IN_PTR (negative: carried bytes). */
export const FR_ERR: i32 = 4;
/** Word: with R_RAW, the address of the raw line's UTF-8 bytes. */
export const FR_RAW_PTR: i32 = 5;
/** Word: with R_RAW, 1 when the raw line is ASCII. */
export const FR_RAW_ASCII: i32 = 6;
/**
 * Word: SSE byte-level path, bytes the core placed right before the input window (a power of two,
 * 0 when none): the first part of an event whose data continues in the chunk, zeros before it.
 */
export const FR_JOIN: i32 = 7;

/** Call the *More function again: the run is not finished. */
export const R_MORE: i32 = 1;
/** A bad UTF-8 sequence (strict). */
export const R_UTF8: i32 = 2;
/** The limit was hit; FR_ERR is the start of the line that would pass it. */
export const R_LIMIT: i32 = 4;
/** Flush: the stream ended inside a character; FR_ERR = −(carried bytes). */
export const R_TRUNC: i32 = 8;
/** SSE: a valid retry field was seen (read sseRetry). */
export const R_RETRY: i32 = 16;
/** SSE flush: the stream ended inside a line or an event. */
export const R_TRUNCATED: i32 = 32;
/** Lines: the single line is raw UTF-8 at FR_RAW_PTR, FR_LEN bytes. */
export const R_RAW: i32 = 64;

/** Result word of rawUtf16: the address of the UTF-16 units. */
export const RAW_PTR: i32 = 1;

// ---------------------------------------------------------------------------------------------
// Span records

/** Words of a line record: the end of its text in the batch, its start − IN_PTR. */
export const LINE_REC_WORDS: i32 = 2;
/** Line record word: end offset of the line's text in the batch. */
export const LR_END: i32 = 0;
/** Line record word: where the line began, relative to IN_PTR of the call (rebased by JS). */
export const LR_START: i32 = 1;

/** Words of an SSE record. */
export const SSE_REC_WORDS: i32 = 8;
/** SSE record word: kind (K_*) | flags (SF_*). */
export const SR_HEAD: i32 = 0;
/** SSE record words: the data (or comment) span. */
export const SR_DATA0: i32 = 1;
export const SR_DATA1: i32 = 2;
/** SSE record words: the type span (with SF_TYPE and not SF_SAME_TYPE). */
export const SR_TYPE0: i32 = 3;
export const SR_TYPE1: i32 = 4;
/** SSE record words: the ID span (with SF_ID). */
export const SR_ID0: i32 = 5;
export const SR_ID1: i32 = 6;

/** SSE record kinds (the low 4 bits of the head word). */
export const K_MASK: i32 = 15;
export const K_EVENT: i32 = 1;
/** The last event ID string changed, no event was dispatched. */
export const K_ID: i32 = 2;
export const K_COMMENT: i32 = 3;
/** The event has a type (else 'message'). */
export const SF_TYPE: i32 = 16;
/** ... equal to the last type reported: no span. */
export const SF_SAME_TYPE: i32 = 32;
/** The last event ID string changed: its span follows. */
export const SF_ID: i32 = 64;
/** Spans are absolute addresses of UTF-8 bytes in the stream's buffers (a record too large for OUT). */
export const SF_RAW: i32 = 128;
/** Raw data is ASCII. */
export const SF_DA: i32 = 256;
/** Raw type is ASCII. */
export const SF_TA: i32 = 512;
/** Raw ID is ASCII. */
export const SF_IA: i32 = 1024;
/** The data span is relative to IN_PTR: bytes of the run, not copied. */
export const SF_IN: i32 = 2048;
