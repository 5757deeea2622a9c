// A model's failed turn through the gateway: Gemini's finishReason MALFORMED_FUNCTION_CALL (its
// finishMessage the message) and MISSING_THOUGHT_SIGNATURE (no finishMessage: the library's sentence
// for it), Bedrock's stopReason malformed_tool_use, are the provider's error (ERR_PROVIDER, the
// reason its provider code), not a turn that ended. Streamed, each client gets the text before it,
// then one error event (never a stop), exactly as SseRelay writes it, and its official client
// throws an APIError with the message; a whole answer (`stream: false`) is a 502 in the client's
// shape that names the message and the provider's code as the streamed event does. Each counts as
// a failed stream and as the provider's error in its stream, and its tokens count (Bedrock's come
// in the metadata after the stop).
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, test } from 'vitest';
import { SseRelay } from '../../bindings/index.js';
import { encodeMessage } from '../helpers/bedrock-fixtures.js';
import { concat } from '../helpers/random.js';
import { closeGateway, metricsAt, normalizeIds, readStream, startGateway, withAwsEnv, type Running } from './support.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

const gem = (o: unknown) => `data: ${JSON.stringify(o)}\r\n\r\n`;
const NOTE = 'Malformed function call: print(default_api.get_weather(city="Zürich"';
const geminiBody = (finishReason: string, more: Record<string, unknown> = {}) => enc.encode(
  gem({ candidates: [{ content: { role: 'model', parts: [{ text: 'Let me ' }] }, index: 0 }], usageMetadata: { promptTokenCount: 7 } })
  + gem({ candidates: [{ content: { role: 'model', parts: [{ text: 'check. 🌦️' }] }, index: 0 }], usageMetadata: { promptTokenCount: 7 } })
  + gem({ candidates: [{ content: { role: 'model', parts: [] }, finishReason, index: 0, ...more }], usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 5, totalTokenCount: 12 } }),
);
const bedrockBody = (stopReason: string) => concat([
  { event: 'messageStart', payload: '{"role":"assistant","p":"abc"}' },
  { event: 'contentBlockDelta', payload: '{"contentBlockIndex":0,"delta":{"text":"Calling é…"},"p":"ab"}' },
  { event: 'contentBlockStop', payload: '{"contentBlockIndex":0,"p":"abcd"}' },
  { event: 'messageStop', payload: JSON.stringify({ stopReason, p: 'ab' }) },
  { event: 'metadata', payload: '{"usage":{"inputTokens":9,"outputTokens":4,"totalTokens":13},"metrics":{"latencyMs":80},"p":"a"}' },
].map(encodeMessage));

interface Turn {
  name: string;
  format: 'gemini' | 'bedrock';
  body: Uint8Array;
  text: string;
  /** The provider's message and code, as the library reads them. */
  message: string;
  code: string;
  /** The type of Anthropic's error event for it. */
  anthropicType: string;
  /** The tokens the provider counted for the failed turn (Gemini's in its last chunk, Bedrock's in the metadata after the stop). */
  tokens: { input: number; output: number };
}

const TURNS: Turn[] = [
  { name: 'gemini MALFORMED_FUNCTION_CALL', format: 'gemini', body: geminiBody('MALFORMED_FUNCTION_CALL', { finishMessage: NOTE }), text: 'Let me check. 🌦️',
    message: NOTE, code: 'MALFORMED_FUNCTION_CALL', anthropicType: 'api_error', tokens: { input: 7, output: 5 } },
  { name: 'gemini MISSING_THOUGHT_SIGNATURE', format: 'gemini', body: geminiBody('MISSING_THOUGHT_SIGNATURE'), text: 'Let me check. 🌦️',
    message: 'a call in the request lacks the thought signature it came with', code: 'MISSING_THOUGHT_SIGNATURE', anthropicType: 'invalid_request_error', tokens: { input: 7, output: 5 } },
  { name: 'bedrock malformed_tool_use', format: 'bedrock', body: bedrockBody('malformed_tool_use'), text: 'Calling é…',
    message: 'the model wrote a tool call that is not valid', code: 'malformed_tool_use', anthropicType: 'api_error', tokens: { input: 9, output: 4 } },
];

/** SseRelay's reading of the whole body: what the gateway must write (compared with the ids and times a relay makes for itself written alike). */
function relayed(t: Turn, to: 'openai' | 'anthropic'): string {
  const r = new SseRelay({ from: t.format, to, model: 'm' }); // (the model the tests ask for, which the gateway's relay names)
  const out = dec.decode(concat([r.push(t.body).slice(), r.flush().slice()]));
  r.dispose();
  return out;
}
// (support.ts's normalizeIds, and Anthropic's message id, which it leaves: the chunks' `created` second
// may differ between two relays, and it made this test fail once)
const sameIds = (wire: string) => normalizeIds(wire).replace(/"msg_seam[^"]*"/g, '"msg_ID"');

/** A fetch for an official client that also keeps each response's exact body (read whole, then handed to the client). */
function recording(): { fetch: typeof fetch; bodies: string[] } {
  const bodies: string[] = [];
  return {
    bodies,
    fetch: async (input, init) => {
      const r = await fetch(input, init);
      const bytes = new Uint8Array(await r.arrayBuffer());
      bodies.push(dec.decode(bytes));
      return new Response(bytes, { status: r.status, statusText: r.statusText, headers: r.headers });
    },
  };
}

