// TextAssembler: whole graphemes + NFC + counts + SHA-256 for a model's text deltas, in one pass
// over each delta.
//
// A commit point must be both a final grapheme boundary and NFC-stable (the code point after it
// is a starter that never combines backward). Pieces cut there are normalized separately and
// their concatenation equals NFC of the whole text; the boundary survives normalization because
// the code point after it is untouched by NFC and no grapheme rule can join it to what NFC makes
// of the text before it.

import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { BREAK, DEFAULT_MAX_PENDING_BYTES, START_STATE, step } from './grapheme.js';
import { byteLimitOption, checkOptions, describeValue, oneOf } from '../core/options.js';
import { countText } from './counts.js';
import { TEXT_OPTION_HINTS, TextRangeError, invalidOption, limitInPlaceOfOptions, notText } from './errors.js';
import { Prop, bmpProps, plainUtf8, propOf } from './unicode/props.js';

/** Default {@link TextAssemblerOptions.maxTextBytes}: 256 MiB. */
export const DEFAULT_MAX_TEXT_BYTES = 256 * 1024 * 1024;

/** Options for {@link TextAssembler}. */
export interface TextAssemblerOptions {
  /**
   * `'NFC'` normalizes the committed text; `false` commits the raw text (still whole graphemes).
   * @defaultValue 'NFC'
   */
  normalize?: 'NFC' | false;
  /**
   * The most UTF-8 bytes held back while waiting for a boundary that is both a final grapheme
   * boundary and NFC-stable. Past it (say, 10,000 combining marks in one cluster) the held text
   * is committed anyway, cut inside the cluster, and {@link TextAssembler.forcedCommits} counts
   * it; NFC of that cut may then differ from NFC of the whole text. No text is dropped.
   * @defaultValue 65536 (64 KiB)
   */
  maxPendingBytes?: number;
  /**
   * The most UTF-8 bytes of committed text kept for {@link FinalReport.text}. A `push` (or
   * `finish`) that would commit past it throws {@link TextRangeError} with code
   * `ERR_TEXT_TOO_LONG` and changes nothing: the delta is refused whole, and the text committed
   * and held before it stays, so a smaller delta or `finish()` can still follow.
   * @defaultValue 268435456 (256 MiB)
   */
  maxTextBytes?: number;
}

/** What {@link TextAssembler.finish} returns. */
export interface FinalReport {
  /** The whole committed text. */
  text: string;
  /** Bytes of the UTF-8 of `text` (an unpaired surrogate counts 3, as the U+FFFD an encoder writes). */
  utf8Bytes: number;
  /** Code points of `text`. */
  codePoints: number;
  /** UTF-16 code units of `text` (`text.length`). */
  utf16Units: number;
  /** Extended grapheme clusters of `text` (UAX #29, Unicode 17.0). */
  graphemes: number;
  /** NFC changed the raw text. */
  normalizationChanged: boolean;
  /** Hex SHA-256 of the UTF-8 of `text` (unpaired surrogates encoded as U+FFFD). */
  sha256: string;
  /** Only when `expected` was given: NFC(expected) !== text (with `normalize: false`, expected !== text). */
  mismatch?: boolean;
}

/** @internal */
export interface Hasher {
  update(text: string): void;
  /** The UTF-8 of text, as it is (a view that may be reused once this returns). */
  updateBytes(bytes: Uint8Array): void;
  digest(): string;
}

/**
 * @internal The UTF-8 of all the text pushed, in order, where the deltas were read (a model
 * stream's core): the report's hash reads the committed text's bytes there, rather than making
 * the committed strings UTF-8 again (on Node 24, 2 ns a UTF-16 unit of two-byte text, most of a
 * native hash's cost). A lone surrogate is U+FFFD there, as an encoder writes it.
 */
export interface TextBytes {
  /** A view of the next `n` bytes, read before any other call. */
  textBytes(n: number): Uint8Array;
  /** Gives up the next `n` bytes (hashed, or the raw bytes of a piece that NFC changed). */
  dropText(n: number): void;
}

type NodeCrypto = { createHash(alg: 'sha256'): { update(s: string | Uint8Array, enc?: 'utf8'): unknown; digest(enc: 'hex'): string } };
/** Looked up on the first hasher, not at import; null where there is none. */
let nodeCrypto: NodeCrypto | null | undefined;

