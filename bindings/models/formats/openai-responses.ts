// OpenAI Responses: SSE events each named by its `type`, text in `response.output_text.delta`,
// completed by `response.completed` (or `response.incomplete`, with its reason). The output comes
// as items at an `output_index`: `function_call` items are the client's calls (`call_id`, `name`,
// arguments in `response.function_call_arguments.delta` fragments, repeated whole by `.done`;
// `custom_tool_call` items are the client's calls of custom tools, their free-text `input` in
// `response.custom_tool_call_input.delta` fragments),
// the hosted tools' items (`web_search_call`, `code_interpreter_call`, …) the provider's own, and
// `reasoning` items carry the reasoning's text and summary deltas. A refusal comes in
// `response.refusal.delta` events, apart from the output's text.
import { JK_OBJECT, JK_STRING } from '../../core/generated/abi.js';
import { compilePaths } from '../paths.js';
import {
  FILTERED, type FormatSpec, LENGTH, STOP, callKey, count, errorOfBody, find, ignored, kind, kindText, names, sseFormat, stringAt,
  template,
} from './describe.js';

const P = {
  type: 0, delta: 1, usage: 2, status: 3, errorMessage: 4, message: 5, incomplete: 6, code: 7, errorCode: 8, outputIndex: 9,
  itemType: 10, itemId: 11, itemCallId: 12, itemName: 13, itemArguments: 14, arguments: 15, itemInput: 16, input: 17,
} as const;
/** Event types and item types. */
const T = /* @__PURE__ */ names({
  text: 'response.output_text.delta', reasoning: 'response.reasoning_text.delta', summary: 'response.reasoning_summary_text.delta',
  completed: 'response.completed', incomplete: 'response.incomplete', failed: 'response.failed', error: 'error',
  added: 'response.output_item.added', itemDone: 'response.output_item.done', args: 'response.function_call_arguments.delta',
  argsDone: 'response.function_call_arguments.done', functionCall: 'function_call', reasoningItem: 'reasoning',
  message: 'message', refusal: 'response.refusal.delta', customCall: 'custom_tool_call', input: 'response.custom_tool_call_input.delta',
  inputDone: 'response.custom_tool_call_input.done',
});

export const openaiResponses: FormatSpec = /* @__PURE__ */ sseFormat({
  doneMarker: false,
  namedEvents: true,
  completion: 'a response.completed event',
  finishReasons: { completed: STOP, incomplete: LENGTH, max_output_tokens: LENGTH, content_filter: FILTERED },
  errorBody: errorOfBody,
  usage: (u) => ({
    input: count(u, 'input_tokens'), output: count(u, 'output_tokens'), cacheRead: count(u, 'input_tokens_details.cached_tokens'),
    reasoning: count(u, 'output_tokens_details.reasoning_tokens'),
  }),
  program: /* @__PURE__ */ compilePaths([
    'type', 'delta', 'response.usage', 'response.status', 'response.error.message', 'message',
    'response.incomplete_details.reason', 'code', 'response.error.code', 'output_index', 'item.type', 'item.id', 'item.call_id',
    'item.name', 'item.arguments', 'arguments', 'item.input', 'input',
  ]),
  // a delta of the output's text, of reasoning (its text or summary), or of the current call's arguments
  template: /* @__PURE__ */ template([
    kind, kindText, ignored, ignored, ignored, ignored, ignored, ignored, ignored, callKey, ignored, ignored, ignored, ignored, ignored,
    ignored, ignored, ignored,
  ], [
    { literal: 'response.output_text.delta', channel: 'text', name: 'response.output_text.delta' },
    { literal: 'response.reasoning_text.delta', channel: 'reasoning', name: 'response.reasoning_text.delta' },
    { literal: 'response.reasoning_summary_text.delta', channel: 'reasoning', name: 'response.reasoning_summary_text.delta' },
    { literal: 'response.function_call_arguments.delta', channel: 'args', name: 'response.function_call_arguments.delta' },
    { literal: 'response.custom_tool_call_input.delta', channel: 'args', name: 'response.custom_tool_call_input.delta' },
  ]),
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
    } else if (doc.is(t, T.refusal)) {
      const d = at(P.delta);
      if (d >= 0 && doc.kind(d) === JK_STRING) sink.onRefusal(doc, d);
    } else if (doc.is(t, T.args) || doc.is(t, T.input)) {
      const key = doc.int(at(P.outputIndex));
      const d = at(P.delta);
      if (key >= 0 && d >= 0) sink.onToolArguments(doc, key, d, false, doc.is(t, T.input));
    } else if (doc.is(t, T.argsDone) || doc.is(t, T.inputDone)) {
      const key = doc.int(at(P.outputIndex));
      const custom = doc.is(t, T.inputDone);
      const a = at(custom ? P.input : P.arguments);
      if (key >= 0 && a >= 0) sink.onToolArguments(doc, key, a, true, custom);
    } else if (doc.is(t, T.added) || doc.is(t, T.itemDone)) {
      const key = doc.int(at(P.outputIndex));
      const it = at(P.itemType);
      if (key < 0 || it < 0 || doc.kind(it) !== JK_STRING) return;
      const done = doc.is(t, T.itemDone);
      if (doc.is(it, T.functionCall) || doc.is(it, T.customCall)) {
        const custom = doc.is(it, T.customCall);
        sink.onToolCall(doc, key, at(P.itemCallId), at(P.itemName), false, -1, '', custom);
        const a = at(custom ? P.itemInput : P.itemArguments);
        if (a >= 0) sink.onToolArguments(doc, key, a, true);
        if (done) sink.onToolCallEnd(doc, key);
      } else if (doc.is(it, T.reasoningItem)) {
        if (done) sink.onReasoningEnd();
      } else if (!doc.is(it, T.message)) {
        // a hosted tool's item (web search, file search, code interpreter, MCP, …): the provider's own
        sink.onToolCall(doc, key, at(P.itemId), it, true);
        if (done) sink.onToolCallEnd(doc, key);
      }
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
});
