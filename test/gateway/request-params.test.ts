// The request's parameters through the gateway (examples/gateway/requests/params.mjs, and each
// upstream's row in requests/upstreams/): each field of an OpenAI Chat or an Anthropic Messages
// request reaches an upstream of another API in its words, is
// ignored on purpose (what changes nothing in the answer), or is refused with a 400 in the client's
// shape that names it, and the upstream is not called; never dropped in silence.
// - for each upstream format, the exact body the upstream receives for a request with the fields
//   it carries (the upstreams' words written here from each API's reference);
// - the fields ignored on purpose leave the body as it is without them;
// - each refusal, at /v1/chat/completions in OpenAI's shape and at /v1/messages in Anthropic's;
// - end to end, the official clients asking for JSON by a schema from a gemini upstream.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { beforeAll, describe, expect, test } from 'vitest';
import { DEFAULTS, createGateway, parseArgs } from '../../examples/gateway/server.mjs';
import { gatewaysByFormat, post, startGateway, withAwsEnv, type Running } from './support.js';

type Format = 'openai' | 'openai-responses' | 'anthropic' | 'ollama' | 'ddg' | 'gemini' | 'bedrock' | 'bedrock-invoke';
type Body = Record<string, unknown>;

withAwsEnv(); // (a bedrock upstream's requests are signed)

const SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
const SYSTEM = 'Be brief.';
const QUESTION = 'Where is the Louvre?';

/** An OpenAI client's request: the conversation and `fields`. */
const chatRequest = (fields: Body): Body => ({ model: 'probe', stream: true, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: QUESTION }], ...fields });
/** An Anthropic client's request: the conversation and `fields`. */
const messagesRequest = (fields: Body): Body => ({ model: 'probe', max_tokens: 300, stream: true, system: SYSTEM, messages: [{ role: 'user', content: QUESTION }], ...fields });
const ANTHROPIC_HEADERS = { 'anthropic-version': '2023-06-01' };

// The conversation in each upstream's words (its parameters apart).
const conversation: Record<Format, Body> = {
  openai: { model: 'probe', stream: true, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: QUESTION }] },
  // (a Chat client's request is stored only when it says so: `store` false unless given)
  'openai-responses': { model: 'probe', stream: true, store: false, input: [{ role: 'system', content: SYSTEM }, { role: 'user', content: QUESTION }] },
  anthropic: { model: 'probe', stream: true, system: SYSTEM, messages: [{ role: 'user', content: QUESTION }] },
  ollama: { model: 'probe', stream: true, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: QUESTION }] },
  ddg: { model: 'probe', messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: QUESTION }] },
  gemini: { contents: [{ role: 'user', parts: [{ text: QUESTION }] }], systemInstruction: { parts: [{ text: SYSTEM }] } },
  bedrock: { messages: [{ role: 'user', content: [{ text: QUESTION }] }], system: [{ text: SYSTEM }] },
  'bedrock-invoke': { anthropic_version: 'bedrock-2023-05-31', system: SYSTEM, messages: [{ role: 'user', content: QUESTION }] },
};

// An OpenAI client's request with every field each upstream carries, and the body it must receive.
const fromChat: [Format, Body, Body][] = [
  ['openai-responses', {
    max_completion_tokens: 300, temperature: 0.2, top_p: 0.9, store: false, metadata: { team: 'atlas' }, user: 'u-1', safety_identifier: 'sid-1',
    prompt_cache_key: 'pk', prompt_cache_retention: '24h', service_tier: 'flex', moderation: { model: 'omni-moderation-latest' },
    response_format: { type: 'json_schema', json_schema: { name: 'place', description: 'A place', schema: SCHEMA, strict: true } }, verbosity: 'low', reasoning_effort: 'high',
  }, {
    max_output_tokens: 300, temperature: 0.2, top_p: 0.9, store: false, metadata: { team: 'atlas' }, user: 'u-1', safety_identifier: 'sid-1',
    prompt_cache_key: 'pk', prompt_cache_retention: '24h', service_tier: 'flex', moderation: { model: 'omni-moderation-latest' },
    text: { format: { type: 'json_schema', name: 'place', description: 'A place', schema: SCHEMA, strict: true }, verbosity: 'low' }, reasoning: { effort: 'high' },
  }],
  ['anthropic', {
    max_completion_tokens: 300, temperature: 0.2, top_p: 0.9, top_k: 40, stop: 'END', user: 'u-1',
    response_format: { type: 'json_schema', json_schema: { name: 'place', schema: SCHEMA, strict: true } }, reasoning_effort: 'high',
  }, {
    max_tokens: 300, temperature: 0.2, top_p: 0.9, top_k: 40, stop_sequences: ['END'], metadata: { user_id: 'u-1' },
    output_config: { format: { type: 'json_schema', schema: SCHEMA }, effort: 'high' },
  }],
  ['bedrock-invoke', {
    max_tokens: 300, temperature: 0.2, top_p: 0.9, top_k: 40, stop: ['END'],
    response_format: { type: 'json_schema', json_schema: { name: 'place', schema: SCHEMA } }, reasoning_effort: 'max',
  }, {
    max_tokens: 300, temperature: 0.2, top_p: 0.9, top_k: 40, stop_sequences: ['END'],
    output_config: { format: { type: 'json_schema', schema: SCHEMA }, effort: 'max' },
  }],
  ['ollama', {
    max_tokens: 300, temperature: 0.2, top_p: 0.9, top_k: 40, seed: 7, presence_penalty: 0.5, frequency_penalty: 0.25, stop: ['END', 'STOP'],
    response_format: { type: 'json_schema', json_schema: { name: 'place', schema: SCHEMA, strict: true } }, reasoning_effort: 'low',
  }, {
    options: { temperature: 0.2, top_p: 0.9, top_k: 40, seed: 7, presence_penalty: 0.5, frequency_penalty: 0.25, num_predict: 300, stop: ['END', 'STOP'] },
    format: SCHEMA, think: 'low',
  }],
  ['ollama', { response_format: { type: 'json_object' }, reasoning_effort: 'none' }, { format: 'json', think: false }],
  ['ddg', { max_tokens: 300 }, {}],
  ['gemini', {
    max_completion_tokens: 300, temperature: 0.2, top_p: 0.9, top_k: 40, seed: 7, presence_penalty: 0.5, frequency_penalty: 0.25, stop: 'END',
    response_format: { type: 'json_schema', json_schema: { name: 'place', schema: SCHEMA, strict: true } }, reasoning_effort: 'low',
  }, {
    generationConfig: {
      temperature: 0.2, topP: 0.9, topK: 40, seed: 7, presencePenalty: 0.5, frequencyPenalty: 0.25, maxOutputTokens: 300, stopSequences: ['END'],
      responseMimeType: 'application/json', responseJsonSchema: SCHEMA, thinkingConfig: { thinkingLevel: 'LOW' },
    },
  }],
  ['gemini', { response_format: { type: 'json_object' }, reasoning_effort: 'none' }, { generationConfig: { responseMimeType: 'application/json', thinkingConfig: { thinkingBudget: 0 } } }],
  ['bedrock', {
    max_tokens: 300, temperature: 0.2, top_p: 0.9, top_k: 40, stop: ['END'], metadata: { team: 'atlas' }, user: 'u-1', safety_identifier: 'sid-1',
    response_format: { type: 'json_schema', json_schema: { name: 'place', description: 'A place', schema: SCHEMA, strict: true } },
  }, {
    requestMetadata: { team: 'atlas', user: 'u-1', safety_identifier: 'sid-1' },
    inferenceConfig: { maxTokens: 300, temperature: 0.2, topP: 0.9, stopSequences: ['END'] },
    additionalModelRequestFields: { top_k: 40 },
    outputConfig: { textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(SCHEMA), name: 'place', description: 'A place' } } } },
  }],
];