function findNodeCrypto(): NodeCrypto | null {
  try {
    // Node >= 20.16 has getBuiltinModule: no import of 'node:crypto' that a browser bundle would trip on.
    const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    return (nodeCrypto = (proc?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined) ?? null);
  } catch {
    return (nodeCrypto = null);
  }
}

/**
 * @internal Node's crypto (native, ~1 GB/s, takes strings) where it exists; elsewhere (browsers
 * have only the asynchronous WebCrypto) `fallback`, the core's SHA-256 a model stream hands its
 * assembler (./core-hash.ts), or @noble/hashes for an assembler on its own (no WebAssembly loaded
 * for the text layer alone).
 */
export function createHasher(native = true, fallback: (() => Hasher) | null = null): Hasher {
  const crypto = native ? (nodeCrypto === undefined ? findNodeCrypto() : nodeCrypto) : null;
  if (crypto) {
    const h = crypto.createHash('sha256');
    return { update: (s) => void h.update(s, 'utf8'), updateBytes: (b) => void h.update(b), digest: () => h.digest('hex') };
  }
  if (fallback !== null) return fallback();
  const h = nobleSha256.create();
  const enc = new TextEncoder();
  return {
    update: (s) => void h.update(enc.encode(s)),
    updateBytes: (b) => void h.update(b),
    digest: () => {
      let hex = '';
      for (const b of h.digest()) hex += (b < 16 ? '0' : '') + b.toString(16);
      return hex;
    },
  };
}

const OPTIONS = ['normalize', 'maxPendingBytes', 'maxTextBytes'] as const;
const WHICH_LIMIT = "did you mean 'maxTextBytes' (all the committed text) or 'maxPendingBytes' (the text held back)?";
const KEY_HINTS: Readonly<Record<string, string>> = {
  normalization: "did you mean 'normalize'?",
  normalizationForm: "did you mean 'normalize'?",
  form: "did you mean 'normalize'?",
  nfc: "did you mean 'normalize'? ('NFC' or false)",
  expected: 'an option of finish(): finish({ expected })',
  maxBytes: WHICH_LIMIT,
  maxLength: WHICH_LIMIT,
  limit: WHICH_LIMIT,
  maxLineBytes: WHICH_LIMIT,
  maxEventBytes: WHICH_LIMIT,
};
const OPTION_HINTS = {
  keys: [KEY_HINTS, TEXT_OPTION_HINTS],
  notObject: (value: unknown) =>
    typeof value === 'string' || typeof value === 'boolean' ? `did you mean new TextAssembler({ normalize: ${describeValue(value)} })?`
      : limitInPlaceOfOptions('TextAssembler', 'maxTextBytes')(value),
};
const NORMALIZE_HINTS: Readonly<Record<string, string>> = {
  true: "NFC is the default; 'NFC' names it and false turns it off",
  NFD: 'only NFC is streamed; give false and normalize the finished text for another form',
  NFKC: 'only NFC is streamed; give false and normalize the finished text for another form',
  NFKD: 'only NFC is streamed; give false and normalize the finished text for another form',
};
const FINISH_HINTS = {
  notObject: (value: unknown) => (typeof value === 'string' ? 'did you mean finish({ expected: text })?' : undefined),
};

/** Committed text is hashed in batches of about this many UTF-16 units (one native call per batch). */
const HASH_BATCH = 16 * 1024;
/**
 * Committed bytes of a {@link TextBytes} are hashed once there are this many: the view costs a
 * native call (about 60 ns on Node 24, a tenth of 512 bytes' hashing), and the bytes wait for it
 * in the core, where they are a stream's memory.
 */
const BYTES_BATCH = 512;

/**
 * Turns a model's text deltas into committed text: whole extended grapheme clusters, normalized
 * to NFC, with running counts and SHA-256. `finish()` returns the {@link FinalReport}.
 *
 * `push` returns text that will never change: the concatenation of everything it returns is a
 * prefix of the final `text`. Surrogates and runaway clusters are handled as
 * {@link GraphemeCommitter} and {@link NfcCommitter} document. After `finish()` the assembler is
 * ready for a new stream.
 */
