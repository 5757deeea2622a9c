// OpenAI Chat Completions (and the servers that speak it: DeepSeek, Groq, Mistral, xAI, vLLM, …):
// SSE events of `chat.completion.chunk`s, text at `choices[i].delta.content`, ended by `data: [DONE]`.
// Reasoning in `reasoning_content` or `reasoning` (some servers send both, the same text: read once),
// or OpenRouter's `reasoning_details` items (text, summaries, a signature, encrypted data: see
// details()), read in place of the `reasoning` OpenRouter sends beside them; a refusal in `refusal` (`content` null); tool
// calls as `tool_calls` deltas (an `index`, then `id` and `function.name` once, `function.arguments`
// in fragments; a custom tool's call with `custom.name` and its free-text input in `custom.input`
// fragments; the functions API's one call as `function_call`, its `name` once and its `arguments`
// in fragments; Gemini's thoughtSignature of a call, from Google's OpenAI-compatible API, in the
// call's `extra_content.google.thought_signature`, kept with the call); an answer in audio (`modalities: ["text", "audio"]`) has its text in
// `audio.transcript` and its sound in `audio.data` chunks (base64 PCM: media, one a chunk, each with the
// audio's `id`; a whole answer's audio is one file in the request's format, its type read from its head);
// OpenRouter's images (`images: [{type: "image_url", image_url: {url: "data:image/png;base64,…"}}]`)
// are media (an address in place of a `data:` URL as the media's `uri`); Mistral's content as an array of parts (`text`, and `thinking` parts of text),
// and its calls whole, without `index`; citations as `annotations` (`url_citation`s), or
// Perplexity's lists beside the choices, said whole in every chunk (`search_results`, `citations`).
// Some OpenAI-compatible servers (llama.cpp's llama-server in some versions, Hugging Face's TGI)
// send a call's `function.arguments` as a JSON object, not a string: the call's arguments are then
// that object's JSON text, as sent (as Ollama's are), and a relay to OpenAI's clients writes the
// event anew with the arguments as a string, as OpenAI's clients read them.
import { JK_ARRAY, JK_NULL, JK_OBJECT, JK_STRING } from '../../core/generated/abi.js';
import type { Citation } from '../message.js';
import { compilePaths } from '../paths.js';
import {
  CONTEXT_FULL, OPENAI_ERRORS, FILTERED, NULL, failedTurn, OBJECT, type Doc, type FormatSpec, LENGTH, STOP, TOOLS, argsOrObject, argsText, ascii, callKey, choice, citationOf, count, errorMessage,
  errorOfBody, find, ignored, isObj, member, never, noneOf, reasoningAlias, scope, sseEvent, sseFormat, stringAt, strings, template, text, type WholeEvent,
} from './describe.js';

const P = {
  index: 0, content: 1, reasoningContent: 2, reasoning: 3, finish: 4, usage: 5, error: 6, errorMessage: 7, errorType: 8,
  errorCode: 9, delta: 10, partType: 11, partText: 12, partThinking: 13, partThinkingText: 14, callIndex: 15, callId: 16,
  callName: 17, callArguments: 18, call: 19, refusal: 20, customName: 21, customInput: 22, fnName: 23, fnArguments: 24,
  annotations: 25, citations: 26, searchResults: 27, transcript: 28, role: 29, callSignature: 30, audioData: 31, imageUrl: 32,
  audioId: 33, audioExpires: 34, audioType: 35, detailType: 36, detailText: 37, detailSummary: 38, detailSignature: 39, detailData: 40,
  detailFormat: 41,
} as const;
/**
 * The media type of an answer's audio chunks (`delta.audio.data`). The stream does not say the
 * format: the request's `audio.format` does, and a streamed request may ask for `pcm16` only (the
 * API refuses another: "'audio.format' does not support 'wav' when stream=true. Supported values
 * are: 'pcm16'"), raw 16-bit signed little-endian samples, mono, at 24 kHz, as OpenAI documents its
 * pcm16. Not `audio/L16`, whose samples are big-endian (RFC 2586): the format's name, with its rate.
 */
