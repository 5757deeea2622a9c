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
//   PATCH       a split SSE batch's entries (M_SPLIT), one per record at most.
//   HASH        SHA-256 of the text layer where the runtime has no native one: the state's eight
//               words, then HASH_CAP + 64 bytes of input (whole blocks hashed, by sha256Blocks).
//   heap        state records and buffers (TLSF, `heap.alloc`/`heap.free`).

/** Version of this contract: bump it with any change of meaning. The bindings refuse another. */
export const ABI_VERSION: i32 = 18;

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
/**
 * With M_SPLIT, OUT's upper half holds MIDS (the middles of split SSE data, UTF-16) and the lower
 * half the batch's text: each half holds the text of a whole input window.
 */
export const MIDS_OFF: usize = OUT_CAP / 2;
/** Words of the result record. */
export const RES_WORDS: usize = 36;
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
/** Address of the PATCH entries of a split batch (M_SPLIT): one per SSE record (32 bytes) at most. */
export const PATCH_PTR: usize = memory.data(<i32>(SPAN_BYTES / 32 * 8), 16);
/** Bytes of text JS may encode into the hash window per call (after a partial block of at most 63). */
export const HASH_CAP: usize = 65536;
/** Bytes of the hash window's state (eight words, H0 first); its input follows them. */
export const HASH_STATE_BYTES: usize = 32;
/** Address of the hash window: a SHA-256 state, then its input (a partial block, then what JS encodes). */
export const HASH_PTR: usize = memory.data(<i32>(HASH_STATE_BYTES + 64 + HASH_CAP), 16);

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
/**
 * Lines and SSE, with M_UTF8_OUT: the spans of the batch's text (line ends; SSE data, type, ID and
 * comment spans) are UTF-16 offsets into what TextDecoder makes of the batch's bytes, so that JS
 * decodes them with one call and slices the string. Not for a dirty batch (FR_UNITS −1): bad bytes
 * let through (fatal: false) become U+FFFD per span, which changes lengths; its spans stay bytes.
 */
export const M_UTF16_POS: i32 = 32;
/**
 * SSE, with M_UTF16_POS: an event's data that holds non-ASCII text keeps only its ASCII head and
 * tail in the batch's text; the middle, from its first non-ASCII byte to its last, goes to MIDS
 * as UTF-16 (record flag SF_SPLIT, one PATCH entry). The batch's text then stays ASCII, which a
 * browser's TextDecoder turns into a string several times faster than mixed text (it makes a
 * two-byte string of the whole input at its slow pace when one character needs it).
 */
export const M_SPLIT: i32 = 64;
/**
 * Lines and SSE: the read's bytes were found valid UTF-8 by the platform (`buffer.isUtf8`), with
 * nothing carried into the read and no character cut at its end: the core does not validate them
 * again. With M_ASCII they are all ASCII.
 */
export const M_VALID: i32 = 256;
export const M_ASCII: i32 = 512;

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
/**
 * A line or SSE stream's record (the frame kit's): its limit in bytes of one line or event (u32),
 * at this offset. The model layer raises it while it reads the events it wrote of a whole answer
 * (a JSON body held within the limit, whose events may each be a few bytes longer), then puts it back.
 */
export const ST_FRAME_MAX: i32 = 16;

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
/**
 * Word: with M_UTF16_POS, the batch's length in UTF-16 units when its spans are UTF-16 offsets;
 * −1 when they are byte offsets (a dirty batch, or the mode bit not given).
 */
export const FR_UNITS: i32 = 22;
/** Word: with M_SPLIT, UTF-16 units in MIDS (at OUT_PTR + MIDS_OFF, the batch's middles in order). */
export const FR_MIDS: i32 = 10;

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
/** SSE record word: an event's first data value's start, relative to IN_PTR of the call (negative: an earlier call). */
export const SR_DSTART: i32 = 7;

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
/**
 * With M_SPLIT: the data's middle is in MIDS. Its PATCH entry (the batch's next one) gives where
 * it goes in the span (a UTF-16 offset in the batch's text) and its length in units.
 */
