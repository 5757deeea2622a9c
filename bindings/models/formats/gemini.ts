// Gemini (`streamGenerateContent?alt=sse`, the Gemini API and Vertex AI): SSE events ended by CR LF,
// each a whole GenerateContentResponse. Text in `candidates[i].content.parts[].text`; a part with
// `thought: true` is reasoning; `functionCall {name, args, id?}` comes whole (its arguments are the
// `args` object's JSON as sent); a part's `thoughtSignature` is kept with the reasoning. No
// `[DONE]`: the chunk whose followed candidate has a `finishReason` (or whose prompt was blocked,
// `promptFeedback.blockReason`) completes the stream, with the usage of that chunk
// (`usageMetadata`, running totals in every chunk, whole in the last); an `{"error": …}` chunk is
// the provider's error.
import { JK_NULL, JK_OBJECT, JK_STRING, JK_TRUE } from '../../core/generated/abi.js';
import { compilePaths } from '../paths.js';
import {
  FILTERED, type Doc, type FinishWords, type FormatSpec, LENGTH, NULL, type ProviderError, STOP, choice, count, errorOfBody, find, ignored, never,
  noneOf, providerError, scope, sseFormat, stringAt, strings, template, text,
} from './describe.js';

const P = {
  index: 0, text: 1, thought: 2, signature: 3, call: 4, callName: 5, callArgs: 6, callId: 7, finish: 8, usage: 9, blockReason: 10,
  error: 11, errorMessage: 12, errorStatus: 13, candidate: 14, part: 15,
} as const;

/** A finish reason that names no filter and no limit. */
const ENDED: FinishWords = STOP;

/** The records of record `r`'s value: those that begin inside it. */
const inside = (doc: Doc, r: number, j: number): boolean => doc.start(j) >= doc.start(r) && doc.start(j) < doc.end(r);

/** `{"error": {code, message, status}}`: the message, with the status (`UNAVAILABLE`, …) as its type. */
function geminiError(body: unknown): ProviderError | undefined {
  const b = Array.isArray(body) && body.length === 1 ? body[0] : body; // (the JSON-array stream of a request without alt=sse)
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
    SPII: FILTERED, IMAGE_SAFETY: FILTERED, IMAGE_PROHIBITED_CONTENT: FILTERED, OTHER: ENDED, FINISH_REASON_UNSPECIFIED: ENDED,
    MALFORMED_FUNCTION_CALL: ENDED, UNEXPECTED_TOOL_CALL: ENDED, TOO_MANY_TOOL_CALLS: ENDED, BLOCK_REASON_UNSPECIFIED: ENDED,
  },
  errorBody: geminiError,
  usage(u) {
    const out = count(u, 'candidatesTokenCount');
    const thoughts = count(u, 'thoughtsTokenCount');
    return {
      input: count(u, 'promptTokenCount'),
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
  ]),
  // a chunk of one text part of the followed candidate (the running usage ignored: the last chunk's is read)
  template: /* @__PURE__ */ template([
    choice, text, /* @__PURE__ */ noneOf(JK_TRUE), strings, never, never, never, never, { role: 'none', ignore: NULL }, ignored, never,
    { role: 'none', ignore: NULL }, ignored, ignored, scope, ignored,
  ]),
  read(doc, sink) {
    const n = doc.n;
    const err = find(doc, P.error);
    if (err >= 0 && doc.kind(err) !== JK_NULL) {
      const m = stringAt(doc, find(doc, P.errorMessage));
      sink.onError(m ?? doc.string(err), stringAt(doc, find(doc, P.errorStatus)));
      return;
    }
    // the followed candidate: the one whose index is the choice (by position when none has one)
    let cand = -1;
    let sawIndex = false;
    for (let j = 0; j < n; j++) {
      if (doc.path(j) !== P.index) continue;
      sawIndex = true;
      if (doc.int(j) === sink.choice) {
        for (let c = j - 1; c >= 0; c--) {
          if (doc.path(c) === P.candidate && inside(doc, c, j)) {
            cand = c;
            break;
          }
        }
      }
    }
    if (!sawIndex) {
      for (let j = 0; j < n; j++) if (doc.path(j) === P.candidate && doc.index(j) === sink.choice) cand = j;
    }
    let finish = -1;
    if (cand >= 0) {
      for (let e = cand + 1; e < n && doc.start(e) < doc.end(cand); e++) {
        const p = doc.path(e);
        if (p === P.finish) {
          if (doc.kind(e) === JK_STRING) finish = e;
          continue;
        }
        if (p !== P.part) continue;
        // one part: text (an answer's, or reasoning with thought: true), a whole call, a signature
        let txt = -1;
        let thought = false;
        let sig = -1;
        let call = -1;
        let name = -1;
        let args = -1;
        let id = -1;
        for (let j = e + 1; j < n && doc.start(j) < doc.end(e); j++) {
          const q = doc.path(j);
          if (q === P.text) txt = j;
          else if (q === P.thought) thought = doc.kind(j) === JK_TRUE;
          else if (q === P.signature) sig = j;
          else if (q === P.call) call = j;
          else if (q === P.callName) name = j;
          else if (q === P.callArgs) args = j;
          else if (q === P.callId) id = j;
        }
        if (txt >= 0 && doc.kind(txt) === JK_STRING) {
          if (thought) sink.onReasoning(doc, txt);
          else sink.onText(doc, txt);
        }
        if (sig >= 0 && doc.kind(sig) === JK_STRING) {
          sink.onReasoningSignature(doc, sig);
          sink.onReasoningEnd();
        }
        if (call >= 0 && doc.kind(call) === JK_OBJECT) {
          sink.onWholeToolCall(doc, id, name, args >= 0 && doc.kind(args) !== JK_NULL && doc.kind(args) !== JK_STRING ? args : -1, '{}');
        }
      }
    }
    const blocked = find(doc, P.blockReason);
    const reason = finish >= 0 ? finish : blocked >= 0 && doc.kind(blocked) === JK_STRING ? blocked : -1;
    if (reason >= 0) {
      sink.onFinishReason(doc.string(reason));
      const u = find(doc, P.usage);
      if (u >= 0 && doc.kind(u) === JK_OBJECT) sink.onUsage(doc.value(u) as Record<string, unknown>);
      sink.onReasoningEnd();
      sink.onDone();
    }
  },
});