const STREAMED_AUDIO = 'audio/pcm16;rate=24000';
/** The key of the functions API's call (`function_call`: one a message, no index). */
const FUNCTION_CALL = 0;
const TEXT_PART = /* @__PURE__ */ ascii('text');

/** The records of record `r`'s value: those that begin inside it. */
const inside = (doc: Doc, r: number, j: number): boolean => doc.start(j) >= doc.start(r) && doc.start(j) < doc.end(r);

export const openai: FormatSpec = /* @__PURE__ */ sseFormat({
  doneMarker: true,
  completion: 'data: [DONE]',
  finishReasons: {
    stop: STOP, length: LENGTH, tool_calls: TOOLS, function_call: TOOLS, content_filter: FILTERED,
    // (OpenAI-compatible servers' own: Mistral's context window full; vLLM's output stopped for
    // repeating itself, an answer not finished)
    model_length: CONTEXT_FULL, repetition: LENGTH,
    // (the server cut the answer short: Mistral's and vLLM's `error`, DeepSeek's
    // `insufficient_system_resource`, vLLM's `abort`; not a completion a client may take for the answer)
    error: /* @__PURE__ */ failedTurn('the server ended the turn with an error'),
    insufficient_system_resource: /* @__PURE__ */ failedTurn('the server ran short of resources and cut the answer short'),
    abort: /* @__PURE__ */ failedTurn('the server aborted the request'),
  },
  errorBody: errorOfBody,
  wholeAnswer: wholeChat,
  isWholeAnswer: isChat,
  wholeAnswerHead: /"object"\s*:\s*"chat\.completion"/,
  errorTypes: OPENAI_ERRORS,
  envelope: /* @__PURE__ */ compilePaths(['id', 'created', 'model']),
  usage: (u) => ({
    input: count(u, 'prompt_tokens'), output: count(u, 'completion_tokens'), cacheRead: count(u, 'prompt_tokens_details.cached_tokens'),
    reasoning: count(u, 'completion_tokens_details.reasoning_tokens'),
  }),
  program: /* @__PURE__ */ compilePaths([
    'choices[*].index', 'choices[*].delta.content', 'choices[*].delta.reasoning_content', 'choices[*].delta.reasoning',
    'choices[*].finish_reason', 'usage', 'error', 'error.message', 'error.type', 'error.code', 'choices[*].delta',
    'choices[*].delta.content[*].type', 'choices[*].delta.content[*].text', 'choices[*].delta.content[*].thinking',
    'choices[*].delta.content[*].thinking[*].text', 'choices[*].delta.tool_calls[*].index', 'choices[*].delta.tool_calls[*].id',
    'choices[*].delta.tool_calls[*].function.name', 'choices[*].delta.tool_calls[*].function.arguments',
    'choices[*].delta.tool_calls[*]', 'choices[*].delta.refusal', 'choices[*].delta.tool_calls[*].custom.name',
    'choices[*].delta.tool_calls[*].custom.input', 'choices[*].delta.function_call.name', 'choices[*].delta.function_call.arguments',
    'choices[*].delta.annotations', 'citations', 'search_results', 'choices[*].delta.audio.transcript', 'choices[*].delta.role',
    'choices[*].delta.tool_calls[*].extra_content.google.thought_signature', 'choices[*].delta.audio.data',
    'choices[*].delta.images[*].image_url.url', 'choices[*].delta.audio.id', 'choices[*].delta.audio.expires_at',
    'choices[*].delta.audio.mime_type', 'choices[*].delta.reasoning_details[*].type', 'choices[*].delta.reasoning_details[*].text',
    'choices[*].delta.reasoning_details[*].summary', 'choices[*].delta.reasoning_details[*].signature',
    'choices[*].delta.reasoning_details[*].data', 'choices[*].delta.reasoning_details[*].format',
  ]),
  // a delta of the followed choice: text, reasoning, or a fragment of the current call's arguments
  // (no finish reason, usage object, error, parts, a call's id or name, or a refusal: a string there
  // is read here)
  template: /* @__PURE__ */ template([
    choice, text, reasoningAlias, reasoningAlias, strings, /* @__PURE__ */ noneOf(JK_OBJECT), { role: 'none', ignore: NULL }, ignored, ignored,
    ignored, scope, never, never, never, never, callKey, never, never, argsOrObject, { role: 'none', ignore: OBJECT }, strings, never, argsText,
    never, never, { role: 'none', ignore: NULL }, { role: 'none', ignore: NULL }, { role: 'none', ignore: NULL }, { role: 'none', ignore: NULL },
    ignored, never, { role: 'none', ignore: NULL }, { role: 'none', ignore: NULL }, { role: 'none', ignore: NULL }, ignored, ignored,
    // (OpenRouter's reasoning_details: an event with one is read by the description; an empty array
    // (`reasoning_details: []`, in each of OpenRouter's text deltas) has no records here)
    never, never, never, never, never, never,
  ]),
  read(doc, sink) {
    const n = doc.n;
    // the element of `choices` to follow: the one whose index is the choice (by position without one)
    let el = -1;
    let sawIndex = false;
    let others = false; // (an element of another choice)
    let errorRec = -1;
    let messageRec = -1;
    let results = -1;
    let addresses = -1;
    let hasDetails = false;
    for (let j = 0; j < n; j++) {
      const p = doc.path(j);
      if (p === P.searchResults) results = j;
      else if (p === P.citations) addresses = j;
      else if (p === P.index) {
        sawIndex = true;
        if (doc.int(j) === sink.choice) el = doc.index(j);
        else others = true;
      } else if (p === P.usage) {
        if (doc.kind(j) === JK_OBJECT) sink.onUsage(doc.value(j) as Record<string, unknown>);
      } else if (p === P.error) {
        if (doc.kind(j) !== JK_NULL) errorRec = j;
      } else if (p === P.errorMessage) {
        messageRec = j;
      } else if (p >= P.detailType) {
        hasDetails = true;
      }
    }
    if (errorRec >= 0) {
      sink.onError(errorMessage(doc, errorRec, messageRec), stringAt(doc, find(doc, P.errorCode)) ?? stringAt(doc, find(doc, P.errorType)));
      return;
    }
    // (the search results first: the addresses alone then add only what they did not name)
    if (results >= 0) sink.onCitationList(doc, results, searchResults);
    if (addresses >= 0) sink.onCitationList(doc, addresses, urls);
    if (!sawIndex) el = sink.choice;
    if (!canonical(doc, sink)) {
      const usage = find(doc, P.usage);
      const annotations = recordOf(doc, P.annotations, el);
      const role = recordOf(doc, P.role, el);
      sink.onNonCanonical(doc, recordOf(doc, P.finish, el), usage >= 0 && doc.kind(usage) === JK_OBJECT ? usage : -1,
        annotations >= 0 && doc.kind(annotations) === JK_ARRAY ? annotations : -1, role >= 0 && doc.kind(role) === JK_STRING ? role : -1, others);
    }
    if (el < 0) return;
    // (a delta with both reasoning_content and reasoning (servers that keep the older name beside
    // the newer one, vLLM's and mlx-vlm's) says one text twice: reasoning_content's is read, or
    // reasoning's when reasoning_content's is empty)
    let twice = -1;
    const rc = recordOf(doc, P.reasoningContent, el);
    const rs = rc >= 0 ? recordOf(doc, P.reasoning, el) : -1;
    if (rs >= 0 && doc.kind(rc) === JK_STRING && doc.kind(rs) === JK_STRING) twice = doc.end(rc) > doc.start(rc) ? rs : rc;
    // (OpenRouter's reasoning_details of the followed delta: see details())
    const detailed = hasDetails ? detailsOf(doc, el) : -1;
    const detailsSay = detailed >= 0 && saysReasoning(doc, detailed);
    let delta = -1;
    let finish = -1;
    let fnName = -1;
    let fnArguments = -1;
    let images = false;
    let audio = -1;
    let audioType = -1;
    let audioExpires = -1;
    for (let j = 0; j < n; j++) {
      const p = doc.path(j);
      if (p >= P.detailType) continue;
      if (p === P.delta) {
        if (doc.index(j) === el) delta = j;
        continue;
      }
      if (p === P.annotations) {
        if (doc.index(j) === el && doc.kind(j) === JK_ARRAY) cite(sink, doc.value(j));
        continue;
      }
      if (p === P.imageUrl) {
        images = true;
        continue;
      }
      if (p >= P.audioId) {
        if (doc.index(j) !== el) continue;
        // (the audio's id, which a later turn names to send the answer's audio back: its media's from here on)
        if (p === P.audioId) {
          if (doc.kind(j) === JK_STRING) sink.onMediaId(doc, j);
        } else if (p === P.audioExpires) audioExpires = j;
        else if (doc.kind(j) === JK_STRING) audioType = j;
        continue;
      }
      if (p === P.refusal || p === P.fnName || p === P.fnArguments || p === P.transcript || p === P.audioData) {
        if (doc.index(j) !== el || doc.kind(j) !== JK_STRING) continue;
        // (an answer in audio: its transcript is the answer's text, each chunk of its audio media)
        if (p === P.transcript) sink.onText(doc, j);
        else if (p === P.audioData) audio = j;
        else if (p === P.refusal) sink.onRefusal(doc, j);
        else if (p === P.fnName) fnName = j;
        else fnArguments = j;
        continue;
      }
      if (p >= P.partType || doc.index(j) !== el || doc.kind(j) !== JK_STRING) continue;
      if (p === P.content) sink.onText(doc, j);
      else if (p === P.reasoningContent || p === P.reasoning) {
        if (j !== twice && !detailsSay) sink.onReasoning(doc, j);
      }
      else if (p === P.finish) finish = j;
    }
    if (detailed >= 0) details(doc, sink, detailed);
    // (a stream's chunks are pcm16; a whole answer's file says its type, which its events carry: see wholeChat)
    if (audio >= 0) sink.onMedia(doc, audioType >= 0 ? audioType : STREAMED_AUDIO, audio, false, -1, undefined, audioExpires);
    if (delta >= 0) {
      parts(doc, sink, delta);
      calls(doc, sink, delta);
      // (OpenRouter's images: each a `data:` URL, or an address)
      for (let j = 0; images && j < n; j++) {
        if (doc.path(j) === P.imageUrl && doc.kind(j) === JK_STRING && inside(doc, delta, j)) sink.onMedia(doc, '', j, false, -1, 'url');
      }
    }
    if (fnName >= 0 && doc.end(fnName) > doc.start(fnName)) sink.onToolCall(doc, FUNCTION_CALL, -1, fnName);
    // (an empty fragment, as a chunk with `function_call: {name: '', arguments: ''}` brings, begins no call)
    if (fnArguments >= 0 && doc.end(fnArguments) > doc.start(fnArguments)) sink.onToolArguments(doc, FUNCTION_CALL, fnArguments);
    if (finish >= 0) {
      sink.onFinishReason(doc.string(finish));
      sink.onToolCallsEnd();
    }
  },
});

