// The gateway's requests: what a client sends (OpenAI Chat Completions at `/v1/chat/completions`,
// Anthropic Messages at `/v1/messages`) becomes the upstream's request in its own format, tools
// and tool results included, or tool calling does not work end to end.
//
// A request in the upstream's own dialect passes as it is. Otherwise it goes through one middle
// form, OpenAI Chat's (Anthropic Messages → Chat → the upstream's): its text, images, tools, tool
// choice, the assistant's tool calls and the tool results in the history. What the upstream has no
// word for is refused with a RequestError (a 400), never dropped in silence, except what exists
// only for the provider that wrote it: Anthropic's thinking blocks in the history (their
// signatures are good only to Anthropic) are left out for any other upstream.
import { describeFormat } from 'seam-stream';

/** A request the gateway cannot carry to its upstream: answered 400 in the client's API shape. */
export class RequestError extends Error {
  constructor(message) {
    super(message);
    this.name = 'RequestError';
  }
}

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

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
  if (body.tools === undefined) return [];
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
  if (body.max_tokens !== undefined) out.max_tokens = body.max_tokens;
  for (const k of ['temperature', 'top_p']) if (body[k] !== undefined) out[k] = body[k];
  if (body.stop_sequences !== undefined) out.stop = body.stop_sequences;
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
      if (b?.type === 'tool_result') {
        const content = textOf(b.content);
        out.messages.push({ role: 'tool', tool_call_id: b.tool_use_id, content: b.is_error === true ? `Error: ${content}` : content });
      } else if (b?.type === 'text') parts.push({ type: 'text', text: b.text });
      else if (b?.type === 'image' && b.source?.type === 'base64') parts.push({ type: 'image_url', image_url: { url: `data:${b.source.media_type};base64,${b.source.data}` } });
      else if (b?.type === 'image' && b.source?.type === 'url') parts.push({ type: 'image_url', image_url: { url: b.source.url } });
      else throw new RequestError(`a user block of type ${JSON.stringify(b?.type)} cannot be carried to this upstream`);
    }
    if (parts.length > 0) out.messages.push({ role: 'user', content: parts.every((p) => p.type === 'text') ? parts.map((p) => p.text).join('') : parts });
  }
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) throw new RequestError('tools must be an array');
    out.tools = body.tools.map((t) => {
      if (!isObject(t) || typeof t.name !== 'string' || (t.type !== undefined && t.type !== 'custom') || !isObject(t.input_schema)) {
        throw new RequestError(`the tool ${JSON.stringify(t?.name ?? t?.type)} is not a client tool with an input_schema (the provider's own tools cannot be carried to this upstream)`);
      }
      const f = { name: t.name, parameters: t.input_schema };
      if (t.description !== undefined) f.description = t.description;
      return { type: 'function', function: f };
    });
  }
  const choice = body.tool_choice;
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

// ---------------------------------------------------------------------------------------------
// OpenAI Chat → each upstream

