// The gateway's requests: what a client sends (OpenAI Chat Completions at `/v1/chat/completions`,
// Anthropic Messages at `/v1/messages`) becomes the upstream's request in its own format, tools
// and tool results included, or tool calling does not work end to end.
//
// A request in the upstream's own dialect passes as it is, and so does an Anthropic client's to
// Claude on Bedrock (`bedrock-invoke`, whose body is Anthropic's: invokeFromMessages, with
// Bedrock's few words of its own). Otherwise it goes through one middle
// form, OpenAI Chat's (Anthropic Messages → Chat → the upstream's): its text, images, tools, tool
// choice, the assistant's tool calls and the tool results in the history, and every parameter of
// the request (below, "The request's parameters": what is carried, what is ignored and why). What
// the upstream has no word for is refused with a RequestError (a 400), never dropped in silence,
// except what exists only for the provider that wrote it: Anthropic's thinking blocks in the
// history (their signatures are good only to Claude, direct or on Bedrock) are left out for any
// other upstream; and
// what changes nothing in the answer (an end user's id, tags, caching, the service tier), ignored
// where the upstream has no word of its own for it.
import { describeFormat } from 'seam-stream';

/** A request the gateway cannot carry to its upstream: answered 400 in the client's API shape. */
export class RequestError extends Error {
  constructor(message) {
    super(message);
    this.name = 'RequestError';
  }
}

/**
 * The gateway's choices of words in its translations, by default (createGateway's options of the
 * same names; upstreamRequest's `choices` given in part are these for the rest).
 */
export const SETTINGS = Object.freeze({ openaiMaxTokensField: 'max_completion_tokens', anthropicMaxTokens: 4096, responsesSummary: 'auto' });

/**
 * What the gateway's own configuration lacks for a request (a bedrock upstream without its AWS
 * credentials or region): the gateway's fault, not the client's, so a 500 counted in
 * gateway_errors_total. Its message names what to set, never a value, and is shown to the client.
 */
export class GatewayConfigError extends Error {
  constructor(message) {
    super(message);
    this.name = 'GatewayConfigError';
  }
}

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

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

/** A message's content as text: a string, or the text of its parts. */
function textOf(c) {
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return '';
  let s = '';
  for (const p of c) s += typeof p === 'string' ? p : typeof p?.text === 'string' ? p.text : '';
  return s;
}

/** A data URL's media type and base64 payload, or undefined. */
function dataUrl(url) {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return m ? { mediaType: m[1], data: m[2] } : undefined;
}

/** Chat content parts: the images among them (as URLs), and whether anything but text and images is there. */
function imagesOf(content) {
  const out = [];
  if (!Array.isArray(content)) return out;
  for (const p of content) {
    if (p?.type === 'image_url') {
      const url = typeof p.image_url === 'string' ? p.image_url : p.image_url?.url;
      if (typeof url !== 'string') throw new RequestError('an image_url part without a url');
      out.push(url);
    } else if (p?.type !== 'text' && typeof p !== 'string') {
      throw new RequestError(`a content part of type ${JSON.stringify(p?.type)} cannot be carried to this upstream`);
    }
  }
  return out;
}

/**
 * A tool result's content with images among it, each part in an upstream's words (`image(url)`,
 * `text(text)`) in their order; undefined when it has no image (its text alone is the content).
 */
function withImages(content, image, text) {
  const parts = partsOf(content);
  return parts.some((p) => p.image !== undefined) ? parts.map((p) => (p.image !== undefined ? image(p.image) : text(p.text))) : undefined;
}

/** Content parts in their order, text and images (as URLs): a string is one text; text that is empty is left out. */
function partsOf(content) {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  const images = imagesOf(content); // (refuses what is neither)
  let i = 0;
  const out = [];
  for (const p of Array.isArray(content) ? content : []) {
    if (p?.type === 'image_url') out.push({ image: images[i++] });
    else {
      const text = typeof p === 'string' ? p : p.text;
      if (typeof text === 'string' && text !== '') out.push({ text });
    }
  }
  return out;
}

/**
 * The text that comes before a tool result's images where the upstream takes them only outside the
 * result (after the results, in a user turn: OpenAI Chat's, Gemini's), naming the call they came from.
 */
function resultImagesLabel(id, name, n) {
  return `${n === 1 ? 'The image' : `The ${n} images`} from the result of tool call ${id}${typeof name === 'string' ? ` (${name})` : ''}:`;
}

/** A tool call's arguments (JSON text) as the object a format that wants one sends. */
function argumentsObject(call) {
  const text = call?.function?.arguments;
  if (text === undefined || text === '') return {};
  let v;
  try { v = JSON.parse(text); } catch { v = undefined; }
  if (!isObject(v)) throw new RequestError(`the arguments of tool call ${JSON.stringify(call.id ?? '')} are not a JSON object`);
  return v;
}

