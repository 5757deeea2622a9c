// The streams of the tests of a strict ModelStream's text log (model-text-hash.test.ts, which the
// portable suites run too, and model-text-log-core.test.ts): OpenAI chunks whose content is a JSON
// string literal as written, and a first delta long enough for the log to begin after it.
import { createHash } from 'node:crypto';
import type { ModelStream } from '../../bindings/index.js';

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
/** Node's SHA-256 of the text's UTF-8 (a lone surrogate as U+FFFD), in hex. */
export const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
/** An OpenAI chunk whose content is the JSON string literal `lit` (escapes as written). */
export const ev = (lit: string): Uint8Array => enc(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":${lit}},"finish_reason":null}]}\n\n`);
export const done = enc('data: [DONE]\n\n');
/** Whether the stream's core logs its text's UTF-8 now (its private state: LOG_ON in bindings/models/stream.ts). */
export const logs = (m: ModelStream): boolean => (m as unknown as { log: number }).log === 2;
/** A first delta past the 1 KiB of text after which the core logs it (in a push of its own, the log begins with the next). */
export const LEAD = 'Lead: ' + 'the quick brown fox. '.repeat(60);
export const lead = ev(JSON.stringify(LEAD));
