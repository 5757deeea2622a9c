// OpenAI Chat → an anthropic upstream (`POST {base}/v1/messages`, the key in x-api-key), for an
// OpenAI client (an Anthropic client's request passes as it is, with its anthropic-version and
// anthropic-beta headers): the history (toAnthropic), the parameters' row (anthropicParams), both
// bedrock-invoke's too for an OpenAI client, and the upstream's description (anthropic).
import { RequestError } from '../errors.mjs';
import { argumentsObject, dataUrl, given, imagesOf, isObject, textOf, toolsOf, urlOf, withImages } from '../content.mjs';
import { put } from '../params.mjs';

/** An image (a URL) as an Anthropic image block: base64 for a data: URL, else by its URL. */
function anthropicImage(url) {
  const d = dataUrl(url);
  return { type: 'image', source: d ? { type: 'base64', media_type: d.mediaType, data: d.data } : { type: 'url', url } };
}

/** Chat's history as Anthropic's: system apart, tool calls as tool_use blocks, tool results as tool_result blocks of a user turn. */
export function toAnthropic(body, messages, settings) {
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
      const content = withImages(m.content, (image) => anthropicImage(urlOf(image)), (text) => ({ type: 'text', text })) ?? textOf(m.content);
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

// (also bedrock-invoke's for an OpenAI client: Anthropic's Messages body on Bedrock; an
// Anthropic client's passes as it is, invokeFromMessages)
export function anthropicParams(p, out) {
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
}

/** The anthropic upstream (index.mjs reads its description). */
export const anthropic = {
  dialect: 'anthropic',
  path: () => '/v1/messages',
  credential: 'x-api-key',
  // (the client's version and beta flags go on with its own request; another's is written in the version the translation knows)
  headers: (client, passes) => ({
    'anthropic-version': typeof client['anthropic-version'] === 'string' && passes ? client['anthropic-version'] : '2023-06-01',
    ...(passes && typeof client['anthropic-beta'] === 'string' ? { 'anthropic-beta': client['anthropic-beta'] } : {}),
  }),
  body: toAnthropic,
  params: anthropicParams,
};
