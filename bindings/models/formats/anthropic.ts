// Anthropic Messages: SSE events named by their `type`, text in `content_block_delta` events with a
// `text_delta`, completed by `message_stop`; `event: error` for the provider's errors.
import { JK_OBJECT, JK_STRING } from '../../core/generated/abi.js';
import { compilePaths } from '../paths.js';
import {
  FILTERED, SSE_STREAM, type FormatSpec, LENGTH, STOP, TOOLS, errorMessage, errorOfBody, find, ignored, literal, names,
  stringAt, template, text,
} from './describe.js';

const P = { type: 0, deltaType: 1, text: 2, thinking: 3, stopReason: 4, usage: 5, messageUsage: 6, errorMessage: 7, error: 8, errorType: 9 } as const;
/** Event types and delta types. */
const T = /* @__PURE__ */ names({
  delta: 'content_block_delta', text: 'text_delta', thinking: 'thinking_delta', messageDelta: 'message_delta',
  messageStart: 'message_start', stop: 'message_stop', error: 'error', ping: 'ping',
});

export const anthropic: FormatSpec = {
  ...SSE_STREAM,
  doneMarker: false,
  completion: 'a message_stop event',
  finishReasons: {
    end_turn: STOP, stop_sequence: { openai: 'stop', anthropic: 'stop_sequence' }, max_tokens: LENGTH, tool_use: TOOLS,
    pause_turn: { openai: 'stop', anthropic: 'pause_turn' }, refusal: FILTERED,
  },
  errorBody: errorOfBody,
  program: /* @__PURE__ */ compilePaths([
    'type', 'delta.type', 'delta.text', 'delta.thinking', 'delta.stop_reason', 'usage', 'message.usage', 'error.message', 'error',
    'error.type',
  ]),
  template: /* @__PURE__ */ template([/* @__PURE__ */ literal('content_block_delta'), /* @__PURE__ */ literal('text_delta'), text, ignored, ignored, ignored, ignored, ignored, ignored, ignored]),
  read(doc, sink) {
    const n = doc.n;
    const t = find(doc, P.type);
    if (t < 0) return;
    if (doc.is(t, T.delta)) {
      const dt = find(doc, P.deltaType);
      if (dt < 0) return;
      const want = doc.is(dt, T.text) ? P.text : doc.is(dt, T.thinking) ? P.thinking : -1;
      if (want < 0) return; // input_json_delta, signature_delta: not text
      for (let j = 0; j < n; j++) {
        if (doc.path(j) !== want || doc.kind(j) !== JK_STRING) continue;
        if (want === P.text) sink.onText(doc, j);
        else sink.onReasoning(doc, j);
      }
    } else if (doc.is(t, T.messageDelta)) {
      for (let j = 0; j < n; j++) {
        const p = doc.path(j);
        if (p === P.stopReason && doc.kind(j) === JK_STRING) sink.onFinishReason(doc.string(j));
        else if (p === P.usage && doc.kind(j) === JK_OBJECT) sink.onUsage(doc.value(j) as Record<string, unknown>);
      }
    } else if (doc.is(t, T.messageStart)) {
      for (let j = 0; j < n; j++) {
        if (doc.path(j) === P.messageUsage && doc.kind(j) === JK_OBJECT) sink.onUsage(doc.value(j) as Record<string, unknown>);
      }
    } else if (doc.is(t, T.stop)) {
      sink.onDone();
    } else if (doc.is(t, T.ping)) {
      sink.onPing();
    } else if (doc.is(t, T.error)) {
      const e = find(doc, P.error);
      sink.onError(e >= 0 ? errorMessage(doc, e, find(doc, P.errorMessage)) : 'error', stringAt(doc, find(doc, P.errorType)));
    }
  },
};
