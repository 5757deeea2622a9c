// ModelStream on one stream of each format, read whole and in pieces: exact text, status and fields.
// (The recorded-shape fixtures and every-cutting checks are in model.test.ts.)
import { it, expect } from 'vitest';
import { createHash } from 'node:crypto';
import { MODEL_FORMATS, ModelEventReader, ModelStream, ModelStreamError, SseRelay, TextRangeError, coreMemoryUsed, describeFormat } from '../../bindings/index.js';
import { BEDROCK_FIXTURES, encodeMessage } from '../helpers/bedrock-fixtures.js';
import { KEPT_TEXTS, readKept } from '../helpers/kept-text.js';
import { FIXTURES } from '../helpers/model-fixtures.js';
import { cut } from '../helpers/random.js';
const enc = (s: string) => new TextEncoder().encode(s);
it('each format: text (NFC and raw), status, finish reason, usage, reasoning and errors, at several read sizes', () => {
  const ev = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  let s = ': keep-alive\n\n';
  const deltas = ['Hel', 'lo ', 'wörld ', 'cafe\u0301', ' 👩\u200d', '💻', ' "q" \\ \n'];
  for (const d of deltas) s += ev({ id: 'x', choices: [{ index: 0, delta: { content: d }, finish_reason: null }] });
  s += ev({ id: 'x', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
  s += ev({ id: 'x', choices: [], usage: { prompt_tokens: 3, completion_tokens: 7 } });
  s += 'data: [DONE]\n\n';
  const bytes = enc(s);
  for (const step of [bytes.length, 1, 7, 64]) {
    const m = new ModelStream({ format: 'openai' });
    let out = '';
    for (let i = 0; i < bytes.length; i += step) out += m.push(bytes.subarray(i, i + step));
    out += m.flush();
    expect(out).toBe(deltas.join('').normalize('NFC'));
    expect([m.status, m.finishReason, m.usage]).toEqual(['done', 'stop', { prompt_tokens: 3, completion_tokens: 7 }]);
    const r = m.finish();
    expect(r.events).toBe(10);
    const raw = new ModelStream({ format: 'openai', raw: true });
    let o2 = '';
    for (let i = 0; i < bytes.length; i += step) o2 += raw.push(bytes.subarray(i, i + step));
    o2 += raw.flush();
    expect(o2).toBe(deltas.join(''));
  }
  // anthropic
  const a = (t: string, d: unknown) => `event: ${t}\ndata: ${JSON.stringify(d)}\n\n`;
  let as = a('message_start', { type: 'message_start', message: { usage: { input_tokens: 5, output_tokens: 1 } } });
  as += a('ping', { type: 'ping' });
  for (const d of deltas) as += a('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: d } });
  as += a('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } });
  as += a('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } });
  as += a('message_stop', { type: 'message_stop' });
  const am = new ModelStream({ format: 'anthropic' });
  let ao = '';
  const ab = enc(as);
  for (let i = 0; i < ab.length; i += 5) ao += am.push(ab.subarray(i, i + 5));
  ao += am.flush();
  expect(ao).toBe(deltas.join('').normalize('NFC'));
  expect([am.status, am.finishReason, am.usage, am.reasoning]).toEqual(['done', 'end_turn', { input_tokens: 5, output_tokens: 9 }, 'hmm']);
  // truncated
  const t = new ModelStream({ format: 'openai' });
  t.push(enc(ev({ choices: [{ index: 0, delta: { content: 'abc' } }] })));
  let err: unknown;
  try { t.flush(); } catch (e) { err = e; }
  expect(err).toBeInstanceOf(ModelStreamError);
  expect((err as ModelStreamError).code).toBe('ERR_STREAM_TRUNCATED');
  // bad json
  const b = new ModelStream({ format: 'openai' });
  try { b.push(enc('data: {"a":1,}\n\n')); } catch (e) { err = e; }
  expect([(err as ModelStreamError).code, (err as ModelStreamError).offset]).toEqual(['ERR_BAD_EVENT', 13]);
  // error body
  const eb = new ModelStream({ format: 'openai' });
  eb.push(enc('{"error":{"message":"Invalid API key","type":"invalid_request_error"}}'));
  try { eb.flush(); } catch (e) { err = e; }
  expect([(err as ModelStreamError).code, (err as ModelStreamError).providerMessage]).toEqual(['ERR_PROVIDER', 'Invalid API key']);
  // ollama
  const ol = new ModelStream({ format: 'ollama' });
  let oo = ol.push(enc('{"message":{"role":"assistant","content":"Hi "}}\n{"message":{"content":"there"},"done":false}\n'));
  oo += ol.push(enc('{"message":{"content":""},"done":true,"done_reason":"stop","eval_count":5}'));
  oo += ol.flush();
  expect([oo, ol.status, ol.finishReason, ol.usage]).toEqual(['Hi there', 'done', 'stop', { eval_count: 5 }]);
  // ddg
  const dd = new ModelStream({ format: 'ddg' });
  let dout = dd.push(enc('data: {"message":"Hey"}\r\ndata: {"content":" you"}\r\n[DONE]\r\n'));
  dout += dd.flush();
  expect([dout, dd.status]).toEqual(['Hey you', 'done']);
});

it('streams interleaved on the shared core never see each other\'s bytes', () => {
  const next = (() => { let a = 7; return () => ((a = (a * 1103515245 + 12345) >>> 0) / 2 ** 32); })();
  const ev = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  const streams = Array.from({ length: 60 }, (_, i) => {
    const format = (['openai', 'anthropic', 'ollama', 'ddg'] as const)[i % 4];
    const deltas = Array.from({ length: 30 }, (_, k) => `<${i}:${k}>é世😀 `);
    let s = '';
    if (format === 'openai') s = deltas.map((d) => ev({ choices: [{ index: 0, delta: { content: d } }] })).join('') + 'data: [DONE]\n\n';
    else if (format === 'anthropic') s = deltas.map((d) => `event: content_block_delta\n${ev({ type: 'content_block_delta', delta: { type: 'text_delta', text: d } })}`).join('') + `event: message_stop\n${ev({ type: 'message_stop' })}`;
    else if (format === 'ollama') s = deltas.map((d) => JSON.stringify({ message: { content: d }, done: false }) + '\n').join('') + '{"done":true}\n';
    else s = deltas.map((d) => `data: ${JSON.stringify({ message: d })}\n`).join('') + '[DONE]\n';
    const bytes = enc(s);
    const pieces: Uint8Array[] = [];
    for (let at = 0; at < bytes.length;) { const n = 1 + Math.floor(next() * 40); pieces.push(bytes.subarray(at, at + n)); at += n; }
    return { m: new ModelStream({ format }), pieces, next: 0, text: '', want: deltas.join('').normalize('NFC') };
  });
  let live = streams.length;
  while (live > 0) {
    for (const s of streams) {
      if (s.next > s.pieces.length) continue;
      if (s.next === s.pieces.length) { s.text += s.m.flush(); s.next++; live--; continue; }
      s.text += s.m.push(s.pieces[s.next++]);
    }
  }
  for (const s of streams) {
    expect(s.text).toBe(s.want);
    expect(s.m.status).toBe('done');
  }
});

it('hostile input: memory stays bounded and the errors are typed', () => {
  const MiB = 1 << 20;
  // 64 MiB of '[' as an SSE stream: a line that is no field is never buffered
  const m = new ModelStream({ format: 'openai', eof: 'allow' });
  const bracket = new Uint8Array(MiB).fill(0x5b);
  for (let i = 0; i < 64; i++) m.push(bracket);
  expect(m.retainedBytes).toBeLessThan(4096);
  expect(m.flush()).toBe('');
  expect(m.status).toBe('truncated');
  // the same as an NDJSON line: the line limit, with the offset of the line
  const o = new ModelStream({ format: 'ollama', maxEventBytes: 4 * MiB });
  let err: unknown;
  try { for (let i = 0; i < 8; i++) o.push(bracket); } catch (e) { err = e; }
  expect(err).toBeInstanceOf(ModelStreamError);
  expect([(err as ModelStreamError).code, (err as ModelStreamError).offset]).toEqual(['ERR_EVENT_TOO_LARGE', 0]);
  expect(o.retainedBytes).toBeLessThan(4096);
  // nesting past the reader's limit (512) in one event
  const d = new ModelStream({ format: 'openai' });
  try { d.push(enc(`data: ${'['.repeat(600)}${']'.repeat(600)}\n\n`)); } catch (e) { err = e; }
  expect([(err as ModelStreamError).code, (err as ModelStreamError).offset]).toEqual(['ERR_BAD_EVENT', 6 + 512]);
  expect((err as Error).message).toContain('nested too deep');
  // a string value of 20 MiB in one event: over the default 16 MiB event limit
  const big = new ModelStream({ format: 'openai' });
  const head = enc('data: {"choices":[{"index":0,"delta":{"content":"');
  try { big.push(head); for (let i = 0; i < 20; i++) big.push(new Uint8Array(MiB).fill(0x61)); } catch (e) { err = e; }
  expect((err as ModelStreamError).code).toBe('ERR_EVENT_TOO_LARGE');
  expect(big.retainedBytes).toBeLessThan(4096);
  // a million tiny events: nothing grows per event but the raw text kept for the report (two
  // bytes a unit, in the core), which the end of the stream gives back
  const t = new ModelStream({ format: 'openai', raw: true, eof: 'allow' });
  const tiny = enc('data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'.repeat(1000));
  let n = 0;
  for (let i = 0; i < 1000; i++) n += t.push(tiny).length;
  expect(n).toBe(1_000_000);
  expect(t.retainedBytes).toBeGreaterThanOrEqual(2_000_000);
  expect(t.retainedBytes).toBeLessThan(4096 + 2 * 2_000_000);
  t.flush();
  expect(t.retainedBytes).toBeLessThan(4096);
  expect(t.finish().text).toBe('x'.repeat(1_000_000));
});

it('a large event\'s scratch blocks (its document, its text) go back to the core after it is read', () => {
  const before = coreMemoryUsed();
  const m = new ModelStream({ format: 'openai', raw: true });
  const content = 'é'.repeat(2 << 20); // 4 MiB of UTF-8, larger than the output window
  const text = m.push(enc(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\ndata: [DONE]\n\n`));
  expect(text).toBe(content);
  // what the core holds beyond the stream's own record and buffers: no scratch kept
  expect(coreMemoryUsed() - before - m.retainedBytes).toBeLessThan(64 * 1024);
  m.dispose();
});

it('events larger than the output window, back to back with small ones, at several read sizes: every text exactly once, in order', () => {
  const parts: string[] = [];
  let body = '';
  for (let i = 0; i < 6; i++) {
    const t = i % 2 === 0 ? `${i}${'ü€'.repeat(40_000 + i * 999)}` : `small ${i} "q"`;
    parts.push(t);
    body += `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: t } }] })}\n\n`;
  }
  body += 'data: [DONE]\n\n';
  const bytes = enc(body);
  for (const step of [bytes.length, 65_536, 70_001, 4_093]) {
    const m = new ModelStream({ format: 'openai', raw: true });
    let out = '';
    for (let i = 0; i < bytes.length; i += step) out += m.push(bytes.subarray(i, i + step));
    out += m.flush();
    expect(out === parts.join(''), `read size ${step}`).toBe(true);
    expect(m.status).toBe('done');
  }
});

it('the core holds nothing for a relay or a model stream between calls, also after an event larger than its static areas fails', () => {
  const before = coreMemoryUsed();
  const big = 'ü'.repeat(300_000); // text and relayed bytes larger than the static areas
  const ok = enc(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: big } }] })}\n\n`);
  const m = new ModelStream({ format: 'openai', raw: true });
  expect(m.push(ok)).toBe(big);
  expect(coreMemoryUsed() - before - m.retainedBytes).toBe(0);
  const bad = enc(`data: {"choices":[{"index":0,"delta":{"content":"${big}"}}]\n\n`); // one } short
  expect(() => m.push(bad)).toThrow(ModelStreamError);
  expect(coreMemoryUsed() - before - m.retainedBytes).toBe(0);
  m.dispose();
  expect(coreMemoryUsed()).toBe(before);
});

