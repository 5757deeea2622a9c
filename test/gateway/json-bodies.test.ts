// A stream asked for, and the upstream answers 200 with one JSON body instead of an event stream:
// an error object (some OpenAI-compatible servers and proxies answer a failed request so), or a
// whole answer. seam's relay reads the body at the upstream's end: its error is the provider's,
// which the client gets in its API's shape (an OpenAI client, the error event with the provider's
// message; an Anthropic client, Anthropic's `event: error` with the provider's error type), counted
// a provider error of the stream, not truncated. A whole answer (an upstream that does not stream)
// is read as the stream the same answer comes as: the client gets the answer, written in its API's
// stream at the upstream's end, counted done. Read with the official clients, for an upstream of
// each SSE API.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, test } from 'vitest';
import { gatewaysByFormat, metricsAt, type Running } from './support.js';

type Format = 'openai' | 'anthropic' | 'gemini';
const gatewayOf = gatewaysByFormat<Format>();

const ERRORS: Record<Format, { body: string; code: string }> = {
  openai: { body: '{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}', code: 'rate_limit_error' },
  anthropic: { body: '{"type":"error","error":{"type":"rate_limit_error","message":"Rate limit reached"}}', code: 'rate_limit_error' },
  gemini: { body: '{"error":{"code":429,"message":"Rate limit reached","status":"RESOURCE_EXHAUSTED"}}', code: 'RESOURCE_EXHAUSTED' },
};
const WHOLE: Record<Format, string> = {
  openai: '{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Bonjour"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}',
  anthropic: '{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Bonjour"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":2}}',
  gemini: '{"candidates":[{"content":{"role":"model","parts":[{"text":"Bonjour"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2}}',
};

/** The gateway's counts of outcomes that such a body moves (its metrics are the gateway's for the file: read as differences). */
async function outcomes(r: Running): Promise<Record<string, number>> {
  const m = await metricsAt(`${r.url}/metrics`);
  return {
    done: m.get('llm_streams_total{status="done"}') ?? 0,
    failed: m.get('llm_streams_total{status="failed"}') ?? 0,
    truncated: m.get('llm_streams_total{status="truncated"}') ?? 0,
    upstreamTruncated: m.get('llm_upstream_truncated_total') ?? 0,
    providerStream: m.get('llm_provider_errors_total{source="stream"}') ?? 0,
    badEvents: m.get('llm_bad_event_total') ?? 0,
  };
}
const diff = (a: Record<string, number>, b: Record<string, number>) => Object.fromEntries(Object.keys(a).map((k) => [k, b[k] - a[k]]));

/** Streams with the OpenAI client; what it threw (it must throw). */
async function openaiThrows(r: Running, model: string): Promise<InstanceType<typeof OpenAI.APIError>> {
  const client = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: 'k', maxRetries: 0, timeout: 20_000 });
  const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Bonjour' }], stream: true });
  let text = '';
  try {
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
  } catch (e) {
    expect(text).toBe('');
    expect(e).toBeInstanceOf(OpenAI.APIError);
    return e as InstanceType<typeof OpenAI.APIError>;
  }
  throw new Error(`no error: ${JSON.stringify(text)}`);
}

/** Streams with the Anthropic client; what it threw (it must throw). */
async function anthropicThrows(r: Running, model: string): Promise<InstanceType<typeof Anthropic.APIError>> {
  const client = new Anthropic({ baseURL: r.url, apiKey: 'k', maxRetries: 0, timeout: 20_000 });
  let text = '';
  const e = await client.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Bonjour' }] })
    .on('text', (s) => { text += s; }).finalMessage().then(() => undefined, (x: unknown) => x);
  expect(text).toBe('');
  expect(e).toBeInstanceOf(Anthropic.APIError);
  return e as InstanceType<typeof Anthropic.APIError>;
}

describe.each(['openai', 'anthropic', 'gemini'] as const)('a 200 JSON body from a %s upstream to a stream request', (format) => {
  test('an error object: to an OpenAI client, the error event with the provider\'s message; a provider error, not truncated', async () => {
    const r = await gatewayOf(format);
    r.up.scripts.set('busy', { contentType: 'application/json', pieces: [Buffer.from(ERRORS[format].body)] });
    const before = await outcomes(r);
    const e = await openaiThrows(r, 'busy');
    expect([e.message, e.error]).toEqual(['Rate limit reached',
      { message: 'Rate limit reached', type: 'upstream_error', code: 'ERR_PROVIDER', offset: 0, provider_code: ERRORS[format].code }]);
    expect(diff(before, await outcomes(r))).toEqual({ done: 0, failed: 1, truncated: 0, upstreamTruncated: 0, providerStream: 1, badEvents: 0 });
  });

  test('an error object: to an Anthropic client, Anthropic\'s error event, the provider\'s type in its words', async () => {
    const r = await gatewayOf(format);
    r.up.scripts.set('busy', { contentType: 'application/json', pieces: [Buffer.from(ERRORS[format].body)] });
    const before = await outcomes(r);
    const e = await anthropicThrows(r, 'busy');
    expect(e.error).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: 'Rate limit reached' } });
    expect(diff(before, await outcomes(r))).toEqual({ done: 0, failed: 1, truncated: 0, upstreamTruncated: 0, providerStream: 1, badEvents: 0 });
  });

  test('a whole answer: the answer, written to the client as its stream (read at the upstream\'s end), done', async () => {
    const r = await gatewayOf(format);
    r.up.scripts.set('whole', { contentType: 'application/json', pieces: [Buffer.from(WHOLE[format])] });
    const before = await outcomes(r);
    const openai = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: 'k', maxRetries: 0, timeout: 20_000 });
    const stream = await openai.chat.completions.create({ model: 'whole', messages: [{ role: 'user', content: 'Bonjour' }], stream: true });
    let text = '';
    let finish: string | null | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect([text, finish]).toEqual(['Bonjour', 'stop']);
    const anthropic = new Anthropic({ baseURL: r.url, apiKey: 'k', maxRetries: 0, timeout: 20_000 });
    const m = await anthropic.messages.stream({ model: 'whole', max_tokens: 64, messages: [{ role: 'user', content: 'Bonjour' }] }).finalMessage();
    expect([m.content, m.stop_reason]).toEqual([[{ type: 'text', text: 'Bonjour' }], 'end_turn']);
    expect(diff(before, await outcomes(r))).toEqual({ done: 2, failed: 0, truncated: 0, upstreamTruncated: 0, providerStream: 0, badEvents: 0 });
  });
});