/** The stream and provider-error counters, exactly (zeros included). */
async function outcomeCounts(r: Running): Promise<Record<string, number>> {
  const m = await metricsAt(`${r.url}/metrics`);
  return Object.fromEntries([...m].filter(([k]) => /^llm_(streams_total|provider_errors_total|upstream_truncated_total)/.test(k)));
}
const FAILED_ONCE = {
  'llm_streams_total{status="done"}': 0, 'llm_streams_total{status="truncated"}': 0, 'llm_streams_total{status="failed"}': 1,
  'llm_streams_total{status="limit"}': 0, 'llm_streams_total{status="aborted"}': 0, llm_upstream_truncated_total: 0,
  'llm_provider_errors_total{source="status"}': 0, 'llm_provider_errors_total{source="stream"}': 1,
  'llm_provider_errors_total{source="connect"}': 0, 'llm_provider_errors_total{source="body"}': 0,
};

// (a Bedrock upstream's requests are signed with the AWS credentials in the gateway's environment)
withAwsEnv();

let g: Running | undefined;
afterEach(async () => {
  await closeGateway(g);
  g = undefined;
});

async function gatewayFor(t: Turn): Promise<Running> {
  g = await startGateway({ upstreamFormat: t.format });
  g.up.scripts.set('m', { contentType: t.format === 'bedrock' ? 'application/vnd.amazon.eventstream' : 'text/event-stream', pieces: [t.body] });
  return g;
}

describe.each(TURNS.map((t) => [t.name, t] as const))('%s', (_, t) => {
  test('streamed to an OpenAI client: the text, then the provider\'s error event (no finish); openai-node throws it', async () => {
    const r = await gatewayFor(t);
    const rec = recording();
    const client = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: 'k', maxRetries: 0, timeout: 20_000, fetch: rec.fetch });
    const { text, thrown } = await readStream(client, 'm');
    expect(text).toBe(t.text);
    expect(thrown).toBeInstanceOf(OpenAI.APIError);
    expect((thrown as InstanceType<typeof OpenAI.APIError>).code).toBe('ERR_PROVIDER');
    expect((thrown as Error).message).toContain(t.message);
    const [wire] = rec.bodies;
    expect(sameIds(wire)).toBe(sameIds(relayed(t, 'openai')));
    const last = wire.slice(wire.lastIndexOf('data: '));
    expect(JSON.parse(last.slice(6))).toEqual({ error: { message: t.message, type: 'upstream_error', code: 'ERR_PROVIDER', offset: expect.any(Number), provider_code: t.code } });
    expect(wire).not.toMatch(/"finish_reason":"(stop|tool_calls)"|\[DONE\]/);
    expect(await outcomeCounts(r)).toEqual(FAILED_ONCE);
    // (the tokens of the failed turn are counted: the provider bills them)
    const m = await metricsAt(`${r.url}/metrics`);
    expect([m.get('llm_tokens_total{kind="input"}'), m.get('llm_tokens_total{kind="output"}')]).toEqual([t.tokens.input, t.tokens.output]);
  });

  test('streamed to an Anthropic client: the text, then Anthropic\'s error event (no stop); the SDK throws it', async () => {
    const r = await gatewayFor(t);
    const rec = recording();
    const client = new Anthropic({ baseURL: r.url, apiKey: 'k', maxRetries: 0, timeout: 20_000, fetch: rec.fetch });
    let text = '';
    const e = await client.messages.stream({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'x' }] })
      .on('text', (s) => { text += s; }).finalMessage().then(() => undefined, (x: unknown) => x);
    expect(text).toBe(t.text);
    expect(e).toBeInstanceOf(Anthropic.APIError);
    expect((e as Error).message).toContain(t.message);
    const [wire] = rec.bodies;
    expect(sameIds(wire)).toBe(sameIds(relayed(t, 'anthropic')));
    expect(wire.endsWith(`event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: t.anthropicType, message: t.message } })}\n\n`)).toBe(true);
    expect(wire).not.toMatch(/"stop_reason":"(end_turn|tool_use)"|message_stop/);
    expect(await outcomeCounts(r)).toEqual(FAILED_ONCE);
  });

  test('a whole answer (stream: false) to an OpenAI client: a 502 naming the provider\'s message and code, as the streamed event does', async () => {
    const r = await gatewayFor(t);
    const rec = recording();
    const client = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: 'k', maxRetries: 0, timeout: 20_000, fetch: rec.fetch });
    const e = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.APIError);
    const err = e as InstanceType<typeof OpenAI.APIError>;
    expect([err.status, err.code, err.message]).toEqual([502, 'ERR_PROVIDER', `502 ${t.message}`]);
    // (the streamed answer's last event, as the body's error: the same fields)
    const streamed = relayed(t, 'openai');
    expect(JSON.parse(rec.bodies[0])).toEqual(JSON.parse(streamed.slice(streamed.lastIndexOf('data: ') + 6)));
    expect(JSON.parse(rec.bodies[0])).toEqual({ error: { message: t.message, type: 'upstream_error', code: 'ERR_PROVIDER', offset: expect.any(Number), provider_code: t.code } });
    expect(await outcomeCounts(r)).toEqual(FAILED_ONCE);
  });

  test('a whole answer (stream: false) to an Anthropic client: a 502 in Anthropic\'s shape, the error type of the streamed event', async () => {
    const r = await gatewayFor(t);
    const rec = recording();
    const client = new Anthropic({ baseURL: r.url, apiKey: 'k', maxRetries: 0, timeout: 20_000, fetch: rec.fetch });
    const e = await client.messages.create({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Anthropic.APIError);
    expect((e as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
    expect((e as Error).message).toContain(t.message);
    expect(JSON.parse(rec.bodies[0])).toEqual({ type: 'error', error: { type: t.anthropicType, message: t.message } });
    expect(await outcomeCounts(r)).toEqual(FAILED_ONCE);
  });
});