export const SF_SPLIT: i32 = 4096;
/**
 * With SF_RAW: the data span lies where the JSON reader has its slack after it (the event stream
 * framer's event buffer: sseEventsAt), and a model stream reads it there rather than a copy.
 */
export const SF_SLACK: i32 = 8192;
/** Words of a PATCH entry: the offset in the batch's text where the middle goes, its units. */
export const PATCH_WORDS: i32 = 2;

// ---------------------------------------------------------------------------------------------
// JSON reader: limits

/**
 * Deepest nesting accepted: the outermost array or object of a document is at depth 1. An opening
 * bracket at depth JSON_MAX_DEPTH + 1 is the error JE_DEPTH.
 */
export const JSON_MAX_DEPTH: u32 = 512;
/** Longest key (in UTF-8 bytes, after unescaping) that a path program may hold. */
export const JSON_KEY_MAX: u32 = 255;
/** Bytes the reader needs past the end of a document: the sentinel's, then block loads. */
export const JSON_READ_SLACK: u32 = 16;
/** Writable bytes `jsonUnescape` and `jsonUtf16` need past 2 × their unit count (block stores). */
export const JSON_UTF16_SLACK: u32 = 64;

// ---------------------------------------------------------------------------------------------
// JSON reader: value kinds (record word 0, bits 16..23)

export const JK_STRING: u32 = 1;
export const JK_NUMBER: u32 = 2;
export const JK_OBJECT: u32 = 3;
export const JK_ARRAY: u32 = 4;
export const JK_TRUE: u32 = 5;
export const JK_FALSE: u32 = 6;
export const JK_NULL: u32 = 7;

// ---------------------------------------------------------------------------------------------
// JSON reader: record flags (record word 0, bits 24..31)

/** String: the span holds at least one backslash escape (make its text with `jsonUnescape`). */
export const JF_ESCAPED: u32 = 1;
/** String: every byte of the span is ASCII (without JF_ESCAPED: its text is those bytes). */
export const JF_ASCII: u32 = 2;
/** Number: no fraction and no exponent. */
export const JF_INTEGER: u32 = 4;

// ---------------------------------------------------------------------------------------------
// JSON reader: records
//
// One record per value found at a path, in document order of the values' first bytes (a
// container's record comes before the records inside it), 16 bytes (four i32 words) each:
//   word 0  path id (bits 0..15) | kind JK_* << 16 | flags JF_* << 24
//   word 1  element index of the innermost [*] step of the path, −1 when it has none
//   word 2  start offset, relative to the document's first byte
//   word 3  end offset (exclusive), relative to the document's first byte
// A string's span is the bytes between its quotes (still escaped); every other value's span is
// the whole value (an object's from `{` to `}` inclusive).

/** Words of a record, and what each holds. */
export const JREC_WORDS: u32 = 4;
export const JR_HEAD: u32 = 0;
export const JR_INDEX: u32 = 1;
export const JR_START: u32 = 2;
export const JR_END: u32 = 3;
export const JREC_BYTES: u32 = JREC_WORDS * 4;
export const JREC_KIND_SHIFT: u32 = 16;
export const JREC_FLAGS_SHIFT: u32 = 24;
/** Records the built-in record area holds (`jsonReadIn` writes there). */
export const JSON_REC_CAP: u32 = 1024;

// ---------------------------------------------------------------------------------------------
// JSON reader: path program
//
// A trie of path steps, written by JS, read (and, in the scratch words, written) by the reader.
// All offsets are in bytes from the program's first byte; integers are little-endian; nodes
// start at 4-byte aligned offsets. The root node (the document itself) is at offset 0.
//
//   node:
//     +0   u16  path id reported for a value at this node; JP_NO_PATH when no path ends here
//     +2   u16  number of key edges (the node's object members that lead on)
//     +4   u32  offset of the node for the elements of an array here (a [*] step); 0 when none
//     +8   u32  scratch: first record made by this node's value in the current parent object
//     +12  u32  scratch: end of those records (JS writes 0 in both; the reader keeps them)
//     +16  u32  key length filter: bit (n & 31) set when a key edge has n bytes (a quick reject)
//     +20  edge[number of key edges], 8 bytes each:
//            +0 u32 offset of the child node
//            +4 u16 key length in bytes (≤ JSON_KEY_MAX)
//            +6 u16 offset of the key's UTF-8 bytes (anywhere in the program)
//
// A path is a list of steps from the root: a key (an object member, matched after unescaping,
// byte for byte against the key's UTF-8) or [*] (every element of an array). A node can be the
// end of a path and lead on at the same time (`error` and `error.message`). Keys must be well
// formed UTF-8: a key spelled with a lone surrogate escape never matches one. The program is
// trusted: the reader does not check it. Programs are at most 64 KiB (u16 key offsets).

