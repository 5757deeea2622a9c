// Images in tool results through the gateway (examples/gateway/requests/): an Anthropic client's
// tool_result that holds an image (Claude Code's Read of a PNG, a screenshot) and an OpenAI client's
// tool message reach each upstream in its own API's words, or are refused with a 400 in the
// client's shape that names what cannot be carried, and the upstream is not called; never dropped.
// - for each upstream format, the exact body the upstream receives for a tool_result of text and a
//   base64 image, and of an image alone (Anthropic's and Bedrock's tool results and Responses'
//   function_call_output hold images; Ollama's tool message takes `images`; OpenAI Chat's tool
//   message is text only, so its images follow in a user message; Gemini's functionResponse holds
//   none before Gemini 3, so they follow as inlineData parts of the same turn);
// - to Gemini 3 (as the model's name says) a result's images in its functionResponse, as its parts;
// - an OpenAI client's tool message of content parts, and its tool message followed by a user
//   message with an image;
// - the refusals: an image by URL where the upstream takes only bytes, a block or part that is
//   neither text nor image (where the request is translated: an Anthropic client's body passes
//   as it is to Claude on Bedrock, a document and is_error with it);
// - a ddg upstream, which takes text only: an image refused, in a tool result or a user message;
// - a failed tool result (an Anthropic client's is_error) to Bedrock Converse: a toolResult of
//   status "error" with the content as sent for a Claude model, in words ("Error: ") for another;
// - an OpenAI client's image `detail`: carried to Responses (a user message's images and a tool
//   result's); to Gemini, `low` as its media resolution (the request's, or on Gemini 3 the image's
//   own when the images' details differ), `original` refused; to the upstreams with no word for it
//   `auto` (the default) and `high` (what they do) pass, `low` and `original` are refused.
import { describe, expect, test } from 'vitest';
import { gatewaysByFormat, post, withAwsEnv } from './support.js';

type Format = 'openai' | 'openai-responses' | 'anthropic' | 'ollama' | 'ddg' | 'gemini' | 'bedrock' | 'bedrock-invoke';
type Body = Record<string, unknown>;

withAwsEnv(); // (a bedrock upstream's requests are signed)

// A 1×1 PNG (70 bytes), as Claude Code's Read tool sends an image file: base64 in an image block.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==';
const DATA_URL = `data:image/png;base64,${PNG}`;
const SCHEMA = { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] };
const ARGS = { file_path: '/tmp/shot.png' };
const QUESTION = 'What is in shot.png?';
const ANTHROPIC_HEADERS = { 'anthropic-version': '2023-06-01' };

const IMAGE = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } };
const TEXT_AND_IMAGE = [{ type: 'text', text: 'A screenshot:' }, IMAGE];

/** An Anthropic client's turn: the Read tool called, its result's `content` (and `extra` blocks after the result). */
const messagesTurn = (content: unknown, extra: unknown[] = []): Body => ({
  model: 'probe', max_tokens: 100, stream: true,
  tools: [{ name: 'Read', description: 'Reads a file', input_schema: SCHEMA }],
  messages: [
    { role: 'user', content: QUESTION },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: ARGS }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content }, ...extra] },
  ],
});

/** An OpenAI client's turn: the Read tool called, its result's `content`, and `after` (messages after the result). */
const chatTurn = (content: unknown, after: unknown[] = []): Body => ({
  model: 'probe', max_tokens: 100, stream: true,
  tools: [{ type: 'function', function: { name: 'Read', description: 'Reads a file', parameters: SCHEMA } }],
  messages: [
    { role: 'user', content: QUESTION },
    { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'Read', arguments: JSON.stringify(ARGS) } }] },
    { role: 'tool', tool_call_id: 'toolu_1', content },
    ...after,
  ],
});

