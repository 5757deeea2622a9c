// A CommonJS consumer: `require` resolves to dist/index.d.cts.
import { NdjsonDecoder, SseParser, Utf8DecodeError, type SseEvent } from 'seam-stream';

const values: unknown[] = new NdjsonDecoder().push(new Uint8Array([123, 125, 10]));
const events: SseEvent[] = new SseParser().push(new Uint8Array(0));
const isError = (e: unknown): e is Utf8DecodeError => e instanceof Utf8DecodeError;
// @ts-expect-error: lastEventId is read-only
new SseParser().lastEventId = 'x';

export { events, isError, values };
