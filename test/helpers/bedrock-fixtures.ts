// Bedrock ConverseStream fixtures: each a list of messages (events by their `:event-type`, with
// the JSON payloads ConverseStream sends, AWS's `p` padding included; exceptions by their
// `:exception-type`), encoded into AWS's binary event stream by AWS's own codec
// (@smithy/eventstream-codec), and a reference reading written from AWS's documentation of
// ConverseStream (ConverseStreamOutput: messageStart, contentBlockStart, contentBlockDelta,
// contentBlockStop, messageStop, metadata; the exceptions), independent of the library: the codec
// decodes each message, JSON.parse reads its payload (model-fixtures.ts' reference, which reads
// every format; the decisions below are its reading of Bedrock's).
//
// Decisions the fixtures encode:
// - messageStop completes the stream (its stopReason is the finish reason); the metadata event
//   after it is still read for its usage; events after the completion count as events.
// - a tool call's arguments are its toolUse.input fragments joined; a call its contentBlockStart
//   began whose fragments bring no text (none came: a tool with no arguments) has `{}`, as
//   Anthropic's start input and Gemini's call with no args give it; contentBlockStop ends it;
//   messageStop ends every call still open. reasoningContent.text is reasoning, its signature and
//   redactedContent are the block's signature and redacted data; contentBlockStop ends the block.
// - an exception message is ERR_PROVIDER at the message's first byte, with its payload's message
//   and the exception type as the provider's code; the stream's error offsets are the binary
//   stream's: a message's first byte, or the stream's length for a truncated stream.
// - after messageStop an exception is not the answer, as nothing after a completion is in any
//   format (an error event after Anthropic's message_stop, an error chunk after Gemini's finish):
//   the stream stays done, and the metadata after it is read. Damage to the framing is not a
//   message: it fails the stream wherever it comes.
import { codec, reference } from './model-fixtures.js';

export { codec };

const enc = new TextEncoder();

/** CRC-32/ISO-HDLC bit by bit: the tests' reference (the core's sliced tables are checked against it), and the CRCs of messages the tests build or damage by hand. */
export function crc32Ref(b: Uint8Array): number {
  let c = 0xffffffff;
  for (const x of b) {
    c ^= x;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

export type Msg =
  | { event: string; payload: string }
  | { exception: string; payload: string }
  | { raw: Uint8Array };

export interface BedrockCall { index: number; id: string; name: string; arguments: string; done: boolean; valid?: boolean }
export interface BedrockExpected {
  text: string;
  reasoning: string;
  status: 'done' | 'truncated' | 'failed';
  finishReason?: string;
  usage?: Record<string, unknown>;
  events: number;
  toolCalls: BedrockCall[];
  signatures: string[];
  error?: { code: string; offset: number; message?: string };
}

export interface BedrockFixture {
  name: string;
  note: string;
  messages: Msg[];
  bytes: Uint8Array;
  /** Where each message begins. */
  starts: number[];
  expected: BedrockExpected;
}

export function encodeMessage(m: Msg): Uint8Array {
  if ('raw' in m) return m.raw;
  if ('event' in m) {
    return codec.encode({
      headers: { ':event-type': { type: 'string', value: m.event }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: 'event' } },
      body: enc.encode(m.payload),
    });
  }
  return codec.encode({
    headers: { ':exception-type': { type: 'string', value: m.exception }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: 'exception' } },
    body: enc.encode(m.payload),
  });
}

/** Reads the bytes as the contract says, from AWS's codec and JSON.parse up (model-fixtures.ts' reference reading of `bedrock`). */
export function bedrockReference(bytes: Uint8Array): BedrockExpected {
  const ref = reference(bytes, 'bedrock');
  const out: BedrockExpected = {
    text: ref.text, reasoning: ref.reasoning, status: ref.status, finishReason: ref.finishReason, usage: ref.usage, events: ref.events,
    toolCalls: ref.toolCalls, signatures: ref.signatures,
  };
  if (ref.error !== undefined) out.error = { code: ref.error.code, offset: ref.error.offset, ...(ref.error.message !== undefined ? { message: ref.error.message } : {}) };
  return out;
}

const fixtures: BedrockFixture[] = [];

function add(name: string, note: string, messages: Msg[], expected: BedrockExpected, cutTo?: number): void {
  const parts = messages.map(encodeMessage);
  const starts: number[] = [];
  let n = 0;
  for (const p of parts) {
    starts.push(n);
    n += p.length;
  }
  let bytes = new Uint8Array(n);
  parts.forEach((p, i) => bytes.set(p, starts[i]));
  if (cutTo !== undefined) bytes = bytes.subarray(0, cutTo < 0 ? bytes.length + cutTo : cutTo);
  fixtures.push({ name, note, messages, bytes, starts, expected });
}

