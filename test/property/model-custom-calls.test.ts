// A differential fuzz of calls that are not a function's JSON arguments: OpenAI Chat streams with
// custom tools' calls (free-text input in `custom.input` fragments, escapes spelled at random, a
// pair split between two fragments), function calls beside them, in parallel or one after the
// other, a fragment before its call's start, and the functions API's `function_call`. ModelStream
// (raw and committed) must give exactly the JSON.parse reading's calls, whole and cut at random;
// SseRelay to OpenAI must give openai-node exactly those calls; to Anthropic, a stream whose calls
// do not interleave gives the SDK each call in its own block, a custom call's input as
// `{"input": …}` (calls that interleave split a call's input between blocks, which the SDK cannot
// parse: docs/models.md, "The relay"). Seeded; the seed and the stream are printed on failure.
import { describe, expect, test } from 'vitest';
import { ModelStream, SseRelay, type ToolCall } from '../../bindings/index.js';
import { type Rnd, chance, jsonString, pick } from '../helpers/model-streams.js';
import { SEED, concat, cut, randomCuts, rng } from '../helpers/random.js';
import { anthropicFinal, openaiFinal } from '../helpers/sdk-clients.js';

const enc = new TextEncoder();
const WORDS = ['apply', 'patch', 'café', '世界', '👩‍💻', '😀', 'a"b', 'back\\slash', 'line\n', 'tab\t', '*** End', '{', '}', ''];

interface Call { index: number; id: string; name: string; custom: boolean; pieces: string[] }

/** A stream, and the calls as the JSON.parse reading has them (the fragments joined, in the order calls began). */
function stream(r: Rnd): { body: string; calls: ToolCall[]; interleaved: boolean; legacy: boolean } {
  const env = (delta: string, finish = 'null') => `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":${delta},"finish_reason":${finish}}]}\n\n`;
  let body = env('{"role":"assistant","content":null}');
  if (chance(r, 0.15)) {
    // the functions API: one call, no index or id
    const args = JSON.stringify({ q: Array.from({ length: 1 + Math.floor(r() * 4) }, () => pick(r, WORDS)).join(' ') });
    const cutAt = Math.floor(r() * args.length);
    body += env(`{"function_call":{"name":"lookup","arguments":${jsonString(r, args.slice(0, cutAt), 0.1)}}}`);
    if (cutAt < args.length) body += env(`{"function_call":{"arguments":${jsonString(r, args.slice(cutAt), 0.1)}}}`);
    body += `${env('{}', '"function_call"')}data: [DONE]\n\n`;
    return { body, calls: [{ index: 0, id: '', name: 'lookup', arguments: args, done: true, valid: true }], interleaved: false, legacy: true };
  }
  const calls: Call[] = Array.from({ length: 1 + Math.floor(r() * 3) }, (_, i) => {
    const custom = chance(r, 0.6);
    const text = custom ? Array.from({ length: Math.floor(r() * 8) }, () => pick(r, WORDS)).join(pick(r, [' ', '\n', ''])) : JSON.stringify({ n: i, w: pick(r, WORDS) });
    const pieces: string[] = [];
    for (let k = 0; k < text.length;) {
      const n = 1 + Math.floor(r() * 9); // (UTF-16 units: a pair may be split between two fragments)
      pieces.push(text.slice(k, k + n));
      k += n;
    }
    return { index: i, id: `call_${i}`, name: custom ? `tool${i}` : `fn${i}`, custom, pieces };
  });
  const parallel = chance(r, 0.3);
  const early = chance(r, 0.2); // the first call's first fragment before its start
  const started = new Set<number>();
  const frag = (c: Call, p: string) => env(`{"tool_calls":[{"index":${c.index},${c.custom ? `"custom":{"input":${jsonString(r, p, 0.15)}}` : `"function":{"arguments":${jsonString(r, p, 0.15)}}`}}]}`);
  const start = (c: Call) => env(`{"tool_calls":[{"index":${c.index},"id":"${c.id}",${c.custom ? `"type":"custom","custom":{"name":"${c.name}","input":""}` : `"type":"function","function":{"name":"${c.name}","arguments":""}`}}]}`);
  let interleaved = false;
  let lastCall = -1;
  const queue = calls.map((c) => ({ c, rest: [...c.pieces] }));
  if (early && queue[0].rest.length > 0) body += frag(queue[0].c, queue[0].rest.shift()!);
  while (queue.some((q) => q.rest.length > 0 || !started.has(q.c.index))) {
    const open = queue.filter((q) => q.rest.length > 0 || !started.has(q.c.index));
    const q = parallel ? pick(r, open) : open[0];
    if (!started.has(q.c.index)) {
      // (calls begin in the order of their index)
      const first = open.find((x) => !started.has(x.c.index))!;
      started.add(first.c.index);
      body += start(first.c);
      if (lastCall >= 0 && lastCall !== first.c.index) interleaved ||= queue[lastCall].rest.length > 0;
      lastCall = first.c.index;
      continue;
    }
    if (lastCall !== q.c.index) interleaved = true;
    lastCall = q.c.index;
    body += frag(q.c, q.rest.shift()!);
  }
  body += `${env('{}', '"tool_calls"')}data: [DONE]\n\n`;
  if (early) interleaved = true;
  const out = calls.map((c): ToolCall => {
    const text = c.pieces.join('');
    if (c.custom) return { index: c.index, id: c.id, name: c.name, arguments: text, done: true, type: 'custom' };
    return { index: c.index, id: c.id, name: c.name, arguments: text, done: true, valid: true };
  });
  return { body, calls: out, interleaved, legacy: false };
}

