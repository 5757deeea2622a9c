// A call's arguments that come before its start (which names it): a damaged or reordered
// upstream. ModelStream begins the call with the fragment and takes its id and name from the
// start that follows. A relay writes the call for its client as the stream has it: to OpenAI the
// start's id and name follow in a chunk of their own (the client takes the name and id given
// last, as from OpenAI itself); to Anthropic, whose `tool_use` block is named where it begins,
// the call is held until its start (or its end, or 64 KiB of held arguments: then it begins
// unnamed, as it came). Read by the official clients, whole and at every cut. (From Anthropic to
// Anthropic the events pass through as they came.)
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { ModelStream, SseRelay } from '../../bindings/index.js';
import { unclocked } from '../helpers/model-streams.js';
import { concat } from '../helpers/random.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const sse = (type: string | null, o: unknown) => `${type === null ? '' : `event: ${type}\n`}data: ${JSON.stringify(o)}\n\n`;

const oa = (delta: unknown, finish: string | null = null) => sse(null, { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] });
const an = (o: { type: string }) => sse(o.type, o);
const rs = (o: { type: string }) => sse(o.type, o);

/** Upstreams whose second call's first fragment comes before its start; `big`: a first fragment of 70 KiB. */
function upstreams(big = false): { format: 'openai' | 'anthropic' | 'openai-responses'; body: string }[] {
  const first = big ? `{"a":"${'x'.repeat(70 * 1024)}"` : '{"a":';
  const rest = big ? '}' : '1}';
  return [
    {
      format: 'openai',
      body: oa({ role: 'assistant', content: 'Hi ' }) + oa({ tool_calls: [{ index: 0, id: 'call_A', type: 'function', function: { name: 'one', arguments: '{}' } }] })
        + oa({ tool_calls: [{ index: 1, function: { arguments: first } }] })
        + oa({ tool_calls: [{ index: 1, id: 'call_B', type: 'function', function: { name: 'two', arguments: '' } }] })
        + oa({ tool_calls: [{ index: 1, function: { arguments: rest } }] }) + oa({}, 'tool_calls') + 'data: [DONE]\n\n',
    },
    {
      format: 'anthropic',
      body: an({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } } as { type: string })
        + an({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } as { type: string })
        + an({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi ' } } as { type: string })
        + an({ type: 'content_block_stop', index: 0 } as { type: string })
        + an({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: first } } as { type: string })
        + an({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_B', name: 'two', input: {} } } as { type: string })
        + an({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: rest } } as { type: string })
        + an({ type: 'content_block_stop', index: 1 } as { type: string })
        + an({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 5 } } as { type: string })
        + an({ type: 'message_stop' }),
    },
    {
      format: 'openai-responses',
      body: rs({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress', output: [] } } as { type: string })
        + rs({ type: 'response.function_call_arguments.delta', item_id: 'fc_B', output_index: 0, delta: first } as { type: string })
        + rs({ type: 'response.output_item.added', output_index: 0, item: { id: 'fc_B', type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_B', name: 'two' } } as { type: string })
        + rs({ type: 'response.function_call_arguments.delta', item_id: 'fc_B', output_index: 0, delta: rest } as { type: string })
        + rs({ type: 'response.output_item.done', output_index: 0, item: { id: 'fc_B', type: 'function_call', status: 'completed', arguments: first + rest, call_id: 'call_B', name: 'two' } } as { type: string })
        + rs({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', output: [] } } as { type: string }),
    },
  ];
}

interface ClientCall { id: string; name: string; input: unknown }

async function clientCalls(to: 'openai' | 'anthropic', body: Uint8Array): Promise<ClientCall[]> {
  const fetch = async () => new Response(body.slice(), { headers: { 'content-type': 'text/event-stream' } });
  if (to === 'openai') {
    const client = new OpenAI({ apiKey: 'test', baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0, fetch });
    const done = await client.chat.completions.stream({ model: 'm', messages: [], stream: true }).finalChatCompletion();
    return (done.choices[0]?.message.tool_calls ?? []).map((c) => (c.type === 'function' ? { id: c.id, name: c.function.name, input: JSON.parse(c.function.arguments) as unknown } : { id: c.id, name: '', input: null }));
  }
  const client = new Anthropic({ apiKey: 'test', baseURL: 'http://127.0.0.1:9', maxRetries: 0, fetch });
  const msg = await client.messages.stream({ model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
  return msg.content.flatMap((b) => (b.type === 'tool_use' ? [{ id: b.id, name: b.name, input: b.input }] : []));
}

function relayed(from: string, to: 'openai' | 'anthropic', chunks: Uint8Array[]): Uint8Array {
  const r = new SseRelay({ from: from as 'openai', to });
  const out = chunks.map((c) => r.push(c).slice());
  out.push(r.flush().slice());
  r.dispose();
  return concat(out);
}

describe('a call whose arguments come before its start', () => {
  for (const { format, body } of upstreams()) {
    it(`${format}: each client gets the call with the name and id of its start, whole and at every cut`, async () => {
      const bytes = enc.encode(body);
      const m = new ModelStream({ format, raw: true });
      m.push(bytes);
      m.flush();
      const want = m.toolCalls.map((c) => ({ id: c.id, name: c.name, input: JSON.parse(c.arguments) as unknown }));
      expect(want.at(-1)).toEqual({ id: format === 'anthropic' ? 'toolu_B' : 'call_B', name: 'two', input: { a: 1 } });
      // (from Anthropic to Anthropic the events pass through as they came: its client reads the fragment before the start as it would from Anthropic)
      for (const to of format === 'anthropic' ? ['openai'] as const : ['openai', 'anthropic'] as const) {
        const whole = relayed(format, to, [bytes]);
        expect(await clientCalls(to, whole), `${format} to ${to}`).toEqual(want);
        for (let at = 1; at < bytes.length; at += 7) {
          expect(unclocked(dec.decode(relayed(format, to, [bytes.subarray(0, at), bytes.subarray(at)]))), `${format} to ${to}, cut at ${at}`).toBe(unclocked(dec.decode(whole)));
        }
      }
    });
  }

  it('to Anthropic, a call held past 64 KiB of arguments begins unnamed, its arguments whole', async () => {
    for (const { format, body } of upstreams(true).filter((u) => u.format !== 'anthropic')) {
      const bytes = enc.encode(body);
      const calls = await clientCalls('anthropic', relayed(format, 'anthropic', [bytes]));
      expect(calls.at(-1), format).toEqual({ id: expect.stringMatching(/^toolu_seam/), name: '', input: { a: 'x'.repeat(70 * 1024) } });
    }
  });
});
