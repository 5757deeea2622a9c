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
// This folder: upstreamRequest here, which runs the steps common to every upstream over the
// registry of their descriptions (UPSTREAMS); errors.mjs; content.mjs, what every translation reads
// of the middle form; from-messages.mjs, an Anthropic client's request in it; params.mjs, the
// parameters' common rules; upstreams/, a file per upstream format with its translation of the
// history, its row of the parameters and its description (its path, credential, headers, …);
// bedrock-signing.mjs. A new upstream format is its file there and its line in UPSTREAMS.
import { describeFormat } from 'seam-stream';
import { RequestError } from './errors.mjs';
import { isObject } from './content.mjs';
import { chatFromMessages } from './from-messages.mjs';
import { Params } from './params.mjs';
import { signedQuery, signing } from './bedrock-signing.mjs';
import { openai } from './upstreams/openai.mjs';
import { openaiResponses } from './upstreams/openai-responses.mjs';
import { anthropic } from './upstreams/anthropic.mjs';
import { ollama } from './upstreams/ollama.mjs';
import { ddg } from './upstreams/ddg.mjs';
import { gemini } from './upstreams/gemini.mjs';
import { bedrock } from './upstreams/bedrock.mjs';
import { bedrockInvoke } from './upstreams/bedrock-invoke.mjs';

export { RequestError, GatewayConfigError } from './errors.mjs';
export { chatFromMessages } from './from-messages.mjs';
export { bedrockLacks, signedQuery } from './bedrock-signing.mjs';

/**
 * The gateway's choices of words in its translations, by default (createGateway's options of the
 * same names; upstreamRequest's `choices` given in part are these for the rest).
 */
export const SETTINGS = Object.freeze({ openaiMaxTokensField: 'max_completion_tokens', anthropicMaxTokens: 4096, responsesSummary: 'auto' });

/**
 * The upstream formats, each by its description (in its file under upstreams/):
 * - `path(chat)`: its path under the base URL's (`chat`: the request in Chat's form, or the
 *   client's own where it passes as it is); a RequestError where the request lacks what the path
 *   holds (gemini's and Bedrock's model);
 * - `query` (optional): the query's parameters set among the base URL's (gemini's `alt=sse`);
 * - `credential` (optional): the header the client's key goes in (`authorization`: as a bearer);
 *   none for a signed upstream;
 * - `sign(hostname, env)` (optional): the signer of the request (Bedrock's SigV4), which the gateway
 *   calls once it has the body's bytes;
 * - `headers(client, passes)` (optional): the format's own headers, from the client's (`passes`:
 *   the client's request passes as it is);
 * - `dialect` (optional): the client API whose request passes as it is, not through Chat's form;
 *   `asSent(body)` (optional): what it passes as, where not the body itself (Claude on Bedrock's);
 * - `body(chat, messages, settings)`: the payload, from the request in Chat's form and its
 *   messages (upstreamRequest's `settings`);
 * - `params(p, out)`: the parameters' row: the request's parameters (Params `p`) written into the
 *   payload `out`.
 */
const UPSTREAMS = Object.freeze({ openai, 'openai-responses': openaiResponses, anthropic, ollama, ddg, gemini, bedrock, 'bedrock-invoke': bedrockInvoke });

/**
 * The key a client presented: `authorization: Bearer KEY`, its scheme in any case (`bearer`,
 * `BEARER`: HTTP's schemes are, RFC 9110 §11.1), else Anthropic's `x-api-key: KEY`; the key without
 * the spaces around it, undefined for none. The one reading of it: the gateway's own key check
 * (server/keys.mjs) and the key it passes on to the upstream (upstreamRequest) read it alike.
 */
export function clientKey(headers) {
  const auth = headers.authorization;
  if (typeof auth === 'string' && /^bearer /i.test(auth)) return auth.slice(7).trim();
  const key = headers['x-api-key'];
  return typeof key === 'string' ? key.trim() : undefined;
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
 * How a client's request becomes the upstream's, as the format's description says (UPSTREAMS):
 * `{ protocol, hostname, port, path, headers, payload }`, its path under the base URL's (ddg's
 * the base URL's own: the endpoint itself), and for a signed upstream (bedrock, bedrock-invoke)
 * `sign(body)`: the headers with SigV4's for the body's bytes (credentials from `env`'s AWS_*
 * variables). `dialect` is the client's API (`openai`: Chat Completions; `anthropic`: Messages).
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
  // (describeFormat throws a TypeError for a name that is not a format: UPSTREAMS has each format)
  // (the answer's bytes are read as they come: none in a content coding, which an upstream may use
  // for a request that names none, RFC 9110 12.5.3)
  const out = { 'content-type': 'application/json', accept: describeFormat(format).contentType, 'accept-encoding': 'identity' };
  const upstream = UPSTREAMS[format];
  const key = clientKey(headers);
  // the client speaks the upstream's own API (or, to Claude on Bedrock, Anthropic's): its body passes as it is
  const passes = dialect === upstream.dialect;
  const chat = passes || dialect === 'openai' ? body : chatFromMessages(body, format);
  if (!passes) {
    if (!Array.isArray(chat.messages)) throw new RequestError('messages must be an array');
    checkShapes(chat.messages);
  }
  const path = prefix + upstream.path(chat) || '/';
  let payload;
  if (passes) payload = upstream.asSent ? upstream.asSent(body) : body;
  else {
    payload = upstream.body(chat, chat.messages, settings);
    const p = new Params(chat, format, settings);
    upstream.params(p, payload);
    p.finish();
  }
  Object.assign(out, upstream.headers?.(headers, passes));
  const header = upstream.credential;
  if (header !== undefined && key !== undefined) out[header] = header === 'authorization' ? `Bearer ${key}` : key;
  // (a signed upstream's query goes as SigV4 writes it, the query its signature is over)
  let query = upstream.sign !== undefined ? signedQuery(url.search) : url.search;
  if (upstream.query !== undefined) {
    const q = new URLSearchParams(url.search);
    for (const [k, v] of Object.entries(upstream.query)) q.set(k, v);
    query = `?${q}`;
  }
  const target = { protocol: url.protocol, hostname: url.hostname, port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80), path: path + query, headers: out, payload };
  // SigV4 over the body as sent: the gateway signs once it has the body's bytes
  if (upstream.sign !== undefined) target.sign = signing(upstream.sign(url.hostname, env), url, target, out);
  return target;
}
