// OpenAI Chat → an ollama upstream (`POST {base}/api/chat`, a bearer): the history (toOllama), the
// parameters' row (ollamaParams), and the upstream's description (ollama).
import { RequestError } from '../errors.mjs';
import { argumentsObject, dataUrl, imagesOf, textOf, toolsOf } from '../content.mjs';
import { put } from '../params.mjs';

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

/** The request's parameters in Ollama's words (this upstream's row). */
function ollamaParams(p, out) {
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
}

/** The ollama upstream (index.mjs reads its description). */
export const ollama = {
  path: () => '/api/chat',
  credential: 'authorization',
  body: toOllama,
  params: ollamaParams,
};