it('finish() gives the report without flush(), and never throws, also when the end finds a JSON body that is not valid or an error body', () => {
  const before = coreMemoryUsed();
  for (const format of ['openai', 'anthropic', 'gemini', 'openai-responses'] as const) {
    for (const [body, code, status] of [
      ['{"error": {"message": "x"', 'ERR_BAD_EVENT', 'failed'],
      ['{"error": {"message": "overloaded", "type": "overloaded_error"}}', 'ERR_PROVIDER', 'failed'],
      ['{"error": {"message": "x"}} trailing', 'ERR_BAD_EVENT', 'failed'],
    ] as const) {
      // flush() throws the error; finish() alone gives the same report
      const flushed = new ModelStream({ format });
      expect(flushed.push(enc(body))).toBe('');
      let err: unknown;
      try { flushed.flush(); } catch (e) { err = e; }
      expect([(err as ModelStreamError).code, flushed.status], `${format}: ${body}`).toEqual([code, status]);
      const want = flushed.finish();
      const m = new ModelStream({ format });
      m.push(enc(body));
      const r = m.finish();
      expect([r.status, r.text, r.sha256], `${format}: ${body}`).toEqual([status, '', want.sha256]);
      expect(m.finish().status).toBe(status); // (asked again: the same)
    }
  }
  expect(coreMemoryUsed()).toBe(before);
});

