// OpenAI Chat Completions (and the servers that speak it: DeepSeek, Groq, Mistral, xAI, vLLM, …):
// SSE events of `chat.completion.chunk`s, text at `choices[i].delta.content`, ended by `data: [DONE]`.
import { JK_NULL, JK_OBJECT, JK_STRING } from '../../core/generated/abi.js';
import { compilePaths } from '../paths.js';
import {
  FILTERED, SSE_STREAM, type FormatSpec, LENGTH, NULL, STOP, TOOLS, choice, errorMessage, errorOfBody, find, ignored, noneOf,
  stringAt, strings, template, text,
} from './describe.js';

const P = { index: 0, content: 1, reasoningContent: 2, reasoning: 3, finish: 4, usage: 5, error: 6, errorMessage: 7, errorType: 8, errorCode: 9 } as const;

export const openai: FormatSpec = {
  ...SSE_STREAM,
  doneMarker: true,
  completion: 'data: [DONE]',
  finishReasons: { stop: STOP, length: LENGTH, tool_calls: TOOLS, function_call: TOOLS, content_filter: FILTERED },
  errorBody: errorOfBody,
  program: /* @__PURE__ */ compilePaths([
    'choices[*].index', 'choices[*].delta.content', 'choices[*].delta.reasoning_content', 'choices[*].delta.reasoning',
    'choices[*].finish_reason', 'usage', 'error', 'error.message', 'error.type', 'error.code',
  ]),
  // a delta of the followed choice: no reasoning, finish reason, usage object or error
  template: /* @__PURE__ */ template([choice, text, strings, strings, strings, /* @__PURE__ */ noneOf(JK_OBJECT), { role: 'none', ignore: NULL }, ignored, ignored, ignored]),
  read(doc, sink) {
    const n = doc.n;
    // the element of `choices` to follow: the one whose index is the choice (by position without one)
    let el = -1;
    let sawIndex = false;
    let errorRec = -1;
    let messageRec = -1;
    for (let j = 0; j < n; j++) {
      const p = doc.path(j);
      if (p === P.index) {
        sawIndex = true;
        if (doc.int(j) === sink.choice) el = doc.index(j);
      } else if (p === P.usage) {
        if (doc.kind(j) === JK_OBJECT) sink.onUsage(doc.value(j) as Record<string, unknown>);
      } else if (p === P.error) {
        if (doc.kind(j) !== JK_NULL) errorRec = j;
      } else if (p === P.errorMessage) {
        messageRec = j;
      }
    }
    if (errorRec >= 0) {
      sink.onError(errorMessage(doc, errorRec, messageRec), stringAt(doc, find(doc, P.errorCode)) ?? stringAt(doc, find(doc, P.errorType)));
      return;
    }
    if (!sawIndex) el = sink.choice;
    if (el < 0) return;
    for (let j = 0; j < n; j++) {
      if (doc.index(j) !== el) continue;
      const p = doc.path(j);
      if (doc.kind(j) !== JK_STRING) continue;
      if (p === P.content) sink.onText(doc, j);
      else if (p === P.reasoningContent || p === P.reasoning) sink.onReasoning(doc, j);
      else if (p === P.finish) sink.onFinishReason(doc.string(j));
    }
  },
};