/** The first record of the followed delta's `reasoning_details` (OpenRouter's), or −1 when it has none. */
function detailsOf(doc: Doc, el: number): number {
  if (el < 0) return -1;
  const n = doc.n;
  let delta = -1;
  for (let j = 0; j < n; j++) {
    const p = doc.path(j);
    if (p === P.delta && doc.index(j) === el) delta = j;
    else if (p >= P.detailType && delta >= 0 && inside(doc, delta, j)) return j;
  }
  return -1;
}

/** Whether the details from record `first` on say reasoning text (a `text` or `summary` string). */
function saysReasoning(doc: Doc, first: number): boolean {
  const n = doc.n;
  for (let j = first; j < n && doc.path(j) >= P.detailType; j++) {
    const p = doc.path(j);
    if ((p === P.detailText || p === P.detailSummary) && doc.kind(j) === JK_STRING) return true;
  }
  return false;
}

const REASONING_TEXT = /* @__PURE__ */ ascii('reasoning.text');
const REASONING_SUMMARY = /* @__PURE__ */ ascii('reasoning.summary');
const REASONING_ENCRYPTED = /* @__PURE__ */ ascii('reasoning.encrypted');
/** The `format` of details that Anthropic's model wrote: a signature and redacted data of Anthropic's thinking blocks. */
const ANTHROPIC_DETAILS = /* @__PURE__ */ ascii('anthropic-claude-v1');

