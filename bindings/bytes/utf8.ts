// Layer 1: incremental strict UTF-8. The core validates carry + chunk and transcodes; this file
// turns its result record into strings and errors.
import { type StateKind, CoreStream } from '../core/stream.js';
import { booleanOption, checkOptions } from '../core/options.js';
import { Utf8DecodeError } from './errors.js';
import { F_BOM_DONE, F_FATAL, F_IGNORE_BOM, M_VALIDATE, ST_CARRY, ST_FLAGS, ST_NCARRY, U8_ERR, UTF8_ERROR } from '../core/generated/abi.js';
import { type NodeUtf8, nodeUtf8Functions, stringRoutes } from '../core/strings.js';
import { asciiString, bufferBytes, expectBytes, forPieces, notBytes } from '../core/wasm.js';

/** What a TextDecoder habit explains, for the options of the UTF-8 decoders. */
const UTF8_HINTS = {
  keys: {
    stream: 'stream is an option of decode(input, { stream: true }); push(chunk) always streams',
    encoding: 'these decoders read UTF-8 only',
    label: 'these decoders read UTF-8 only',
  },
  notObject: (v: unknown) => (typeof v === 'string' ? 'TextDecoder takes a label first; these decoders read UTF-8 only and take only options' : undefined),
};

/** A UTF-8 decoder's state record: the ≤3-byte carry and the flags. */
const UTF8_STATE: StateKind = { reset: (x, st) => x.utf8Reset(st), free: (x, st) => x.stateFree(st) };

/** Options of {@link Utf8Decoder}, {@link Utf8Validator} and {@link Utf8DecoderStream}. */
export interface Utf8DecoderOptions {
  /**
   * Strict decoding: invalid or truncated UTF-8 throws {@link Utf8DecodeError} with the absolute
   * byte offset. With `false`, each maximal bad subpart becomes U+FFFD exactly as `TextDecoder` does.
   * @defaultValue true
   */
  fatal?: boolean;
  /**
   * Keep a leading byte order mark (U+FEFF) as text. By default one leading BOM per stream is dropped.
   * @defaultValue false
   */
  ignoreBOM?: boolean;
}

/**
 * A UTF-8 stream: the shared core's state record for it (the ≤3-byte carry and flags), the byte
 * count, and the error that stopped it. Base of the decoder and the validator.
 */
abstract class Utf8Stream extends CoreStream {
  readonly encoding = 'utf-8' as const;
  readonly fatal: boolean;
  readonly ignoreBOM: boolean;

  constructor(options: Utf8DecoderOptions | undefined, what: string, allowed: readonly string[]) {
    checkOptions(options, what, allowed, UTF8_HINTS);
    const fatal = booleanOption(options?.fatal, 'fatal', what, true);
    const ignoreBOM = booleanOption(options?.ignoreBOM, 'ignoreBOM', what, false);
    super(what, UTF8_STATE, (x) => x.utf8New((fatal ? F_FATAL : 0) | (ignoreBOM ? F_IGNORE_BOM : 0)));
    this.fatal = fatal;
    this.ignoreBOM = ignoreBOM;
  }

  /** The held-back incomplete tail, 0..3 bytes. */
  get pendingBytes(): number {
    return this.failure ? 0 : this.core.x.utf8Pending(this.st);
  }

  /** Decodes one piece that fits the input window; `before` is text this call already produced. */
  protected piece(chunk: Uint8Array, mode: number, before: string): string {
    const core = this.core;
    core.sync();
    core.u8.set(chunk, core.inPtr);
    const kind = core.x.utf8Push(this.st, chunk.length, mode);
    const text = core.text(kind);
    if (kind & UTF8_ERROR) {
      const rel = core.word(U8_ERR);
      const err = new Utf8DecodeError('ERR_INVALID_UTF8', this.bytesIn + rel, before + text, core.errorBytes(rel, chunk.length));
      this.bytesIn += chunk.length;
      this.stop(err);
    }
    this.bytesIn += chunk.length;
    return text;
  }

