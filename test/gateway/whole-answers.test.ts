// A whole answer (`stream: false`) from an upstream of another API than the client's carries what
// the streamed answer to the same upstream bytes carries (reasoning, its signatures and redacted
// blocks, text, calls, the sources cited): the gateway asked twice, once with `stream: true` and
// once with `stream: false`, and the whole answer must equal what the official client makes of
// the stream (openai-node's finalChatCompletion(), the Anthropic SDK's finalMessage()), for each
// upstream format with reasoning or citations and both client APIs. Set aside: the ids and times
// each makes for itself.
// What the clients' accumulators keep, found by running them:
// - the Anthropic SDK keeps each block as its content_block_start wrote it with its deltas
//   applied: a thinking block with no signature_delta has no `signature` member at all (the relay
//   writes none for reasoning that came without one: an OpenAI-compatible upstream's, Ollama's,
//   Responses'), a redacted_thinking block its `data`; a signature_delta replaces the signature
//   (every provider here sends a block's signature in one piece). Its `parsed_output` is its own.
// - openai-node keeps `reasoning_content` on the message but assigns each delta's value over the
//   last (it is not a field it joins), so its final holds the last piece only. The whole answer
//   holds all of it, as the stream's deltas joined: that field is checked against the raw stream.
//   Its `parsed`, `refusal: null` and `logprobs: null` are its own; its content of a message of
//   calls alone is the relay's role chunk's '' where OpenAI's whole answer (and the gateway's) has null.
// The fixtures' parts come in the order every format's streams have them: reasoning, text, calls.
// Parts that interleave (text after a call, text between two pieces of one reasoning block) are a
// block per run in the stream and a block per kind in the whole answer (the library's wholeAnswer, which the gateway writes).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FIXTURES } from '../helpers/model-fixtures.js';
import { BEDROCK_FIXTURES, BEDROCK_THINKING_CALL, encodeMessage } from '../helpers/bedrock-fixtures.js';
import { anthropicFinal, openaiFinal } from '../helpers/sdk-clients.js';
import { SEED, cut, randomCuts, rng } from '../helpers/random.js';
import { metricsAt, post, startGateway, withAwsEnv, type Running } from './support.js';

type Dialect = 'openai' | 'anthropic';
interface Case { name: string; format: string; bytes: Uint8Array; contentType?: string }

const fixture = (name: string): Case => {
  const f = FIXTURES.find((x) => x.name === name) ?? BEDROCK_FIXTURES.find((x) => x.name === name);
  if (f === undefined) throw new Error(`no fixture ${name}`);
  return 'format' in f ? { name, format: f.format, bytes: f.bytes }
    : { name, format: 'bedrock', bytes: f.bytes, contentType: 'application/vnd.amazon.eventstream' };
};

// Bedrock (Claude through ConverseStream): a signed thinking block, a redacted one, the text, then a call.
const bedrockThinkingCall: Case = {
  name: 'bedrock-thinking-call', format: 'bedrock', contentType: 'application/vnd.amazon.eventstream',
  bytes: Buffer.concat(BEDROCK_THINKING_CALL.map((m) => encodeMessage(m))),
};

// Answers that cite their sources (as test/unit/citations.test.ts's streams): to an OpenAI client
// the sources at an address are `url_citation` annotations, each address once, with its title ("" when
// the provider gave none) and the whole content's span; a source with no address (a document's
// characters, a file) is none.
const sse = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
const textOf = (s: string): Uint8Array => new TextEncoder().encode(s);
const WEB = { type: 'web_search_result_location', cited_text: 'Zürich is "the largest" city… 🚀', url: 'https://example.org/z?a=1&b=2', title: 'Zürich', encrypted_index: 'Eo8BCioIAhgBIiQ=' };
const block = (index: number, start: Record<string, unknown>, deltas: Record<string, unknown>[]) => sse({ type: 'content_block_start', index, content_block: start })
  + deltas.map((delta) => sse({ type: 'content_block_delta', index, delta })).join('') + sse({ type: 'content_block_stop', index });
