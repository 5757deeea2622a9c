// Damaged upstreams relayed to the official clients. Every model format's fixtures, damaged at
// random (test/helpers/damaged-streams.ts), go through SseRelay to the other client's format, cut
// at random, and the bytes it writes are read by openai's and @anthropic-ai/sdk's own streaming
// helpers (chat.completions.stream, messages.stream) through a fetch that answers them. Whatever
// the damage:
// - an upstream that did not complete never reaches the client as a complete answer: its helper
//   throws its APIError (the error event the relay wrote), never ends quietly;
// - an upstream that completed is a complete answer, with the text and the tool calls (ids, names,
//   arguments) a raw ModelStream reads; its helper throws only where the model's own tool
//   arguments are not JSON (the helpers parse them; Anthropic's partial parser may instead read
//   some such arguments, as an unterminated string, as it reads them);
// - nothing else is thrown: no error of a client reading what it cannot read.
// Seeded: the seed and the stream are printed on failure.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { expect, test } from 'vitest';
import { SseRelay } from '../../bindings/index.js';
import { SOURCES, damage, readWhole } from '../helpers/damaged-streams.js';
import { SEED, concat, cut, randomCuts, rng } from '../helpers/random.js';

const dec = new TextDecoder();

/** A tool call as a client's final message has it: its arguments parsed (the Anthropic client parses them). */
interface ClientCall { id: string; name: string; input: unknown }

async function readByClient(to: 'openai' | 'anthropic', body: Uint8Array): Promise<{ text: string; calls: ClientCall[]; thrown: unknown }> {
  const fetch = async () => new Response(body.slice(), { headers: { 'content-type': 'text/event-stream' } });
  let text = '';
  let calls: ClientCall[] = [];
  try {
    if (to === 'openai') {
      const client = new OpenAI({ apiKey: 'test', baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0, fetch });
      const s = client.chat.completions.stream({ model: 'm', messages: [], stream: true });
      for await (const c of s) text += c.choices[0]?.delta?.content ?? '';
      const done = await s.finalChatCompletion();
      calls = (done.choices[0]?.message.tool_calls ?? []).map((c) => c.type === 'function'
        ? { id: c.id, name: c.function.name, input: JSON.parse(c.function.arguments || '{}') as unknown }
        : { id: c.id, name: '', input: null });
    } else {
      const client = new Anthropic({ apiKey: 'test', baseURL: 'http://127.0.0.1:9', maxRetries: 0, fetch });
      const s = client.messages.stream({ model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] });
      for await (const e of s) if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
      const msg = await s.finalMessage();
      calls = msg.content.flatMap((b) => (b.type === 'tool_use' ? [{ id: b.id, name: b.name, input: b.input }] : []));
    }
  } catch (thrown) {
    return { text, calls, thrown };
  }
  return { text, calls, thrown: undefined };
}

test(`damaged upstreams, relayed to the other client's format, read by the official clients (seed ${SEED})`, async () => {
  const r = rng(SEED + 21);
  const outcomes = new Set<string>();
  for (let k = 0, n = 0; n < 2000; k++) {
    const src = SOURCES[Math.floor(r() * SOURCES.length)];
    const to = r() < 0.5 ? 'openai' as const : 'anthropic' as const;
    if (src.format === to) continue; // (from a client's own format the events pass through as they came)
    n++;
    const bytes = r() < 0.1 ? src.bytes : damage(r, src.bytes);
    const { m, text } = readWhole({ ...src, choice: undefined }, bytes);
    const relay = new SseRelay({ from: src.format as 'openai', to });
    const written = cut(bytes, randomCuts(bytes, r, 1 + Math.floor(r() * 64))).map((c) => relay.push(c).slice());
    written.push(relay.flush().slice());
    const got = await readByClient(to, concat(written));
    const why = `seed ${SEED}, case ${k}: ${src.name} (${src.format}) to ${to}, ModelStream ${m.status}, thrown ${String(got.thrown)}: ${JSON.stringify(dec.decode(bytes)).slice(0, 3000)}`;
    const apiError = got.thrown instanceof OpenAI.APIError || got.thrown instanceof Anthropic.APIError;
    if (m.status !== 'done') {
      expect(apiError, why).toBe(true);
      outcomes.add('failed');
    } else if (got.thrown === undefined) {
      expect(got.text, why).toBe(text);
      // the calls the client runs: the stream's, by id, name and arguments (an id the stream has not, the relay makes)
      const parsed = (a: string): unknown => { try { return JSON.parse(a) as unknown; } catch { return `not JSON: ${a}`; } };
      // (a call with no fragment, arguments '' as the stream sent them: Anthropic's format can only say {};
      // arguments that are not JSON, which @anthropic-ai/sdk's partial parser may read without throwing
      // (an unterminated string: {}), are what that parser makes of them)
      const want = m.toolCalls.map((c, i) => ({
        name: c.name,
        input: c.arguments === '' && to === 'anthropic' ? {} : c.valid === false && to === 'anthropic' ? got.calls[i]?.input : parsed(c.arguments),
      }));
      expect(got.calls.map((c) => ({ name: c.name, input: c.input })), why).toEqual(want);
      m.toolCalls.forEach((c, i) => { if (c.id !== '') expect(got.calls[i].id, why).toBe(c.id); });
      outcomes.add(want.length === 0 ? 'done' : 'done with calls');
    } else {
      // (a model's tool arguments that are not JSON: the helpers parse them)
      expect(apiError, why).toBe(false);
      expect(m.toolCalls.some((c) => c.valid === false), why).toBe(true);
      outcomes.add('bad arguments');
    }
  }
  expect([...outcomes].sort()).toEqual(['bad arguments', 'done', 'done with calls', 'failed']);
}, 120_000);