  /**
   * `chunk` from `from` through the core, in window-sized pieces (after a platform route gave it
   * back); `before`: this call's text so far.
   */
  protected corePieces(chunk: Uint8Array, from: number, mode: number, before: string): string {
    let text = '';
    forPieces(this.core, chunk.subarray(from), (p) => { text += this.piece(p, mode, before + text); });
    return text;
  }

  /**
   * After a platform route took the read's whole characters [at, tail): the incomplete one after
   * them becomes the core's carry, and the read's bytes from `at` are counted in.
   */
  protected carryFrom(chunk: Uint8Array, at: number, tail: number): void {
    const u8 = this.core.u8;
    const c = this.st + ST_CARRY;
    const n = chunk.length - tail;
    for (let i = 0; i < n; i++) u8[c + i] = chunk[tail + i];
    u8[this.st + ST_NCARRY] = n;
    this.bytesIn += chunk.length - at;
  }

  protected run(chunk: Uint8Array, mode: number, where: string): string {
    this.open(chunk, where);
    if (chunk.length <= this.core.inCap) return this.piece(chunk, mode, '');
    let text = '';
    forPieces(this.core, chunk, (p) => { text += this.piece(p, mode, text); });
    return text;
  }

  /** Ends the stream: the held tail is an error (strict) or one U+FFFD; then a new stream begins. */
  protected end(): string {
    if (this.failure) this.rethrow();
    const pending = this.core.x.utf8Pending(this.st);
    let rest = '';
    if (pending !== 0) {
      if (this.fatal) {
        this.core.sync();
        const bytes = this.core.u8.slice(this.st + ST_CARRY, this.st + ST_CARRY + pending);
        this.core.x.utf8Reset(this.st);
        this.stop(new Utf8DecodeError('ERR_TRUNCATED_UTF8', this.bytesIn - pending, '', bytes));
      }
      rest = '\uFFFD';
    }
    this.core.x.utf8Reset(this.st);
    this.bytesIn = 0;
    return rest;
  }
}

/**
 * Incremental UTF-8 decoding with a carry of at most 3 bytes between chunks.
 *
 * Strict by default: invalid input throws {@link Utf8DecodeError} (code, absolute offset, and the
 * text this call decoded before the bad sequence), and the decoder keeps throwing it until
 * `reset()`. With `fatal: false` the output equals `TextDecoder`'s with `stream: true`, character
 * for character, for every chunking.
 */
export class Utf8Decoder extends Utf8Stream {
  private continuing = false;

  /**
   * The split route (core/strings.ts): reads of at least this many bytes are decoded by the
   * platform in one call, the core keeping the carry (Infinity: never).
   */
  private readonly platformFrom: number;
  /** The split route's Node functions (`utf8Platform: 'buffer'`), else null: TextDecoder. */
  private readonly node: NodeUtf8 | null;
  /** With `node`: reads of at least this many bytes of text that is not ASCII go to TextDecoder instead (`utf8DecoderFrom`). */
  private readonly decoderFrom: number;
  /**
   * How the core writes a read's text: UTF-16 or Latin-1 (0) on the split route, whose reads
   * through the core are short, so that their strings are copied out without a TextDecoder call
   * where there is no Buffer; else the core's usual mode.
   */
  private readonly mode: number;
  /** How a read below the threshold is decoded while the text is ASCII (`StringRoutes.utf8ShortAscii`). */
  private readonly shortAscii: 'core' | 'platform' | 'js';
  /**
   * The last read was ASCII. The split route on Node: TextDecoder makes such strings faster. Where
   * there is no Buffer: only then is the next short read tried as ASCII (text with non-ASCII
   * characters rarely has a short read without one, and the try would cost it time).
   */
  private ascii = true;

