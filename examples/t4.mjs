import http from 'node:http';
import v8 from 'node:v8';
import { createGateway } from './gateway/server.mjs';
const up = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.write('data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'); }); });
await new Promise((r) => up.listen(0, '127.0.0.1', r));
const gw = createGateway({ upstream: `http://127.0.0.1:${up.address().port}` });
const url = new URL(await gw.listen(0));
function agg() {
  gc(); gc();
  const snap = JSON.parse(v8.getHeapSnapshot().read().toString());
  return null;
}
async function snapshot() {
  gc(); gc();
  const chunks = [];
  for await (const c of v8.getHeapSnapshot()) chunks.push(c);
  const s = JSON.parse(Buffer.concat(chunks).toString());
  const f = s.snapshot.meta.node_fields; const nf = f.length;
  const types = s.snapshot.meta.node_types[0];
  const ti = f.indexOf('type'), ni = f.indexOf('name'), si = f.indexOf('self_size');
  const m = new Map();
  for (let i = 0; i < s.nodes.length; i += nf) {
    const t = types[s.nodes[i + ti]];
    const name = t === 'object' || t === 'closure' ? `${t}:${s.strings[s.nodes[i + ni]]}` : t;
    const e = m.get(name) ?? [0, 0]; e[0]++; e[1] += s.nodes[i + si]; m.set(name, e);
  }
  return m;
}
const N = 300;
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
const before = await snapshot();
const reqs = [];
await Promise.all(Array.from({ length: N }, () => new Promise((resolve) => {
  const body = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'Bench' }] });
  const req = http.request({ host: url.hostname, port: url.port, path: '/v1/chat/completions', method: 'POST', agent, headers: { 'content-length': body.length } }, (res) => res.once('data', resolve));
  req.on('error', () => {}); req.end(body); reqs.push(req);
})));
const after = await snapshot();
const d = [];
for (const [k, [c, sz]] of after) { const [c0, s0] = before.get(k) ?? [0, 0]; d.push([k, (c - c0) / N, (sz - s0) / N]); }
d.sort((a, b) => b[2] - a[2]);
let tot = 0; for (const x of d) tot += x[2];
console.log('total per stream', tot.toFixed(0), 'B; this process holds both the gateway and the upstream and the clients');
for (const x of d.slice(0, 40)) console.log(x[2].toFixed(0).padStart(6), x[1].toFixed(2).padStart(6), x[0]);
process.exit(0);