// An Anthropic client's request with every field each upstream carries, and the body it must receive.
const FORMAT = { type: 'json_schema', schema: SCHEMA };
const AS_CHAT = { type: 'json_schema', json_schema: { name: 'output', schema: SCHEMA, strict: true } };
// (an Anthropic client's stream carries its usage: an OpenAI upstream is asked for it)
const USAGE = { include_usage: true };
// (an Anthropic client's max_tokens is Chat's max_completion_tokens: OpenAI's reasoning models refuse max_tokens)
const fromMessages: [Format, Body, Body][] = [
  ['openai', {
    temperature: 0.2, top_p: 0.9, top_k: 40, stop_sequences: ['END'], thinking: { type: 'adaptive' }, output_config: { effort: 'high', format: FORMAT },
    metadata: { user_id: 'u-1' }, service_tier: 'auto',
  }, { max_completion_tokens: 300, temperature: 0.2, top_p: 0.9, top_k: 40, stop: ['END'], reasoning_effort: 'high', response_format: AS_CHAT, stream_options: USAGE }],
  // (disabled: left to the model, as reasoning_effort "none" is refused by models without reasoning)
  ['openai', { thinking: { type: 'disabled' } }, { max_completion_tokens: 300, stream_options: USAGE }],
  // (Claude Code's turn: a thinking budget, which these upstreams have no word for, is how long to
  // think: their models decide, as with adaptive thinking; the end user's id and the provider's own
  // trimming of the conversation change nothing in the answer)
  ...((): [Format, Body, Body][] => {
    const claudeCode = { thinking: { type: 'enabled', budget_tokens: 31999 }, temperature: 1, metadata: { user_id: 'user_1' }, context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] } };
    return [
      ['openai', claudeCode, { max_completion_tokens: 300, temperature: 1, stream_options: USAGE }],
      ['openai-responses', claudeCode, { max_output_tokens: 300, temperature: 1, reasoning: { summary: 'auto' } }],
      ['ollama', claudeCode, { options: { temperature: 1, num_predict: 300 } }],
      ['ollama', { thinking: { type: 'adaptive' } }, { options: { num_predict: 300 } }],
    ];
  })(),
  // (a whole answer is read from the upstream's stream as well, and its usage with it)
  ['openai', { stream: false }, { max_completion_tokens: 300, stream_options: USAGE }],
  // (no tools, said as an empty list: none written, and no tool_choice of auto or none nor
  // parallel_tool_calls, which OpenAI refuses without tools)
  ...[{ tools: [] }, { tools: [], tool_choice: { type: 'auto', disable_parallel_tool_use: true } }, { tools: [], tool_choice: { type: 'none' } }]
    .map((fields): [Format, Body, Body] => ['openai', fields, { max_completion_tokens: 300, stream_options: USAGE }]),
  ['openai-responses', { temperature: 0.2, thinking: { type: 'adaptive' }, output_config: { effort: 'medium', format: FORMAT }, metadata: { user_id: 'u-1' } }, {
    max_output_tokens: 300, temperature: 0.2, reasoning: { effort: 'medium', summary: 'auto' },
    text: { format: { type: 'json_schema', name: 'output', schema: SCHEMA, strict: true } },
  }],
  ['openai-responses', { thinking: { type: 'adaptive', display: 'omitted' } }, { max_output_tokens: 300 }],
  ['ollama', { temperature: 0.2, top_k: 40, stop_sequences: ['END'], thinking: { type: 'adaptive' }, output_config: { effort: 'high', format: FORMAT } }, {
    options: { temperature: 0.2, top_k: 40, num_predict: 300, stop: ['END'] }, format: SCHEMA, think: 'high',
  }],
  ['ollama', { thinking: { type: 'disabled' } }, { options: { num_predict: 300 }, think: false }],
  ['ddg', { metadata: { user_id: 'u-1' }, service_tier: 'auto', cache_control: { type: 'ephemeral' } }, {}],
  ['gemini', { temperature: 0.2, top_k: 40, stop_sequences: ['END'], thinking: { type: 'enabled', budget_tokens: 2048 }, output_config: { format: FORMAT } }, {
    generationConfig: {
      temperature: 0.2, topK: 40, maxOutputTokens: 300, stopSequences: ['END'], responseMimeType: 'application/json', responseJsonSchema: SCHEMA,
      thinkingConfig: { thinkingBudget: 2048, includeThoughts: true },
    },
  }],
  ['gemini', { thinking: { type: 'adaptive' }, output_config: { effort: 'high' } }, { generationConfig: { maxOutputTokens: 300, thinkingConfig: { thinkingLevel: 'HIGH', includeThoughts: true } } }],
  ['gemini', { thinking: { type: 'adaptive', display: 'omitted' } }, { generationConfig: { maxOutputTokens: 300, thinkingConfig: { thinkingBudget: -1 } } }],
  ['gemini', { thinking: { type: 'disabled' } }, { generationConfig: { maxOutputTokens: 300, thinkingConfig: { thinkingBudget: 0 } } }],
  ['bedrock', { temperature: 0.2, top_k: 40, stop_sequences: ['END'], thinking: { type: 'enabled', budget_tokens: 2048 }, output_format: FORMAT, metadata: { user_id: 'user_7f3a_account_9c1e_session_2b4d' } }, {
    requestMetadata: { user_id: 'user_7f3a_account_9c1e_session_2b4d' },
    inferenceConfig: { maxTokens: 300, temperature: 0.2, stopSequences: ['END'] },
    additionalModelRequestFields: { top_k: 40, thinking: { type: 'enabled', budget_tokens: 2048 } },
    outputConfig: { textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(SCHEMA), name: 'output' } } } },
  }],
  // (to Claude on Bedrock an Anthropic client's body passes as it is, without what Bedrock's body has
  // not and what changes nothing in the answer, context_management among them: it needs a beta flag,
  // and the gateway carries none: bedrock-invoke-requests.test.ts)
  ['bedrock-invoke', {
    temperature: 0.2, top_k: 40, stop_sequences: ['END'], thinking: { type: 'enabled', budget_tokens: 2048 }, output_config: { effort: 'high', format: FORMAT },
    metadata: { user_id: 'u-1' }, speed: 'fast', service_tier: 'auto', context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
  }, {
    max_tokens: 300, temperature: 0.2, top_k: 40, stop_sequences: ['END'], thinking: { type: 'enabled', budget_tokens: 2048 },
    output_config: { format: FORMAT, effort: 'high' },
  }],
];

