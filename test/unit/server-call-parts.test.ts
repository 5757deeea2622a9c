// The provider's own tools' calls as parts (ModelPartReader, ModelPartStream's): begun, grown,
// ended and given their result, in the events' order, the same however the stream is cut.
import { describe, expect, it } from 'vitest';
import { type ModelPart, ModelPartReader, ModelStream } from '../../bindings/index.js';
import { FIXTURES } from '../helpers/model-fixtures.js';
import { standardChunkings } from '../helpers/random.js';

const enc = new TextEncoder();

/** The parts of `chunks` read by a reader over a stream of `format`. */
function parts(format: 'anthropic' | 'openai-responses' | 'gemini', chunks: Uint8Array[]): ModelPart[] {
  const r = new ModelPartReader(new ModelStream({ format }));
  const out: ModelPart[] = [];
  for (const c of chunks) out.push(...r.push(c));
  out.push(...r.flush());
  return out;
}

/** The parts at every standard cutting, each equal to the whole read's; the server calls' parts of that read. */
function serverParts(format: 'anthropic' | 'openai-responses' | 'gemini', bytes: Uint8Array): ModelPart[] {
  const whole = parts(format, [bytes]);
  for (const chunks of standardChunkings(bytes)) expect(parts(format, chunks), `${chunks.length} reads`).toEqual(whole);
  return whole.filter((p) => p.type === 'server-tool-call');
}

