// Anthropic Messages: SSE events named by their `type`, text in `content_block_delta` events with a
// `text_delta`, completed by `message_stop`; `event: error` for the provider's errors. Content
// comes in blocks, each begun by `content_block_start` and ended by `content_block_stop` at its
// `index`: text, thinking (with a `signature_delta` to send back), redacted thinking, `tool_use`
// (the client's calls, arguments as `input_json_delta` fragments) and `server_tool_use` (the
// provider's own, each with the block of its result, `web_search_tool_result`, …, as its
// result). A `citations_delta` adds a citation (a web search result's, a document's) to
// the text block it comes in. A refusal's `message_delta` may explain it (`stop_details` of type
// `refusal`): the explanation is the refusal's text.
import { JK_OBJECT, JK_STRING } from '../../core/generated/abi.js';
import { compilePaths } from '../paths.js';
import {
  CONTEXT_FULL, FILTERED, type FormatSpec, LENGTH, STOP, TOOLS, argsText, callKey, citationOf, count, errorMessage, errorOfBody, find, ignored, isObj,
  kind, literal, member, names, reasoningText, sseEvent, sseFormat, stringAt, template, text, type WholeEvent,
} from './describe.js';

const P = {
  type: 0, deltaType: 1, text: 2, thinking: 3, stopReason: 4, usage: 5, messageUsage: 6, errorMessage: 7, error: 8, errorType: 9,
  index: 10, blockType: 11, blockId: 12, blockName: 13, blockInput: 14, partialJson: 15, signature: 16, blockData: 17,
  blockThinking: 18, blockSignature: 19, blockText: 20, stopExplanation: 21, stopDetails: 22, stopDetailsType: 23,
  blockToolUseId: 24, block: 25,
} as const;
/** The end of the type of a block that holds a server tool's result (`web_search_tool_result`, `code_execution_tool_result`, `mcp_tool_result`, …). */
const RESULT = '_tool_result';
/** Event types, delta types and block types. */
const T = /* @__PURE__ */ names({
  delta: 'content_block_delta', start: 'content_block_start', stopBlock: 'content_block_stop', text: 'text_delta',
  thinking: 'thinking_delta', signature: 'signature_delta', json: 'input_json_delta', messageDelta: 'message_delta',
  messageStart: 'message_start', stop: 'message_stop', error: 'error', ping: 'ping', textBlock: 'text',
  thinkingBlock: 'thinking', redacted: 'redacted_thinking', toolUse: 'tool_use', serverToolUse: 'server_tool_use',
  mcpToolUse: 'mcp_tool_use', citations: 'citations_delta', refusalDetails: 'refusal',
});

