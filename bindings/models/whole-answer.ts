// Layer 4: a stream's whole answer, for a client that asked for one (`stream: false`) when the
// upstream streams: what SseRelay writes for the same stream, as the official clients read it
// whole (openai-node's finalChatCompletion(), the Anthropic SDK's finalMessage()), in one object:
// an OpenAI Chat `chat.completion` or an Anthropic Messages `message`. And the stream's error as
// that client's error body, as the relay's error event writes it.
import { checkOptions, describeValue, functionOption, integerOption, oneOf, stringOption } from '../core/options.js';
import { ModelStreamError, cutShort } from './errors.js';
import { MODEL_FORMATS, describeFormat, type ClientFormat, type ModelFormat } from './formats/index.js';
import { finishWithCalls } from './formats/describe.js';
import type { ToolCall } from './message.js';
import { openAiAnnotations } from './relay-openai.js';
import type { ModelStream } from './stream.js';
import { anthropicUsage, errorParts, openAiError, openAiUsage } from './writer.js';

/** {@link wholeAnswer}'s options. */
export interface WholeAnswerOptions {
  /** The client's API, as SseRelay's `to`. @defaultValue 'openai' */
  to?: ClientFormat;
  /** The answer's `model`, as SseRelay's: the model the client asked for. @defaultValue the stream's format */
  model?: string;
  /** The answer's `id`. @defaultValue `chatcmpl-seam…` (OpenAI), `msg_seam…` (Anthropic), unique to the answer */
  id?: string;
  /** An OpenAI answer's `created`, in whole seconds since 1970. @defaultValue now */
  created?: number;
  /**
   * The id of a call the provider sent none for (Gemini's, Ollama's).
   * @defaultValue `call_seam…_<index>` (OpenAI), `toolu_seam…_<index>` (Anthropic), as SseRelay's
   */
  callId?: (call: ToolCall) => string;
  /** An OpenAI answer's reasoning, as SseRelay's `reasoning`: the message's `reasoning_content`, or left out. @defaultValue 'pass' */
  reasoning?: 'pass' | 'drop';
}

/** A whole answer: an OpenAI Chat `chat.completion`, or an Anthropic Messages `message` (plain JSON values). */
export type WholeAnswer = Record<string, unknown>;

/** A client's error body: OpenAI's `{ error: { message, type, code, … } }`, Anthropic's `{ type: 'error', error: { type, message } }`. */
export type WholeError = Record<string, unknown>;

/** A number unique to each answer of this module (with the clock: the ids it makes). */
let answers = 0;

const CLIENTS = ['openai', 'anthropic'] as const;
/** Options of SseRelay's that a whole answer takes from its stream. */
const ANSWER_HINTS = { keys: { from: "the stream's format is the stream's own: wholeAnswer reads it there" } } as const;

/**
 * The whole answer of a stream read to its end: `stream` a {@link ModelStream} whose `flush()`
 * returned (its status `done`), `text` the text its `push()` and `flush()` returned, joined.
 * What SseRelay writes for the same stream, as the official clients read it whole: the same finish
 * reason (`tool_calls` / `tool_use` with calls, unless cut at a limit or refused:
 * {@link finishWithCalls}), reasoning, signatures, calls, sources cited ({@link openAiAnnotations})
 * and usage. To OpenAI: one `chat.completion`, the reasoning as the message's `reasoning_content`
 * (all of it), a refusal as its `refusal`, a Gemini call's signature as its
 * `extra_content.google.thought_signature`. To Anthropic: one `message`, the reasoning's blocks
 * first (`thinking` with the provider's `signature`, none when it sent none; `redacted_thinking`
 * with its `data`), then the text (a refusal as text, stop reason `refusal`; Anthropic's explanation of its refusal as its `stop_details`), then the `tool_use`
 * blocks (a Gemini call's signature as a `thinking` block of no text before its call). Parts that
 * interleave in the stream (text after a call) come in a block per kind: a ModelStream keeps each
 * kind apart. The provider's own calls (Anthropic's `server_tool_use`, hosted tools) and media are
 * no part of it, as they are none of the relay's translated stream. One thing it says that the relay
 * cannot: a source the stream placed in its text (Gemini's grounding supports: its `spans`) is a
 * `url_citation` at each of its spans, where the relay's spans the whole content. Anthropic's
 * message has no field for a source of another provider's (its citations point into documents and
 * search results it was given): none is written to Anthropic, as the relay writes none.
 *
 * A stream read with `normalize: false` gives the relay's text byte for byte (a ModelStream's
 * default is NFC). Throws a ModelStreamError `ERR_BAD_ARGUMENTS` (its offset -1: no one byte) when a
 * call's arguments are not one JSON value, which a client could not parse; a TypeError when the
 * stream is not done (its failure is the client's answer instead: {@link wholeError}), or when an
 * option is of another type or value, or unknown (checked as SseRelay's are).
 */
