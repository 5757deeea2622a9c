// OpenAI Chat → an openai upstream (`POST {base}/v1/chat/completions`, a bearer), for an Anthropic
// client (a Chat client's request passes as it is): the history (toChat), the parameters' row
// (chatParams), and the upstream's description (openai).
import { imagesOf, resultImagesLabel, textOf } from '../content.mjs';

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

// an Anthropic client's request in Chat's form: every field is Chat's own, but thinking
function chatParams(p, out) {
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
}

/** The openai upstream (index.mjs reads its description). */
export const openai = {
  dialect: 'openai',
  path: () => '/v1/chat/completions',
  credential: 'authorization',
  // (the Chat form here is the Anthropic client's request, made for this request alone: its
  // messages, and later its parameters, are rewritten in it)
  body(chat, messages) {
    chat.messages = toChat(messages);
    return chat;
  },
  params: chatParams,
};