// Each upstream's body for that turn, with the tool result's turn (`result`: the messages, items or
// parts from the result on) in its words.
const openaiBody = (result: unknown[]): Body => ({
  model: 'probe', stream: true, max_completion_tokens: 100, stream_options: { include_usage: true },
  tools: [{ type: 'function', function: { name: 'Read', description: 'Reads a file', parameters: SCHEMA } }],
  messages: [
    { role: 'user', content: QUESTION },
    { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/tmp/shot.png"}' } }] },
    ...result,
  ],
});
const anthropicMessages = (result: unknown[]) => [
  { role: 'user', content: QUESTION },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: ARGS }] },
  { role: 'user', content: result },
];
const invokeBody = (result: unknown[]): Body => ({
  anthropic_version: 'bedrock-2023-05-31', max_tokens: 100,
  tools: [{ name: 'Read', description: 'Reads a file', input_schema: SCHEMA }],
  messages: anthropicMessages(result),
});
const anthropicBody = (result: unknown[]): Body => ({
  model: 'probe', max_tokens: 100, stream: true,
  tools: [{ name: 'Read', description: 'Reads a file', input_schema: SCHEMA }],
  messages: anthropicMessages(result),
});
const responsesBody = (result: unknown[]): Body => ({
  model: 'probe', stream: true, store: false, max_output_tokens: 100,
  tools: [{ type: 'function', name: 'Read', description: 'Reads a file', parameters: SCHEMA }],
  input: [
    { role: 'user', content: QUESTION },
    { type: 'function_call', call_id: 'toolu_1', name: 'Read', arguments: '{"file_path":"/tmp/shot.png"}' },
    ...result,
  ],
});
const ollamaBody = (result: unknown[]): Body => ({
  model: 'probe', stream: true, options: { num_predict: 100 },
  tools: [{ type: 'function', function: { name: 'Read', description: 'Reads a file', parameters: SCHEMA } }],
  messages: [
    { role: 'user', content: QUESTION },
    { role: 'assistant', content: '', tool_calls: [{ function: { name: 'Read', arguments: ARGS } }] },
    ...result,
  ],
});
const geminiBody = (result: unknown[]): Body => ({
  contents: [
    { role: 'user', parts: [{ text: QUESTION }] },
    { role: 'model', parts: [{ functionCall: { id: 'toolu_1', name: 'Read', args: ARGS } }] },
    { role: 'user', parts: result },
  ],
  tools: [{ functionDeclarations: [{ name: 'Read', description: 'Reads a file', parametersJsonSchema: SCHEMA }] }],
  generationConfig: { maxOutputTokens: 100 },
});
const bedrockBody = (result: unknown[]): Body => ({
  messages: [
    { role: 'user', content: [{ text: QUESTION }] },
    { role: 'assistant', content: [{ toolUse: { toolUseId: 'toolu_1', name: 'Read', input: ARGS } }] },
    { role: 'user', content: result },
  ],
  toolConfig: { tools: [{ toolSpec: { name: 'Read', description: 'Reads a file', inputSchema: { json: SCHEMA } } }] },
  inferenceConfig: { maxTokens: 100 },
});

const LABEL = 'The image from the result of tool call toolu_1 (Read):';
const PNG_PART = { type: 'image_url', image_url: { url: DATA_URL } };
const ANTHROPIC_IMAGE = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } };
const RESPONSES_IMAGE = { type: 'input_image', image_url: DATA_URL };
const GEMINI_IMAGE = { inlineData: { mimeType: 'image/png', data: PNG } };
const CONVERSE_IMAGE = { image: { format: 'png', source: { bytes: PNG } } };
const RESPONSE = (result: string) => ({ functionResponse: { id: 'toolu_1', name: 'Read', response: { result } } });

// For each upstream: the body for a result of text and an image, and for an image alone.
const results: [Format, Body, Body][] = [
  ['openai',
    openaiBody([{ role: 'tool', tool_call_id: 'toolu_1', content: 'A screenshot:' }, { role: 'user', content: [{ type: 'text', text: LABEL }, PNG_PART] }]),
    openaiBody([{ role: 'tool', tool_call_id: 'toolu_1', content: '' }, { role: 'user', content: [{ type: 'text', text: LABEL }, PNG_PART] }])],
  ['bedrock-invoke',
    invokeBody([{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'A screenshot:' }, ANTHROPIC_IMAGE] }]),
    invokeBody([{ type: 'tool_result', tool_use_id: 'toolu_1', content: [ANTHROPIC_IMAGE] }])],
  ['openai-responses',
    responsesBody([{ type: 'function_call_output', call_id: 'toolu_1', output: [{ type: 'input_text', text: 'A screenshot:' }, RESPONSES_IMAGE] }]),
    responsesBody([{ type: 'function_call_output', call_id: 'toolu_1', output: [RESPONSES_IMAGE] }])],
  ['ollama',
    ollamaBody([{ role: 'tool', content: 'A screenshot:', images: [PNG], tool_name: 'Read' }]),
    ollamaBody([{ role: 'tool', content: '', images: [PNG], tool_name: 'Read' }])],
  ['gemini',
    geminiBody([RESPONSE('A screenshot:'), { text: LABEL }, GEMINI_IMAGE]),
    geminiBody([RESPONSE(''), { text: LABEL }, GEMINI_IMAGE])],
  ['bedrock',
    bedrockBody([{ toolResult: { toolUseId: 'toolu_1', content: [{ text: 'A screenshot:' }, CONVERSE_IMAGE] } }]),
    bedrockBody([{ toolResult: { toolUseId: 'toolu_1', content: [CONVERSE_IMAGE] } }])],
];

// (a gateway per upstream format; the ddg base URL is the endpoint itself, and with no script the upstream's 404 answers: what it received is what counts)
const gateway = gatewaysByFormat<Format>((format) => (format === 'ddg' ? '/chat' : ''));

