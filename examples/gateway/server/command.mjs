// The gateway's command, `node examples/gateway/server.mjs --port … --upstream …` (server.mjs runs
// main): its usage (USAGE), its arguments and environment as createGateway's options (parseArgs),
// and main, which starts a gateway with them and closes it on SIGTERM or SIGINT.
import { readFileSync } from 'node:fs';
import { MODEL_FORMATS } from 'seam-stream';
import { createGateway } from './gateway.mjs';

const USAGE = `usage: node examples/gateway/server.mjs --port <n> --upstream <base-url>
  [--host ADDRESS]  (127.0.0.1; beyond loopback only with --api-key, or --allow-no-keys)
  [--upstream-format ${MODEL_FORMATS.join('|')}]
  [--openai-max-tokens-field max_completion_tokens|max_tokens]  (an Anthropic client's max_tokens to an openai upstream)
  [--anthropic-max-tokens N]  (the max_tokens of a request that names none, to anthropic or bedrock-invoke: 4096)
  [--responses-summary auto|concise|detailed|none]  (the reasoning summary asked of openai-responses: none for an unverified organization)
  [--api-key KEY]... [--api-key-file FILE]  (also SEAM_GATEWAY_API_KEYS: keys separated by commas or white space)
  [--upstream-key KEY] [--upstream-key-file FILE]  (also SEAM_GATEWAY_UPSTREAM_KEY)
  [--keepalive SECONDS] [--upstream-timeout MS] [--body-timeout MS] [--client-timeout MS] [--max-duration MS]
  [--head-timeout MS]  (a request's head: 10000, within --client-timeout)
  [--request-body-timeout MS] [--min-request-rate BYTES]  (a request's body: 5000 ms from its head, plus a second per 16384 bytes)
  [--min-response-rate BYTES]  (a second, over each --client-timeout, that a client behind on its answer must take: 1024; 0: none)
  [--drain-timeout MS]  (on SIGTERM or SIGINT: how long the streams in flight may finish: 10000)
  [--max-streams N] [--max-pending-bytes N] [--max-event-bytes N] [--max-request-bytes N] [--max-response-bytes N]
  [--high-water-mark N] [--max-connections N] [--max-connections-per-address N]
  [--metrics-port N] [--metrics-host ADDRESS] [--no-metrics]`;

/** Keys in a text (a file, an environment variable): separated by commas, white space or lines; `#` starts a comment line. */
const keysIn = (text) => text.split('\n').filter((l) => !l.trim().startsWith('#')).join('\n').split(/[\s,]+/).filter(Boolean);

/** An option's number: refused, as the usage, where the value is empty (Number('') is 0) or not a number. */
function numberOf(a, value) {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new TypeError(`${a} needs a number, not ${JSON.stringify(value)}\n${USAGE}`);
  return n;
}

/** The command's options of a number, and of a string, with createGateway's names for them. */
const numbers = {
  '--keepalive': 'keepalive', '--max-streams': 'maxStreams', '--max-pending-bytes': 'maxPendingBytes', '--max-event-bytes': 'maxEventBytes',
  '--max-request-bytes': 'maxRequestBytes', '--max-response-bytes': 'maxResponseBytes', '--high-water-mark': 'highWaterMark',
  '--upstream-timeout': 'upstreamTimeout', '--body-timeout': 'bodyTimeout', '--client-timeout': 'clientTimeout', '--max-duration': 'maxDuration',
  '--head-timeout': 'headTimeout', '--request-body-timeout': 'requestBodyTimeout', '--min-request-rate': 'minRequestRate', '--min-response-rate': 'minResponseRate',
  '--drain-timeout': 'drainTimeout', '--max-connections': 'maxConnections', '--max-connections-per-address': 'maxConnectionsPerAddress', '--metrics-port': 'metricsPort',
  '--anthropic-max-tokens': 'anthropicMaxTokens',
};
const strings = {
  '--upstream': 'upstream', '--upstream-format': 'upstreamFormat', '--upstream-key': 'upstreamKey', '--metrics-host': 'metricsHost',
  '--openai-max-tokens-field': 'openaiMaxTokensField', '--responses-summary': 'responsesSummary',
};
/** createGateway's option names → the command's. */
const flags = new Map(Object.entries({ ...numbers, ...strings }).map(([flag, name]) => [name, flag]));

/** A refusal of createGateway's (`createGateway: NAME must …`) in the command's words: the option as it was given. */
function inCommandWords(message) {
  const m = /^createGateway: (\w+) /.exec(message);
  return m !== null && flags.has(m[1]) ? `${flags.get(m[1])}: ${message.slice('createGateway: '.length)}` : message;
}

/**
 * The command's arguments as createGateway's options, with its port and host. `env` gives the
 * environment variables (SEAM_GATEWAY_API_KEYS, SEAM_GATEWAY_UPSTREAM_KEY).
 */
export function parseArgs(argv, env = {}) {
  const options = {};
  const apiKeys = [];
  let port = 0;
  let host = '127.0.0.1';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--no-metrics') { options.metrics = false; continue; }
    if (a === '--allow-no-keys') { options.allowNoKeys = true; continue; }
    if (a === '--help' || a === '-h') return { help: true };
    const value = argv[++i];
    if (value === undefined) throw new TypeError(`${a} needs a value\n${USAGE}`);
    if (a === '--port') port = numberOf(a, value);
    else if (a === '--host') host = value;
    else if (a === '--api-key') apiKeys.push(value);
    else if (a === '--api-key-file') apiKeys.push(...keysIn(readFileSync(value, 'latin1')));
    else if (a === '--upstream-key-file') options.upstreamKey = readFileSync(value, 'latin1').trim();
    else if (numbers[a]) options[numbers[a]] = numberOf(a, value);
    else if (strings[a]) options[strings[a]] = value;
    else throw new TypeError(`unknown argument ${a}\n${USAGE}`);
  }
  if (env.SEAM_GATEWAY_API_KEYS) apiKeys.push(...keysIn(env.SEAM_GATEWAY_API_KEYS));
  if (options.upstreamKey === undefined && env.SEAM_GATEWAY_UPSTREAM_KEY) options.upstreamKey = env.SEAM_GATEWAY_UPSTREAM_KEY.trim();
  if (apiKeys.length) options.apiKeys = apiKeys;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError(`--port must be 0..65535\n${USAGE}`);
  return { port, host, options };
}

/**
 * The command: a gateway from the arguments `argv` and the environment `env`, listening until a
 * SIGTERM or SIGINT closes it; its URL (and its metrics') printed once it listens. A gateway that
 * cannot start exits 2 with the reason (a wrong argument's with USAGE).
 */
export async function main(argv, env) {
  let args;
  let gw;
  try {
    args = parseArgs(argv, env);
    if (args.help) { console.log(USAGE); process.exit(0); }
    if (!args.options.upstream) throw new TypeError(`--upstream is required\n${USAGE}`);
    gw = createGateway(args.options);
    const url = await gw.listen(args.port, args.host);
    // (the signals are caught before the line a supervisor waits for is printed; the first drains
    // the gateway, up to --drain-timeout, and a second one, its handler gone, stops the process at once)
    const stop = (signal) => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      console.error(`gateway: ${signal}: draining (new requests refused; the streams in flight have up to ${gw.options.drainTimeout} ms; a second signal stops at once)`);
      return gw.close().then(() => process.exit(0));
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    console.log(`listening ${url}`);
    if (gw.metricsUrl) console.log(`metrics ${gw.metricsUrl}/metrics`);
  } catch (e) {
    console.error(inCommandWords(e.message));
    process.exit(2);
  }
}
