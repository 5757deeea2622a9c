// A reference gateway: an OpenAI-compatible `POST /v1/chat/completions` in front of one upstream
// (OpenAI Chat Completions, OpenAI Responses, Anthropic Messages, Ollama or a ddg-style line
// stream): a server on Node's `http` module, reading its upstream with its own HTTP/1.1 client
// (./upstream.mjs: one 'data' per socket read, not one per HTTP chunk; http or https). The
// upstream's bytes go through seam's SseRelay: whole,
// validated events are written to the client (byte for byte from an OpenAI upstream, translated
// to `chat.completion.chunk`s from the others), `data: [DONE]` only after the upstream's own
// completion and an SSE error event otherwise. Around it: upstream HTTP errors with their status
// and message, backpressure (the upstream read pauses while the client's buffer is full), limits
// on streams and buffered bytes, keep-alive comments and Prometheus metrics (prom-client).
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