export const anthropic: FormatSpec = /* @__PURE__ */ sseFormat({
  doneMarker: false,
  namedEvents: true,
  completion: 'a message_stop event',
  finishReasons: {
    end_turn: STOP, stop_sequence: { openai: 'stop', anthropic: 'stop_sequence' }, max_tokens: LENGTH, tool_use: TOOLS,
    // (the server paused a long turn of its own tools: the client sends the answer back as it is to
    // go on. Not a finished turn: to OpenAI's clients `length`, an answer not finished, not `stop`)
    pause_turn: { openai: 'length', anthropic: 'pause_turn' }, refusal: FILTERED,
    // (the server compacted the conversation and paused there, its compaction block the turn's
    // output: the client sends it back to go on. Not a finished answer either: `length` to OpenAI's)
    compaction: { openai: 'length', anthropic: 'compaction' },
    model_context_window_exceeded: CONTEXT_FULL,
  },
  errorBody: errorOfBody,
  wholeAnswer: wholeMessage,
  isWholeAnswer: isMessage,
  // (its `id` before its `type`, or its `type` first)
  wholeAnswerHead: /^\{\s*"(id"\s*:\s*"[^"]*"\s*,\s*")?type"\s*:\s*"message"/,
  usage(u) {
    const read = count(u, 'cache_read_input_tokens');
    const write = count(u, 'cache_creation_input_tokens');
    const input = count(u, 'input_tokens');
    return {
      input: input === undefined ? undefined : input + (read ?? 0) + (write ?? 0), output: count(u, 'output_tokens'), cacheRead: read, cacheWrite: write,
      // (the output tokens spent thinking: Anthropic's usage.output_tokens_details)
      reasoning: count(u, 'output_tokens_details.thinking_tokens'),
    };
  },
  program: /* @__PURE__ */ compilePaths([
    'type', 'delta.type', 'delta.text', 'delta.thinking', 'delta.stop_reason', 'usage', 'message.usage', 'error.message', 'error',
    'error.type', 'index', 'content_block.type', 'content_block.id', 'content_block.name', 'content_block.input',
    'delta.partial_json', 'delta.signature', 'content_block.data', 'content_block.thinking', 'content_block.signature',
    'content_block.text', 'delta.stop_details.explanation', 'delta.stop_details', 'delta.stop_details.type',
    'content_block.tool_use_id', 'content_block',
  ]),
  // a content_block_delta of text, thinking, or the current call's input JSON
  template: /* @__PURE__ */ template([
    /* @__PURE__ */ literal('content_block_delta'), kind, text, reasoningText, ignored, ignored, ignored, ignored, ignored, ignored, callKey,
    ignored, ignored, ignored, ignored, argsText, ignored, ignored, ignored, ignored, ignored, ignored, ignored, ignored, ignored, ignored,
  ], [
    { literal: 'text_delta', channel: 'text', name: 'content_block_delta' },
    { literal: 'thinking_delta', channel: 'reasoning', name: 'content_block_delta' },
    { literal: 'input_json_delta', channel: 'args', name: 'content_block_delta' },
  ]),
  read(doc, sink) {
    const n = doc.n;
    const t = find(doc, P.type);
    if (t < 0) return;
    const at = (p: number) => find(doc, p);
    if (doc.is(t, T.delta)) {
      const dt = at(P.deltaType);
      if (dt < 0) return;
      const key = doc.int(at(P.index));
      if (doc.is(dt, T.text)) {
        const j = at(P.text);
        if (j >= 0 && doc.kind(j) === JK_STRING) sink.onText(doc, j);
      } else if (doc.is(dt, T.thinking)) {
        const j = at(P.thinking);
        if (j >= 0 && doc.kind(j) === JK_STRING) sink.onReasoning(doc, j);
      } else if (doc.is(dt, T.signature)) {
        const j = at(P.signature);
        if (j >= 0 && doc.kind(j) === JK_STRING) sink.onReasoningSignature(doc, j);
      } else if (doc.is(dt, T.json)) {
        const j = at(P.partialJson);
        if (j >= 0 && key >= 0) sink.onToolArguments(doc, key, j);
      } else if (doc.is(dt, T.citations)) {
        // (rare: read whole, no path of its own on every delta's way)
        // (a web page's is titled by `title`, a document's by `document_title`; a search result's address is its `source`)
        const c = citationOf(member(member(doc.whole(), 'delta'), 'citation'), ['url', 'source'], ['title', 'document_title'], 'cited_text');
        if (c !== null) sink.onCitation(c);
      }
    } else if (doc.is(t, T.start)) {
      const bt = at(P.blockType);
      const key = doc.int(at(P.index));
      if (bt < 0 || key < 0) return;
      if (doc.is(bt, T.toolUse) || doc.is(bt, T.serverToolUse) || doc.is(bt, T.mcpToolUse)) {
        sink.onToolCall(doc, key, at(P.blockId), at(P.blockName), !doc.is(bt, T.toolUse), at(P.blockInput));
      } else if (doc.is(bt, T.textBlock)) {
        const j = at(P.blockText);
        if (j >= 0 && doc.kind(j) === JK_STRING && doc.end(j) > doc.start(j)) sink.onText(doc, j);
      } else if (doc.is(bt, T.thinkingBlock)) {
        const j = at(P.blockThinking);
        if (j >= 0 && doc.kind(j) === JK_STRING && doc.end(j) > doc.start(j)) sink.onReasoning(doc, j);
        const s = at(P.blockSignature);
        if (s >= 0 && doc.kind(s) === JK_STRING && doc.end(s) > doc.start(s)) sink.onReasoningSignature(doc, s);
      } else if (doc.is(bt, T.redacted)) {
        const j = at(P.blockData);
        if (j >= 0 && doc.kind(j) === JK_STRING) sink.onReasoningSignature(doc, j, true);
      } else if (doc.kind(bt) === JK_STRING) {
        // a server tool's result (whole in its start): the block as sent, the result of the call it
        // names by tool_use_id (the client sends the block back with the call in its history)
        const type = doc.string(bt);
        const use = at(P.blockToolUseId);
        if (type.endsWith(RESULT) && use >= 0 && doc.kind(use) === JK_STRING) sink.onServerResult(doc, use, at(P.block), type.slice(0, -RESULT.length));
      }
    } else if (doc.is(t, T.stopBlock)) {
      const key = doc.int(at(P.index));
      if (key >= 0) sink.onToolCallEnd(doc, key);
      sink.onReasoningEnd();
    } else if (doc.is(t, T.messageDelta)) {
      for (let j = 0; j < n; j++) {
        const p = doc.path(j);
        if (p === P.stopReason && doc.kind(j) === JK_STRING) sink.onFinishReason(doc.string(j));
        else if (p === P.usage && doc.kind(j) === JK_OBJECT) sink.onUsage(doc.value(j) as Record<string, unknown>);
      }
      // a refusal's explanation, with its stop: the refusal's text (as OpenAI's clients read one)
      const details = at(P.stopDetails);
      const type = at(P.stopDetailsType);
      const why = at(P.stopExplanation);
      if (details >= 0 && doc.kind(details) === JK_OBJECT && type >= 0 && doc.is(type, T.refusalDetails)) {
        sink.onRefusal(doc, why >= 0 && doc.kind(why) === JK_STRING ? why : -1, details);
      }
    } else if (doc.is(t, T.messageStart)) {
      const u = at(P.messageUsage);
      if (u >= 0 && doc.kind(u) === JK_OBJECT) sink.onUsage(doc.value(u) as Record<string, unknown>);
    } else if (doc.is(t, T.stop)) {
      sink.onDone();
    } else if (doc.is(t, T.ping)) {
      sink.onPing();
    } else if (doc.is(t, T.error)) {
      const e = at(P.error);
      sink.onError(e >= 0 ? errorMessage(doc, e, at(P.errorMessage)) : 'error', stringAt(doc, at(P.errorType)));
    }
  },
});