  constructor(options?: Utf8DecoderOptions) {
    super(options, 'Utf8Decoder', ['fatal', 'ignoreBOM']);
    const route = stringRoutes(this.core);
    const split = route.utf8 === 'split';
    this.platformFrom = split ? route.utf8PlatformFrom : Infinity;
    this.node = split && route.utf8Platform === 'buffer' ? nodeUtf8Functions() : null;
    this.decoderFrom = route.utf8DecoderFrom;
    this.mode = split ? 0 : this.core.textMode;
    this.shortAscii = split ? route.utf8ShortAscii : 'core';
  }

  /** All text that is complete so far; an incomplete tail (≤3 bytes) is held back. */
  push(chunk: Uint8Array): string {
    if (chunk instanceof Uint8Array) {
      if (chunk.length >= this.platformFrom) return this.platform(chunk);
      if (this.shortAscii !== 'core') return this.short(chunk);
    }
    return this.run(chunk, this.mode, 'Utf8Decoder.push()');
  }

  /**
   * A read below the threshold, where ASCII text takes another way: while the text is ASCII, the
   * platform's (as a long read) or a string made in JavaScript without the core when nothing is
   * carried; else the core.
   */
  private short(chunk: Uint8Array): string {
    if (this.ascii && this.shortAscii === 'platform') return this.platform(chunk);
    if (this.ascii && this.failure === null) {
      const core = this.core;
      core.sync();
      const u8 = core.u8;
      // nothing carried, and the stream's BOM decided (its first bytes are the core's)
      if (u8[this.st + ST_NCARRY] === 0 && (u8[this.st + ST_FLAGS] & F_BOM_DONE) !== 0) {
        const text = asciiString(chunk);
        if (text !== null) {
          this.bytesIn += chunk.length;
          return text;
        }
      }
    }
    const text = this.run(chunk, this.mode, 'Utf8Decoder.push()');
    this.ascii = text.length === chunk.length;
    return text;
  }

  /**
   * The split route's large read (and, on Bun, a short one of ASCII text): the core's state holds
   * the carry and the BOM as on the core route. The carried character is completed here when its
   * bytes are valid, else by the core (which rejects or replaces them as usual); the read's whole
   * characters are decoded by one call of the platform (Node 24+: buffer.isUtf8 and utf8Slice,
   * both simdutf, or TextDecoder while the text is ASCII and, on Node 26, for a long read;
   * elsewhere a non-streaming TextDecoder),
   * and the incomplete character at the end becomes the core's carry. Where the platform rejects
   * the bytes, the core decodes them again from the same state and places the error: strictness,
   * offsets and the error's text are the core's.
   */
  private platform(chunk: Uint8Array): string {
    this.open(chunk, 'Utf8Decoder.push()');
    const core = this.core;
    const st = this.st;
    core.sync();
    const u8 = core.u8;
    let at = 0;
    let text = '';
    const carried = u8[st + ST_NCARRY];
    const flags = u8[st + ST_FLAGS];
    if ((flags & F_BOM_DONE) === 0) {
      // the stream's first bytes: a BOM split across reads is the core's to find
      if (carried !== 0 || chunk.length < 3) return this.corePieces(chunk, 0, this.mode, '');
      if (!this.ignoreBOM && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) at = 3;
      u8[st + ST_FLAGS] = flags | F_BOM_DONE;
      this.bytesIn += at;
    } else if (carried !== 0) {
      // the carried character, completed here when the read's first bytes do; else (bytes that
      // do not continue it, or a read too short) the whole read goes through the core, which
      // rejects or replaces them as on the core route
      text = completed(u8, st + ST_CARRY, carried, chunk);
      if (text === '') return this.corePieces(chunk, 0, this.mode, '');
      at = utf8Length(u8[st + ST_CARRY]) - carried;
      u8[st + ST_NCARRY] = 0;
      this.bytesIn += at;
    }
    const tail = Math.max(at, incompleteTail(chunk, chunk.length));
    const bytes = at === 0 && tail === chunk.length ? chunk : chunk.subarray(at, tail);
    let body: string;
    const node = this.node;
    if (node !== null && !this.ascii && bytes.length < this.decoderFrom) {
      // Node: simdutf validates, and V8 makes a two-byte string faster than TextDecoder does
      // (Node 26: but for long reads, where its TextDecoder does both in one pass).
      // Not strict: utf8Slice alone, which replaces bad bytes exactly as TextDecoder does (each
      // maximal subpart by one U+FFFD; the routes tests check it on every route)
      if (this.fatal && !node.isUtf8(bytes)) return text + this.corePieces(chunk, at, this.mode, text);
      body = node.utf8Slice.call(bytes, 0, bytes.length);
    } else {
      try {
        body = (this.fatal ? platformFatal ??= new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
          : platformReplacing ??= new TextDecoder('utf-8', { ignoreBOM: true })).decode(bytes);
      } catch {
        return text + this.corePieces(chunk, at, this.mode, text);
      }
    }
    this.ascii = body.length === bytes.length;
    this.carryFrom(chunk, at, tail);
    return text + body;
  }