it('a relay or a model stream that ended gives its record back without dispose(), and reset() makes a new one', () => {
  const ev = (t: string, d: unknown) => `event: ${t}\ndata: ${JSON.stringify(d)}\n\n`;
  const turn = enc(ev('message_start', { type: 'message_start', message: { id: 'msg_1', role: 'assistant', content: [], usage: { input_tokens: 3 } } })
    + ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })
    + ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi é' } })
    + ev('content_block_stop', { type: 'content_block_stop', index: 0 })
    + ev('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } })
    + ev('message_stop', { type: 'message_stop' }));
  const before = coreMemoryUsed();
  // (all kept reachable: without the end giving records back, 200 of them would be held)
  const relays: SseRelay[] = [];
  const streams: ModelStream[] = [];
  for (let i = 0; i < 100; i++) {
    const r = new SseRelay({ from: 'anthropic', id: 'chatcmpl-1', model: 'm' });
    relays.push(r);
    r.push(turn);
    r.flush();
    const m = new ModelStream({ format: 'anthropic' });
    streams.push(m);
    expect(m.push(turn) + m.flush()).toBe('Hi é');
    expect(m.finish().status).toBe('done');
  }
  expect(coreMemoryUsed()).toBe(before);
  expect(relays[0].retainedBytes + streams[0].retainedBytes).toBe(0);
  // a new stream on each: the same output as a new relay or stream
  const fresh = new SseRelay({ from: 'anthropic', id: 'chatcmpl-1', model: 'm' });
  const text = (a: Uint8Array, b: Uint8Array) => (new TextDecoder().decode(a) + new TextDecoder().decode(b)).replace(/"created":\d+/g, '"created":0');
  const want = text(fresh.push(turn), fresh.flush());
  expect(want).toContain('"content":"Hi é"');
  const r = relays[0];
  r.reset();
  expect(r.status).toBe('open');
  expect(text(r.push(turn), r.flush())).toBe(want);
  const m = streams[0];
  m.reset();
  expect(m.push(turn) + m.flush()).toBe('Hi é');
  expect(m.finish().status).toBe('done');
  expect(coreMemoryUsed()).toBe(before);
  // Bedrock: the event stream framer's record goes back with the stream's own
  const msg = (type: string, payload: unknown) => encodeMessage({ event: type, payload: JSON.stringify(payload) });
  const converse = new Uint8Array([...msg('messageStart', { role: 'assistant' }), ...msg('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi é' } }),
    ...msg('contentBlockStop', { contentBlockIndex: 0 }), ...msg('messageStop', { stopReason: 'end_turn' }),
    ...msg('metadata', { usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 }, metrics: { latencyMs: 4 } })]);
  const bedrock: ModelStream[] = [];
  for (let i = 0; i < 50; i++) {
    const b = new ModelStream({ format: 'bedrock' });
    bedrock.push(b);
    expect(b.push(converse) + b.flush()).toBe('Hi é');
    const r2 = new SseRelay({ from: 'bedrock', id: 'chatcmpl-1', model: 'm' });
    relays.push(r2);
    expect(new TextDecoder().decode(r2.push(converse))).toContain('"content":"Hi é"');
    r2.flush();
  }
  expect(coreMemoryUsed()).toBe(before);
  bedrock[0].reset();
  expect(bedrock[0].push(converse.subarray(0, 40)) + bedrock[0].push(converse.subarray(40)) + bedrock[0].flush()).toBe('Hi é');
  expect(coreMemoryUsed()).toBe(before);
  // ... and so does one cut short (its flush throws ERR_STREAM_TRUNCATED), inside a message or between two
  for (const at of [40, converse.length - msg('metadata', { usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 }, metrics: { latencyMs: 4 } }).length - msg('messageStop', { stopReason: 'end_turn' }).length]) {
    for (const eof of ['error', 'allow'] as const) {
      const b = new ModelStream({ format: 'bedrock', eof });
      bedrock.push(b);
      const text = b.push(converse.subarray(0, at));
      let err: unknown;
      try { b.flush(); } catch (e) { err = e; }
      expect([text, (err as ModelStreamError | undefined)?.code, b.status, b.finish().status]).toEqual([at === 40 ? '' : 'Hi ', eof === 'error' ? 'ERR_STREAM_TRUNCATED' : undefined, 'truncated', 'truncated']);
      expect(coreMemoryUsed(), `cut at ${at}, eof ${eof}`).toBe(before);
    }
  }
  // a disposed one stays disposed, also after its end
  m.dispose();
  expect(() => m.reset()).not.toThrow();
  expect(() => m.push(turn)).toThrow(/disposed/);
});