export const JP_NO_PATH: u32 = 0xFFFF;
export const JP_NODE_ID: usize = 0;
export const JP_NODE_NKEYS: usize = 2;
export const JP_NODE_STAR: usize = 4;
export const JP_NODE_DUP_START: usize = 8;
export const JP_NODE_DUP_END: usize = 12;
export const JP_NODE_LENGTHS: usize = 16;
export const JP_NODE_EDGES: usize = 20;
export const JP_EDGE_BYTES: usize = 8;
export const JP_EDGE_CHILD: usize = 0;
export const JP_EDGE_KEY_LEN: usize = 4;
export const JP_EDGE_KEY_OFF: usize = 6;
/** Bytes of the built-in program area (JSON_PROG_PTR): room for several formats' programs. */
export const JSON_PROG_CAP: u32 = 32768;

// ---------------------------------------------------------------------------------------------
// JSON reader: results and errors
//
// `jsonRead` returns the number of records (≥ 0), or −code. `jsonErrorAt` then gives the error's
// offset relative to the document's first byte: the length of the longest prefix of the input
// that is a prefix of some valid JSON text, that is, the offset of the first byte at which the
// input stops being one (so `{"a":1,}` fails at the `}`; `[01]` at the `1`). When the whole input
// is such a prefix, the document is incomplete: JE_TRUNCATED at the input's length. Two limits
// are reported where they are hit: JE_DEPTH at the bracket that opens depth JSON_MAX_DEPTH + 1,
// JE_RECORDS at the first byte of the value that would need one record more than allowed.

export const JE_OK: i32 = 0;
/** The input ended inside the document (or held only whitespace). Offset: the length. */
export const JE_TRUNCATED: i32 = 1;
/** A byte that cannot continue the document here: not a value, or not the `,` `:` `}` `]` or key
 *  that must follow. */
export const JE_UNEXPECTED: i32 = 2;
/** A byte other than whitespace after the complete top-level value. */
export const JE_TRAILING: i32 = 3;
/** A number broken off: a digit after a leading zero, or no digit after `-`, `.`, `e`, `e+`. */
export const JE_NUMBER: i32 = 4;
/** A raw byte below 0x20 inside a string. */
export const JE_CONTROL: i32 = 5;
/** A bad escape: the byte after `\` is none of `"\/bfnrtu`, or a `\u` digit is not hex. */
export const JE_ESCAPE: i32 = 6;
/** A wrong byte inside `true`, `false` or `null`. */
export const JE_LITERAL: i32 = 7;
/** Nesting deeper than JSON_MAX_DEPTH. */
export const JE_DEPTH: i32 = 8;
/** More records than the caller's limit. */
export const JE_RECORDS: i32 = 9;

/** Address of the built-in path program area (JSON_PROG_CAP bytes). */
export const JSON_PROG_PTR: usize = memory.data(<i32>JSON_PROG_CAP, 16);
/** Address of the built-in record area (JSON_REC_CAP records). */
export const JSON_REC_PTR: usize = memory.data(<i32>(JSON_REC_CAP * JREC_BYTES), 16);

// ---------------------------------------------------------------------------------------------
// Model streams: the JSON documents of a frame batch (modelDocs) and one text per batch (modelGather)

/** modelDocs framing: the batch's records are SSE records (each event's data is a document). */
export const MK_SSE: i32 = 0;
/** modelDocs framing: the batch's records are line records (each line is a document). */
export const MK_LINES: i32 = 1;
/** modelDocs flag: a line's leading "data:" and one space are not part of its document (ddg). */
export const MK_STRIP_DATA: i32 = 2;