/** What the upstream received for a request (the upstream called once). */
async function received(format: Format, body: Body, client: 'openai' | 'anthropic'): Promise<unknown> {
  const g = await gateway(format);
  const before = g.up.received.length;
  const res = client === 'openai' ? await post(g.url, body) : await post(g.url, body, '/v1/messages', ANTHROPIC_HEADERS);
  expect(res.status, res.body.toString()).toBe(404); // (no script: the fake upstream's 404)
  expect(g.up.received.length).toBe(before + 1);
  return g.up.received.at(-1)!.body;
}

/** The 400 a request gets (in the client's shape), the upstream not called. */
async function refused(format: Format, body: Body, client: 'openai' | 'anthropic'): Promise<[number, unknown]> {
  const g = await gateway(format);
  const before = g.up.received.length;
  const res = client === 'openai' ? await post(g.url, body) : await post(g.url, body, '/v1/messages', ANTHROPIC_HEADERS);
  expect(g.up.received.length).toBe(before);
  return [res.status, JSON.parse(res.body.toString())];
}
const anthropicError = (message: string) => [400, { type: 'error', error: { type: 'invalid_request_error', message } }];
const openaiError = (message: string) => [400, { error: { message, type: 'invalid_request_error', code: 'ERR_BAD_REQUEST' } }];

describe('an Anthropic client\'s tool_result with an image', () => {
  test('to an anthropic upstream it passes as it is', async () => {
    for (const content of [TEXT_AND_IMAGE, [IMAGE]]) {
      const turn = messagesTurn(content);
      expect(await received('anthropic', turn, 'anthropic')).toEqual(turn);
    }
  });

  test.each(results)('to a %s upstream: text and a base64 image', async (format, textAndImage) => {
    expect(await received(format, messagesTurn(TEXT_AND_IMAGE), 'anthropic')).toEqual(textAndImage);
  });

  test.each(results)('to a %s upstream: a base64 image alone', async (format, _textAndImage, imageOnly) => {
    expect(await received(format, messagesTurn([IMAGE]), 'anthropic')).toEqual(imageOnly);
  });

  test('an error\'s result with an image: its text after "Error: ", or "Error:" before an image alone; to Claude on Bedrock, is_error as sent', async () => {
    const turn = (content: unknown) => {
      const t = messagesTurn(content) as { messages: { content: { is_error?: boolean }[] }[] };
      t.messages[2].content[0].is_error = true;
      return t;
    };
    expect(await received('openai', turn(TEXT_AND_IMAGE), 'anthropic')).toEqual(
      openaiBody([{ role: 'tool', tool_call_id: 'toolu_1', content: 'Error: A screenshot:' }, { role: 'user', content: [{ type: 'text', text: LABEL }, PNG_PART] }]));
    expect(await received('bedrock', turn([IMAGE]), 'anthropic')).toEqual(
      bedrockBody([{ toolResult: { toolUseId: 'toolu_1', content: [{ text: 'Error:' }, CONVERSE_IMAGE] } }]));
    expect(await received('bedrock-invoke', turn([IMAGE]), 'anthropic')).toEqual(
      invokeBody([{ type: 'tool_result', tool_use_id: 'toolu_1', content: [ANTHROPIC_IMAGE], is_error: true }]));
  });

  test('two results, the first with two images, and the user\'s text: the images after all the results (openai, gemini)', async () => {
    const body: Body = {
      model: 'probe', max_tokens: 100, stream: true,
      tools: [{ name: 'Read', description: 'Reads a file', input_schema: SCHEMA }],
      messages: [
        { role: 'user', content: QUESTION },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: ARGS }, { type: 'tool_use', id: 'toolu_2', name: 'Read', input: { file_path: '/tmp/notes.txt' } }] },
        { role: 'user', content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [IMAGE, { type: 'text', text: 'and' }, IMAGE] },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'notes' },
          { type: 'text', text: 'Compare them.' },
        ] },
      ],
    };
    const label = 'The 2 images from the result of tool call toolu_1 (Read):';
    expect(await received('openai', body, 'anthropic')).toEqual({
      model: 'probe', stream: true, max_completion_tokens: 100, stream_options: { include_usage: true },
      tools: [{ type: 'function', function: { name: 'Read', description: 'Reads a file', parameters: SCHEMA } }],
      messages: [
        { role: 'user', content: QUESTION },
        { role: 'assistant', content: null, tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/tmp/shot.png"}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/tmp/notes.txt"}' } },
        ] },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'and' },
        { role: 'tool', tool_call_id: 'toolu_2', content: 'notes' },
        { role: 'user', content: [{ type: 'text', text: label }, PNG_PART, PNG_PART] },
        { role: 'user', content: 'Compare them.' },
      ],
    });
    expect(await received('gemini', body, 'anthropic')).toEqual({
      contents: [
        { role: 'user', parts: [{ text: QUESTION }] },
        { role: 'model', parts: [{ functionCall: { id: 'toolu_1', name: 'Read', args: ARGS } }, { functionCall: { id: 'toolu_2', name: 'Read', args: { file_path: '/tmp/notes.txt' } } }] },
        { role: 'user', parts: [
          RESPONSE('and'),
          { functionResponse: { id: 'toolu_2', name: 'Read', response: { result: 'notes' } } },
          { text: label }, GEMINI_IMAGE, GEMINI_IMAGE,
          { text: 'Compare them.' },
        ] },
      ],
      tools: [{ functionDeclarations: [{ name: 'Read', description: 'Reads a file', parametersJsonSchema: SCHEMA }] }],
      generationConfig: { maxOutputTokens: 100 },
    });
  });

  test('an image by URL: carried by its URL where the upstream takes one (openai, openai-responses, bedrock-invoke)', async () => {
    const url = 'https://example.com/shot.png';
    const turn = messagesTurn([{ type: 'image', source: { type: 'url', url } }]);
    expect(await received('openai', turn, 'anthropic')).toEqual(
      openaiBody([{ role: 'tool', tool_call_id: 'toolu_1', content: '' }, { role: 'user', content: [{ type: 'text', text: LABEL }, { type: 'image_url', image_url: { url } }] }]));
    expect(await received('openai-responses', turn, 'anthropic')).toEqual(
      responsesBody([{ type: 'function_call_output', call_id: 'toolu_1', output: [{ type: 'input_image', image_url: url }] }]));
    expect(await received('bedrock-invoke', turn, 'anthropic')).toEqual(
      invokeBody([{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'image', source: { type: 'url', url } }] }]));
  });

  test.each([
    ['gemini', 'a gemini upstream takes images as data: URLs only'],
    ['bedrock', 'a bedrock upstream takes images as data: URLs of png, jpeg, gif or webp only'],
    ['ollama', 'an ollama upstream takes images as data: URLs only'],
  ] as [Format, string][])('an image by URL to a %s upstream, which takes only bytes, is refused (not fetched)', async (format, message) => {
    const turn = messagesTurn([{ type: 'text', text: 'A screenshot:' }, { type: 'image', source: { type: 'url', url: 'https://example.com/shot.png' } }]);
    expect(await refused(format, turn, 'anthropic')).toEqual(anthropicError(message));
  });

  test('a block that is neither text nor image, or an image of another source, is refused where the request is translated (to Claude on Bedrock it passes)', async () => {
    const document = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } };
    expect(await refused('openai', messagesTurn([{ type: 'text', text: 'The file:' }, document]), 'anthropic'))
      .toEqual(anthropicError('a tool_result\'s block of type "document" cannot be carried to this upstream'));
    // (an Anthropic client's body passes as it is to Claude on Bedrock, which takes a document in a tool result)
    expect(await received('bedrock-invoke', messagesTurn([document]), 'anthropic'))
      .toEqual(invokeBody([{ type: 'tool_result', tool_use_id: 'toolu_1', content: [document] }]));
    expect(await refused('gemini', messagesTurn([{ type: 'image', source: { type: 'file', file_id: 'file_1' } }]), 'anthropic'))
      .toEqual(anthropicError('a tool_result\'s image of source type "file" cannot be carried to this upstream'));
  });
});