function toolsOf(body) {
  if (given(body.tools) === undefined) return []; // (null: none, as a client that writes every field says it)
  if (!Array.isArray(body.tools)) throw new RequestError('tools must be an array');
  return body.tools.map((t) => {
    if (t?.type !== 'function' || !isObject(t.function) || typeof t.function.name !== 'string') {
      throw new RequestError('each tool must be { type: "function", function: { name, description?, parameters? } }');
    }
    return t.function;
  });
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages → OpenAI Chat (the middle form)

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
    if (system !== '') out.messages.push({ role: 'system', content: system });
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
      const a = { role: 'assistant', content: calls.length > 0 && text === '' ? null : text };
      if (calls.length > 0) a.tool_calls = calls;
      out.messages.push(a);
      continue;
    }
    // a user turn: its tool results first (Chat wants them right after the assistant's calls), then its text and images
    const parts = [];
    for (const b of m.content) {
      if (b?.type === 'tool_result') out.messages.push({ role: 'tool', tool_call_id: b.tool_use_id, content: toolResultContent(b) });
      else if (b?.type === 'text') parts.push({ type: 'text', text: b.text });
      else if (b?.type === 'image' && b.source?.type === 'base64') parts.push({ type: 'image_url', image_url: { url: `data:${b.source.media_type};base64,${b.source.data}` } });
      else if (b?.type === 'image' && b.source?.type === 'url') parts.push({ type: 'image_url', image_url: { url: b.source.url } });
      else throw new RequestError(`a user block of type ${JSON.stringify(b?.type)} cannot be carried to this upstream`);
    }
    if (parts.length > 0) out.messages.push({ role: 'user', content: parts.every((p) => p.type === 'text') ? parts.map((p) => p.text).join('') : parts });
  }
  if (given(body.tools) !== undefined) {
    if (!Array.isArray(body.tools)) throw new RequestError('tools must be an array');
    // (an empty list is no tools, and is written as none: OpenAI refuses `tools: []`)
    if (body.tools.length > 0) out.tools = body.tools.map((t) => {
      if (!isObject(t) || typeof t.name !== 'string' || (t.type !== undefined && t.type !== 'custom') || !isObject(t.input_schema)) {
        throw new RequestError(`the tool ${JSON.stringify(t?.name ?? t?.type)} is not a client tool with an input_schema (the provider's own tools cannot be carried to this upstream)`);
      }
      const f = { name: t.name, parameters: t.input_schema };
      if (t.description !== undefined) f.description = t.description;
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

/**
 * An Anthropic tool_result's content in the middle form: its text, or, with images, its text and
 * image_url parts in their order (a tool message of parts, which each translation carries in its
 * upstream's words, or refuses); an error's text after "Error: ". Any other block is refused.
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
  const error = b.is_error === true;
  if (!parts.some((p) => p.type === 'image_url')) {
    const text = textOf(b.content);
    return error ? `Error: ${text}` : text;
  }
  if (error) {
    if (parts[0].type === 'text') parts[0] = { type: 'text', text: `Error: ${parts[0].text}` };
    else parts.unshift({ type: 'text', text: 'Error:' });
  }
  return parts;
}

// ---------------------------------------------------------------------------------------------
// OpenAI Chat → each upstream

/**
 * Chat's history for an OpenAI upstream, from an Anthropic client's: a tool message's content is
 * text only in Chat, so a tool result's images go in a user message right after the run of tool
 * messages (Chat allows it there), each result's after a line that names its call.
 */
function toChat(messages) {
  const names = new Map(); // call id → tool name
  const out = [];
  let images = []; // the user message of the run's images
  for (const m of messages) {
    if (m.role !== 'tool' && images.length > 0) {
      out.push({ role: 'user', content: images });
      images = [];
    }
    if (m.role === 'assistant') for (const c of Array.isArray(m.tool_calls) ? m.tool_calls : []) names.set(c.id, c.function?.name);
    const urls = m.role === 'tool' ? imagesOf(m.content) : [];
    if (urls.length === 0) {
      out.push(m);
      continue;
    }
    out.push({ ...m, content: textOf(m.content) });
    images.push({ type: 'text', text: resultImagesLabel(m.tool_call_id, names.get(m.tool_call_id), urls.length) }, ...urls.map((url) => ({ type: 'image_url', image_url: { url } })));
  }
  if (images.length > 0) out.push({ role: 'user', content: images });
  return out;
}

/** An image (a URL) as an Anthropic image block: base64 for a data: URL, else by its URL. */
function anthropicImage(url) {
  const d = dataUrl(url);
  return { type: 'image', source: d ? { type: 'base64', media_type: d.mediaType, data: d.data } : { type: 'url', url } };
}

/** Chat's history as Anthropic's: system apart, tool calls as tool_use blocks, tool results as tool_result blocks of a user turn. */
function toAnthropic(body, messages, settings) {
  // (Anthropic's API needs a bound, Chat's not: the gateway's for a request that names none, SETTINGS' unless set)
  const out = { model: body.model, max_tokens: given(body.max_tokens) ?? given(body.max_completion_tokens) ?? settings.anthropicMaxTokens, messages: [] };
  let system = '';
  let results = null; // the user turn that gathers consecutive tool results (and the user text right after them)
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') {
      system += (system === '' ? '' : '\n\n') + textOf(m.content);
      continue;
    }
    if (m.role === 'tool') {
      // (a result's images are blocks of its content, beside its text, in their order)
      const content = withImages(m.content, anthropicImage, (text) => ({ type: 'text', text })) ?? textOf(m.content);
      const block = { type: 'tool_result', tool_use_id: m.tool_call_id, content };
      if (results === null) {
        results = { role: 'user', content: [] };
        out.messages.push(results);
      }
      results.content.push(block);
      continue;
    }
    const images = imagesOf(m.content);
    if (m.role === 'assistant') {
      // (an assistant turn of Anthropic's holds text, thinking and tool calls: an image there was dropped)
      if (images.length > 0) throw new RequestError('an assistant message\'s images cannot be carried to Anthropic\'s Messages API: its assistant turns hold no images');
      results = null;
      const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
      if (calls.length === 0) {
        out.messages.push({ role: 'assistant', content: textOf(m.content) });
        continue;
      }
      const blocks = [];
      const text = textOf(m.content);
      if (text !== '') blocks.push({ type: 'text', text });
      for (const c of calls) blocks.push({ type: 'tool_use', id: c.id, name: c.function?.name, input: argumentsObject(c) });
      out.messages.push({ role: 'assistant', content: blocks });
      continue;
    }
    if (m.role !== 'user') throw new RequestError(`a message's role ${JSON.stringify(m.role)} cannot be carried to an anthropic upstream`);
    const blocks = [];
    const text = textOf(m.content);
    for (const url of images) blocks.push(anthropicImage(url));
    if (results !== null) { // the user's text right after tool results joins their turn
      if (text !== '') results.content.push({ type: 'text', text });
      results.content.push(...blocks);
      results = null;
    } else if (blocks.length === 0) out.messages.push({ role: 'user', content: text });
    else {
      if (text !== '') blocks.push({ type: 'text', text });
      out.messages.push({ role: 'user', content: blocks });
    }
  }
  if (system !== '') out.system = system;
  const tools = toolsOf(body);
  if (tools.length > 0) out.tools = tools.map((f) => ({ name: f.name, ...(f.description !== undefined ? { description: f.description } : {}), input_schema: f.parameters ?? { type: 'object', properties: {} } }));
  let choice;
  const c = given(body.tool_choice);
  if (c === 'auto') choice = { type: 'auto' };
  else if (c === 'required') choice = { type: 'any' };
  else if (c === 'none') choice = { type: 'none' };
  else if (isObject(c) && typeof c.function?.name === 'string') choice = { type: 'tool', name: c.function.name };
  else if (c !== undefined) throw new RequestError(`tool_choice ${JSON.stringify(c)}`);
  if (body.parallel_tool_calls === false && tools.length > 0) choice = { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  if (choice !== undefined) out.tool_choice = choice;
  if (body.stream !== undefined) out.stream = body.stream;
  return out;
}

/** Chat's history as Responses input items: messages, function_call and function_call_output items. */
function toResponses(body, messages) {
  const input = [];
  for (const m of messages) {
    if (m.role === 'tool') {
      // (a result's images: its output as a list of input_text and input_image items, in their order)
      const output = withImages(m.content, (url) => ({ type: 'input_image', image_url: url }), (text) => ({ type: 'input_text', text })) ?? textOf(m.content);
      input.push({ type: 'function_call_output', call_id: m.tool_call_id, output });
      continue;
    }
    const images = imagesOf(m.content);
    const text = textOf(m.content);
    if (m.role === 'assistant') {
      // (an assistant message of Responses' holds output text: an image there was dropped)
      if (images.length > 0) throw new RequestError('an assistant message\'s images cannot be carried to an openai-responses upstream: its assistant messages hold text only');
      if (text !== '' || !Array.isArray(m.tool_calls) || m.tool_calls.length === 0) input.push({ role: 'assistant', content: text });
      for (const c of m.tool_calls ?? []) input.push({ type: 'function_call', call_id: c.id, name: c.function?.name, arguments: c.function?.arguments ?? '{}' });
      continue;
    }
    if (images.length === 0) input.push({ role: m.role, content: text });
    else input.push({ role: m.role, content: [...(text !== '' ? [{ type: 'input_text', text }] : []), ...images.map((url) => ({ type: 'input_image', image_url: url }))] });
  }
  const out = { model: body.model, input, stream: body.stream };
  const tools = toolsOf(body);
  if (tools.length > 0) out.tools = tools.map((f) => ({ type: 'function', name: f.name, ...(f.description !== undefined ? { description: f.description } : {}), parameters: f.parameters ?? { type: 'object', properties: {} } }));
  const c = given(body.tool_choice);
  if (typeof c === 'string') out.tool_choice = c;
  else if (isObject(c) && typeof c.function?.name === 'string') out.tool_choice = { type: 'function', name: c.function.name };
  else if (c !== undefined) throw new RequestError(`tool_choice ${JSON.stringify(c)}`);
  return out;
}

/** Chat's history as Ollama's: calls with their arguments as objects, images as base64, results as `tool` messages with the tool's name. */
function toOllama(body, messages) {
  const names = new Map(); // call id → tool name (Ollama's results name their tool)
  const out = [];
  for (const m of messages) {
    const msg = { role: m.role, content: textOf(m.content) };
    const images = imagesOf(m.content);
    if (images.length > 0) {
      msg.images = images.map((url) => {
        const d = dataUrl(url);
        if (!d) throw new RequestError('an ollama upstream takes images as data: URLs only');
        return d.data;
      });
    }
    if (m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      msg.tool_calls = m.tool_calls.map((c) => {
        names.set(c.id, c.function?.name);
        return { function: { name: c.function?.name, arguments: argumentsObject(c) } };
      });
    }
    if (m.role === 'tool' && names.has(m.tool_call_id)) msg.tool_name = names.get(m.tool_call_id);
    out.push(msg);
  }
  const payload = { model: body.model, messages: out, stream: body.stream };
  const tools = toolsOf(body);
  if (tools.length > 0) payload.tools = tools.map((f) => ({ type: 'function', function: f }));
  return payload;
}

/**
 * Whether a call's id is not the provider's but one made for a call sent without one (by the
 * relay, `call_seam…`, or by the gateway's whole answer, `call_gw…`; Anthropic's `toolu_…` kin):
 * not sent back to Gemini, which gave none.
 */
const madeId = (id) => typeof id !== 'string' || /^(call|toolu)_(seam|gw)/.test(id);

/** An image (a data: URL) as a Gemini inlineData part. */
function geminiImage(url) {
  const d = dataUrl(url);
  if (!d) throw new RequestError('a gemini upstream takes images as data: URLs only');
  return { inlineData: { mimeType: d.mediaType, data: d.data } };
}

/**
 * Chat's history as Gemini's `contents`: `model` turns with functionCall parts (each with its
 * call's `extra_content.google.thought_signature` as its thoughtSignature), tool results as
 * functionResponse parts of a `user` turn, system apart.
 */
function toGemini(body, messages) {
  const names = new Map(); // call id → function name (a functionResponse names its function)
  const contents = [];
  let system = '';
  let results = null; // the user turn that gathers consecutive tool results
  let responses = 0; // its functionResponse parts, which come before the results' images
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') {
      system += (system === '' ? '' : '\n\n') + textOf(m.content);
      continue;
    }
    if (m.role === 'tool') {
      const name = names.get(m.tool_call_id);
      if (name === undefined) throw new RequestError(`the tool result for ${JSON.stringify(m.tool_call_id ?? '')} answers no tool call of the history`);
      const part = { functionResponse: { name, response: { result: textOf(m.content) } } };
      if (!madeId(m.tool_call_id)) part.functionResponse.id = m.tool_call_id;
      if (results === null) {
        contents.push((results = { role: 'user', parts: [] }));
        responses = 0;
      }
      results.parts.splice(responses++, 0, part);
      // (a functionResponse holds no image: a result's images are inlineData parts of the same
      // turn, after the function responses, each result's after a line that names its call)
      const urls = imagesOf(m.content);
      if (urls.length > 0) results.parts.push({ text: resultImagesLabel(m.tool_call_id, name, urls.length) }, ...urls.map(geminiImage));
      continue;
    }
    const parts = [];
    const text = textOf(m.content);
    if (text !== '') parts.push({ text });
    for (const url of imagesOf(m.content)) parts.push(geminiImage(url));
    if (m.role === 'assistant') {
      results = null;
      for (const c of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
        names.set(c.id, c.function?.name);
        const call = { name: c.function?.name, args: argumentsObject(c) };
        if (!madeId(c.id)) call.id = c.id;
        // the call's thoughtSignature goes back on its part (Gemini 3 refuses a call without it):
        // the client has it where the relay wrote it, as Google's OpenAI-compatible API does
        const signature = c.extra_content?.google?.thought_signature;
        parts.push(typeof signature === 'string' ? { functionCall: call, thoughtSignature: signature } : { functionCall: call });
      }
      contents.push({ role: 'model', parts: parts.length ? parts : [{ text: '' }] });
      continue;
    }
    if (m.role !== 'user') throw new RequestError(`a message's role ${JSON.stringify(m.role)} cannot be carried to a gemini upstream`);
    if (results !== null) { // the user's text right after tool results joins their turn
      results.parts.push(...parts);
      results = null;
    } else contents.push({ role: 'user', parts: parts.length ? parts : [{ text: '' }] });
  }
  const out = { contents };
  if (system !== '') out.systemInstruction = { parts: [{ text: system }] };
  const tools = toolsOf(body);
  if (tools.length > 0) {
    out.tools = [{ functionDeclarations: tools.map((f) => ({ name: f.name, ...(f.description !== undefined ? { description: f.description } : {}), parametersJsonSchema: f.parameters ?? { type: 'object', properties: {} } })) }];
  }
  const c = given(body.tool_choice);
  let mode;
  if (c === 'auto') mode = { mode: 'AUTO' };
  else if (c === 'required') mode = { mode: 'ANY' };
  else if (c === 'none') mode = { mode: 'NONE' };
  else if (isObject(c) && typeof c.function?.name === 'string') mode = { mode: 'ANY', allowedFunctionNames: [c.function.name] };
  else if (c !== undefined) throw new RequestError(`tool_choice ${JSON.stringify(c)}`);
  if (mode !== undefined) out.toolConfig = { functionCallingConfig: mode };
  return out;
}

