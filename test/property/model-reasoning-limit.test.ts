// The reasoning a ModelStream keeps is bounded (maxReasoningBytes, counted as sent: the JSON
// string bodies of its text, Anthropic's signatures, and a refusal's text): the event whose
// reasoning would pass the limit stops the stream with ERR_REASONING_TOO_LONG at that event's
// offset, the reasoning before it kept, whatever the reads (whole, cut at random, dripped), raw
// and with the text layer. The core keeps a read's quiet reasoning whole, so near the limit every
// event is read in JS. Generated OpenAI (reasoning_content, and refusals), Anthropic (thinking and
// its signature), Responses and Gemini streams; seeded, the seed and the stream printed on failure.
import { describe, expect, test } from 'vitest';
import { ModelStream, ModelStreamError } from '../../bindings/index.js';
import { type Rnd, chance, jsonString, pick } from '../helpers/model-streams.js';
import { SEED, cut, randomCuts, rng } from '../helpers/random.js';

const enc = new TextEncoder();
const WORDS = ['think', 'about', 'café', '世界', '👩‍💻', 'a"b', 'back\\slash', 'line\n', 'tab\t', 'x', ''];
type Format = 'openai' | 'anthropic' | 'openai-responses' | 'gemini';

/** One event of a generated stream: its SSE text, the bytes of reasoning it brings as sent, and the reasoning text it adds. */
interface Ev { sse: string; sent: number; reasoning: string }

/** A JSON string literal of random words (escapes spelled at random), and its text. */
function piece(r: Rnd): { lit: string; text: string } {
  const text = Array.from({ length: 1 + Math.floor(r() * 6) }, () => pick(r, WORDS)).join(' ');
  return { lit: jsonString(r, text, 0.15), text };
}
const body = (lit: string) => enc.encode(lit.slice(1, -1)).length;

function stream(r: Rnd, format: Format): Ev[] {
  const evs: Ev[] = [];
  const n = 1 + Math.floor(r() * 12);
  const quiet = (sse: string): Ev => ({ sse, sent: 0, reasoning: '' });
  if (format === 'openai') {
    const env = (delta: string, finish = 'null') => `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":${delta},"finish_reason":${finish}}]}\n\n`;
    evs.push(quiet(env('{"role":"assistant","content":""}')));
    const refusal = chance(r, 0.25);
    for (let i = 0; i < n; i++) {
      const p = piece(r);
      // (a refusal counts toward the same bound; it is not reasoning)
      evs.push({ sse: env(`{"${refusal ? 'refusal' : 'reasoning_content'}":${p.lit}}`), sent: body(p.lit), reasoning: refusal ? '' : p.text });
    }
    evs.push(quiet(env('{"content":"done"}')), quiet(env('{}', '"stop"')), quiet('data: [DONE]\n\n'));
  } else if (format === 'anthropic') {
    const ev = (type: string, data: string) => `event: ${type}\ndata: {"type":"${type}",${data}}\n\n`;
    evs.push(quiet(ev('message_start', '"message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}')));
    evs.push(quiet(ev('content_block_start', '"index":0,"content_block":{"type":"thinking","thinking":""}')));
    for (let i = 0; i < n; i++) {
      const p = piece(r);
      evs.push({ sse: ev('content_block_delta', `"index":0,"delta":{"type":"thinking_delta","thinking":${p.lit}}`), sent: body(p.lit), reasoning: p.text });
    }
    const sig = `"${'EqQBCkgIAhABGAIiQL'.repeat(1 + Math.floor(r() * 4))}"`;
    evs.push({ sse: ev('content_block_delta', `"index":0,"delta":{"type":"signature_delta","signature":${sig}}`), sent: body(sig), reasoning: '' });
    evs.push(quiet(ev('content_block_stop', '"index":0')), quiet(ev('content_block_start', '"index":1,"content_block":{"type":"text","text":""}')));
    evs.push(quiet(ev('content_block_delta', '"index":1,"delta":{"type":"text_delta","text":"done"}')), quiet(ev('content_block_stop', '"index":1')));
    evs.push(quiet(ev('message_delta', '"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}')), quiet(ev('message_stop', '"x":0')));
  } else if (format === 'openai-responses') {
    const ev = (type: string, data: string) => `event: ${type}\ndata: {"type":"${type}",${data}}\n\n`;
    evs.push(quiet(ev('response.created', '"response":{"id":"r","status":"in_progress","output":[]}')));
    for (let i = 0; i < n; i++) {
      const p = piece(r);
      const kind = chance(r, 0.5) ? 'response.reasoning_text.delta' : 'response.reasoning_summary_text.delta';
      evs.push({ sse: ev(kind, `"item_id":"rs_1","output_index":0,"content_index":0,"delta":${p.lit}`), sent: body(p.lit), reasoning: p.text });
    }
    evs.push(quiet(ev('response.output_text.delta', '"item_id":"m","output_index":1,"content_index":0,"delta":"done"')));
    evs.push(quiet(ev('response.completed', '"response":{"id":"r","status":"completed","output":[]}')));
  } else {
    const chunk = (parts: string, finish = '') => `data: {"candidates":[{"content":{"parts":[${parts}],"role":"model"}${finish},"index":0}]}\r\n\r\n`;
    for (let i = 0; i < n; i++) {
      const p = piece(r);
      evs.push({ sse: chunk(`{"text":${p.lit},"thought":true}`), sent: body(p.lit), reasoning: p.text });
    }
    evs.push(quiet(chunk('{"text":"done"}', ',"finishReason":"STOP"')));
  }
  return evs;
}