it('a stream keeps the shape of its last text delta from its second one on, bounded, and gives it back at its end, on a failure and on reset()', () => {
  const ev = (content: string, id = 'chatcmpl-1') => enc(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`);
  // (not strict: the raw text is kept in JS, not in the core, so that retainedBytes is the shape's)
  const m = new ModelStream({ format: 'openai', raw: true, fatal: false });
  const idle = m.retainedBytes;
  expect(m.push(ev('a'))).toBe('a');
  expect(m.retainedBytes).toBe(idle); // one delta: no shape yet (a stream idle after its first delta holds none)
  expect(m.push(ev('b'))).toBe('b');
  const shaped = m.retainedBytes;
  const size = ev('b').length;
  expect(shaped).toBeGreaterThan(idle);
  expect(shaped - idle).toBeLessThan(size + 64); // about the event's size: the bytes between its values
  // read by the shape: the text, an ID of another length, escapes, and the bytes that follow the text
  expect(m.push(ev('c "\\ é', 'chatcmpl-much-longer-id'))).toBe('c "\\ é');
  expect(m.push(ev('"},"logprobs":null}]}'))).toBe('"},"logprobs":null}]}');
  expect(m.retainedBytes).toBe(shaped);
  // a large event gets no shape; the one kept stays
  expect(m.push(ev('x'.repeat(2000)))).toBe('x'.repeat(2000));
  expect(m.retainedBytes).toBe(shaped);
  m.push(enc('data: [DONE]\n\n'));
  m.flush();
  expect(m.retainedBytes).toBe(0); // the end of the stream gives it all back, its record too
  expect(() => m.push(ev('c'))).toThrow(/ended with flush\(\) or finish\(\); reset\(\) starts a new one/);
  expect(m.finish().text).toBe(`ab${'c "\\ é'}"},"logprobs":null}]}${'x'.repeat(2000)}`);
  // a failure gives it back
  m.reset();
  m.push(ev('a'));
  m.push(ev('b'));
  expect(m.retainedBytes).toBe(shaped);
  expect(() => m.push(enc('data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"\\q"}}]}\n\n'))).toThrow(ModelStreamError);
  expect(m.retainedBytes).toBe(0); // its record too: reset() makes a new one
  // so does reset()
  m.reset();
  m.push(ev('a'));
  m.push(ev('b'));
  expect(m.retainedBytes).toBe(shaped);
  m.reset();
  expect(m.retainedBytes).toBe(idle);
});

it('the raw mode keeps its text for the report in the core: counted in retainedBytes, given back at the end, on a failure, on reset() and by dispose()', () => {
  const ev = (content: string) => enc(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`);
  // escapes, non-ASCII, a surrogate pair split between two deltas (each half a lone escape), long ASCII
  const parts = ['a', 'é "q"', '\\', '\ud83d', '\ude00', 'x'.repeat(40), '中文'];
  const all = parts.join('');
  const before = coreMemoryUsed();
  for (const fatal of [true, false]) {
    const m = new ModelStream({ format: 'openai', raw: true, fatal });
    const idle = m.retainedBytes;
    let out = '';
    for (const p of parts) out += m.push(ev(p));
    expect(out).toBe(all);
    if (fatal) expect(m.retainedBytes - idle).toBeGreaterThanOrEqual(2 * all.length); // the units, in the core
    m.push(enc('data: [DONE]\n\n'));
    const r = m.finish();
    expect([r.status, r.text, r.utf16Units, r.sha256]).toEqual(['done', all, all.length, createHash('sha256').update(all).digest('hex')]);
    expect(m.finish().text).toBe(all); // (asked again: the same)
    expect(m.retainedBytes).toBeLessThanOrEqual(idle);
    // a failure: the report has the text before it, and the core's copy is given back
    m.reset();
    m.push(ev('ab'));
    m.push(ev('c'));
    expect(() => m.push(enc('data: {"choices":[{"index":0,"delta":{"content":"\\q"}}]}\n\n'))).toThrow(ModelStreamError);
    expect(m.retainedBytes).toBeLessThanOrEqual(idle);
    expect([m.finish().status, m.finish().text]).toEqual(['failed', 'abc']);
    // reset() and dispose() give it back
    m.reset();
    m.push(ev('ab'));
    m.push(ev('c'));
    m.reset();
    expect(m.retainedBytes).toBeLessThanOrEqual(idle);
    m.push(ev('ab'));
    m.dispose();
  }
  expect(coreMemoryUsed()).toBe(before);
});

it('the raw mode bounds the text it keeps by maxTextBytes: the stream stops at the event that would pass it, the report keeps the text before', () => {
  const ev = (content: string) => enc(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`);
  for (const fatal of [true, false]) {
    const m = new ModelStream({ format: 'openai', raw: true, fatal, maxTextBytes: 10 });
    expect(m.push(ev('12345'))).toBe('12345');
    const second = ev('é\\'); // 3 bytes: 8
    expect(m.push(second)).toBe('é\\');
    let err: unknown;
    try { m.push(ev('中')); } catch (e) { err = e; } // 3 more: 11
    const at = ev('12345').length + second.length + 'data: '.length;
    expect(err).toBeInstanceOf(ModelStreamError);
    expect([(err as ModelStreamError).code, (err as ModelStreamError).offset, (err as ModelStreamError).text]).toEqual(['ERR_TEXT_TOO_LONG', at, '']);
    expect((err as Error).message).toBe(`The text of the event at byte offset ${at} would pass maxTextBytes (10 bytes, 8 committed); the stream stops before it`);
    expect(m.status).toBe('failed');
    expect(() => m.push(ev('x'))).toThrow(ModelStreamError); // failed until reset()
    expect(m.finish().text).toBe('12345é\\');
    expect(m.retainedBytes).toBeLessThan(4096);
    m.dispose();
  }
  expect(() => new ModelStream({ format: 'openai', raw: true, maxTextBytes: 0 })).toThrow('ModelStream: maxTextBytes must be a positive integer number of bytes or Infinity, got 0');
});

it('maxTextBytes stops the stream at the event whose text passes it, whatever the reads: its offset, the text before it, the report', () => {
  const ev = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;
  const events = ['Hello', ' wörld', ' café', ' 👩\u200d💻', ' and', ' more', ' text', ' here'].map(ev);
  const all = enc(events.join('') + 'data: [DONE]\n\n');
  const starts: number[] = [];
  let o = 0;
  for (const e of events) { starts.push(o + 'data: '.length); o += enc(e).length; }
  const outcome = (chunks: Uint8Array[], options: { raw?: boolean; maxTextBytes: number; normalize?: false }) => {
    const m = new ModelStream({ format: 'openai', ...options });
    let text = '';
    let error: [string, number, string] | null = null;
    try {
      for (const c of chunks) text += m.push(c);
      text += m.flush();
    } catch (e) {
      if (!(e instanceof ModelStreamError)) throw e;
      error = [e.code, e.offset, e.message];
      text += e.text;
    }
    const r = m.finish();
    return { text, error, status: r.status, report: r.text, bytes: r.utf8Bytes };
  };
  starts.push(o + 'data: '.length); // [DONE]
  // the text's bytes after each event: 5, 12, 18, 30, 34, 39, 44, 49. With the text layer the last
  // cluster waits for the next event: after each event 4, 11, 16, 19, 33, 38, 43, 48, and 49 at [DONE]
  const cases: [number, boolean, string, number][] = [
    // limit, raw, the text, the event that stops the stream (8: the completion)
    [11, true, 'Hello', 1], [12, true, 'Hello wörld', 2], [29, true, 'Hello wörld café', 3], [48, true, 'Hello wörld café 👩\u200d💻 and more text', 7],
    [11, false, 'Hello wörl', 2], [17, false, 'Hello wörld caf', 3], [29, false, 'Hello wörld café ', 4], [48, false, 'Hello wörld café 👩\u200d💻 and more text her', 8],
  ];
  for (const [max, raw, want, stopsAt] of cases) {
    const whole = outcome([all], { raw, maxTextBytes: max });
    const where = `maxTextBytes ${max}, raw ${raw}`;
    const lead = stopsAt === 8 ? 'The text held back until the completion' : 'The text of the event';
    const committed = raw ? [5, 12, 18, 30, 34, 39, 44][stopsAt - 1] : [4, 11, 16, 19, 33, 38, 43, 48][stopsAt - 1];
    expect(whole.error, where).toEqual(['ERR_TEXT_TOO_LONG', starts[stopsAt],
      `${lead} at byte offset ${starts[stopsAt]} would pass maxTextBytes (${max} bytes, ${committed} committed); the stream stops before it`]);
    expect([whole.text, whole.status, whole.report, whole.bytes], where).toEqual([want, 'failed', want, enc(want).length]);
    for (const chunks of [events.map(enc).concat([enc('data: [DONE]\n\n')]), cut(all, [7, 60, 61, 200]), Array.from(all, (_, i) => all.subarray(i, i + 1))]) {
      expect(outcome(chunks, { raw, maxTextBytes: max }), where).toEqual(whole);
    }
  }
  expect(outcome([all], { maxTextBytes: 49 })).toMatchObject({ error: null, status: 'done', bytes: 49 });
  // the end without a completion: the text held back passes it at the stream's end
  const cutShort = enc(events.slice(0, 7).join(''));
  for (const chunks of [[cutShort], Array.from(cutShort, (_, i) => cutShort.subarray(i, i + 1))]) {
    expect(outcome(chunks, { maxTextBytes: 43 })).toEqual({
      text: 'Hello wörld café 👩\u200d💻 and more tex', status: 'failed', report: 'Hello wörld café 👩\u200d💻 and more tex', bytes: 43,
      error: ['ERR_TEXT_TOO_LONG', cutShort.length, `The text held back at the stream's end (byte offset ${cutShort.length}) would pass maxTextBytes (43 bytes, 43 committed); the stream stops before it`],
    });
  }
});

it('a shape is never worth failing a push for: with no room in the core\'s budget a stream reads its deltas without one', async () => {
  const { setCoreMemoryLimit } = await import('../../bindings/index.js');
  const ev = (content: string) => enc(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`);
  const m = new ModelStream({ format: 'openai', raw: true, fatal: false }); // (its raw text kept in JS)
  const idle = m.retainedBytes;
  setCoreMemoryLimit(coreMemoryUsed() + 16); // room for nothing more
  try {
    let out = '';
    for (const t of ['a', 'b', 'c', 'd']) out += m.push(ev(t));
    expect(out).toBe('abcd');
    expect(m.retainedBytes).toBe(idle); // no shape was kept
  } finally {
    setCoreMemoryLimit(undefined);
  }
  m.push(ev('e'));
  m.push(ev('f'));
  expect(m.retainedBytes).toBeGreaterThan(idle); // with room, it learns one
  m.dispose();
});

it('the completion releases the text held back: the push that reads it returns the answer\'s end, and an error after it carries that end', () => {
  // Each format's answer ends in "e" + U+0301 (one cluster, "é" in NFC), which the text layer
  // holds back while a mark may still follow; the completion says none can.
  const sse = (o: unknown, event?: string) => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(o)}\n\n`;
  const end = 'cafe\u0301';
  const streams: [string, Uint8Array][] = [
    ['openai', enc(sse({ choices: [{ index: 0, delta: { content: end } }] }) + sse({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) + 'data: [DONE]\n\n')],
    ['openai-responses', enc(sse({ type: 'response.output_text.delta', delta: end }) + sse({ type: 'response.completed', response: { status: 'completed' } }))],
    ['anthropic', enc(sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: end } }, 'content_block_delta')
      + sse({ type: 'message_delta', delta: { stop_reason: 'end_turn' } }, 'message_delta') + sse({ type: 'message_stop' }, 'message_stop'))],
    ['gemini', enc(`data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: end }] }, finishReason: 'STOP' }] })}\r\n\r\n`)],
    ['ollama', enc(`${JSON.stringify({ message: { content: end }, done: false })}\n${JSON.stringify({ message: { content: '' }, done: true, done_reason: 'stop' })}\n`)],
    ['bedrock', concatBytes([
      encodeMessage({ event: 'contentBlockDelta', payload: JSON.stringify({ contentBlockIndex: 0, delta: { text: end } }) }),
      encodeMessage({ event: 'messageStop', payload: '{"stopReason":"end_turn"}' }),
    ])],
  ];
  const after: Record<string, Uint8Array> = { bedrock: new Uint8Array(16) }; // (a message whose lengths cannot be)
  for (const [format, bytes] of streams) {
    const bad = after[format] ?? Uint8Array.of(0x64, 0x61, 0xff, 0x0a, 0x0a); // (invalid UTF-8)
    // the completion read: its push returns everything, flush nothing
    const m = new ModelStream({ format: format as 'openai' });
    expect([m.push(bytes), m.status, m.flush()], format).toEqual(['caf\u00e9', 'done', '']);
    // damage after the completion in the same read: the error carries the answer's end
    const m2 = new ModelStream({ format: format as 'openai' });
    const e = (() => { try { m2.push(concatBytes([bytes, bad])); } catch (x) { return x; } })() as ModelStreamError;
    expect(e, format).toBeInstanceOf(ModelStreamError);
    expect([e.text, m2.finish().text], format).toEqual(['caf\u00e9', 'caf\u00e9']);
    // and in a later read: the text came with the completion
    const m3 = new ModelStream({ format: format as 'openai' });
    expect(m3.push(bytes), format).toBe('caf\u00e9');
    expect(() => m3.push(bad), format).toThrow(ModelStreamError);
    expect(m3.finish().text, format).toBe('caf\u00e9');
  }
  // an error before the completion ends the text too: it carries what was held back, as the report has it
  const failing: [string, string][] = [
    ['openai', sse({ choices: [{ index: 0, delta: { content: end } }] }) + sse({ error: { message: 'overloaded' } })],
    ['anthropic', sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: end } }) + sse({ type: 'error', error: { type: 'overloaded_error', message: 'overloaded' } })],
    ['gemini', `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: end }] } }] })}\r\n\r\ndata: {"error":{"code":500,"message":"overloaded"}}\r\n\r\n`],
    ['openai', `${sse({ choices: [{ index: 0, delta: { content: end } }] })}data: {"choices":\n\n`],
  ];
  for (const [format, s] of failing) {
    for (const cutAt of [undefined, s.indexOf('\n\n') + 2]) {
      const m = new ModelStream({ format: format as 'openai' });
      const b = enc(s);
      let out = '';
      const e = (() => { try { for (const c of cutAt === undefined ? [b] : [b.subarray(0, cutAt), b.subarray(cutAt)]) out += m.push(c); } catch (x) { return x; } })() as ModelStreamError;
      expect(e, format).toBeInstanceOf(ModelStreamError);
      expect([out + e.text, m.status, m.finish().text], `${format}: ${s}`).toEqual(['caf\u00e9', 'failed', 'caf\u00e9']);
    }
  }
});

