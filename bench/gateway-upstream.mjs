// The load benchmark's upstream (a child process of bench/gateway.mjs): an OpenAI-shaped Chat
// Completions stream per request, its shape named by the request's `model`:
//   `<regime>:<events>:<seed>` with regime
//   - event: one event per write, as fast as the connection takes them (the write waits for drain);
//   - cut:   the same bytes in writes cut at random sizes (1 byte to two events, seeded);
//   - paced: one event per write every 10 ms (token speed);
//   - idle:  one event, then nothing until the connection closes (for memory per idle stream);
// Each event carries `"t":<µs>` (process.hrtime, the same clock in every process), written when
// the event is made (0 with seed 0: the bytes every gateway must write, compared before timing), so
// that a client can tell its latency; the stream ends with a finish chunk and
// `data: [DONE]`.
import http from 'node:http';

/** Delta texts: English, Chinese, emoji sequences, accents and escapes (JSON-escaped once). */
const TEXTS = [
  'The model streams its answer ', 'token by token, ', '每个事件都是一小段文本，', '包括中文标点。', 'Emoji: 👩‍💻 and 🇯🇵 ',
  'caf\u0065\u0301 déjà vu, ', 'a "quoted" word\n', 'back\\slash and tab\t', 'ünïcödé ', '🙏🏽🚀✨ ', 'さらに日本語も。', 'done? not yet; ',
].map((s) => JSON.stringify(s));

const clock = () => Number(process.hrtime.bigint() / 1000n);
const event = (i, t) => `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1754300000,"model":"gpt-4o-mini","system_fingerprint":"fp_bench","choices":[{"index":0,"delta":{"content":${TEXTS[i % TEXTS.length]}},"logprobs":null,"finish_reason":null}],"t":${t}}\n\n`;
const END = 'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1754300000,"model":"gpt-4o-mini","system_fingerprint":"fp_bench","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"t":0}\n\ndata: [DONE]\n\n';

/** xorshift32: the cut sizes of a seed. */
function cuts(seed) {
  let x = seed | 1;
  return () => {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

const drain = (res) => new Promise((resolve) => {
  const go = () => {
    res.off('drain', go);
    res.off('close', go);
    resolve();
  };
  res.on('drain', go);
  res.on('close', go);
});
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function play(res, regime, events, seed) {
  const now = seed === 0 ? () => 0 : clock;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (regime === 'idle') {
    res.write(event(0, now()));
    return; // until the client (the gateway) closes the connection
  }
  if (regime === 'cut') {
    const r = cuts(seed);
    let pending = Buffer.alloc(0);
    let i = 0; // events made; events + 1 once the end is
    while (!res.destroyed && (i <= events || pending.length)) {
      const size = 1 + Math.floor(r() * 600);
      const more = [pending];
      let n = pending.length;
      for (; n < size && i <= events; i++) {
        const b = Buffer.from(i < events ? event(i, now()) : END);
        more.push(b);
        n += b.length;
      }
      if (more.length > 1) pending = Buffer.concat(more);
      const piece = pending.subarray(0, size);
      pending = pending.subarray(size);
      if (!res.write(piece)) await drain(res);
    }
    return void res.end();
  }
  for (let i = 0; i < events && !res.destroyed; i++) {
    if (!res.write(event(i, now()))) await drain(res);
    if (regime === 'paced') await sleep(10);
  }
  res.end(END);
}

const server = http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (s) => { body += s; });
  req.on('end', () => {
    const [regime, events, seed] = String(JSON.parse(body).model).split(':');
    play(res, regime, Number(events), Number(seed)).catch(() => res.destroy());
  });
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('disconnect', () => process.exit(0));