/** Words of a document entry, and what each holds. */
export const MDOC_WORDS: i32 = 6;
/** Document word: index of its record in the batch. */
export const MD_REC: i32 = 0;
/** Document word: address of its first byte (in the input window, the output window or a scratch block). */
export const MD_PTR: i32 = 1;
/** Document word: its length in bytes. */
export const MD_LEN: i32 = 2;
/** Document word: index of its first JSON record in the record area; with DF_ERROR the error's offset in it. */
export const MD_J0: i32 = 3;
/** Document word: number of its JSON records; with DF_ERROR the error code (JE_*). */
export const MD_JN: i32 = 4;
/** Document word: flags (DF_*). */
export const MD_FLAGS: i32 = 5;
/** The document is exactly `[DONE]`: not read. */
export const DF_DONE: i32 = 2;
/** The document is not valid JSON: MD_JN is the code, MD_J0 the offset. */
export const DF_ERROR: i32 = 4;
/** The document's object at its template's MR_LAST rule (a running usage: Gemini's usageMetadata) is not the one kept before it: new usage, which the event says. */
export const DF_LAST: i32 = 8;
/** JSON records of the one document a modelDocs call hands to JS at the most (more is JE_RECORDS). */
export const MJREC_CAP: i32 = 4096;
/** Result word of modelDocs: document entries written, 0 or 1 (a call stops after the document it hands to JS). */
export const MDR_DOCS: i32 = 8;
/** Result word of modelDocs: the record to continue from (the batch's record count when done). */
export const MDR_NEXT: i32 = 9;

/** Result word of modelDocs: documents it read to the end itself (quiet events, see "Templates"): events. */
export const MDR_QUIET: i32 = 11;
/** Result word of modelDocs: blank documents (empty lines) it passed. */
export const MDR_BLANK: i32 = 12;
/** Result word of modelDocs: gather entries now written (the count it was given, plus the quiet events' text spans). */
export const MDR_GATHERED: i32 = 13;
/** Result word of modelDocs: SSE comments (keep-alives) among the records it passed. */
export const MDR_COMMENTS: i32 = 14;
/** Result word of modelDocs: the address of the bytes it wrote for a client (ME_* modes). */
export const MDR_EMIT_PTR: i32 = 15;
/** Result word of modelDocs: how many bytes it wrote for a client. */
export const MDR_EMIT_LEN: i32 = 16;
/** Result word of modelDocs: UTF-8 bytes of the quiet events' text (what the joined text holds); of modelGather with MG_KEEP: UTF-8 bytes of the text it kept. */
export const MDR_TEXT_BYTES: i32 = 17;
/** Result word of modelDocs: 1 when the text so far ends in a high surrogate escape (its pair may come next), else 0. */
export const MDR_HIGH: i32 = 18;
/** Result word of modelDocs: UTF-16 units of the batch's text, gathered at MGR_PTR; −1 when not gathered. */
export const MDR_UNITS: i32 = 19;
/** Result word of modelDocs, modelGather and sseWrite: 1 when the call left heap blocks of scratch (JS frees them with modelScratchFree once it has read the results). */
export const MDR_SCRATCH: i32 = 20;
/** Result word of modelPush / modelMore: 1 when they read the batch's documents (the MDR_* words are of that read). */
export const MDR_READ: i32 = 21;
/** Result word of modelDocs: of its quiet events, those that held no content (no text, reasoning or arguments of a byte: `{}`, a role or an empty string alone). */
export const MDR_EMPTY: i32 = 32;
/** Result word of modelDocs: with ME_CHUNKS, the events it wrote for the client (one per content span). */
export const MDR_CHUNKS: i32 = 23;
/** Result word of modelDocs: bytes (as sent, escaped) of reasoning the call's quiet events held. */
export const MDR_REASON_BYTES: i32 = 24;
/** Result word of modelDocs: bytes (as sent, escaped) of the current call's arguments the call's quiet events held. */
export const MDR_ARGS_BYTES: i32 = 25;
/** Result word of modelDocs, with ME_CHARS: characters (code points) of the quiet events' text, the text MDR_TEXT_BYTES counts (a pair of surrogate escapes one, a lone surrogate one: jsonChars). */
export const MDR_TEXT_CHARS: i32 = 31;
/** Result word of modelDocs: with ME_TEXT, the gather entries (from the first) whose text it appended to the stream's TEXT buffer without gathering them (one ASCII span, which JS reads as it is). */
export const MDR_LOGGED: i32 = 30;
/** modelTextDrop's `n` that ends a stream's text log (past any buffer's length): the buffer goes back. */
export const TEXT_LOG_END: i32 = 0x7fffffff;
/** Bytes of the static area a call's text (modelGather) is written in; more takes a heap block for the call. */
export const TEXT_SCRATCH_CAP: i32 = 1 << 17;
/** Bytes of the static area the writer writes in (the relay's and sseWrite's bytes); more takes a heap block for the call. */
export const EMIT_CAP: i32 = 1 << 18;

