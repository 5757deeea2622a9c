// Anthropic Messages → OpenAI Chat (the middle form)
//
// An Anthropic client's request, its conversation and its parameters, in Chat's form, which each
// upstream's translation reads (index.mjs). A request to an anthropic upstream, or to Claude on
// Bedrock, passes as the client sent it and is not read here.
import { RequestError } from './errors.mjs';
import { CACHE, FAILED, given, isObject, textOf } from './content.mjs';
import { END_USER, NAMES, THINKING } from './params.mjs';

/**
 * An Anthropic Messages request in OpenAI Chat's form. For a `gemini` upstream, a thinking block of
 * no text right before a `tool_use` (where the relay writes a Gemini call's thoughtSignature for
 * Anthropic's clients) gives the call its signature back, where the middle form keeps it
 * (`extra_content.google.thought_signature`).
 */
export function chatFromMessages(body, format) {
  const out = { model: body.model, messages: [] };
  if (body.stream !== undefined) out.stream = body.stream;
  paramsFromMessages(body, out, format);
  if (body.system !== undefined) {
    const system = textOf(body.system);
    if (system !== '') out.messages.push(cached({ role: 'system', content: system }, body.system));
  }
  if (!Array.isArray(body.messages)) throw new RequestError('messages must be an array');
  for (const m of body.messages) {
    if (m?.role !== 'user' && m?.role !== 'assistant') throw new RequestError(`a message's role must be user or assistant, not ${JSON.stringify(m?.role)}`);
    if (typeof m.content === 'string') {
      out.messages.push({ role: m.role, content: m.content });
      continue;
    }
    if (!Array.isArray(m.content)) throw new RequestError('a message\'s content must be a string or an array of blocks');
    if (m.role === 'assistant') {
      let text = '';
      const calls = [];
      let signature; // (the signature of an empty thinking block just before: a Gemini call's)
      for (const b of m.content) {
        const before = signature;
        signature = undefined;
        if (b?.type === 'text') text += b.text;
        else if (b?.type === 'tool_use') {
          const call = { id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } };
          if (before !== undefined) call.extra_content = { google: { thought_signature: before } };
          calls.push(call);
        } else if (b?.type === 'thinking' && format === 'gemini' && b.thinking === '' && typeof b.signature === 'string' && b.signature !== '') {
          signature = b.signature;
        } else if (b?.type === 'thinking' || b?.type === 'redacted_thinking') continue; // Anthropic's own
        else throw new RequestError(`an assistant block of type ${JSON.stringify(b?.type)} cannot be carried to this upstream`);
      }
      const a = cached({ role: 'assistant', content: calls.length > 0 && text === '' ? null : text }, m.content);
      if (calls.length > 0) a.tool_calls = calls;
      out.messages.push(a);
      continue;
    }
    // a user turn: its tool results first (Chat wants them right after the assistant's calls), then its text and images
    const parts = [];
    const blocks = []; // (those of the user's message: its parts' blocks)
    for (const b of m.content) {
      if (b?.type === 'tool_result') {
        out.messages.push(cached(toolMessage(b), [...(Array.isArray(b.content) ? b.content : []), b]));
        continue;
      }
      blocks.push(b);
      if (b?.type === 'text') parts.push({ type: 'text', text: b.text });
      else if (b?.type === 'image' && b.source?.type === 'base64') parts.push({ type: 'image_url', image_url: { url: `data:${b.source.media_type};base64,${b.source.data}` } });
      else if (b?.type === 'image' && b.source?.type === 'url') parts.push({ type: 'image_url', image_url: { url: b.source.url } });
      else throw new RequestError(`a user block of type ${JSON.stringify(b?.type)} cannot be carried to this upstream`);
    }
    if (parts.length > 0) out.messages.push(cached({ role: 'user', content: parts.every((p) => p.type === 'text') ? parts.map((p) => p.text).join('') : parts }, blocks));
  }
  // (the request's own cache_control: Anthropic's automatic caching, the prompt cached up to its last block)
  const last = out.messages.at(-1);
  if (given(body.cache_control) !== undefined && last !== undefined && last[CACHE] === undefined) last[CACHE] = body.cache_control;
  if (given(body.tools) !== undefined) {
    if (!Array.isArray(body.tools)) throw new RequestError('tools must be an array');
    // (an empty list is no tools, and is written as none: OpenAI refuses `tools: []`)
    if (body.tools.length > 0) out.tools = body.tools.map((t) => {
      if (!isObject(t) || typeof t.name !== 'string' || (t.type !== undefined && t.type !== 'custom') || !isObject(t.input_schema)) {
        throw new RequestError(`the tool ${JSON.stringify(t?.name ?? t?.type)} is not a client tool with an input_schema (the provider's own tools cannot be carried to this upstream)`);
      }
      const f = { name: t.name, parameters: t.input_schema };
      if (t.description !== undefined) f.description = t.description;
      if (given(t.cache_control) !== undefined) f[CACHE] = t.cache_control;
      return { type: 'function', function: f };
    });
  }
  const choice = given(body.tool_choice);
  if (choice !== undefined) {
    if (!isObject(choice)) throw new RequestError('tool_choice must be an object');
    if (choice.type === 'auto') out.tool_choice = 'auto';
    else if (choice.type === 'any') out.tool_choice = 'required';
    else if (choice.type === 'none') out.tool_choice = 'none';
    else if (choice.type === 'tool') out.tool_choice = { type: 'function', function: { name: choice.name } };
    else throw new RequestError(`tool_choice of type ${JSON.stringify(choice.type)}`);
    if (choice.disable_parallel_tool_use === true) out.parallel_tool_calls = false;
  }
  return out;
}