describe('an Anthropic client\'s failed tool result (is_error) to Bedrock Converse', () => {
  /** An Anthropic client's turn for `model` whose result, `content`, failed (or not). */
  const failedTurn = (model: string, content: unknown, isError = true): Body => {
    const t: Body = { ...messagesTurn(content), model };
    (t.messages as { content: Body[] }[])[2].content[0].is_error = isError;
    return t;
  };
  const failedResult = (content: unknown[]) => bedrockBody([{ toolResult: { toolUseId: 'toolu_1', content, status: 'error' } }]);

  test.each([
    'anthropic.claude-sonnet-4-5-20250929-v1:0',
    'us.anthropic.claude-opus-4-1-20250805-v1:0', // (an inference profile)
    'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0',
    'us.amazon.nova-pro-v1:0', // (Amazon Nova takes it too)
  ])('to Claude or Nova (%s): status "error", the content as the client sent it', async (model) => {
    expect(await received('bedrock', failedTurn(model, 'ENOENT: no such file'), 'anthropic')).toEqual(failedResult([{ text: 'ENOENT: no such file' }]));
    expect(await received('bedrock', failedTurn(model, TEXT_AND_IMAGE), 'anthropic')).toEqual(failedResult([{ text: 'A screenshot:' }, CONVERSE_IMAGE]));
    expect(await received('bedrock', failedTurn(model, [IMAGE]), 'anthropic')).toEqual(failedResult([CONVERSE_IMAGE]));
  });

  test('to Claude, a result that did not fail has no status (is_error false, or none)', async () => {
    const ok = bedrockBody([{ toolResult: { toolUseId: 'toolu_1', content: [{ text: 'file contents' }] } }]);
    expect(await received('bedrock', failedTurn('anthropic.claude-sonnet-4-5-20250929-v1:0', 'file contents', false), 'anthropic')).toEqual(ok);
    expect(await received('bedrock', { ...messagesTurn('file contents'), model: 'anthropic.claude-sonnet-4-5-20250929-v1:0' }, 'anthropic')).toEqual(ok);
  });

  test.each([
    'meta.llama3-3-70b-instruct-v1:0',
    'mistral.mistral-large-2407-v1:0',
    'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6', // (names no model)
  ])('to another model (%s), which may refuse a status: the failure in words, no status', async (model) => {
    expect(await received('bedrock', failedTurn(model, 'ENOENT: no such file'), 'anthropic'))
      .toEqual(bedrockBody([{ toolResult: { toolUseId: 'toolu_1', content: [{ text: 'Error: ENOENT: no such file' }] } }]));
    expect(await received('bedrock', failedTurn(model, TEXT_AND_IMAGE), 'anthropic'))
      .toEqual(bedrockBody([{ toolResult: { toolUseId: 'toolu_1', content: [{ text: 'Error: A screenshot:' }, CONVERSE_IMAGE] } }]));
  });

  test('an OpenAI client\'s tool message, which has no word for a failure, to Claude: no status', async () => {
    expect(await received('bedrock', { ...chatTurn('ENOENT: no such file'), model: 'anthropic.claude-sonnet-4-5-20250929-v1:0' }, 'openai'))
      .toEqual(bedrockBody([{ toolResult: { toolUseId: 'toolu_1', content: [{ text: 'ENOENT: no such file' }] } }]));
  });

  test('to any other upstream a failure stays in words, as before', async () => {
    const turn = failedTurn('anthropic.claude-sonnet-4-5-20250929-v1:0', 'ENOENT: no such file');
    expect(await received('openai-responses', turn, 'anthropic')).toEqual({
      ...responsesBody([{ type: 'function_call_output', call_id: 'toolu_1', output: 'Error: ENOENT: no such file' }]), model: 'anthropic.claude-sonnet-4-5-20250929-v1:0' });
  });

  test('to Gemini a failure is the functionResponse\'s error key, which Gemini reads as the call\'s failure, with the content as sent (its images after it)', async () => {
    const response = (r: Record<string, string>) => ({ functionResponse: { id: 'toolu_1', name: 'Read', response: r } });
    expect(await received('gemini', failedTurn('gemini-2.5-pro', 'ENOENT: no such file'), 'anthropic')).toEqual(geminiBody([response({ error: 'ENOENT: no such file' })]));
    expect(await received('gemini', failedTurn('gemini-2.5-pro', TEXT_AND_IMAGE), 'anthropic'))
      .toEqual(geminiBody([response({ error: 'A screenshot:' }), { text: LABEL }, GEMINI_IMAGE]));
    expect(await received('gemini', failedTurn('gemini-2.5-pro', 'file contents', false), 'anthropic')).toEqual(geminiBody([response({ result: 'file contents' })]));
  });
});