// Templates: what a format's quiet event looks like (a delta of the answer's text, of reasoning, or
// of the current tool call's arguments, and nothing else), so that the core reads such an event to
// the end itself and JS sees only the others. One rule per path id of the format's program; a
// record whose rule does not accept it makes the event one for JS.
//   header  u16 number of rules, u16 number of MR_LITERAL rules (each must match once),
//           u16 flags (MT_CHOICE, MT_LAST), u16 number of kinds
//   rule    u8 role (MR_*), u8 ignored kinds (bit 1 << JK_* for each kind the rule accepts and
//           ignores), u16 literal length, u16 literal offset (from the template's first byte),
//           u8 channel (CH_*, of an MR_TEXT rule), u8 flags (MRF_*)
//   kind    u16 literal length, u16 literal offset, u8 channel (CH_*), u8 0, u16 name length,
//           u16 name offset, u16 0 (the kinds follow the rules; the literals' bytes follow them)
// The content records of a quiet event (MR_TEXT) are all of one channel, in one element, and a
// kind the event names (MR_KIND) must be of that channel. An event of the arguments channel names
// its call (MR_CALL), which must be the stream's current call (modelSetCall).
/** Bytes of a template's header. */
export const MT_HEAD_BYTES: usize = 8;
/** Bytes of a template's rule. */
export const MT_RULE_BYTES: usize = 8;
/** Bytes of a template's kind. */
export const MT_KIND_BYTES: usize = 12;
/** Template flag: it has an MR_CHOICE rule. */
export const MT_CHOICE: i32 = 1;
/** Rule: accepts only its ignored kinds. */
export const MR_NONE: i32 = 0;
/** Rule: a string is content of the rule's channel (text, reasoning, or the call's arguments), in the followed element. */
export const MR_TEXT: i32 = 1;
/** Rule: a string equal to the literal (unescaped, byte for byte); every such rule must match. */
export const MR_LITERAL: i32 = 2;
/** Rule: a number equal to the followed choice; its element is the one whose text is read. */
export const MR_CHOICE: i32 = 3;
/** Rule: a string that is not the literal (an equal one is for JS). */
export const MR_NOT_LITERAL: i32 = 4;
/** Rule: a string equal to one of the template's kinds (its literal); the event is of that kind's channel. */
export const MR_KIND: i32 = 5;
/** Rule: a number naming the call (the provider's key): in an event of the arguments channel, the stream's current call. */
export const MR_CALL: i32 = 6;
/** Rule: an object (the followed choice's delta) whose element must be the followed one. */
export const MR_SCOPE: i32 = 7;
/**
 * Rule (with every kind ignored, so that any event may hold it): an object whose bytes the stream
 * keeps, the last one read replacing the one before, in quiet events and in those for JS alike
 * (Gemini's running usage, which a stream cut short reports: modelHeld). One longer than LAST_CAP,
 * or one the heap budget has no room for, leaves none kept rather than an older one.
 */
export const MR_LAST: i32 = 8;
/** Template flag: it has an MR_LAST rule. */
export const MT_LAST: i32 = 2;
/** The most bytes of an MR_LAST rule's object a stream keeps. */
export const LAST_CAP: i32 = 2048;
/**
 * Rule flag (of an MR_TEXT rule): the path is one of the names a format gives the same content
 * (OpenAI's `reasoning_content` and `reasoning`, which some servers send both, each with the same
 * text): an event with strings at two such paths is for JS, which reads one of them.
 */