/**
 * OpenRouter's `reasoning_details` of the followed delta (its records from `first` on, which lie
 * together in it), each item in order: `{type: "reasoning.text", text, signature?}`,
 * `{type: "reasoning.summary", summary}`, `{type: "reasoning.encrypted", data}`, with `id`,
 * `format` (which model's reasoning: `anthropic-claude-v1`, `openai-responses-v1`,
 * `google-gemini-v1`, …) and `index`. OpenRouter says the same text again as the delta's
 * `reasoning`, which is then not read (read() leaves it). A text's signature (Anthropic's, sent
 * back with its thinking block) ends its block; an Anthropic model's encrypted data is a redacted
 * thinking block's; another model's (OpenAI's encrypted reasoning, Google's thought signatures)
 * is kept with the block, as Responses' encrypted_content is, for no client's format of a relay
 * has its place.
 */
function details(doc: Doc, sink: Parameters<FormatSpec['read']>[1], first: number): void {
  const n = doc.n;
  let item = doc.index(first);
  let type = -1;
  let said = -1;
  let signature = -1;
  let data = -1;
  let format = -1;
  for (let j = first; ; j++) {
    const end = j >= n || doc.path(j) < P.detailType;
    if (end || doc.index(j) !== item) {
      // (the item before: each member a string, or none)
      const str = (r: number) => r >= 0 && doc.kind(r) === JK_STRING && doc.end(r) > doc.start(r);
      if (type >= 0 && (doc.is(type, REASONING_TEXT) || doc.is(type, REASONING_SUMMARY))) {
        if (str(said)) sink.onReasoning(doc, said);
        if (str(signature) && doc.is(type, REASONING_TEXT)) {
          sink.onReasoningSignature(doc, signature);
          sink.onReasoningEnd();
        }
      } else if (type >= 0 && doc.is(type, REASONING_ENCRYPTED) && str(data)) {
        if (format >= 0 && doc.is(format, ANTHROPIC_DETAILS)) sink.onReasoningSignature(doc, data, true);
        else sink.onReasoningEncrypted(doc, data);
      }
      if (end) return;
      item = doc.index(j);
      type = said = signature = data = format = -1;
    }
    const p = doc.path(j);
    if (p === P.detailType) type = j;
    else if (p === P.detailText || p === P.detailSummary) said = j;
    else if (p === P.detailSignature) signature = j;
    else if (p === P.detailData) data = j;
    else format = j;
  }
}

