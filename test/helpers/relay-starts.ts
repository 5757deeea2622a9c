// The starts of two short streams, whole events: an OpenAI chat.completion.chunk and an Anthropic
// message up to its first text delta, both of the text 'Hé ', and OpenAI's end; for the tests of
// how a relay ends (test/unit/relay-abort.test.ts, and the official clients' reading in relay.test.ts).

export const OPENAI_HI = 'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hé "},"finish_reason":null}]}\n\n';
export const OPENAI_END = 'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';
export const ANTHROPIC_HI = 'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}\n\n'
  + 'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
  + 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hé "}}\n\n';