// What changes nothing in the answer, ignored where the upstream has no word of its own for it, and
// the APIs' defaults (null among them); with each upstream, the fields it has a word for (carried, above)
// and the defaults of fields it has none for.
const IGNORED: Body = {
  user: 'u-1', safety_identifier: 'sid-1', metadata: { team: 'atlas' }, store: true, prompt_cache_key: 'pk', prompt_cache_retention: 'in_memory', prompt_cache_options: { mode: 'implicit' },
  service_tier: 'priority', stream_options: { include_usage: true }, prediction: { type: 'content', content: 'Paris' },
  n: 1, logprobs: false, top_logprobs: 0, logit_bias: {}, modalities: ['text'], response_format: { type: 'text' }, parallel_tool_calls: true, seed: null, temperature: null,
};
const NO_PENALTY = { frequency_penalty: 0, presence_penalty: 0 };
const ignoredBy: [Format, string[], Body][] = [
  ['ollama', [], {}], ['gemini', [], {}], ['bedrock', ['user', 'safety_identifier', 'metadata'], NO_PENALTY], ['bedrock-invoke', [], NO_PENALTY], ['anthropic', ['user', 'safety_identifier'], NO_PENALTY],
  ['ddg', [], { ...NO_PENALTY, stop: [] }],
  ['openai-responses', ['user', 'safety_identifier', 'metadata', 'store', 'prompt_cache_key', 'prompt_cache_retention', 'prompt_cache_options', 'service_tier', 'parallel_tool_calls'], { ...NO_PENALTY, stop: [] }],
];

