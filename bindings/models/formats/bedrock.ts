// Bedrock ConverseStream: AWS's binary event stream (application/vnd.amazon.eventstream), framed
// and CRC-checked in the core (assembly/eventstream.ts). Each event message's payload is one JSON
// object, named by its `:event-type` header; the reader gives the description that payload under
// its name (`{"contentBlockDelta": {…}}`, as AWS's SDKs present the events). Text in
// `contentBlockDelta.delta.text`; reasoning in `delta.reasoningContent` (`text`, `signature`,
// `redactedContent`); the client's tool calls begun by `contentBlockStart.start.toolUse` (`toolUseId`,
// `name`), their arguments in `delta.toolUse.input` fragments (none for a tool with no arguments:
// its arguments are then `{}`), ended by `contentBlockStop` (a start whose `type` is
// `server_tool_use` begins a call of a tool Bedrock runs itself: the provider's, not the
// client's); `messageStop {stopReason}` completes the stream, and the `metadata {usage, metrics}`
// event after it is still read for its usage (a stop reason that says the model's output was
// malformed is the provider's error instead, at its stop, once the metadata after it was read for
// the usage of the failed turn). A `delta.citation` is a source the answer cites. An
// exception message (`:message-type: exception`) is the provider's error.
import { JK_OBJECT, JK_STRING } from '../../core/generated/abi.js';
import { anthropic } from './anthropic.js';
import { compilePaths } from '../paths.js';
import {
  CONTEXT_FULL, FILTERED, type FormatSpec, failedTurn, LENGTH, type ProviderError, STOP, TOOLS, type WholeEvent, argsText, ascii, callKey, citationOf, count, errorOfBody,
  find, isObj, member, never, reasoningText, sseEvent, template, text,
} from './describe.js';
import type { Citation } from '../message.js';

const P = {
  text: 0, input: 1, reasoning: 2, signature: 3, redacted: 4, deltaIndex: 5, startIndex: 6, toolUseId: 7, toolName: 8, stopIndex: 9,
  stopReason: 10, usage: 11, messageStart: 12, blockStart: 13, blockStop: 14, messageStop: 15, metadata: 16, toolType: 17, citation: 18,
} as const;
const SERVER_TOOL = /* @__PURE__ */ ascii('server_tool_use');

/** `{"message": …}` (or `Message`): AWS's JSON error bodies. */
function awsError(body: unknown): ProviderError | undefined {
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const b = body as { message?: unknown; Message?: unknown; __type?: unknown };
    const message = typeof b.message === 'string' ? b.message : typeof b.Message === 'string' ? b.Message : undefined;
    if (message !== undefined) {
      const e: ProviderError = { message };
      if (typeof b.__type === 'string') e.type = e.detail = b.__type;
      return e;
    }
  }
  return errorOfBody(body);
}

/**
 * The exceptions of Bedrock's runtime in Anthropic's words, as an event stream's `:exception-type`
 * spells them (`throttlingException`) and as an error body's `__type` does (`ThrottlingException`;
 * a namespace before `#` is dropped before the lookup).
 */
const AWS_ERRORS: Readonly<Record<string, string>> = /* @__PURE__ */ bothCases({
  throttlingException: 'rate_limit_error', serviceQuotaExceededException: 'rate_limit_error',
  serviceUnavailableException: 'overloaded_error', modelNotReadyException: 'overloaded_error',
  validationException: 'invalid_request_error', accessDeniedException: 'permission_error', resourceNotFoundException: 'not_found_error',
  internalServerException: 'api_error', modelStreamErrorException: 'api_error', modelTimeoutException: 'api_error',
});

/** Each name also with its first letter capital. */
function bothCases(words: Record<string, string>): Readonly<Record<string, string>> {
  const out: Record<string, string> = { ...words };
  for (const [k, v] of Object.entries(words)) out[k[0].toUpperCase() + k.slice(1)] = v;
  return Object.freeze(out);
}