export function wholeAnswer(stream: ModelStream, text: string, options: WholeAnswerOptions = {}): WholeAnswer {
  const where = 'wholeAnswer';
  if (stream.status !== 'done') {
    throw new TypeError(`${where}: the stream is ${stream.status}, not done: a whole answer is written once its flush() returned (a failed stream's answer is its error: wholeError())`);
  }
  if (typeof text !== 'string') throw new TypeError(`${where}: text must be the string the stream's push() and flush() returned, got ${describeValue(text)}`);
  checkOptions(options, where, ['to', 'model', 'id', 'created', 'callId', 'reasoning'], ANSWER_HINTS);
  const to = oneOf(options.to, 'to', where, CLIENTS, 'openai');
  // (written into the answer as they are: a number or an object would be a JSON value of another type)
  const id = stringOption(options.id, 'id', where);
  const model = stringOption(options.model, 'model', where) ?? stream.format;
  const created = integerOption(options.created, 'created', where);
  const callIdOption = functionOption<(call: ToolCall) => string>(options.callId, 'callId', where);
  const dropReasoning = oneOf(options.reasoning, 'reasoning', where, ['pass', 'drop'], 'pass') === 'drop';
  const facts = describeFormat(stream.format);
  const calls = stream.toolCalls;
  const bad = calls.find((c) => c.type !== 'custom' && c.valid !== true); // (a custom tool's input is free text)
  if (bad !== undefined) {
    // (at no one byte: the arguments as a whole, judged once the stream ended and its count of bytes was reset)
    throw new ModelStreamError('ERR_BAD_ARGUMENTS', -1, `the upstream's tool call ${bad.index} (${bad.name}) has arguments that are not one JSON value`, '');
  }
  const serial = `${Date.now().toString(36)}${(answers++).toString(36)}`;
  const finish = stream.finishReason;
  const usage = stream.usage === undefined ? undefined : facts.usage(stream.usage);
  const refusal = stream.refusal;
  if (to === 'anthropic') {
    const callId = callIdOption ?? ((c: ToolCall) => `toolu_seam${serial}_${c.index}`);
    const content: Record<string, unknown>[] = [];
    for (const b of stream.reasoningBlocks) {
      // (a block of no text and no signature is one the relay writes nothing of: DeepSeek's first, empty, reasoning_content)
      if (b.redacted !== undefined) content.push({ type: 'redacted_thinking', data: b.redacted });
      else if (b.signature !== undefined) content.push({ type: 'thinking', thinking: b.text, signature: b.signature });
      else if (b.text !== '') content.push({ type: 'thinking', thinking: b.text });
    }
    // (Anthropic's explanation of its refusal is its stop_details, not text, as the relay passes it)
    const details = stream.message?.refusalDetails ?? null;
    const written = details === null ? text + refusal : text;
    if (written !== '') content.push({ type: 'text', text: written });
    for (const c of calls) {
      // (a custom tool's free-text input as `{"input": …}`, and a Gemini call's signature as a thinking
      // block of no text right before it, as SseRelay writes them)
      if (c.signature !== undefined) content.push({ type: 'thinking', thinking: '', signature: c.signature });
      const input = c.type === 'custom' ? { input: c.arguments } : c.arguments === '' ? {} : JSON.parse(c.arguments) as unknown;
      content.push({ type: 'tool_use', id: c.id || callId(c), name: c.name, input });
    }
    const said = finish === undefined ? 'end_turn' : facts.finishReason(finish, 'anthropic', stream.refused);
    // (tool_use when calls are there, but an answer cut at a limit or refused keeps its reason, as SseRelay writes it)
    let stop = finishWithCalls(said, 'anthropic', calls.length > 0);
    if (stop === 'end_turn' && (refusal !== '' || details !== null)) stop = 'refusal';
    // (the relay's message_start says input_tokens, 0 when unknown, and its message_delta the counts that are known)
    const u = { input_tokens: 0, ...(usage === undefined ? { output_tokens: 0 } : anthropicUsage(usage)) };
    const answer: Record<string, unknown> = { id: id ?? `msg_seam${serial}`, type: 'message', role: 'assistant', model, content, stop_reason: stop, stop_sequence: null };
    if (details !== null) answer.stop_details = JSON.parse(details) as unknown;
    answer.usage = u;
    return answer;
  }
  const callId = callIdOption ?? ((c: ToolCall) => `call_seam${serial}_${c.index}`);
  const said = finish === undefined ? 'stop' : facts.finishReason(finish, 'openai', stream.refused);
  const message: Record<string, unknown> = { role: 'assistant', content: (calls.length > 0 || refusal !== '') && text === '' ? null : text };
  // (the reasoning where SseRelay's deltas put it, with its `reasoning: 'pass'`)
  const reasoning = dropReasoning ? '' : stream.reasoning;
  if (reasoning !== '') message.reasoning_content = reasoning;
  if (refusal !== '') message.refusal = refusal;
  // (the sources cited at an address: the `url_citation` annotations SseRelay writes before a
  // translated stream's finish, each spanning the whole content; a source the stream placed in
  // its text, at each of its spans, which a relay does not know)
  const annotations = openAiAnnotations(stream.citations, message.content === null ? 0 : [...text].length, message.content === null ? undefined : text);
  if (annotations.length > 0) message.annotations = annotations;
  if (calls.length > 0) {
    // (a call's signature, which Gemini wants back with it, where SseRelay and Google's OpenAI-compatible API put it)
    message.tool_calls = calls.map((c) => ({
      id: c.id || callId(c),
      ...(c.type === 'custom' ? { type: 'custom', custom: { name: c.name, input: c.arguments } } : { type: 'function', function: { name: c.name, arguments: c.arguments } }),
      ...(c.signature !== undefined ? { extra_content: { google: { thought_signature: c.signature } } } : {}),
    }));
  }
  const answer: Record<string, unknown> = {
    id: id ?? `chatcmpl-seam${serial}`, object: 'chat.completion', created: created ?? Math.floor(Date.now() / 1000), model,
    choices: [{ index: 0, message, finish_reason: finishWithCalls(said, 'openai', calls.length > 0) }],
  };
  if (usage !== undefined) answer.usage = openAiUsage(usage);
  return answer;
}