function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

it('ModelEventReader: [DONE] ends the calls still open, as it ends them in a ModelStream', () => {
  // (Mistral sends whole calls without an index, and may end a stream without a finish reason)
  const events = [
    { choices: [{ index: 0, delta: { tool_calls: [{ id: 'a', function: { name: 'rate', arguments: '{"pair": "EUR/JPY"}' } }, { id: 'b', function: { name: 'clock', arguments: '{"tz' } }] } }] },
  ].map((e) => JSON.stringify(e));
  const m = new ModelStream({ format: 'openai' });
  m.push(enc(`${events.map((d) => `data: ${d}\n\n`).join('')}data: [DONE]\n\n`));
  const rd = new ModelEventReader({ format: 'openai' });
  for (const d of events) rd.read(d);
  expect(rd.toolCalls.map((c) => c.done)).toEqual([false, false]);
  expect(rd.read('[DONE]').done).toBe(true);
  expect(rd.toolCalls).toEqual(m.toolCalls);
  expect(rd.toolCalls.map((c) => [c.done, c.valid])).toEqual([[true, true], [true, false]]);
});

it('maxTextBytes and the text held back: the completion\'s push keeps its text, and an error stays the stream\'s', () => {
  const ev = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;
  // the held cluster would pass the limit: the completion stops the stream, with the text that fits
  const m = new ModelStream({ format: 'openai', maxTextBytes: 5 });
  expect(m.push(enc(ev('abc')))).toBe('ab');
  const e1 = (() => { try { m.push(enc(`${ev('def')}data: [DONE]\n\n`)); } catch (x) { return x; } })() as ModelStreamError;
  expect([e1 instanceof ModelStreamError, e1.code, e1.offset, e1.text, m.status]).toEqual([true, 'ERR_TEXT_TOO_LONG', enc(ev('abc') + ev('def')).length + 6, 'cde', 'failed']);
  expect(m.finish().text).toBe('abcde');
  // an error whose held text would pass the limit: the error is the stream's, without that text, and lasts
  const m2 = new ModelStream({ format: 'openai', maxTextBytes: 5 });
  expect(m2.push(enc(ev('abcde')))).toBe('abcd');
  const e = (() => { try { m2.push(enc(`${ev('f')}data: {bad\n\n`)); } catch (x) { return x; } })() as ModelStreamError;
  expect([e instanceof ModelStreamError, e.code, e.text, m2.status]).toEqual([true, 'ERR_BAD_EVENT', 'e', 'failed']);
  expect(() => m2.push(enc(ev('g')))).toThrow(ModelStreamError);
  expect(m2.finish().text).toBe('abcde');
});