export const bedrock: FormatSpec = {
  framing: 'eventstream',
  contentType: 'application/vnd.amazon.eventstream',
  doneMarker: false,
  completion: 'a messageStop event',
  finishReasons: {
    end_turn: STOP, stop_sequence: { openai: 'stop', anthropic: 'stop_sequence' }, max_tokens: LENGTH, tool_use: TOOLS,
    guardrail_intervened: FILTERED, content_filtered: FILTERED, model_context_window_exceeded: CONTEXT_FULL,
    malformed_model_output: /* @__PURE__ */ failedTurn('the model wrote output that is not valid'),
    malformed_tool_use: /* @__PURE__ */ failedTurn('the model wrote a tool call that is not valid'),
  },
  errorBody: awsError,
  errorTypes: AWS_ERRORS,
  wholeAnswer: wholeConverse,
  isWholeAnswer: isConverse,
  // (Converse's members in AWS's order: the metrics first, then the output)
  wholeAnswerHead: /^\{\s*(?:"metrics"\s*:\s*\{[^{}]*\}\s*,\s*)?"output"\s*:\s*\{\s*"message"\s*:/,
  usage(u) {
    const read = count(u, 'cacheReadInputTokens');
    const write = count(u, 'cacheWriteInputTokens');
    const input = count(u, 'inputTokens');
    return { input: input === undefined ? undefined : input + (read ?? 0) + (write ?? 0), output: count(u, 'outputTokens'), cacheRead: read, cacheWrite: write };
  },
  program: /* @__PURE__ */ compilePaths([
    'contentBlockDelta.delta.text', 'contentBlockDelta.delta.toolUse.input', 'contentBlockDelta.delta.reasoningContent.text',
    'contentBlockDelta.delta.reasoningContent.signature', 'contentBlockDelta.delta.reasoningContent.redactedContent',
    'contentBlockDelta.contentBlockIndex', 'contentBlockStart.contentBlockIndex', 'contentBlockStart.start.toolUse.toolUseId',
    'contentBlockStart.start.toolUse.name', 'contentBlockStop.contentBlockIndex', 'messageStop.stopReason', 'metadata.usage', 'messageStart',
    'contentBlockStart', 'contentBlockStop', 'messageStop', 'metadata', 'contentBlockStart.start.toolUse.type',
    'contentBlockDelta.delta.citation',
  ]),
  // a contentBlockDelta of text, reasoning text, or the current call's input (its padding `p` ignored)
  template: /* @__PURE__ */ template([
    text, argsText, reasoningText, never, never, callKey, never, never, never, never, never, never, never, never, never, never, never, never,
    never,
  ]),
  read(doc, sink) {
    const at = (p: number) => find(doc, p);
    const str = (j: number) => j >= 0 && doc.kind(j) === JK_STRING;
    const key = (j: number) => (j >= 0 ? doc.int(j) : -1);
    for (let j = 0; j < doc.n; j++) {
      const p = doc.path(j);
      if (p === P.text && str(j)) sink.onText(doc, j);
      else if (p === P.input && str(j)) {
        const k = key(at(P.deltaIndex));
        sink.onToolArguments(doc, k, j);
      } else if (p === P.reasoning && str(j)) sink.onReasoning(doc, j);
      else if (p === P.signature && str(j)) sink.onReasoningSignature(doc, j);
      else if (p === P.redacted && str(j)) sink.onReasoningSignature(doc, j, true);
      else if (p === P.blockStart) {
        const id = at(P.toolUseId);
        const name = at(P.toolName);
        // (no input in the start: a call whose block ends with no input fragment, as ConverseStream
        // sends a tool with no arguments, has `{}`, as Anthropic's start input and Gemini's call give it)
        const type = at(P.toolType);
        const server = type >= 0 && doc.is(type, SERVER_TOOL);
        if (id >= 0 || name >= 0) sink.onToolCall(doc, key(at(P.startIndex)), id, name, server, -1, '{}');
      } else if (p === P.blockStop) {
        const k = key(at(P.stopIndex));
        if (k >= 0) sink.onToolCallEnd(doc, k);
        sink.onReasoningEnd();
      } else if (p === P.messageStop) {
        // (its stop reason first, read here: one that says the turn failed ends no call)
        const why = at(P.stopReason);
        if (str(why)) sink.onFinishReason(doc.string(why));
        sink.onReasoningEnd();
        sink.onToolCallsEnd();
        sink.onDone();
      } else if (p === P.usage && doc.kind(j) === JK_OBJECT) sink.onUsage(doc.value(j) as Record<string, unknown>);
      else if (p === P.citation && doc.kind(j) === JK_OBJECT) {
        const c = bedrockCitation(doc.value(j));
        if (c !== null) sink.onCitation(c);
      }
    }
  },
  trailer(doc, sink) {
    const u = find(doc, P.usage);
    if (u >= 0 && doc.kind(u) === JK_OBJECT) sink.onUsage(doc.value(u) as Record<string, unknown>);
  },
};

/**
 * A `citation` delta: `{title?, source?, sourceContent?: [{text}], location?}`, its address a web
 * location's `url`, its quoted passage the source content's text.
 */
function bedrockCitation(source: unknown): Citation | null {
  const c = citationOf(source, [], ['title']);
  if (c === null) return null;
  const url = member(member(member(source, 'location'), 'web'), 'url');
  if (typeof url === 'string') c.url = url;
  const quoted = member(source, 'sourceContent');
  if (Array.isArray(quoted)) {
    const texts = quoted.map((q) => member(q, 'text')).filter((t): t is string => typeof t === 'string');
    if (texts.length !== 0) c.citedText = texts.join('');
  }
  return c;
}

/**
 * Converse's whole answer (`POST /model/{id}/converse`: `{output: {message: {role, content}},
 * stopReason, usage, metrics}`) as the events ConverseStream sends the same answer in, each the
 * event's payload under its name, as the core writes a message of the binary stream for the
 * reader: `messageStart`; per content block at its index, a `text` block's text in one delta; a
 * `toolUse` block begun by its start (`toolUseId`, `name`, its `type`), its input's JSON in one
 * delta; `reasoningContent`'s `reasoningText` text then its signature, or its `redactedContent`;
 * `citationsContent`'s citations, each a `citation` delta, then its generated content's text;
 * each block stopped; then `messageStop` (its stop reason, and `additionalModelResponseFields`) and
 * `metadata` (the usage, the metrics, a guardrail's trace, the performance configuration and the
 * service tier, as ConverseStreamMetadataEvent has them). Blocks whose stream events this format
 * does not read (an image, a tool's result, a guardrail's content, a cache point) have none here
 * (their index is still theirs). Undefined for a body that is not such an answer.
 */
/** A whole answer: Converse's `{output: {message: {role, content}}, stopReason, usage, metrics}`. */
function isConverse(body: unknown): body is Record<string, unknown> {
  return isObj(body) && Array.isArray(member(member(member(body, 'output'), 'message'), 'content'));
}

function wholeConverse(body: unknown): WholeEvent[] | undefined {
  if (!isConverse(body)) return undefined;
  const message = member(member(body, 'output'), 'message');
  const content = member(message, 'content');
  const ev = (name: string, payload: Record<string, unknown>) => sseEvent({ [name]: payload });
  const delta = (contentBlockIndex: number, d: Record<string, unknown>) => ev('contentBlockDelta', { contentBlockIndex, delta: d });
  const role = member(message, 'role');
  const out = [ev('messageStart', { role: typeof role === 'string' ? role : 'assistant' })];
  (content as unknown[]).forEach((block, i) => {
    if (!isObj(block)) return;
    const n = out.length;
    const { text, toolUse, reasoningContent, citationsContent } = block;
    if (typeof text === 'string') {
      if (text !== '') out.push(delta(i, { text }));
    } else if (isObj(toolUse)) {
      const { input, ...start } = toolUse;
      out.push(ev('contentBlockStart', { contentBlockIndex: i, start: { toolUse: start } }));
      if (input !== undefined) out.push(delta(i, { toolUse: { input: JSON.stringify(input) } }));
    } else if (isObj(reasoningContent)) {
      const r = reasoningContent.reasoningText;
      const redacted = reasoningContent.redactedContent;
      if (isObj(r)) {
        if (typeof r.text === 'string' && r.text !== '') out.push(delta(i, { reasoningContent: { text: r.text } }));
        if (typeof r.signature === 'string') out.push(delta(i, { reasoningContent: { signature: r.signature } }));
      } else if (typeof redacted === 'string') {
        out.push(delta(i, { reasoningContent: { redactedContent: redacted } }));
      }
    } else if (isObj(citationsContent)) {
      const { citations, content: generated } = citationsContent;
      if (Array.isArray(citations)) for (const citation of citations) if (isObj(citation)) out.push(delta(i, { citation }));
      const said = Array.isArray(generated) ? generated.map((g) => member(g, 'text')).filter((t): t is string => typeof t === 'string').join('') : '';
      if (said !== '') out.push(delta(i, { text: said }));
    }
    if (out.length !== n || typeof text === 'string') out.push(ev('contentBlockStop', { contentBlockIndex: i }));
  });
  const stop: Record<string, unknown> = {};
  if (body.stopReason !== undefined) stop.stopReason = body.stopReason;
  if (body.additionalModelResponseFields !== undefined) stop.additionalModelResponseFields = body.additionalModelResponseFields;
  out.push(ev('messageStop', stop));
  // (always: a stop reason that says the turn failed fails the stream at the event after it, here, with the usage)
  const metadata: Record<string, unknown> = {};
  for (const k of ['usage', 'metrics', 'trace', 'performanceConfig', 'serviceTier'] as const) if (body[k] !== undefined) metadata[k] = body[k];
  out.push(ev('metadata', metadata));
  return out;
}

/**
 * InvokeModelWithResponseStream of a Claude model: the same binary event stream, whose `chunk`
 * messages carry `{"bytes": base64}` of Anthropic's own Messages events (decoded in the core), so
 * that Claude on Bedrock reads exactly like Claude direct: Anthropic's description, completed by
 * its message_stop.
 */
export const bedrockInvoke: FormatSpec = /* @__PURE__ */ invokeOf(anthropic);

/** The description of a model's own events carried in InvokeModelWithResponseStream's chunks. */
function invokeOf(inner: FormatSpec): FormatSpec {
  return Object.freeze({
    ...inner,
    framing: 'eventstream',
    contentType: 'application/vnd.amazon.eventstream',
    completion: `${inner.completion} (in a chunk)`,
    invoke: true,
    errorBody: awsError,
    errorTypes: AWS_ERRORS, // (the inner format's own errors come in its words)
  });
}