const P = '"p":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123"';
const ev = (event: string, payload: string): Msg => ({ event, payload });
const start = ev('messageStart', `{${P},"role":"assistant"}`);
const text = (i: number, t: string) => ev('contentBlockDelta', `{"contentBlockIndex":${i},"delta":{"text":${JSON.stringify(t)}},${P}}`);
const stop = (i: number) => ev('contentBlockStop', `{"contentBlockIndex":${i},${P}}`);
const mstop = (reason: string) => ev('messageStop', `{${P},"stopReason":"${reason}"}`);
const meta = (usage: string) => ev('metadata', `{"metrics":{"latencyMs":412},${P},"usage":${usage}}`);

add('bedrock-basic', 'text in three deltas (non-ASCII, escapes), messageStop end_turn, then metadata with the usage', [
  start, text(0, 'Grüße aus 東京 '), ev('contentBlockDelta', `{"contentBlockIndex":0,"delta":{"text":"\\ud83c\\uddef\\ud83c\\uddf5 \\"zitiert\\"\\n"},${P}}`), text(0, `e\u0301 — Ende.`), stop(0),
  mstop('end_turn'), meta('{"inputTokens":25,"outputTokens":17,"totalTokens":42}'),
], {
  text: 'Grüße aus 東京 🇯🇵 "zitiert"\ne\u0301 — Ende.', reasoning: '', status: 'done', finishReason: 'end_turn', events: 7, toolCalls: [], signatures: [],
  usage: { inputTokens: 25, outputTokens: 17, totalTokens: 42 },
});