// Each refusal: the upstream, the fields, and the message of the 400.
const ALL: Format[] = ['openai-responses', 'anthropic', 'ollama', 'ddg', 'gemini', 'bedrock', 'bedrock-invoke'];
const chatRefusals: [Format, Body, string][] = [
  ...ALL.map((f): [Format, Body, string] => [f, { n: 3 }, `n cannot be carried to the ${f} upstream: the relay follows one choice`]),
  ...ALL.map((f): [Format, Body, string] => [f, { logprobs: true, top_logprobs: 2 }, `logprobs cannot be carried to the ${f} upstream: the relayed answer carries no logprobs`]),
  ['ollama', { top_logprobs: 3 }, 'top_logprobs cannot be carried to the ollama upstream: the relayed answer carries no logprobs'],
  ['anthropic', { logit_bias: { 50256: -100 } }, 'logit_bias cannot be carried to the anthropic upstream: it biases token ids of OpenAI\'s tokenizers'],
  ...(['openai-responses', 'anthropic', 'bedrock', 'bedrock-invoke', 'ddg'] as const).map((f): [Format, Body, string] => [f, { seed: 7 }, `seed cannot be carried to the ${f} upstream: its API has no word for it`]),
  ...(['openai-responses', 'anthropic', 'bedrock', 'bedrock-invoke', 'ddg'] as const).map((f): [Format, Body, string] => [f, { frequency_penalty: 0.5 }, `frequency_penalty cannot be carried to the ${f} upstream: its API has no word for it`]),
  ['bedrock', { presence_penalty: -0.5 }, 'presence_penalty cannot be carried to the bedrock upstream: its API has no word for it'],
  ['openai-responses', { stop: ['END'] }, 'stop cannot be carried to the openai-responses upstream: its API has no word for it'],
  ['openai-responses', { top_k: 40 }, 'top_k cannot be carried to the openai-responses upstream: its API has no word for it'],
  ['ddg', { temperature: 0.2 }, 'temperature cannot be carried to the ddg upstream: its API has no word for it'],
  ['ddg', { top_p: 0.9 }, 'top_p cannot be carried to the ddg upstream: its API has no word for it'],
  ['ddg', { response_format: { type: 'json_object' } }, 'response_format cannot be carried to the ddg upstream: its API has no word for it'],
  ['anthropic', { response_format: { type: 'json_object' } }, 'response_format cannot be carried to the anthropic upstream: its output format is a JSON schema (json_schema can be carried)'],
  ['bedrock', { response_format: { type: 'json_object' } }, 'response_format cannot be carried to the bedrock upstream: its output format is a JSON schema (json_schema can be carried)'],
  ...(['anthropic', 'ollama', 'gemini'] as const).map((f): [Format, Body, string] => [f, { response_format: { type: 'json_schema', json_schema: { name: 'place', description: 'A place', schema: SCHEMA } } },
    `response_format.json_schema.description cannot be carried to the ${f} upstream: its API has no word for it`]),
  ['gemini', { response_format: { type: 'json_schema', json_schema: { name: 'place' } } }, 'response_format of type json_schema needs its json_schema.schema, an object'],
  ['ollama', { response_format: { type: 'xml' } }, 'response_format must be { type: "text" | "json_object" | "json_schema" }'],
  ['bedrock', { reasoning_effort: 'low' }, 'reasoning_effort cannot be carried to the bedrock upstream: Converse has no common word for it'],
  ['ddg', { reasoning_effort: 'low' }, 'reasoning_effort cannot be carried to the ddg upstream: its API has no word for it'],
  ['anthropic', { reasoning_effort: 'minimal' }, 'reasoning_effort cannot be carried to the anthropic upstream: its effort is low, medium, high, xhigh or max, not "minimal"'],
  ['gemini', { reasoning_effort: 'xhigh' }, 'reasoning_effort cannot be carried to the gemini upstream: its thinkingLevel is minimal, low, medium or high, not "xhigh"'],
  ['ollama', { reasoning_effort: 'minimal' }, 'reasoning_effort cannot be carried to the ollama upstream: its think takes low, medium or high, not "minimal"'],
  ['anthropic', { verbosity: 'low' }, 'verbosity cannot be carried to the anthropic upstream: its API has no word for it'],
  ['gemini', { verbosity: 'high' }, 'verbosity cannot be carried to the gemini upstream: its API has no word for it'],
  ['gemini', { moderation: { model: 'omni-moderation-latest' } }, 'moderation cannot be carried to the gemini upstream: its API has no word for it'],
  ['ollama', { audio: { voice: 'alloy', format: 'mp3' } }, 'audio cannot be carried to the ollama upstream: the relay carries text'],
  ['openai-responses', { modalities: ['text', 'audio'] }, 'modalities cannot be carried to the openai-responses upstream: the relay carries text'],
  ['anthropic', { web_search_options: {} }, 'web_search_options cannot be carried to the anthropic upstream: it is OpenAI\'s own search'],
  ['gemini', { functions: [{ name: 'f', parameters: { type: 'object' } }] }, 'functions cannot be carried to the gemini upstream: it is the deprecated form of tools: send tools'],
  ['ollama', { function_call: 'auto' }, 'function_call cannot be carried to the ollama upstream: it is the deprecated form of tool_choice: send tool_choice'],
  ['ollama', { repetition_penalty: 1.1 }, 'repetition_penalty is not a field of OpenAI\'s Chat Completions API: it cannot be carried to the ollama upstream'],
  ['gemini', { min_p: 0.05 }, 'min_p is not a field of OpenAI\'s Chat Completions API: it cannot be carried to the gemini upstream'],
];
const messagesRefusals: [Format, Body, string][] = [
  ['gemini', { thinking: { type: 'between_tools' } }, 'thinking cannot be carried to the gemini upstream: it has no word for thinking between tool calls only'],
  ['ddg', { thinking: { type: 'adaptive' } }, 'thinking cannot be carried to the ddg upstream: its API has no word for it'],
  ['gemini', { thinking: { type: 'disabled' }, output_config: { effort: 'low' } }, 'thinking cannot be carried to the gemini upstream: thinking disabled with an effort says two things where it has one word'],
  ['gemini', { thinking: { type: 'enabled', budget_tokens: 2048 }, output_config: { effort: 'low' } }, 'thinking cannot be carried to the gemini upstream: a budget with an effort: Gemini takes a thinkingBudget or a thinkingLevel, not both'],
  ['gemini', { thinking: 'on' }, 'thinking must be { type: "enabled", budget_tokens } or { type: "adaptive" }, { type: "disabled" }'],
  ['openai-responses', { stop_sequences: ['END'] }, 'stop_sequences cannot be carried to the openai-responses upstream: its API has no word for it'],
  ['openai-responses', { top_k: 40 }, 'top_k cannot be carried to the openai-responses upstream: its API has no word for it'],
  ['ddg', { temperature: 0.2 }, 'temperature cannot be carried to the ddg upstream: its API has no word for it'],
  ['bedrock', { output_config: { effort: 'high' } }, 'output_config.effort cannot be carried to the bedrock upstream: Converse has no common word for it'],
  ['ddg', { output_config: { format: FORMAT } }, 'output_config.format cannot be carried to the ddg upstream: its API has no word for it'],
  ['gemini', { output_config: { format: { type: 'json_schema' } } }, 'output_config.format must be { type: "json_schema", schema }'],
  ['ollama', { output_config: { task_budget: 5 } }, 'output_config.task_budget cannot be carried to the ollama upstream: the gateway has no word for it in OpenAI Chat\'s form, through which it translates'],
  ['gemini', { inference_geo: 'eu' }, 'inference_geo cannot be carried to the gemini upstream: it says where Anthropic runs the model'],
  ['bedrock-invoke', { inference_geo: 'eu' }, 'inference_geo cannot be carried to the bedrock-invoke upstream: it says where Anthropic runs the model'],
  ['bedrock-invoke', { container: 'cntr_1' }, 'container cannot be carried to the bedrock-invoke upstream: it names a container of Anthropic\'s code execution tool, which Bedrock does not run'],
  ['bedrock-invoke', { mcp_servers: [{ type: 'url', url: 'https://mcp.example', name: 'x' }] }, 'mcp_servers cannot be carried to the bedrock-invoke upstream: it names servers for Anthropic\'s MCP connector, which Bedrock does not call'],
  ['openai', { container: 'cntr_1' }, 'container cannot be carried to the openai upstream: the gateway has no word for it in OpenAI Chat\'s form, through which it translates'],
  ['ollama', { mcp_servers: [{ type: 'url', url: 'https://mcp.example', name: 'x' }] }, 'mcp_servers cannot be carried to the ollama upstream: the gateway has no word for it in OpenAI Chat\'s form, through which it translates'],
];

