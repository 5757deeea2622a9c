// Gemini (`streamGenerateContent?alt=sse`, the Gemini API and Vertex AI): SSE events ended by CR LF,
// each a whole GenerateContentResponse. Text in `candidates[i].content.parts[].text`; a part with
// `thought: true` is reasoning; `functionCall {name, args, id?}` comes whole (its arguments are the
// `args` object's JSON as sent), or, from Vertex with `streamFunctionCallArguments`, in parts: a
// part with the name and `willContinue: true` begins the call, parts with `partialArgs` (each a
// JSON path and a value, a string's in pieces while `willContinue`) bring its arguments, and a
// part without `willContinue` (`functionCall: {}`) ends it; its arguments are then one JSON text,
// the one the whole `args` would have been. A part's `thoughtSignature` is kept with its call
// (the caller sends it back with it), or, on any other part, with the reasoning. No `[DONE]`: the
// chunk whose followed candidate has a `finishReason` (or whose prompt was blocked,
// `promptFeedback.blockReason`) completes the stream, with the usage of that chunk
// (`usageMetadata`, running totals in every chunk, whole in the last: the core keeps the last one
// that came, which a stream cut short or failed reports); an `{"error": …}` chunk is
// the provider's error, and so is a finish reason that says the turn failed (a malformed function
// call, …), with the candidate's `finishMessage`. A candidate's `groundingMetadata` and
// `citationMetadata` name the sources it cites; its grounding metadata also the spans of the answer
// each source backs (in bytes of the answer's UTF-8), the queries searched and the Search
// Suggestions to show, and its `urlContextMetadata` the pages the URL context tool retrieved:
// metadata said whole, and again in later chunks (never a quiet chunk's). The code execution tool
// (run by Google) says its code in an `executableCode` part (`{language, code, id?}`) and its result in a
// `codeExecutionResult` part after it (`{outcome, output?, id?}`): the provider's own call, named
// `code_execution`, with the code object's JSON as its arguments and the result object's as its
// result. An `inlineData` part (`{mimeType, data}`: an image the model made, audio) is media, kept
// as sent with the part's thoughtSignature; so is a `fileData` part (`{mimeType, fileUri}`), its
// address the media's `uri`. Built-in tools run beside the request's functions (Google Search, URL
// context, …) say their calls in `toolCall` parts (`{id, toolType, args}`, signed) and their
// results in `toolResponse` parts: the provider's own calls too, named by their toolType.
import { JK_FALSE, JK_NULL, JK_NUMBER, JK_OBJECT, JK_STRING, JK_TRUE } from '../../core/generated/abi.js';
import type { ByteSpan, Citation } from '../message.js';
import { compilePaths } from '../paths.js';
import {
  FILTERED, failedTurn, type Doc, type Sink, type FinishWords, type FormatSpec, LENGTH, NULL, type ProviderError, STOP, choice, citationOf, count, errorOfBody, find,
  ignored, isObj, member, never, noneOf, providerError, runningUsage, scope, sseEvent, sseFormat, stringAt, strings, template, text, type WholeEvent,
} from './describe.js';

const P = {
  index: 0, text: 1, thought: 2, signature: 3, call: 4, callName: 5, callArgs: 6, callId: 7, finish: 8, usage: 9, blockReason: 10,
  error: 11, errorMessage: 12, errorStatus: 13, candidate: 14, part: 15, callContinues: 16, partial: 17, partialPath: 18, partialString: 19,
  partialNumber: 20, partialBool: 21, partialNull: 22, partialContinues: 23, grounding: 24, citing: 25, finishMessage: 26,
  code: 27, codeId: 28, codeResult: 29, codeResultId: 30, media: 31, mediaType: 32, mediaData: 33, file: 34, fileType: 35, fileUri: 36,
  toolCall: 37, toolCallId: 38, toolCallType: 39, toolResponse: 40, toolResponseId: 41, toolResponseType: 42, urlContext: 43,
} as const;

/** The name of the provider's calls of its code execution tool (the request's `codeExecution` tool; Anthropic's name for its own). */
const CODE_EXECUTION = 'code_execution';

