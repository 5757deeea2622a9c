// What TextDecoder says about a byte stream: the platform is the oracle for Utf8Decoder.
import { Utf8DecodeError, Utf8Decoder } from '../../bindings/index.js';

export interface Outcome {
  /** All text returned (for a failed strict stream: before the bad sequence). */
  text: string;
  error?: { code: string; offset: number };
}

/** Feeds the pieces to a Utf8Decoder and collects text, or the first error. */
export function decodeWith(d: Utf8Decoder, pieces: Uint8Array[]): Outcome {
  let text = '';
  try {
    for (const p of pieces) text += d.push(p);
    text += d.flush();
    return { text };
  } catch (e) {
    if (!(e instanceof Utf8DecodeError)) throw e;
    return { text: text + e.text, error: { code: e.code, offset: e.offset } };
  }
}

const enc = new TextEncoder();

/**
 * The strict outcome according to TextDecoder: it decides validity; the error's place is where
 * the replacing decoder emits its first U+FFFD (inputs must not contain a real U+FFFD).
 */
export function strictOracle(bytes: Uint8Array, ignoreBOM = false): Outcome {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true, ignoreBOM }).decode(bytes) };
  } catch {
    const replaced = new TextDecoder('utf-8', { ignoreBOM }).decode(bytes);
    const at = replaced.indexOf('\uFFFD');
    if (at < 0) throw new Error('oracle: fatal decoder rejected input that decodes without U+FFFD');
    const text = replaced.slice(0, at);
    const bom = !ignoreBOM && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
    const offset = bom + enc.encode(text).length;
    const rest = bytes.subarray(offset);
    let truncated = false;
    if (rest.length <= 3) {
      try {
        truncated = new TextDecoder('utf-8', { fatal: true }).decode(rest, { stream: true }) === '';
      } catch {
        truncated = false;
      }
    }
    return { text, error: { code: truncated ? 'ERR_TRUNCATED_UTF8' : 'ERR_INVALID_UTF8', offset } };
  }
}

/**
 * TextDecoder (replacement, stream: true) over the same pieces, output per piece. The one leading
 * BOM is dropped here, as the Encoding Standard says, not by the runtime's decoder: Node 24 and 26's
 * TextDecoder also drops a second BOM when the first one is split across reads, and Deno 2.9's drops
 * a BOM that begins a later read (test/runtimes/ runs these suites there).
 */
export function replacingOracle(pieces: Uint8Array[], ignoreBOM = false): string[] {
  const td = new TextDecoder('utf-8', { ignoreBOM: true });
  let first = !ignoreBOM;
  const once = (s: string) => {
    if (!first || s === '') return s;
    first = false;
    return s.charCodeAt(0) === 0xfeff ? s.slice(1) : s;
  };
  const out = pieces.map((p) => once(td.decode(p, { stream: true })));
  out.push(once(td.decode()));
  return out;
}

/** Utf8Decoder (fatal: false) over the pieces, output per piece. */
export function replacingOurs(pieces: Uint8Array[], ignoreBOM = false): string[] {
  const d = new Utf8Decoder({ fatal: false, ignoreBOM });
  const out = pieces.map((p) => d.push(p));
  out.push(d.flush());
  return out;
}
