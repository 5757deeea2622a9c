// A stream asked of Bedrock, and the upstream answers 200 with one JSON body (as Converse and
// InvokeModel answer without streaming, or AWS's error body): the relay reads it at the upstream's
// end as the stream the same answer comes as. A whole answer (Converse's `output.message`, Claude's
// message through InvokeModel) reaches the client as its stream, counted done; an error body is the
// provider's error. Read with the official clients.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, describe, expect, test } from 'vitest';
import { closeGateway, metricsAt, startGateway, withAwsEnv, type Running } from './support.js';

type Format = 'bedrock' | 'bedrock-invoke';

// (a Bedrock upstream's requests are signed with the AWS credentials in the gateway's environment)
withAwsEnv();

const gateways = new Map<Format, Running>();
afterAll(async () => {
  const all = [...gateways.values()];
  for (const g of all.slice(0, -1)) await g.close();
  await closeGateway(all.at(-1));
});
async function gatewayOf(format: Format): Promise<Running> {
  let g = gateways.get(format);
  if (g === undefined) gateways.set(format, (g = await startGateway({ upstreamFormat: format })));
  return g;
}

const WHOLE: Record<Format, string> = {
  bedrock: JSON.stringify({
    metrics: { latencyMs: 210 },
    output: { message: { role: 'assistant', content: [
      { reasoningContent: { reasoningText: { text: 'Weather: call.', signature: 'EqoB' } } }, { text: 'Je regarde. 🌦' },
      { toolUse: { toolUseId: 'tooluse_W1', name: 'weather', input: { city: 'Zürich' } } },
    ] } },
    stopReason: 'tool_use', usage: { inputTokens: 30, outputTokens: 12, totalTokens: 42 },
  }),
  'bedrock-invoke': JSON.stringify({
    id: 'msg_bdrk_1', type: 'message', role: 'assistant', model: 'claude', content: [
      { type: 'thinking', thinking: 'Weather: call.', signature: 'EqoB' }, { type: 'text', text: 'Je regarde. 🌦' },
      { type: 'tool_use', id: 'tooluse_W1', name: 'weather', input: { city: 'Zürich' } },
    ], stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 30, output_tokens: 12 },
  }),
};

async function outcomes(r: Running): Promise<Record<string, number>> {
  const m = await metricsAt(`${r.url}/metrics`);
  return {
    done: m.get('llm_streams_total{status="done"}') ?? 0, failed: m.get('llm_streams_total{status="failed"}') ?? 0,
    truncated: m.get('llm_streams_total{status="truncated"}') ?? 0, providerStream: m.get('llm_provider_errors_total{source="stream"}') ?? 0,
  };
}
const diff = (a: Record<string, number>, b: Record<string, number>) => Object.fromEntries(Object.keys(a).map((k) => [k, b[k] - a[k]]));

describe.each(['bedrock', 'bedrock-invoke'] as const)('a 200 JSON body from a %s upstream to a stream request', (format) => {
  test('a whole answer: the text, the reasoning, the call and the finish, written to each client as its stream; done', async () => {
    const r = await gatewayOf(format);
    r.up.scripts.set('whole', { contentType: 'application/json', pieces: [Buffer.from(WHOLE[format])] });
    const before = await outcomes(r);
    const openai = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: 'k', maxRetries: 0, timeout: 20_000 });
    const done = await openai.chat.completions.stream({ model: 'whole', messages: [{ role: 'user', content: 'x' }], stream: true }).finalChatCompletion();
    const c = done.choices[0];
    expect([c.message.content, c.finish_reason, c.message.tool_calls?.map((t) => [t.id, t.type === 'function' ? t.function.name : '', t.type === 'function' ? t.function.arguments : ''])])
      .toEqual(['Je regarde. 🌦', 'tool_calls', [['tooluse_W1', 'weather', '{"city":"Zürich"}']]]);
    const anthropic = new Anthropic({ baseURL: r.url, apiKey: 'k', maxRetries: 0, timeout: 20_000 });
    const m = await anthropic.messages.stream({ model: 'whole', max_tokens: 64, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
    expect([m.content, m.stop_reason]).toEqual([[
      { type: 'thinking', thinking: 'Weather: call.', signature: 'EqoB' }, { type: 'text', text: 'Je regarde. 🌦' },
      { type: 'tool_use', id: 'tooluse_W1', name: 'weather', input: { city: 'Zürich' } },
    ], 'tool_use']);
    expect(diff(before, await outcomes(r))).toEqual({ done: 2, failed: 0, truncated: 0, providerStream: 0 });
  });

  test('AWS\'s error body: the provider\'s error, in each client\'s shape', async () => {
    const r = await gatewayOf(format);
    r.up.scripts.set('busy', { contentType: 'application/json', pieces: [Buffer.from('{"message":"Too many requests, please wait.","__type":"ThrottlingException"}')] });
    const before = await outcomes(r);
    const anthropic = new Anthropic({ baseURL: r.url, apiKey: 'k', maxRetries: 0, timeout: 20_000 });
    const e = await anthropic.messages.stream({ model: 'busy', max_tokens: 64, messages: [{ role: 'user', content: 'x' }] }).finalMessage().then(() => undefined, (x: unknown) => x);
    expect(e).toBeInstanceOf(Anthropic.APIError);
    expect((e as InstanceType<typeof Anthropic.APIError>).error).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: 'Too many requests, please wait.' } });
    expect(diff(before, await outcomes(r))).toEqual({ done: 0, failed: 1, truncated: 0, providerStream: 1 });
  });
});

