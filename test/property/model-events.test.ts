// The event-at-a-time readers say what the stream says. `seam-stream check` and `decode --events`
// read a capture's events with ModelEventReader (after SseParser, LineDecoder, or
// ModelEventStreamDecoder for Bedrock's binary stream), where `decode` reads it with ModelStream;
// the two must not disagree about a stream. Over damaged streams (test/helpers/damaged-streams.ts),
// the events read one at a time, up to the first that stops a stream (a reading that is not an
// event of the format, the provider's error, a message that stops a Bedrock stream, damage to the
// framing), give what a raw ModelStream gives read whole: the text, the reasoning, the client's
// tool calls, the finish reason, and the error's code (a stream that ends without its completion,
// or inside an event or a character, is truncated). After the completion nothing is the answer,
// and only damage to the framing stops a stream. (Usage is left out: a reading has its event's
// usage, which each format merges its own way.) Seeded: the seed and the stream are printed on
// failure.
import { expect, test } from 'vitest';
import {
  EventStreamError, LineDecoder, ModelEventReader, ModelEventStreamDecoder, SseParser, describeFormat,
  type ModelEventStreamMessage,
} from '../../bindings/index.js';
import { SOURCES, type Source, damage, readWhole } from '../helpers/damaged-streams.js';
import { SEED, rng } from '../helpers/random.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

type Outcome = { text: string; reasoning: string; calls: unknown[]; finish: string | null; error: string };

const options = (src: Source) => ({ format: src.format as 'openai', ...(src.choice === undefined ? {} : { choice: src.choice }) });

function streamed(src: Source, bytes: Uint8Array): Outcome {
  const { m, text, error } = readWhole(src, bytes);
  return { text, reasoning: m.reasoning, calls: m.toolCalls.map((c) => ({ ...c })), finish: m.finishReason ?? null, error: error?.code ?? '' };
}

/** An event's data or line, or what stops the stream at a Bedrock message. */
type Frame = { data: string; open?: boolean } | { stop: string };

/** The frames of the stream, and the framing's own error (its code; truncated UTF-8 at the end is a truncated stream). */
function framed(src: Source, bytes: Uint8Array): { frames: Frame[]; error: string } {
  const framing = describeFormat(src.format as 'openai').framing;
  const frames: Frame[] = [];
  const message = (m: ModelEventStreamMessage) => {
    if (m.error !== undefined) frames.push({ stop: m.error.code });
    else if (m.data !== '') frames.push({ data: m.data });
  };
  if (framing === 'eventstream') {
    const d = new ModelEventStreamDecoder({ format: src.format as 'bedrock' });
    try {
      d.push(bytes).forEach(message);
      d.flush();
    } catch (e) {
      if (!(e instanceof EventStreamError)) throw e;
      (e.messages as ModelEventStreamMessage[]).forEach(message);
      return { frames, error: e.code === 'ERR_FRAME_TOO_LARGE' ? 'ERR_EVENT_TOO_LARGE' : e.code };
    }
    return { frames, error: '' };
  }
  const sse = framing === 'sse';
  const p = sse ? new SseParser() : new LineDecoder();
  let pushed = true;
  try {
    for (const f of p.push(bytes) as (string | { data: string })[]) frames.push({ data: typeof f === 'string' ? f : f.data });
    pushed = false;
    const last = p.flush() as (string | { data: string })[];
    // (a last line without its line end: JSON cut short there is a stream cut short)
    for (const f of last) frames.push({ data: typeof f === 'string' ? f : f.data, open: !sse });
    return { frames, error: sse && (p as SseParser).truncated ? 'ERR_STREAM_TRUNCATED' : '' };
  } catch (e) {
    const x = e as { code?: string; events?: { data: string }[]; lines?: string[] };
    // (a last line the stream ended inside a character of: what came before that character, open)
    const open = !pushed && !sse && x.code === 'ERR_TRUNCATED_UTF8';
    for (const f of x.events ?? x.lines ?? []) frames.push({ data: typeof f === 'string' ? f : f.data, open });
    return { frames, error: x.code === 'ERR_TRUNCATED_UTF8' ? 'ERR_STREAM_TRUNCATED' : x.code === 'ERR_SSE_LIMIT' || x.code === 'ERR_LINE_LIMIT' ? 'ERR_EVENT_TOO_LARGE' : x.code! };
  }
}

function readOneByOne(src: Source, bytes: Uint8Array): Outcome {
  const { frames, error: framingError } = framed(src, bytes);
  const rd = new ModelEventReader(options(src));
  const o: Outcome = { text: '', reasoning: '', calls: [], finish: null, error: '' };
  let done = false;
  for (const f of frames) {
    if ('stop' in f) {
      if (!done) o.error = f.stop;
      break;
    }
    const r = rd.read(f.data);
    if (done) continue; // (nothing after the completion is the answer)
    if (r.invalid !== undefined) {
      const cutShort = f.open === true && r.invalid.json && r.invalid.offset >= enc.encode(f.data.replace(/^data: ?/, '')).length;
      o.error = cutShort ? 'ERR_STREAM_TRUNCATED' : 'ERR_BAD_EVENT';
      break;
    }
    if (r.error !== undefined) {
      o.error = 'ERR_PROVIDER';
      break;
    }
    o.text += r.text;
    o.reasoning += r.reasoning;
    if (r.finishReason !== undefined) o.finish = r.finishReason;
    if (r.done) done = true;
  }
  if (o.error === '') {
    // damage to the framing stops a stream anywhere; a stream cut short stops one without its completion
    if (framingError !== '' && framingError !== 'ERR_STREAM_TRUNCATED') o.error = framingError;
    else if (!done) o.error = 'ERR_STREAM_TRUNCATED';
  }
  o.calls = rd.toolCalls.map((c) => ({ ...c }));
  return o;
}

test(`damaged streams read event by event (ModelEventReader) say what ModelStream says (seed ${SEED})`, () => {
  const r = rng(SEED + 5);
  let compared = 0;
  for (let k = 0; k < 3000; k++) {
    const src = SOURCES[Math.floor(r() * SOURCES.length)];
    const bytes = r() < 0.1 ? src.bytes : damage(r, src.bytes);
    // (a plain JSON body, a provider's error answer, is read whole at the end: it is no event)
    if (src.format !== 'ollama' && /^\s*[{[]/.test(dec.decode(bytes.subarray(0, 64)))) continue;
    compared++;
    const want = streamed(src, bytes);
    const got = readOneByOne(src, bytes);
    expect(got, `seed ${SEED}, case ${k}: ${src.name} (${src.format}): ${JSON.stringify(dec.decode(bytes)).slice(0, 4000)}`).toEqual(want);
  }
  expect(compared).toBeGreaterThan(2000);
});
