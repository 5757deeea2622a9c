// OpenAI Chat → a ddg upstream (`POST {base}`, the base URL the endpoint, a bearer): the
// conversation's text (toDdg), the parameters' row (ddgParams), and the upstream's description (ddg).
import { RequestError } from '../errors.mjs';
import { textOf, toolsOf } from '../content.mjs';

/** The conversation for a ddg upstream, which takes text only: tools, tool calls, tool results and any part but text refused. */
function toDdg(chat, messages) {
  if (toolsOf(chat).length > 0 || messages.some((m) => m.role === 'tool' || m.tool_calls?.length > 0)) {
    throw new RequestError('a ddg upstream takes text only: no tools, tool calls or tool results');
  }
  // (an image, or any part but text, has no word there: refused, where only the text went)
  for (const m of messages) if (Array.isArray(m.content)) for (const p of m.content) {
    if (p?.type === 'image_url') throw new RequestError('a ddg upstream takes text only: no images');
    if (typeof p !== 'string' && p?.type !== 'text') throw new RequestError(`a ddg upstream takes text only: a content part of type ${JSON.stringify(p?.type)} cannot be carried to it`);
  }
  return { model: chat.model, messages: messages.map((m) => ({ role: m.role, content: textOf(m.content) })) };
}

/** The request's parameters for ddg, which has a word for none (this upstream's row). */
function ddgParams(p) {
  // max_tokens: Anthropic's clients must send one, and most OpenAI clients do; ddg has no such
  // bound (and bills nothing): ignored, and the answer can be longer
  p.ignore('max_tokens', 'max_completion_tokens');
}

/** The ddg upstream (index.mjs reads its description): its path is the base URL's own. */
export const ddg = {
  path: () => '',
  credential: 'authorization',
  body: toDdg,
  params: ddgParams,
};