/** Chat's history as Anthropic's: system apart, tool calls as tool_use blocks, tool results as tool_result blocks of a user turn. */
function toAnthropic(body, messages) {
  const out = { model: body.model, max_tokens: body.max_tokens ?? body.max_completion_tokens ?? 1024, messages: [] };
  let system = '';
  let results = null; // the user turn that gathers consecutive tool results (and the user text right after them)
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') {
      system += (system === '' ? '' : '\n\n') + textOf(m.content);
      continue;
    }
    if (m.role === 'tool') {
      const block = { type: 'tool_result', tool_use_id: m.tool_call_id, content: textOf(m.content) };
      if (results === null) {
        results = { role: 'user', content: [] };
        out.messages.push(results);
      }
      results.content.push(block);
      continue;
    }
    const images = imagesOf(m.content);
    if (m.role === 'assistant') {
      results = null;
      const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
      if (calls.length === 0 && images.length === 0) {
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
    for (const url of images) {
      const d = dataUrl(url);
      blocks.push({ type: 'image', source: d ? { type: 'base64', media_type: d.mediaType, data: d.data } : { type: 'url', url } });
    }
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
  const c = body.tool_choice;
  if (c === 'auto') choice = { type: 'auto' };
  else if (c === 'required') choice = { type: 'any' };
  else if (c === 'none') choice = { type: 'none' };
  else if (isObject(c) && typeof c.function?.name === 'string') choice = { type: 'tool', name: c.function.name };
  else if (c !== undefined) throw new RequestError(`tool_choice ${JSON.stringify(c)}`);
  if (body.parallel_tool_calls === false && tools.length > 0) choice = { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  if (choice !== undefined) out.tool_choice = choice;
  if (body.stream !== undefined) out.stream = body.stream;
  for (const k of ['temperature', 'top_p']) if (body[k] !== undefined) out[k] = body[k];
  if (body.stop !== undefined) out.stop_sequences = [].concat(body.stop);
  return out;
}

/** Chat's history as Responses input items: messages, function_call and function_call_output items. */
function toResponses(body, messages) {
  const input = [];
  for (const m of messages) {
    if (m.role === 'tool') {
      input.push({ type: 'function_call_output', call_id: m.tool_call_id, output: textOf(m.content) });
      continue;
    }
    const images = imagesOf(m.content);
    const text = textOf(m.content);
    if (m.role === 'assistant') {
      if (text !== '' || !Array.isArray(m.tool_calls) || m.tool_calls.length === 0) input.push({ role: 'assistant', content: text });
      for (const c of m.tool_calls ?? []) input.push({ type: 'function_call', call_id: c.id, name: c.function?.name, arguments: c.function?.arguments ?? '{}' });
      continue;
    }
    if (images.length === 0) input.push({ role: m.role, content: text });
    else input.push({ role: m.role, content: [...(text !== '' ? [{ type: 'input_text', text }] : []), ...images.map((url) => ({ type: 'input_image', image_url: url }))] });
  }
  const out = { model: body.model, input, stream: body.stream };
  if (body.max_tokens ?? body.max_completion_tokens) out.max_output_tokens = body.max_tokens ?? body.max_completion_tokens;
  for (const k of ['temperature', 'top_p', 'parallel_tool_calls']) if (body[k] !== undefined) out[k] = body[k];
  const tools = toolsOf(body);
  if (tools.length > 0) out.tools = tools.map((f) => ({ type: 'function', name: f.name, ...(f.description !== undefined ? { description: f.description } : {}), parameters: f.parameters ?? { type: 'object', properties: {} } }));
  const c = body.tool_choice;
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
  if (body.temperature !== undefined) payload.options = { temperature: body.temperature };
  return payload;
}

/**
 * Whether a call's id is not the provider's but one made for a call sent without one (by the
 * relay, `call_seam…`, or by the gateway's whole answer, `call_gw…`; Anthropic's `toolu_…` kin):
 * not sent back to Gemini, which gave none.
 */
const madeId = (id) => typeof id !== 'string' || /^(call|toolu)_(seam|gw)/.test(id);

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
      if (results === null) contents.push((results = { role: 'user', parts: [] }));
      results.parts.push(part);
      continue;
    }
    const parts = [];
    const text = textOf(m.content);
    if (text !== '') parts.push({ text });
    for (const url of imagesOf(m.content)) {
      const d = dataUrl(url);
      if (!d) throw new RequestError('a gemini upstream takes images as data: URLs only');
      parts.push({ inlineData: { mimeType: d.mediaType, data: d.data } });
    }
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
  const c = body.tool_choice;
  let mode;
  if (c === 'auto') mode = { mode: 'AUTO' };
  else if (c === 'required') mode = { mode: 'ANY' };
  else if (c === 'none') mode = { mode: 'NONE' };
  else if (isObject(c) && typeof c.function?.name === 'string') mode = { mode: 'ANY', allowedFunctionNames: [c.function.name] };
  else if (c !== undefined) throw new RequestError(`tool_choice ${JSON.stringify(c)}`);
  if (mode !== undefined) out.toolConfig = { functionCallingConfig: mode };
  const g = {};
  if (body.temperature !== undefined) g.temperature = body.temperature;
  if (body.top_p !== undefined) g.topP = body.top_p;
  if ((body.max_tokens ?? body.max_completion_tokens) !== undefined) g.maxOutputTokens = body.max_tokens ?? body.max_completion_tokens;
  if (body.stop !== undefined) g.stopSequences = [].concat(body.stop);
  if (Object.keys(g).length > 0) out.generationConfig = g;
  return out;
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
      const block = { toolResult: { toolUseId: m.tool_call_id, content: [{ text: textOf(m.content) }] } };
      if (results === null) out.messages.push((results = { role: 'user', content: [] }));
      results.content.push(block);
      continue;
    }
    const content = [];
    const text = textOf(m.content);
    if (text !== '') content.push({ text });
    for (const url of imagesOf(m.content)) {
      const d = dataUrl(url);
      const format = d && /^image\/(png|jpeg|gif|webp)$/.exec(d.mediaType)?.[1];
      if (!format) throw new RequestError('a bedrock upstream takes images as data: URLs of png, jpeg, gif or webp only');
      content.push({ image: { format, source: { bytes: d.data } } });
    }
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
  const inference = {};
  if ((body.max_tokens ?? body.max_completion_tokens) !== undefined) inference.maxTokens = body.max_tokens ?? body.max_completion_tokens;
  if (body.temperature !== undefined) inference.temperature = body.temperature;
  if (body.top_p !== undefined) inference.topP = body.top_p;
  if (body.stop !== undefined) inference.stopSequences = [].concat(body.stop);
  if (Object.keys(inference).length > 0) out.inferenceConfig = inference;
  const tools = toolsOf(body);
  const c = body.tool_choice;
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