/** An image (a data: URL of png, jpeg, gif or webp) as a Converse image block, its bytes in base64. */
function converseImage(url) {
  const d = dataUrl(url);
  const format = d && /^image\/(png|jpeg|gif|webp)$/.exec(d.mediaType)?.[1];
  if (!format) throw new RequestError('a bedrock upstream takes images as data: URLs of png, jpeg, gif or webp only');
  return { image: { format, source: { bytes: d.data } } };
}

/** Chat's history as Bedrock Converse's `messages`: toolUse and toolResult content blocks, system apart. */
function toConverse(body, messages) {
  const out = { messages: [] };
  const system = [];
  let results = null;
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') {
      system.push({ text: textOf(m.content) });
      continue;
    }
    if (m.role === 'tool') {
      // (a result's images are image blocks of its content, beside its text, in their order)
      const content = withImages(m.content, converseImage, (text) => ({ text })) ?? [{ text: textOf(m.content) }];
      const block = { toolResult: { toolUseId: m.tool_call_id, content } };
      if (results === null) out.messages.push((results = { role: 'user', content: [] }));
      results.content.push(block);
      continue;
    }
    const content = [];
    const text = textOf(m.content);
    if (text !== '') content.push({ text });
    for (const url of imagesOf(m.content)) content.push(converseImage(url));
    if (m.role === 'assistant') {
      results = null;
      for (const c of Array.isArray(m.tool_calls) ? m.tool_calls : []) content.push({ toolUse: { toolUseId: c.id, name: c.function?.name, input: argumentsObject(c) } });
      out.messages.push({ role: 'assistant', content });
      continue;
    }
    if (m.role !== 'user') throw new RequestError(`a message's role ${JSON.stringify(m.role)} cannot be carried to a bedrock upstream`);
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
    out.toolConfig = { tools: tools.map((f) => ({ toolSpec: { name: f.name, ...(f.description !== undefined ? { description: f.description } : {}), inputSchema: { json: f.parameters ?? { type: 'object', properties: {} } } } })) };
    if (c === 'auto') out.toolConfig.toolChoice = { auto: {} };
    else if (c === 'required') out.toolConfig.toolChoice = { any: {} };
    else if (isObject(c) && typeof c.function?.name === 'string') out.toolConfig.toolChoice = { tool: { name: c.function.name } };
    else if (c !== undefined && c !== 'none') throw new RequestError(`tool_choice ${JSON.stringify(c)}`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The request's parameters
//
// Each field of the client's request is carried in the upstream's words, ignored on purpose where
// it has no effect on the answer's content (each with its reason below), or refused with a
// RequestError that names it: never dropped in silence. The fields are those of the APIs'
// references (OpenAI's ChatCompletionCreateParams, Anthropic's MessageCreateParams) and `top_k`,
// which OpenAI-compatible servers take and Anthropic's API takes for the models that do. A field
// that neither API has is refused: its meaning is unknown, so there is no word to carry it in
// and no telling that it does nothing. A vendor's extension reaches an upstream of the client's
// own API, where the request passes as it is.

const THINKING = Symbol('thinking'); // an Anthropic client's `thinking` in the middle form: Chat has no word for it
const NAMES = Symbol('names'); // the Anthropic client's names of the middle form's fields, for the errors

const THROUGH_CHAT = 'the gateway has no word for it in OpenAI Chat\'s form, through which it translates';

/** A value given (null is the APIs' "none given"). */
const given = (v) => (v === null ? undefined : v);

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
      // prompt caching, and why it missed. None changes the answer: ignored for another upstream.
      // context_management: the provider's own trimming of a long conversation (old tool results
      // cleared past a threshold); another upstream gets the conversation as it is, which is what
      // the client sent: ignored, as Claude Code may send it on every turn
      case 'metadata': case 'service_tier': case 'speed': case 'cache_control': case 'diagnostics': case 'context_management':
        break;
      case 'inference_geo': // (where the model runs: a promise the gateway cannot make for another provider)
      default:
        throw new RequestError(`${k} cannot be carried to the ${format} upstream: ${k === 'inference_geo' ? 'it says where Anthropic runs the model' : THROUGH_CHAT}`);
    }
  }
  out[NAMES] = names;
}