  /** End of stream: the rest (U+FFFD for a held tail when not strict), then a new stream begins. */
  flush(): string {
    return this.end();
  }

  /** `TextDecoder.decode` semantics: with `stream: true` like push, else push + flush. */
  decode(input?: ArrayBufferLike | ArrayBufferView, options?: { stream?: boolean }): string {
    if (!this.continuing) this.reset();
    const stream = options?.stream === true;
    this.continuing = stream;
    try {
      const text = input === undefined ? '' : this.push(asBytes(input));
      return stream ? text : text + this.flush();
    } catch (e) {
      // as TextDecoder: after a call throws, the next call starts a new stream
      this.continuing = false;
      throw e;
    }
  }
}

/** The split route's decoders: non-streaming, one per realm (they hold no state between calls). */
let platformFatal: TextDecoder | undefined;
let platformReplacing: TextDecoder | undefined;

/** The bytes of a UTF-8 character that begins with `lead`; 0 when `lead` cannot begin one. */
function utf8Length(lead: number): number {
  return lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
}

/**
 * Whether `c` may follow `lead` as its character's second byte: its range depends on the lead (no
 * overlong form, surrogate or value past U+10FFFF).
 */
function secondByteFits(lead: number, c: number): boolean {
  const lo = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
  const hi = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
  return c >= lo && c <= hi;
}

/**
 * The character whose first `carried` bytes (a valid prefix) lie at `u8[p]`, completed by the
 * first bytes of `chunk`, as a string; '' when those bytes do not complete it validly (or the
 * chunk is too short), for the core to decide.
 */
function completed(u8: Uint8Array, p: number, carried: number, chunk: Uint8Array): string {
  const lead = u8[p];
  const need = utf8Length(lead);
  if (completes(u8, p, carried, chunk) === 0) return '';
  let cp = lead & (need === 2 ? 0x1f : need === 3 ? 0x0f : 0x07);
  for (let i = 1; i < need; i++) cp = (cp << 6) | ((i < carried ? u8[p + i] : chunk[i - carried]) & 0x3f);
  return String.fromCodePoint(cp);
}

/**
 * How many of the first bytes of `chunk` complete the character whose first `carried` bytes (a
 * valid prefix) lie at `u8[p]`; 0 when they do not complete it validly (or the chunk is too short).
 */
function completes(u8: Uint8Array, p: number, carried: number, chunk: Uint8Array): number {
  const lead = u8[p];
  const need = utf8Length(lead);
  if (chunk.length < need - carried) return 0;
  for (let i = 1; i < need; i++) {
    const c = i < carried ? u8[p + i] : chunk[i - carried];
    if (i === 1 ? !secondByteFits(lead, c) : (c & 0xc0) !== 0x80) return 0;
  }
  return need - carried;
}

