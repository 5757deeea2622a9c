// The gateway's requests: what a client sends (OpenAI Chat Completions at `/v1/chat/completions`,
// Anthropic Messages at `/v1/messages`) becomes the upstream's request in its own format, tools
// and tool results included, or tool calling does not work end to end.
//
// A request in the upstream's own dialect passes as it is, and so does an Anthropic client's to
// Claude on Bedrock (`bedrock-invoke`, whose body is Anthropic's: invokeFromMessages, with
// Bedrock's few words of its own). Otherwise it goes through one middle form, OpenAI Chat's
// (Anthropic Messages → Chat → the upstream's): its text, images, tools, tool choice, the
// assistant's tool calls and the tool results in the history, and every parameter of the request
// (params.mjs, "The request's parameters": what is carried, what is ignored and why). What the
// upstream has no word for is refused with a RequestError (a 400), never dropped in silence,
// except what exists only for the provider that wrote it: Anthropic's thinking blocks in the
// history (their signatures are good only to Claude, direct or on Bedrock) are left out for any
// other upstream; and what changes nothing in the answer (an end user's id, tags, caching, the
// service tier), ignored where the upstream has no word of its own for it.
//
// This folder: upstreamRequest here, with the table of the parameters' rows (PARAMS); errors.mjs;
// content.mjs, what every translation reads of the middle form; from-messages.mjs, an Anthropic
// client's request in it; params.mjs, the parameters' common rules; upstreams/, a file per upstream
// format with its translation of the history and its row of the parameters; bedrock-signing.mjs.
import { describeFormat } from 'seam-stream';
import { RequestError } from './errors.mjs';
import { isObject } from './content.mjs';
import { chatFromMessages } from './from-messages.mjs';
import { Params } from './params.mjs';
import { bedrockSigner, signing } from './bedrock-signing.mjs';
import { chatParams, toChat } from './upstreams/openai.mjs';
import { responsesParams, toResponses } from './upstreams/openai-responses.mjs';
import { anthropicParams, toAnthropic } from './upstreams/anthropic.mjs';
import { ollamaParams, toOllama } from './upstreams/ollama.mjs';
import { ddgParams, toDdg } from './upstreams/ddg.mjs';
import { geminiParams, toGemini } from './upstreams/gemini.mjs';
import { converseParams, toConverse } from './upstreams/bedrock.mjs';
import { invokeFromMessages } from './upstreams/bedrock-invoke.mjs';

export { RequestError, GatewayConfigError } from './errors.mjs';
export { chatFromMessages } from './from-messages.mjs';
export { bedrockLacks } from './bedrock-signing.mjs';

/**
 * The gateway's choices of words in its translations, by default (createGateway's options of the
 * same names; upstreamRequest's `choices` given in part are these for the rest).
 */
export const SETTINGS = Object.freeze({ openaiMaxTokensField: 'max_completion_tokens', anthropicMaxTokens: 4096, responsesSummary: 'auto' });

/** Each upstream's words for the request's parameters, written into its payload `out`. */
const PARAMS = {
  openai: chatParams,
  'openai-responses': responsesParams,
  anthropic: anthropicParams,
  ollama: ollamaParams,
  ddg: ddgParams,
  gemini: geminiParams,
  bedrock: converseParams,
  'bedrock-invoke': anthropicParams,
};

/** The request's parameters written into the upstream's payload (`chat`: the request in Chat's form; `settings`: upstreamRequest's). */
function carryParams(format, chat, out, settings) {
  const p = new Params(chat, format, settings);
  PARAMS[format](p, out);
  p.finish();
}

/** The client's credential as the gateway received it: a bearer, or Anthropic's x-api-key. */
function credentialOf(headers) {
  const auth = headers.authorization;
  if (typeof auth === 'string' && auth.startsWith('Bearer ')) return auth.slice(7);
  const key = headers['x-api-key'];
  return typeof key === 'string' ? key : undefined;
}

/** The client's messages as the translations read them: each an object, and each tool call of one (else the client's error, not the gateway's). */
function checkShapes(messages) {
  for (const [i, m] of messages.entries()) {
    if (!isObject(m)) throw new RequestError(`messages[${i}] must be an object`);
    const calls = m.tool_calls;
    if (calls !== undefined && calls !== null && !(Array.isArray(calls) && calls.every(isObject))) throw new RequestError(`messages[${i}].tool_calls must be an array of objects`);
  }
}

/**
 * How a client's request becomes the upstream's: its path under the base URL, its headers and
 * its body. `dialect` is the client's API (`openai`: Chat Completions; `anthropic`: Messages).
 * ddg: the base URL is the endpoint itself (its path is used as given); it takes text only.
 * gemini: `{base}/v1beta/models/{model}:streamGenerateContent?alt=sse`, the key in `x-goog-api-key`.
 * bedrock: `{base}/model/{model}/converse-stream`, a Converse body, and `sign(body)`: the SigV4
 * headers for the body's bytes (credentials from `env`'s AWS_* variables).
 * `choices`: the gateway's choices of words (SETTINGS' where not given), `openaiMaxTokensField`
 * (`max_completion_tokens` or `max_tokens`): the field an Anthropic client's max_tokens is written
 * in for an openai upstream; `anthropicMaxTokens`: the max_tokens of a request that names none,
 * for an upstream whose API needs one; `responsesSummary` ('auto', 'concise', 'detailed', or
 * 'none'): the reasoning summary asked of an openai-responses upstream when the client asks to
 * see the reasoning.
 */
