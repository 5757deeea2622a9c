// The core reads a format's quiet events (text deltas and nothing else, by the format's template)
// to the end itself, and hands every other event to the format's description. This property test
// generates streams whose events sit on both sides of that line and just across it (another
// choice's index, two choices, a null or escaped field, a literal spelled with an escape, a
// duplicate key whose last value wins, reasoning, usage, whitespace and key order everywhere) and
// checks that ModelStream (raw mode) and SseRelay give exactly what the JSON.parse reference
// reading gives (test/helpers/model-fixtures.ts), whole and cut at random. Seeded; the seed and
// the stream are printed on failure.
import { describe, expect, test } from 'vitest';
import { ModelStream, SseRelay } from '../../bindings/index.js';
import { reference, type ModelFormat } from '../helpers/model-fixtures.js';
import { type Rnd, chance, clientEvents, clientText, concat, jsonString, pick } from '../helpers/model-streams.js';
import { SEED, cut, randomCuts, rng } from '../helpers/random.js';

const enc = new TextEncoder();

const TEXTS = ['Hello', ' world', 'café', 'cafe\u0301', '世界', '👩‍💻', '🇯🇵', 'क्ष', '', ' ', 'a"b', 'back\\slash', 'tab\there', 'line\nbreak', '\u0000nul', '😀', '\ud800', '\udc00x', 'é', 'ü'];

const str = (r: Rnd, s: string): string => jsonString(r, s, 0.08);

const ws = (r: Rnd) => (chance(r, 0.15) ? pick(r, [' ', '\t', ' \t', '  ']) : '');

/** An object from members [key, JSON text], in random order (or as given), with white space. */
function obj(r: Rnd, members: [string, string][], shuffle = true): string {
  const m = members.slice();
  if (shuffle) for (let i = m.length - 1; i > 0; i--) { const j = Math.floor(r() * (i + 1)); [m[i], m[j]] = [m[j], m[i]]; }
  return `{${m.map(([k, v]) => `${ws(r)}${JSON.stringify(k)}${ws(r)}:${ws(r)}${v}${ws(r)}`).join(',')}}`;
}

/** A filler value: what a provider sends beside the fields that matter. */
function filler(r: Rnd, depth = 0): string {
  switch (Math.floor(r() * (depth > 2 ? 4 : 6))) {
    case 0: return str(r, pick(r, TEXTS));
    case 1: return pick(r, ['0', '-1.5e3', '12345678901234567890', '1700000000']);
    case 2: return pick(r, ['true', 'false', 'null']);
    case 3: return '[]';
    case 4: return `[${filler(r, depth + 1)},${filler(r, depth + 1)}]`;
    default: return obj(r, [['x', filler(r, depth + 1)], ['content', filler(r, depth + 1)], ['text', filler(r, depth + 1)]]);
  }
}

const text = (r: Rnd) => str(r, pick(r, TEXTS));
const sse = (data: string, type?: string) => `${type ? `event: ${type}\n` : ''}data: ${data}\n\n`;

