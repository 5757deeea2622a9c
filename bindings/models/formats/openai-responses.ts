// OpenAI Responses: SSE events each named by its `type`, text in `response.output_text.delta`,
// completed by `response.completed` (or `response.incomplete`, with its reason). The output comes
// as items at an `output_index`: `function_call` items are the client's calls (`call_id`, `name`,
// arguments in `response.function_call_arguments.delta` fragments, repeated whole by `.done`;
// `custom_tool_call` items are the client's calls of custom tools, their free-text `input` in
// `response.custom_tool_call_input.delta` fragments),
// the items of the API's tools that the client runs (`computer_call`, `local_shell_call`, a
// `shell_call` in the local environment, `apply_patch_call`, a `tool_search_call` run by the client,
// `mcp_approval_request`) the client's calls too, said whole by their item's end (their arguments
// the item's members but its envelope, as sent), the hosted tools'
// items (`web_search_call`, `code_interpreter_call`, `mcp_call`, …) the provider's own, and
// `reasoning` items carry the reasoning's text and summary deltas (each summary part begun by
// `response.reasoning_summary_part.added`, a reasoning block of its own), and at their end, when
// the request includes `reasoning.encrypted_content`, the encrypted reasoning a stateless caller
// sends back (kept with the item's last block), each of its blocks with the item's id. A refusal comes in
// `response.refusal.delta` events, apart from the output's text; a citation in
// `response.output_text.annotation.added`. An answer in audio has its words in
// `response.audio.transcript.delta` events, the answer's text (its `response.audio.delta`
// chunks, whose format the stream does not say, are not read).
import { JK_NULL, JK_OBJECT, JK_STRING } from '../../core/generated/abi.js';
import type { BuiltinCallType } from '../message.js';
import { compilePaths } from '../paths.js';
import {
  OPENAI_ERRORS, FILTERED, type FormatSpec, LENGTH, STOP, callKey, citationOf, count, errorOfBody, find, ignored, isObj, kind, kindText, member, names,
  sseEvent, sseFormat, stringAt, template, type WholeEvent,
} from './describe.js';

const P = {
  type: 0, delta: 1, usage: 2, status: 3, errorMessage: 4, message: 5, incomplete: 6, code: 7, errorCode: 8, outputIndex: 9,
  itemType: 10, itemId: 11, itemCallId: 12, itemName: 13, itemArguments: 14, arguments: 15, itemInput: 16, input: 17, item: 18,
  error: 19, nestedMessage: 20, nestedCode: 21, nestedType: 22, itemEncrypted: 23, itemResult: 24, itemFormat: 25,
} as const;
/** Event types and item types. */
const T = /* @__PURE__ */ names({
  text: 'response.output_text.delta', reasoning: 'response.reasoning_text.delta', summary: 'response.reasoning_summary_text.delta',
  completed: 'response.completed', incomplete: 'response.incomplete', failed: 'response.failed', error: 'error',
  added: 'response.output_item.added', itemDone: 'response.output_item.done', args: 'response.function_call_arguments.delta',
  argsDone: 'response.function_call_arguments.done', functionCall: 'function_call', reasoningItem: 'reasoning',
  message: 'message', refusal: 'response.refusal.delta', customCall: 'custom_tool_call', input: 'response.custom_tool_call_input.delta',
  inputDone: 'response.custom_tool_call_input.done', summaryPart: 'response.reasoning_summary_part.added',
  annotation: 'response.output_text.annotation.added', transcript: 'response.audio.transcript.delta',
});

/** An incomplete response that goes on (see `finishReasons`). */
const GOES_ON = { openai: 'length', anthropic: 'pause_turn' } as const;

