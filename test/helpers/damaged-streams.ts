// Damaged model streams for the property tests: every model fixture (test/helpers/model-fixtures.ts),
// the Anthropic ones also as Claude on Bedrock sends them, and the Bedrock fixtures; and damage()
// to make one to three random damages in a stream (a bit flipped, a byte replaced, bytes inserted,
// removed or repeated, the stream cut short).
import { ModelStream, ModelStreamError, type ModelStreamOptions } from '../../bindings/index.js';
import { BEDROCK_FIXTURES, codec } from './bedrock-fixtures.js';
import { FIXTURES, reference } from './model-fixtures.js';
import { concat } from './random.js';

const enc = new TextEncoder();

/** Claude on Bedrock: each SSE event's data as the base64 of a `chunk` message. */
function invokeOf(body: string): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const fr of reference(body, 'anthropic').frames) {
    if (fr.kind !== 'event') continue;
    parts.push(codec.encode({
      headers: { ':event-type': { type: 'string', value: 'chunk' }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: 'event' } },
      body: enc.encode(`{"bytes":"${Buffer.from(fr.data, 'utf8').toString('base64')}"}`),
    }));
  }
  return concat(parts);
}

export interface Source { name: string; format: string; bytes: Uint8Array; choice?: number }
export const SOURCES: Source[] = [
  ...FIXTURES.map((f) => ({ name: f.name, format: f.format as string, bytes: f.bytes, choice: f.choice })),
  ...FIXTURES.filter((f) => f.format === 'anthropic' && !reference(f.body, 'anthropic').plainBody)
    .map((f) => ({ name: `${f.name} on Bedrock`, format: 'bedrock-invoke', bytes: invokeOf(f.body) })),
  ...BEDROCK_FIXTURES.map((f) => ({ name: f.name, format: 'bedrock', bytes: f.bytes })),
];

const POOL = [0x0a, 0x0d, 0x22, 0x5c, 0x7b, 0x7d, 0x3a, 0x2c, 0x5b, 0x5d, 0x75, 0x20, 0x00, 0x80, 0xc3, 0xe2, 0xf0, 0xff];

export function damage(r: () => number, b: Uint8Array): Uint8Array {
  const a = Array.from(b);
  const int = (n: number) => Math.floor(r() * n);
  for (let k = 1 + int(3); k > 0; k--) {
    const at = int(a.length + 1);
    switch (int(7)) {
      case 0: if (a.length !== 0) a[Math.min(at, a.length - 1)] ^= 1 << int(8); break;
      case 1: if (a.length !== 0) a[Math.min(at, a.length - 1)] = POOL[int(POOL.length)]; break;
      case 2: a.splice(at, 0, POOL[int(POOL.length)]); break;
      case 3: a.splice(at, 1 + int(8)); break;
      case 4: { const from = int(a.length); a.splice(at, 0, ...a.slice(from, from + 1 + int(40))); break; }
      case 5: a.length = Math.min(a.length, at); break;
      default: a.splice(at, 0, ...Array.from({ length: 1 + int(6) }, () => int(256)));
    }
  }
  return Uint8Array.from(a);
}

/**
 * A damaged stream read whole by a raw ModelStream of its format (its choice; more `options`):
 * the stream, the text it gave (an error's included), and the error it stopped with.
 */
export function readWhole(src: Source, bytes: Uint8Array, options: Omit<ModelStreamOptions, 'format'> = {}): { m: ModelStream; text: string; error: ModelStreamError | null } {
  const m = new ModelStream({ format: src.format as 'openai', raw: true, ...(src.choice === undefined ? {} : { choice: src.choice }), ...options });
  let text = '';
  try {
    text += m.push(bytes);
    text += m.flush();
  } catch (e) {
    if (!(e instanceof ModelStreamError)) throw e;
    return { m, text: text + e.text, error: e };
  }
  return { m, text, error: null };
}