/**
 * Start of the incomplete character at the end of bytes [0, end): a lead byte followed by fewer
 * continuation bytes than it needs, each in its allowed range (what TextDecoder holds back).
 */
export function incompleteTail(b: Uint8Array, end: number): number {
  for (let i = 1; i <= 3 && end - i >= 0; i++) {
    const lead = b[end - i];
    if ((lead & 0xc0) === 0x80) continue;
    if (utf8Length(lead) <= i) return end;
    if (i >= 2 && !secondByteFits(lead, b[end - i + 1])) return end;
    return end - i;
  }
  return end;
}

/**
 * Strict UTF-8 validation of a stream without building any string: for gateways that forward
 * bytes. Throws {@link Utf8DecodeError} like a strict {@link Utf8Decoder}.
 */
export class Utf8Validator extends Utf8Stream {
  /**
   * Reads of at least this many bytes are validated by the platform's `buffer.isUtf8` (simdutf),
   * the core keeping the carry (`StringRoutes.validateFrom`; Infinity: never).
   */
  private readonly platformFrom: number;
  private readonly isUtf8: ((bytes: Uint8Array) => boolean) | null;

  constructor(options?: { ignoreBOM?: boolean }) {
    checkOptions(options, 'Utf8Validator', ['ignoreBOM'], UTF8_HINTS);
    super({ fatal: true, ignoreBOM: options?.ignoreBOM ?? true }, 'Utf8Validator', ['fatal', 'ignoreBOM']);
    const from = stringRoutes(this.core).validateFrom;
    this.isUtf8 = from === Infinity ? null : nodeUtf8Functions()?.isUtf8 ?? null;
    this.platformFrom = this.isUtf8 === null ? Infinity : from;
  }

  /** Validates the chunk (an incomplete tail is held for the next one). */
  push(chunk: Uint8Array): void {
    if (chunk instanceof Uint8Array && chunk.length >= this.platformFrom) this.platform(chunk);
    else this.run(chunk, M_VALIDATE, 'Utf8Validator.push()');
  }

  /**
   * The platform's validation of a read, as the decoder's split route decodes one: the carried
   * character is completed here when the read's first bytes do so validly, else the whole read
   * goes through the core; the read's whole characters are validated by one `buffer.isUtf8` call,
   * and its incomplete last character becomes the core's carry. Where the platform rejects the
   * bytes, the core validates them again from the same state and places the error. (A BOM is
   * valid UTF-8 whether the core would skip it or not, so the BOM state is left to the core.)
   */
  private platform(chunk: Uint8Array): void {
    this.open(chunk, 'Utf8Validator.push()');
    const core = this.core;
    const st = this.st;
    core.sync();
    const u8 = core.u8;
    let at = 0;
    const carried = u8[st + ST_NCARRY];
    if (carried !== 0) {
      at = completes(u8, st + ST_CARRY, carried, chunk);
      if (at === 0) {
        this.corePieces(chunk, 0, M_VALIDATE, '');
        return;
      }
      u8[st + ST_NCARRY] = 0;
      this.bytesIn += at;
    }
    const tail = Math.max(at, incompleteTail(chunk, chunk.length));
    if (!this.isUtf8!(at === 0 && tail === chunk.length ? chunk : chunk.subarray(at, tail))) {
      this.corePieces(chunk, at, M_VALIDATE, '');
      return;
    }
    this.carryFrom(chunk, at, tail);
  }

  /** End of stream: throws `ERR_TRUNCATED_UTF8` if a character was left incomplete. */
  flush(): void {
    this.end();
  }
}

/** @internal The bytes of a BufferSource (`bufferBytes`); anything else is a TypeError of `where`'s. */
export function asBytes(input: ArrayBufferLike | ArrayBufferView, where = 'Utf8Decoder.decode()'): Uint8Array {
  const bytes = bufferBytes(input);
  if (bytes === null) throw notBytes(input, `${where} expects an ArrayBuffer or an ArrayBuffer view`);
  return bytes;
}