/** One stream of `format`, with its choice option. */
function stream(r: Rnd, format: ModelFormat): { body: string; choice: number } {
  const n = 1 + Math.floor(r() * 12);
  const choice = format === 'openai' && chance(r, 0.2) ? 1 : 0;
  const lines = format === 'ollama' || format === 'ddg';
  let body = !lines && chance(r, 0.2) ? ': keep-alive\n\n' : '';
  for (let i = 0; i < n; i++) {
    if (!lines && chance(r, 0.05)) body += ':\n\n';
    switch (format) {
      case 'openai': {
        const one = (index: number | null): string => {
          const delta: [string, string][] = [];
          if (chance(r, 0.85)) delta.push(['content', chance(r, 0.1) ? 'null' : text(r)]);
          if (chance(r, 0.1)) delta.push(['content', text(r)]); // a duplicate: the last wins
          if (chance(r, 0.1)) delta.push(['reasoning_content', chance(r, 0.5) ? 'null' : text(r)]);
          if (chance(r, 0.1)) delta.push(['role', '"assistant"']);
          const m: [string, string][] = [['delta', obj(r, delta, false)], ['finish_reason', chance(r, 0.05) ? '"length"' : 'null']];
          if (index !== null) m.push(['index', String(index)]);
          if (chance(r, 0.1)) m.push(['logprobs', filler(r)]);
          return obj(r, m);
        };
        const choices = chance(r, 0.1) ? `[${one(0)},${one(1)}]` : `[${one(chance(r, 0.9) ? (chance(r, 0.8) ? choice : 1 - choice) : null)}]`;
        const m: [string, string][] = [['id', '"chatcmpl-1"'], ['object', '"chat.completion.chunk"'], ['choices', choices]];
        if (chance(r, 0.2)) m.push(['usage', 'null']);
        if (chance(r, 0.1)) m.push(['error', 'null']);
        if (chance(r, 0.1)) m.push(['extra', filler(r)]);
        body += sse(obj(r, m));
        break;
      }
      case 'anthropic': {
        const kind = r();
        if (kind < 0.7) {
          const type = chance(r, 0.1) ? '"content_block_delt\\u0061"' : '"content_block_delta"';
          const dtype = chance(r, 0.15) ? pick(r, ['"thinking_delta"', '"input_json_delta"', '"text_del\\u0074a"']) : '"text_delta"';
          const delta: [string, string][] = chance(r, 0.1) ? [['text', text(r)]] : [['type', dtype], ['text', text(r)]]; // (no type: not text)
          if (chance(r, 0.15)) delta.push(['thinking', text(r)]);
          if (chance(r, 0.1)) delta.push(['partial_json', str(r, '{"a":')]);
          const m: [string, string][] = [['type', type], ['index', '0'], ['delta', obj(r, delta)]];
          const dup = chance(r, 0.1);
          if (dup) m.unshift(['type', '"ping"']); // a duplicate before the last: the last wins
          body += sse(obj(r, m, !dup), 'content_block_delta');
        } else if (kind < 0.8) {
          body += sse(obj(r, [['type', '"ping"']]), 'ping');
        } else if (kind < 0.9) {
          body += sse(obj(r, [['type', '"message_delta"'], ['delta', obj(r, [['stop_reason', '"end_turn"']])], ['usage', obj(r, [['output_tokens', '7']])]]), 'message_delta');
        } else {
          body += sse(obj(r, [['type', '"content_block_start"'], ['index', '0'], ['content_block', obj(r, [['type', '"text"'], ['text', '""']])]]), 'content_block_start');
        }
        break;
      }
      case 'openai-responses': {
        const type = chance(r, 0.85) ? '"response.output_text.delta"' : pick(r, ['"response.output_text.del\\u0074a"', '"response.reasoning_text.delta"', '"response.output_item.added"']);
        body += sse(obj(r, [['type', type], ['delta', text(r)], ['output_index', '0'], ['sequence_number', String(i)]]), JSON.parse(type) as string);
        break;
      }
      case 'ollama': {
        const m: [string, string][] = [['model', '"m"'], ['created_at', '"2026-01-01T00:00:00Z"'], ['done', 'false']];
        if (chance(r, 0.8)) m.push(['message', obj(r, [['role', '"assistant"'], ['content', text(r)], ...(chance(r, 0.1) ? [['thinking', text(r)] as [string, string]] : [])])]);
        else m.push(['response', text(r)]);
        if (chance(r, 0.1)) m.push(['done_reason', 'null']);
        body += `${obj(r, m)}${chance(r, 0.3) ? '\r\n' : '\n'}${chance(r, 0.05) ? '\n' : ''}`;
        break;
      }
      case 'ddg': {
        const m: [string, string][] = [['role', '"assistant"'], [chance(r, 0.7) ? 'message' : 'content', text(r)], ['created', '1700000000'], ['action', '"success"'], ['model', '"m"']];
        if (chance(r, 0.1)) m.push(['error', 'null']);
        body += `data: ${obj(r, m)}${chance(r, 0.5) ? '\r\n' : '\n'}`;
        break;
      }
    }
  }
  switch (format) {
    case 'openai': body += sse('[DONE]'); break;
    case 'anthropic': body += sse('{"type":"message_stop"}', 'message_stop'); break;
    case 'openai-responses': body += sse(obj(r, [['type', '"response.completed"'], ['response', obj(r, [['status', '"completed"'], ['usage', obj(r, [['output_tokens', '3']])]])]]), 'response.completed'); break;
    case 'ollama': body += '{"model":"m","done":true,"done_reason":"stop","eval_count":3}\n'; break;
    case 'ddg': body += 'data: [DONE]\n'; break;
  }
  return { body, choice };
}

const FORMATS: ModelFormat[] = ['openai', 'openai-responses', 'anthropic', 'ollama', 'ddg'];

describe('quiet events read in the core give what the JSON.parse reading gives', () => {
  for (const format of FORMATS) {
    test(`${format}: 150 generated streams, whole and cut at random, seed ${SEED}`, () => {
      const r = rng(SEED + FORMATS.indexOf(format));
      for (let s = 0; s < 150; s++) {
        const { body, choice } = stream(r, format);
        const bytes = enc.encode(body);
        const ref = reference(body, format, choice);
        const where = `seed ${SEED}, ${format} stream ${s}: ${JSON.stringify(body)}`;
        for (const chunks of [[bytes], cut(bytes, randomCuts(bytes, r, 24))]) {
          const m = new ModelStream({ format, raw: true, choice, eof: 'allow' });
          let got = '';
          for (const c of chunks) got += m.push(c);
          got += m.flush();
          expect({ text: got, reasoning: m.reasoning, status: m.status, finishReason: m.finishReason, usage: m.usage, events: m.events }, where)
            .toEqual({ text: ref.text, reasoning: ref.reasoning, status: ref.status, finishReason: ref.finishReason, usage: ref.usage, events: ref.events });
          if (choice !== 0) continue; // the relay follows choice 0 of a translated stream; from openai every choice passes
          const relay = new SseRelay({ from: format });
          const out: Uint8Array[] = [];
          for (const c of chunks) out.push(relay.push(c).slice());
          out.push(relay.flush().slice());
          expect(relay.textBytes, where).toBe(enc.encode(ref.text).length);
          expect(relay.eventsOut, where).toBe(clientEvents(concat(out)));
          expect(relay.error?.code, where).toBe(ref.status === 'done' ? undefined : ref.error?.code ?? 'ERR_STREAM_TRUNCATED');
          if (format !== 'openai') expect(clientText(concat(out)), where).toBe(ref.text);
        }
      }
    });
  }
});