/** What a field means when it is absent: given this value, a field with no word upstream is no loss. */
const DEFAULTS = {
  n: (v) => v === 1,
  logprobs: (v) => v === false,
  top_logprobs: (v) => v === 0,
  logit_bias: (v) => isObject(v) && Object.keys(v).length === 0,
  modalities: (v) => Array.isArray(v) && v.every((m) => m === 'text'),
  frequency_penalty: (v) => v === 0,
  presence_penalty: (v) => v === 0,
  stop: (v) => Array.isArray(v) && v.length === 0,
  parallel_tool_calls: (v, chat) => v === true || toolsOf(chat).length === 0,
};

/** Why a field is refused, where it is the same for every upstream. */
const REASONS = {
  n: 'the relay follows one choice',
  logprobs: 'the relayed answer carries no logprobs',
  top_logprobs: 'the relayed answer carries no logprobs',
  logit_bias: 'it biases token ids of OpenAI\'s tokenizers',
  modalities: 'the relay carries text',
  audio: 'the relay carries text',
  web_search_options: 'it is OpenAI\'s own search',
  functions: 'it is the deprecated form of tools: send tools',
  function_call: 'it is the deprecated form of tool_choice: send tool_choice',
};

/**
 * Chat's fields that change nothing in the answer's content: an end user's id for the provider's
 * abuse detection (user, safety_identifier), tags and storage of the request on the provider's
 * side (metadata, store), prompt caching, the capacity the answer is made with (service_tier).
 * Where the upstream has no word of its own for them, they are ignored.
 */
