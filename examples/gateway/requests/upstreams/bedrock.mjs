// OpenAI Chat → a bedrock upstream, Bedrock Converse (`POST {base}/model/{model}/converse-stream`,
// signed: ../bedrock-signing.mjs): the history as Converse's messages (toConverse), the parameters'
// row (converseParams), and the upstream's description (bedrock).
import { RequestError } from '../errors.mjs';
import { bedrockSigner } from '../bedrock-signing.mjs';
import { CACHE, FAILED, argumentsObject, dataUrl, given, isObject, modelInPath, modelOf, textOf, textThenImages, toolsOf, urlOf, withImages } from '../content.mjs';
import { END_USER, put } from '../params.mjs';

/** An image (a data: URL of png, jpeg, gif or webp) as a Converse image block, its bytes in base64. */
function converseImage(url) {
  const d = dataUrl(url);
  const format = d && /^image\/(png|jpeg|gif|webp)$/.exec(d.mediaType)?.[1];
  if (!format) throw new RequestError('a bedrock upstream takes images as data: URLs of png, jpeg, gif or webp only');
  return { image: { format, source: { bytes: d.data } } };
}

/**
 * Whether a Converse request's model takes a tool result's `status`, which AWS documents for
 * Anthropic's Claude and Amazon Nova only: its id or inference profile says so
 * (`anthropic.claude-…`, `us.anthropic.claude-…`, `amazon.nova-…`, or an ARN that names one).
 */
const takesStatus = (model) => typeof model === 'string' && (model.includes('anthropic.') || model.includes('amazon.nova'));

/**
 * A cachePoint block, where an Anthropic client's cache_control asked for the prompt to be cached up
 * to there (CACHE): Converse's word for it in the system, a message's content and the tools. Left
 * out, the same answer comes, but the whole prompt is billed at the full input price on every turn.
 * Its `ttl` ('5m' or '1h', AWS's CachePointBlock) is the client's where the model takes one (`ttl`:
 * takesTtl), and otherwise left out: the prompt is then cached for Bedrock's default, 5 minutes
 * (how long changes nothing in the answer), where Bedrock could refuse the request for it.
 */
const cachePoint = (c, ttl) => ({ cachePoint: { type: 'default', ...(ttl && typeof c?.ttl === 'string' ? { ttl: c.ttl } : {}) } });

/**
 * Whether a Converse request's model takes a cache point's `ttl`: AWS's prompt-caching guide
 * documents the 1-hour TTL for Claude Opus 4.5, Haiku 4.5 and Sonnet 4.5, and every other model
 * caches for 5 minutes only; Claude after 4.5 is taken to as well. Its id or inference profile says
 * which, by the version after the model's family (`anthropic.claude-sonnet-4-5-20250929-v1:0`,
 * `us.anthropic.claude-opus-4-6-v1`; `anthropic.claude-sonnet-4-20250514-v1:0` is 4, its date no
 * minor version).
 */
function takesTtl(model) {
  const v = /anthropic\.claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?!\d)/.exec(model);
  if (v === null) return false;
  const major = Number(v[1]);
  return major > 4 || (major === 4 && Number(v[2] ?? 0) >= 5);
}

/**
 * Where a Converse request's model takes cache points: AWS documents prompt caching for Claude from
 * 3.5 Haiku and 3.7 Sonnet on (system, messages, tools) and for Amazon Nova (system and messages),
 * and Bedrock refuses a request with a cache point for another model ("You invoked an unsupported
 * model, or your request did not allow prompt caching"): its id or inference profile says which
 * (`anthropic.claude-…`, `us.amazon.nova-…`, an ARN that names one). `{ messages, tools, ttl }`
 * (`ttl`: whether it takes theirs, takesTtl), or undefined: for another model, or an id that does
 * not say (an application inference profile's ARN), the marks are left out, as an upstream with no
 * word for them leaves them.
 */
function cachePointsOf(model) {
  if (typeof model !== 'string') return undefined;
  if (model.includes('anthropic.claude-')) return /anthropic\.claude-(v2|instant|3-(opus|sonnet|haiku)|3-5-sonnet)/.test(model) ? undefined : { messages: true, tools: true, ttl: takesTtl(model) };
  return model.includes('amazon.nova') ? { messages: true, tools: false, ttl: false } : undefined;
}