describe('maxReasoningBytes', () => {
  test(`the event whose reasoning would pass it fails the stream at its offset, the reasoning before it kept, however the stream is cut, seed ${SEED}`, () => {
    const r = rng(SEED + 900);
    let failed = 0;
    for (let s = 0; s < 120; s++) {
      const format = pick(r, ['openai', 'anthropic', 'openai-responses', 'gemini'] as const);
      const evs = stream(r, format);
      const total = evs.reduce((k, e) => k + e.sent, 0);
      if (total < 2) continue;
      const limit = 1 + Math.floor(r() * (total - 1));
      const bytes = enc.encode(evs.map((e) => e.sse).join(''));
      let sum = 0;
      let at = 0;
      let over = -1;
      let before = '';
      for (const [i, e] of evs.entries()) {
        if (over < 0 && (sum += e.sent) > limit) over = i;
        if (over < 0) {
          at += enc.encode(e.sse).length;
          before += e.reasoning;
        }
      }
      const offset = at + enc.encode(evs[over].sse.slice(0, evs[over].sse.indexOf('data: ') + 6)).length; // (where the event's data begins)
      const raw = chance(r, 0.5);
      const where = `seed ${SEED}, stream ${s} (${format}, raw ${raw}), maxReasoningBytes ${limit} of ${total}: ${JSON.stringify(evs.map((e) => e.sse).join(''))}`;
      for (const chunks of [[bytes], cut(bytes, randomCuts(bytes, r, 40)), cut(bytes, randomCuts(bytes, r, 3))]) {
        const m = new ModelStream({ format, raw, maxReasoningBytes: limit });
        let err: unknown;
        let text = '';
        try {
          for (const c of chunks) text += m.push(c);
          text += m.flush();
        } catch (e) {
          err = e;
          text += (e as ModelStreamError).text ?? '';
        }
        expect(err, where).toBeInstanceOf(ModelStreamError);
        expect(err, where).toMatchObject({ code: 'ERR_REASONING_TOO_LONG', offset });
        expect(m.status, where).toBe('failed');
        expect(m.reasoning, `${where}: the reasoning before the event`).toBe(before);
        expect(text, where).toBe('');
        failed++;
      }
      // one byte more of room than the stream has: no error, all of it kept
      const m = new ModelStream({ format, raw, maxReasoningBytes: total });
      for (const c of cut(bytes, randomCuts(bytes, r, 40))) m.push(c);
      m.flush();
      expect(m.status, where).toBe('done');
      expect(m.reasoning, where).toBe(evs.map((e) => e.reasoning).join(''));
    }
    expect(failed).toBeGreaterThan(200);
  });

  test('a bad option is a TypeError that names it; the default is 64 MiB', () => {
    expect(() => new ModelStream({ format: 'openai', maxReasoningBytes: -1 })).toThrow(/maxReasoningBytes/);
    expect(() => new ModelStream({ format: 'openai', maxReasoningBytes: 'big' as unknown as number })).toThrow(TypeError);
    const oa = (d: unknown) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: d, finish_reason: null }] })}\n\n`;
    const m = new ModelStream({ format: 'openai', raw: true });
    const mib = enc.encode(oa({ reasoning_content: 'x'.repeat(1 << 20) }));
    let k = 0;
    let err: unknown;
    try {
      for (; k < 70; k++) m.push(mib);
    } catch (e) {
      err = e;
    }
    expect(k).toBe(64);
    expect(err).toMatchObject({ code: 'ERR_REASONING_TOO_LONG', offset: 64 * mib.length + 6 });
    expect(m.reasoning.length).toBe(64 << 20);
  });
});