// (a gateway per upstream format; the ddg base URL is the endpoint itself, and with no script the upstream's 404 answers: what it received is what counts)
const gateway = gatewaysByFormat<Format>((format) => (format === 'ddg' ? '/chat' : ''));

/** What the upstream received for a request (the upstream called once). */
async function received(format: Format, body: Body, client: 'openai' | 'anthropic'): Promise<unknown> {
  const g = await gateway(format);
  const before = g.up.received.length;
  const res = client === 'openai' ? await post(g.url, body) : await post(g.url, body, '/v1/messages', ANTHROPIC_HEADERS);
  expect(res.status, res.body.toString()).not.toBe(400);
  expect(g.up.received.length).toBe(before + 1);
  return g.up.received.at(-1)!.body;
}

describe('an OpenAI client\'s parameters, in each upstream\'s words', () => {
  test.each(fromChat)('%s: %j', async (format, fields, want) => {
    expect(await received(format, chatRequest(fields), 'openai')).toEqual({ ...conversation[format], ...want });
  });
});

describe('an Anthropic client\'s parameters, in each upstream\'s words', () => {
  test.each(fromMessages)('%s: %j', async (format, fields, want) => {
    expect(await received(format, messagesRequest(fields), 'anthropic')).toEqual({ ...conversation[format], ...want });
  });
});