export const openaiResponses: FormatSpec = /* @__PURE__ */ sseFormat({
  doneMarker: false,
  namedEvents: true,
  completion: 'a response.completed event',
  finishReasons: {
    completed: STOP, incomplete: LENGTH, max_output_tokens: LENGTH, content_filter: FILTERED,
    // (an answer not finished that goes on: the response's limit of output messages reached, or,
    // over WebSocket, stopped at a safe boundary for a steering input, a successor response going
    // on. `length` to OpenAI's clients, Anthropic's own word for a turn paused to theirs)
    max_messages: GOES_ON, steered: GOES_ON,
  },
  errorBody: errorOfBody,
  wholeAnswer: wholeResponse,
  isWholeAnswer: isResponse,
  wholeAnswerHead: /"object"\s*:\s*"response"/,
  errorTypes: OPENAI_ERRORS,
  usage: (u) => ({
    input: count(u, 'input_tokens'), output: count(u, 'output_tokens'), cacheRead: count(u, 'input_tokens_details.cached_tokens'),
    reasoning: count(u, 'output_tokens_details.reasoning_tokens'),
  }),
  program: /* @__PURE__ */ compilePaths([
    'type', 'delta', 'response.usage', 'response.status', 'response.error.message', 'message',
    'response.incomplete_details.reason', 'code', 'response.error.code', 'output_index', 'item.type', 'item.id', 'item.call_id',
    'item.name', 'item.arguments', 'arguments', 'item.input', 'input', 'item', 'error', 'error.message', 'error.code', 'error.type',
    'item.encrypted_content', 'item.result', 'item.output_format',
  ]),
  // a delta of the output's text, of reasoning (its text or summary), or of the current call's arguments
  template: /* @__PURE__ */ template([
    kind, kindText, ignored, ignored, ignored, ignored, ignored, ignored, ignored, callKey, ignored, ignored, ignored, ignored, ignored,
    ignored, ignored, ignored, ignored, ignored, ignored, ignored, ignored, ignored, ignored, ignored,
  ], [
    { literal: 'response.output_text.delta', channel: 'text', name: 'response.output_text.delta' },
    { literal: 'response.reasoning_text.delta', channel: 'reasoning', name: 'response.reasoning_text.delta' },
    { literal: 'response.reasoning_summary_text.delta', channel: 'reasoning', name: 'response.reasoning_summary_text.delta' },
    { literal: 'response.function_call_arguments.delta', channel: 'args', name: 'response.function_call_arguments.delta' },
    { literal: 'response.custom_tool_call_input.delta', channel: 'args', name: 'response.custom_tool_call_input.delta' },
    { literal: 'response.audio.transcript.delta', channel: 'text', name: 'response.audio.transcript.delta' },
  ]),
  read(doc, sink) {
    const t = find(doc, P.type);
    if (t < 0) return;
    const at = (p: number) => find(doc, p);
    // (an answer in audio: its transcript is the answer's text, as OpenAI Chat's audio.transcript is)
    if (doc.is(t, T.text) || doc.is(t, T.transcript)) {
      const d = at(P.delta);
      if (d >= 0 && doc.kind(d) === JK_STRING) sink.onText(doc, d);
    } else if (doc.is(t, T.reasoning) || doc.is(t, T.summary)) {
      const d = at(P.delta);
      if (d >= 0 && doc.kind(d) === JK_STRING) sink.onReasoning(doc, d);
    } else if (doc.is(t, T.annotation)) {
      // (rare: read whole; a file's citation is titled by its file's name)
      const a = member(doc.whole(), 'annotation');
      const c = citationOf(a, ['url'], ['title', 'filename']);
      if (c !== null) sink.onCitation(c);
    } else if (doc.is(t, T.summaryPart)) {
      // (each part of a reasoning summary is a block of its own: its text does not run on from the last part's)
      sink.onReasoningEnd();
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
        // (its encrypted content, with include: ["reasoning.encrypted_content"], is the item's whole
        // at its end: kept with the item's last block, which it ends)
        // (its id on each of its blocks: a caller that keeps the conversation sends the item back by it)
        if (!done) sink.onReasoningItem(doc, at(P.itemId), false);
        const enc = at(P.itemEncrypted);
        if (done && enc >= 0 && doc.kind(enc) === JK_STRING) sink.onReasoningEncrypted(doc, enc);
        if (done) {
          sink.onReasoningItem(doc, at(P.itemId), true);
          sink.onReasoningEnd();
        }
      } else if (!doc.is(it, T.message)) {
        const type = doc.string(it);
        if (Object.hasOwn(CLIENT_TOOLS, type)) {
          // a tool the API defines: said whole by its item's end (which says who runs it, and all
          // its arguments), the client's call or the provider's, begun there
          if (!done) return;
          const item = at(P.item);
          const name = stringAt(doc, at(P.itemName)) ?? '';
          const call = item >= 0 && doc.kind(item) === JK_OBJECT ? clientItem(type as BuiltinCallType, doc.string(item), name) : null;
          if (call !== null) {
            // (an approval request has no call_id: its answer names the item's id)
            const id = at(type === 'mcp_approval_request' ? P.itemId : P.itemCallId);
            sink.onBuiltinCall(doc, key, id, call.name, type as BuiltinCallType, call.args);
            return;
          }
        }
        // a hosted tool's item (web search, file search, code interpreter, MCP, …): the provider's own,
        // its arguments at its end the item's members but its envelope, as sent (what the tool was
        // asked and did: a search's action, the code run and its outputs, an MCP call's arguments and
        // output; a generated image's base64 `result` is media, not arguments)
        const item = done ? at(P.item) : -1;
        const args = item >= 0 && doc.kind(item) === JK_OBJECT ? hostedArgs(type, doc.string(item)) : '';
        sink.onToolCall(doc, key, at(P.itemId), it, true, -1, args);
        if (done) sink.onToolCallEnd(doc, key);
        // a generated image, in its item's end: media (its type from the item's output_format, PNG unless it says).
        // (Its previews, response.image_generation_call.partial_image events with `partial_images`
        // asked, are not read, by design: each is the whole image again at a lower fidelity, up to
        // three of them as large as the final one, which the item's end always brings, and they
        // say no format. A code interpreter's response.code_interpreter_call_code.delta fragments
        // are passed over too: the code is whole in the item's end, with its outputs.)
        const image = done && type === 'image_generation_call' ? at(P.itemResult) : -1;
        if (image >= 0 && doc.kind(image) === JK_STRING) sink.onMedia(doc, `image/${stringAt(doc, at(P.itemFormat)) ?? 'png'}`, image, false, -1);
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
      // (its message and code at the event's top, as documented, or in an `error` object, as the
      // API sends a rate limit: `{"type": "error", "error": {"type", "code", "message", "param"}}`)
      const e = at(P.error);
      const c = stringAt(doc, at(P.code)) ?? stringAt(doc, at(P.nestedCode)) ?? stringAt(doc, at(P.nestedType));
      const m = stringAt(doc, at(P.message)) ?? stringAt(doc, at(P.nestedMessage)) ?? stringAt(doc, e);
      sink.onError(m ?? c ?? (e >= 0 && doc.kind(e) !== JK_NULL ? doc.string(e) : 'error'), c);
    }
  },
});

