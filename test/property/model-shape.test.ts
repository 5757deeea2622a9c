// Within a stream the core reads a quiet event by its shape: the bytes between the string and
// number values of the quiet event before it are compared, and the values are scanned
// (assembly/shape.ts). This property test makes streams whose events repeat one shape per stream
// (its key order, white space, filler and IDs chosen per stream) with new text each time, and
// breaks the shape in single events in every way that matters: a hole's value (a string or a
// number) of another length or with escapes, text that holds the bytes that follow it, a literal
// or index or null that changes, a key more, white space, a bad escape, a control byte or a bad
// number in a hole, a cut document. ModelStream (raw mode) and SseRelay must give what the
// JSON.parse reference reading gives (test/helpers/model-fixtures.ts), errors included, at one
// event per read, three per read, whole and cut at random. Seeded; the seed and the stream are
// printed on failure.
import { describe, expect, test } from 'vitest';
import { ModelStream, ModelStreamError, SseRelay } from '../../bindings/index.js';
import { reference, type TextFormat } from '../helpers/model-fixtures.js';
import { type Rnd, chance, clientEvents, clientText, concat, jsonString, pick } from '../helpers/model-streams.js';
import { SEED, cut, randomCuts, rng } from '../helpers/random.js';

const enc = new TextEncoder();

const TEXTS = [
  'Hello', ' world', 'café', 'cafe\u0301', '世界', '👩‍💻', '🇯🇵', '', ' ', 'a"b', 'ends with \\', '\\', '"', 'tab\there', 'line\nbreak',
  '😀', '\ud800', '\udc00x', 'é', 'a much longer piece of text that runs past one block of sixteen bytes, twice over',
  // text that holds the bytes that follow it in an OpenAI or Anthropic event
  '"},"logprobs":null,"finish_reason":null}]}', '"}}', '","content":"x',
];

const str = (r: Rnd, s: string): string => jsonString(r, s, 0.05);

/** A JSON text that is not valid where a string body is: a bad escape, a control byte, or a cut. */
const BAD_STRINGS = ['"bad \\x escape"', '"a \\u12G4"', '"raw \u0001 control"', '"tab\there"', '"ends in a lone \\'];

const ws = (r: Rnd) => (chance(r, 0.2) ? pick(r, [' ', '\t', ' \t', '\n']) : '');

/** A document's members, kept in one order for the whole stream: [key, JSON text]. */
type Members = [string, string][];
/** The white space a stream writes around its tokens, chosen once (`w[i]` for slot i). */
type Spaces = string[];

function render(members: Members, w: Spaces): string {
  return `{${members.map(([k, v], i) => `${w[(3 * i) % w.length]}${JSON.stringify(k)}${w[(3 * i + 1) % w.length]}:${w[(3 * i + 2) % w.length]}${v}`).join(',')}}`;
}

const set = (m: Members, key: string, value: string): Members => m.map(([k, v]) => [k, k === key ? value : v]);

const sse = (data: string, type?: string) => `${type ? `event: ${type}\n` : ''}data: ${data}\n\n`;