/** A whole answer: a `message` with its `content` array. */
function isMessage(body: unknown): body is Record<string, unknown> & { content: unknown[] } {
  return isObj(body) && body.type === 'message' && Array.isArray(body.content);
}

/**
 * A whole message (asked without `stream`: `type: "message"`) as the stream it comes as:
 * `message_start` (no content, no stop reason), each content block begun, its content in the
 * deltas a stream sends it in (a text block's citations, then its text; thinking, then its
 * signature; a call's input as one `input_json_delta` of its JSON; any other block whole in its
 * start), and ended, then `message_delta` with the stop reason and the usage, and `message_stop`.
 */
function wholeMessage(body: unknown): WholeEvent[] | undefined {
  if (!isMessage(body)) return undefined;
  const { content, stop_reason, stop_sequence, stop_details, container, usage, ...message } = body;
  const ev = (type: string, data: Record<string, unknown>) => sseEvent({ type, ...data }, type);
  const delta = (index: number, d: Record<string, unknown>) => ev('content_block_delta', { index, delta: d });
  const out = [ev('message_start', { message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage } })];
  (content as unknown[]).forEach((block, index) => {
    if (!isObj(block)) return;
    if (block.type === 'text') {
      const { text, citations, ...rest } = block;
      out.push(ev('content_block_start', { index, content_block: { ...rest, text: '' } }));
      if (Array.isArray(citations)) for (const citation of citations) out.push(delta(index, { type: 'citations_delta', citation }));
      if (typeof text === 'string' && text !== '') out.push(delta(index, { type: 'text_delta', text }));
    } else if (block.type === 'thinking') {
      const { thinking, signature, ...rest } = block;
      out.push(ev('content_block_start', { index, content_block: { ...rest, thinking: '', signature: '' } }));
      if (typeof thinking === 'string' && thinking !== '') out.push(delta(index, { type: 'thinking_delta', thinking }));
      if (typeof signature === 'string' && signature !== '') out.push(delta(index, { type: 'signature_delta', signature }));
    } else if ((block.type === 'tool_use' || block.type === 'server_tool_use' || block.type === 'mcp_tool_use') && 'input' in block) {
      const { input, ...rest } = block;
      out.push(ev('content_block_start', { index, content_block: { ...rest, input: {} } }));
      out.push(delta(index, { type: 'input_json_delta', partial_json: JSON.stringify(input) }));
    } else {
      out.push(ev('content_block_start', { index, content_block: block }));
    }
    out.push(ev('content_block_stop', { index }));
  });
  const end: Record<string, unknown> = { stop_reason: stop_reason ?? null, stop_sequence: stop_sequence ?? null };
  if (stop_details !== undefined) end.stop_details = stop_details;
  if (container !== undefined) end.container = container;
  out.push(ev('message_delta', usage === undefined ? { delta: end } : { delta: end, usage }));
  out.push(ev('message_stop', {}));
  return out;
}