export const MRF_ALIAS: i32 = 1;
/** Channel: the answer's text. */
export const CH_TEXT: i32 = 0;
/** Channel: reasoning. */
export const CH_REASONING: i32 = 1;
/** Channel: the current tool call's arguments. */
export const CH_ARGS: i32 = 2;
/** An MR_TEXT rule's channel: the kind's (the event's MR_KIND literal says which). */
export const CH_OF_KIND: i32 = 3;

/**
 * modelDocs emit mode: a quiet event is written for the client as it came: its name (with
 * ME_NAMED), a `data: ` line per line of its data, then a blank line.
 */
export const ME_PASS: i32 = 1;
/**
 * modelDocs emit mode: each content span of a quiet event is written as its channel's head, the
 * span's bytes and its end (in the head area's slot of the channel, MHEAD_PTR).
 */
export const ME_CHUNKS: i32 = 2;
/** modelDocs emit mode: comments are written for the client (`:` + text + LF LF). */
export const ME_COMMENTS: i32 = 4;
/** modelDocs emit mode: the text so far ends in a high surrogate escape (MDR_HIGH of the last call). */
export const ME_HIGH: i32 = 8;
/** modelDocs mode: gather the batch's text (MDR_UNITS) when the call reads it to the end with no event for JS. */
export const ME_GATHER: i32 = 16;
/** modelDocs mode, with ME_GATHER: the gathered text is also kept, appended to the stream's kept text (see modelGather). */
export const ME_KEEP: i32 = 32;
/**
 * modelDocs mode: reasoning may be read to the end by the core (appended to the stream's REASON
 * buffer, or written with ME_CHUNKS); without it reasoning events are for JS.
 */
export const ME_REASONING: i32 = 64;
/** modelDocs mode: the current call's arguments may be read to the end by the core (appended to ARGS within the stream's budget, or written). */
export const ME_ARGS: i32 = 128;
/** modelDocs mode: text events are for JS (a client's writer that must begin a block first). */
export const ME_NO_TEXT: i32 = 256;
/** modelDocs mode, with ME_PASS: a quiet event is written with its name (`event:` and its kind's name). */
export const ME_NAMED: i32 = 512;
/**
 * modelDocs mode, with ME_GATHER: the text's UTF-8 is also appended to the stream's TEXT buffer as
 * it is gathered (modelGather's MG_TEXT), for the report's SHA-256 to read there (modelTextLog).
 */
export const ME_TEXT: i32 = 1024;
/** modelDocs mode, with ME_CHUNKS: the quiet events' text characters are counted (MDR_TEXT_CHARS), for a writer that says where the content ends. */
export const ME_CHARS: i32 = 2048;
/**
 * modelDocs mode: the call reads one event that says something, quiet or a document: it stops
 * before a second quiet event with content, and before a document after one. JS takes what each
 * call read before the next, so that what a read said is given an event at a time, in order (an
 * app's parts: ModelPartReader), as if its events had come a read each.
 */
export const ME_ORDER: i32 = 4096;
/**
 * modelDocs mode: every event is for JS (as with no template), the template read only for its
 * MR_LAST object, which the stream keeps still (a stream near its text limit, or whose turn failed).
 */
export const ME_LOUD: i32 = 8192;
/** modelGather flag: the text is kept (appended to the stream's kept UTF-16 text; MDR_TEXT_BYTES its UTF-8 length). */
export const MG_KEEP: i32 = 1;
/** modelGather flag: the text's UTF-8 is appended to the stream's TEXT buffer (see ME_TEXT). */
export const MG_TEXT: i32 = 2;
/** Bytes of a channel's slot in the head area: a u32 length of the head, a u32 length of the end, the head's bytes, then the end's. */
export const MHEAD_SLOT: i32 = 1024;
/** Bytes of the head area: a slot per channel (CH_TEXT, CH_REASONING, CH_ARGS). */
export const MHEAD_CAP: i32 = 3072;
/** Address of the head area JS writes for ME_CHUNKS. */
export const MHEAD_PTR: usize = memory.data(MHEAD_CAP, 16);