const NO_EFFECT = ['user', 'safety_identifier', 'metadata', 'store', 'prompt_cache_key', 'prompt_cache_retention', 'prompt_cache_options', 'service_tier'];

/** The fields of a Chat request, taken one by one as an upstream's words are written. */
class Params {
  constructor(chat, format, settings) {
    this.chat = chat;
    this.format = format;
    /** The gateway's settings that choose a word (openaiMaxTokensField). */
    this.settings = settings;
    this.names = chat[NAMES] ?? {};
    this.seen = new Set(['model', 'messages', 'tools', 'tool_choice', 'stream']); // (the conversation's: the translations')
  }

  /** A field's value, if given; the field taken care of. */
  take(k) {
    this.seen.add(k);
    return given(this.chat[k]);
  }

  /** Fields ignored on purpose (the reasons where it is called). */
  ignore(...ks) {
    for (const k of ks) this.seen.add(k);
  }

  /** The value of the first of these fields given (each taken care of): max_tokens or max_completion_tokens, … */
  first(...ks) {
    let v;
    for (const k of ks) {
      const x = this.take(k); // (every one taken, the first given kept)
      if (v === undefined) v = x;
    }
    return v;
  }

  /** Chat's `stop` (a string, or a list of them) as a list, if given. */
  stops() {
    const stop = this.take('stop');
    return stop === undefined ? undefined : [].concat(stop);
  }

  /**
   * parallel_tool_calls, where the upstream has no switch for it: ignored rather than refused, as
   * agents send it on every turn: the client reads any number of calls, and may get more than one.
   */
  noParallelSwitch() {
    this.ignore('parallel_tool_calls');
  }

  /** A RequestError for a field (named as the client wrote it). */
  refuse(k, why = 'its API has no word for it') {
    return new RequestError(`${this.names[k] ?? k} cannot be carried to the ${this.format} upstream: ${why}`);
  }

  /** response_format, checked: undefined for text (the default), else the JSON it asks for. */
  responseFormat() {
    const rf = this.take('response_format');
    if (rf === undefined) return undefined;
    if (!isObject(rf) || !['text', 'json_object', 'json_schema'].includes(rf.type)) throw new RequestError('response_format must be { type: "text" | "json_object" | "json_schema" }');
    if (rf.type === 'json_schema' && (!isObject(rf.json_schema) || !isObject(rf.json_schema.schema))) throw new RequestError('response_format of type json_schema needs its json_schema.schema, an object');
    return rf.type === 'text' ? undefined : rf;
  }

  /** A json_schema's description, where the upstream has no word for it (it guides the model). */
  noDescription(rf) {
    if (rf?.type === 'json_schema' && given(rf.json_schema.description) !== undefined) throw this.refuse('response_format.json_schema.description');
  }

  /**
   * How much and whether to think: reasoning_effort (Anthropic's output_config.effort) and an
   * Anthropic client's thinking, together. `think` (true, false or undefined: not said), `level`
   * (the effort), `budget` (thinking's budget_tokens), `show` (the thinking is to be shown), and
   * `thinking` as the client sent it.
   */
  reasoning() {
    this.seen.add(THINKING);
    const level = this.take('reasoning_effort');
    const t = given(this.chat[THINKING]);
    if (t === undefined) return { level, think: level === undefined ? undefined : level !== 'none' };
    if (!isObject(t) || !['enabled', 'adaptive', 'disabled', 'between_tools'].includes(t.type)) throw new RequestError('thinking must be { type: "enabled", budget_tokens } or { type: "adaptive" }, { type: "disabled" }');
    if (t.type === 'disabled' && level !== undefined) throw this.refuse('thinking', 'thinking disabled with an effort says two things where it has one word');
    const out = { level, think: t.type !== 'disabled', show: t.type !== 'disabled' && t.display !== 'omitted', thinking: t };
    if (t.type === 'enabled') out.budget = t.budget_tokens;
    return out;
  }

  /**
   * Thinking, where the upstream has neither a budget nor `between_tools`: a budget is how long
   * to think, not whether, and the model there decides how long as adaptive thinking asks (Claude
   * Code sends `{type: "enabled", budget_tokens}` on every turn: refusing it shut those clients out).
   */
  noBudget(r) {
    if (r.thinking?.type === 'between_tools') throw this.refuse('thinking', 'it has no word for thinking between tool calls only');
  }

