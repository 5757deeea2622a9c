// An Anthropic client's request to Claude on Bedrock (upstreamFormat 'bedrock-invoke',
// InvokeModelWithResponseStream, whose body is Anthropic's Messages body): carried as the body it
// is, as the anthropic upstream carries it, not through OpenAI Chat's form, which loses what the
// two share (examples/gateway/requests/upstreams/bedrock-invoke.mjs, invokeFromMessages).
// - a Claude Code agent turn with thinking (an assistant turn of thinking with its signature,
//   redacted_thinking, text and tool_use; a tool_result with is_error and cache_control; a
//   document; a system prompt of blocks and tools with cache_control) reaches the upstream as the
//   exact body expected: without model and stream, with anthropic_version "bedrock-2023-05-31", no
//   beta flags (Bedrock refuses one it does not take: Claude Code's own, on every turn) nor the
//   context_management that needs one, every other field as sent and in its order;
// - the request is signed over the exact bytes the upstream received;
// - the fields Bedrock's body for Claude does not take and that change nothing in the answer are
//   left out; output_format is written as output_config.format; those that change the answer are
//   refused with a 400 in Anthropic's shape, and the upstream is not called;
// - end to end, the official Anthropic client sends such a turn and reads the answer back, whole
//   and streamed.
import { createHash } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FIXTURES } from '../helpers/model-fixtures.js';
import { closeGateway, expectSignedAsSent, invokeStream, post, startGateway, withAwsEnv, type Running } from './support.js';

type Body = Record<string, unknown>;

withAwsEnv(); // (a bedrock upstream's requests are signed)

const EVENTSTREAM = 'application/vnd.amazon.eventstream';
const ANSWER = FIXTURES.find((f) => f.name === 'anthropic-thinking-crlf')!;

const SYSTEM = [
  { type: 'text', text: 'You are Claude Code, Anthropic\'s official CLI for Claude.', cache_control: { type: 'ephemeral' } },
  { type: 'text', text: 'Work in /srv/app. Run the tests before you answer.', cache_control: { type: 'ephemeral', ttl: '1h' } },
];
const TOOLS = [
  { name: 'Bash', description: 'Runs a shell command', input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } },
  { name: 'Read', description: 'Reads a file', input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] }, cache_control: { type: 'ephemeral' } },
];
const THINKING = { type: 'thinking', thinking: 'The build log first: run it and read the error.', signature: 'EqQBCkgIBxABGAIiQLv0c8Fv2yJ6bQ1xX4oZ3k9Jm0nQ==' };
const REDACTED = { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP' };
const MESSAGES = [
  { role: 'user', content: [{ type: 'text', text: 'Why does the build fail?' }] },
  { role: 'assistant', content: [THINKING, REDACTED, { type: 'text', text: 'Let me run the build.' }, { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'Bash', input: { command: 'npm run build' } }] },
  { role: 'user', content: [
    { type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', is_error: true, content: [{ type: 'text', text: 'src/a.ts(3,1): error TS2304: Cannot find name \'x\'.' }], cache_control: { type: 'ephemeral' } },
    { type: 'document', source: { type: 'text', media_type: 'text/plain', data: '{"compilerOptions":{"strict":true}}' }, title: 'tsconfig.json' },
  ] },
];
const CONTEXT_MANAGEMENT = { edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 150000 } }] };

/** Claude Code's turn after a tool call, with thinking on (its fields in the order it writes them), and `fields`. */
const turn = (fields: Body = {}): Body => ({
  model: 'claude', messages: MESSAGES, system: SYSTEM, tools: TOOLS, tool_choice: { type: 'auto' }, metadata: { user_id: 'user_7f3a_account_session' },
  max_tokens: 32000, thinking: { type: 'enabled', budget_tokens: 31999 }, context_management: CONTEXT_MANAGEMENT, temperature: 1, stream: true, ...fields,
});
// (Claude Code's first-party betas among them, which Bedrock refuses as "invalid beta flag")
const BETA = 'claude-code-20250219,interleaved-thinking-2025-05-14, fine-grained-tool-streaming-2025-05-14,context-management-2025-06-27';
/** Its body for Bedrock: Bedrock's version first, then each field as sent (metadata, which Bedrock's body has not, and context_management, under a beta, left out). */
const invokeBody = (fields: Body = {}): Body => ({
  anthropic_version: 'bedrock-2023-05-31',
  messages: MESSAGES, system: SYSTEM, tools: TOOLS, tool_choice: { type: 'auto' },
  max_tokens: 32000, thinking: { type: 'enabled', budget_tokens: 31999 }, temperature: 1, ...fields,
});
const HEADERS = { 'anthropic-version': '2023-06-01', 'anthropic-beta': BETA, 'x-api-key': 'sk-client' };