/** Chat's history as Bedrock Converse's `messages`: toolUse and toolResult content blocks, system apart; a cachePoint after what is marked (CACHE), where the model takes one. */
function toConverse(body, messages) {
  const out = { messages: [] };
  const system = [];
  let results = null;
  const points = cachePointsOf(body.model);
  /** The cache point a message's or a tool's mark (CACHE) asks for, where the model takes one (`where`: messages or tools), else none. */
  const marked = (x, where = 'messages') => (x[CACHE] !== undefined && points?.[where] ? [cachePoint(x[CACHE], points.ttl)] : []);
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') {
      system.push({ text: textOf(m.content) });
      system.push(...marked(m));
      continue;
    }
    if (m.role === 'tool') {
      // A failed result (an Anthropic client's is_error) is a toolResult of status "error" for
      // Claude and Nova, with its content as the client sent it: Converse's word for is_error. AWS
      // documents `status` as taken by those models only, and another model
      // may refuse a request that has it: for any other model, or an id that does not say which (an
      // application inference profile's ARN), the failure stays in words, "Error: " before the
      // result's text, as for the upstreams that have no word for it.
      const failed = m[FAILED] !== undefined && takesStatus(body.model);
      const result = failed ? m[FAILED] : m.content;
      // (a result's images are image blocks of its content, beside its text, in their order)
      const content = withImages(result, (image) => converseImage(urlOf(image)), (text) => ({ text })) ?? [{ text: textOf(result) }];
      const block = { toolResult: { toolUseId: m.tool_call_id, content } };
      if (failed) block.toolResult.status = 'error';
      if (results === null) out.messages.push((results = { role: 'user', content: [] }));
      results.content.push(block);
      results.content.push(...marked(m));
      continue;
    }
    const content = textThenImages(m.content, (image) => converseImage(urlOf(image)));
    if (m.role === 'assistant') {
      results = null;
      for (const c of Array.isArray(m.tool_calls) ? m.tool_calls : []) content.push({ toolUse: { toolUseId: c.id, name: c.function?.name, input: argumentsObject(c) } });
      content.push(...marked(m));
      out.messages.push({ role: 'assistant', content });
      continue;
    }
    if (m.role !== 'user') throw new RequestError(`a message's role ${JSON.stringify(m.role)} cannot be carried to a bedrock upstream`);
    content.push(...marked(m));
    if (results !== null) {
      results.content.push(...content);
      results = null;
    } else out.messages.push({ role: 'user', content });
  }
  if (system.length > 0) out.system = system;
  const tools = toolsOf(body);
  const c = given(body.tool_choice);
  if (c === 'none' && tools.length > 0) throw new RequestError('tool_choice "none" has no word in Bedrock Converse: leave the tools out instead');
  if (tools.length > 0) {
    out.toolConfig = { tools: tools.flatMap((f) => [
      { toolSpec: { name: f.name, ...(f.description !== undefined ? { description: f.description } : {}), inputSchema: { json: f.parameters ?? { type: 'object', properties: {} } } } },
      ...marked(f, 'tools'),
    ]) };
    if (c === 'auto') out.toolConfig.toolChoice = { auto: {} };
    else if (c === 'required') out.toolConfig.toolChoice = { any: {} };
    else if (isObject(c) && typeof c.function?.name === 'string') out.toolConfig.toolChoice = { tool: { name: c.function.name } };
    else if (c !== undefined && c !== 'none') throw new RequestError(`tool_choice ${JSON.stringify(c)}`);
  }
  return out;
}

/**
 * Whether a map fits Converse's `requestMetadata`: at most 16 pairs, each key of 1 to 256 and each
 * value of up to 256 letters, digits, white space and `._:/=+$@-` (AWS's API reference: the rules
 * its invocation logs are filtered by); Bedrock refuses a request whose map does not.
 */
const fitsMetadata = (m) => Object.keys(m).length <= 16 && Object.entries(m).every(([k, v]) => typeof v === 'string' && /^[a-zA-Z0-9\s._:/=+$@-]{1,256}$/.test(k) && /^[a-zA-Z0-9\s._:/=+$@-]{0,256}$/.test(v));

/**
 * The client's tags and end user's id as Converse's `requestMetadata`, the key-value pairs Bedrock
 * writes in its invocation logs beside the request, where they were dropped: an OpenAI client's
 * `metadata` as it is, its `user` and `safety_identifier` and an Anthropic client's
 * `metadata.user_id` under their own names (after the metadata's own, which a pair of that name
 * keeps). None changes the answer or its price: a map that does not fit (fitsMetadata) is left out
 * whole, as an upstream with no word for it leaves it, rather than refused.
 */
function requestMetadata(p) {
  const m = p.take('metadata');
  const out = isObject(m) ? { ...m } : {};
  const ids = [['user', p.take('user')], ['safety_identifier', p.take('safety_identifier')], ['user_id', given(p.chat[END_USER])]];
  for (const [k, v] of ids) if (v !== undefined && !(k in out)) out[k] = v;
  return Object.keys(out).length > 0 && fitsMetadata(out) ? out : undefined;
}

/** The request's parameters in Converse's words (this upstream's row). */
function converseParams(p, out) {
  put(out, 'requestMetadata', requestMetadata(p));
  const inference = {};
  put(inference, 'maxTokens', p.first('max_tokens', 'max_completion_tokens'));
  put(inference, 'temperature', p.take('temperature'));
  put(inference, 'topP', p.take('top_p'));
  put(inference, 'stopSequences', p.stops());
  if (Object.keys(inference).length > 0) out.inferenceConfig = inference;
  // what Converse leaves to each model, in the words of the models that take it (Claude's
  // top_k and thinking); a model that does not take them answers 400
  const extra = {};
  put(extra, 'top_k', p.take('top_k'));
  const r = p.reasoning();
  if (r.level !== undefined) throw p.refuse('reasoning_effort', 'Converse has no common word for it');
  put(extra, 'thinking', r.thinking);
  if (Object.keys(extra).length > 0) out.additionalModelRequestFields = extra;
  const rf = p.responseFormat();
  if (rf?.type === 'json_object') throw p.refuse('response_format', 'its output format is a JSON schema (json_schema can be carried)');
  if (rf !== undefined) {
    // (a schema holds the output whatever strict says)
    const { name, description, schema } = rf.json_schema;
    const jsonSchema = { schema: JSON.stringify(schema) };
    put(jsonSchema, 'name', given(name));
    put(jsonSchema, 'description', given(description));
    out.outputConfig = { textFormat: { type: 'json_schema', structure: { jsonSchema } } };
  }
  p.noParallelSwitch();
}

/**
 * The bedrock upstream (index.mjs reads its description): the model in its path, and the request
 * signed with SigV4 (credentials from the gateway's AWS_* variables), not the client's key.
 */
export const bedrock = {
  path: (chat) => `/model/${modelInPath(modelOf(chat, 'a bedrock upstream needs a model id'))}/converse-stream`,
  sign: bedrockSigner,
  body: toConverse,
  params: converseParams,
};
