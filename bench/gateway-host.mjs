// One gateway of the load benchmark in its own process (a child of bench/gateway.mjs), reporting
// its own CPU time and memory over IPC:
//   node --expose-gc bench/gateway-host.mjs <kind> <upstream-url> [<checkout, for seam-base>]
// kinds: seam (examples/gateway/server.mjs as it ships, metrics on), seam-nometrics (the same with
// --no-metrics, to measure prom-client's cost), seam-base (the gateway of the checkout named by a
// third argument, built: a change against the build before it), and the gateways people write, on the same
// node:http plumbing (request parsed and written again, backpressure, abort on close):
//   json:  TextDecoder + eventsource-parser + JSON.parse + JSON.stringify + TextEncoder per event;
//   plain: TextDecoder + eventsource-parser, `data: ${data}\n\n` + TextEncoder per event (no JSON);
//   raw:   the upstream's reads forwarded as they are (no parsing: the ceiling on node:http);
//   rawtick: the same, with the reads of one tick written as one (what seam's gateway does with
//          its relay's output), to show how much of seam's speed is that coalescing alone;
//   rawsock: raw forwarding through seam's gateway's own upstream client (one read of the
//          upstream socket, its chunk framing taken out, per write): the ceiling of that design;
//   rawundici: raw forwarding through undici's dispatcher (a Pool, `dispatch` with onResponseData
//          views, one per HTTP chunk), the chunks of one tick written as one: the same ceiling on
//          undici, to tell whether the gateway's own client earns its place.
// seam's gateway runs without a cap on connections per address: the load client is one address.
import { EventEmitter } from 'node:events';
import http from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createGateway } from '../examples/gateway/server.mjs';
import { requestUpstream } from '../examples/gateway/upstream.mjs';
import { ssePeer, undiciPeer } from './peer-versions.mjs';

// (the peers' current releases where this Node's engines allow them)
const { createParser } = await import(ssePeer);
const { Pool } = await import(undiciPeer);

const [kind, upstream] = process.argv.slice(2);
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
const target = new URL(upstream);

/** The upstream request of the gateways people write: `http.request`, one 'data' per HTTP chunk. */
function viaHttp(body, answered, failed) {
  const upReq = http.request({ hostname: target.hostname, port: target.port, path: '/v1/chat/completions', method: 'POST', agent,
    headers: { 'content-type': 'application/json', 'content-length': body.length } }, answered);
  upReq.on('error', failed);
  upReq.end(body);
  return upReq;
}

/** The same through seam's gateway's own upstream client (examples/gateway/upstream.mjs): one 'data' per socket read. */
function viaSocket(body, answered, failed) {
  const upReq = requestUpstream({ hostname: target.hostname, port: Number(target.port), path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body });
  upReq.response.then(answered, failed);
  return upReq;
}

/**
 * The same through undici's dispatcher: a Pool (a connection per request, closed after it, as the
 * others), its answer handed over as a response-like emitter (statusCode, 'data' per HTTP chunk,
 * 'end', 'error', pause(), resume()).
 */
let pool = null;
function viaUndici(body, answered, failed) {
  pool ??= new Pool(target.origin, { connections: null, pipelining: 1, maxHeaderSize: 64 * 1024, headersTimeout: 60_000, bodyTimeout: 300_000 });
  const res = new EventEmitter();
  let controller = null;
  let aborted = false;
  res.pause = () => controller?.pause();
  res.resume = () => controller?.resume();
  pool.dispatch({ path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(body.length) }, body, reset: true }, {
    onRequestStart(c) { controller = c; if (aborted) c.abort(new Error('aborted')); },
    onResponseStart(_c, statusCode) {
      if (statusCode < 200) return;
      res.statusCode = statusCode;
      answered(res);
    },
    onResponseData(_c, chunk) { res.emit('data', chunk); },
    onResponseEnd() { res.emit('end'); },
    onResponseError(_c, err) { if (res.statusCode) res.emit('error', err); else failed(err); },
  });
  return { destroy() { aborted = true; controller?.abort(new Error('aborted')); } };
}