add('bedrock-tools', 'text, then two toolUse blocks (input in fragments, the first empty; the second\'s input `{}` in one fragment), stopReason tool_use', [
  start, text(0, 'Ich sehe nach.'), stop(0),
  ev('contentBlockStart', `{"contentBlockIndex":1,${P},"start":{"toolUse":{"name":"get_weather","toolUseId":"tooluse_kZJMlvQmRJ6eAyJE5GIl7Q"}}}`),
  ev('contentBlockDelta', `{"contentBlockIndex":1,"delta":{"toolUse":{"input":""}},${P}}`),
  ev('contentBlockDelta', `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\\"city\\": \\"Zür"}},${P}}`),
  ev('contentBlockDelta', `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"ich\\", \\"days\\": [1, 2]}"}},${P}}`),
  stop(1),
  ev('contentBlockStart', `{"contentBlockIndex":2,${P},"start":{"toolUse":{"name":"list_alerts","toolUseId":"tooluse_2"}}}`),
  ev('contentBlockDelta', `{"contentBlockIndex":2,"delta":{"toolUse":{"input":"{}"}},${P}}`),
  stop(2),
  mstop('tool_use'), meta('{"inputTokens":310,"outputTokens":61,"totalTokens":371,"cacheReadInputTokens":256,"cacheWriteInputTokens":0}'),
], {
  text: 'Ich sehe nach.', reasoning: '', status: 'done', finishReason: 'tool_use', events: 13, signatures: [],
  toolCalls: [
    { index: 0, id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', name: 'get_weather', arguments: '{"city": "Zürich", "days": [1, 2]}', done: true, valid: true },
    { index: 1, id: 'tooluse_2', name: 'list_alerts', arguments: '{}', done: true, valid: true },
  ],
  usage: { inputTokens: 310, outputTokens: 61, totalTokens: 371, cacheReadInputTokens: 256, cacheWriteInputTokens: 0 },
});

// A tool with no arguments, as ConverseStream sends it: its contentBlockStart, then its
// contentBlockStop, no toolUse.input delta between them (and one ended by messageStop alone).
const toolStart = (i: number, name: string, id: string) => ev('contentBlockStart', `{"contentBlockIndex":${i},${P},"start":{"toolUse":{"name":"${name}","toolUseId":"${id}"}}}`);
add('bedrock-tools-no-input', 'text, a toolUse block with no input delta at all, one with input, and one with no input that messageStop ends: each call with no input has `{}`', [
  start, text(0, 'Einen Moment.'), stop(0),
  toolStart(1, 'list_alerts', 'tooluse_Qm3RYvUXTd2vH0nAe9hLpw'), stop(1),
  toolStart(2, 'get_weather', 'tooluse_7bK2'),
  ev('contentBlockDelta', `{"contentBlockIndex":2,"delta":{"toolUse":{"input":"{\\"city\\":\\"Oslo\\"}"}},${P}}`),
  stop(2),
  toolStart(3, 'get_time', 'tooluse_8cL3'),
  mstop('tool_use'), meta('{"inputTokens":120,"outputTokens":44,"totalTokens":164}'),
], {
  text: 'Einen Moment.', reasoning: '', status: 'done', finishReason: 'tool_use', events: 11, signatures: [],
  toolCalls: [
    { index: 0, id: 'tooluse_Qm3RYvUXTd2vH0nAe9hLpw', name: 'list_alerts', arguments: '{}', done: true, valid: true },
    { index: 1, id: 'tooluse_7bK2', name: 'get_weather', arguments: '{"city":"Oslo"}', done: true, valid: true },
    { index: 2, id: 'tooluse_8cL3', name: 'get_time', arguments: '{}', done: true, valid: true },
  ],
  usage: { inputTokens: 120, outputTokens: 44, totalTokens: 164 },
});

add('bedrock-reasoning', 'reasoningContent text and its signature, a redacted block, then the answer', [
  start,
  ev('contentBlockDelta', `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"The user wants "}},${P}}`),
  ev('contentBlockDelta', `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"a haiku."}},${P}}`),
  ev('contentBlockDelta', `{"contentBlockIndex":0,"delta":{"reasoningContent":{"signature":"EqoBCkgIARABGAIiQL2v"}},${P}}`),
  stop(0),
  ev('contentBlockDelta', `{"contentBlockIndex":1,"delta":{"reasoningContent":{"redactedContent":"RXJyb3IgcmVkYWN0ZWQ="}},${P}}`),
  stop(1),
  text(2, '古池や\n蛙飛び込む\n水の音'), stop(2),
  mstop('end_turn'), meta('{"inputTokens":12,"outputTokens":80,"totalTokens":92}'),
], {
  text: '古池や\n蛙飛び込む\n水の音', reasoning: 'The user wants a haiku.', status: 'done', finishReason: 'end_turn', events: 11, toolCalls: [],
  signatures: ['EqoBCkgIARABGAIiQL2v', 'RXJyb3IgcmVkYWN0ZWQ='], usage: { inputTokens: 12, outputTokens: 80, totalTokens: 92 },
});

{
  const msgs: Msg[] = [start, text(0, 'Der Anfang, '), text(0, 'und dann'), { exception: 'throttlingException', payload: '{"message":"Too many requests, please wait before trying again."}' }];
  const at = msgs.slice(0, 3).reduce((n, m) => n + encodeMessage(m).length, 0);
  add('bedrock-throttling', 'text, then a throttlingException message: ERR_PROVIDER at its first byte', msgs, {
    text: 'Der Anfang, und dann', reasoning: '', status: 'failed', events: 3, toolCalls: [], signatures: [],
    error: { code: 'ERR_PROVIDER', offset: at, message: 'Too many requests' },
  });
}

{
  const msgs: Msg[] = [start, { exception: 'modelStreamErrorException', payload: '{"message":"Model stream error: the model produced invalid output","originalStatusCode":424}' }];
  add('bedrock-model-error', 'a modelStreamErrorException before any text', msgs, {
    text: '', reasoning: '', status: 'failed', events: 1, toolCalls: [], signatures: [],
    error: { code: 'ERR_PROVIDER', offset: encodeMessage(start).length, message: 'invalid output' },
  });
}

add('bedrock-guardrail', 'a prompt a guardrail blocked: the guardrail\'s message as the text, stopReason guardrail_intervened, metadata with its trace', [
  start, text(0, 'Sorry, I can\'t help with that.'), stop(0), mstop('guardrail_intervened'),
  ev('metadata', `{"metrics":{"latencyMs":95},${P},"trace":{"guardrail":{"inputAssessment":{"gr-1":{"contentPolicy":{"filters":[{"action":"BLOCKED","confidence":"HIGH","type":"VIOLENCE"}]}}}}},"usage":{"inputTokens":12,"outputTokens":0,"totalTokens":12}}`),
], {
  text: 'Sorry, I can\'t help with that.', reasoning: '', status: 'done', finishReason: 'guardrail_intervened', events: 5, toolCalls: [], signatures: [],
  usage: { inputTokens: 12, outputTokens: 0, totalTokens: 12 },
});

{
  const msgs: Msg[] = [start, text(0, 'Ein Satz, '), text(0, 'der nie endet 👩‍💻'), stop(0)];
  const whole = msgs.reduce((n, m) => n + encodeMessage(m).length, 0);
  add('bedrock-truncated', 'every message whole, no messageStop: truncated at the end', msgs, {
    text: 'Ein Satz, der nie endet 👩‍💻', reasoning: '', status: 'truncated', events: 4, toolCalls: [], signatures: [],
    error: { code: 'ERR_STREAM_TRUNCATED', offset: whole },
  });
  const cutMsgs: Msg[] = [start, text(0, 'Bis hier'), text(0, ' und nicht weiter'), mstop('end_turn')];
  const before = cutMsgs.slice(0, 2).reduce((n, m) => n + encodeMessage(m).length, 0);
  const cutAt = before + 30;
  add('bedrock-cut-in-frame', 'the connection drops inside a message: that message never arrived, truncated at the end', cutMsgs, {
    text: 'Bis hier', reasoning: '', status: 'truncated', events: 2, toolCalls: [], signatures: [],
    error: { code: 'ERR_STREAM_TRUNCATED', offset: cutAt },
  }, cutAt);
}

add('bedrock-exception-after-stop', 'messageStop, then an internalServerException, then the metadata: the stream stays done, with the usage', [
  start, text(0, 'Fertig.'), stop(0), mstop('end_turn'),
  { exception: 'internalServerException', payload: '{"message":"The server encountered an error processing the request."}' },
  meta('{"inputTokens":9,"outputTokens":3,"totalTokens":12}'),
], {
  text: 'Fertig.', reasoning: '', status: 'done', finishReason: 'end_turn', events: 5, toolCalls: [], signatures: [],
  usage: { inputTokens: 9, outputTokens: 3, totalTokens: 12 },
});

{
  // after messageStop, damage to the framing still fails the stream: it is not a message
  const msgs: Msg[] = [start, text(0, 'Fertig.'), mstop('end_turn')];
  const bad = encodeMessage(meta('{"inputTokens":9,"outputTokens":3,"totalTokens":12}')).slice();
  bad[bad.length - 10] ^= 0x20;
  const at = msgs.reduce((n, m) => n + encodeMessage(m).length, 0);
  add('bedrock-bad-crc-after-stop', 'messageStop, then a metadata message whose payload changed in transit: ERR_CRC_MISMATCH at its first byte', [...msgs, { raw: bad }], {
    text: 'Fertig.', reasoning: '', status: 'failed', finishReason: 'end_turn', events: 3, toolCalls: [], signatures: [],
    error: { code: 'ERR_CRC_MISMATCH', offset: at },
  });
}

{
  // a message whose payload CRC is damaged (a byte of its payload changed in transit)
  const msgs: Msg[] = [start, text(0, 'Gut'), text(0, 'so')];
  const bad = encodeMessage(msgs[2]).slice();
  bad[bad.length - 10] ^= 0x20;
  const at = encodeMessage(start).length + encodeMessage(msgs[1]).length;
  add('bedrock-bad-crc', 'a byte of the third message changed: ERR_CRC_MISMATCH at its first byte, the text before it delivered', [start, msgs[1], { raw: bad }], {
    text: 'Gut', reasoning: '', status: 'failed', events: 2, toolCalls: [], signatures: [],
    error: { code: 'ERR_CRC_MISMATCH', offset: at },
  });
}

export const BEDROCK_FIXTURES: readonly BedrockFixture[] = fixtures;

/**
 * Bedrock's Claude through ConverseStream: a signed thinking block, a redacted one, the text, then a
 * call (with AWS's `p` padding), completed with its usage. Not among BEDROCK_FIXTURES (no reference
 * reading): the gateway's whole answers and the Converse bodies' tests read it.
 */
const PAD = '"p":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123"';
const said = (event: string, payload: string): Msg => ({ event, payload });
export const BEDROCK_THINKING_CALL: readonly Msg[] = [
  said('messageStart', `{${PAD},"role":"assistant"}`),
  said('contentBlockDelta', `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"Paris: "}},${PAD}}`),
  said('contentBlockDelta', `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"look it up, \\"now\\"."}},${PAD}}`),
  said('contentBlockDelta', `{"contentBlockIndex":0,"delta":{"reasoningContent":{"signature":"ErUBCkYIBRgCIkCsig+/="}},${PAD}}`),
  said('contentBlockStop', `{"contentBlockIndex":0,${PAD}}`),
  said('contentBlockDelta', `{"contentBlockIndex":1,"delta":{"reasoningContent":{"redactedContent":"UmVkYWN0ZWQ="}},${PAD}}`),
  said('contentBlockStop', `{"contentBlockIndex":1,${PAD}}`),
  said('contentBlockDelta', `{"contentBlockIndex":2,"delta":{"text":"Je regarde. 🌦"},${PAD}}`),
  said('contentBlockStop', `{"contentBlockIndex":2,${PAD}}`),
  said('contentBlockStart', `{"contentBlockIndex":3,${PAD},"start":{"toolUse":{"name":"weather","toolUseId":"tooluse_W1"}}}`),
  said('contentBlockDelta', `{"contentBlockIndex":3,"delta":{"toolUse":{"input":"{\\"city\\":\\"Paris\\"}"}},${PAD}}`),
  said('contentBlockStop', `{"contentBlockIndex":3,${PAD}}`),
  said('messageStop', `{${PAD},"stopReason":"tool_use"}`),
  said('metadata', `{"metrics":{"latencyMs":300},${PAD},"usage":{"inputTokens":40,"outputTokens":22,"totalTokens":62,"cacheReadInputTokens":8}}`),
];