/** A message of the middle form marked (CACHE) with the last cache_control among the client's blocks it came from, if any. */
function cached(message, blocks) {
  if (Array.isArray(blocks)) {
    for (const b of blocks) if (given(b?.cache_control) !== undefined) message[CACHE] = b.cache_control;
  }
  return message;
}

/**
 * An Anthropic tool_result as the middle form's tool message. An error (`is_error`), which Chat's
 * tool message has no field for, is said in its content: its text after "Error: ", or "Error:"
 * before an image alone; the content as the client sent it is kept under FAILED, for an upstream
 * that has a word for a failure.
 */
function toolMessage(b) {
  const content = toolResultContent(b);
  if (b.is_error !== true) return { role: 'tool', tool_call_id: b.tool_use_id, content };
  let said;
  if (typeof content === 'string') said = `Error: ${content}`;
  else if (content[0].type === 'text') said = [{ type: 'text', text: `Error: ${content[0].text}` }, ...content.slice(1)];
  else said = [{ type: 'text', text: 'Error:' }, ...content];
  return { role: 'tool', tool_call_id: b.tool_use_id, content: said, [FAILED]: content };
}

/**
 * An Anthropic tool_result's content in the middle form: its text, or, with images, its text and
 * image_url parts in their order (a tool message of parts, which each translation carries in its
 * upstream's words, or refuses). Any other block is refused.
 */
function toolResultContent(b) {
  const blocks = Array.isArray(b.content) ? b.content : [];
  const parts = [];
  for (const x of blocks) {
    if (x?.type === 'text') {
      if (typeof x.text === 'string' && x.text !== '') parts.push({ type: 'text', text: x.text });
    } else if (x?.type === 'image' && x.source?.type === 'base64') parts.push({ type: 'image_url', image_url: { url: `data:${x.source.media_type};base64,${x.source.data}` } });
    else if (x?.type === 'image' && x.source?.type === 'url') parts.push({ type: 'image_url', image_url: { url: x.source.url } });
    else if (x?.type === 'image') throw new RequestError(`a tool_result's image of source type ${JSON.stringify(x.source?.type)} cannot be carried to this upstream`);
    else throw new RequestError(`a tool_result's block of type ${JSON.stringify(x?.type)} cannot be carried to this upstream`);
  }
  return parts.some((p) => p.type === 'image_url') ? parts : textOf(b.content);
}

const THROUGH_CHAT = 'the gateway has no word for it in OpenAI Chat\'s form, through which it translates';

/**
 * Whether OpenAI's strict mode takes a JSON schema: every object schema in it closed
 * (`additionalProperties: false`) with every property required. Anthropic's structured outputs
 * also take optional properties, which OpenAI refuses in strict mode with a 400 ("'required' is
 * required to be supplied and to be an array including every key in properties"): an Anthropic
 * client's schema goes to OpenAI strict where strict mode takes it, and as a schema to follow
 * otherwise (without `strict`), rather than refused there.
 */