/**
 * Whether every client reads the event as it is: no content parts, no call without `index` or
 * with its arguments as an object, no
 * fragment of a call that never began (a first delta without the `id` clients need), no call at
 * the index of another (Ollama's, all at index 0), and no delta with its reasoning under both
 * names (which a client that reads both would take twice).
 */
function canonical(doc: Doc, sink: Parameters<FormatSpec['read']>[1]): boolean {
  const n = doc.n;
  let reasoningAt = -1;
  for (let j = 0; j < n; j++) {
    const p = doc.path(j);
    if (p >= P.partType && p <= P.partThinkingText) return false;
    if ((p === P.reasoningContent || p === P.reasoning) && doc.kind(j) === JK_STRING) {
      if (reasoningAt === doc.index(j)) return false;
      reasoningAt = doc.index(j);
    }
    // (arguments as an object, not the string OpenAI's clients read)
    if (p === P.callArguments && doc.kind(j) === JK_OBJECT) return false;
    if (p === P.call) {
      let key = -1;
      let id = -1;
      for (let i = j + 1; i < n && doc.start(i) < doc.end(j); i++) {
        if (doc.path(i) === P.callIndex) key = doc.int(i);
        else if (doc.path(i) === P.callId && doc.kind(i) === JK_STRING) id = i;
      }
      if (key < 0 || (id < 0 && !sink.hasCall(key)) || (id >= 0 && sink.keyTaken(key, doc.string(id)))) return false;
    }
  }
  return true;
}

