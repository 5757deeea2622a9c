// OpenAI Chat → an openai-responses upstream (`POST {base}/v1/responses`, a bearer): the history as
// input items (toResponses), the parameters' row (responsesParams), and the upstream's description
// (openaiResponses).
import { RequestError } from '../errors.mjs';
import { given, imagesIn, isObject, textOf, toolsOf, withImages } from '../content.mjs';
import { put } from '../params.mjs';

/**
 * An image as a Responses input_image: its URL, and its detail (`low`, `high`, `auto`, `original`:
 * Chat's words for it) where the client gave one.
 */
function responsesImage({ url, detail }) {
  return detail === undefined ? { type: 'input_image', image_url: url } : { type: 'input_image', image_url: url, detail };
}

/** Chat's history as Responses input items: messages, function_call and function_call_output items. */
function toResponses(body, messages) {
  const input = [];
  for (const m of messages) {
    if (m.role === 'tool') {
      // (a result's images: its output as a list of input_text and input_image items, in their order)
      const output = withImages(m.content, responsesImage, (text) => ({ type: 'input_text', text })) ?? textOf(m.content);
      input.push({ type: 'function_call_output', call_id: m.tool_call_id, output });
      continue;
    }
    const images = imagesIn(m.content);
    const text = textOf(m.content);
    if (m.role === 'assistant') {
      // (an assistant message of Responses' holds output text: an image there was dropped)
      if (images.length > 0) throw new RequestError('an assistant message\'s images cannot be carried to an openai-responses upstream: its assistant messages hold text only');
      if (text !== '' || !Array.isArray(m.tool_calls) || m.tool_calls.length === 0) input.push({ role: 'assistant', content: text });
      for (const c of m.tool_calls ?? []) input.push({ type: 'function_call', call_id: c.id, name: c.function?.name, arguments: c.function?.arguments ?? '{}' });
      continue;
    }
    if (images.length === 0) input.push({ role: m.role, content: text });
    else input.push({ role: m.role, content: [...(text !== '' ? [{ type: 'input_text', text }] : []), ...images.map(responsesImage)] });
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

/** The request's parameters in Responses' words (this upstream's row). */
function responsesParams(p, out) {
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
}

/** The openai-responses upstream (index.mjs reads its description). */
export const openaiResponses = {
  path: () => '/v1/responses',
  credential: 'authorization',
  body: toResponses,
  params: responsesParams,
};