/** The tool each item type of a tool the API defines and the client runs belongs to ('': the item names it). */
const CLIENT_TOOLS: Readonly<Record<BuiltinCallType, string>> = {
  computer_call: 'computer', local_shell_call: 'local_shell', shell_call: 'shell', apply_patch_call: 'apply_patch',
  tool_search_call: 'tool_search', mcp_approval_request: '',
};
/** An item's fields that are not its call's arguments. */
const ENVELOPE = new Set(['type', 'id', 'call_id', 'status', 'created_by']);

/**
 * The call an item of type `type` (its JSON text `json`, as sent) is when the client runs it: its
 * tool's name (`name`: the item's own, for an approval request) and its arguments, the item's
 * members but its envelope, each as sent; null for an item the provider runs (a shell call in a
 * container, a tool search the server ran).
 */
function clientItem(type: BuiltinCallType, json: string, name: string): { name: string; args: string } | null {
  const members = membersOf(json);
  const value = (k: string): unknown => {
    // (JSON.parse's reading: the last of a key said twice)
    for (let i = members.length - 1; i >= 0; i--) if (members[i].key === k) return JSON.parse(members[i].value) as unknown;
    return undefined;
  };
  if (type === 'shell_call') {
    // (no environment, or null: the local one)
    const env = value('environment');
    if (env !== null && env !== undefined && !(typeof env === 'object' && (env as Record<string, unknown>).type === 'local')) return null;
  } else if (type === 'tool_search_call' && value('execution') !== 'client') {
    return null;
  }
  return { name: CLIENT_TOOLS[type] || name, args: argsOf(members) };
}

/** A hosted tool's item's members but its envelope (and an image generation's `result`, which is media), as sent: its call's arguments. */
function hostedArgs(type: string, json: string): string {
  return argsOf(membersOf(json), type === 'image_generation_call' ? 'result' : '');
}

/** An item's call's arguments: its members but its envelope (and `leave`), as sent. */
function argsOf(members: readonly { key: string; text: string }[], leave = ''): string {
  return `{${members.filter((m) => !ENVELOPE.has(m.key) && m.key !== leave).map((m) => m.text).join(',')}}`;
}

/**
 * The members of a JSON object's text (valid JSON: the core read it), in order: each one's key,
 * its text as sent (`"key": value`) and its value's.
 */
function membersOf(json: string): { key: string; text: string; value: string }[] {
  const out: { key: string; text: string; value: string }[] = [];
  const n = json.length;
  let i = json.indexOf('{') + 1;
  const space = () => {
    while (i < n && (json[i] === ' ' || json[i] === '\t' || json[i] === '\n' || json[i] === '\r')) i++;
  };
  // (at a string's quote: past its end)
  const string = () => {
    for (i++; i < n && json[i] !== '"'; i += json[i] === '\\' ? 2 : 1);
    i++;
  };
  for (space(); i < n && json[i] !== '}'; space()) {
    const start = i;
    string();
    const key = JSON.parse(json.slice(start, i)) as string;
    space();
    i++; // (the colon)
    space();
    const from = i;
    // the value: a string, a container to its matching end, or a literal to the `,` or `}` after it
    for (let depth = 0; i < n;) {
      const c = json[i];
      if (c === '"') {
        string();
        if (depth === 0) break;
      } else if (c === '{' || c === '[') {
        depth++;
        i++;
      } else if (c === '}' || c === ']') {
        if (depth === 0) break;
        i++;
        if (--depth === 0) break;
      } else if (c === ',' && depth === 0) {
        break;
      } else {
        i++;
      }
    }
    const value = json.slice(from, i).trimEnd();
    out.push({ key, text: json.slice(start, from) + value, value });
    space();
    if (json[i] === ',') i++;
  }
  return out;
}