describe("an Anthropic client's schema to OpenAI: strict where OpenAI's strict mode takes it (every object closed, every property required, throughout), else a schema to follow", () => {
  const closed = (properties: Body, required = Object.keys(properties)): Body => ({ type: 'object', properties, required, additionalProperties: false });
  const schemas: [string, Body, boolean][] = [
    ['closed, every property required', SCHEMA, true],
    ['an optional property', closed({ city: { type: 'string' }, zip: { type: 'string' } }, ['city']), false],
    ['an object left open', { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, false],
    ['a closed object of no properties', { type: 'object', additionalProperties: false }, true],
    ['nested: an open object in an array of objects', closed({ stops: { type: 'array', items: { type: 'object', properties: { at: { type: 'string' } }, required: ['at'] } } }), false],
    ['nested: closed in an array, an anyOf and $defs', { ...closed({ stops: { type: 'array', items: closed({ at: { type: 'string' } }) }, where: { anyOf: [{ $ref: '#/$defs/p' }, { type: 'null' }] } }), $defs: { p: closed({ x: { type: 'number' } }) } }, true],
    ['nested: an optional property in $defs', { ...closed({ where: { $ref: '#/$defs/p' } }), $defs: { p: closed({ x: { type: 'number' }, y: { type: 'number' } }, ['x']) } }, false],
    // (a property named "properties" is a property, not the keyword)
    ['a property named properties', closed({ properties: { type: 'string' } }), true],
  ];
  test.each(schemas)('%s', async (_, schema, strict) => {
    const format = { type: 'json_schema', schema };
    const json = { name: 'output', schema, ...(strict ? { strict: true } : {}) };
    expect(await received('openai', messagesRequest({ output_config: { format } }), 'anthropic')).toEqual({
      ...conversation.openai, max_completion_tokens: 300, response_format: { type: 'json_schema', json_schema: json }, stream_options: USAGE,
    });
    expect(await received('openai-responses', messagesRequest({ output_config: { format } }), 'anthropic')).toEqual({
      ...conversation['openai-responses'], max_output_tokens: 300, text: { format: { type: 'json_schema', ...json } },
    });
  });
});

describe('max_tokens to an openai upstream', () => {
  // An Anthropic client's max_tokens (which every Messages request carries) is written as Chat's
  // max_completion_tokens (above, fromMessages): OpenAI's reasoning models refuse max_tokens. A Chat
  // client's own word passes as it is; openaiMaxTokensField writes max_tokens for a server that
  // knows only that one.
  test.each([{ max_tokens: 300 }, { max_completion_tokens: 300 }, { max_tokens: 300, max_completion_tokens: 200 }])('an OpenAI client\'s own %j passes as it is', async (fields) => {
    expect(await received('openai', chatRequest(fields), 'openai')).toEqual({ ...conversation.openai, ...fields });
  });

  test('openaiMaxTokensField max_tokens: an Anthropic client\'s max_tokens as max_tokens; an OpenAI client\'s own word as it is', async () => {
    const g = await startGateway({ upstreamFormat: 'openai', openaiMaxTokensField: 'max_tokens' });
    try {
      const res = await post(g.url, messagesRequest({ temperature: 1 }), '/v1/messages', ANTHROPIC_HEADERS);
      expect(res.status).toBe(404); // (no script: the fake upstream's 404; what it received is what counts)
      expect(g.up.received.at(-1)!.body).toEqual({ ...conversation.openai, max_tokens: 300, temperature: 1, stream_options: USAGE });
      await post(g.url, chatRequest({ max_completion_tokens: 300 }));
      expect(g.up.received.at(-1)!.body).toEqual({ ...conversation.openai, max_completion_tokens: 300 });
      expect(g.up.received.length).toBe(2);
    } finally {
      await g.close();
    }
  });

  test('the option: its two values only, and the command\'s --openai-max-tokens-field', () => {
    expect(() => createGateway({ upstream: 'http://127.0.0.1:9', openaiMaxTokensField: 'maxTokens' as never }))
      .toThrow(new TypeError('createGateway: openaiMaxTokensField must be max_completion_tokens or max_tokens'));
    expect(DEFAULTS.openaiMaxTokensField).toBe('max_completion_tokens');
    expect(parseArgs(['--upstream', 'http://127.0.0.1:9', '--openai-max-tokens-field', 'max_tokens'])).toEqual({
      port: 0, host: '127.0.0.1', options: { upstream: 'http://127.0.0.1:9', openaiMaxTokensField: 'max_tokens' },
    });
  });
});

describe('max_tokens to an upstream whose API needs one (anthropic, bedrock-invoke)', () => {
  // An OpenAI client need not name a bound (Chat's max_tokens is optional); Anthropic's API needs
  // one: 4096, the least any Claude model takes as its most, unless the gateway's
  // anthropicMaxTokens says another (it was 1024, which cut such a client's answers mid-way).
  test.each(['anthropic', 'bedrock-invoke'] as const)('%s: an OpenAI client that names none gets 4096; its own bound passes', async (format) => {
    const body = (await received(format, chatRequest({}), 'openai')) as Body;
    expect(body.max_tokens).toBe(4096);
    expect(((await received(format, chatRequest({ max_completion_tokens: 300 }), 'openai')) as Body).max_tokens).toBe(300);
    expect(((await received(format, chatRequest({ max_tokens: 200 }), 'openai')) as Body).max_tokens).toBe(200);
  });

  test('anthropicMaxTokens: the bound of a request that names none; the command\'s --anthropic-max-tokens; a positive integer only', async () => {
    const g = await startGateway({ upstreamFormat: 'anthropic', anthropicMaxTokens: 32000 });
    try {
      await post(g.url, chatRequest({}));
      expect(g.up.received.at(-1)!.body).toEqual({ ...conversation.anthropic, max_tokens: 32000 });
      await post(g.url, chatRequest({ max_tokens: 50 }));
      expect(g.up.received.at(-1)!.body).toEqual({ ...conversation.anthropic, max_tokens: 50 });
    } finally {
      await g.close();
    }
    expect(DEFAULTS.anthropicMaxTokens).toBe(4096);
    for (const bad of [0, 1.5, '4096']) {
      expect(() => createGateway({ upstream: 'http://127.0.0.1:9', anthropicMaxTokens: bad as never })).toThrow(new TypeError('createGateway: anthropicMaxTokens must be a positive integer'));
    }
    expect(parseArgs(['--upstream', 'http://127.0.0.1:9', '--anthropic-max-tokens', '16000'])).toEqual({
      port: 0, host: '127.0.0.1', options: { upstream: 'http://127.0.0.1:9', anthropicMaxTokens: 16000 },
    });
  });
});

describe('the reasoning summary asked of an openai-responses upstream', () => {
  // (OpenAI writes a summary only for a verified organization, and refuses a request that asks one
  // otherwise: Claude Code asks to see its thinking on every turn)
  test.each([['concise', { summary: 'concise' }], ['detailed', { summary: 'detailed' }], ['none', undefined]] as const)('responsesSummary %s', async (summary, reasoning) => {
    const g = await startGateway({ upstreamFormat: 'openai-responses', responsesSummary: summary });
    try {
      await post(g.url, messagesRequest({ thinking: { type: 'enabled', budget_tokens: 2048 } }), '/v1/messages', ANTHROPIC_HEADERS);
      expect(g.up.received.at(-1)!.body).toEqual({ ...conversation['openai-responses'], max_output_tokens: 300, ...(reasoning ? { reasoning } : {}) });
      await post(g.url, messagesRequest({ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } }), '/v1/messages', ANTHROPIC_HEADERS);
      expect(g.up.received.at(-1)!.body).toEqual({ ...conversation['openai-responses'], max_output_tokens: 300, reasoning: { effort: 'low', ...reasoning } });
    } finally {
      await g.close();
    }
  });

  test('the option: its four values only, and the command\'s --responses-summary', () => {
    expect(DEFAULTS.responsesSummary).toBe('auto');
    expect(() => createGateway({ upstream: 'http://127.0.0.1:9', responsesSummary: 'off' as never })).toThrow(new TypeError('createGateway: responsesSummary must be auto, concise, detailed or none'));
    expect(parseArgs(['--upstream', 'http://127.0.0.1:9', '--responses-summary', 'none'])).toEqual({
      port: 0, host: '127.0.0.1', options: { upstream: 'http://127.0.0.1:9', responsesSummary: 'none' },
    });
  });
});

describe('tools and tool_choice of null (a client that writes every field) are none', () => {
  test.each(['openai-responses', 'anthropic', 'gemini', 'bedrock', 'ollama'] as const)('an OpenAI client to %s', async (format) => {
    expect(await received(format, chatRequest({ tools: null, tool_choice: null }), 'openai')).toEqual(await received(format, chatRequest({}), 'openai'));
  });
  test.each(['openai', 'gemini'] as const)('an Anthropic client to %s', async (format) => {
    expect(await received(format, messagesRequest({ tools: null, tool_choice: null }), 'anthropic')).toEqual(await received(format, messagesRequest({}), 'anthropic'));
  });
});