let g: Running;
beforeAll(async () => {
  g = await startGateway({ upstreamFormat: 'bedrock-invoke' });
  g.up.scripts.set('claude', { contentType: EVENTSTREAM, pieces: [invokeStream(ANSWER.body)] });
});
afterAll(async () => {
  await closeGateway(g);
});

/** What the upstream received for an Anthropic client's request (the upstream called once, the answer relayed). */
async function received(body: Body, headers: Record<string, string> = HEADERS) {
  const before = g.up.received.length;
  const res = await post(g.url, body, '/v1/messages', headers);
  expect(res.status, res.body.toString()).toBe(200);
  expect(g.up.received.length).toBe(before + 1);
  return g.up.received.at(-1)!;
}

describe('an Anthropic client\'s turn to Claude on Bedrock: the body as sent, in Bedrock\'s few words', () => {
  test('a Claude Code turn after a tool call, thinking on: the exact body, its fields in their order; the betas in the body, not in a header', async () => {
    const got = await received(turn());
    expect(got.url).toBe('/model/claude/invoke-with-response-stream');
    expect(got.body).toEqual(invokeBody());
    expect(Object.keys(got.body as Body)).toEqual(Object.keys(invokeBody()));
    // (what the middle form lost is there: the thinking blocks before the call, is_error, cache_control, the document)
    const sent = got.body as { messages: { content: Body[] }[] };
    expect(sent.messages[1].content.slice(0, 2)).toEqual([THINKING, REDACTED]);
    expect(sent.messages[2].content[0]).toMatchObject({ is_error: true, cache_control: { type: 'ephemeral' } });
    expect([got.headers['anthropic-beta'], got.headers['anthropic-version'], got.headers['x-api-key']]).toEqual([undefined, undefined, undefined]);
  });

  test('signed over the exact bytes sent: the payload hash is theirs, and signing them again at that date gives the same signature', async () => {
    const got = await received(turn());
    expect(JSON.parse(got.raw)).toEqual(invokeBody());
    expect(got.headers['x-amz-content-sha256']).toBe(createHash('sha256').update(got.raw, 'utf8').digest('hex'));
    await expectSignedAsSent(got, '/model/claude/invoke-with-response-stream', got.raw);
  });

  test('no beta flags, whatever the anthropic-beta header says (Bedrock refuses one it does not take), and no context_management, which needs one', async () => {
    const { 'anthropic-beta': _beta, ...noBeta } = HEADERS;
    expect((await received(turn(), noBeta)).body).toEqual(invokeBody());
    expect((await received(turn(), { ...noBeta, 'anthropic-beta': 'interleaved-thinking-2025-05-14' })).body).toEqual(invokeBody());
    expect((await received(turn({ context_management: undefined }), HEADERS)).body).toEqual(invokeBody());
  });

  test('a whole answer asked for (stream: false): the same body (the gateway reads Bedrock\'s stream)', async () => {
    expect((await received(turn({ stream: false }))).body).toEqual(invokeBody());
  });

  test('the other fields Bedrock takes pass as sent: a system prompt of text, top_p, top_k, stop_sequences, a named tool, adaptive thinking, output_config', async () => {
    const fields = {
      system: 'Be brief.', top_p: 0.9, top_k: 40, stop_sequences: ['END'], tool_choice: { type: 'tool', name: 'Read', disable_parallel_tool_use: true },
      thinking: { type: 'adaptive', display: 'omitted' }, output_config: { effort: 'high', format: { type: 'json_schema', schema: { type: 'object' } } },
    };
    expect((await received(turn(fields))).body).toEqual(invokeBody(fields));
  });
});