describe('Converse whole answers through the gateway: two calls, and a turn that failed', () => {
  test('reasoning, text and two calls (one with `{}` input): each client reads all of them, done, the tokens counted', async () => {
    const r = await gatewayOf('bedrock');
    r.up.scripts.set('two', { contentType: 'application/json', pieces: [Buffer.from(JSON.stringify({
      metrics: { latencyMs: 90 },
      output: { message: { role: 'assistant', content: [
        { reasoningContent: { reasoningText: { text: 'Two lookups.', signature: 'EqoC' } } }, { text: 'Einen Moment.' },
        { toolUse: { toolUseId: 'tooluse_A', name: 'list_alerts', input: {} } }, { toolUse: { toolUseId: 'tooluse_B', name: 'weather', input: { city: 'Zürich', days: 2 } } },
      ] } },
      stopReason: 'tool_use', usage: { inputTokens: 20, outputTokens: 9, totalTokens: 29 },
    }))] });
    const before = await outcomes(r);
    const tokens = async () => {
      const m = await metricsAt(`${r.url}/metrics`);
      return [m.get('llm_tokens_total{kind="input"}') ?? 0, m.get('llm_tokens_total{kind="output"}') ?? 0];
    };
    const t0 = await tokens();
    const openai = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: 'k', maxRetries: 0, timeout: 20_000 });
    const c = (await openai.chat.completions.stream({ model: 'two', messages: [{ role: 'user', content: 'x' }], stream: true }).finalChatCompletion()).choices[0];
    expect([c.message.content, c.finish_reason, c.message.tool_calls?.map((t) => [t.id, t.type === 'function' ? t.function.name : '', t.type === 'function' ? t.function.arguments : ''])])
      .toEqual(['Einen Moment.', 'tool_calls', [['tooluse_A', 'list_alerts', '{}'], ['tooluse_B', 'weather', '{"city":"Zürich","days":2}']]]);
    const anthropic = new Anthropic({ baseURL: r.url, apiKey: 'k', maxRetries: 0, timeout: 20_000 });
    const m = await anthropic.messages.stream({ model: 'two', max_tokens: 64, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
    expect([m.content, m.stop_reason]).toEqual([[
      { type: 'thinking', thinking: 'Two lookups.', signature: 'EqoC' }, { type: 'text', text: 'Einen Moment.' },
      { type: 'tool_use', id: 'tooluse_A', name: 'list_alerts', input: {} }, { type: 'tool_use', id: 'tooluse_B', name: 'weather', input: { city: 'Zürich', days: 2 } },
    ], 'tool_use']);
    expect(diff(before, await outcomes(r))).toEqual({ done: 2, failed: 0, truncated: 0, providerStream: 0 });
    const t1 = await tokens();
    expect([t1[0] - t0[0], t1[1] - t0[1]]).toEqual([40, 18]);
  });

  test('a stop reason that says the turn failed (malformed_tool_use): the text, then the provider\'s error, no finish; failed, its tokens counted', async () => {
    const r = await gatewayOf('bedrock');
    r.up.scripts.set('bad', { contentType: 'application/json', pieces: [Buffer.from(JSON.stringify({
      metrics: { latencyMs: 90 }, output: { message: { role: 'assistant', content: [{ text: 'Calling é…' }, { toolUse: { toolUseId: 'tooluse_X', name: 'f', input: {} } }] } },
      stopReason: 'malformed_tool_use', usage: { inputTokens: 9, outputTokens: 4, totalTokens: 13 },
    }))] });
    const before = await outcomes(r);
    const m0 = await metricsAt(`${r.url}/metrics`);
    const openai = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: 'k', maxRetries: 0, timeout: 20_000 });
    let text = '';
    const e = await openai.chat.completions.stream({ model: 'bad', messages: [{ role: 'user', content: 'x' }], stream: true })
      .on('content', (d) => { text += d; }).finalChatCompletion().then(() => undefined, (x: unknown) => x);
    expect(text).toBe('Calling é…');
    expect(e).toBeInstanceOf(OpenAI.APIError);
    expect([(e as InstanceType<typeof OpenAI.APIError>).code, (e as Error).message]).toEqual(['ERR_PROVIDER', 'the model wrote a tool call that is not valid']);
    const anthropic = new Anthropic({ baseURL: r.url, apiKey: 'k', maxRetries: 0, timeout: 20_000 });
    const a = await anthropic.messages.stream({ model: 'bad', max_tokens: 64, messages: [{ role: 'user', content: 'x' }] }).finalMessage().then(() => undefined, (x: unknown) => x);
    expect(a).toBeInstanceOf(Anthropic.APIError);
    expect((a as InstanceType<typeof Anthropic.APIError>).error).toEqual({ type: 'error', error: { type: 'api_error', message: 'the model wrote a tool call that is not valid' } });
    expect(diff(before, await outcomes(r))).toEqual({ done: 0, failed: 2, truncated: 0, providerStream: 2 });
    const m1 = await metricsAt(`${r.url}/metrics`);
    const d = (k: string) => (m1.get(k) ?? 0) - (m0.get(k) ?? 0);
    expect([d('llm_tokens_total{kind="input"}'), d('llm_tokens_total{kind="output"}')]).toEqual([18, 8]);
  });
});