/**
 * The citations of a delta's `annotations` (OpenAI's search models, OpenRouter's web plugin): each
 * `{type: "url_citation", url_citation: {url, title, start_index, end_index, content?}}`.
 */
function cite(sink: Parameters<FormatSpec['read']>[1], annotations: unknown): void {
  if (!Array.isArray(annotations)) return;
  for (const a of annotations) {
    const c = citationOf(a, ['url'], ['title'], 'content', member(a, 'url_citation'));
    if (c !== null) sink.onCitation(c);
  }
}

/** Perplexity's `search_results`: `{title, url, date, last_updated, snippet, …}` each. */
function searchResults(list: readonly unknown[]): Citation[] {
  const out: Citation[] = [];
  for (const x of list) {
    const c = citationOf(x, ['url'], ['title']);
    if (c !== null) out.push(c);
  }
  return out;
}

/** Perplexity's `citations`: the addresses alone (each one's source `{url}`). */
function urls(list: readonly unknown[]): Citation[] {
  const out: Citation[] = [];
  for (const u of list) if (typeof u === 'string') out.push({ url: u, source: { url: u } });
  return out;
}

/** The record of path `p` in element `el` of `choices` that is not null, or −1. */
function recordOf(doc: Doc, p: number, el: number): number {
  for (let j = 0; j < doc.n; j++) if (doc.path(j) === p && doc.index(j) === el && doc.kind(j) !== JK_NULL) return j;
  return -1;
}

/** Mistral's content as an array of parts: `text` parts are text, `thinking` parts (text parts in them, or a string) reasoning. */
function parts(doc: Doc, sink: Parameters<FormatSpec['read']>[1], delta: number): void {
  const n = doc.n;
  for (let j = 0; j < n; j++) {
    const p = doc.path(j);
    if (p < P.partType || p > P.partThinkingText || doc.kind(j) !== JK_STRING || !inside(doc, delta, j)) continue;
    if (p === P.partText) {
      // a part's text is the answer's when the part's type is 'text' (or it has none)
      const k = doc.index(j);
      let typed = -1;
      for (let i = 0; i < n; i++) if (doc.path(i) === P.partType && doc.index(i) === k && inside(doc, delta, i)) typed = i;
      if (typed < 0 || doc.is(typed, TEXT_PART)) sink.onText(doc, j);
    } else if (p === P.partThinking || p === P.partThinkingText) {
      sink.onReasoning(doc, j);
    }
  }
}

/**
 * Mistral's content as parts read from its JSON (another choice's, which a relay to OpenAI's
 * clients writes anew without a reader), by parts()'s rules: the text of its `text` parts (or of
 * parts with no type), and of its `thinking` parts (a string, or text parts in them).
 */
export function partTexts(content: readonly unknown[]): { text: string; thinking: string } {
  let text = '';
  let thinking = '';
  for (const p of content) {
    const type = member(p, 'type');
    if (type === 'text' || type === undefined) {
      const t = member(p, 'text');
      if (typeof t === 'string') text += t;
    } else if (type === 'thinking') {
      const t = member(p, 'thinking');
      if (typeof t === 'string') thinking += t;
      else if (Array.isArray(t)) {
        for (const q of t as unknown[]) {
          const u = member(q, 'text');
          if (typeof u === 'string') thinking += u;
        }
      }
    }
  }
  return { text, thinking };
}

/**
 * The `tool_calls` deltas of the followed choice, element by element: its `index` is the call's
 * key (none from Mistral, whose calls come whole, found by their id), `id` and `function.name`
 * begin it, `function.arguments` is a fragment (or, as an object, the whole arguments: its JSON
 * text as sent); a custom tool's call has `custom.name` and `custom.input` instead.
 */
