// How a relayed answer ends, read by the official clients at every cut of the upstream's bytes: the
// finish reason a client acts on, translated between the formats.
import { describe, expect, it } from 'vitest';
import { SseRelay } from '../../bindings/index.js';
import { anthropicFinal, openaiFinal, sameAtEveryCut } from '../helpers/sdk-clients.js';

const enc = new TextEncoder();
const anthropicEvent = (data: { type: string }) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
const openaiChunk = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** An Anthropic answer whose tool call is cut by `stop` (its input JSON unfinished). */
const anthropicCut = (stop: string) => enc.encode([
  { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Writing.' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'write', input: {} } },
  { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"path":"/tmp/a","text":"the fir' } },
  { type: 'content_block_stop', index: 1 },
  { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 16 } },
  { type: 'message_stop' },
].map(anthropicEvent).join(''));

/** An OpenAI answer whose tool call is cut by `finish` (its arguments unfinished). */
const openaiCut = (finish: string) => enc.encode(openaiChunk({ role: 'assistant', content: '' })
  + openaiChunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'write', arguments: '' } }] })
  + openaiChunk({ tool_calls: [{ index: 0, function: { arguments: '{"path":"/tmp/a","text":"the fir' } }] })
  + openaiChunk({}, finish)
  + 'data: [DONE]\n\n');

describe('an answer cut at its limit while it writes a call keeps its reason: the call may be cut short, and a client must not run it', () => {
  it.each([['max_tokens', 'length'], ['model_context_window_exceeded', 'length'], ['refusal', 'content_filter'], ['tool_use', 'tool_calls']])(
    'Anthropic %s to openai-node: finish_reason %s, the call as it came', async (stop, finish) => {
      const got = await sameAtEveryCut(anthropicCut(stop), () => new SseRelay({ from: 'anthropic', to: 'openai' }), async (b) => {
        const done = await openaiFinal(b);
        const c = done.choices[0]!;
        return { finish: c.finish_reason, text: c.message.content, calls: c.message.tool_calls?.map((t) => (t.type === 'function' ? [t.id, t.function.name, t.function.arguments] : t)) };
      });
      expect(got).toEqual({ finish, text: 'Writing.', calls: [['toolu_1', 'write', '{"path":"/tmp/a","text":"the fir']] });
    });

  it.each([['length', 'max_tokens'], ['content_filter', 'refusal'], ['tool_calls', 'tool_use'], ['stop', 'tool_use']])(
    'OpenAI %s to the Anthropic SDK: stop_reason %s, the call as it came', async (finish, stop) => {
      const got = await sameAtEveryCut(openaiCut(finish), () => new SseRelay({ from: 'openai', to: 'anthropic' }), async (b) => {
        const m = await anthropicFinal(b);
        // (the SDK reads an unfinished input as far as it parses: a string cut short is left out)
        return { stop: m.stop_reason, content: m.content.map((x) => (x.type === 'tool_use' ? [x.id, x.name, x.input] : x.type)) };
      });
      expect(got).toEqual({ stop, content: [['call_1', 'write', { path: '/tmp/a' }]] });
    });
});

describe('the reasoning tokens of the usage, in each client\'s words', () => {
  const thinking = enc.encode([
    { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, cache_read_input_tokens: 30, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hm.' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'c2ln' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Yes.' } },
    { type: 'content_block_stop', index: 1 },
    // (Anthropic's usage.output_tokens_details: the output tokens spent thinking)
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 40, output_tokens_details: { thinking_tokens: 32 } } },
    { type: 'message_stop' },
  ].map(anthropicEvent).join(''));

  it("Anthropic's thinking_tokens to openai-node: completion_tokens_details.reasoning_tokens", async () => {
    const got = await sameAtEveryCut(thinking, () => new SseRelay({ from: 'anthropic', to: 'openai' }), async (b) => (await openaiFinal(b)).usage);
    expect(got).toEqual({
      prompt_tokens: 40, completion_tokens: 40, total_tokens: 80, prompt_tokens_details: { cached_tokens: 30 }, completion_tokens_details: { reasoning_tokens: 32 },
    });
  });

  it("OpenAI's reasoning_tokens to the Anthropic SDK: output_tokens_details.thinking_tokens", async () => {
    const body = enc.encode(openaiChunk({ role: 'assistant', content: '' }) + openaiChunk({ reasoning_content: 'Hm.' }) + openaiChunk({ content: 'Yes.' }) + openaiChunk({}, 'stop')
      + `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt', choices: [], usage: { prompt_tokens: 40, completion_tokens: 40, total_tokens: 80, prompt_tokens_details: { cached_tokens: 30 }, completion_tokens_details: { reasoning_tokens: 32 } } })}\n\n`
      + 'data: [DONE]\n\n');
    const got = await sameAtEveryCut(body, () => new SseRelay({ from: 'openai', to: 'anthropic' }), async (b) => (await anthropicFinal(b)).usage);
    expect(got).toEqual({ input_tokens: 10, output_tokens: 40, cache_read_input_tokens: 30, output_tokens_details: { thinking_tokens: 32 } });
  });
});