export function upstreamRequest(format, base, body, headers, dialect = 'openai', env = process.env, choices = {}) {
  const settings = { ...SETTINGS, ...choices };
  const url = typeof base === 'string' ? new URL(base) : base;
  const prefix = url.pathname.replace(/\/+$/, '');
  const out = { 'content-type': 'application/json', accept: describeFormat(format).contentType };
  const key = credentialOf(headers);
  const same = dialect === format; // the client speaks the upstream's own API: its body passes as it is
  // (an Anthropic client's body for Claude on Bedrock passes as well: invokeFromMessages)
  const claudeOnBedrock = dialect === 'anthropic' && format === 'bedrock-invoke';
  const chat = same || claudeOnBedrock || dialect === 'openai' ? body : chatFromMessages(body, format);
  if (!same && !claudeOnBedrock && !Array.isArray(chat.messages)) throw new RequestError('messages must be an array');
  const messages = chat.messages;
  if (!same && !claudeOnBedrock) checkShapes(messages);
  let path;
  let payload;
  switch (format) {
    case 'openai':
      path = `${prefix}/v1/chat/completions`;
      if (!same) chat.messages = toChat(messages);
      payload = chat;
      if (!same) carryParams(format, chat, payload, settings);
      break;
    case 'openai-responses':
      path = `${prefix}/v1/responses`;
      payload = toResponses(chat, messages);
      carryParams(format, chat, payload, settings);
      break;
    case 'anthropic':
      path = `${prefix}/v1/messages`;
      payload = same ? body : toAnthropic(chat, messages, settings);
      if (!same) carryParams(format, chat, payload, settings);
      out['anthropic-version'] = typeof headers['anthropic-version'] === 'string' && same ? headers['anthropic-version'] : '2023-06-01';
      if (same && typeof headers['anthropic-beta'] === 'string') out['anthropic-beta'] = headers['anthropic-beta'];
      break;
    case 'ollama':
      path = `${prefix}/api/chat`;
      payload = toOllama(chat, messages);
      carryParams(format, chat, payload, settings);
      break;
    case 'ddg':
      path = prefix || '/';
      payload = toDdg(chat, messages);
      carryParams(format, chat, payload, settings);
      break;
    case 'gemini': {
      // the model is in the path; the key in x-goog-api-key (the gateway's own, or the client's bearer)
      if (typeof chat.model !== 'string' || chat.model === '') throw new RequestError('a gemini upstream needs a model name');
      // (models/NAME or tunedModels/NAME: each segment of the name percent-encoded)
      const model = (/^(models|tunedModels)\//.test(chat.model) ? chat.model : `models/${chat.model}`).split('/').map(encodeURIComponent).join('/');
      path = `${prefix}/v1beta/${model}:streamGenerateContent`;
      payload = toGemini(chat, messages);
      carryParams(format, chat, payload, settings);
      if (key !== undefined) out['x-goog-api-key'] = key;
      const q = new URLSearchParams(url.search);
      q.set('alt', 'sse');
      return { protocol: url.protocol, hostname: url.hostname, port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80), path: `${path}?${q}`, headers: out, payload };
    }
    case 'bedrock': {
      if (typeof chat.model !== 'string' || chat.model === '') throw new RequestError('a bedrock upstream needs a model id');
      path = `${prefix}/model/${encodeURIComponent(chat.model)}/converse-stream`;
      payload = toConverse(chat, messages);
      carryParams(format, chat, payload, settings);
      const target = { protocol: url.protocol, hostname: url.hostname, port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80), path: path + url.search, headers: out, payload };
      // SigV4 over the body as sent: the gateway signs once it has the body's bytes
      const sign = bedrockSigner(url.hostname, env);
      target.sign = signing(sign, url, target, out, path);
      return target;
    }
    case 'bedrock-invoke': {
      // Claude on Bedrock: Anthropic's Messages body, without model and stream, with Bedrock's
      // anthropic_version: an Anthropic client's as it sent it (invokeFromMessages), an OpenAI
      // client's written as the anthropic upstream's is
      if (typeof chat.model !== 'string' || chat.model === '') throw new RequestError('a bedrock upstream needs a model id');
      path = `${prefix}/model/${encodeURIComponent(chat.model)}/invoke-with-response-stream`;
      if (claudeOnBedrock) payload = invokeFromMessages(body);
      else {
        const messagesBody = toAnthropic(chat, messages, settings);
        carryParams(format, chat, messagesBody, settings);
        const { model: _model, stream: _stream, ...anthropicBody } = messagesBody;
        payload = { anthropic_version: 'bedrock-2023-05-31', ...anthropicBody };
      }
      const target = { protocol: url.protocol, hostname: url.hostname, port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80), path: path + url.search, headers: out, payload };
      target.sign = signing(bedrockSigner(url.hostname, env), url, target, out, path);
      return target;
    }
    default:
      throw new TypeError(`unknown upstream format ${format}`);
  }
  // the credential in the header the format uses: Anthropic's x-api-key, a bearer elsewhere
  if (key !== undefined) out[format === 'anthropic' ? 'x-api-key' : 'authorization'] = format === 'anthropic' ? key : `Bearer ${key}`;
  return { protocol: url.protocol, hostname: url.hostname, port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80), path: path + url.search, headers: out, payload };
}
