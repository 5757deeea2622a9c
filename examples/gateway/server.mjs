// A reference gateway: an OpenAI-compatible `POST /v1/chat/completions` and an Anthropic-compatible
// `POST /v1/messages` in front of one upstream (`--upstream-format`: OpenAI Chat Completions,
// OpenAI Responses, Anthropic Messages, Ollama, a ddg-style line stream, Gemini, Bedrock Converse,
// or Claude on Bedrock's InvokeModel, bedrock-invoke; Bedrock's two signed with SigV4): a server on
// Node's `http` module, reading its upstream with its own HTTP/1.1 client (./upstream.mjs: one
// 'data' per socket read, not one per HTTP chunk; http or https). The upstream's bytes go through
// seam's SseRelay: whole, validated events are written to the client in its own API (byte for
// byte from an upstream of that API, written anew as `chat.completion.chunk`s or Anthropic's
// events from the others), its completion (`data: [DONE]`, `message_stop`) only after the
// upstream's own and an SSE error event otherwise; a whole answer (`stream: false`) in its API
// too. Around it: upstream HTTP errors with their status and message, backpressure (the upstream
// read pauses while the client's buffer is full), limits on streams and buffered bytes, client
// keys, keep-alive comments and Prometheus metrics (prom-client).
//
//   node examples/gateway/server.mjs --port 0 --upstream http://127.0.0.1:8080 --upstream-format anthropic
//
// In-process: `const gw = createGateway({ upstream, upstreamFormat }); const url = await gw.listen(0);`
//
// This file: what the gateway offers to import, and its command's start. Its folder server/, a
// file per job: gateway.mjs, createGateway (the server, its admission of requests, listen and
// close); stream.mjs, one request and its upstream request; relay.mjs, a streamed answer;
// whole-answer.mjs, a whole one (`stream: false`); budget.mjs, the bytes the streams hold;
// clock.mjs, their timeouts and keep-alive comments; connections.mjs, the connection caps;
// keys.mjs, the client keys; replies.mjs, what the gateway answers itself in the client's
// dialect; read-body.mjs; metrics.mjs; options.mjs (DEFAULTS); command.mjs, the command line.
// Beside it, requests/ (the upstream's request, from the client's) and upstream.mjs (its client
// for the upstream).
import { pathToFileURL } from 'node:url';
import { main } from './server/command.mjs';

export { createGateway } from './server/gateway.mjs';
export { DEFAULTS } from './server/options.mjs';
export { isLoopback } from './server/keys.mjs';
export { parseArgs } from './server/command.mjs';
export { upstreamRequest, chatFromMessages, RequestError, GatewayConfigError } from './requests/index.mjs';

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main(process.argv.slice(2), process.env);