/**
 * The peers' proxy: `makeTransform(write)` returns the function that handles one upstream read;
 * `request` sends the upstream request (viaHttp unless given).
 */
function peer(makeTransform, request = viaHttp) {
  return http.createServer((req, res) => {
    const parts = [];
    req.on('data', (b) => parts.push(b));
    req.on('end', () => {
      const body = Buffer.from(JSON.stringify(JSON.parse(Buffer.concat(parts).toString('utf8'))));
      const upReq = request(body, (upRes) => {
        res.writeHead(upRes.statusCode, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
        res.flushHeaders();
        let paused = false;
        const write = (bytes) => {
          if (!res.write(bytes) && !paused) {
            paused = true;
            upRes.pause();
            res.once('drain', () => { paused = false; upRes.resume(); });
          }
        };
        upRes.on('data', makeTransform(write));
        // (the end can come in the tick of the last data, as undici's and Node 24's do: it waits for that tick's write, queued first)
        upRes.on('end', () => process.nextTick(() => res.end()));
        upRes.on('error', () => res.destroy());
      }, () => res.destroy());
      res.on('close', () => { if (!res.writableFinished) upReq.destroy(); });
    });
  });
}

const encoder = new TextEncoder();
const framed = (toBytes) => (write) => {
  const decoder = new TextDecoder();
  const parser = createParser({ onEvent: (e) => write(toBytes(e.data)) });
  return (chunk) => parser.feed(decoder.decode(chunk, { stream: true }));
};

/** The reads (or chunks) of one tick written as one (what seam's gateway does with its relay's output). */
function perTick(write) {
  const parts = [];
  let bytes = 0;
  const take = () => {
    const b = parts.length === 1 ? parts[0] : Buffer.concat(parts, bytes);
    parts.length = 0;
    bytes = 0;
    write(b);
  };
  return (chunk) => {
    if (parts.length === 0) process.nextTick(take); // (before the response's 'end', which is queued after it)
    parts.push(chunk);
    bytes += chunk.length;
  };
}

const kinds = {
  json: () => peer(framed((d) => encoder.encode(d === '[DONE]' ? 'data: [DONE]\n\n' : `data: ${JSON.stringify(JSON.parse(d))}\n\n`))),
  plain: () => peer(framed((d) => encoder.encode(`data: ${d}\n\n`))),
  raw: () => peer((write) => write),
  // raw forwarding through seam's gateway's own upstream client: each socket read of the
  // upstream, its chunk framing taken out, written as it is
  rawsock: () => peer((write) => write, viaSocket),
  rawtick: () => peer(perTick),
  rawundici: () => peer(perTick, viaUndici),
};

let listening;
if (kind === 'seam-base') {
  // the gateway of another checkout (its own build): the change against the build before it
  const { createGateway: baseGateway } = await import(pathToFileURL(join(process.argv[4], 'examples', 'gateway', 'server.mjs')).href);
  const gw = baseGateway({ upstream });
  listening = gw.listen(0).then((url) => Number(new URL(url).port));
} else if (kind === 'seam' || kind === 'seam-nometrics') {
  const gw = createGateway({ upstream, metrics: kind === 'seam', maxConnectionsPerAddress: 0 });
  listening = gw.listen(0).then((url) => Number(new URL(url).port));
} else {
  const server = kinds[kind]();
  listening = new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

process.on('message', (msg) => {
  if (msg.cmd === 'usage') {
    if (msg.gc && globalThis.gc) { globalThis.gc(); globalThis.gc(); }
    process.send({ id: msg.id, cpu: process.cpuUsage(), mem: process.memoryUsage() });
  }
});
process.on('disconnect', () => process.exit(0));
listening.then((port) => process.send({ port }));