it('a JSON body after a BOM or white space reads the same however the reads cut them, and its limit counts from its {', () => {
  const body = '{"error":{"message":"overloaded","type":"server_error"}}';
  for (const lead of ['\uFEFF', '\n\n', '\uFEFF \r\n']) {
    const bytes = enc(lead + body);
    for (const maxEventBytes of [undefined, enc(body).length, enc(body).length - 1]) {
      const outcome = (chunks: Uint8Array[]) => {
        const m = new ModelStream({ format: 'openai', ...(maxEventBytes === undefined ? {} : { maxEventBytes }) });
        try {
          for (const c of chunks) m.push(c);
          m.flush();
          return 'no error';
        } catch (e) {
          const x = e as ModelStreamError;
          return `${x.code} ${x.offset} ${x.providerMessage ?? ''}`;
        }
      };
      const whole = outcome([bytes]);
      expect(whole, JSON.stringify(lead)).toBe(maxEventBytes === enc(body).length - 1 ? `ERR_EVENT_TOO_LARGE ${enc(lead).length} ` : `ERR_PROVIDER ${enc(lead).length} overloaded`);
      for (let at = 1; at < bytes.length; at++) expect(outcome([bytes.subarray(0, at), bytes.subarray(at)]), `${JSON.stringify(lead)} cut at ${at}, limit ${maxEventBytes}`).toBe(whole);
    }
  }
});