const anthropicCiting: Case = {
  name: 'anthropic-web-search-citing', format: 'anthropic',
  bytes: textOf(sse({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude', stop_reason: null, stop_sequence: null, usage: { input_tokens: 9, output_tokens: 1 } } })
    + block(0, { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }, [{ type: 'input_json_delta', partial_json: '{"query":"zürich"}' }])
    + block(1, { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: WEB.url, title: WEB.title, encrypted_content: 'x', page_age: null }] }, [])
    + block(2, { type: 'text', text: '' }, [{ type: 'text_delta', text: 'Per the sources, ' }])
    + block(3, { type: 'text', text: '', citations: [] }, [{ type: 'citations_delta', citation: WEB }, { type: 'text_delta', text: 'Zürich is the largest.' }])
    + block(4, { type: 'text', text: '', citations: [] }, [{ type: 'citations_delta', citation: { type: 'char_location', cited_text: 'Green.', document_index: 0, document_title: 'Facts', start_char_index: 0, end_char_index: 6 } }, { type: 'text_delta', text: ' Grass is green.' }])
    // (the same address again, another passage of it: one annotation)
    + block(5, { type: 'text', text: '', citations: [] }, [{ type: 'citations_delta', citation: { ...WEB, cited_text: 'And more.', title: 'Zürich again' } }, { type: 'text_delta', text: ' More.' }])
    + block(6, { type: 'text', text: '', citations: [] }, [{ type: 'citations_delta', citation: { type: 'search_result_location', cited_text: 'So.', source: 'https://docs.example/x', title: 'X', search_result_index: 0, start_block_index: 0, end_block_index: 0 } }, { type: 'text_delta', text: ' So.' }])
    + sse({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 30 } })
    + sse({ type: 'message_stop' })),
};
const responsesCiting: Case = {
  name: 'responses-annotations', format: 'openai-responses',
  bytes: textOf(sse({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress', output: [] } })
    + sse({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'See café, and notes.' })
    + sse({ type: 'response.output_text.annotation.added', item_id: 'msg_1', output_index: 0, content_index: 0, annotation_index: 0, annotation: { type: 'url_citation', url: 'https://example.org/é', title: 'Café "B"', start_index: 4, end_index: 9 } })
    + sse({ type: 'response.output_text.annotation.added', item_id: 'msg_1', output_index: 0, content_index: 0, annotation_index: 1, annotation: { type: 'file_citation', file_id: 'file-1', filename: 'notes.pdf', index: 12 } })
    + sse({ type: 'response.output_text.annotation.added', item_id: 'msg_1', output_index: 0, content_index: 0, annotation_index: 2, annotation: { type: 'url_citation', url: 'https://example.org/é', title: 'Café "B"', start_index: 14, end_index: 19 } })
    + sse({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', output: [], usage: { input_tokens: 7, output_tokens: 5 } } })),
};
const gem = (o: unknown) => `data: ${JSON.stringify(o)}\r\n\r\n`;
const cand = (text: string, more: Record<string, unknown> = {}) => ({ content: { parts: [{ text }], role: 'model' }, index: 0, ...more });
const SOURCE = { startIndex: 0, endIndex: 10, uri: 'https://x.org/a', license: '' };
const geminiCiting: Case = {
  name: 'gemini-grounded', format: 'gemini',
  bytes: textOf(gem({ candidates: [cand('Zürich ')], modelVersion: 'gemini-2.5-flash' })
    + gem({ candidates: [cand('is large.', { citationMetadata: { citationSources: [SOURCE] } })], modelVersion: 'gemini-2.5-flash' })
    + gem({ candidates: [cand(' Done.', {
      finishReason: 'STOP', citationMetadata: { citationSources: [SOURCE, { ...SOURCE, startIndex: 20, endIndex: 30 }] },
      groundingMetadata: {
        webSearchQueries: ['zürich size'],
        groundingChunks: [{ web: { uri: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbF9', title: 'example.org' } }, { web: { uri: 'https://untitled.example/p' } }],
        groundingSupports: [{ segment: { startIndex: 0, endIndex: 16, text: 'Zürich is large.' }, groundingChunkIndices: [0], confidenceScores: [0.9] }],
      },
    })], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 6, totalTokenCount: 11 } })),
};

/** Upstream streams with reasoning (and text, calls, signatures, redacted blocks), or that cite sources, each to be answered in both client APIs. */
const CASES: Case[] = [
  fixture('openai-reasoning-content'), fixture('openai-reasoning-keepalive'), fixture('openai-mistral-arrays'),
  fixture('anthropic-thinking-crlf'), fixture('anthropic-server-tools-thinking'), anthropicCiting,
  fixture('responses-hosted-and-calls'), responsesCiting,
  fixture('ollama-parallel-calls'),
  fixture('gemini-thinking'), fixture('gemini-function-calls'), geminiCiting,
  fixture('bedrock-reasoning'), bedrockThinkingCall,
];

/**
 * ids and times the gateway and the relay make for themselves: the answer's `ID`, its time 0, a
 * call's id `call_ID_<n>` / `toolu_ID_<n>`. (The model, the one the request named, is compared:
 * the stream names it as the whole answer does.)
 */
function normalized(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v), (k, x: unknown) => (k === 'created' ? 0
    : k === 'id' && typeof x === 'string' && /^(msg_|chatcmpl-)/.test(x) ? 'ID'
      : typeof x === 'string' ? x.replace(/^(call|toolu)_(?:seam|gw)\w*_(\d+)$/, '$1_ID_$2') : x));
}

/** The stream's `delta.reasoning_content` pieces joined, as written ('' for none). */
function streamedReasoning(wire: string): string {
  let out = '';
  for (const line of wire.split('\n')) {
    if (!line.startsWith('data: {')) continue;
    const r = (JSON.parse(line.slice(6)) as { choices?: { delta?: { reasoning_content?: string } }[] }).choices?.[0]?.delta?.reasoning_content;
    if (typeof r === 'string') out += r;
  }
  return out;
}

/** What the client makes of the streamed answer, in the whole answer's terms (see the head of this file). */
async function finalOfStream(dialect: Dialect, wire: Buffer): Promise<unknown> {
  if (dialect === 'anthropic') {
    const { parsed_output: _parsed, ...message } = await anthropicFinal(wire);
    return message;
  }
  const done = await openaiFinal(wire);
  const reasoning = streamedReasoning(wire.toString('utf8'));
  const { choices, ...rest } = done;
  return {
    ...rest,
    choices: choices.map(({ logprobs: _logprobs, message: read, ...choice }) => {
      const { parsed: _parsed, refusal, reasoning_content: kept, content, ...message } = read as typeof read & { reasoning_content?: string };
      // (openai-node keeps the stream's last piece of reasoning_content: a piece at the end of it all)
      expect([kept === undefined, reasoning.endsWith(kept ?? '')]).toEqual([reasoning === '', true]);
      const whole: Record<string, unknown> = {
        ...message,
        // (the relay's role chunk begins the content at '', as OpenAI's streams do; OpenAI's whole
        // answer of calls alone has none: null)
        content: content === '' && message.tool_calls !== undefined ? null : content,
      };
      if (refusal !== null) whole.refusal = refusal;
      if (reasoning !== '') whole.reasoning_content = reasoning;
      return { ...choice, message: whole };
    }),
  };
}

const PATHS: Record<Dialect, string> = { openai: '/v1/chat/completions', anthropic: '/v1/messages' };

describe.each(['openai', 'anthropic', 'openai-responses', 'ollama', 'gemini', 'bedrock'].map((f) => [f] as const))('a whole answer from a %s upstream equals the client\'s reading of the streamed one', (format) => {
  withAwsEnv();
  let g: Running;
  beforeAll(async () => {
    g = await startGateway({ upstreamFormat: format as never });
  });
  afterAll(async () => {
    await g.close();
  });

  const cases = CASES.filter((c) => c.format === format).flatMap((c) => (['openai', 'anthropic'] as const).filter((d) => d !== format).map((d) => [c.name, d, c] as const));
  test.each(cases)('%s to an %s client', async (name, dialect, c) => {
    const ask = async (stream: boolean, round: number) => {
      g.up.scripts.set(name, { contentType: c.contentType, pieces: cut(c.bytes, randomCuts(c.bytes, rng(SEED + c.bytes.length + round), 24)) });
      const res = await post(g.url, { model: name, max_tokens: 64, stream, messages: [{ role: 'user', content: 'x' }] }, PATHS[dialect], dialect === 'anthropic' ? { 'anthropic-version': '2023-06-01' } : {});
      expect(res.status, res.body.toString()).toBe(200);
      return res.body;
    };
    const streamed = await finalOfStream(dialect, await ask(true, 0));
    const whole = JSON.parse((await ask(false, 1)).toString('utf8')) as unknown;
    expect(normalized(whole)).toEqual(normalized(streamed));
  });
});

describe('whole answers with reasoning, exactly', () => {
  withAwsEnv();
  const ask = async (g: Running, c: Case, dialect: Dialect) => {
    g.up.scripts.set(c.name, { contentType: c.contentType, pieces: [c.bytes] });
    const res = await post(g.url, { model: c.name, max_tokens: 64, messages: [{ role: 'user', content: 'x' }] }, PATHS[dialect]);
    expect(res.status, res.body.toString()).toBe(200);
    return normalized(JSON.parse(res.body.toString('utf8')));
  };

  test('bedrock (a signed thinking block, a redacted one, text, a call): to an OpenAI client its reasoning_content, to an Anthropic client its blocks', async () => {
    const g = await startGateway({ upstreamFormat: 'bedrock' });
    try {
      expect(await ask(g, bedrockThinkingCall, 'openai')).toEqual({
        id: 'ID', object: 'chat.completion', created: 0, model: 'bedrock-thinking-call',
        choices: [{
          index: 0, finish_reason: 'tool_calls',
          message: {
            role: 'assistant', content: 'Je regarde. 🌦', reasoning_content: 'Paris: look it up, "now".',
            tool_calls: [{ id: 'tooluse_W1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
          },
        }],
        usage: { prompt_tokens: 48, completion_tokens: 22, total_tokens: 70, prompt_tokens_details: { cached_tokens: 8 } },
      });
      expect(await ask(g, bedrockThinkingCall, 'anthropic')).toEqual({
        id: 'ID', type: 'message', role: 'assistant', model: 'bedrock-thinking-call',
        content: [
          { type: 'thinking', thinking: 'Paris: look it up, "now".', signature: 'ErUBCkYIBRgCIkCsig+/=' },
          { type: 'redacted_thinking', data: 'UmVkYWN0ZWQ=' },
          { type: 'text', text: 'Je regarde. 🌦' },
          { type: 'tool_use', id: 'tooluse_W1', name: 'weather', input: { city: 'Paris' } },
        ],
        stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 40, output_tokens: 22, cache_read_input_tokens: 8 },
      });
    } finally {
      await g.close();
    }
  });

  test('openai (DeepSeek\'s reasoning_content) to an Anthropic client: a thinking block with no signature, as the relay writes it', async () => {
    const g = await startGateway({ upstreamFormat: 'openai' });
    try {
      const answer = await ask(g, fixture('openai-reasoning-content'), 'anthropic') as { content: unknown };
      expect(answer.content).toEqual([
        { type: 'thinking', thinking: '用户问的是 1+1。\n答案显然是 2，但要解释“为什么”。' },
        { type: 'text', text: '1 + 1 = 2。\n\n原因：在皮亚诺公理中，2 被定义为 1 的后继。✅' },
      ]);
    } finally {
      await g.close();
    }
  });
});

describe('the sources a whole answer cites, exactly', () => {
  // (each spans the whole content: from 0 to its characters, its title "" when the provider gave none)
  const cited: [Case, [string, string][]][] = [
    [anthropicCiting, [['https://example.org/z?a=1&b=2', 'Zürich'], ['https://docs.example/x', 'X']]],
    [responsesCiting, [['https://example.org/é', 'Café "B"']]],
    [geminiCiting, [
      ['https://x.org/a', ''], ['https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbF9', 'example.org'], ['https://untitled.example/p', ''],
    ]],
  ];
  test.each(cited.map(([c, a]) => [c.format, c, a] as const))('%s: to an OpenAI client its annotations, each address once, in the streamed answer\'s order; to an Anthropic client none', async (format, c, sources) => {
    const g = await startGateway({ upstreamFormat: format as never });
    try {
      g.up.scripts.set(c.name, { pieces: [c.bytes] });
      const whole = async (path: string) => {
        const res = await post(g.url, { model: c.name, max_tokens: 64, messages: [{ role: 'user', content: 'x' }] }, path);
        expect(res.status, res.body.toString()).toBe(200);
        return JSON.parse(res.body.toString('utf8')) as { choices: { message: { content: string; annotations?: unknown } }[]; content: unknown[] };
      };
      const message = (await whole('/v1/chat/completions')).choices[0].message;
      const annotations = sources.map(([url, title]) => ({ type: 'url_citation', url_citation: { end_index: [...message.content].length, start_index: 0, title, url } }));
      expect(message.annotations).toEqual(annotations);
      // (the streamed answer's one chunk of them, right before its finish)
      const wire = (await post(g.url, { model: c.name, stream: true, messages: [{ role: 'user', content: 'x' }] })).body.toString('utf8');
      const said = wire.split('\n').filter((l) => l.includes('"annotations"')).map((l) => (JSON.parse(l.slice(6)) as { choices: { delta: { annotations: unknown } }[] }).choices[0].delta.annotations);
      expect(said).toEqual([annotations]);
      if (format !== 'anthropic') expect(JSON.stringify((await whole('/v1/messages')).content)).not.toMatch(/citation|annotation/);
    } finally {
      await g.close();
    }
  });

  test('an answer that cites no address (a document\'s characters alone): no annotations', async () => {
    const g = await startGateway({ upstreamFormat: 'anthropic' });
    try {
      const body = sse({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude', stop_reason: null, stop_sequence: null, usage: { input_tokens: 9, output_tokens: 1 } } })
        + block(0, { type: 'text', text: '', citations: [] }, [{ type: 'citations_delta', citation: { type: 'char_location', cited_text: 'Green.', document_index: 0, document_title: 'Facts', start_char_index: 0, end_char_index: 6 } }, { type: 'text_delta', text: 'Grass is green.' }])
        + sse({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 3 } }) + sse({ type: 'message_stop' });
      g.up.scripts.set('doc', { pieces: [textOf(body)] });
      const res = await post(g.url, { model: 'doc', messages: [{ role: 'user', content: 'x' }] });
      expect((JSON.parse(res.body.toString('utf8')) as { choices: { message: unknown }[] }).choices[0].message).toEqual({ role: 'assistant', content: 'Grass is green.' });
    } finally {
      await g.close();
    }
  });
});

describe('the reasoning and the calls\' arguments of a whole answer are bounded as its text is (maxResponseBytes)', () => {
  test('tool calls\' arguments past maxResponseBytes: a 502 naming the limit, counted as the response_bytes limit (they were held up to the library\'s 16 MiB)', async () => {
    const g = await startGateway({ upstreamFormat: 'openai', maxResponseBytes: 64 });
    try {
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      const first = chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'write', arguments: `{"text":"${'x'.repeat(40)}` } }] });
      const body = first + chunk({ tool_calls: [{ index: 0, function: { arguments: `${'y'.repeat(40)}"}` } }] }) + chunk({}, 'tool_calls') + 'data: [DONE]\n\n';
      g.up.scripts.set('long', { pieces: [Buffer.from(body)] });
      const res = await post(g.url, { model: 'long', max_tokens: 9, messages: [{ role: 'user', content: 'x' }] }, '/v1/messages');
      const at = Buffer.byteLength(first) + 'data: '.length; // (the offset of the second event's data)
      expect([res.status, JSON.parse(res.body.toString())]).toEqual([502, { type: 'error', error: { type: 'api_error',
        message: `The tool-call arguments in the event at byte offset ${at} would pass maxArgumentBytes (64 bytes, 52 kept); nothing past the limit was kept` } }]);
      const m = await metricsAt(`${g.url}/metrics`);
      expect([m.get('llm_limit_errors_total{limit="response_bytes"}'), m.get('llm_streams_total{status="limit"}')]).toEqual([1, 1]);
    } finally {
      await g.close();
    }
  });

  test('reasoning past maxResponseBytes: a 502 naming the limit, counted as the response_bytes limit', async () => {
    const g = await startGateway({ upstreamFormat: 'openai', maxResponseBytes: 64 });
    try {
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      const first = chunk({ role: 'assistant', reasoning_content: 'x'.repeat(40) });
      const body = first + chunk({ reasoning_content: 'y'.repeat(40) }) + chunk({ content: 'ok' }, 'stop') + 'data: [DONE]\n\n';
      g.up.scripts.set('long', { pieces: [Buffer.from(body)] });
      const res = await post(g.url, { model: 'long', max_tokens: 9, messages: [{ role: 'user', content: 'x' }] }, '/v1/messages');
      const at = Buffer.byteLength(first) + 'data: '.length; // (the offset of the second event's data)
      expect([res.status, JSON.parse(res.body.toString())]).toEqual([502, { type: 'error', error: { type: 'api_error',
        message: `The reasoning (or refusal, or citations) in the event at byte offset ${at} would pass maxReasoningBytes (64 bytes, 40 kept); nothing past the limit was kept` } }]);
      const m = await metricsAt(`${g.url}/metrics`);
      expect([m.get('llm_limit_errors_total{limit="response_bytes"}'), m.get('llm_streams_total{status="limit"}')]).toEqual([1, 1]);
    } finally {
      await g.close();
    }
  });
});

describe('a whole answer read from a stream is counted in UTF-8 bytes, whatever its script', () => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  // 30 bytes each: 30 ASCII letters, 10 CJK characters (3 bytes, 1 UTF-16 unit each), 7 emoji (4 bytes, 2 units) and 2 letters
  const TEXTS = ['a'.repeat(30), '漢'.repeat(10), `${'😀'.repeat(7)}ab`];
  const ask = (g: Running, model: string) => post(g.url, { model, max_tokens: 9, messages: [{ role: 'user', content: 'x' }] }, '/v1/messages');

  test('maxResponseBytes: the text, the reasoning and the arguments of 30 bytes fit a limit of 30 and not of 29, in every script', async () => {
    const got: string[] = [];
    for (const limit of [30, 29]) {
      const g = await startGateway({ upstreamFormat: 'openai', maxResponseBytes: limit });
      try {
        for (const [i, s] of TEXTS.entries()) {
          // (a JSON string, counted as the event has it: its quotes escaped, \" two bytes each; 30 bytes so)
          const args = JSON.stringify(['a'.repeat(26), `${'漢'.repeat(8)}aa`, `${'😀'.repeat(6)}aa`][i]);
          expect(Buffer.byteLength(JSON.stringify(args)) - 2).toBe(30);
          g.up.scripts.set(`text${i}`, { pieces: [Buffer.from(chunk({ role: 'assistant', content: s }) + chunk({}, 'stop') + 'data: [DONE]\n\n')] });
          g.up.scripts.set(`reasoning${i}`, { pieces: [Buffer.from(chunk({ role: 'assistant', reasoning_content: s }) + chunk({ content: 'ok' }, 'stop') + 'data: [DONE]\n\n')] });
          g.up.scripts.set(`args${i}`, { pieces: [Buffer.from(chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: args } }] })
            + chunk({}, 'tool_calls') + 'data: [DONE]\n\n')] });
          for (const kind of ['text', 'reasoning', 'args']) {
            const r = await ask(g, `${kind}${i}`);
            const body = JSON.parse(r.body.toString()) as { content?: { type: string }[]; error?: { message: string } };
            got.push(`${limit} ${kind}${i} ${r.status} ${r.status === 200 ? body.content!.map((c) => c.type).join(',') : /would pass (\w+)/.exec(body.error!.message)![1]}`);
          }
        }
      } finally {
        await g.close();
      }
    }
    expect(got).toEqual([0, 1, 2].flatMap((i) => [`30 text${i} 200 text`, `30 reasoning${i} 200 thinking,text`, `30 args${i} 200 tool_use`])
      .concat([0, 1, 2].flatMap((i) => [`29 text${i} 502 maxTextBytes`, `29 reasoning${i} 502 maxReasoningBytes`, `29 args${i} 502 maxArgumentBytes`])));
  });

  test('the answer written, counted in llm_bytes_out_total by its UTF-8 bytes (it is serialized once)', async () => {
    const g = await startGateway({ upstreamFormat: 'openai' });
    try {
      g.up.scripts.set('m', { pieces: [Buffer.from(chunk({ role: 'assistant', content: TEXTS[2] }) + chunk({ content: TEXTS[1] }, 'stop') + 'data: [DONE]\n\n')] });
      const r = await ask(g, 'm');
      expect([r.status, (JSON.parse(r.body.toString()) as { content: unknown }).content]).toEqual([200, [{ type: 'text', text: TEXTS[2] + TEXTS[1] }]]);
      expect((await metricsAt(`${g.url}/metrics`)).get('llm_bytes_out_total')).toBe(r.body.length);
    } finally {
      await g.close();
    }
  });

  test('the bytes the answer holds while it is read, in the budget (stats, maxPendingBytes): its text\'s UTF-8 bytes, not its UTF-16 units', async () => {
    // (two events of 3000 bytes each; the last character is held back until the next event or the end)
    const texts = ['a'.repeat(3000), '漢'.repeat(1000), '😀'.repeat(750)];
    const g = await startGateway({ upstreamFormat: 'openai', bodyTimeout: 60_000 });
    try {
      const held: number[] = [];
      for (const [i, s] of texts.entries()) {
        let cut = () => {};
        g.up.scripts.set(`held${i}`, { write: (res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(chunk({ role: 'assistant', content: s }) + chunk({ content: s }));
          cut = () => res.socket!.destroy();
        } });
        const asked = ask(g, `held${i}`);
        await expect.poll(() => g.up.received.length).toBe(i + 1);
        await expect.poll(() => g.gw.stats().pendingBytes - g.gw.stats().coreBytes).toBeGreaterThan(1000);
        await new Promise((r) => setTimeout(r, 50));
        const st = g.gw.stats();
        held.push(st.pendingBytes - st.coreBytes);
        cut(); // (the upstream's connection cut: the answer is truncated)
        expect((await asked).status).toBe(502);
      }
      expect(held).toEqual([6000 - 1, 6000 - 3, 6000 - 4]);
    } finally {
      await g.close();
    }
    // past maxPendingBytes with the answer: a 503, at the same bytes in every script
    const h = await startGateway({ upstreamFormat: 'openai', maxPendingBytes: 5000 });
    try {
      const got: string[] = [];
      for (const [i, s] of texts.entries()) {
        h.up.scripts.set(`big${i}`, { pieces: [Buffer.from(chunk({ role: 'assistant', content: s }) + chunk({ content: s }) + chunk({}, 'stop') + 'data: [DONE]\n\n')] });
        const r = await ask(h, `big${i}`);
        got.push(`${r.status} ${r.body.toString()}`);
      }
      expect(got).toEqual(Array(3).fill(`503 ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'the gateway\'s streams hold more than maxPendingBytes (5000) with this answer; retry later' } })}`));
    } finally {
      await h.close();
    }
  });
});
