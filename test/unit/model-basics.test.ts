// ModelStream on one stream of each format, read whole and in pieces: exact text, status and fields.
// (The recorded-shape fixtures and every-cutting checks are in model.test.ts.)
import { it, expect } from 'vitest';
import { ModelStream, ModelStreamError } from '../../bindings/index.js';
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