it("Gemini's JSON array (streamGenerateContent without alt=sse): its error is the provider's (alone, or after chunks), its chunks the answer (cut short without a finish), another array not an event stream, at the body's offset, however the reads cut it", () => {
  const error = '[{\n  "error": {\n    "code": 429,\n    "message": "Quota exceeded",\n    "status": "RESOURCE_EXHAUSTED"\n  }\n}\n]\n';
  const chunks = '[{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"index":0}]}\r\n,\r\n{"candidates":[{"content":{"parts":[{"text":"!"}],"role":"model"},"finishReason":"STOP","index":0}]}]';
  const garbage = '[{"candidates": oops';
  const outcome = (body: string, chunked: (b: Uint8Array) => Uint8Array[]) => {
    const m = new ModelStream({ format: 'gemini' });
    let text = '';
    try {
      for (const c of chunked(enc(body))) text += m.push(c);
      text += m.flush();
      return `no error | ${text}`;
    } catch (e) {
      const x = e as ModelStreamError;
      return [x.code, x.offset, x.message, x.providerMessage, x.providerCode].join(' | ');
    }
  };
  const want: [string, string][] = [
    [error, 'ERR_PROVIDER | 0 | The provider answered with an error body: Quota exceeded (RESOURCE_EXHAUSTED) | Quota exceeded | RESOURCE_EXHAUSTED'],
    [`\uFEFF\r\n${error}`, 'ERR_PROVIDER | 5 | The provider answered with an error body: Quota exceeded (RESOURCE_EXHAUSTED) | Quota exceeded | RESOURCE_EXHAUSTED'],
    [chunks, 'no error | Hi!'],
    [`${chunks.slice(0, chunks.indexOf('\r\n,'))}]`, `ERR_STREAM_TRUNCATED | ${chunks.indexOf('\r\n,') + 1} | The stream ended without its completion (a chunk with a finishReason) after ${chunks.indexOf('\r\n,') + 1} bytes: the text is incomplete |  | `],
    ['[{"models":[]}]', 'ERR_BAD_EVENT | 0 | The gemini response is a JSON array (streamGenerateContent without alt=sse: ask for alt=sse), not an event stream |  | '],
    // (an error after chunks: the array's last element, the provider's error)
    [`${chunks.slice(0, chunks.indexOf('\r\n,'))}\r\n,\r\n${error.slice(1)}`, 'ERR_PROVIDER | 0 | The provider answered with an error body: Quota exceeded (RESOURCE_EXHAUSTED) | Quota exceeded | RESOURCE_EXHAUSTED'],
    [` ${garbage}`, 'ERR_BAD_EVENT | 1 | The gemini response, from byte offset 1, is neither an event stream nor valid JSON |  | '],
  ];
  for (const [body, expected] of want) {
    expect(outcome(body, (b) => [b])).toBe(expected);
    for (let at = 1; at < enc(body).length; at++) expect(outcome(body, (b) => cut(b, [at])), `cut at ${at}`).toBe(expected);
  }
  // (the note is the format's, for code around a stream: the command's check says it too)
  expect(MODEL_FORMATS.map((f) => [f, describeFormat(f).arrayBody, describeFormat(f).arrayBodyNote]).filter(([, a, n]) => a || n !== undefined))
    .toEqual([['gemini', true, 'streamGenerateContent without alt=sse: ask for alt=sse']]);
});