describe('a tool result\'s images to Gemini 3, which takes them in the functionResponse (its parts)', () => {
  const RESPONSE_3 = (response: Record<string, string>, n = 1) => ({ functionResponse: { id: 'toolu_1', name: 'Read', response, parts: Array(n).fill(GEMINI_IMAGE) } });

  test.each(['gemini-3-flash-preview', 'gemini-3.1-pro-preview', 'models/gemini-3-pro-preview'])('an Anthropic client\'s tool_result to %s: text and an image, an image alone', async (model) => {
    expect(await received('gemini', { ...messagesTurn(TEXT_AND_IMAGE), model }, 'anthropic')).toEqual(geminiBody([RESPONSE_3({ result: 'A screenshot:' })]));
    expect(await received('gemini', { ...messagesTurn([IMAGE]), model }, 'anthropic')).toEqual(geminiBody([RESPONSE_3({ result: '' })]));
  });

  test('an OpenAI client\'s tool message of text and image_url parts', async () => {
    expect(await received('gemini', { ...chatTurn([{ type: 'text', text: 'A screenshot:' }, PNG_PART]), model: 'gemini-3-flash-preview' }, 'openai'))
      .toEqual(geminiBody([RESPONSE_3({ result: 'A screenshot:' })]));
  });

  test('a failed result (is_error): the error key, with its images', async () => {
    const turn: Body = { ...messagesTurn([{ type: 'text', text: 'A screenshot:' }, IMAGE, IMAGE]), model: 'gemini-3-flash-preview' };
    (turn.messages as { content: Body[] }[])[2].content[0].is_error = true;
    expect(await received('gemini', turn, 'anthropic')).toEqual(geminiBody([RESPONSE_3({ error: 'A screenshot:' }, 2)]));
  });

  test('two results, the first with an image, and the user\'s text after them: each result\'s images in its own response', async () => {
    const body: Body = {
      model: 'gemini-3-flash-preview', max_tokens: 100, stream: true,
      tools: [{ name: 'Read', description: 'Reads a file', input_schema: SCHEMA }],
      messages: [
        { role: 'user', content: QUESTION },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: ARGS }, { type: 'tool_use', id: 'toolu_2', name: 'Read', input: { file_path: '/tmp/notes.txt' } }] },
        { role: 'user', content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [IMAGE] },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'notes' },
          { type: 'text', text: 'Compare them.' },
        ] },
      ],
    };
    expect(await received('gemini', body, 'anthropic')).toEqual({
      contents: [
        { role: 'user', parts: [{ text: QUESTION }] },
        { role: 'model', parts: [{ functionCall: { id: 'toolu_1', name: 'Read', args: ARGS } }, { functionCall: { id: 'toolu_2', name: 'Read', args: { file_path: '/tmp/notes.txt' } } }] },
        { role: 'user', parts: [
          RESPONSE_3({ result: '' }),
          { functionResponse: { id: 'toolu_2', name: 'Read', response: { result: 'notes' } } },
          { text: 'Compare them.' },
        ] },
      ],
      tools: [{ functionDeclarations: [{ name: 'Read', description: 'Reads a file', parametersJsonSchema: SCHEMA }] }],
      generationConfig: { maxOutputTokens: 100 },
    });
  });

  test.each(['gemini-2.5-pro', 'gemini-2.0-flash', 'gemini-flash-latest'])('to %s, which does not say it is Gemini 3, the images stay after the responses, as before', async (model) => {
    expect(await received('gemini', { ...messagesTurn(TEXT_AND_IMAGE), model }, 'anthropic')).toEqual(geminiBody([RESPONSE('A screenshot:'), { text: LABEL }, GEMINI_IMAGE]));
  });
});