function calls(doc: Doc, sink: Parameters<FormatSpec['read']>[1], delta: number): void {
  const n = doc.n;
  for (let e = 0; e < n; e++) {
    if (doc.path(e) !== P.call || !inside(doc, delta, e)) continue;
    let key = -1;
    let id = -1;
    let name = -1;
    let args = -1;
    let signature = -1;
    let custom = false;
    for (let j = e + 1; j < n && doc.start(j) < doc.end(e); j++) {
      const p = doc.path(j);
      if (p === P.callIndex) key = doc.int(j);
      else if (p === P.callSignature) signature = doc.kind(j) === JK_STRING ? j : -1;
      else if (p === P.callId) id = j;
      else if (p === P.callName) name = j;
      else if (p === P.callArguments) args = doc.kind(j) === JK_STRING || doc.kind(j) === JK_OBJECT ? j : -1;
      else if (p === P.customName) {
        name = j;
        custom = true;
      } else if (p === P.customInput) {
        args = j;
        custom = true;
      }
    }
    if ((id >= 0 && doc.kind(id) === JK_STRING) || (name >= 0 && doc.kind(name) === JK_STRING && doc.end(name) > doc.start(name)) || signature >= 0) {
      sink.onToolCall(doc, key, id, name, false, -1, '', custom, signature);
    }
    if (args >= 0) sink.onToolArguments(doc, key, args, false, custom);
  }
}

/**
 * A whole chat completion (asked without `stream`: `choices[i].message`) as the stream it comes as:
 * a chunk for each choice, its message the delta (each call given its index in the message) with
 * its finish reason, after a chunk of its reasoning where it has some (`reasoning_content`,
 * `reasoning`: a stream's come before its text), the usage in a chunk of its own, then `[DONE]`.
 */
/** A whole answer: a `chat.completion`, a choice at least with its `message`. */
function isChat(body: unknown): body is Record<string, unknown> & { choices: unknown[] } {
  return isObj(body) && Array.isArray(body.choices) && body.choices.some((c) => isObj(c) && isObj(c.message));
}

function wholeChat(body: unknown): WholeEvent[] | undefined {
  if (!isChat(body)) return undefined;
  // (the members in the order they came: `object` where it was, `message` become `delta`)
  const { choices, usage, ...envelope } = body;
  const chunk = (rest: Record<string, unknown>) => sseEvent({ ...envelope, object: 'chat.completion.chunk', ...rest });
  const out: WholeEvent[] = [];
  for (const c of choices as unknown[]) {
    if (!isObj(c)) continue;
    // (its reasoning, which a message may have after its content (DeepSeek's), first, in a chunk
    // of its own, as its stream sends it before the text)
    const m = c.message;
    // (OpenRouter's reasoning_details with it, read in place of the same text its `reasoning` says)
    const thinks = isObj(m) && ([m.reasoning_content, m.reasoning].some((r) => typeof r === 'string' && r !== '')
      || (Array.isArray(m.reasoning_details) && m.reasoning_details.length !== 0));
    if (thinks) {
      const thought: Record<string, unknown> = {};
      if (m.role !== undefined) thought.role = m.role;
      for (const k of ['reasoning_content', 'reasoning', 'reasoning_details']) if (k in m) thought[k] = m[k];
      out.push(chunk({ choices: [{ ...('index' in c ? { index: c.index } : {}), delta: thought, finish_reason: null }] }));
    }
    const choice: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(c)) {
      if (k !== 'message') choice[k] = v;
      else if (isObj(v)) {
        const { role: _role, reasoning_content: _said, reasoning: _alias, reasoning_details: _details, ...rest } = v;
        let delta = thinks ? rest : v;
        // (its audio is the whole file, in the format the request asked, which the answer does not
        // say: its type, read from the file's head, beside it as `mime_type`, where a stream's
        // chunks, pcm16, have none)
        const audio = v.audio;
        if (isObj(audio) && typeof audio.data === 'string') delta = { ...delta, audio: { ...audio, mime_type: audioFileType(audio.data) } };
        choice.delta = Array.isArray(v.tool_calls) ? { ...delta, tool_calls: v.tool_calls.map((t: unknown, index) => (isObj(t) ? { index, ...t } : t)) } : delta;
      } else choice.delta = {};
    }
    out.push(chunk({ choices: [choice] }));
  }
  if (usage !== undefined && usage !== null) out.push(chunk({ choices: [], usage }));
  out.push({ data: '[DONE]' });
  return out;
}