/** The name of a built-in tool's call (a toolCall part) that says no toolType. */
const BUILTIN_TOOL = 'TOOL_TYPE_UNSPECIFIED';

/** A finish reason that names no filter and no limit. */
const ENDED: FinishWords = STOP;

/** The records of record `r`'s value: those that begin inside it. */
const inside = (doc: Doc, r: number, j: number): boolean => doc.start(j) >= doc.start(r) && doc.start(j) < doc.end(r);

/** `{"error": {code, message, status}}`: the message, with the status (`UNAVAILABLE`, …) as its type. */
function geminiError(body: unknown): ProviderError | undefined {
  // (the JSON array of a request without alt=sse: its error is its last element, alone or after the chunks that came before it)
  const b = Array.isArray(body) ? body.at(-1) : body;
  if (typeof b === 'object' && b !== null && !Array.isArray(b)) {
    const e = (b as { error?: unknown }).error;
    if (typeof e === 'object' && e !== null && !Array.isArray(e)) {
      const { message, status } = e as { message?: unknown; status?: unknown };
      if (typeof message === 'string') return providerError(message, typeof status === 'string' ? status : undefined);
    }
  }
  return errorOfBody(b);
}

export const gemini: FormatSpec = /* @__PURE__ */ sseFormat({
  doneMarker: false,
  completion: 'a chunk with a finishReason',
  finishReasons: {
    STOP, MAX_TOKENS: LENGTH, SAFETY: FILTERED, RECITATION: FILTERED, LANGUAGE: FILTERED, BLOCKLIST: FILTERED, PROHIBITED_CONTENT: FILTERED,
    SPII: FILTERED, IMAGE_SAFETY: FILTERED, IMAGE_PROHIBITED_CONTENT: FILTERED, IMAGE_RECITATION: FILTERED, IMAGE_OTHER: ENDED,
    NO_IMAGE: ENDED, OTHER: ENDED, FINISH_REASON_UNSPECIFIED: ENDED, BLOCK_REASON_UNSPECIFIED: ENDED,
    // (the turn failed: the error's message is the candidate's finishMessage when it has one)
    MALFORMED_FUNCTION_CALL: /* @__PURE__ */ failedTurn('the model wrote a function call that is not valid'),
    UNEXPECTED_TOOL_CALL: /* @__PURE__ */ failedTurn('the model called a tool that the request did not enable'),
    TOO_MANY_TOOL_CALLS: /* @__PURE__ */ failedTurn('the model called tools too many times in a row'),
    MALFORMED_RESPONSE: /* @__PURE__ */ failedTurn('the model wrote a response that is not valid'),
    MISSING_THOUGHT_SIGNATURE: /* @__PURE__ */ failedTurn('a call in the request lacks the thought signature it came with'),
  },
  errorBody: geminiError,
  wholeAnswer: wholeResponse,
  isWholeAnswer: isResponse,
  wholeAnswerHead: /^\{\s*"candidates"\s*:/,
  arrayBody: 'streamGenerateContent without alt=sse: ask for alt=sse',
  // (Google's statuses: an error chunk's or body's `status`)
  errorTypes: {
    RESOURCE_EXHAUSTED: 'rate_limit_error', UNAVAILABLE: 'overloaded_error', INVALID_ARGUMENT: 'invalid_request_error',
    FAILED_PRECONDITION: 'invalid_request_error', OUT_OF_RANGE: 'invalid_request_error', UNAUTHENTICATED: 'authentication_error',
    PERMISSION_DENIED: 'permission_error', NOT_FOUND: 'not_found_error', INTERNAL: 'api_error', DEADLINE_EXCEEDED: 'api_error',
    MISSING_THOUGHT_SIGNATURE: 'invalid_request_error',
  },
  usage(u) {
    const out = count(u, 'candidatesTokenCount');
    const thoughts = count(u, 'thoughtsTokenCount');
    // (the input: the prompt's tokens and those of the prompts of tools Gemini ran itself, which
    // totalTokenCount and the bill count as input)
    const prompt = count(u, 'promptTokenCount');
    const toolPrompt = count(u, 'toolUsePromptTokenCount');
    return {
      input: prompt === undefined && toolPrompt === undefined ? undefined : (prompt ?? 0) + (toolPrompt ?? 0),
      output: out === undefined && thoughts === undefined ? undefined : (out ?? 0) + (thoughts ?? 0),
      cacheRead: count(u, 'cachedContentTokenCount'),
      reasoning: thoughts,
    };
  },
  program: /* @__PURE__ */ compilePaths([
    'candidates[*].index', 'candidates[*].content.parts[*].text', 'candidates[*].content.parts[*].thought',
    'candidates[*].content.parts[*].thoughtSignature', 'candidates[*].content.parts[*].functionCall',
    'candidates[*].content.parts[*].functionCall.name', 'candidates[*].content.parts[*].functionCall.args',
    'candidates[*].content.parts[*].functionCall.id', 'candidates[*].finishReason', 'usageMetadata', 'promptFeedback.blockReason', 'error',
    'error.message', 'error.status', 'candidates[*]', 'candidates[*].content.parts[*]',
    'candidates[*].content.parts[*].functionCall.willContinue', 'candidates[*].content.parts[*].functionCall.partialArgs[*]',
    'candidates[*].content.parts[*].functionCall.partialArgs[*].jsonPath', 'candidates[*].content.parts[*].functionCall.partialArgs[*].stringValue',
    'candidates[*].content.parts[*].functionCall.partialArgs[*].numberValue', 'candidates[*].content.parts[*].functionCall.partialArgs[*].boolValue',
    'candidates[*].content.parts[*].functionCall.partialArgs[*].nullValue', 'candidates[*].content.parts[*].functionCall.partialArgs[*].willContinue',
    'candidates[*].groundingMetadata', 'candidates[*].citationMetadata', 'candidates[*].finishMessage',
    'candidates[*].content.parts[*].executableCode', 'candidates[*].content.parts[*].executableCode.id',
    'candidates[*].content.parts[*].codeExecutionResult', 'candidates[*].content.parts[*].codeExecutionResult.id',
    'candidates[*].content.parts[*].inlineData', 'candidates[*].content.parts[*].inlineData.mimeType', 'candidates[*].content.parts[*].inlineData.data',
    'candidates[*].content.parts[*].fileData', 'candidates[*].content.parts[*].fileData.mimeType', 'candidates[*].content.parts[*].fileData.fileUri',
    'candidates[*].content.parts[*].toolCall', 'candidates[*].content.parts[*].toolCall.id', 'candidates[*].content.parts[*].toolCall.toolType',
    'candidates[*].content.parts[*].toolResponse', 'candidates[*].content.parts[*].toolResponse.id', 'candidates[*].content.parts[*].toolResponse.toolType',
    'candidates[*].urlContextMetadata',
  ]),
  // a chunk of one text part of the followed candidate (the running usage kept by the core: the
  // last chunk's is read, and a stream cut short reports the last one that came)
  template: /* @__PURE__ */ template([
    choice, text, /* @__PURE__ */ noneOf(JK_TRUE), strings, never, never, never, never, { role: 'none', ignore: NULL }, runningUsage, never,
    { role: 'none', ignore: NULL }, ignored, ignored, scope, ignored, never, never, never, never, never, never, never, never,
    { role: 'none', ignore: NULL }, { role: 'none', ignore: NULL }, ignored,
    // (the code execution tool's parts: for the description)
    never, ignored, never, ignored,
    // (media: for the description)
    never, ignored, ignored, never, ignored, ignored,
    // (built-in tools' calls and responses: for the description)
    never, ignored, ignored, never, ignored, ignored,
    // (the URL context tool's metadata: for the description)
    { role: 'none', ignore: NULL },
  ]),
  read(doc, sink) {
    const n = doc.n;
    const err = find(doc, P.error);
    if (err >= 0 && doc.kind(err) !== JK_NULL) {
      const m = stringAt(doc, find(doc, P.errorMessage));
      sink.onError(m ?? doc.string(err), stringAt(doc, find(doc, P.errorStatus)));
      return;
    }
    // the followed candidate: the one whose index is the choice, one without an index being
    // candidate 0 (proto3's JSON leaves a zero out: Vertex AI writes no index for the first
    // candidate, and `"index": 1` for the second); by position when none has one
    let cand = -1;
    let sawIndex = false;
    for (let j = 0; j < n && !sawIndex; j++) sawIndex = doc.path(j) === P.index;
    for (let c = 0; c < n && cand < 0; c++) {
      if (doc.path(c) !== P.candidate) continue;
      if (!sawIndex) {
        if (doc.index(c) === sink.choice) cand = c;
        continue;
      }
      let k = 0;
      for (let j = c + 1; j < n && inside(doc, c, j); j++) {
        if (doc.path(j) === P.index) {
          k = doc.int(j);
          break;
        }
      }
      if (k === sink.choice) cand = c;
    }
    let finish = -1;
    let note = -1;
    if (cand >= 0) {
      for (let e = cand + 1; e < n && doc.start(e) < doc.end(cand); e++) {
        const p = doc.path(e);
        if (p === P.finish) {
          if (doc.kind(e) === JK_STRING) finish = e;
          continue;
        }
        if (p === P.finishMessage) {
          if (doc.kind(e) === JK_STRING) note = e;
          continue;
        }
        if (p === P.citing) {
          if (doc.kind(e) === JK_OBJECT) cite(sink, doc.value(e), false);
          continue;
        }
        if (p === P.grounding || p === P.urlContext) {
          // (metadata said whole, and again in later chunks: read when it changed)
          if (doc.kind(e) === JK_OBJECT && sink.onMetadata(doc, e)) {
            if (p === P.grounding) ground(sink, doc.value(e));
            else sink.onGrounding({ urls: retrieved(doc.value(e)) });
          }
          continue;
        }
        if (p !== P.part) continue;
        // one part: text (an answer's, or reasoning with thought: true), a call (whole, or a part of one), a signature
        let txt = -1;
        let thought = false;
        let sig = -1;
        let call = -1;
        let name = -1;
        let args = -1;
        let id = -1;
        let more = false;
        let partials: number[] | null = null;
        let code = -1;
        let codeId = -1;
        let result = -1;
        let resultId = -1;
        let media = -1;
        let mediaType = -1;
        let mediaData = -1;
        let file = -1;
        let fileType = -1;
        let fileUri = -1;
        let tool = -1;
        let toolId = -1;
        let toolType = -1;
        let response = -1;
        let responseId = -1;
        let responseType = -1;
        for (let j = e + 1; j < n && doc.start(j) < doc.end(e); j++) {
          const q = doc.path(j);
          if (q === P.text) txt = j;
          else if (q === P.thought) thought = doc.kind(j) === JK_TRUE;
          else if (q === P.signature) sig = j;
          else if (q === P.call) call = j;
          else if (q === P.callName) name = j;
          else if (q === P.callArgs) args = j;
          else if (q === P.callId) id = j;
          else if (q === P.callContinues) more = doc.kind(j) === JK_TRUE;
          else if (q === P.partial && doc.kind(j) === JK_OBJECT) (partials ??= []).push(j);
          else if (q === P.code) code = doc.kind(j) === JK_OBJECT ? j : -1;
          else if (q === P.codeId) codeId = j;
          else if (q === P.codeResult) result = doc.kind(j) === JK_OBJECT ? j : -1;
          else if (q === P.codeResultId) resultId = j;
          else if (q === P.media) media = doc.kind(j) === JK_OBJECT ? j : -1;
          else if (q === P.mediaType) mediaType = j;
          else if (q === P.mediaData) mediaData = j;
          else if (q === P.file) file = doc.kind(j) === JK_OBJECT ? j : -1;
          else if (q === P.fileType) fileType = j;
          else if (q === P.fileUri) fileUri = j;
          else if (q === P.toolCall) tool = doc.kind(j) === JK_OBJECT ? j : -1;
          else if (q === P.toolCallId) toolId = j;
          else if (q === P.toolCallType) toolType = j;
          else if (q === P.toolResponse) response = doc.kind(j) === JK_OBJECT ? j : -1;
          else if (q === P.toolResponseId) responseId = j;
          else if (q === P.toolResponseType) responseType = j;
        }
        const signed = sig >= 0 && doc.kind(sig) === JK_STRING;
        if (media >= 0) {
          // media the model made (an image, audio): kept with its own signature, which the caller
          // sends back with the part (Gemini's image models sign their image parts)
          if (signed) sink.onReasoningEnd();
          sink.onMedia(doc, mediaType, mediaData, thought, signed ? sig : -1);
          continue;
        }
        if (file >= 0) {
          // media at an address (`fileData`: a file the caller uploaded, a video's URL), kept as its uri
          if (signed) sink.onReasoningEnd();
          sink.onMedia(doc, fileType, fileUri, thought, signed ? sig : -1, 'uri');
          continue;
        }
        if (code >= 0 || result >= 0) {
          // the code execution tool, run by Google: its code a call of the provider's own (the
          // executableCode object as its arguments), its result that call's (never the answer's text)
          if (code >= 0) {
            if (signed) sink.onReasoningEnd();
            sink.onServerCall(doc, codeId, CODE_EXECUTION, code, signed ? sig : -1);
          } else if (signed) {
            sink.onReasoningSignature(doc, sig);
            sink.onReasoningEnd();
          }
          if (result >= 0) sink.onServerResult(doc, resultId, result, CODE_EXECUTION);
          continue;
        }
        if (tool >= 0 || response >= 0) {
          // a built-in tool run by Google beside the request's functions (Google Search, URL
          // context, Maps, file search): its toolCall a call of the provider's own (the part's
          // object as its arguments, its toolType its name, its signature with it), its
          // toolResponse that call's result (never the answer's text)
          if (tool >= 0) {
            if (signed) sink.onReasoningEnd();
            sink.onServerCall(doc, toolId, stringAt(doc, toolType) ?? BUILTIN_TOOL, tool, signed ? sig : -1);
          } else if (signed) {
            sink.onReasoningSignature(doc, sig);
            sink.onReasoningEnd();
          }
          if (response >= 0) sink.onServerResult(doc, responseId, response, stringAt(doc, responseType) ?? BUILTIN_TOOL);
          continue;
        }
        const isCall = call >= 0 && doc.kind(call) === JK_OBJECT;
        const isText = txt >= 0 && doc.kind(txt) === JK_STRING;
        // an answer's text part that carries a signature: the signature of the thoughts before it,
        // given before the text (a client's thinking block ends with it, as Anthropic's streams end theirs)
        const signsBefore = signed && !isCall && !thought && isText;
        if (signsBefore) {
          sink.onReasoningSignature(doc, sig);
          sink.onReasoningEnd();
        }
        if (isText) {
          if (thought) sink.onReasoning(doc, txt);
          else sink.onText(doc, txt);
        }
        if (isCall) {
          const named = name >= 0 && doc.kind(name) === JK_STRING;
          let open = sink.partCall() as PartArgs | null;
          if (named && open !== null) {
            endPartCall(sink, open); // (a new call begins: the one in parts ends)
            open = null;
          }
          let began = false;
          if (open === null && (more || partials !== null)) {
            // a call in parts begins (its signature kept with it)
            open = new PartArgs();
            began = true;
            sink.onPartCall(doc, id, name, signed ? sig : -1, open);
            sink.onPartArguments('{');
          }
          if (open !== null) {
            if (signed) {
              if (!began) sink.onReasoningSignature(doc, sig); // (a later part's signature: the call has its own)
              sink.onReasoningEnd();
            }
            for (const pa of partials ?? []) {
              const why = open.apply(doc, sink, pa);
              if (why !== null) {
                sink.onBadEvent(why);
                return;
              }
            }
            if (!more) endPartCall(sink, open);
            continue;
          }
          // (an empty functionCall ends a call in parts: with none open, it is no call)
          if (!named && args < 0 && id < 0) continue;
          if (signed) sink.onReasoningEnd();
          sink.onWholeToolCall(doc, id, name, args >= 0 && doc.kind(args) !== JK_NULL && doc.kind(args) !== JK_STRING ? args : -1, '{}', signed ? sig : -1);
          continue;
        }
        if (signed && !signsBefore) {
          sink.onReasoningSignature(doc, sig);
          sink.onReasoningEnd();
        }
      }
    }
    const blocked = find(doc, P.blockReason);
    const reason = finish >= 0 ? finish : blocked >= 0 && doc.kind(blocked) === JK_STRING ? blocked : -1;
    if (reason >= 0) {
      // (the finish first: one that says the turn failed ends no call, and an open one is left as it stood)
      sink.onFinishReason(doc.string(reason), reason === blocked, note >= 0 && reason === finish ? doc.string(note) : undefined);
      const open = sink.partCall() as PartArgs | null;
      if (open !== null) endPartCall(sink, open);
      const u = find(doc, P.usage);
      if (u >= 0 && doc.kind(u) === JK_OBJECT) sink.onUsage(doc.value(u) as Record<string, unknown>);
      sink.onReasoningEnd();
      sink.onDone();
    }
  },
});

/**
 * The sources a candidate's metadata cites: each of its `groundingMetadata`'s `groundingChunks` (a
 * web page `{web: {uri, title}}`, a retrieved document `{retrievedContext: {uri, title, text}}`, a
 * place `{maps: …}`), or each of its `citationMetadata`'s entries (`citationSources` from the
 * Gemini API, `citations` from Vertex AI: `{uri, title?, startIndex, endIndex, license}`). A source
 * the stream cited already (its address, or without one its JSON: metadata said again in a later
 * chunk, a source cited at two ranges) is not kept twice. The citation kept for each entry, by
 * its index (null: none); grounding metadata was counted whole (`counted`).
 */
function cite(sink: Sink, meta: unknown, grounding: boolean): (Citation | null)[] {
  const list = grounding ? member(meta, 'groundingChunks') : member(meta, 'citationSources') ?? member(meta, 'citations');
  if (!Array.isArray(list)) return [];
  return list.map((x) => {
    // (a grounding chunk holds one source, under the key that names its kind)
    const inner = grounding && typeof x === 'object' && x !== null ? Object.values(x).find((v) => typeof v === 'object' && v !== null && !Array.isArray(v)) : x;
    const c = citationOf(x, ['uri'], ['title'], 'text', inner);
    return c === null ? null : sink.onCitation(c, true, grounding);
  });
}

/**
 * A candidate's `groundingMetadata` (Grounding with Google Search, Vertex AI Search, Google Maps):
 * its sources (see {@link cite}); the spans of the answer each backs, its `groundingSupports`
 * (`{segment: {partIndex?, startIndex, endIndex, text}, groundingChunkIndices, confidenceScores?}`:
 * bytes of the UTF-8 of the Part, which in a stream is the answer's text from its start, a
 * support's confidence in each source the one at the same index); the queries searched
 * (`webSearchQueries`) and the Search Suggestions (`searchEntryPoint.renderedContent`).
 */
function ground(sink: Sink, meta: unknown): void {
  const kept = cite(sink, meta, true);
  const spans: ByteSpan[] = [];
  const supports = member(meta, 'groundingSupports');
  for (const s of Array.isArray(supports) ? supports : []) {
    const seg = member(s, 'segment');
    const start = member(seg, 'startIndex') ?? 0; // (proto3's JSON leaves a zero out)
    const end = member(seg, 'endIndex');
    const indices = member(s, 'groundingChunkIndices');
    if (!isOffset(start) || !isOffset(end) || !Array.isArray(indices)) continue;
    const text = member(seg, 'text');
    const scores = member(s, 'confidenceScores');
    // (a source a support names twice, by one index or two of the same address, backs the span
    // once: a list of the same index, two bytes each, made a span object each)
    const named = indices.length > 1 ? new Set<Citation>() : null;
    indices.forEach((k, i) => {
      const citation = typeof k === 'number' ? kept[k] : undefined;
      if (citation === undefined || citation === null || named?.has(citation) === true) return;
      named?.add(citation);
      const span: ByteSpan = { citation, start, end };
      if (typeof text === 'string') span.text = text;
      const score = Array.isArray(scores) ? scores[i] : undefined;
      if (typeof score === 'number') span.confidence = score;
      spans.push(span);
    });
  }
  sink.onCitedSpans(spans);
  const queries = member(meta, 'webSearchQueries');
  const html = member(member(meta, 'searchEntryPoint'), 'renderedContent');
  sink.onGrounding({
    queries: Array.isArray(queries) ? queries.filter((q): q is string => typeof q === 'string') : [],
    searchSuggestions: typeof html === 'string' ? html : undefined,
  });
}

/** A byte offset: a non-negative integer. */
const isOffset = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** The URL context tool's `urlContextMetadata.urlMetadata`: each `{retrievedUrl, urlRetrievalStatus}`. */
function retrieved(meta: unknown): { url: string; status: string }[] {
  const list = member(meta, 'urlMetadata');
  const out: { url: string; status: string }[] = [];
  for (const u of Array.isArray(list) ? list : []) {
    const url = member(u, 'retrievedUrl');
    const status = member(u, 'urlRetrievalStatus');
    if (typeof url === 'string') out.push({ url, status: typeof status === 'string' ? status : '' });
  }
  return out;
}

/** A call in parts ends: its open string and containers closed, the object's brace last. */
function endPartCall(sink: Sink, open: PartArgs): void {
  sink.onPartArguments(open.close());
  sink.onPartCallEnd();
}

/** An open object or array of streamed arguments: the step that leads to it, members written, an object's names. */
interface Container {
  arr: boolean;
  step: string | number;
  count: number;
  names: Set<string> | null;
}

/**
 * The arguments of a call that comes in parts, as JSON text written as the parts arrive: each
 * partialArg (a JSON path, `$.a.b[0].c`, and a string, number, boolean or null) closes the
 * containers the path leaves, opens those it enters, and writes its member, so that the text,
 * once ended, is the `args` object's JSON (members in the order they came, no white space). A
 * string with `willContinue` stays open for the next piece of the same path. A path that goes
 * back into a container it left, skips an array element or repeats a member cannot be written so:
 * the event is not one of the format.
 */
class PartArgs {
  private readonly stack: Container[] = [{ arr: false, step: '', count: 0, names: new Set() }];
  /** The path of the string left open (`willContinue`), or null. */
  private openString: string | null = null;

  /** Writes partialArg record `pa`; the reason it cannot be written, or null. */
  apply(doc: Doc, sink: Sink, pa: number): string | null {
    let path = -1;
    let value = -1;
    let more = false;
    for (let j = pa + 1; j < doc.n && doc.start(j) < doc.end(pa); j++) {
      const q = doc.path(j);
      if (q === P.partialPath) path = j;
      else if (q === P.partialContinues) more = doc.kind(j) === JK_TRUE;
      else if ((q === P.partialString && doc.kind(j) === JK_STRING) || (q === P.partialNumber && doc.kind(j) === JK_NUMBER)
        || (q === P.partialBool && (doc.kind(j) === JK_TRUE || doc.kind(j) === JK_FALSE)) || q === P.partialNull) value = j;
    }
    if (path < 0 || doc.kind(path) !== JK_STRING) return 'a partialArg without a jsonPath';
    const where = doc.string(path);
    if (value < 0) return null; // (nothing to write)
    const isString = doc.path(value) === P.partialString;
    let out = '';
    if (this.openString !== null) {
      if (isString && this.openString === where) {
        // the next piece of the open string
        out += escaped(doc.string(value));
        if (!more) {
          out += '"';
          this.openString = null;
        }
        sink.onPartArguments(out);
        return null;
      }
      out += '"';
      this.openString = null;
    }
    const steps = jsonPath(where);
    if (steps === null || steps.length === 0) return `the jsonPath ${JSON.stringify(where)} is not a path to a member or an element`;
    // leave the containers the path is not in, then enter (and write the members of) the rest
    const stack = this.stack;
    let k = 0;
    while (k + 1 < stack.length && k < steps.length - 1 && stack[k + 1].step === steps[k]) k++;
    while (stack.length > k + 1) out += stack.pop()!.arr ? ']' : '}';
    for (let d = k; d < steps.length; d++) {
      const top = stack[stack.length - 1];
      const step = steps[d];
      if (top.arr) {
        if (step !== top.count) return `the jsonPath ${JSON.stringify(where)} is not the next element of its array (${top.count})`;
        if (top.count > 0) out += ',';
      } else {
        if (typeof step !== 'string') return `the jsonPath ${JSON.stringify(where)} indexes an object`;
        if (top.names!.has(step)) return `the jsonPath ${JSON.stringify(where)} names a member written before`;
        top.names!.add(step);
        out += `${top.count > 0 ? ',' : ''}${JSON.stringify(step)}:`;
      }
      top.count++;
      if (d < steps.length - 1) {
        const arr = typeof steps[d + 1] === 'number';
        stack.push({ arr, step, count: 0, names: arr ? null : new Set() });
        out += arr ? '[' : '{';
      }
    }
    if (isString) {
      out += `"${escaped(doc.string(value))}`;
      if (more) this.openString = where;
      else out += '"';
    } else if (doc.path(value) === P.partialNull) out += 'null';
    else out += doc.string(value); // (a number or a boolean: its JSON text as sent)
    sink.onPartArguments(out);
    return null;
  }

  /** What closes the text: the open string, every open container, the object. */
  close(): string {
    let out = this.openString !== null ? '"' : '';
    this.openString = null;
    const stack = this.stack;
    while (stack.length > 0) out += stack.pop()!.arr ? ']' : '}';
    return out;
  }
}

/** A string's text as the body of a JSON string. */
const escaped = (s: string): string => JSON.stringify(s).slice(1, -1);

const ESCAPES: Readonly<Record<string, string>> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', '/': '/', '\\': '\\', "'": "'", '"': '"' };

/** An RFC 9535 singular path (`$.a.b[0]`, `$['a.b']`) as its steps (names and indexes), or null. */
function jsonPath(p: string): (string | number)[] | null {
  if (p.charCodeAt(0) !== 0x24) return null; // $
  const out: (string | number)[] = [];
  let i = 1;
  while (i < p.length) {
    const c = p[i];
    if (c === '.') {
      let j = i + 1;
      while (j < p.length && p[j] !== '.' && p[j] !== '[') j++;
      if (j === i + 1) return null;
      out.push(p.slice(i + 1, j));
      i = j;
    } else if (c === '[') {
      const q = p[i + 1];
      if (q === "'" || q === '"') {
        let name = '';
        let j = i + 2;
        for (; j < p.length && p[j] !== q; j++) {
          if (p[j] !== '\\') {
            name += p[j];
            continue;
          }
          const e = p[++j];
          if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(p.slice(j + 1, j + 5))) {
            name += String.fromCharCode(parseInt(p.slice(j + 1, j + 5), 16));
            j += 4;
          } else if (e !== undefined && Object.hasOwn(ESCAPES, e)) name += ESCAPES[e];
          else return null;
        }
        if (p[j] !== q || p[j + 1] !== ']') return null;
        out.push(name);
        i = j + 2;
      } else {
        const m = /^\[(0|[1-9][0-9]*)\]/.exec(p.slice(i));
        if (m === null) return null;
        out.push(Number(m[1]));
        i += m[0].length;
      }
    } else return null;
  }
  return out;
}

/**
 * A whole GenerateContentResponse (generateContent, not streamed) is one chunk of the stream; a
 * JSON array of them (streamGenerateContent without alt=sse) is the stream's chunks in order.
 */
function wholeResponse(body: unknown): WholeEvent[] | undefined {
  if (!isResponse(body)) return undefined;
  return (Array.isArray(body) ? body : [body]).map((c) => sseEvent(c));
}

/** A GenerateContentResponse (its candidates, or the feedback of a prompt refused), or a JSON array of them. */
function isResponse(body: unknown): boolean {
  const chunks = Array.isArray(body) ? body : [body];
  const answers = (c: unknown) => isObj(c) && (Array.isArray(c.candidates) || isObj(c.promptFeedback));
  // (a chunk of the array may have the usage alone, no candidates, as a stream's last one may)
  const chunk = (c: unknown) => answers(c) || (isObj(c) && isObj(c.usageMetadata) && c.error === undefined);
  return chunks.some(answers) && chunks.every(chunk);
}