describe('an OpenAI client\'s tool results and images', () => {
  // (a tool message of content parts with an image: OpenAI's API takes text parts only there, other
  // servers take more; to an upstream of another API it is carried as an Anthropic client's is)
  const parts = [{ type: 'text', text: 'A screenshot:' }, PNG_PART];
  test.each(results.filter(([f]) => f !== 'openai'))('a tool message of text and image_url parts to a %s upstream', async (format, textAndImage) => {
    expect(await received(format, chatTurn(parts), 'openai')).toEqual(textAndImage);
  });

  test('a tool message of content parts to an anthropic upstream', async () => {
    expect(await received('anthropic', chatTurn(parts), 'openai')).toEqual(
      anthropicBody([{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'A screenshot:' }, ANTHROPIC_IMAGE] }]));
  });

  // Chat's own way, the tool message's text, then a user message with the image (each translation
  // carried it already: these pin it beside the new ways)
  const after = [{ role: 'user', content: [{ type: 'text', text: LABEL }, PNG_PART] }];
  test.each([
    ['anthropic', anthropicBody([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'A screenshot:' }, { type: 'text', text: LABEL }, ANTHROPIC_IMAGE])],
    ['bedrock-invoke', invokeBody([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'A screenshot:' }, { type: 'text', text: LABEL }, ANTHROPIC_IMAGE])],
    ['openai-responses', responsesBody([{ type: 'function_call_output', call_id: 'toolu_1', output: 'A screenshot:' }, { role: 'user', content: [{ type: 'input_text', text: LABEL }, RESPONSES_IMAGE] }])],
    ['ollama', ollamaBody([{ role: 'tool', content: 'A screenshot:', tool_name: 'Read' }, { role: 'user', content: LABEL, images: [PNG] }])],
    ['gemini', geminiBody([RESPONSE('A screenshot:'), { text: LABEL }, GEMINI_IMAGE])],
    ['bedrock', bedrockBody([{ toolResult: { toolUseId: 'toolu_1', content: [{ text: 'A screenshot:' }] } }, { text: LABEL }, CONVERSE_IMAGE])],
  ] as [Format, Body][])('a tool message and a user message with an image after it, to a %s upstream', async (format, want) => {
    expect(await received(format, chatTurn('A screenshot:', after), 'openai')).toEqual(want);
  });

  test('an image in an assistant message (which OpenAI\'s own API does not take either) is refused where the upstream\'s assistant turns hold none, where it was dropped', async () => {
    const body = { model: 'probe', stream: true, messages: [
      { role: 'user', content: 'Draw it.' }, { role: 'assistant', content: [{ type: 'text', text: 'Here:' }, PNG_PART] }, { role: 'user', content: 'Again.' },
    ] };
    const anthropic = openaiError('an assistant message\'s images cannot be carried to Anthropic\'s Messages API: its assistant turns hold no images');
    expect(await refused('anthropic', body, 'openai')).toEqual(anthropic);
    expect(await refused('bedrock-invoke', body, 'openai')).toEqual(anthropic);
    expect(await refused('openai-responses', body, 'openai'))
      .toEqual(openaiError('an assistant message\'s images cannot be carried to an openai-responses upstream: its assistant messages hold text only'));
  });

  test('a tool message\'s part that is neither text nor image is refused', async () => {
    const file = { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } };
    for (const format of ['anthropic', 'gemini', 'bedrock', 'openai-responses'] as const) {
      expect(await refused(format, chatTurn([{ type: 'text', text: 'The file:' }, file]), 'openai'))
        .toEqual(openaiError('a content part of type "file" cannot be carried to this upstream'));
    }
  });
});