export class TextAssembler {
  /** Whether committed text is normalized, from the options. */
  readonly normalize: 'NFC' | false;
  /** The hold-back limit, from the options. */
  readonly maxPendingBytes: number;
  /** The committed-text limit, from the options. */
  readonly maxTextBytes: number;

  #held = '';
  #scan = 0;
  #state = START_STATE;
  // Raw counts of the scanned part of #held.
  #heldBytes = 0;
  #heldCps = 0;
  #heldGraphemes = 0;
  #heldDirty = false;
  /** #held begins inside a cluster (after a forced commit). */
  #heldMid = false;
  #forced = 0;
  /** The BMP's property bytes, fetched once by the constructor (see GraphemeCommitter). */
  #bmp: Uint8Array;
  /** The UTF-8 bytes of each plain Other of the BMP, 0 for the rest (plainUtf8). */
  #plain: Uint8Array;

  /** The committed text's hashed batches, each one flat string. */
  #pieces: string[] = [];
  /**
   * The committed text not hashed yet, concatenated as it is committed (a rope, which the hash
   * flattens once). Not an array joined at the batch's end: Firefox's `join` of a batch of deltas
   * cost about twice the concatenation and its flattening together (130 against 60 ns a delta of
   * 30 units, with the hash); V8 and JavaScriptCore take the same time either way.
   */
  #batch = '';
  /** Made with the first batch to hash: an idle stream holds none (a native hash and its wrappers, about 300 bytes). */
  #hasher: Hasher | null = null;
  /** Where the runtime has no native hash: what makes one (set by a model stream: the core's), else @noble/hashes. */
  #fallbackHasher: (() => Hasher) | null = null;
  /** Where the pushed text's UTF-8 is, hashed from there (set by a model stream), or null: the strings are hashed. */
  #log: TextBytes | null = null;
  /** Bytes of #log committed and not hashed yet (in the text as pushed: before NFC). */
  #owed = 0;
  /** The text held when #log began, which it does not hold: hashed as a string, at the start of the next commit. */
  #before = '';
  #beforeBytes = 0;
  #bytes = 0;
  #cps = 0;
  #units = 0;
  #graphemes = 0;
  #changed = false;

  /**
   * Options that are not an object, unknown options and values of the wrong type throw a
   * `TypeError`; a value out of range throws `TextRangeError` (`ERR_INVALID_OPTION`).
   */
  constructor(options?: TextAssemblerOptions) {
    const where = 'TextAssembler';
    checkOptions(options, where, OPTIONS, OPTION_HINTS);
    this.normalize = oneOf(options?.normalize, 'normalize', where, ['NFC', false], 'NFC', invalidOption, NORMALIZE_HINTS);
    this.maxPendingBytes = byteLimitOption(options?.maxPendingBytes, 'maxPendingBytes', where, DEFAULT_MAX_PENDING_BYTES, Infinity, invalidOption);
    this.maxTextBytes = byteLimitOption(options?.maxTextBytes, 'maxTextBytes', where, DEFAULT_MAX_TEXT_BYTES, Infinity, invalidOption);
    this.#bmp = bmpProps();
    this.#plain = plainUtf8();
  }

  /** @internal Where the runtime has no native SHA-256, the report's hash is made by `make` (a model stream's core). */
  hashWith(make: () => Hasher): void {
    this.#fallbackHasher = make;
  }

