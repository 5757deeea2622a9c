// A stream's whole answer (`stream: false`) read from another API's stream, written anew in the
// client's API (wholeAnswer: the answer's shape in each).
import { describeFormat, openAiAnnotations } from 'seam-stream';

/**
 * A stream read whole (ModelStream, flushed) as one answer in the client's API: a
 * `chat.completion` with its text, reasoning, tool calls and usage, or an Anthropic `message` with
 * thinking, text and `tool_use` blocks. It carries what SseRelay's stream of the same upstream
 * carries, as the official clients read that stream (test/gateway/whole-answers.test.ts): the
 * reasoning as the message's `reasoning_content` (all of it, as the stream's deltas joined), or to
 * Anthropic as its blocks before the text and calls, each with what the provider sent to send back
 * with it: a `thinking` block with its `signature` (none when the provider sent none: an
 * OpenAI-compatible upstream's reasoning, Ollama's, Responses'), a `redacted_thinking` block with
 * its `data`. The blocks come in that order, thinking, text, calls, the order the upstreams'
 * streams have them in; a stream whose parts interleave (text between two pieces of reasoning,
 * text after a call) is written by the relay in a block per run, and here in a block per kind
 * (ModelStream keeps each kind apart).
 * A call whose arguments are not one JSON value is a 502 rather than an answer
 * the client cannot use (ERR_BAD_ARGUMENTS). A refusal (OpenAI's) is the message's `refusal`, or,
 * to Anthropic, whose messages have no field for it, the text with the stop reason `refusal`, as
 * SseRelay writes it. The sources the answer cites at an address are the message's `annotations`
 * (`openAiAnnotations`: each address once), as SseRelay writes them to OpenAI's clients; to Anthropic's, none.
 */
export function wholeAnswer(dialect, format, ms, text, model) {
  const facts = describeFormat(format);
  const calls = ms.toolCalls;
  const bad = calls.find((c) => c.type !== 'custom' && c.valid !== true); // (a custom tool's input is free text)
  if (bad !== undefined) {
    throw Object.assign(new Error(`the upstream's tool call ${bad.index} (${bad.name}) has arguments that are not one JSON value`), { code: 'ERR_BAD_ARGUMENTS' });
  }
  const finish = ms.finishReason;
  const usage = ms.usage === undefined ? undefined : facts.usage(ms.usage);
  const now = Date.now();
  const refusal = ms.refusal;
  if (dialect === 'anthropic') {
    const content = [];
    for (const b of ms.reasoningBlocks) {
      // (a block of no text and no signature is one the relay writes nothing of: DeepSeek's first, empty, reasoning_content)
      if (b.redacted !== undefined) content.push({ type: 'redacted_thinking', data: b.redacted });
      else if (b.signature !== undefined) content.push({ type: 'thinking', thinking: b.text, signature: b.signature });
      else if (b.text !== '') content.push({ type: 'thinking', thinking: b.text });
    }
    if (text + refusal !== '') content.push({ type: 'text', text: text + refusal });
    for (const c of calls) {
      // (a custom tool's free-text input as `{"input": …}`, and a Gemini call's signature as a thinking
      // block of no text right before it, as SseRelay writes them)
      if (c.signature !== undefined) content.push({ type: 'thinking', thinking: '', signature: c.signature });
      const input = c.type === 'custom' ? { input: c.arguments } : c.arguments === '' ? {} : JSON.parse(c.arguments);
      content.push({ type: 'tool_use', id: c.id || `toolu_gw${now.toString(36)}_${c.index}`, name: c.name, input });
    }
    const said = finish === undefined ? 'end_turn' : facts.finishReason(finish, 'anthropic');
    let stop = calls.length > 0 ? 'tool_use' : said === 'tool_use' ? 'end_turn' : said; // (tool_use exactly when calls are there)
    if (stop === 'end_turn' && refusal !== '') stop = 'refusal';
    return {
      id: `msg_gw${now.toString(36)}`, type: 'message', role: 'assistant', model, content, stop_reason: stop, stop_sequence: null,
      usage: {
        input_tokens: (usage?.input ?? 0) - (usage?.cacheRead ?? 0) - (usage?.cacheWrite ?? 0), output_tokens: usage?.output ?? 0,
        ...(usage?.cacheRead !== undefined ? { cache_read_input_tokens: usage.cacheRead } : {}),
        ...(usage?.cacheWrite !== undefined ? { cache_creation_input_tokens: usage.cacheWrite } : {}),
      },
    };
  }
  const said = finish === undefined ? 'stop' : facts.finishReason(finish, 'openai');
  const message = { role: 'assistant', content: (calls.length > 0 || refusal !== '') && text === '' ? null : text };
  // (the reasoning where SseRelay's deltas put it, SseRelay's `reasoning: 'pass'`, and DeepSeek's whole answers)
  const reasoning = ms.reasoning;
  if (reasoning !== '') message.reasoning_content = reasoning;
  if (refusal !== '') message.refusal = refusal;
  // (the sources cited at an address: the `url_citation` annotations SseRelay writes before a
  // translated stream's finish, each spanning the whole content)
  const annotations = openAiAnnotations(ms.citations, [...(message.content ?? '')].length);
  if (annotations.length > 0) message.annotations = annotations;
  if (calls.length > 0) {
    // (a call's signature, which Gemini wants back with it, where SseRelay and Google's OpenAI-compatible API put it)
    message.tool_calls = calls.map((c) => ({
      id: c.id || `call_gw${now.toString(36)}_${c.index}`,
      ...(c.type === 'custom' ? { type: 'custom', custom: { name: c.name, input: c.arguments } } : { type: 'function', function: { name: c.name, arguments: c.arguments } }),
      ...(c.signature !== undefined ? { extra_content: { google: { thought_signature: c.signature } } } : {}),
    }));
  }
  const answer = {
    id: `chatcmpl-gw${now.toString(36)}`, object: 'chat.completion', created: Math.floor(now / 1000), model,
    choices: [{ index: 0, message, finish_reason: calls.length > 0 ? 'tool_calls' : said === 'tool_calls' ? 'stop' : said }],
  };
  if (usage !== undefined) {
    answer.usage = { prompt_tokens: usage.input ?? 0, completion_tokens: usage.output ?? 0, total_tokens: (usage.input ?? 0) + (usage.output ?? 0) };
    if (usage.cacheRead !== undefined) answer.usage.prompt_tokens_details = { cached_tokens: usage.cacheRead };
    if (usage.reasoning !== undefined) answer.usage.completion_tokens_details = { reasoning_tokens: usage.reasoning };
  }
  return answer;
}