describe('what Bedrock\'s body for Claude does not take', () => {
  test('what changes nothing in the answer is left out: metadata, service_tier, speed, the request\'s cache_control, diagnostics; and the refused fields given as null (none)', async () => {
    const fields = {
      metadata: { user_id: 'u-1' }, service_tier: 'auto', speed: 'fast', cache_control: { type: 'ephemeral' }, diagnostics: { cache_misses: true },
      inference_geo: null, container: null, mcp_servers: null, output_format: null,
    };
    expect((await received(turn(fields))).body).toEqual(invokeBody());
  });

  test('output_format, the beta\'s name of output_config.format, is written as Bedrock\'s output_config.format (beside an effort)', async () => {
    const format = { type: 'json_schema', schema: { type: 'object', properties: { cause: { type: 'string' } } } };
    expect((await received(turn({ output_format: format }))).body).toEqual(invokeBody({ output_config: { format } }));
    expect((await received(turn({ output_config: { effort: 'low' }, output_format: format }))).body).toEqual(invokeBody({ output_config: { effort: 'low', format } }));
  });

  test.each([
    [{ inference_geo: 'eu' }, 'inference_geo cannot be carried to the bedrock-invoke upstream: it says where Anthropic runs the model'],
    [{ container: 'cntr_011CRmR1fQ' }, 'container cannot be carried to the bedrock-invoke upstream: it names a container of Anthropic\'s code execution tool, which Bedrock does not run'],
    [{ mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'example' }] }, 'mcp_servers cannot be carried to the bedrock-invoke upstream: it names servers for Anthropic\'s MCP connector, which Bedrock does not call'],
    [{ anthropic_beta: ['context-1m-2025-08-07'] }, 'anthropic_beta is not a field of Anthropic\'s Messages API: the gateway writes Bedrock\'s anthropic_version, and no beta flags'],
    [{ anthropic_version: 'bedrock-2023-05-31' }, 'anthropic_version is not a field of Anthropic\'s Messages API: the gateway writes Bedrock\'s anthropic_version, and no beta flags'],
    [{ output_format: { type: 'json_schema', schema: {} }, output_config: { format: { type: 'json_schema', schema: {} } } }, 'output_format and output_config.format cannot both be given: they are one field'],
    [{ output_format: { type: 'json_schema', schema: {} }, output_config: 'high' }, 'output_config must be an object'],
  ])('%j: a 400 in Anthropic\'s shape, the upstream not called', async (fields, message) => {
    const before = g.up.received.length;
    const res = await post(g.url, turn(fields), '/v1/messages', HEADERS);
    expect([res.status, JSON.parse(res.body.toString())]).toEqual([400, { type: 'error', error: { type: 'invalid_request_error', message } }]);
    expect(g.up.received.length).toBe(before);
  });
});

describe('end to end: the official Anthropic client, its turn to Claude on Bedrock and the answer read back', () => {
  const client = () => new Anthropic({ baseURL: g.url, apiKey: 'sk-client', maxRetries: 0, timeout: 20_000 });
  // (the answer: a thinking block with its signature, then text, stopped at max_tokens)
  const content = [{ type: 'thinking', thinking: ANSWER.expected.reasoning, signature: ANSWER.expected.signatures![0] }, { type: 'text', text: ANSWER.expected.text }];
  const params = (): Anthropic.MessageCreateParamsNonStreaming => {
    const { stream: _stream, ...rest } = turn();
    return rest as unknown as Anthropic.MessageCreateParamsNonStreaming;
  };

  test('messages.create, whole: the body sent as expected, the answer\'s blocks as Claude wrote them', async () => {
    const msg = await client().messages.create(params(), { headers: { 'anthropic-beta': BETA } });
    expect([msg.content, msg.stop_reason]).toEqual([content, 'max_tokens']);
    expect(g.up.received.at(-1)!.body).toEqual(invokeBody());
  });

  test('messages.stream: the body sent as expected, the final message\'s text and thinking', async () => {
    const stream = client().messages.stream(params(), { headers: { 'anthropic-beta': BETA } });
    let text = '';
    stream.on('text', (t) => { text += t; });
    const msg = await stream.finalMessage();
    expect(text).toBe(ANSWER.expected.text);
    expect(msg.content.map((b) => (b.type === 'thinking' ? [b.type, b.thinking, b.signature] : b.type === 'text' ? [b.type, b.text] : [b.type])))
      .toEqual([['thinking', ANSWER.expected.reasoning, ANSWER.expected.signatures![0]], ['text', ANSWER.expected.text]]);
    expect(g.up.received.at(-1)!.body).toEqual(invokeBody());
  });
});
