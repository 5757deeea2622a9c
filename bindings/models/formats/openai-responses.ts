// OpenAI Responses: SSE events each named by its `type`, text in `response.output_text.delta`,
// completed by `response.completed` (or `response.incomplete`, with its reason).
import { JK_OBJECT, JK_STRING } from '../../core/generated/abi.js';
import { compilePaths } from '../paths.js';
import {
  FILTERED, SSE_STREAM, type FormatSpec, LENGTH, STOP, errorOfBody, find, ignored, literal, names, stringAt, template, text,
} from './describe.js';

const P = { type: 0, delta: 1, usage: 2, status: 3, errorMessage: 4, message: 5, incomplete: 6, code: 7, errorCode: 8 } as const;
/** Event types. */
const T = /* @__PURE__ */ names({
  text: 'response.output_text.delta', reasoning: 'response.reasoning_text.delta', summary: 'response.reasoning_summary_text.delta',
  completed: 'response.completed', incomplete: 'response.incomplete', failed: 'response.failed', error: 'error',
});

export const openaiResponses: FormatSpec = {
  ...SSE_STREAM,
  doneMarker: false,
  completion: 'a response.completed event',
  finishReasons: { completed: STOP, incomplete: LENGTH, max_output_tokens: LENGTH, content_filter: FILTERED },
  errorBody: errorOfBody,
  program: /* @__PURE__ */ compilePaths([
    'type', 'delta', 'response.usage', 'response.status', 'response.error.message', 'message',
    'response.incomplete_details.reason', 'code', 'response.error.code',
  ]),
  template: /* @__PURE__ */ template([/* @__PURE__ */ literal('response.output_text.delta'), text, ignored, ignored, ignored, ignored, ignored, ignored, ignored]),
  read(doc, sink) {
    const t = find(doc, P.type);
    if (t < 0) return;
    const at = (p: number) => find(doc, p);
    if (doc.is(t, T.text)) {
      const d = at(P.delta);
      if (d >= 0 && doc.kind(d) === JK_STRING) sink.onText(doc, d);
    } else if (doc.is(t, T.reasoning) || doc.is(t, T.summary)) {
      const d = at(P.delta);
      if (d >= 0 && doc.kind(d) === JK_STRING) sink.onReasoning(doc, d);
    } else if (doc.is(t, T.completed) || doc.is(t, T.incomplete)) {
      const u = at(P.usage);
      if (u >= 0 && doc.kind(u) === JK_OBJECT) sink.onUsage(doc.value(u) as Record<string, unknown>);
      const why = at(P.incomplete);
      const st = at(P.status);
      if (why >= 0 && doc.kind(why) === JK_STRING) sink.onFinishReason(doc.string(why));
      else if (st >= 0 && doc.kind(st) === JK_STRING) sink.onFinishReason(doc.string(st));
      else sink.onFinishReason(doc.is(t, T.completed) ? 'completed' : 'incomplete');
      sink.onDone();
    } else if (doc.is(t, T.failed)) {
      const m = at(P.errorMessage);
      sink.onError(stringAt(doc, m) ?? 'response.failed', stringAt(doc, at(P.errorCode)));
    } else if (doc.is(t, T.error)) {
      const m = at(P.message);
      const c = at(P.code);
      sink.onError(stringAt(doc, m) ?? (c >= 0 ? doc.string(c) : 'error'), stringAt(doc, c));
    }
  },
};