describe('what changes nothing in the answer is ignored where the upstream has no word for it', () => {
  test.each(ignoredBy)('%s (but %j; and %j)', async (format, carried, defaults) => {
    const fields = { ...Object.fromEntries(Object.entries(IGNORED).filter(([k]) => !carried.includes(k))), ...defaults };
    const without = await received(format, chatRequest({}), 'openai');
    expect(await received(format, chatRequest(fields), 'openai')).toEqual(without);
  });
});

describe('the client\'s tags and end user\'s id to Bedrock Converse: its requestMetadata, where they fit its rules', () => {
  const to = async (fields: Body, client: 'openai' | 'anthropic' = 'openai') => received('bedrock', client === 'openai' ? chatRequest(fields) : messagesRequest(fields), client);
  const bare = { ...conversation.bedrock };
  test('carried: the metadata\'s own pair of a name kept before an id of that name; 16 pairs, 256 characters, the characters it takes', async () => {
    const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, `v ${i}`]));
    expect(await to({ metadata: sixteen })).toEqual({ ...bare, requestMetadata: sixteen });
    expect(await to({ metadata: { user: 'from-metadata' }, user: 'u-1' })).toEqual({ ...bare, requestMetadata: { user: 'from-metadata' } });
    const long = { ['k'.repeat(256)]: 'a.b_c:d/e=f+g$h@i-j '.padEnd(256, 'x') };
    expect(await to({ metadata: long })).toEqual({ ...bare, requestMetadata: long });
    expect(await to({ metadata: { user_id: 'u-1' } }, 'anthropic')).toEqual({ ...bare, inferenceConfig: { maxTokens: 300 }, requestMetadata: { user_id: 'u-1' } });
  });

  test.each([
    ['17 pairs', { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }],
    ['a value of 257 characters', { metadata: { team: 'a'.repeat(257) } }],
    ['a character it does not take', { metadata: { team: 'atlas#1' } }],
    ['an id of such a character', { user: '{"id":1}' }],
    ['an empty key', { metadata: { '': 'x' } }],
  ])('left out whole, as before, where they do not fit (%s): Bedrock would refuse the request, and they change nothing in the answer', async (_, fields) => {
    expect(await to({ ...fields, metadata: { ...(fields as Body).metadata as Body, team2: 'ok' } })).toEqual(bare);
    expect(await to({ metadata: { team: 'ok' } })).toEqual({ ...bare, requestMetadata: { team: 'ok' } });
  });
});

describe('an Anthropic client\'s prompt caching (cache_control) to Bedrock Converse: a cachePoint where it asked for one', () => {
  const READ = { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] };
  const BASH = { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] };
  const HOUR = { type: 'ephemeral', ttl: '1h' };
  const EPHEMERAL = { type: 'ephemeral' };
  const point = (ttl?: string) => ({ cachePoint: { type: 'default', ...(ttl !== undefined ? { ttl } : {}) } });
  const CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
  const call = { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/a' } };
  const toolUse = { toolUse: { toolUseId: 'toolu_1', name: 'Read', input: { file_path: '/a' } } };

  /** A turn with a mark on a tool, on the system, inside a tool result and on the user's text. */
  const turn = (model: string): Body => ({
      model, max_tokens: 300, stream: true,
      system: [{ type: 'text', text: 'You read files. ' }, { type: 'text', text: 'Be brief.', cache_control: HOUR }],
      tools: [{ name: 'Read', input_schema: READ, cache_control: HOUR }, { name: 'Bash', input_schema: BASH }],
      messages: [
        { role: 'user', content: QUESTION },
        { role: 'assistant', content: [call] },
        { role: 'user', content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'line 1', cache_control: EPHEMERAL }, { type: 'text', text: ', line 2' }] },
          { type: 'text', text: 'Summarize.', cache_control: EPHEMERAL },
        ] },
      ],
  });
  /** Its Converse body, with the cache points `p` writes (one where asked, or none) in the messages, the system and the tools. */
  const converse = (p: (ttl?: string) => unknown[], tools = p): Body => ({
    messages: [
      { role: 'user', content: [{ text: QUESTION }] },
      { role: 'assistant', content: [toolUse] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'toolu_1', content: [{ text: 'line 1, line 2' }] } }, ...p(), { text: 'Summarize.' }, ...p()] },
    ],
    system: [{ text: 'You read files. Be brief.' }, ...p('1h')],
    toolConfig: { tools: [{ toolSpec: { name: 'Read', inputSchema: { json: READ } } }, ...tools('1h'), { toolSpec: { name: 'Bash', inputSchema: { json: BASH } } }] },
    inferenceConfig: { maxTokens: 300 },
  });
  const points = (ttl?: string) => [point(ttl)];
  /** A cache point without the client's ttl: Bedrock's default, 5 minutes. */
  const untimed = () => [point()];
  const none = () => [];

  test.each([CLAUDE, 'global.anthropic.claude-haiku-4-5-20251001-v1:0', 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-opus-4-5-20251101-v1:0', 'anthropic.claude-opus-4-6-v1', 'anthropic.claude-sonnet-5-20270101-v1:0'])(
    'to Claude 4.5 and later (%s): on a tool, on the system, inside a tool result and on the user\'s text, each after its block (the system\'s and a result\'s after the whole), its ttl as sent', async (model) => {
      expect(await received('bedrock', turn(model), 'anthropic')).toEqual(converse(points));
    });

  test.each(['anthropic.claude-3-7-sonnet-20250219-v1:0', 'us.anthropic.claude-3-5-haiku-20241022-v1:0', 'anthropic.claude-sonnet-4-20250514-v1:0', 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-opus-4-1-20250805-v1:0'])(
    'to an earlier Claude (%s), whose cache lasts 5 minutes only (AWS documents the 1-hour ttl for Claude 4.5): the same cache points, without the ttl', async (model) => {
      expect(await received('bedrock', turn(model), 'anthropic')).toEqual(converse(untimed));
    });

  test('to Amazon Nova, in the system and the messages (AWS documents no cache point among its tools), without the ttl; to a model that takes none (Bedrock refuses the request), or an id that does not say, none', async () => {
    expect(await received('bedrock', turn('us.amazon.nova-pro-v1:0'), 'anthropic')).toEqual(converse(untimed, none));
    for (const model of ['meta.llama3-3-70b-instruct-v1:0', 'anthropic.claude-3-5-sonnet-20241022-v2:0', 'anthropic.claude-3-haiku-20240307-v1:0', 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6']) {
      expect(await received('bedrock', turn(model), 'anthropic')).toEqual(converse(none));
    }
  });

  test('to Claude, on an assistant\'s block, on a tool_result itself, and the request\'s own (automatic caching: up to the last block)', async () => {
    const body = {
      model: CLAUDE, max_tokens: 300, stream: true, cache_control: EPHEMERAL,
      tools: [{ name: 'Read', input_schema: READ }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: QUESTION }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Reading.', cache_control: EPHEMERAL }, call] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'line 1', cache_control: EPHEMERAL }] },
        { role: 'assistant', content: 'It has one line.' },
        { role: 'user', content: 'Thanks.' },
      ],
    };
    expect(await received('bedrock', body, 'anthropic')).toEqual({
      messages: [
        { role: 'user', content: [{ text: QUESTION }] },
        { role: 'assistant', content: [{ text: 'Reading.' }, toolUse, point()] },
        { role: 'user', content: [{ toolResult: { toolUseId: 'toolu_1', content: [{ text: 'line 1' }] } }, point()] },
        { role: 'assistant', content: [{ text: 'It has one line.' }] },
        { role: 'user', content: [{ text: 'Thanks.' }, point()] },
      ],
      toolConfig: { tools: [{ toolSpec: { name: 'Read', inputSchema: { json: READ } } }] },
      inferenceConfig: { maxTokens: 300 },
    });
  });
});