/**
 * A stream's error as its client's error body, for the answer (a 502) in place of a whole one: the
 * object SseRelay's error event carries for it. To OpenAI `{ error: { message, type, code, offset,
 * provider_code? } }` (the provider's own message, type `upstream_error` for the provider's error,
 * else `upstream_stream_error`); to Anthropic `{ type: 'error', error: { type, message } }`, the
 * provider's error type in Anthropic's words; a stream cut short (ERR_STREAM_TRUNCATED) said as the
 * relay says it. `from` is the stream's format (required). A TypeError when `error` is not a
 * ModelStreamError, or an option is of another type or value, or unknown.
 */
export function wholeError(error: ModelStreamError, options: { from: ModelFormat; to?: ClientFormat }): WholeError {
  const where = 'wholeError';
  if (!(error instanceof ModelStreamError)) throw new TypeError(`${where}: error must be a ModelStreamError (what the stream threw), got ${describeValue(error)}`);
  if (options === undefined) throw new TypeError(`${where}: options are required: wholeError(error, { from: 'openai' })`);
  checkOptions(options, where, ['from', 'to']);
  const from = oneOf(options.from, 'from', where, MODEL_FORMATS, undefined);
  const to = oneOf(options.to, 'to', where, CLIENTS, 'openai');
  const facts = describeFormat(from);
  // (a stream cut short: in the relay's words, which name the upstream rather than the reader's completion event)
  const message = error.code === 'ERR_STREAM_TRUNCATED' ? cutShort(from) : errorParts(error).message;
  if (to === 'anthropic') return { type: 'error', error: { type: facts.anthropicErrorType(error.providerCode), message } };
  return { error: openAiError(error, message) };
}
