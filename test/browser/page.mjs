// Runs in the browser page (plain JS, served as is): exercises the ESM build.
export async function run() {
  const m = await import('/dist/index.js');
  const text = 'data: {"delta":"cafe\u0301 世界 👩‍💻 🇯🇵 क्ष"}\r\n\r\n: ping\n\nevent: done\ndata: [DONE]\r\r';
  const bytes = new TextEncoder().encode(text);
  const cuts = [];
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  let utf8Ok = true;
  let sseOk = true;
  const whole = new m.SseParser().push(bytes);
  for (let k = 0; k < 200; k++) {
    const pieces = [];
    for (let i = 0; i < bytes.length;) {
      const n = 1 + Math.floor(rnd() * 12);
      pieces.push(bytes.subarray(i, i + n));
      i += n;
    }
    const d = new m.Utf8Decoder();
    const td = new TextDecoder();
    let a = '';
    let b = '';
    for (const p of pieces) {
      a += d.push(p);
      b += td.decode(p, { stream: true });
    }
    if (a + d.flush() !== b + td.decode()) utf8Ok = false;
    const p = new m.SseParser();
    const evs = pieces.flatMap((x) => p.push(x)).concat(p.flush());
    if (JSON.stringify(evs) !== JSON.stringify(whole)) sseOk = false;
    cuts.push(String(pieces.length));
  }
  // reads long and short (the long ones decoded by TextDecoder, the short ones by the core, a
  // character cut between them completed on either side), and a bad byte after each kind of read
  const long = new TextEncoder().encode('cafe\u0301 世界 👩‍💻 🇯🇵 क्ष, plain words of text; '.repeat(150));
  const longText = new TextDecoder().decode(long);
  let mixedReads = 0;
  for (let k = 0; k < 60; k++) {
    const d = new m.Utf8Decoder();
    let a = '';
    for (let i = 0; i < long.length;) {
      const n = 1 + Math.floor(rnd() * (k % 2 === 0 ? 600 : 160));
      a += d.push(long.subarray(i, i + n));
      i += n;
    }
    if (a + d.flush() === longText) mixedReads++;
  }
  const badAfter = [];
  for (const before of [20, 300]) {
    const b = long.slice(0, 2000);
    const at = new TextEncoder().encode(longText.slice(0, before + 100)).length;
    b[at] = 0xff;
    const d = new m.Utf8Decoder();
    let got = '';
    try {
      got += d.push(b.subarray(0, before));
      got += d.push(b.subarray(before));
    } catch (e) {
      badAfter.push({ code: e.code, offset: e.offset, whole: got + e.text === new TextDecoder().decode(b.subarray(0, at)), at });
    }
  }
  let bad = null;
  try {
    new m.Utf8Decoder().push(new Uint8Array([0x41, 0xed, 0xa0, 0x80]));
  } catch (e) {
    bad = { code: e.code, offset: e.offset };
  }
  let spanning = null;
  const sd = new m.Utf8Decoder();
  const first = sd.push(new Uint8Array([0x41, 0x42, 0xe4, 0xb8]));
  try {
    sd.push(new Uint8Array([0x43]));
  } catch (e) {
    spanning = { first, code: e.code, offset: e.offset, text: e.text, pending: sd.pendingBytes };
  }
  const lenient = new m.Utf8Decoder({ fatal: false }).decode(new Uint8Array([0x41, 0xf0, 0x9f, 0x42, 0xff]));
  const asm = new m.TextAssembler();
  asm.push('cafe');
  asm.push('\u0301 👩');
  asm.push('‍💻');
  const report = asm.finish();
  // The raw mode's kept text, taken out of the core by this browser's route (a UTF-16
  // TextDecoder for long pieces), with lone surrogates that JSON escapes wrote.
  const enc = new TextEncoder();
  const lone = 'a'.repeat(300) + 'x\ud800y' + 'z'.repeat(300) + '\udc00' + '中'.repeat(120) + '\ud83d';
  const rawStream = new m.ModelStream({ format: 'openai', raw: true });
  let pushed = '';
  for (let i = 0; i < lone.length; i += 100) {
    pushed += rawStream.push(enc.encode(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: lone.slice(i, i + 100) } }] })}\n\n`));
  }
  pushed += rawStream.push(enc.encode('data: [DONE]\n\n'));
  const kept = rawStream.finish();
  // An upstream body that errors halfway through an event, piped through SseRelayStream: the
  // client's stream ends with the relay's abort() event (the browser calls the transformer's
  // cancel) instead of erroring.
  const ev = (content) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] })}\n\n`;
  const reads = [enc.encode(ev('Hel') + ev('lo ')), enc.encode(ev('wörld').slice(0, 40))];
  const upstream = new ReadableStream({
    start(c) {
      for (const r of reads) c.enqueue(r);
      setTimeout(() => c.error(new Error('connection reset')), 10);
    },
  });
  const relayStream = new m.SseRelayStream({ from: 'openai' });
  const got = [];
  let errored = null;
  try {
    for await (const chunk of upstream.pipeThrough(relayStream)) got.push(...chunk);
  } catch (e) {
    errored = String(e && e.message);
  }
  // whether this browser calls a transformer's cancel (the Streams standard's since 2023) when
  // the readable side is cancelled, and when the writable side is aborted
  const calls = async (side) => {
    let called = false;
    const ts = new TransformStream({ cancel() { called = true; } });
    await (side === 'readable' ? ts.readable.cancel('gone') : ts.writable.abort('broke')).catch(() => {});
    return called;
  };
  const transformerCancel = { readable: await calls('readable'), writable: await calls('writable') };
  const ref = new m.SseRelay({ from: 'openai' });
  const before = [];
  for (const r of reads) before.push(...ref.push(r));
  const want = before.concat(...ref.abort({ message: 'the upstream connection broke before the stream\'s completion: the answer is cut short', kind: 'server', code: 'ERR_STREAM_TRUNCATED' }));
  // ModelTextStream's report settles when the upstream errors, and when the reader cancels (then
  // the upstream is cancelled too, with the reader's reason)
  const settled = (p) => Promise.race([
    p.then((r) => `resolved ${r.status}`, (e) => `rejected ${String(e?.message ?? e)}`),
    new Promise((resolve) => setTimeout(() => resolve('pending'), 2000)),
  ]);
  const textStream = new m.ModelTextStream({ format: 'openai' });
  let relayedText = '';
  let textError = null;
  try {
    const body = new ReadableStream({ start(c) { c.enqueue(reads[0]); setTimeout(() => c.error(new Error('connection reset')), 10); } });
    for await (const t of body.pipeThrough(textStream)) relayedText += t;
  } catch (e) {
    textError = String(e?.message ?? e);
  }
  let sourceCancelled = null;
  const left = new m.ModelTextStream({ format: 'openai' });
  const leftReader = new ReadableStream({ start(c) { c.enqueue(reads[0]); }, cancel(reason) { sourceCancelled = String(reason); } })
    .pipeThrough(left).getReader();
  const firstText = (await leftReader.read()).value;
  await leftReader.cancel('stop pressed');
  const leftReport = await settled(left.report);
  await new Promise((resolve) => setTimeout(resolve, 20));
  const model = {
    text: relayedText, textError, report: await settled(textStream.report), status: textStream.model.status,
    firstText, leftReport, leftStatus: left.model.status, sourceCancelled,
  };
  // ModelPartStream: an Anthropic turn a read an event, its parts in order
  const turn = [
    ['message_start', { message: { id: 'm', type: 'message', role: 'assistant', content: [], model: 'c', usage: { input_tokens: 3, output_tokens: 1 } } }],
    ['content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }],
    ['content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Hm.' } }],
    ['content_block_stop', { index: 0 }],
    ['content_block_start', { index: 1, content_block: { type: 'text', text: '' } }],
    ['content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Café' } }],
    ['content_block_stop', { index: 1 }],
    ['content_block_start', { index: 2, content_block: { type: 'tool_use', id: 't1', name: 'w', input: {} } }],
    ['content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } }],
    ['content_block_stop', { index: 2 }],
    ['message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 4 } }],
    ['message_stop', {}],
  ].map(([type, data]) => enc.encode(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`));
  const parts = [];
  const partStream = new m.ModelPartStream({ format: 'anthropic' });
  for await (const p of new ReadableStream({ start(c) { for (const r of turn) c.enqueue(r); c.close(); } }).pipeThrough(partStream)) {
    parts.push(p.type === 'finish' ? `finish ${p.report.status} ${p.report.finishReason}` : p.type === 'tool-call' ? `tool-call ${p.call.name} ${p.delta} ${p.call.done}` : `${p.type} ${p.text}`);
  }
  parts.push(`report ${(await partStream.report).text}`);
  // the same turn in one read: its events' parts in their order, the same
  const partsWhole = [];
  const wholeTurn = new Uint8Array(turn.reduce((n, r) => n + r.length, 0));
  turn.reduce((at, r) => (wholeTurn.set(r, at), at + r.length), 0);
  const wholeStream = new m.ModelPartStream({ format: 'anthropic' });
  for await (const p of new ReadableStream({ start(c) { c.enqueue(wholeTurn); c.close(); } }).pipeThrough(wholeStream)) {
    partsWhole.push(p.type === 'finish' ? `finish ${p.report.status} ${p.report.finishReason}` : p.type === 'tool-call' ? `tool-call ${p.call.name} ${p.delta} ${p.call.done}` : `${p.type} ${p.text}`);
  }
  partsWhole.push(`report ${(await wholeStream.report).text}`);
  const equal = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  return {
    parts,
    partsWhole,
    lone: { same: pushed === lone, kept: kept.text === pushed, units: kept.text.length },
    transformerCancel,
    model,
    drop: { errored, same: equal(got, want), sameBefore: equal(got, before), upstreamError: String(relayStream.upstreamError && relayStream.upstreamError.message), status: relayStream.relay?.status ?? null, tail: new TextDecoder().decode(new Uint8Array(got.slice(-160))) },
    backend: m.wasmBackend(), utf8Ok, sseOk, whole, bad, spanning, lenient, mixedReads, badAfter,
    lenientOracle: new TextDecoder().decode(new Uint8Array([0x41, 0xf0, 0x9f, 0x42, 0xff])),
    report: { text: report.text, graphemes: report.graphemes, sha256: report.sha256 },
    hasBuffer: typeof (globalThis).Buffer !== 'undefined',
    // what core/strings.ts's jsEngine() reads (SSE data whole in Firefox, in pieces in Chromium):
    // a native InternalError in SpiderMonkey only
    spiderMonkey: typeof (globalThis).InternalError === 'function' && Function.prototype.toString.call(globalThis.InternalError).includes('[native code]'),
  };
    }