/**
 * A whole response (asked without `stream`: `object: "response"`) as the stream it comes as:
 * `response.created`, then each output item added (without its content), its content in the
 * deltas a stream sends it in (a message's text and refusal, then its text's annotations; a
 * call's arguments or input; a reasoning item's summary parts and text), and the item done
 * (whole), then `response.completed` (`.incomplete`, `.failed`: its status) with the response; none
 * for a response not finished (`queued`, `in_progress`: background mode) or `cancelled`.
 */
/** A whole answer: a `response` with its `output` array. */
function isResponse(body: unknown): body is Record<string, unknown> & { output: unknown[] } {
  return isObj(body) && body.object === 'response' && Array.isArray(body.output);
}

function wholeResponse(body: unknown): WholeEvent[] | undefined {
  if (!isResponse(body)) return undefined;
  const ev = (type: string, data: Record<string, unknown>) => sseEvent({ type, ...data }, type);
  const out = [ev('response.created', { response: { ...body, status: 'in_progress', output: [], usage: null } })];
  (body.output as unknown[]).forEach((item, output_index) => {
    if (!isObj(item)) return;
    const at = { item_id: item.id, output_index };
    const added = (shown: Record<string, unknown>) => ev('response.output_item.added', { output_index, item: shown });
    if (item.type === 'message' && Array.isArray(item.content)) {
      out.push(added({ ...item, status: 'in_progress', content: [] }));
      (item.content as unknown[]).forEach((part, content_index) => {
        if (!isObj(part)) return;
        if (part.type === 'output_text' && typeof part.text === 'string') {
          if (part.text !== '') out.push(ev('response.output_text.delta', { ...at, content_index, delta: part.text }));
          if (Array.isArray(part.annotations)) {
            part.annotations.forEach((annotation: unknown, annotation_index) => {
              out.push(ev('response.output_text.annotation.added', { ...at, content_index, annotation_index, annotation }));
            });
          }
        } else if (part.type === 'refusal' && typeof part.refusal === 'string' && part.refusal !== '') {
          out.push(ev('response.refusal.delta', { ...at, content_index, delta: part.refusal }));
        }
      });
    } else if (item.type === 'function_call' && typeof item.arguments === 'string') {
      out.push(added({ ...item, status: 'in_progress', arguments: '' }));
      if (item.arguments !== '') out.push(ev('response.function_call_arguments.delta', { ...at, delta: item.arguments }));
      out.push(ev('response.function_call_arguments.done', { ...at, arguments: item.arguments }));
    } else if (item.type === 'custom_tool_call' && typeof item.input === 'string') {
      out.push(added({ ...item, status: 'in_progress', input: '' }));
      if (item.input !== '') out.push(ev('response.custom_tool_call_input.delta', { ...at, delta: item.input }));
      out.push(ev('response.custom_tool_call_input.done', { ...at, input: item.input }));
    } else if (item.type === 'reasoning') {
      const { encrypted_content: _encrypted, content, summary, ...shown } = item;
      out.push(added({ ...shown, summary: [] }));
      if (Array.isArray(summary)) {
        summary.forEach((part: unknown, summary_index) => {
          out.push(ev('response.reasoning_summary_part.added', { ...at, summary_index, part: { type: 'summary_text', text: '' } }));
          if (isObj(part) && typeof part.text === 'string' && part.text !== '') out.push(ev('response.reasoning_summary_text.delta', { ...at, summary_index, delta: part.text }));
        });
      }
      if (Array.isArray(content)) {
        content.forEach((part: unknown, content_index) => {
          if (isObj(part) && typeof part.text === 'string' && part.text !== '') out.push(ev('response.reasoning_text.delta', { ...at, content_index, delta: part.text }));
        });
      }
    } else {
      // (a hosted tool's call, a client-run tool's, a generated image: said whole by its item's end)
      out.push(added({ id: item.id, type: item.type, status: 'in_progress' }));
    }
    out.push(ev('response.output_item.done', { output_index, item }));
  });
  // (a response not finished, a background one still queued or in progress, or cancelled, has no
  // completion: its stream would have ended without one, the answer cut short)
  if (body.status === 'queued' || body.status === 'in_progress' || body.status === 'cancelled') return out;
  const end = body.status === 'incomplete' ? 'response.incomplete' : body.status === 'failed' ? 'response.failed' : 'response.completed';
  out.push(ev(end, { response: body }));
  return out;
}
