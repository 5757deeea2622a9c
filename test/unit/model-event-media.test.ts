// ModelEventReader says what ModelStream says of media and of the provider's own tool calls with
// their results: each event's media in its reading (whole, as sent), the provider's calls of the
// events read so far in `serverToolCalls`. Each event read as a string and as bytes, to the same
// exact readings, and to what a ModelStream has of the same body, read whole, at every two-piece
// split and a byte per read.
import { describe, expect, it } from 'vitest';
import { type Media, ModelEventReader, ModelStream, type ToolCall } from '../../bindings/index.js';
import { standardChunkings } from '../helpers/random.js';

const enc = new TextEncoder();

type Format = 'gemini' | 'openai-responses' | 'anthropic';

/** Each event's data (an SSE body's `data:` lines, one a event). */
const dataOf = (body: string): string[] => body.split(/\r?\n\r?\n/).filter((e) => e !== '').map((e) => e.split(/\r?\n/).find((l) => l.startsWith('data: '))!.slice(6));

/** Each event's media (undefined when none), and the calls after the last, read as strings and as bytes (the same both ways). */
function byEvent(format: Format, body: string) {
  const read = (asBytes: boolean) => {
    const r = new ModelEventReader({ format });
    const media = dataOf(body).map((d) => r.read(asBytes ? enc.encode(d) : d).media);
    return { media, toolCalls: r.toolCalls as ToolCall[], serverToolCalls: r.serverToolCalls as ToolCall[] };
  };
  const got = read(false);
  expect(read(true)).toEqual(got);
  return got;
}

/** What a ModelStream has of `body` at every standard chunking (each the same): its media and calls. */
function streamed(format: Format, body: string) {
  const bytes = enc.encode(body);
  let first: { media: Media[]; toolCalls: ToolCall[]; serverToolCalls: ToolCall[] } | undefined;
  for (const chunks of standardChunkings(bytes)) {
    const m = new ModelStream({ format });
    for (const c of chunks) m.push(c);
    m.flush();
    const got = { media: [...m.media], toolCalls: [...m.toolCalls], serverToolCalls: [...m.serverToolCalls] };
    if (first === undefined) first = got;
    else expect(got, `${chunks.length} reads`).toEqual(first);
  }
  return first!;
}

const gchunk = (parts: unknown[], extra = '') => `data: {"candidates":[{"content":{"parts":${JSON.stringify(parts)},"role":"model"}${extra}}],"modelVersion":"gemini-2.5-flash"}\r\n\r\n`;

describe('ModelEventReader: media', () => {
  it("gemini's inlineData: each event's parts, as sent (type, data, size, thought, signature), in order", () => {
    const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const WAV = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAgD4AAAB9AAACABAAZGF0YQAAAAA=';
    const body = gchunk([{ text: 'Hier ist dein Bild: ' }])
      + gchunk([{ inlineData: { mimeType: 'image/png', data: WAV.slice(0, 8) }, thought: true }])
      + gchunk([{ inlineData: { mimeType: 'image/png', data: PNG }, thoughtSignature: 'CiIBsig/+==' }, { inlineData: { mimeType: 'audio/wav', data: WAV } }])
      + gchunk([{ text: 'Fertig.' }], ',"finishReason":"STOP"');
    const MEDIA = [
      { mimeType: 'image/png', data: WAV.slice(0, 8), bytes: 8, thought: true },
      { mimeType: 'image/png', data: PNG, bytes: PNG.length, signature: 'CiIBsig/+==' },
      { mimeType: 'audio/wav', data: WAV, bytes: WAV.length },
    ];
    const got = byEvent('gemini', body);
    expect(got.media).toEqual([undefined, [MEDIA[0]], [MEDIA[1], MEDIA[2]], undefined]);
    expect(streamed('gemini', body).media).toEqual(MEDIA);
  });

  it("Responses' image_generation_call: the image at its item's end, the call the provider's", () => {
    const rs = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
    const body = rs({ type: 'response.created', sequence_number: 0, response: { id: 'resp_1', status: 'in_progress', output: [] } })
      + rs({ type: 'response.output_item.added', output_index: 0, item: { id: 'ig_1', type: 'image_generation_call', status: 'in_progress' } })
      + rs({ type: 'response.output_item.done', output_index: 0, item: { id: 'ig_1', type: 'image_generation_call', status: 'completed', revised_prompt: 'a cat', result: 'iVBORw0KGgo=', output_format: 'webp' } })
      + rs({ type: 'response.completed', sequence_number: 9, response: { id: 'resp_1', status: 'completed', output: [] } });
    const got = byEvent('openai-responses', body);
    expect(got).toEqual({
      media: [undefined, undefined, [{ mimeType: 'image/webp', data: 'iVBORw0KGgo=', bytes: 12 }], undefined],
      toolCalls: [],
      serverToolCalls: [{ index: 0, id: 'ig_1', name: 'image_generation_call', arguments: '{"revised_prompt":"a cat","output_format":"webp"}', done: true, valid: true }],
    });
    expect(streamed('openai-responses', body)).toEqual({ ...got, media: got.media[2] });
  });
});

