// Feeding helpers shared by the SSE tests: one input, every chunking, one normalized outcome.
import { SseParser, type SseEvent, type SseParserOptions } from '../../bindings/index.js';

export interface Outcome {
  events: SseEvent[];
  comments: string[];
  lastEventId: string;
  retry: number | undefined;
  truncated: boolean;
}

/** Feeds `chunks` to a new parser (strings path, or the byte-level path) and flushes. */
export function run(chunks: Uint8Array[], options: SseParserOptions = {}, bytesPath = false): Outcome {
  const comments: string[] = [];
  const p = new SseParser({ ...options, onComment: (t) => comments.push(t) });
  const events: SseEvent[] = [];
  const take = (b: ReturnType<SseParser['pushBytes']>) => {
    for (let i = 0; i < b.length; i++) events.push({ type: b.type(i), data: b.dataText(i), id: b.id(i) });
  };
  for (const c of chunks) {
    if (bytesPath) take(p.pushBytes(c));
    else events.push(...p.push(c));
  }
  if (bytesPath) take(p.flushBytes());
  else events.push(...p.flush());
  const out = { events, comments, lastEventId: p.lastEventId, retry: p.retry, truncated: p.truncated };
  p.dispose();
  return out;
}

/** The input whole, split once at every byte, and one byte at a time. */
export function* chunkings(bytes: Uint8Array): Generator<[string, Uint8Array[]]> {
  yield ['whole', [bytes]];
  for (let i = 1; i < bytes.length; i++) yield [`split at ${i}`, [bytes.subarray(0, i), bytes.subarray(i)]];
  yield ['bytewise', Array.from(bytes, (_, i) => bytes.subarray(i, i + 1))];
}

export const utf8 = (s: string) => new TextEncoder().encode(s);