  /** What is left: the fields with no word upstream refused (but for their defaults), those with no effect ignored, and fields of no API refused. */
  finish() {
    // the usage: the relay writes it whenever the upstream gives it, asked or not (include_obfuscation pads OpenAI's own events)
    this.ignore('stream_options');
    // a predicted output makes the answer faster, not different
    this.ignore('prediction');
    this.ignore(...NO_EFFECT);
    if (given(this.chat[THINKING]) !== undefined && !this.seen.has(THINKING)) throw this.refuse('thinking');
    for (const k of ['max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'top_k', 'stop', 'seed', 'frequency_penalty', 'presence_penalty', 'n', 'logprobs', 'top_logprobs',
      'logit_bias', 'response_format', 'reasoning_effort', 'verbosity', 'parallel_tool_calls', 'moderation', 'modalities', 'audio', 'web_search_options', 'functions', 'function_call']) {
      if (this.seen.has(k)) continue;
      const v = this.take(k);
      if (k === 'response_format' && isObject(v) && v.type === 'text') continue;
      if (v !== undefined && !DEFAULTS[k]?.(v, this.chat)) throw this.refuse(k, REASONS[k]);
    }
    for (const k of Object.keys(this.chat)) {
      if (!this.seen.has(k) && given(this.chat[k]) !== undefined) throw new RequestError(`${k} is not a field of OpenAI's Chat Completions API: it cannot be carried to the ${this.format} upstream`);
    }
  }
}

/** Sets `out[key]` to `value` when a value is given. */
function put(out, key, value) {
  if (value !== undefined) out[key] = value;
}

/**
 * The Ollama `think` of a reasoning: false, the level gpt-oss takes, or unset (the model decides:
 * a model that cannot think answers `think: true` with an error, and a thinking one thinks).
 */
function ollamaThink(p, r) {
  p.noBudget(r);
  if (r.level === undefined) return r.think === false ? false : undefined;
  if (r.level === 'none') return false;
  if (['low', 'medium', 'high'].includes(r.level)) return r.level;
  throw p.refuse('reasoning_effort', `its think takes low, medium or high, not ${JSON.stringify(r.level)}`);
}