describe("ModelEventReader: the provider's own calls, with their results (serverToolCalls)", () => {
  it("gemini's code execution: each code a call, its result once its event was read", () => {
    const body = gchunk([{ executableCode: { language: 'PYTHON', code: 'print(1 + 1)\n' } }])
      + gchunk([{ codeExecutionResult: { outcome: 'OUTCOME_OK', output: '2\n' } }, { text: 'Zwei.' }], ',"finishReason":"STOP"');
    const CALL = { index: 0, id: '', name: 'code_execution', arguments: '{"language":"PYTHON","code":"print(1 + 1)\\n"}', done: true, valid: true };
    const r = new ModelEventReader({ format: 'gemini' });
    const [code, result] = dataOf(body);
    expect(r.read(code).text).toBe('');
    expect(r.serverToolCalls).toEqual([CALL]);
    expect(r.read(result).text).toBe('Zwei.');
    const all = { ...CALL, result: '{"outcome":"OUTCOME_OK","output":"2\\n"}' };
    expect(r.serverToolCalls).toEqual([all]);
    expect(byEvent('gemini', body)).toEqual({ media: [undefined, undefined], toolCalls: [], serverToolCalls: [all] });
    expect(streamed('gemini', body)).toEqual({ media: [], toolCalls: [], serverToolCalls: [all] });
  });

  it("anthropic's server tool: its call, and its result block as sent", () => {
    const a = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
    const RESULT = { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: 'https://x.test/é', title: 'X', encrypted_content: 'Eqg', page_age: null }] };
    const body = a({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude', stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } })
      + a({ type: 'content_block_start', index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } })
      + a({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"query": "wetter"}' } })
      + a({ type: 'content_block_stop', index: 0 })
      + a({ type: 'content_block_start', index: 1, content_block: RESULT })
      + a({ type: 'content_block_stop', index: 1 })
      + a({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 20 } })
      + a({ type: 'message_stop' });
    const want = { media: Array<undefined>(8).fill(undefined), toolCalls: [], serverToolCalls: [{ index: 0, id: 'srvtoolu_1', name: 'web_search', arguments: '{"query": "wetter"}', done: true, valid: true, result: JSON.stringify(RESULT) }] };
    expect(byEvent('anthropic', body)).toEqual(want);
    expect(streamed('anthropic', body)).toEqual({ ...want, media: [] });
  });
});

describe("gemini: a fileData part (media at an address)", () => {
  const URI = 'https://generativelanguage.googleapis.com/v1beta/files/abc-123';
  const body = gchunk([{ text: 'Das Video: ' }])
    + gchunk([{ fileData: { mimeType: 'video/mp4', fileUri: URI }, thoughtSignature: 'CiIBsig/+==' }])
    + gchunk([{ fileData: { mimeType: 'image/png', fileUri: 'gs://bucket/é.png' } }, { text: 'Fertig.' }], ',"finishReason":"STOP"');
  const MEDIA = [
    { mimeType: 'video/mp4', data: '', bytes: URI.length, uri: URI, signature: 'CiIBsig/+==' },
    { mimeType: 'image/png', data: '', bytes: enc.encode('gs://bucket/é.png').length, uri: 'gs://bucket/é.png' },
  ];

  it('ModelStream: each part media with its uri and no data, in order; the text only the answer\'s', () => {
    const bytes = enc.encode(body);
    let first: unknown;
    for (const chunks of standardChunkings(bytes)) {
      const m = new ModelStream({ format: 'gemini' });
      let text = '';
      for (const c of chunks) text += m.push(c);
      text += m.flush();
      const got = { text, status: m.status, media: m.media, blocks: m.reasoningBlocks };
      if (first === undefined) first = got;
      else expect(got, `${chunks.length} reads`).toEqual(first);
    }
    expect(first).toEqual({ text: 'Das Video: Fertig.', status: 'done', media: MEDIA, blocks: [] });
  });

  it('an address counts toward maxMediaBytes: past it the part is kept without it (omitted)', () => {
    const m = new ModelStream({ format: 'gemini', maxMediaBytes: URI.length });
    m.push(enc.encode(body));
    m.flush();
    expect(m.media).toEqual([MEDIA[0], { mimeType: 'image/png', data: '', bytes: MEDIA[1].bytes, omitted: true }]);
  });

  it('ModelEventReader: the parts of their event', () => {
    expect(byEvent('gemini', body).media).toEqual([undefined, [MEDIA[0]], [MEDIA[1]]]);
  });
});