/**
 * The media type of a whole answer's audio (`message.audio.data`, base64), from the decoded file's
 * head: the request's `audio.format` made it `wav`, `mp3`, `flac`, `opus` (in Ogg), `aac` (ADTS) or
 * `pcm16` (raw samples, no header), and the answer does not say which. RIFF/WAVE is audio/wav; an
 * ID3 tag, or an MPEG audio frame whose next frame (or the file's end) is where its header says,
 * audio/mpeg; fLaC audio/flac; OggS audio/ogg; an ADTS frame so followed audio/aac; anything
 * else pcm16's type, as a stream's chunks (the one headerless format: raw samples may begin with
 * an MPEG frame's sync, never with the next frame where it says).
 */
export function audioFileType(base64: string): string {
  let b: Uint8Array;
  try {
    // (a head long enough for two frames of the longest MPEG or ADTS frame)
    const head = atob(base64.slice(0, Math.min(base64.length, 16384) & ~3));
    b = new Uint8Array(head.length);
    for (let i = 0; i < head.length; i++) b[i] = head.charCodeAt(i);
  } catch {
    return STREAMED_AUDIO;
  }
  const total = (base64.length >> 2) * 3 - (base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0);
  const is = (at: number, s: string) => b.length >= at + s.length && [...s].every((c, i) => b[at + i] === c.charCodeAt(0));
  if (is(0, 'RIFF') && is(8, 'WAVE')) return 'audio/wav';
  if (is(0, 'fLaC')) return 'audio/flac';
  if (is(0, 'OggS') && b.length > 4 && b[4] === 0) return 'audio/ogg';
  if (is(0, 'ID3') && b.length > 4 && b[3] >= 2 && b[3] <= 4 && b[4] !== 0xff) return 'audio/mpeg';
  // (a frame, and the next where it says, or the file's end)
  const framed = (size: (at: number) => number): boolean => {
    const first = size(0);
    return first > 0 && (first === total || size(first) > 0);
  };
  if (framed(adtsFrame(b))) return 'audio/aac';
  if (framed(mpegFrame(b))) return 'audio/mpeg';
  return STREAMED_AUDIO;
}

/** MPEG audio's bit rates (kbit/s) by version (1, else 2 and 2.5) and layer (I, II, III), index 1–14. */
const MPEG_RATES = [
  [[32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448], [32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
    [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]],
  [[32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256], [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
    [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]],
];

/** The length of the MPEG audio frame (Layer I, II, III) whose header is at `at` in `b`, or 0 when none is there. */
const mpegFrame = (b: Uint8Array) => (at: number): number => {
  if (at + 4 > b.length || b[at] !== 0xff || (b[at + 1] & 0xe0) !== 0xe0) return 0;
  const version = (b[at + 1] >> 3) & 3; // (0: 2.5, 2: 2, 3: 1; 1 reserved)
  const layer = 4 - ((b[at + 1] >> 1) & 3); // (4: reserved)
  const rate = b[at + 2] >> 4;
  const sr = (b[at + 2] >> 2) & 3;
  if (version === 1 || layer === 4 || rate === 0 || rate === 15 || sr === 3) return 0;
  const kbps = MPEG_RATES[version === 3 ? 0 : 1][layer - 1][rate - 1];
  const hz = [44100, 48000, 32000][sr] / (version === 3 ? 1 : version === 2 ? 2 : 4);
  const pad = (b[at + 2] >> 1) & 1;
  if (layer === 1) return (Math.floor((12000 * kbps) / hz) + pad) * 4;
  return Math.floor(((layer === 3 && version !== 3 ? 72000 : 144000) * kbps) / hz) + pad;
};

/** The length of the ADTS frame (AAC) whose header is at `at` in `b`, or 0 when none is there. */
const adtsFrame = (b: Uint8Array) => (at: number): number => {
  // (sync, layer 0, a sampling rate's index below 13, a length past the header)
  if (at + 7 > b.length || b[at] !== 0xff || (b[at + 1] & 0xf6) !== 0xf0 || ((b[at + 2] >> 2) & 15) > 12) return 0;
  const length = ((b[at + 3] & 3) << 11) | (b[at + 4] << 3) | (b[at + 5] >> 5);
  return length >= 7 ? length : 0;
};