/** Each upstream's words for the request's parameters, written into its payload `out`. */
const PARAMS = {
  // an Anthropic client's request in Chat's form: every field is Chat's own, but thinking
  openai(p, out) {
    // max_tokens, which every Anthropic request carries (Claude Code's every turn), is Chat's
    // max_completion_tokens: Chat's max_tokens is deprecated for it, and OpenAI's reasoning models
    // (o1, o3, o4-mini, the gpt-5 family) refuse max_tokens with a 400, where every current OpenAI
    // model takes max_completion_tokens (vLLM and Groq take it too). A server that knows only
    // max_tokens (DeepSeek's API; Ollama's /v1 in its releases that lack the other, where the
    // gateway's ollama format needs neither) ignores the other as it ignores any field it does not
    // know: the answer is then bounded by the server's default, not refused; for those the
    // gateway's openaiMaxTokensField option writes max_tokens. (A Chat client's own request passes
    // as it is, with the word its client chose.)
    if (out.max_tokens !== undefined && p.settings.openaiMaxTokensField !== 'max_tokens') {
      out.max_completion_tokens = out.max_tokens;
      delete out.max_tokens;
    }
    for (const k of Object.keys(out)) p.take(k);
    const r = p.reasoning();
    p.noBudget(r);
    // adaptive (or a budget): the model decides whether and how much to think, which is what a Chat
    // model does when asked nothing; Chat has no word for showing it, and the relay writes what
    // reasoning comes. Disabled: left to the model too, as `reasoning_effort: "none"` is refused by
    // the models that have no reasoning (gpt-4o) and by those before gpt-5.1.
    // (an Anthropic client's stream carries its usage, its message_delta's output_tokens among it:
    // an OpenAI stream sends the usage only when asked)
    if (out.stream === true) out.stream_options = { include_usage: true };
    // Without tools, a tool_choice of auto or none and parallel_tool_calls say nothing (no call can
    // come), and OpenAI refuses them ("only allowed when 'tools' are specified"): not written. (A
    // choice of a tool, or of any, without tools is left for the upstream to refuse.)
    if (out.tools === undefined) {
      if (out.tool_choice === 'auto' || out.tool_choice === 'none') delete out.tool_choice;
      delete out.parallel_tool_calls;
    }
  },

  'openai-responses'(p, out) {
    put(out, 'max_output_tokens', p.first('max_tokens', 'max_completion_tokens'));
    for (const k of ['temperature', 'top_p', 'parallel_tool_calls', 'metadata', 'user', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention', 'prompt_cache_options', 'service_tier', 'moderation']) put(out, k, p.take(k));
    // (Chat keeps no answer unless asked, its `store` false by default, where Responses keeps every
    // answer unless told not to: a Chat client's request is stored only when it says so. An
    // Anthropic client's, whose API stores none, never.)
    out.store = p.take('store') ?? false;
    const text = {};
    const rf = p.responseFormat();
    if (rf?.type === 'json_object') text.format = { type: 'json_object' };
    else if (rf !== undefined) text.format = { type: 'json_schema', ...rf.json_schema };
    put(text, 'verbosity', p.take('verbosity'));
    if (Object.keys(text).length > 0) out.text = text;
    const r = p.reasoning();
    p.noBudget(r);
    const reasoning = {};
    // (disabled: left to the model, as for Chat: `effort: "none"` is refused by the models before gpt-5.1)
    put(reasoning, 'effort', r.level);
    // (the reasoning shown, as its summary: OpenAI writes one only for a verified organization, and
    // refuses the request otherwise: the gateway's responsesSummary 'none' asks for none)
    const summary = p.settings.responsesSummary;
    if (r.show && summary !== 'none') reasoning.summary = summary;
    if (Object.keys(reasoning).length > 0) out.reasoning = reasoning;
  },

  // (also bedrock-invoke's for an OpenAI client: Anthropic's Messages body on Bedrock; an
  // Anthropic client's passes as it is, invokeFromMessages)
  anthropic(p, out) {
    p.first('max_tokens', 'max_completion_tokens'); // (toAnthropic's max_tokens)
    p.take('parallel_tool_calls'); // (toAnthropic's: disable_parallel_tool_use)
    for (const k of ['temperature', 'top_p', 'top_k']) put(out, k, p.take(k));
    put(out, 'stop_sequences', p.stops());
    const config = {};
    const rf = p.responseFormat();
    if (rf?.type === 'json_object') throw p.refuse('response_format', 'its output format is a JSON schema (json_schema can be carried)');
    p.noDescription(rf);
    // (the schema's name names it, and Anthropic holds every output to its schema, which is what strict asks)
    if (rf !== undefined) config.format = { type: 'json_schema', schema: rf.json_schema.schema };
    const r = p.reasoning();
    if (r.level !== undefined) {
      if (!['low', 'medium', 'high', 'xhigh', 'max'].includes(r.level)) throw p.refuse('reasoning_effort', `its effort is low, medium, high, xhigh or max, not ${JSON.stringify(r.level)}`);
      config.effort = r.level;
    }
    if (Object.keys(config).length > 0) out.output_config = config;
    put(out, 'thinking', r.thinking);
    if (p.format === 'anthropic') {
      const id = p.first('safety_identifier', 'user');
      if (id !== undefined) out.metadata = { user_id: id };
    }
  },

  ollama(p, out) {
    const options = {};
    for (const k of ['temperature', 'top_p', 'top_k', 'seed', 'presence_penalty', 'frequency_penalty']) put(options, k, p.take(k));
    put(options, 'num_predict', p.first('max_tokens', 'max_completion_tokens'));
    put(options, 'stop', p.stops());
    if (Object.keys(options).length > 0) out.options = options;
    const rf = p.responseFormat();
    p.noDescription(rf);
    // (a schema holds Ollama's output whatever strict says; its name names it)
    if (rf !== undefined) out.format = rf.type === 'json_object' ? 'json' : rf.json_schema.schema;
    const r = p.reasoning();
    put(out, 'think', ollamaThink(p, r));
    p.noParallelSwitch();
  },

  ddg(p) {
    // max_tokens: Anthropic's clients must send one, and most OpenAI clients do; ddg has no such
    // bound (and bills nothing): ignored, and the answer can be longer
    p.ignore('max_tokens', 'max_completion_tokens');
  },

  gemini(p, out) {
    const g = {};
    for (const [k, name] of [['temperature', 'temperature'], ['top_p', 'topP'], ['top_k', 'topK'], ['seed', 'seed'], ['presence_penalty', 'presencePenalty'], ['frequency_penalty', 'frequencyPenalty']]) put(g, name, p.take(k));
    put(g, 'maxOutputTokens', p.first('max_tokens', 'max_completion_tokens'));
    put(g, 'stopSequences', p.stops());
    const rf = p.responseFormat();
    p.noDescription(rf);
    if (rf !== undefined) {
      g.responseMimeType = 'application/json';
      // (the schema holds Gemini's output whatever strict says; its name names it)
      if (rf.type === 'json_schema') g.responseJsonSchema = rf.json_schema.schema;
    }
    const r = p.reasoning();
    if (r.thinking?.type === 'between_tools') throw p.refuse('thinking', 'it has no word for thinking between tool calls only');
    const thinking = {};
    if (r.level !== undefined && r.level !== 'none') {
      if (!['minimal', 'low', 'medium', 'high'].includes(r.level)) throw p.refuse('reasoning_effort', `its thinkingLevel is minimal, low, medium or high, not ${JSON.stringify(r.level)}`);
      if (r.budget !== undefined) throw p.refuse('thinking', 'a budget with an effort: Gemini takes a thinkingBudget or a thinkingLevel, not both');
      thinking.thinkingLevel = r.level.toUpperCase();
    } else if (r.think === false) thinking.thinkingBudget = 0;
    else if (r.budget !== undefined) thinking.thinkingBudget = r.budget;
    else if (r.thinking?.type === 'adaptive') thinking.thinkingBudget = -1; // (dynamic: the model decides)
    if (r.show) thinking.includeThoughts = true;
    if (Object.keys(thinking).length > 0) g.thinkingConfig = thinking;
    if (Object.keys(g).length > 0) out.generationConfig = g;
    p.noParallelSwitch();
  },

  bedrock(p, out) {
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
  },
};
PARAMS['bedrock-invoke'] = PARAMS.anthropic;

/** The request's parameters written into the upstream's payload (`chat`: the request in Chat's form; `settings`: upstreamRequest's). */
function carryParams(format, chat, out, settings) {
  const p = new Params(chat, format, settings);
  PARAMS[format](p, out);
  p.finish();
}

/** Why an Anthropic client's field is not carried to Claude on Bedrock, where it changes the answer: refused. */
const NOT_ON_BEDROCK = {
  inference_geo: 'it says where Anthropic runs the model',
  container: 'it names a container of Anthropic\'s code execution tool, which Bedrock does not run',
  mcp_servers: 'it names servers for Anthropic\'s MCP connector, which Bedrock does not call',
};

/**
 * An Anthropic client's request for Claude on Bedrock (InvokeModel's body for Claude is
 * Anthropic's Messages body): carried as the body it is, as the anthropic upstream carries it,
 * not through OpenAI Chat's form, which would lose what both APIs share (the thinking and
 * redacted_thinking blocks of the history, which Claude wants back before their turn's tool_use
 * when it thinks; cache_control on blocks, tools and system; a tool_result's is_error; documents;
 * a system prompt of blocks; tools as defined). Bedrock's own words: no `model` (it is in the
 * path) nor `stream` (so is that), and `anthropic_version: "bedrock-2023-05-31"`. The client's
 * anthropic-beta header is not carried (as `anthropic_beta`): Bedrock refuses a request with a beta
 * flag it does not take ("invalid beta flag", a 400), which flags it takes differs from model to
 * model (Opus 4.7 takes interleaved thinking's alone), and Claude Code sends Anthropic's own
 * (`claude-code-20250219`, the MCP connector's, …) on every turn: carried, they refused every turn.
 * So are the fields that need a beta to be taken: context_management (ignored, as for another
 * upstream: the provider's own trimming of a long conversation). Left out too: the fields of
 * Anthropic's API that Bedrock's body for Claude does not take and that change nothing in the
 * answer (below, each with its reason); refused: those that do (NOT_ON_BEDROCK). Anything else
 * passes as it was sent, for Bedrock to take or refuse.
 */
function invokeFromMessages(body) {
  const out = {};
  let format;
  for (const [k, v] of Object.entries(body)) {
    switch (k) {
      case 'model': case 'stream':
        break; // (both in the path: the model's id, and invoke-with-response-stream)
      case 'anthropic_version': case 'anthropic_beta':
        // (Anthropic's API has them as headers, not in its body: the gateway writes Bedrock's)
        if (given(v) !== undefined) throw new RequestError(`${k} is not a field of Anthropic's Messages API: the gateway writes Bedrock's anthropic_version, and no beta flags`);
        break;
      // metadata.user_id: an id of the end user for Anthropic's abuse detection; service_tier and
      // speed: the capacity and the speed the answer is made with (Bedrock's are its own
      // settings, not the body's); cache_control (the request's, apart from its blocks', which
      // are carried) and diagnostics: prompt caching, and why it missed. None changes the answer,
      // and Bedrock documents none of them in its body for Claude (where it refuses a field it
      // does not take): left out, as Claude Code sends metadata on every turn
      case 'metadata': case 'service_tier': case 'speed': case 'cache_control': case 'diagnostics':
      case 'context_management': // (under its beta, which is not carried: above)
        break;
      case 'output_format': // (the beta's name of output_config.format, which is Bedrock's word for it)
        format = given(v);
        break;
      default:
        if (NOT_ON_BEDROCK[k] !== undefined) {
          if (given(v) !== undefined) throw new RequestError(`${k} cannot be carried to the bedrock-invoke upstream: ${NOT_ON_BEDROCK[k]}`);
        } else out[k] = v;
    }
  }
  if (format !== undefined) {
    const config = given(out.output_config);
    if (config !== undefined && !isObject(config)) throw new RequestError('output_config must be an object');
    if (given(config?.format) !== undefined) throw new RequestError('output_format and output_config.format cannot both be given: they are one field');
    out.output_config = { ...config, format };
  }
  return { anthropic_version: 'bedrock-2023-05-31', ...out };
}

/** The region of a Bedrock endpoint (`bedrock-runtime.<region>.amazonaws.com`), else AWS_REGION or AWS_DEFAULT_REGION. */
function regionOf(hostname, env) {
  const m = /^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com$/.exec(hostname);
  return m?.[1] ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
}

/**
 * What a bedrock upstream at `hostname` lacks in the environment `env` to sign its requests (its
 * AWS credentials, its region), in words that name the variables to set and never a value; undefined
 * when nothing. The gateway warns of it when it starts, and fails each request with it.
 */
export function bedrockLacks(hostname, env) {
  const missing = [];
  const unset = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'].filter((k) => !env[k]);
  if (unset.length > 0) missing.push(`${unset.join(' and ')} ${unset.length > 1 ? 'are' : 'is'} not set in its environment`);
  if (!regionOf(hostname, env)) missing.push('its region is not set: AWS_REGION (or AWS_DEFAULT_REGION) in its environment, or a bedrock-runtime.<region>.amazonaws.com upstream URL');
  return missing.length === 0 ? undefined : `the gateway cannot sign for its bedrock upstream: ${missing.join('; ')}`;
}

/**
 * A signer for a Bedrock request: SigV4 by AWS's own signer (@smithy/signature-v4, SHA-256 from
 * @smithy/hash-node), credentials from the usual AWS_* environment variables. Loaded when a
 * Bedrock upstream is first used: the gateway needs it for no other. Without the credentials or
 * the region, a signer that fails with a GatewayConfigError naming what is missing: the gateway's
 * misconfiguration fails the request as a signing failure does (a 500, not the client's 400).
 */
function bedrockSigner(hostname, env) {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  const region = regionOf(hostname, env);
  const lacking = bedrockLacks(hostname, env);
  if (lacking !== undefined) {
    const err = new GatewayConfigError(lacking);
    return () => Promise.reject(err);
  }
  const credentials = { accessKeyId, secretAccessKey, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}) };
  return async (request) => {
    const [{ SignatureV4 }, { Hash }] = await Promise.all([import('@smithy/signature-v4'), import('@smithy/hash-node')]);
    const signer = new SignatureV4({ service: 'bedrock', region, credentials, sha256: Hash.bind(null, 'sha256') });
    const signed = await signer.sign(request);
    return signed.headers;
  };
}