async function openaiCalls(bytes: Uint8Array): Promise<unknown[]> {
  const m = (await openaiFinal(bytes)).choices[0]!.message;
  if (m.function_call) return [{ name: m.function_call.name, arguments: m.function_call.arguments }];
  return (m.tool_calls ?? []).map((t) => (t.type === 'custom' ? { id: t.id, name: t.custom.name, input: t.custom.input } : { id: t.id, name: t.function.name, arguments: t.function.arguments }));
}

async function anthropicCalls(bytes: Uint8Array): Promise<unknown[]> {
  const msg = await anthropicFinal(bytes);
  return msg.content.flatMap((b) => (b.type === 'tool_use' ? [{ id: b.id, name: b.name, input: b.input }] : []));
}

function relayed(from: Uint8Array[], to: 'openai' | 'anthropic'): Uint8Array {
  const r = new SseRelay({ from: 'openai', to });
  return concat([...from.map((c) => r.push(c).slice()), r.flush().slice()]);
}

describe('custom calls, function calls and function_call, generated', () => {
  test(`ModelStream and the relays against the JSON.parse reading, whole and cut at random, seed ${SEED}`, async () => {
    const r = rng(SEED + 1700);
    let sequential = 0;
    for (let s = 0; s < 120; s++) {
      const { body, calls, interleaved, legacy } = stream(r);
      const bytes = enc.encode(body);
      const where = `seed ${SEED}, stream ${s}: ${JSON.stringify(body)}`;
      const cuttings = [[bytes], cut(bytes, randomCuts(bytes, r, 40)), cut(bytes, randomCuts(bytes, r, 4))];
      for (const chunks of cuttings) {
        for (const raw of [false, true]) {
          const m = new ModelStream({ format: 'openai', raw });
          for (const c of chunks) m.push(c);
          m.flush();
          expect(m.status, where).toBe('done');
          expect(m.toolCalls, where).toEqual(calls);
        }
      }
      const toOpenAi = calls.map((c) => (legacy ? { name: c.name, arguments: c.arguments } : c.type === 'custom' ? { id: c.id, name: c.name, input: c.arguments } : { id: c.id, name: c.name, arguments: c.arguments }));
      for (const chunks of cuttings.slice(0, 2)) {
        expect(await openaiCalls(relayed(chunks, 'openai')), where).toEqual(toOpenAi);
        if (!interleaved) {
          const out = relayed(chunks, 'anthropic');
          const a = await anthropicCalls(out).catch((e: unknown) => {
            throw new Error(`${where}: the Anthropic SDK cannot read the relay's ${JSON.stringify(new TextDecoder().decode(out))}: ${String(e)}`);
          });
          expect(a, where).toEqual(calls.map((c) => ({ id: legacy ? expect.stringMatching(/^toolu_seam/) : c.id, name: c.name, input: c.type === 'custom' ? { input: c.arguments } : JSON.parse(c.arguments) })));
        }
      }
      if (!interleaved) sequential++;
    }
    expect(sequential).toBeGreaterThan(40);
  });
});