/** One stream of `format` whose quiet events share one shape, broken now and then. */
function stream(r: Rnd, format: TextFormat): string {
  const n = 5 + Math.floor(r() * 40);
  const w: Spaces = Array.from({ length: 7 }, () => ws(r));
  const id = str(r, pick(r, ['chatcmpl-9x8Yz', 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG', 'x', '']));
  const dup = chance(r, 0.15); // the stream's events carry the text key twice (the last wins)
  const breakRate = pick(r, [0, 0.05, 0.2]);
  let body = '';
  // the event of the stream's shape, with `text` (a JSON text) as its text, broken by `b` (0: not)
  const counter = chance(r, 0.5); // the stream's events carry a number that changes each time
  const event = (text: string, b: number, i: number): string => {
    switch (format) {
      case 'openai': {
        let delta: Members = dup ? [['content', str(r, 'dead')], ['content', text]] : [['content', text]];
        let choice: Members = [['index', '0'], ['delta', ''], ['logprobs', 'null'], ['finish_reason', 'null']];
        let top: Members = [['id', id], ['object', '"chat.completion.chunk"'], ['created', '1732900000'], ['model', '"gpt-4o-2024-08-06"'], ['system_fingerprint', '"fp_d28bcae782"'], ['choices', '']];
        if (b === 1) top = set(top, 'id', str(r, pick(r, TEXTS))); // a hole: any string
        if (b === 2) top = set(top, 'model', str(r, 'another model, longer than before'));
        if (b === 3) delta = [...delta, ['reasoning_content', str(r, 'thinking')]];
        if (b === 4) choice = set(choice, 'finish_reason', '"stop"');
        if (b === 5) choice = set(choice, 'index', '1');
        if (b === 6) delta = set(delta, 'content', 'null');
        if (b === 7) delta = [...delta, ['content', str(r, 'the last wins')]];
        if (b === 8) top = set(top, 'created', '1732900001');
        if (b === 9) top = [...top, ['error', '{"message":"overloaded","type":"server_error"}']];
        if (b === 10) top = set(top, 'id', pick(r, BAD_STRINGS));
        if (b === 11) delta = set(delta, 'content', pick(r, BAD_STRINGS));
        if (b === 12) top = set(top, 'object', '"chat.completion.chunk" '); // white space
        if (b === 13) delta = [['role', '"assistant"'], ...delta];
        if (b === 14) top = set(top, 'created', pick(r, ['01', '1.', '-', '1e', '1.5e+', '-0', '2.5E-3', '12345678901234567890']));
        if (b === 15) top = set(top, 'created', pick(r, ['"1732900000"', 'null', '[]']));
        if (counter) top = [...top, ['t', String(i * 7919 % 100003)]];
        choice = set(choice, 'delta', render(delta, w));
        top = set(top, 'choices', `[${render(choice, w)}]`);
        return sse(render(top, w));
      }
      case 'anthropic': {
        let delta: Members = dup ? [['type', '"text_delta"'], ['text', str(r, 'dead')], ['text', text]] : [['type', '"text_delta"'], ['text', text]];
        let top: Members = [['type', '"content_block_delta"'], ['index', '0'], ['delta', '']];
        if (b === 1) delta = set(delta, 'type', '"thinking_delta"');
        if (b === 2) delta = set(delta, 'type', '"text_del\\u0074a"');
        if (b === 3) top = set(top, 'index', '1');
        if (b === 4) delta = set(delta, 'text', pick(r, BAD_STRINGS));
        if (b === 5) delta = [...delta, ['thinking', str(r, 'hmm')]];
        if (b === 6) top = set(top, 'type', '"ping"');
        if (b === 7) delta = set(delta, 'text', '7');
        top = set(top, 'delta', render(delta, w));
        return sse(render(top, w), JSON.parse(top[0][1]) as string);
      }
      case 'openai-responses': {
        let top: Members = [['type', '"response.output_text.delta"'], ['item_id', str(r, 'msg_1')], ['output_index', '0'], ['content_index', '0'], ['delta', text], ['sequence_number', '7'], ['obfuscation', str(r, 'a1b2c3'.slice(0, 1 + Math.floor(r() * 6)))]];
        if (b === 1) top = set(top, 'type', '"response.reasoning_text.delta"');
        if (b === 2) top = set(top, 'delta', pick(r, BAD_STRINGS));
        if (b === 3) top = set(top, 'obfuscation', pick(r, BAD_STRINGS));
        if (b === 4) top = set(top, 'output_index', '1');
        top = set(top, 'sequence_number', String(i + 1)); // (it counts the events)
        return sse(render(top, w), JSON.parse(top[0][1]) as string);
      }
      case 'ollama': {
        let msg: Members = [['role', '"assistant"'], ['content', text]];
        let top: Members = [['model', '"llama3.2"'], ['created_at', str(r, `2026-01-01T00:00:0${Math.floor(r() * 10)}.${Math.floor(r() * 1e6)}Z`)], ['message', ''], ['done', 'false']];
        if (b === 1) msg = [...msg, ['thinking', str(r, 'hmm')]];
        if (b === 2) msg = set(msg, 'content', pick(r, BAD_STRINGS.slice(0, 3)));
        if (b === 3) top = set(top, 'done', 'true');
        top = set(top, 'message', render(msg, w));
        return `${render(top, w.map((s) => s.replace('\n', ' ')))}\n`;
      }
      case 'gemini': {
        let part: Members = [['text', text]];
        let cand: Members = [['content', ''], ['index', '0']];
        let top: Members = [['candidates', ''], ['usageMetadata', `{"promptTokenCount":7,"totalTokenCount":${counter ? 7 + i : 7}}`], ['modelVersion', '"gemini-2.5-flash"'], ['responseId', id]];
        if (b === 1) part = [...part, ['thought', 'true']];
        if (b === 2) part = set(part, 'text', pick(r, BAD_STRINGS));
        if (b === 3) cand = set(cand, 'index', '1');
        cand = set(cand, 'content', render([['parts', `[${render(part, w)}]`], ['role', '"model"']], w));
        top = set(top, 'candidates', `[${render(cand, w)}]`);
        return sse(render(top, w));
      }
      default: {
        let top: Members = [['role', '"assistant"'], ['message', text], ['created', '1700000000'], ['id', id], ['action', '"success"'], ['model', '"gpt-4o-mini"']];
        if (b === 1) top = set(top, 'message', pick(r, BAD_STRINGS.slice(0, 3)));
        if (b === 2) top = set(top, 'action', '"error"');
        return `data: ${render(top, w.map((s) => s.replace('\n', ' ')))}\r\n`;
      }
    }
  };
  const breaks = { openai: 15, anthropic: 7, 'openai-responses': 4, ollama: 3, ddg: 2, gemini: 3 }[format];
  if (format === 'openai') body += sse(`{"id":${id},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`);
  if (format === 'anthropic') body += sse('{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}', 'content_block_start');
  for (let i = 0; i < n; i++) {
    const b = chance(r, breakRate) ? 1 + Math.floor(r() * breaks) : 0;
    body += event(str(r, pick(r, TEXTS)), b, i);
  }
  switch (format) {
    case 'openai': body += sse('[DONE]'); break;
    case 'anthropic': body += sse('{"type":"message_stop"}', 'message_stop'); break;
    case 'openai-responses': body += sse('{"type":"response.completed","response":{"status":"completed"}}', 'response.completed'); break;
    case 'ollama': body += '{"model":"llama3.2","done":true,"done_reason":"stop"}\n'; break;
    case 'gemini': body += sse('{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}]}'); break;
    default: body += 'data: [DONE]\r\n';
  }
  return body;
}

/** Reads of whole events, `k` to a read (the body's events end with a blank line or a line end). */
function perEvents(body: string, bytes: Uint8Array, k: number, lines: boolean): Uint8Array[] {
  const ends: number[] = [];
  const sep = lines ? '\n' : '\n\n';
  let i = 0, count = 0, byteAt = 0, last = 0;
  for (;;) {
    const j = body.indexOf(sep, i);
    if (j < 0) break;
    byteAt += enc.encode(body.slice(last, j + sep.length)).length;
    last = i = j + sep.length;
    if (++count % k === 0) ends.push(byteAt);
  }
  return cut(bytes, ends.filter((e) => e < bytes.length));
}

const FORMATS: TextFormat[] = ['openai', 'anthropic', 'openai-responses', 'ollama', 'ddg', 'gemini'];

describe('quiet events read by their shape give what the JSON.parse reading gives', () => {
  for (const format of FORMATS) {
    test(`${format}: 120 streams of one shape each, broken now and then, seed ${SEED}`, () => {
      const r = rng(SEED + 100 + FORMATS.indexOf(format));
      const lines = format === 'ollama' || format === 'ddg';
      let failed = 0;
      for (let s = 0; s < 120; s++) {
        const body = stream(r, format);
        const bytes = enc.encode(body);
        const ref = reference(body, format);
        if (ref.error) failed++;
        const where = `seed ${SEED}, ${format} stream ${s}: ${JSON.stringify(body)}`;
        const readings = [[bytes], perEvents(body, bytes, 1, lines), perEvents(body, bytes, 3, lines), cut(bytes, randomCuts(bytes, r, 80))];
        for (const chunks of readings) {
          const m = new ModelStream({ format, raw: true, eof: 'allow' });
          let got = '';
          let error: { code: string; offset: number } | undefined;
          try {
            for (const c of chunks) got += m.push(c);
            got += m.flush();
          } catch (e) {
            if (!(e instanceof ModelStreamError)) throw e;
            error = { code: e.code, offset: e.offset };
            got += e.text;
          }
          expect({ text: got, reasoning: m.reasoning, status: m.status, finishReason: m.finishReason, error }, where)
            .toEqual({ text: ref.text, reasoning: ref.reasoning, status: ref.status, finishReason: ref.finishReason, error: ref.error && { code: ref.error.code, offset: ref.error.offset } });
          const relay = new SseRelay({ from: format });
          const out: Uint8Array[] = [];
          for (const c of chunks) out.push(relay.push(c).slice());
          out.push(relay.flush().slice());
          const sent = concat(out);
          expect(relay.eventsOut, where).toBe(clientEvents(sent));
          // the error it wrote, the one the stream has (ERR_STREAM_TRUNCATED for none and no completion)
          expect(relay.error && { code: relay.error.code, offset: relay.error.offset }, where).toEqual(ref.error && { code: ref.error.code, offset: ref.error.offset });
          if (ref.error) continue;
          expect(relay.textBytes, where).toBe(enc.encode(ref.text).length);
          expect(clientText(sent), where).toBe(ref.text);
        }
      }
      // both kinds of stream were made: some end in an error, most do not
      expect(failed).toBeGreaterThan(5);
      expect(failed).toBeLessThan(100);
    });
  }
});

/**
 * Bytes that are not UTF-8, for a value of an event of the stream's shape: a lone continuation, a
 * lead cut by the closing quote, an overlong form, a surrogate, a byte never in UTF-8.
 */
const NOT_UTF8 = [[0x80], [0xe4, 0xb8], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf5, 0x80, 0x80, 0x80], [0xff]];

// (a guard for any step that would take a read of the stream's shape as valid by its values alone: a bad byte
// in the text or in another value must stop the stream where it is, or read as U+FFFD, as in any other read)
describe('a byte that is not UTF-8 in a value of an event of the stream\'s shape', () => {
  // OpenAI's events untyped, with an ID that changes each time (a string value the reader skips);
  // Anthropic's typed, with padding that does (as Bedrock's `p`); the bad bytes in the text or in that value
  const events = {
    openai: (i: number, text: Uint8Array, other: Uint8Array) => [enc.encode(`data: {"id":"c-`), other, enc.encode(`${i}","choices":[{"index":0,"delta":{"content":"`), text, enc.encode('"},"finish_reason":null}]}\n\n')],
    anthropic: (i: number, text: Uint8Array, other: Uint8Array) => [enc.encode('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"'), text,
      enc.encode(`"},"p":"`), other, enc.encode(`${'abcdefgh'.slice(0, 1 + (i % 8))}"}\n\n`)],
  };
  const start = { openai: '', anthropic: 'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' };
  for (const format of ['openai', 'anthropic'] as const) {
    test(`${format}: strict, the error at the bad byte's offset after the text before it; not strict, U+FFFD; at one event per read as whole, seed ${SEED}`, () => {
      const r = rng(SEED + 300 + (format === 'openai' ? 0 : 1));
      for (let s = 0; s < 60; s++) {
        const bad = pick(r, NOT_UTF8);
        const where = pick(r, ['text', 'other'] as const);
        const at = 3 + Math.floor(r() * 6); // the event that holds them: after a shape was learned, or not yet
        const reads: Uint8Array[] = [enc.encode(start[format])];
        let offset = reads[0].length;
        let badAt = -1;
        let text = '';
        for (let i = 0; i < at + 3; i++) {
          const words = pick(r, ['Hé', ' world', '世界', ' 👩‍💻', 'x']);
          const t = enc.encode(words);
          const mid = i === at ? Math.floor(r() * (t.length + 1)) : 0;
          // (the bad bytes at a character's boundary of the text, or at the start of the other value)
          const cuts = Array.from(words).reduce<number[]>((a, ch) => [...a, a[a.length - 1] + enc.encode(ch).length], [0]);
          const m = cuts.reduce((best, c) => (Math.abs(c - mid) < Math.abs(best - mid) ? c : best), 0);
          const textBytes = i === at && where === 'text' ? concat([t.subarray(0, m), new Uint8Array(bad), t.subarray(m)]) : t;
          const other = i === at && where === 'other' ? new Uint8Array(bad) : new Uint8Array(0);
          const parts = events[format](i, textBytes, other);
          if (i === at) {
            const before = where === 'text' ? parts.indexOf(textBytes) : parts.indexOf(other);
            badAt = offset + parts.slice(0, before).reduce((n, p) => n + p.length, 0) + (where === 'text' ? m : 0);
          } else if (i < at || badAt < 0) {
            text += words;
          }
          const e = concat(parts);
          reads.push(e);
          offset += e.length;
        }
        const bytes = concat(reads);
        const what = `seed ${SEED}, ${format} stream ${s}: bad ${bad} in the ${where} of event ${at}`;
        // (the text before the bad event; in a bad event's own text, what comes before the bad bytes is not given)
        const want = { code: 'ERR_INVALID_UTF8', offset: badAt, text };
        for (const chunks of [reads, [bytes], cut(bytes, randomCuts(bytes, r, 20))]) {
          const m = new ModelStream({ format, raw: true });
          let got = '';
          let error: { code: string; offset: number; text: string } | undefined;
          try {
            for (const c of chunks) got += m.push(c);
            got += m.flush();
          } catch (e) {
            if (!(e instanceof ModelStreamError)) throw e;
            error = { code: e.code, offset: e.offset, text: got + e.text };
          }
          expect(error, what).toEqual(want);
          m.dispose();
        }
        // not strict: the bad bytes read as U+FFFD, as TextDecoder replaces them, however the stream is cut
        const loose = (chunks: Uint8Array[]) => {
          const m = new ModelStream({ format, raw: true, fatal: false, eof: 'allow' });
          let got = '';
          for (const c of chunks) got += m.push(c);
          got += m.flush();
          m.dispose();
          return got;
        };
        const whole = loose([bytes]);
        expect(whole, what).toContain('\ufffd'.repeat(where === 'text' ? 1 : 0));
        expect(loose(reads), what).toBe(whole);
      }
    });
  }
});