/**
 * `sign(body)` for a request: the headers with SigV4's, for the body's bytes. The Host header is
 * signed as the gateway's client sends it (`host:port`) and left to that client to write.
 */
function signing(sign, url, target, headers, path) {
  return async (body) => {
    const query = Object.fromEntries(new URLSearchParams(url.search));
    const signed = await sign({ method: 'POST', protocol: url.protocol, hostname: url.hostname, port: target.port, path, query, headers: { ...headers, host: `${url.hostname}:${target.port}` }, body });
    const { host: _host, ...rest } = signed;
    return rest;
  };
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
      if (toolsOf(chat).length > 0 || messages.some((m) => m.role === 'tool' || m.tool_calls?.length > 0)) {
        throw new RequestError('a ddg upstream takes text only: no tools, tool calls or tool results');
      }
      // (an image, or any part but text, has no word there: refused, where only the text went)
      for (const m of messages) if (Array.isArray(m.content)) for (const p of m.content) {
        if (p?.type === 'image_url') throw new RequestError('a ddg upstream takes text only: no images');
        if (typeof p !== 'string' && p?.type !== 'text') throw new RequestError(`a ddg upstream takes text only: a content part of type ${JSON.stringify(p?.type)} cannot be carried to it`);
      }
      path = prefix || '/';
      payload = { model: chat.model, messages: messages.map((m) => ({ role: m.role, content: textOf(m.content) })) };
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