describe('an OpenAI client\'s image detail', () => {
  const detailed = (detail: unknown) => ({ type: 'image_url', image_url: { url: DATA_URL, detail } });
  /** An OpenAI client's question with an image of `detail`. */
  const question = (detail: unknown): Body => ({
    model: 'probe', stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: QUESTION }, detailed(detail)] }],
  });

  test.each(['low', 'high', 'auto', 'original'])('to Responses, detail %s on the input_image of a user message and of a tool result', async (detail) => {
    expect(await received('openai-responses', question(detail), 'openai')).toEqual({
      model: 'probe', stream: true, store: false,
      input: [{ role: 'user', content: [{ type: 'input_text', text: QUESTION }, { type: 'input_image', image_url: DATA_URL, detail }] }],
    });
    expect(await received('openai-responses', chatTurn([{ type: 'text', text: 'A screenshot:' }, detailed(detail)]), 'openai')).toEqual(
      responsesBody([{ type: 'function_call_output', call_id: 'toolu_1', output: [{ type: 'input_text', text: 'A screenshot:' }, { ...RESPONSES_IMAGE, detail }] }]));
  });

  test('to Responses, a detail of null is none given: no detail', async () => {
    expect(await received('openai-responses', question(null), 'openai')).toEqual({
      model: 'probe', stream: true, store: false,
      input: [{ role: 'user', content: [{ type: 'input_text', text: QUESTION }, RESPONSES_IMAGE] }],
    });
  });

  test('to an openai upstream the request passes as it is', async () => {
    expect(await received('openai', question('low'), 'openai')).toEqual(question('low'));
  });

  // the upstreams with no word for it: what each receives for the question without a detail
  const noDetail: [Format, Body][] = [
    ['anthropic', { model: 'probe', max_tokens: 4096, stream: true, messages: [{ role: 'user', content: [ANTHROPIC_IMAGE, { type: 'text', text: QUESTION }] }] }],
    ['bedrock-invoke', { anthropic_version: 'bedrock-2023-05-31', max_tokens: 4096, messages: [{ role: 'user', content: [ANTHROPIC_IMAGE, { type: 'text', text: QUESTION }] }] }],
    ['ollama', { model: 'probe', stream: true, messages: [{ role: 'user', content: QUESTION, images: [PNG] }] }],
    ['gemini', { contents: [{ role: 'user', parts: [{ text: QUESTION }, GEMINI_IMAGE] }] }],
    ['bedrock', { messages: [{ role: 'user', content: [{ text: QUESTION }, CONVERSE_IMAGE] }] }],
  ];

  test.each(noDetail)('to a %s upstream, detail auto (the default, as none) and high (what it does) pass', async (format, want) => {
    expect(await received(format, question('auto'), 'openai')).toEqual(want);
    expect(await received(format, question('high'), 'openai')).toEqual(want);
    expect(await received(format, question(undefined), 'openai')).toEqual(want);
  });

  test.each(noDetail.filter(([f]) => f !== 'gemini'))('to a %s upstream, detail low or original is refused, in a user message and in a tool result', async (format) => {
    for (const detail of ['low', 'original']) {
      const message = `an image's detail "${detail}" cannot be carried to this upstream: it has no word for it, and sees each image in detail, scaled down only past a size of its own (send "high", "auto", or no detail)`;
      expect(await refused(format, question(detail), 'openai')).toEqual(openaiError(message));
      expect(await refused(format, chatTurn([{ type: 'text', text: 'A screenshot:' }, detailed(detail)]), 'openai')).toEqual(openaiError(message));
    }
  });
});