  /**
   * @internal From the next push on, the UTF-8 of every delta pushed is in `log`, in order, and
   * the hash reads the committed text's bytes there; {@link detachBytes} ends it. Taken (true) once
   * `after` bytes of text are committed (a short stream has no log to hold), and not while the held
   * text ends in a lone high surrogate, which the next delta may pair with bytes the log lacks.
   */
  hashBytes(log: TextBytes, after: number): boolean {
    if (this.#log !== null) return true;
    if (this.#bytes < after || this.#scan !== this.#held.length) return false;
    this.#hashPending(); // (what is committed so far: its strings)
    this.#log = log;
    this.#before = this.#held;
    this.#beforeBytes = this.#heldBytes;
    return true;
  }

  /**
   * @internal The log is about to go (its stream failed or was given back) or to fall behind (a
   * push was refused): the committed bytes it holds are hashed now, and the text committed from
   * here on is hashed as strings.
   */
  detachBytes(): void {
    if (this.#log === null) return;
    this.#hashLog();
    this.#log = null;
    this.#before = '';
    this.#beforeBytes = 0;
    if (this.#batch.length !== 0) {
      this.#pieces.push(this.#batch); // (hashed)
      this.#batch = '';
    }
  }

  /** @internal UTF-8 bytes of the text committed so far (what maxTextBytes bounds). */
  get committedBytes(): number {
    return this.#bytes;
  }

  /** @internal The text committed so far, as one string (a model stream places its sources' spans in it). */
  get committedText(): string {
    let text = '';
    for (const piece of this.#pieces) text += piece;
    return text + this.#batch;
  }

  /** @internal Whether NFC changed the text committed so far (a model stream's byte offsets of the text as sent are then not the text's). */
  get normalizationChanged(): boolean {
    return this.#changed;
  }

  /** Raw text held back (the last cluster or clusters, not yet normalized). */
  get pending(): string {
    return this.#held;
  }

  /** How many times the hold-back passed `maxPendingBytes` and was committed at an unsafe point. */
  get forcedCommits(): number {
    return this.#forced;
  }

  /** Adds a delta; returns newly committed text: whole graphemes, NFC. Anything but a string is a `TypeError` and changes nothing. */
  push(delta: string): string {
    if (typeof delta !== 'string') throw notText(delta, 'TextAssembler.push', 'delta', (arg) => `push(${arg})`);
    if (delta.length === 0) return '';
    return this.#run(delta, false);
  }

  /**
   * End of stream's text: commits what is held and returns it (whole graphemes, NFC), so that
   * everything `push` and `flush` returned is the report's `text`. `finish()` then gives the
   * report. A caller that streams the text takes its tail here rather than slicing it off the
   * report's text, which would copy the whole text into one new string.
   */
  flush(): string {
    return this.#held.length === 0 ? '' : this.#run('', true);
  }

  /**
   * End of stream: commits what is held and returns the report. With `expected` (the provider's
   * idea of the final text), `mismatch` says whether it differs from `text` after NFC.
   */
  finish(options?: { expected?: string }): FinalReport {
    // Checked before anything changes: a bad call leaves the stream as it was.
    checkOptions(options, 'TextAssembler.finish', ['expected'], FINISH_HINTS);
    const expected = options?.expected;
    if (expected !== undefined && typeof expected !== 'string') {
      throw notText(expected, 'TextAssembler.finish', 'expected', (arg) => `finish({ expected: ${arg} })`, false);
    }
    if (this.#held.length !== 0) this.#run('', true);
    this.#hashPending();
    // Concatenated, not joined: the batches are flat already, and a joined text past 128 KiB is
    // a new large-object allocation (0.4-0.7 ms for 256 KiB on Node 24, a third of a 1 MiB
    // stream's text layer); the runtime flattens the concatenation when it is first read.
    let text = '';
    for (const piece of this.#pieces) text += piece;
    const report: FinalReport = {
      text,
      utf8Bytes: this.#bytes,
      codePoints: this.#cps,
      utf16Units: this.#units,
      graphemes: this.#graphemes,
      normalizationChanged: this.#changed,
      sha256: this.#hash().digest(),
    };
    if (expected !== undefined) {
      report.mismatch = (this.normalize === 'NFC' ? expected.normalize('NFC') : expected) !== text;
    }
    this.#reset();
    return report;
  }

  /** @internal Forgets the text held back: a stream that can commit no more of it (past maxTextBytes) finishes with what it committed. */
  discardHeld(): void {
    this.#held = '';
    this.#scan = 0;
    this.#state = START_STATE;
    this.#heldBytes = this.#heldCps = this.#heldGraphemes = 0;
    this.#heldDirty = this.#heldMid = false;
  }

  #reset(): void {
    this.discardHeld();
    this.#changed = false;
    this.#pieces = [];
    this.#batch = '';
    this.#hasher = null;
    this.#log = null;
    this.#owed = 0;
    this.#before = '';
    this.#beforeBytes = 0;
    this.#bytes = this.#cps = this.#units = this.#graphemes = 0;
  }

  /**
   * Scans `text` (the held text was scanned by earlier calls, except a trailing lone high
   * surrogate, which moves to the front of `text`) and commits held + text up to the last commit
   * point; everything when `final`.
   */
  #run(text: string, final: boolean): string {
    let held = this.#held;
    if (this.#scan < held.length) {
      text = held.slice(this.#scan) + text;
      held = held.slice(0, this.#scan);
    }
    const n = text.length;
    const max = this.maxPendingBytes;
    const nfc = this.normalize === 'NFC';
    let st = this.#state;
    let i = 0;
    // Raw counts from the start of held to i, and to the latest commit point.
    let bytes = this.#heldBytes;
    let cps = this.#heldCps;
    let g = this.#heldGraphemes;
    let cut = -1; // the latest commit point in text
    let cutBytes = 0;
    let cutCps = 0;
    let cutG = 0;
    let dirty = this.#heldDirty; // the text from the latest commit point to i has an NFC-unstable code point
    let cutDirty = false; // the text before it has one
    let cutMid = this.#heldMid; // the text from the latest commit point begins inside a cluster
    const pieceMid = this.#heldMid;
    let forced = 0;
    const bmp = this.#bmp;
    const plain = this.#plain;
    // A run of plain Others can take the short loop below when one such character alone cannot
    // pass the hold-back limit (it is at most 3 bytes, so only a limit under 3 bytes could).
    const runs = max >= 3;
    while (i < n) {
      let cp = text.charCodeAt(i);
      let w = plain[cp];
      if (st === 0 && w !== 0) {
        // A plain Other after a plain Other (printable ASCII, and most letters and ideographs:
        // no Extend, ExtPict, InCB or RI property, an NFC-stable starter): a grapheme boundary
        // and a commit point, the state unchanged. A run of them ends with the commit point
        // before its last character.
        if (dirty) cutDirty = true;
        dirty = false;
        cutMid = false;
        if (runs) {
          const from = i;
          for (;;) {
            cutBytes = bytes;
            bytes += w; // (its UTF-8 bytes: one load tells a plain Other and its length)
            if (++i === n) break;
            w = plain[text.charCodeAt(i)];
            if (w === 0) break;
          }
          cps += i - from;
          g += i - from;
          cut = i - 1;
          cutCps = cps - 1;
          cutG = g - 1;
          continue;
        }
        cut = i;
        cutBytes = bytes;
        cutCps = cps;
        cutG = g;
        bytes += w;
        cps++;
        g++;
        i++;
        if (bytes - cutBytes > max) {
          cut = i;
          cutBytes = bytes;
          cutCps = cps;
          cutG = g;
          cutMid = true;
          forced++;
        }
        continue;
      }
      w = 1;
      if ((cp & 0xfc00) === 0xd800) {
        if (i + 1 === n) {
          if (!final) break; // a lone high surrogate at the end: wait for its pair
        } else {
          const lo = text.charCodeAt(i + 1);
          if ((lo & 0xfc00) === 0xdc00) {
            cp = ((cp - 0xd800) << 10) + (lo - 0xdc00) + 0x10000;
            w = 2;
          }
        }
      }
      const p = cp < 0x10000 ? bmp[cp] : propOf(cp);
      st = step(st, p);
      if (st & BREAK) {
        st ^= BREAK;
        if (!nfc || (p & Prop.NfcUnstable) === 0) {
          if (dirty) cutDirty = true;
          dirty = false;
          cut = i;
          cutBytes = bytes;
          cutCps = cps;
          cutG = g;
          cutMid = false;
        }
        g++;
      }
      if (p & Prop.NfcUnstable) dirty = true;
      bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : w === 2 ? 4 : 3;
      cps++;
      i += w;
      if (bytes - cutBytes > max) {
        // Runaway: commit inside the cluster (documented on maxPendingBytes).
        if (dirty) cutDirty = true;
        dirty = false;
        cut = i;
        cutBytes = bytes;
        cutCps = cps;
        cutG = g;
        cutMid = true;
        forced++;
      }
    }
    if (final) {
      if (dirty) cutDirty = true;
      cut = n;
      cutBytes = bytes;
      cutCps = cps;
      cutG = g;
      cutMid = false;
    }
    if (cut < 0) {
      this.#state = st;
      this.#forced += forced;
      this.#held = held + text;
      this.#scan = held.length + i;
      this.#heldBytes = bytes;
      this.#heldCps = cps;
      this.#heldGraphemes = g;
      this.#heldDirty = dirty;
      return '';
    }
    const piece = cut === 0 ? held : cut === n ? held + text : held + text.slice(0, cut);
    let out = piece;
    if (nfc && cutDirty) out = piece.normalize('NFC');
    let addBytes = cutBytes, addCps = cutCps, addUnits = piece.length, addG = cutG;
    if (out !== piece) {
      // NFC changed the piece: count what we commit. The piece starts at a boundary (unless a
      // forced commit cut a cluster, whose start was counted with the previous piece).
      const c = countText(out);
      addBytes = c.utf8Bytes;
      addCps = c.codePoints;
      addUnits = c.utf16Units;
      addG = pieceMid ? c.graphemes - 1 : c.graphemes;
    }
    // The limit is checked before anything changes: the delta is refused whole, and what was
    // committed and held before it stays as it was.
    if (this.#bytes + addBytes > this.maxTextBytes) {
      throw new TextRangeError('ERR_TEXT_TOO_LONG', `committing ${addBytes} more bytes would pass maxTextBytes (${this.maxTextBytes} bytes, ${this.#bytes} committed); the delta was not taken`);
    }
    this.#state = st;
    this.#forced += forced;
    this.#held = cut === n ? '' : text.slice(cut);
    this.#scan = i - cut;
    this.#heldBytes = bytes - cutBytes;
    this.#heldCps = cps - cutCps;
    this.#heldGraphemes = g - cutG;
    this.#heldDirty = dirty;
    this.#heldMid = cutMid;
    if (piece.length === 0) return '';
    if (out !== piece) this.#changed = true;
    this.#bytes += addBytes;
    this.#cps += addCps;
    this.#units += addUnits;
    this.#graphemes += addG;
    // (a batch's first piece is taken as it is: JavaScriptCore's JIT makes a rope of '' + piece,
    // 32 bytes more for every stream that has committed text)
    const batch = this.#batch.length === 0 ? out : this.#batch + out;
    this.#batch = batch;
    const log = this.#log;
    if (log !== null) {
      // the piece's bytes as pushed (held + text to the cut), but for the text held when the log
      // began: a piece holds all the text held before it
      const logged = cutBytes - this.#beforeBytes;
      if (out === piece) {
        if (this.#before.length !== 0) this.#hash().update(this.#before); // (nothing is owed before it: its piece is the log's first commit)
        this.#owed += logged;
        if (this.#owed >= BYTES_BATCH) this.#hashLog();
      } else {
        // NFC changed the piece: the bytes before it, then its text, in place of its bytes
        this.#hashLog();
        this.#hash().update(out);
        log.dropText(logged);
      }
      this.#before = '';
      this.#beforeBytes = 0;
      if (batch.length >= HASH_BATCH) {
        this.#pieces.push(batch); // (hashed as bytes; the rope stays one: flattening it costs what the bytes saved)
        this.#batch = '';
      }
    } else if (batch.length >= HASH_BATCH) {
      this.#hashPending();
    }
    return out;
  }

  #hashPending(): void {
    if (this.#log !== null) this.#hashLog();
    const batch = this.#batch;
    if (batch.length === 0) return;
    if (this.#log === null) this.#hash().update(batch);
    // (kept flat: the hash flattened it; finish() concatenates fewer, larger pieces)
    this.#pieces.push(batch);
    this.#batch = '';
  }

  /** The stream's hash, made with the first text it hashes (an idle stream holds none). */
  #hash(): Hasher {
    return (this.#hasher ??= createHasher(true, this.#fallbackHasher));
  }

  /** Hashes the committed bytes of the log not hashed yet. */
  #hashLog(): void {
    const n = this.#owed;
    if (n === 0) return;
    const log = this.#log!;
    this.#hash().updateBytes(log.textBytes(n));
    this.#owed = 0; // (first: hashed once, whatever happens next)
    log.dropText(n);
  }
}
