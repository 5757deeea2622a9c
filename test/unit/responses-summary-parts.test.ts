// A Responses reasoning summary in parts: each `response.reasoning_summary_part.added` begins a
// part whose `response.reasoning_summary_text.delta` text is its own, so each part is a reasoning
// block of its own (its text does not run on from the last part's), whatever the reads, and a relay
// to Anthropic writes each as a thinking block.
import { describe, expect, it } from 'vitest';
import { ModelStream, SseRelay } from '../../bindings/index.js';
import { standardChunkings } from '../helpers/random.js';
import { anthropicFinal, sameAtEveryCut } from '../helpers/sdk-clients.js';

const enc = new TextEncoder();
const rs = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
const PARTS = [['**Plan**\n\n', 'Search first, é.'], ['**Check**\n\n', 'Then 🚀 verify.']];
const reasoning = { id: 'rs_1', type: 'reasoning', summary: [] };
const body = enc.encode(rs({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress', output: [] } })
  + rs({ type: 'response.output_item.added', output_index: 0, item: reasoning })
  + PARTS.map((part, i) => rs({ type: 'response.reasoning_summary_part.added', item_id: 'rs_1', output_index: 0, summary_index: i, part: { type: 'summary_text', text: '' } })
    + part.map((d) => rs({ type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', output_index: 0, summary_index: i, delta: d })).join('')
    + rs({ type: 'response.reasoning_summary_text.done', item_id: 'rs_1', output_index: 0, summary_index: i, text: part.join('') })
    + rs({ type: 'response.reasoning_summary_part.done', item_id: 'rs_1', output_index: 0, summary_index: i, part: { type: 'summary_text', text: part.join('') } })).join('')
  + rs({ type: 'response.output_item.done', output_index: 0, item: { ...reasoning, summary: PARTS.map((p) => ({ type: 'summary_text', text: p.join('') })) } })
  + rs({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'Done.' })
  + rs({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', output: [] } }));
const BLOCKS = PARTS.map((p) => ({ text: p.join('') }));

describe("a Responses reasoning summary's parts", () => {
  for (const raw of [false, true]) {
    it(`each a reasoning block of its own${raw ? ', raw' : ''}, whatever the reads`, () => {
      for (const chunks of standardChunkings(body)) {
        const m = new ModelStream({ format: 'openai-responses', raw });
        let got = '';
        for (const c of chunks) got += m.push(c);
        got += m.flush();
        expect(got).toBe('Done.');
        // (each with its item's id)
        expect(m.reasoningBlocks).toEqual(BLOCKS.map((b) => ({ ...b, id: 'rs_1' })));
        expect(m.reasoning).toBe(BLOCKS.map((b) => b.text).join(''));
      }
    });
  }

  it('relayed to Anthropic: a thinking block each, read so by the Anthropic SDK at every cut', async () => {
    const got = await sameAtEveryCut(body, () => new SseRelay({ from: 'openai-responses', to: 'anthropic' }), async (b) => {
      const msg = await anthropicFinal(b);
      return msg.content.map((c) => (c.type === 'thinking' ? { thinking: c.thinking } : c.type === 'text' ? { text: c.text } : c.type));
    });
    expect(got).toEqual([...BLOCKS.map((b) => ({ thinking: b.text })), { text: 'Done.' }]);
  });
});
