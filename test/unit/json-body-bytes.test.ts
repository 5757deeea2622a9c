// jsonBodyBytes: what a ModelStream or an SseRelay holds in JavaScript of an answer that is one JSON
// body where a stream of events was expected (a whole answer, an error object), from its `{` (or
// Gemini's `[`) past any BOM and white space, until its end; 0 for an event stream, for a format
// of lines, and once a whole answer was read. A caller with a memory budget (the gateway) counts
// it; the number is exact after every push, the input whole, at every two-piece split and a byte
// per read, and at seeded random cuts.
import { describe, expect, it } from 'vitest';
import { type ModelFormat, ModelStream, SseRelay } from '../../bindings/index.js';
import { cut, randomCuts, standardChunkings } from '../helpers/random.js';

const enc = new TextEncoder();

interface Case { name: string; format: ModelFormat; input: string; lead: number; body: boolean; whole?: boolean }

const completion = '{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hi there"},"finish_reason":"stop"}]}';
const cases: Case[] = [
  { name: 'an OpenAI whole answer after a BOM and white space', format: 'openai', input: `\uFEFF \r\n\t${completion}`, lead: 5, body: true, whole: true },
  { name: 'an OpenAI error object', format: 'openai', input: '{"error":{"message":"overloaded","type":"server_error"}}', lead: 0, body: true },
  { name: "Gemini's JSON array", format: 'gemini', input: '\n[{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"finishReason":"STOP","index":0}]}]', lead: 1, body: true, whole: true },
  { name: "Bedrock's Converse answer after white space", format: 'bedrock', input: '  {"output":{"message":{"role":"assistant","content":[{"text":"Hi"}]}},"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}}', lead: 2, body: true, whole: true },
  { name: 'an OpenAI event stream', format: 'openai', input: 'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\ndata: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n', lead: 0, body: false },
  { name: 'an event stream after white space', format: 'anthropic', input: '\n\nevent: ping\ndata: {"type":"ping"}\n\n', lead: 2, body: false },
  { name: 'an Ollama line (a format of lines)', format: 'ollama', input: '{"model":"m","message":{"role":"assistant","content":"Hi"},"done":true}\n', lead: 0, body: false },
];

type Reader = ModelStream | SseRelay;
const makers: [string, (format: ModelFormat) => Reader][] = [
  ['ModelStream', (format) => new ModelStream({ format })],
  ['SseRelay', (format) => new SseRelay({ from: format, to: 'openai' })],
];

/** jsonBodyBytes after each push of `chunks`, and after the flush (its error's code, if it threw). */
function counts(make: (f: ModelFormat) => Reader, format: ModelFormat, chunks: Uint8Array[]) {
  const r = make(format);
  const after: number[] = [];
  let error: string | undefined;
  try {
    for (const c of chunks) {
      r.push(c);
      after.push(r.jsonBodyBytes);
    }
    r.flush();
  } catch (e) {
    error = (e as { code?: string }).code;
  }
  const end = r.jsonBodyBytes;
  r.dispose();
  return { after, end, error };
}

/** What jsonBodyBytes must be after each push: the bytes pushed past the lead, for a body. */
function expected(c: Case, chunks: Uint8Array[]) {
  let n = 0;
  return chunks.map((ch) => {
    n += ch.length;
    return c.body ? Math.max(0, n - enc.encode(c.input.slice(0, c.lead)).length) : 0;
  });
}

describe('jsonBodyBytes', () => {
  for (const [who, make] of makers) {
    for (const c of cases) {
      if (who === 'SseRelay' && c.format === 'ollama') continue; // (a relay reads SSE formats and AWS's event stream, and Ollama's lines too, but its case is the stream's)
      it(`${who}: ${c.name}`, () => {
        const bytes = enc.encode(c.input);
        const whole = counts(make, c.format, [bytes]);
        // a whole answer is read at the end and let go; an error body stays held, the stream failed
        expect(whole.end).toBe(c.body && !c.whole ? bytes.length - enc.encode(c.input.slice(0, c.lead)).length : 0);
        let runs = 0;
        for (const chunks of standardChunkings(bytes)) {
          const got = counts(make, c.format, chunks);
          expect(got.after, `${chunks.length} reads`).toEqual(expected(c, chunks));
          expect({ end: got.end, error: got.error }).toEqual({ end: whole.end, error: whole.error });
          runs++;
        }
        expect(runs).toBe(bytes.length + 3);
        const seed = 0x5eed + bytes.length;
        let x = seed;
        const next = () => ((x = (x * 1103515245 + 12345) >>> 0) / 2 ** 32);
        for (let i = 0; i < 50; i++) {
          const chunks = cut(bytes, randomCuts(bytes, next, 9));
          const got = counts(make, c.format, chunks);
          expect(got.after, `seed ${seed}, run ${i}`).toEqual(expected(c, chunks));
          expect(got.end, `seed ${seed}, run ${i}`).toBe(whole.end);
        }
      });
    }
  }

  it('a body past maxEventBytes: what was kept before the read that would pass it, whatever the reads', () => {
    const body = enc.encode(`{"error":{"message":"${'x'.repeat(200)}"}}`);
    for (const size of [1, 7, 64, body.length]) {
      const m = new ModelStream({ format: 'openai', maxEventBytes: 100 });
      let kept = 0;
      let code: string | undefined;
      for (let at = 0; at < body.length && code === undefined; at += size) {
        const piece = body.subarray(at, at + size);
        try {
          m.push(piece);
          kept += piece.length;
        } catch (e) {
          code = (e as { code: string }).code;
        }
        expect(m.jsonBodyBytes, `reads of ${size}`).toBe(kept);
      }
      expect(code).toBe('ERR_EVENT_TOO_LARGE');
      expect(kept).toBe(Math.floor(100 / size) * size);
      m.dispose();
    }
  });
});