// The SSE writer (sseWrite): a byte reader's events in the wire format, from the reader's bytes
// and its event table, written by JS into the input window and the span area, and the batch's
// types and IDs in the strings area. The run is reported in MDR_EMIT_PTR and MDR_EMIT_LEN.

/** Words per event in a byte reader's event table. */
export const EV_WORDS: i32 = 5;
/** Event word: where its data begins in the reader's bytes. */
export const EV_DATA0: i32 = 0;
/** Event word: where its data ends. */
export const EV_DATA1: i32 = 1;
/** Event word: index of its type in the batch's types. */
export const EV_TYPE: i32 = 2;
/** Event word: index of the last event ID in the batch's IDs. */
export const EV_ID: i32 = 3;
/** Event word: 1 when the event changed the last event ID. */
export const EV_ID_CHANGED: i32 = 4;
/** Bytes of the strings area: a (u32 offset from the area's start, u32 length) pair per string, then their bytes. */
export const SW_STR_CAP: i32 = 8192;
/** Address of the strings area. */
export const SW_STR_PTR: usize = memory.data(SW_STR_CAP, 16);

/** Words of a gather entry: a string span's address, its length, its JSON flags (JF_*). */
export const MG_WORDS: i32 = 3;
/** Gather entries per call at the most. */
export const MGATHER_CAP: i32 = 4096;
/** Result word of modelGather: the address of the UTF-16 units it wrote; of modelTextLog: the address of the stream's TEXT buffer. */
export const MGR_PTR: i32 = 10;

/** Address of the document entry. */
export const MDOC_PTR: usize = memory.data(MDOC_WORDS * 4, 16);
/** Address of the model streams' JSON records. */
export const MJREC_PTR: usize = memory.data(MJREC_CAP * <i32>JREC_BYTES, 16);
/** Address of the gather entries JS writes. */
export const MGATHER_PTR: usize = memory.data(MGATHER_CAP * MG_WORDS * 4, 16);

// ---------------------------------------------------------------------------------------------
// AWS event stream (application/vnd.amazon.eventstream): esNew, esPush, esMore (eventstream.ts)
//
// A push frames the bytes at IN_PTR after what the stream holds: a record per whole message in
// the span area (SPAN_PTR, ES_REC_WORDS each) and an entry per header in the header area
// (ES_HDR_PTR, ESH_WORDS each), with addresses of where the bytes lie (the input window, or the
// stream's buffer for a message that straddled pushes), valid until the next call. Offsets
// (ER_START, ESR_ERR_AT) are relative to IN_PTR: negative for a message that began in an
// earlier push.

/** Bytes of an event stream's state record. */
export const ES_STATE_BYTES: usize = 64;
/** Words of a message record. */
export const ES_REC_WORDS: i32 = 12;
/** Message word: where the message begins (relative to IN_PTR). */
export const ER_START: i32 = 0;
/** Message word: its total length. */
export const ER_LEN: i32 = 1;
/** Message word: the address of its payload, and the payload's length. */
export const ER_PAYLOAD: i32 = 2;
export const ER_PAYLOAD_LEN: i32 = 3;
/** Message word: its first header entry, and its number of headers. */
export const ER_HDR0: i32 = 4;
export const ER_NHDR: i32 = 5;
/** Message word: its `:message-type` (ES_MT_*). */
export const ER_MTYPE: i32 = 6;
/** Message word: the value of its `:event-type`, `:exception-type` or `:error-code` (a string header): address and length. */
export const ER_EVENT: i32 = 7;
export const ER_EVENT_LEN: i32 = 8;
/** Message word: the value of its `:error-message`: address and length. */
export const ER_MESSAGE: i32 = 9;
export const ER_MESSAGE_LEN: i32 = 10;

/** `:message-type`: none, `event`, `exception`, `error`, another value. */
export const ES_MT_NONE: i32 = 0;
export const ES_MT_EVENT: i32 = 1;
export const ES_MT_EXCEPTION: i32 = 2;
export const ES_MT_ERROR: i32 = 3;
export const ES_MT_OTHER: i32 = 4;