function strictable(schema) {
  if (Array.isArray(schema)) return schema.every(strictable);
  if (!isObject(schema)) return true;
  const objectLike = schema.type === 'object' || (Array.isArray(schema.type) && schema.type.includes('object')) || isObject(schema.properties);
  if (objectLike) {
    const keys = Object.keys(isObject(schema.properties) ? schema.properties : {});
    if (schema.additionalProperties !== false) return false;
    if (keys.length > 0 && (!Array.isArray(schema.required) || keys.some((k) => !schema.required.includes(k)))) return false;
  }
  // (the schemas inside it: by name in properties and definitions, in lists, or one)
  for (const k of ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']) {
    if (isObject(schema[k]) && !Object.values(schema[k]).every(strictable)) return false;
  }
  for (const k of ['items', 'prefixItems', 'anyOf', 'allOf', 'oneOf', 'not', 'if', 'then', 'else', 'contains', 'additionalItems']) {
    if (schema[k] !== undefined && !strictable(schema[k])) return false;
  }
  return true;
}

/**
 * An Anthropic request's parameters in Chat's words (the conversation's fields are chatFromMessages'):
 * thinking kept aside for the upstreams that have a word for it.
 */
function paramsFromMessages(body, out, format) {
  const names = {};
  for (const [k, raw] of Object.entries(body)) {
    const v = given(raw);
    if (v === undefined) continue;
    switch (k) {
      case 'model': case 'messages': case 'system': case 'tools': case 'tool_choice': case 'stream':
        break; // (the conversation's)
      case 'max_tokens': case 'temperature': case 'top_p': case 'top_k':
        out[k] = v;
        break;
      case 'stop_sequences':
        out.stop = v;
        names.stop = k;
        break;
      case 'thinking':
        out[THINKING] = v;
        break;
      case 'output_config': case 'output_format': { // (output_format: the beta's name of output_config.format)
        const config = k === 'output_format' ? { format: v } : v;
        if (!isObject(config)) throw new RequestError(`${k} must be an object`);
        for (const [key, value] of Object.entries(config)) {
          if (given(value) === undefined) continue;
          if (key === 'effort') {
            out.reasoning_effort = value;
            names.reasoning_effort = 'output_config.effort';
          } else if (key === 'format') {
            if (!isObject(value) || value.type !== 'json_schema' || !isObject(value.schema)) throw new RequestError(`${k === 'output_format' ? k : 'output_config.format'} must be { type: "json_schema", schema }`);
            // (Chat's json_schema must have a name; Anthropic's output is held to the schema, which is
            // what strict asks, where OpenAI's strict mode takes the schema: see strictable)
            out.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: value.schema, ...(strictable(value.schema) ? { strict: true } : {}) } };
            names.response_format = k === 'output_format' ? k : 'output_config.format';
          } else throw new RequestError(`output_config.${key} cannot be carried to the ${format} upstream: ${THROUGH_CHAT}`);
        }
        break;
      }
      // metadata.user_id: an id of the end user for the provider's abuse detection; service_tier and
      // speed: the capacity and the speed the answer is made with; cache_control and diagnostics:
      // prompt caching, and why it missed. None changes the answer: ignored for another upstream
      // (cache_control, with the blocks' own, is read with the conversation: CACHE; and
      // metadata.user_id is kept aside, END_USER: both for Converse, which has words for them).
      // context_management: the provider's own trimming of a long conversation (old tool results
      // cleared past a threshold); another upstream gets the conversation as it is, which is what
      // the client sent: ignored, as Claude Code may send it on every turn
      case 'metadata':
        if (isObject(v) && typeof v.user_id === 'string') out[END_USER] = v.user_id;
        break;
      case 'service_tier': case 'speed': case 'cache_control': case 'diagnostics': case 'context_management':
        break;
      case 'inference_geo': // (where the model runs: a promise the gateway cannot make for another provider)
      default:
        throw new RequestError(`${k} cannot be carried to the ${format} upstream: ${k === 'inference_geo' ? 'it says where Anthropic runs the model' : THROUGH_CHAT}`);
    }
  }
  out[NAMES] = names;
}