describe('what an upstream has no word for: a 400 in the client\'s shape that names it, and the upstream not called', () => {
  test.each(chatRefusals)('OpenAI client, %s upstream: %j', async (format, fields, message) => {
    const g = await gateway(format);
    const before = g.up.received.length;
    const res = await post(g.url, chatRequest(fields));
    expect([res.status, JSON.parse(res.body.toString())]).toEqual([400, { error: { message, type: 'invalid_request_error', code: 'ERR_BAD_REQUEST' } }]);
    expect(g.up.received.length).toBe(before);
  });

  test.each(messagesRefusals)('Anthropic client, %s upstream: %j', async (format, fields, message) => {
    const g = await gateway(format);
    const before = g.up.received.length;
    const res = await post(g.url, messagesRequest(fields), '/v1/messages', ANTHROPIC_HEADERS);
    expect([res.status, JSON.parse(res.body.toString())]).toEqual([400, { type: 'error', error: { type: 'invalid_request_error', message } }]);
    expect(g.up.received.length).toBe(before);
  });
});

describe('end to end: the official clients ask a gemini upstream for JSON by a schema', () => {
  const ANSWER = { city: 'Paris' };
  const event = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  const body = event({ candidates: [{ content: { parts: [{ text: '{"city":' }], role: 'model' }, index: 0 }], usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } })
    + event({ candidates: [{ content: { parts: [{ text: ' "Paris"}' }], role: 'model' }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 6, totalTokenCount: 15 } });
  let g: Running;
  beforeAll(async () => {
    g = await gateway('gemini');
    g.up.scripts.set('json', { pieces: [Buffer.from(body)] });
  });

  test('openai: chat.completions.create({ response_format }), whole and streamed', async () => {
    const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'test-key', maxRetries: 0, timeout: 20_000 });
    const request = {
      model: 'json', messages: [{ role: 'user' as const, content: QUESTION }], seed: 7,
      response_format: { type: 'json_schema' as const, json_schema: { name: 'place', schema: SCHEMA, strict: true } },
    };
    const whole = await client.chat.completions.create(request);
    expect(JSON.parse(whole.choices[0].message.content!)).toEqual(ANSWER);
    const sent = { contents: [{ role: 'user', parts: [{ text: QUESTION }] }], generationConfig: { seed: 7, responseMimeType: 'application/json', responseJsonSchema: SCHEMA } };
    expect(g.up.received.at(-1)!.body).toEqual(sent);
    let text = '';
    for await (const chunk of await client.chat.completions.create({ ...request, stream: true })) text += chunk.choices[0]?.delta?.content ?? '';
    expect(JSON.parse(text)).toEqual(ANSWER);
    expect(g.up.received.at(-1)!.body).toEqual(sent);
    // and what Gemini has no word for, the SDK's error
    const e = await client.chat.completions.create({ ...request, n: 2 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect((e as InstanceType<typeof OpenAI.BadRequestError>).error).toEqual({ message: 'n cannot be carried to the gemini upstream: the relay follows one choice', type: 'invalid_request_error', code: 'ERR_BAD_REQUEST' });
  });

  test('anthropic: messages.create({ output_config: { format } })', async () => {
    const client = new Anthropic({ baseURL: g.url, apiKey: 'test-key', maxRetries: 0, timeout: 20_000 });
    const msg = await client.messages.create({ model: 'json', max_tokens: 64, messages: [{ role: 'user', content: QUESTION }], output_config: { format: { type: 'json_schema', schema: SCHEMA } } });
    expect(msg.content.map((b) => (b.type === 'text' ? JSON.parse(b.text) as unknown : b.type))).toEqual([ANSWER]);
    expect(g.up.received.at(-1)!.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: QUESTION }] }], generationConfig: { maxOutputTokens: 64, responseMimeType: 'application/json', responseJsonSchema: SCHEMA },
    });
  });
});
