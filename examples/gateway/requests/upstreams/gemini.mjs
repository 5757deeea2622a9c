// OpenAI Chat → a gemini upstream (`POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse`,
// the key in x-goog-api-key): the history as contents (toGemini), the parameters' row
// (geminiParams), and the upstream's description (gemini).
import { RequestError } from '../errors.mjs';
import { FAILED, argumentsObject, dataUrl, given, imagesIn, isObject, modelInPath, modelOf, resultImagesLabel, textOf, textThenImages, toolsOf } from '../content.mjs';
import { put } from '../params.mjs';

/**
 * Whether a call's id is not the provider's but one made for a call sent without one (by the
 * relay, `call_seam…`, or by the gateway's whole answer, `call_gw…`; Anthropic's `toolu_…` kin):
 * not sent back to Gemini, which gave none.
 */
const madeId = (id) => typeof id !== 'string' || /^(call|toolu)_(seam|gw)/.test(id);

/**
 * Whether the model is Gemini 3 or later, as its name says (`gemini-3-flash-preview`,
 * `models/gemini-3.1-pro-preview`): it takes a tool result's images in its functionResponse, as
 * the response's `parts` (each `{ inlineData }`; Google's Gemini 3 guide, "Multimodal function
 * responses"), and a media resolution per image (a part's `mediaResolution`; its "Media resolution"
 * guide, ai.google.dev/gemini-api/docs/generate-content/media-resolution: per part on Gemini 3
 * only, and "available in the v1beta API version", the one the gateway asks; the guide's earlier
 * edition had it in v1alpha only). An earlier model's functionResponse holds JSON alone,
 * and its media resolution is the request's; a name that does not say (a tuned model, an alias such
 * as `gemini-flash-latest`) is taken for one, whose ways every model reads.
 */
const gemini3 = (model) => Number(/(?:^|\/)gemini-(\d+)/.exec(typeof model === 'string' ? model : '')?.[1]) >= 3;

/** An image (a data: URL) as a Gemini inlineData part. */
function geminiImage(url) {
  const d = dataUrl(url);
  if (!d) throw new RequestError('a gemini upstream takes images as data: URLs only');
  return { inlineData: { mimeType: d.mediaType, data: d.data } };
}

const LOW = 'MEDIA_RESOLUTION_LOW';

/**
 * The images' `detail` (OpenAI Chat's) in Gemini's words: its media resolution, how many tokens the
 * model sees an image in. `low` (OpenAI's: a small copy, for a fixed few tokens) is
 * MEDIA_RESOLUTION_LOW, Gemini's fewest; `auto` and none leave it to the model, and `high` asks
 * what Gemini does by default (an image in detail): nothing is written for them. `original` (the
 * image at its own size) and any other word have no level that says them: refused. When every
 * image asks `low`, the request's `generationConfig.mediaResolution` says it (every model takes
 * it, returned here); when some do, Gemini 3 takes it on each of their parts (`mediaResolution:
 * { level }`), but for an image in a function response, whose part has no such field, and an
 * earlier model not at all (its one word would change the others): refused.
 * `images`: each image's `{ part, detail, inResponse }`.
 */
function mediaResolution(images, model) {
  for (const { detail } of images) {
    if (detail !== undefined && detail !== 'auto' && detail !== 'high' && detail !== 'low') {
      throw new RequestError(`an image's detail ${JSON.stringify(detail)} cannot be carried to a gemini upstream: its media resolutions are numbers of tokens an image is seen in, none of which says it (send "low", "high", "auto", or no detail)`);
    }
  }
  const low = images.filter((i) => i.detail === 'low');
  if (low.length === 0) return undefined;
  if (low.length === images.length) return LOW;
  if (!gemini3(model)) throw new RequestError('an image\'s detail "low" beside images of another detail cannot be carried to this gemini model: its media resolution is the whole request\'s (Gemini 3 takes one per image; send the same detail for every image)');
  for (const i of low) {
    if (i.inResponse) throw new RequestError('an image\'s detail "low" in a tool result cannot be carried to a gemini upstream beside images of another detail: an image in a function response has no media resolution of its own, and the request\'s is every image\'s (send the same detail for every image)');
    i.part.mediaResolution = { level: LOW };
  }
  return undefined;
}

/**
 * Chat's history as Gemini's `contents`: `model` turns with functionCall parts (each with its
 * call's `extra_content.google.thought_signature` as its thoughtSignature), tool results as
 * functionResponse parts of a `user` turn (a result's images in it for Gemini 3: gemini3), system
 * apart; the images' detail as their media resolution (mediaResolution).
 */
function toGemini(body, messages) {
  const names = new Map(); // call id → function name (a functionResponse names its function)
  const contents = [];
  let system = '';
  let results = null; // the user turn that gathers consecutive tool results
  let responses = 0; // its functionResponse parts, which come before the results' images
  const inResponse = gemini3(body.model); // (a result's images in its functionResponse, else after the responses)
  const images = []; // each image's part and detail (mediaResolution)
  const image = (where) => ({ url, detail }) => {
    const part = geminiImage(url);
    images.push({ part, detail, inResponse: where });
    return part;
  };
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') {
      system += (system === '' ? '' : '\n\n') + textOf(m.content);
      continue;
    }
    if (m.role === 'tool') {
      const name = names.get(m.tool_call_id);
      if (name === undefined) throw new RequestError(`the tool result for ${JSON.stringify(m.tool_call_id ?? '')} answers no tool call of the history`);
      // (a failed result, an Anthropic client's is_error, under the `error` key Gemini reads as the
      // call's failure, as the client sent it; another under `result`)
      const failed = m[FAILED];
      const part = { functionResponse: { name, response: failed !== undefined ? { error: textOf(failed) } : { result: textOf(m.content) } } };
      if (!madeId(m.tool_call_id)) part.functionResponse.id = m.tool_call_id;
      const found = imagesIn(m.content);
      if (found.length > 0 && inResponse) part.functionResponse.parts = found.map(image(true));
      if (results === null) {
        contents.push((results = { role: 'user', parts: [] }));
        responses = 0;
      }
      results.parts.splice(responses++, 0, part);
      // (before Gemini 3 a functionResponse holds no image: a result's images are inlineData parts
      // of the same turn, after the function responses, each result's after a line that names its call)
      if (found.length > 0 && !inResponse) results.parts.push({ text: resultImagesLabel(m.tool_call_id, name, found.length) }, ...found.map(image(false)));
      continue;
    }
    const parts = textThenImages(m.content, image(false));
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
  const level = mediaResolution(images, body.model);
  if (level !== undefined) out.generationConfig = { mediaResolution: level };
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

/** The request's parameters in Gemini's words (this upstream's row). */
function geminiParams(p, out) {
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
  if (Object.keys(g).length > 0) out.generationConfig = { ...out.generationConfig, ...g }; // (the images' mediaResolution: toGemini's)
  p.noParallelSwitch();
}

/**
 * The gemini upstream (index.mjs reads its description): the model in its path, its answer as SSE
 * (`alt=sse`), the key in x-goog-api-key (the gateway's own, or the client's bearer).
 */
export const gemini = {
  path(chat) {
    const name = modelOf(chat, 'a gemini upstream needs a model name');
    // (models/NAME or tunedModels/NAME: each segment of the name percent-encoded)
    const model = modelInPath(/^(models|tunedModels)\//.test(name) ? name : `models/${name}`, true);
    return `/v1beta/${model}:streamGenerateContent`;
  },
  query: { alt: 'sse' },
  credential: 'x-goog-api-key',
  body: toGemini,
  params: geminiParams,
};
