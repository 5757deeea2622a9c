// A model's refusal: OpenAI Chat's `delta.refusal` fragments (with `content` null) and Responses'
// `response.refusal.delta` events. It is not the answer's text, and it is not lost: ModelStream
// keeps it apart (`refusal`, the report's `refusal`), ModelEventReader gives each event's, and a
// relay writes it for its client: to OpenAI as `refusal` deltas, to Anthropic as the text of the
// answer with the stop reason `refusal` (Anthropic's own for a refusal). Anthropic's own refusal
// may explain itself (`stop_details` in its `message_delta`): the explanation is the refusal's text,
// written to OpenAI's clients as their `refusal`. Read by the official clients, whole and at every cut.
import { describe, expect, it } from 'vitest';
import { ModelEventReader, ModelStream, SseRelay } from '../../bindings/index.js';
import { codec } from '../helpers/bedrock-fixtures.js';
import { concat, standardChunkings } from '../helpers/random.js';
import { anthropicFinal, openaiFinal, sameAtEveryCut } from '../helpers/sdk-clients.js';

const enc = new TextEncoder();
const sse = (type: string | null, o: unknown) => `${type === null ? '' : `event: ${type}\n`}data: ${JSON.stringify(o)}\n\n`;
const oa = (delta: unknown, finish: string | null = null) =>
  sse(null, { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
const rs = (o: Record<string, unknown>) => sse(o.type as string, o);

/** The refusal, in pieces (a quote, an escape, an accent, an emoji split across pieces as JSON escapes). */
const PIECES = ["I'm sorry, ", 'I can\'t help with "that" café ', '\u{1F6AB}', '.\nAsk me something else.'];
const REFUSAL = PIECES.join('');

const openaiRefusal = oa({ role: 'assistant', content: null, refusal: '' }) + PIECES.map((p) => oa({ refusal: p })).join('') + oa({}, 'stop')
  + sse(null, { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', choices: [], usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 } })
  + 'data: [DONE]\n\n';
const responsesRefusal = rs({ type: 'response.created', sequence_number: 0, response: { id: 'resp_1', object: 'response', status: 'in_progress', output: [] } })
  + rs({ type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: { id: 'msg_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] } })
  + rs({ type: 'response.content_part.added', sequence_number: 2, item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'refusal', refusal: '' } })
  + PIECES.map((p, i) => rs({ type: 'response.refusal.delta', sequence_number: 3 + i, item_id: 'msg_1', output_index: 0, content_index: 0, delta: p })).join('')
  + rs({ type: 'response.refusal.done', sequence_number: 7, item_id: 'msg_1', output_index: 0, content_index: 0, refusal: REFUSAL })
  + rs({ type: 'response.output_item.done', sequence_number: 8, output_index: 0, item: { id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal: REFUSAL }] } })
  + rs({ type: 'response.completed', sequence_number: 9, response: { id: 'resp_1', object: 'response', status: 'completed', output: [], usage: { input_tokens: 5, output_tokens: 9, total_tokens: 14 } } });
/** An answer whose every chunk carries `refusal: null`, as OpenAI's do. */
const openaiAnswer = oa({ role: 'assistant', content: '', refusal: null }) + ['Hel', 'lo ', 'wörld'].map((t) => oa({ content: t, refusal: null })).join('')
  + oa({}, 'stop') + 'data: [DONE]\n\n';

const UPSTREAMS = [
  { format: 'openai' as const, body: enc.encode(openaiRefusal) },
  { format: 'openai-responses' as const, body: enc.encode(responsesRefusal) },
];

describe('a refusal', () => {
  for (const { format, body } of UPSTREAMS) {
    for (const raw of [false, true]) {
      it(`${format}${raw ? ', raw' : ''}: ModelStream keeps it apart from the text, whatever the reads`, () => {
        for (const chunks of standardChunkings(body)) {
          const m = new ModelStream({ format, raw });
          let text = '';
          for (const c of chunks) text += m.push(c);
          text += m.flush();
          const why = `${chunks.length} reads`;
          expect(text, why).toBe('');
          expect(m.refusal, why).toBe(REFUSAL);
          const r = m.finish();
          expect(r.status, why).toBe('done');
          expect(r.refusal, why).toBe(REFUSAL);
          expect(r.text, why).toBe('');
          expect(r.finishReason, why).toBe(format === 'openai' ? 'stop' : 'completed');
        }
      });
    }
  }

  it('as it grows: after each event, the refusal so far', () => {
    const m = new ModelStream({ format: 'openai' });
    const events = openaiRefusal.split(/(?<=\n\n)/);
    let want = '';
    for (const [i, e] of events.entries()) {
      m.push(enc.encode(e));
      if (i >= 1 && i <= PIECES.length) want += PIECES[i - 1];
      expect(m.refusal).toBe(want);
    }
  });

  it('an answer whose chunks carry refusal: null has none, and its text', () => {
    for (const chunks of standardChunkings(enc.encode(openaiAnswer))) {
      const m = new ModelStream({ format: 'openai' });
      let text = '';
      for (const c of chunks) text += m.push(c);
      text += m.flush();
      expect(text).toBe('Hello wörld');
      expect(m.refusal).toBe('');
      expect('refusal' in m.finish()).toBe(false);
    }
  });

  it('ModelEventReader gives each event its piece', () => {
    const r = new ModelEventReader({ format: 'openai' });
    const got = openaiRefusal.split(/(?<=\n\n)/).map((e) => r.read(e.slice(6, -2)).refusal);
    expect(got).toEqual([undefined, ...PIECES, undefined, undefined, undefined]);
    const rr = new ModelEventReader({ format: 'openai-responses' });
    const pieces = responsesRefusal.split(/(?<=\n\n)/).map((e) => rr.read(e.slice(e.indexOf('data: ') + 6, -2)).refusal).filter((p) => p !== undefined);
    expect(pieces).toEqual(PIECES);
  });

  for (const { format, body, answer } of [...UPSTREAMS.map((u) => ({ ...u, answer: false })), { format: 'openai' as const, body: enc.encode(openaiAnswer), answer: true }]) {
    for (const to of ['openai', 'anthropic'] as const) {
      it(`relayed from ${format} to ${to}${answer ? ' (an answer with refusal: null)' : ''}: the official client reads it, at every cut`, async () => {
        const first = await sameAtEveryCut(body, () => new SseRelay({ from: format, to }), (b) => client(to, b));
        if (answer) expect(first).toEqual(to === 'openai' ? { text: 'Hello wörld', refusal: null, finish: 'stop' } : { text: 'Hello wörld', finish: 'end_turn' });
        else if (to === 'openai') expect(first).toEqual({ text: null, refusal: REFUSAL, finish: 'stop' }); // (the role chunk before a refusal has no content, as OpenAI's)
        else expect(first).toEqual({ text: REFUSAL, finish: 'refusal' });
      });
    }
  }
});

describe("Anthropic's refusal with stop_details", () => {
  const EXPLANATION = 'This request may enable "cyber" harm — café 🚫.';
  const DETAILS = { type: 'refusal', category: 'cyber', explanation: EXPLANATION };
  const body = (details: unknown) => enc.encode(sse('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude', stop_reason: null, stop_sequence: null, stop_details: null, usage: { input_tokens: 9, output_tokens: 1 } } })
    + sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })
    + sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Here is how to ' } })
    + sse('content_block_stop', { type: 'content_block_stop', index: 0 })
    + sse('message_delta', { type: 'message_delta', delta: { stop_reason: details === null ? 'end_turn' : 'refusal', stop_sequence: null, stop_details: details }, usage: { output_tokens: 5 } })
    + sse('message_stop', { type: 'message_stop' }));

  for (const raw of [false, true]) {
    it(`ModelStream keeps the explanation as the refusal, apart from the text, whatever the reads${raw ? ' (raw)' : ''}`, () => {
      for (const chunks of standardChunkings(body(DETAILS))) {
        const m = new ModelStream({ format: 'anthropic', raw });
        let text = '';
        for (const c of chunks) text += m.push(c);
        text += m.flush();
        expect([text, m.refusal, m.finishReason, m.status], `${chunks.length} reads`).toEqual(['Here is how to ', EXPLANATION, 'refusal', 'done']);
      }
    });
  }

  it('none when stop_details is null, or has no explanation', () => {
    for (const [details, reason] of [[null, 'end_turn'], [{ type: 'refusal', category: null, explanation: null }, 'refusal']] as const) {
      const m = new ModelStream({ format: 'anthropic' });
      expect(m.push(body(details)) + m.flush()).toBe('Here is how to ');
      expect([m.refusal, m.finishReason]).toEqual(['', reason]);
    }
  });

  it('ModelEventReader gives it in the message_delta\'s reading', () => {
    const r = new ModelEventReader({ format: 'anthropic' });
    const got = new TextDecoder().decode(body(DETAILS)).split(/(?<=\n\n)/).map((e) => r.read(e.slice(e.indexOf('data: ') + 6, -2)).refusal);
    expect(got).toEqual([undefined, undefined, undefined, undefined, EXPLANATION, undefined]);
  });

  it('only a refusal\'s: stop_details of another type is not one', () => {
    const m = new ModelStream({ format: 'anthropic' });
    m.push(body({ type: 'other', explanation: 'not a refusal' }));
    m.flush();
    expect([m.refusal, m.finishReason]).toEqual(['', 'refusal']);
  });

  /** The events of `bytes` as Claude on Bedrock sends them: each a chunk message, its data in base64. */
  const onBedrock = (bytes: Uint8Array) => concat(new TextDecoder().decode(bytes).split(/(?<=\n\n)/).map((e) => codec.encode({
    headers: { ':event-type': { type: 'string', value: 'chunk' }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: 'event' } },
    body: enc.encode(JSON.stringify({ bytes: Buffer.from(e.slice(e.indexOf('data: ') + 6, -2)).toString('base64') })),
  })));

  it('Claude on Bedrock to Anthropic: stop_details sent over several lines, or with no explanation, reach the SDK whole (one line of JSON each)', async () => {
    const pretty = new TextDecoder().decode(body(DETAILS)).replace(/data: (.*)\n/g, (line, json: string) => (json.includes('stop_details') ? `data: ${JSON.stringify(JSON.parse(json), null, 2).replace(/\n/g, '\r')}\n` : line));
    const unexplained = { type: 'refusal', category: 'bio', explanation: null };
    for (const [upstream, details, refusal] of [
      [onBedrock(enc.encode(pretty.replace(/\r/g, '\n'))), DETAILS, EXPLANATION], [onBedrock(body(unexplained)), unexplained, ''],
    ] as const) {
      expect(await sameAtEveryCut(upstream, () => new SseRelay({ from: 'bedrock-invoke', to: 'anthropic' }), async (b) => {
        expect(new TextDecoder().decode(b).split('\n').filter((l) => l.includes('stop_details'))).toHaveLength(1);
        const msg = await anthropicFinal(b);
        return [msg.content.map((c) => (c.type === 'text' ? c.text : c.type)), msg.stop_reason, msg.stop_details];
      })).toEqual([['Here is how to '], 'refusal', details]);
      const m = new ModelStream({ format: 'bedrock-invoke' });
      m.push(upstream);
      m.flush();
      expect([m.refusal, m.finishReason]).toEqual([refusal, 'refusal']);
      expect(await sameAtEveryCut(upstream, () => new SseRelay({ from: 'bedrock-invoke', to: 'openai' }), (b) => client('openai', b)))
        .toEqual({ text: 'Here is how to ', refusal: refusal === '' ? null : refusal, finish: 'content_filter' });
    }
  });

  for (const from of ['anthropic', 'bedrock-invoke'] as const) {
    const upstream = from === 'anthropic' ? body(DETAILS) : onBedrock(body(DETAILS));
    it(`from ${from}, relayed to OpenAI: openai-node has it as the message's refusal, with content_filter, at every cut`, async () => {
      expect(await sameAtEveryCut(upstream, () => new SseRelay({ from, to: 'openai' }), (b) => client('openai', b)))
        .toEqual({ text: 'Here is how to ', refusal: EXPLANATION, finish: 'content_filter' });
    });

    it(`from ${from}, relayed to Anthropic: the SDK has stop_details as sent, and the text alone, at every cut`, async () => {
      expect(await sameAtEveryCut(upstream, () => new SseRelay({ from, to: 'anthropic' }), async (b) => {
        if (from === 'anthropic') expect(b).toEqual(upstream); // (passed through byte for byte)
        const msg = await anthropicFinal(b);
        return [msg.content.map((c) => (c.type === 'text' ? c.text : c.type)), msg.stop_reason, msg.stop_details];
      })).toEqual([['Here is how to '], 'refusal', DETAILS]);
    });
  }
});

/** What the official client makes of the relay's bytes: the text, the refusal (OpenAI) and the finish reason. */
async function client(to: 'openai' | 'anthropic', body: Uint8Array): Promise<unknown> {
  if (to === 'openai') {
    const done = await openaiFinal(body);
    const msg = done.choices[0]!.message;
    return { text: msg.content, refusal: msg.refusal ?? null, finish: done.choices[0]!.finish_reason };
  }
  const msg = await anthropicFinal(body);
  return { text: msg.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), finish: msg.stop_reason };
}