it('finish() gives the report when the text held back would pass maxTextBytes', () => {
  const m = new ModelStream({ format: 'openai', maxTextBytes: 4 });
  expect(() => m.push(enc(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'abce\u0302\u0301' } }] })}\n\ndata: [DONE]\n\n`))).toThrow(ModelStreamError);
  const r = m.finish();
  expect([r.status, r.text, r.utf8Bytes]).toEqual(['failed', 'abc', 3]);
});

it('a format that is not one is a TypeError everywhere a format is named, a name every object has too (constructor, __proto__, toString)', () => {
  const named: [string, (f: string) => unknown][] = [
    ['describeFormat', (f) => describeFormat(f as 'openai')],
    ['ModelStream', (f) => new ModelStream({ format: f as 'openai' })],
    ['ModelEventReader', (f) => new ModelEventReader({ format: f as 'openai' })],
    ['SseRelay from', (f) => new SseRelay({ from: f as 'openai' })],
    ['SseRelay to', (f) => new SseRelay({ from: 'openai', to: f as 'openai' })],
  ];
  for (const [what, make] of named) {
    for (const f of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'nope', '']) expect(() => make(f), `${what} ${f}`).toThrow(TypeError);
  }
  expect(MODEL_FORMATS.map((f) => describeFormat(f).format)).toEqual(MODEL_FORMATS);
});

it('a stream that fails gives all its core memory back at once, its record too, without dispose(); reset() reads again', () => {
  const throttled = encodeMessage({ exception: 'throttlingException', payload: '{"message":"Too many requests"}' });
  const failing = [
    ...FIXTURES.filter((f) => f.expected.status === 'failed'),
    ...BEDROCK_FIXTURES.filter((f) => f.expected.status === 'failed').map((f) => ({ ...f, format: 'bedrock' as const, choice: undefined })),
    { name: 'bedrock-invoke throttled', format: 'bedrock-invoke' as const, choice: undefined, bytes: throttled, expected: { error: { code: 'ERR_PROVIDER' } } },
  ];
  expect(new Set(failing.map((f) => f.format)).size).toBe(MODEL_FORMATS.length); // (every format has a stream that fails)
  for (const f of failing) {
    for (const raw of [false, true]) {
      for (const size of [f.bytes.length, 7, 1]) {
        const before = coreMemoryUsed();
        const m = new ModelStream({ format: f.format, choice: f.choice, raw });
        const codes: string[] = [];
        for (let round = 0; round < 2; round++) {
          let code = '';
          try {
            for (let i = 0; i < f.bytes.length; i += size) m.push(f.bytes.subarray(i, i + size));
            m.flush();
          } catch (e) {
            code = (e as ModelStreamError).code;
          }
          codes.push(code);
          expect(m.status, `${f.name} raw=${raw} reads of ${size}`).toBe('failed');
          expect(coreMemoryUsed(), `${f.name} raw=${raw} reads of ${size}`).toBe(before);
          expect(m.retainedBytes).toBe(0);
          m.reset();
        }
        expect(codes).toEqual([f.expected.error!.code, f.expected.error!.code]);
        m.dispose();
        expect(coreMemoryUsed()).toBe(before);
      }
    }
  }
});

it('MAX_LIMIT_BYTES is exported, 512 MiB: the most each byte limit of a buffer takes, and one byte more is refused', async () => {
  const lib = await import('../../bindings/index.js');
  const most = lib.MAX_LIMIT_BYTES;
  expect(most).toBe(512 * 1024 * 1024);
  const makers: [string, (n: number) => object][] = [
    ['maxLineBytes', (n) => new lib.LineDecoder({ maxLineBytes: n })],
    ['maxEventBytes', (n) => new lib.SseParser({ maxEventBytes: n })],
    ['maxMessageBytes', (n) => new lib.EventStreamDecoder({ maxMessageBytes: n })],
    ['maxEventBytes', (n) => new ModelStream({ format: 'openai', maxEventBytes: n })],
    ['maxArgumentBytes', (n) => new ModelStream({ format: 'openai', maxArgumentBytes: n })],
    ['maxReasoningBytes', (n) => new SseRelay({ from: 'anthropic', maxReasoningBytes: n })],
    ['maxMediaBytes', (n) => new ModelStream({ format: 'gemini', maxMediaBytes: n })],
    ['maxArgumentBytes', (n) => new ModelEventReader({ format: 'openai', maxArgumentBytes: n })],
  ];
  for (const [name, make] of makers) {
    (make(most) as { dispose?: () => void }).dispose?.(); // (taken; its core memory given back)
    expect(() => make(most + 1), name).toThrow(`${name} must be an integer number of bytes from 1 to 536870912 (512 MiB), got 536870913`);
  }
});

it('the model layer\'s default limits are exported with the values the README\'s limits table gives', async () => {
  const lib = await import('../../bindings/index.js');
  expect([lib.DEFAULT_MAX_ARGUMENT_BYTES, lib.DEFAULT_MAX_REASONING_BYTES, lib.DEFAULT_MAX_MEDIA_BYTES]).toEqual([16 * 1024 * 1024, 64 * 1024 * 1024, 64 * 1024 * 1024]);
  // (a stream given no limit keeps reasoning past the argument's default: its own is the larger one)
  const m = new ModelStream({ format: 'anthropic', raw: true });
  const piece = 'x'.repeat(9 * 1024 * 1024); // (two of them: past 16 MiB, each event within maxEventBytes)
  m.push(enc('event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}\n\n'));
  const delta = enc(`event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"${piece}"}}\n\n`);
  m.push(delta);
  m.push(delta);
  expect(m.reasoning.length).toBe(2 * piece.length);
  m.dispose();
});

it('choice is an integer from 0 to 2^31 - 1, the most the core follows: 2^32 was read as choice 0, and its text given as the choice asked', () => {
  const two = enc('data: {"choices":[{"index":0,"delta":{"content":"zero"}},{"index":1,"delta":{"content":"one"}}]}\n\ndata: [DONE]\n\n');
  const biggest = 2 ** 31 - 1;
  for (const [what, make] of [
    ['ModelStream', (choice: number) => new ModelStream({ format: 'openai', choice })],
    ['SseRelay', (choice: number) => new SseRelay({ from: 'openai', to: 'anthropic', choice })],
    ['ModelEventReader', (choice: number) => new ModelEventReader({ format: 'openai', choice })],
  ] as const) {
    for (const bad of [2 ** 31, 2 ** 32, 2 ** 32 + 1, Number.MAX_SAFE_INTEGER, -1, 1.5]) {
      expect(() => make(bad), `${what} ${bad}`).toThrow(new TypeError(`${what}: choice must be an integer from 0 to ${biggest}, got ${bad}`));
    }
    expect(() => make('1' as never)).toThrow(new TypeError(`${what}: choice must be an integer from 0 to ${biggest}, got '1' (a string: give the number 1)`));
  }
  // (the largest follows a choice of its own: none here, so no text)
  const far = new ModelStream({ format: 'openai', choice: biggest });
  expect(far.push(two) + far.flush()).toBe('');
  const one = new ModelStream({ format: 'openai', choice: 1 });
  expect(one.push(two) + one.flush()).toBe('one');
});
