// The request's parameters
//
// Each field of the client's request is carried in the upstream's words, ignored on purpose where
// it has no effect on the answer's content (each with its reason where it is read), or refused
// with a RequestError that names it: never dropped in silence. The fields are those of the APIs'
// references (OpenAI's ChatCompletionCreateParams, Anthropic's MessageCreateParams) and `top_k`,
// which OpenAI-compatible servers take and Anthropic's API takes for the models that do. A field
// that neither API has is refused: its meaning is unknown, so there is no word to carry it in
// and no telling that it does nothing. A vendor's extension reaches an upstream of the client's
// own API, where the request passes as it is.
//
// Here: what is the same for every upstream (the defaults, the reasons, what has no effect, and
// Params, through which each upstream's row takes the fields one by one). Each upstream's row, its
// words for them, is in its file (upstreams/), its description's `params`, which index.mjs runs.
import { RequestError } from './errors.mjs';
import { given, isObject, toolsOf } from './content.mjs';

export const THINKING = Symbol('thinking'); // an Anthropic client's `thinking` in the middle form: Chat has no word for it
export const NAMES = Symbol('names'); // the Anthropic client's names of the middle form's fields, for the errors
export const END_USER = Symbol('end user'); // an Anthropic client's metadata.user_id, for an upstream with a word of its own (Converse's requestMetadata)

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
export class Params {
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
export function put(out, key, value) {
  if (value !== undefined) out[key] = value;
}