describe('an OpenAI client\'s image detail to Gemini, its media resolution', () => {
  const detailed = (detail: unknown) => ({ type: 'image_url', image_url: { url: DATA_URL, detail } });
  /** An OpenAI client's question to `model` with an image of each detail of `details`. */
  const question = (model: string, ...details: unknown[]): Body => ({
    model, stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: QUESTION }, ...details.map(detailed)] }],
  });
  const LOW = 'MEDIA_RESOLUTION_LOW';
  const LOW_IMAGE = { ...GEMINI_IMAGE, mediaResolution: { level: LOW } };

  test.each(['probe', 'gemini-2.5-flash', 'gemini-3-flash-preview'])('to %s, every image low: the request\'s media resolution low, in a user message and in a tool result', async (model) => {
    expect(await received('gemini', question(model, 'low', 'low'), 'openai')).toEqual({
      contents: [{ role: 'user', parts: [{ text: QUESTION }, GEMINI_IMAGE, GEMINI_IMAGE] }],
      generationConfig: { mediaResolution: LOW },
    });
    const inResult = model.startsWith('gemini-3')
      ? [{ functionResponse: { id: 'toolu_1', name: 'Read', response: { result: 'A screenshot:' }, parts: [GEMINI_IMAGE] } }]
      : [RESPONSE('A screenshot:'), { text: LABEL }, GEMINI_IMAGE];
    expect(await received('gemini', { ...chatTurn([{ type: 'text', text: 'A screenshot:' }, detailed('low')]), model }, 'openai'))
      .toEqual({ ...geminiBody(inResult), generationConfig: { mediaResolution: LOW, maxOutputTokens: 100 } });
  });

  test('to Gemini 3, images of different details: low on its own part (mediaResolution.level), the others as they are', async () => {
    expect(await received('gemini', question('gemini-3.1-pro-preview', 'low', 'high', undefined, 'auto', 'low'), 'openai')).toEqual({
      contents: [{ role: 'user', parts: [{ text: QUESTION }, LOW_IMAGE, GEMINI_IMAGE, GEMINI_IMAGE, GEMINI_IMAGE, LOW_IMAGE] }],
    });
    // (a tool result before Gemini 3 has its images as parts of the turn: each its own)
    const body = { ...chatTurn([{ type: 'text', text: 'A screenshot:' }, detailed('low')], [{ role: 'user', content: [detailed('high')] }]), model: 'gemini-3-flash-preview' };
    expect(await refused('gemini', body, 'openai')).toEqual(openaiError('an image\'s detail "low" in a tool result cannot be carried to a gemini upstream beside images of another detail: an image in a function response has no media resolution of its own, and the request\'s is every image\'s (send the same detail for every image)'));
  });

  test.each(['probe', 'gemini-2.5-pro'])('to %s, images of different details are refused: its media resolution is the whole request\'s', async (model) => {
    expect(await refused('gemini', question(model, 'low', 'high'), 'openai')).toEqual(openaiError('an image\'s detail "low" beside images of another detail cannot be carried to this gemini model: its media resolution is the whole request\'s (Gemini 3 takes one per image; send the same detail for every image)'));
  });

  test.each(['probe', 'gemini-3-flash-preview'])('to %s, detail original (the image at its own size) or another word is refused, in a user message and in a tool result', async (model) => {
    for (const detail of ['original', 'medium']) {
      const message = `an image's detail "${detail}" cannot be carried to a gemini upstream: its media resolutions are numbers of tokens an image is seen in, none of which says it (send "low", "high", "auto", or no detail)`;
      expect(await refused('gemini', question(model, detail), 'openai')).toEqual(openaiError(message));
      expect(await refused('gemini', { ...chatTurn([{ type: 'text', text: 'A screenshot:' }, detailed(detail)]), model }, 'openai')).toEqual(openaiError(message));
    }
  });
});

describe('a ddg upstream, which takes text only', () => {
  test('refuses a tool result with an image (as any tool result) and an image in a user message, from either client', async () => {
    const tools = 'a ddg upstream takes text only: no tools, tool calls or tool results';
    expect(await refused('ddg', messagesTurn(TEXT_AND_IMAGE), 'anthropic')).toEqual(anthropicError(tools));
    expect(await refused('ddg', chatTurn('A screenshot:', [{ role: 'user', content: [PNG_PART] }]), 'openai')).toEqual(openaiError(tools));
    const image = 'a ddg upstream takes text only: no images';
    expect(await refused('ddg', { model: 'probe', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'text', text: QUESTION }, IMAGE] }] }, 'anthropic'))
      .toEqual(anthropicError(image));
    expect(await refused('ddg', { model: 'probe', messages: [{ role: 'user', content: [{ type: 'text', text: QUESTION }, PNG_PART] }] }, 'openai'))
      .toEqual(openaiError(image));
    expect(await refused('ddg', { model: 'probe', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }, 'openai'))
      .toEqual(openaiError('a ddg upstream takes text only: a content part of type "input_audio" cannot be carried to it'));
  });

  test('text parts are its text, as before', async () => {
    expect(await received('ddg', { model: 'probe', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is ' }, { type: 'text', text: 'in it?' }] }] }, 'openai'))
      .toEqual({ model: 'probe', messages: [{ role: 'user', content: 'What is in it?' }] });
  });
});