/** The region of a Bedrock endpoint (`bedrock-runtime.<region>.amazonaws.com`), else AWS_REGION or AWS_DEFAULT_REGION. */
function regionOf(hostname, env) {
  const m = /^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com$/.exec(hostname);
  return m?.[1] ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
}

/**
 * A signer for a Bedrock request: SigV4 by AWS's own signer (@smithy/signature-v4, SHA-256 from
 * @smithy/hash-node), credentials from the usual AWS_* environment variables. Loaded when a
 * Bedrock upstream is first used: the gateway needs it for no other.
 */
function bedrockSigner(hostname, env) {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) throw new RequestError('a bedrock upstream needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the gateway\'s environment');
  const region = regionOf(hostname, env);
  if (!region) throw new RequestError('a bedrock upstream needs its region: a bedrock-runtime.<region>.amazonaws.com URL, or AWS_REGION');
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
 */
export function upstreamRequest(format, base, body, headers, dialect = 'openai', env = process.env) {
  const url = typeof base === 'string' ? new URL(base) : base;
  const prefix = url.pathname.replace(/\/+$/, '');
  const out = { 'content-type': 'application/json', accept: describeFormat(format).contentType };
  const key = credentialOf(headers);
  const same = dialect === format; // the client speaks the upstream's own API: its body passes as it is
  const chat = same || dialect === 'openai' ? body : chatFromMessages(body, format);
  if (!same && !Array.isArray(chat.messages)) throw new RequestError('messages must be an array');
  const messages = chat.messages;
  if (!same) checkShapes(messages);
  let path;
  let payload;
  switch (format) {
    case 'openai':
      path = `${prefix}/v1/chat/completions`;
      payload = chat;
      break;
    case 'openai-responses':
      path = `${prefix}/v1/responses`;
      payload = toResponses(chat, messages);
      break;
    case 'anthropic':
      path = `${prefix}/v1/messages`;
      payload = same ? body : toAnthropic(chat, messages);
      out['anthropic-version'] = typeof headers['anthropic-version'] === 'string' && same ? headers['anthropic-version'] : '2023-06-01';
      if (same && typeof headers['anthropic-beta'] === 'string') out['anthropic-beta'] = headers['anthropic-beta'];
      break;
    case 'ollama':
      path = `${prefix}/api/chat`;
      payload = toOllama(chat, messages);
      break;
    case 'ddg':
      if (toolsOf(chat).length > 0 || messages.some((m) => m.role === 'tool' || m.tool_calls?.length > 0)) {
        throw new RequestError('a ddg upstream takes text only: no tools, tool calls or tool results');
      }
      path = prefix || '/';
      payload = { model: chat.model, messages: messages.map((m) => ({ role: m.role, content: textOf(m.content) })) };
      break;
    case 'gemini': {
      // the model is in the path; the key in x-goog-api-key (the gateway's own, or the client's bearer)
      if (typeof chat.model !== 'string' || chat.model === '') throw new RequestError('a gemini upstream needs a model name');
      // (models/NAME or tunedModels/NAME: each segment of the name percent-encoded)
      const model = (/^(models|tunedModels)\//.test(chat.model) ? chat.model : `models/${chat.model}`).split('/').map(encodeURIComponent).join('/');
      path = `${prefix}/v1beta/${model}:streamGenerateContent`;
      payload = toGemini(chat, messages);
      if (key !== undefined) out['x-goog-api-key'] = key;
      const q = new URLSearchParams(url.search);
      q.set('alt', 'sse');
      return { protocol: url.protocol, hostname: url.hostname, port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80), path: `${path}?${q}`, headers: out, payload };
    }
    case 'bedrock': {
      if (typeof chat.model !== 'string' || chat.model === '') throw new RequestError('a bedrock upstream needs a model id');
      path = `${prefix}/model/${encodeURIComponent(chat.model)}/converse-stream`;
      payload = toConverse(chat, messages);
      const target = { protocol: url.protocol, hostname: url.hostname, port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80), path: path + url.search, headers: out, payload };
      // SigV4 over the body as sent: the gateway signs once it has the body's bytes
      const sign = bedrockSigner(url.hostname, env);
      target.sign = signing(sign, url, target, out, path);
      return target;
    }
    case 'bedrock-invoke': {
      // Claude on Bedrock: Anthropic's Messages body, without model and stream, with Bedrock's anthropic_version
      if (typeof chat.model !== 'string' || chat.model === '') throw new RequestError('a bedrock upstream needs a model id');
      path = `${prefix}/model/${encodeURIComponent(chat.model)}/invoke-with-response-stream`;
      const { model: _model, stream: _stream, ...anthropicBody } = same ? body : toAnthropic(chat, messages);
      payload = { anthropic_version: 'bedrock-2023-05-31', ...anthropicBody };
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