describe('the provider\'s own calls as parts', () => {
  it('Anthropic: web search begun with {}, its input, ended, then its result', () => {
    const f = FIXTURES.find((x) => x.name === 'anthropic-server-tools-thinking')!;
    const call = { index: 0, id: 'srvtoolu_014', name: 'web_search' };
    const args = '{"query": "Zürich weather"}';
    const result = '{"type":"web_search_tool_result","tool_use_id":"srvtoolu_014","content":[{"type":"web_search_result","title":"Wetter","url":"https://example.com","encrypted_content":"Eq8B"}]}';
    expect(serverParts('anthropic', f.bytes)).toEqual([
      { type: 'server-tool-call', call: { ...call, arguments: '{}', done: false }, delta: '{}' },
      { type: 'server-tool-call', call: { ...call, arguments: args, done: false }, delta: args, replaces: true },
      { type: 'server-tool-call', call: { ...call, arguments: args, done: true, valid: true }, delta: '' },
      { type: 'server-tool-call', call: { ...call, arguments: args, done: true, valid: true, result }, delta: '' },
    ]);
  });

  it('Responses: a hosted web search begun, then said whole at its item\'s end', () => {
    const f = FIXTURES.find((x) => x.name === 'responses-hosted-and-calls')!;
    const call = { index: 0, id: 'ws_2', name: 'web_search_call' };
    const args = '{"action":{"type":"search","query":"jpy eur"}}';
    expect(serverParts('openai-responses', f.bytes)).toEqual([
      { type: 'server-tool-call', call: { ...call, arguments: '', done: false }, delta: '' },
      { type: 'server-tool-call', call: { ...call, arguments: args, done: true, valid: true }, delta: args },
    ]);
  });

  it('Gemini: code execution, its code whole, then its result; between the text around it', () => {
    const chunk = (parts: unknown[], finish?: string) => `data: ${JSON.stringify({ candidates: [{ content: { parts, role: 'model' }, index: 0, ...(finish ? { finishReason: finish } : {}) }] })}\r\n\r\n`;
    const code = { language: 'PYTHON', code: 'print(6*7)' };
    const outcome = { outcome: 'OUTCOME_OK', output: '42\n' };
    const body = enc.encode(chunk([{ text: 'Let me compute. ' }]) + chunk([{ executableCode: code }]) + chunk([{ codeExecutionResult: outcome }]) + chunk([{ text: 'It is 42.' }], 'STOP'));
    const whole = parts('gemini', [body]);
    for (const chunks of standardChunkings(body)) expect(parts('gemini', chunks)).toEqual(whole);
    const call = { index: 0, id: '', name: 'code_execution', arguments: JSON.stringify(code), done: true, valid: true };
    expect(whole.filter((p) => p.type !== 'finish')).toEqual([
      { type: 'text', text: 'Let me compute.' }, // (its last character held back until the text after it)
      { type: 'server-tool-call', call, delta: JSON.stringify(code) },
      { type: 'server-tool-call', call: { ...call, result: JSON.stringify(outcome) }, delta: '' },
      { type: 'text', text: ' It is 42.' }, // (the rest at the completion, in the same chunk)
    ]);
  });

  it('a result said again for the same call, of the same length, is a part too', () => {
    // (a second result block for one call replaces the first: a part that told only a new length missed it)
    const ev = (type: string, d: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...d })}\n\n`;
    const result = (text: string) => ({ type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', title: text, url: 'https://example.com' }] });
    const body = enc.encode([
      ev('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], usage: { input_tokens: 1, output_tokens: 1 } } }),
      ev('content_block_start', { index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } } }),
      ev('content_block_stop', { index: 0 }),
      ev('content_block_start', { index: 1, content_block: result('First') }),
      ev('content_block_stop', { index: 1 }),
      ev('content_block_start', { index: 2, content_block: result('Other') }),
      ev('content_block_stop', { index: 2 }),
      ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }),
      ev('message_stop', {}),
    ].join(''));
    const said = serverParts('anthropic', body).map((p) => (p.type === 'server-tool-call' ? p.call.result : undefined));
    expect(said).toEqual([undefined, undefined, JSON.stringify(result('First')), JSON.stringify(result('Other'))]);
  });

  it('a stream with none gives none, and a client call stays a tool-call part', () => {
    const f = FIXTURES.find((x) => x.name === 'anthropic-tool-use')!;
    const got = parts('anthropic', [f.bytes]);
    expect(got.some((p) => p.type === 'server-tool-call')).toBe(false);
    expect(got.some((p) => p.type === 'tool-call')).toBe(true);
  });
});

describe('Responses: code interpreter and image generation, as their streams say them', () => {
  // (the events as the API streams them: the code in response.code_interpreter_call_code.delta
  // fragments and .done, the image's previews in response.image_generation_call.partial_image
  // events (with partial_images asked for), each whole; the items whole at their end)
  const rs = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
  const CODE = 'import math\nprint(math.factorial(20))';
  const CI = { id: 'ci_1', type: 'code_interpreter_call', status: 'completed', container_id: 'cntr_1', code: CODE, outputs: [{ type: 'logs', logs: '2432902008176640000\n' }] };
  const PREVIEW = ['UElYRUxTLTA=', 'UElYRUxTLTE='];
  const IMAGE = 'UklGRiQAAABXRUJQVlA4IBgAAAAwAQCdASoBAAEAAQAcJaQAA3AA/v3AgAA=';
  const IG = { id: 'ig_1', type: 'image_generation_call', status: 'completed', revised_prompt: 'a red fox', background: 'opaque', output_format: 'webp', quality: 'low', size: '1024x1024', result: IMAGE };
  const at = (id: string, output_index: number) => ({ item_id: id, output_index });
  const body = rs({ type: 'response.created', sequence_number: 0, response: { id: 'resp_1', object: 'response', status: 'in_progress', output: [] } })
    + rs({ type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: { id: 'ci_1', type: 'code_interpreter_call', status: 'in_progress', container_id: 'cntr_1', code: '', outputs: null } })
    + rs({ type: 'response.code_interpreter_call.in_progress', sequence_number: 2, ...at('ci_1', 0) })
    + rs({ type: 'response.code_interpreter_call_code.delta', sequence_number: 3, ...at('ci_1', 0), delta: 'import math\n' })
    + rs({ type: 'response.code_interpreter_call_code.delta', sequence_number: 4, ...at('ci_1', 0), delta: 'print(math.factorial(20))' })
    + rs({ type: 'response.code_interpreter_call_code.done', sequence_number: 5, ...at('ci_1', 0), code: CODE })
    + rs({ type: 'response.code_interpreter_call.interpreting', sequence_number: 6, ...at('ci_1', 0) })
    + rs({ type: 'response.code_interpreter_call.completed', sequence_number: 7, ...at('ci_1', 0) })
    + rs({ type: 'response.output_item.done', sequence_number: 8, output_index: 0, item: CI })
    + rs({ type: 'response.output_item.added', sequence_number: 9, output_index: 1, item: { id: 'ig_1', type: 'image_generation_call', status: 'in_progress' } })
    + rs({ type: 'response.image_generation_call.in_progress', sequence_number: 10, ...at('ig_1', 1) })
    + rs({ type: 'response.image_generation_call.generating', sequence_number: 11, ...at('ig_1', 1) })
    + PREVIEW.map((b64, i) => rs({ type: 'response.image_generation_call.partial_image', sequence_number: 12 + i, ...at('ig_1', 1), partial_image_index: i, partial_image_b64: b64 })).join('')
    + rs({ type: 'response.image_generation_call.completed', sequence_number: 14, ...at('ig_1', 1) })
    + rs({ type: 'response.output_item.done', sequence_number: 15, output_index: 1, item: IG })
    + rs({ type: 'response.output_item.added', sequence_number: 16, output_index: 2, item: { id: 'msg_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] } })
    + rs({ type: 'response.output_text.delta', sequence_number: 17, ...at('msg_1', 2), content_index: 0, delta: '20! = 2432902008176640000.' })
    + rs({ type: 'response.completed', sequence_number: 18, response: { id: 'resp_1', object: 'response', status: 'completed', output: [] } });
  const CI_ARGS = JSON.stringify({ container_id: 'cntr_1', code: CODE, outputs: CI.outputs });
  const IG_ARGS = '{"revised_prompt":"a red fox","background":"opaque","output_format":"webp","quality":"low","size":"1024x1024"}';

  it('the code is the call\'s arguments at its item\'s end (its fragments before are the same code); the final image is media, its previews none', () => {
    const bytes = enc.encode(body);
    const read = (chunks: Uint8Array[]) => {
      const r = new ModelPartReader(new ModelStream({ format: 'openai-responses' }));
      const out: ModelPart[] = [];
      for (const c of chunks) out.push(...r.push(c));
      out.push(...r.flush());
      return out;
    };
    const whole = read([bytes]);
    for (const chunks of standardChunkings(bytes)) expect(read(chunks), `${chunks.length} reads`).toEqual(whole);
    const ci = { index: 0, id: 'ci_1', name: 'code_interpreter_call' };
    const ig = { index: 1, id: 'ig_1', name: 'image_generation_call' };
    expect(whole.filter((p) => p.type !== 'finish')).toEqual([
      { type: 'server-tool-call', call: { ...ci, arguments: '', done: false }, delta: '' },
      { type: 'server-tool-call', call: { ...ci, arguments: CI_ARGS, done: true, valid: true }, delta: CI_ARGS },
      { type: 'server-tool-call', call: { ...ig, arguments: '', done: false }, delta: '' },
      { type: 'server-tool-call', call: { ...ig, arguments: IG_ARGS, done: true, valid: true }, delta: IG_ARGS },
      { type: 'media', media: { mimeType: 'image/webp', data: IMAGE, bytes: IMAGE.length } },
      { type: 'text', text: '20! = 2432902008176640000' }, // (its last character held back until the completion)
      { type: 'text', text: '.' },
    ]);
    expect(JSON.parse(CI_ARGS).code).toBe(CODE);
    const m = new ModelStream({ format: 'openai-responses' });
    m.push(bytes);
    m.flush();
    expect(m.media).toEqual([{ mimeType: 'image/webp', data: IMAGE, bytes: IMAGE.length }]);
    expect(m.serverToolCalls.map((c) => [c.id, c.arguments])).toEqual([['ci_1', CI_ARGS], ['ig_1', IG_ARGS]]);
  });
});