/** Words of a header entry: its name's address and length, its type (0–9), its value's address and length (big-endian as sent). */
export const ESH_WORDS: i32 = 5;
export const ESH_NAME: i32 = 0;
export const ESH_NAME_LEN: i32 = 1;
export const ESH_TYPE: i32 = 2;
export const ESH_VALUE: i32 = 3;
export const ESH_VALUE_LEN: i32 = 4;
/** Header entries per call at the most (a message with more is ESE_HEADERS). */
export const ES_HDR_CAP: i32 = 4096;
/** Address of the header area. */
export const ES_HDR_PTR: usize = memory.data(ES_HDR_CAP * ESH_WORDS * 4, 16);

/** Result word: message records written. */
export const ESR_NREC: i32 = 0;
/** Result word: header entries written. */
export const ESR_NHDR: i32 = 1;
/** Result word: 0, or the error (ESE_*) that stopped the stream, after the records before it. */
export const ESR_ERR: i32 = 2;
/** Result word: where the damaged message begins (relative to IN_PTR). */
export const ESR_ERR_AT: i32 = 3;
/** Result words: what the error compared (the CRC sent and the one computed; the length and the limit; …). */
export const ESR_ERR_WANT: i32 = 4;
export const ESR_ERR_GOT: i32 = 5;

// The events a model reader reads (Bedrock), written by esEvents, esEvent and esData after the
// records of a push: each event message as one SSE event whose data is its payload under its
// type (`data: {"contentBlockDelta":{…}}`), a chunk's decoded bytes as one SSE event, appended to
// the stream's event buffer (emptied by esClear) with a map entry per event: two f64, the event's
// offset in the buffer and the absolute offset of the message it came from.

/** Result word (after esEvents, esEvent, esData): the event buffer's address and its bytes. */
export const ESR_OUT: i32 = 6;
export const ESR_OUT_LEN: i32 = 7;
/** Result word: the map's address and its entries. */
export const ESR_MAP: i32 = 8;
export const ESR_MAP_N: i32 = 9;
// Bedrock's usual read in one call (esModelPush): the messages framed, their events written and
// read by the model stream, when nothing of the read is the caller's to see first.

/** esModelPush's status bit: the events were read by the model stream (its status in the other bits, its results in the result words). */
export const ESM_READ: i32 = 1 << 20;
/** esModelPush's status bit: the read completed no event (the event buffer is empty, in ESR_OUT…). */
export const ESM_NONE: i32 = 1 << 21;
/** esModelPush's status bit: the events were written (ESR_OUT…) but are larger than the input window: the caller reads them. */
export const ESM_WRITTEN: i32 = 1 << 22;
/** Result words after ESM_READ: the event buffer's address and bytes, the map's address and entries (as ESR_OUT…, which the read overwrote). */
export const ESMR_OUT: i32 = 26;
export const ESMR_OUT_LEN: i32 = 27;
export const ESMR_MAP: i32 = 28;
export const ESMR_MAP_N: i32 = 29;

/** esChunkBytes (InvokeModelWithResponseStream): a chunk's payload that is not JSON, has no `bytes`, or whose `bytes` is not a string. */
export const ESC_NOT_JSON: i32 = -1;
export const ESC_NO_BYTES: i32 = -2;
export const ESC_NOT_STRING: i32 = -3;

/** An event type longer than this is not one a model stream has: esEvents leaves its message to the caller. */
export const ES_MAX_TYPE: i32 = 256;

/** The prelude's CRC (its first 8 bytes) does not match: want, got. */
export const ESE_PRELUDE_CRC: i32 = 1;
/** The message's CRC (everything before it) does not match: want, got. */
export const ESE_MESSAGE_CRC: i32 = 2;
/** The total length passes the stream's limit: want the length, got the limit. Raised at the prelude, before any buffering. */
export const ESE_LIMIT: i32 = 3;
/** The lengths cannot be: a total under 16 bytes, or headers longer than the message holds (want total, got the headers' length). */
export const ESE_LENGTH: i32 = 4;
/** A header runs past the headers, or has a type not in 0–9: want its offset in the message, got the type. */
export const ESE_HEADER: i32 = 5;
/** One message with more than ES_HDR_CAP headers. */
export const ESE_HEADERS: i32 = 6;
