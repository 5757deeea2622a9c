// Gemini beyond the fixtures: Vertex's streamed function-call arguments that cannot be written as
// one JSON text (a bad event at the event, at every chunking), a later part's signature, the
// signature of each call through ModelStream, ModelEventReader and both relays (exact bytes), and
// arguments in parts against the whole `args` they stand for, on random trees.
import { describe, expect, it } from 'vitest';
import { ModelEventReader, ModelStream, ModelStreamError, SseRelay } from '../../bindings/index.js';
import { SEED, rng, standardChunkings } from '../helpers/random.js';
import { anthropicFinal, sameAtEveryCut } from '../helpers/sdk-clients.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A Vertex chunk of one part. */
const chunk = (part: unknown, extra = '') => `data: {"candidates":[{"content":{"role":"model","parts":[${JSON.stringify(part)}]}${extra}}]}\r\n\r\n`;
const begin = (name: string, more: Record<string, unknown> = {}) => chunk({ functionCall: { name, willContinue: true }, ...more });
const partial = (partialArgs: unknown[], more = true) => chunk({ functionCall: more ? { partialArgs, willContinue: true } : { partialArgs } });
const finish = `data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{}}]},"finishReason":"STOP"}]}\r\n\r\n`;

/** Reads `body` in `chunks`, returning the error (if any) and the stream. */
function read(chunks: Uint8Array[]): { m: ModelStream; error?: ModelStreamError; text: string } {
  const m = new ModelStream({ format: 'gemini', raw: true });
  let text = '';
  try {
    for (const c of chunks) text += m.push(c);
    text += m.flush();
  } catch (e) {
    if (!(e instanceof ModelStreamError)) throw e;
    return { m, error: e, text: text + e.text };
  }
  return { m, text };
}

describe('gemini: arguments in parts that are not one JSON text', () => {
  const cases: [string, unknown[][], string][] = [
    ['goes back into an object it left', [[{ jsonPath: '$.a.x', numberValue: 1 }], [{ jsonPath: '$.b', numberValue: 2 }], [{ jsonPath: '$.a.y', numberValue: 3 }]], 'names a member written before'],
    ['skips an array element', [[{ jsonPath: '$.list[0]', stringValue: 'a' }], [{ jsonPath: '$.list[2]', stringValue: 'c' }]], 'not the next element'],
    ['indexes the arguments object', [[{ jsonPath: '$[0]', numberValue: 1 }]], 'indexes an object'],
    ['repeats a member', [[{ jsonPath: '$.city', stringValue: 'Bern' }], [{ jsonPath: '$.city', stringValue: 'Basel' }]], 'names a member written before'],
    ['is not a path', [[{ jsonPath: 'city', stringValue: 'Bern' }]], 'is not a path'],
    ['is the root', [[{ jsonPath: '$', stringValue: 'Bern' }]], 'is not a path'],
    ['has no jsonPath', [[{ stringValue: 'Bern' }]], 'without a jsonPath'],
  ];

  it.each(cases)('a path that %s: ERR_BAD_EVENT at its event, at every chunking; the text before it kept', (_, parts, why) => {
    const events = [chunk({ text: 'Vorher. ' }), begin('f'), ...parts.map((p) => partial(p))];
    const body = events.join('') + finish;
    const bytes = enc.encode(body);
    const bad = enc.encode(events.slice(0, -1).join('')).length + 'data: '.length;
    const badEnd = enc.encode(events.join('')).length;
    let runs = 0;
    for (const chunks of standardChunkings(bytes)) {
      const r = read(chunks);
      const where = `${chunks.length} chunks`;
      expect(r.error?.code, where).toBe('ERR_BAD_EVENT');
      expect(r.error?.message, where).toContain(why);
      // exact when the event's data lies in one chunk
      let at = 0;
      const starts = chunks.map((c) => (at += c.length) - c.length);
      const inOne = !starts.some((s) => s > bad && s < badEnd - 4);
      if (inOne) expect(r.error?.offset, where).toBe(bad);
      else expect(r.error!.offset >= bad - 'data: '.length && r.error!.offset <= badEnd, where).toBe(true);
      expect(r.text, where).toBe('Vorher. ');
      expect(r.m.status, where).toBe('failed');
      runs++;
    }
    expect(runs).toBe(bytes.length + 3);
  });

  it('ModelEventReader (the command\'s check) reports the event as invalid, and reads the next', () => {
    const reader = new ModelEventReader({ format: 'gemini' });
    const data = (s: string) => s.slice('data: '.length, s.indexOf('\r\n'));
    expect(reader.read(data(begin('f'))).invalid).toBeUndefined();
    expect(reader.read(data(partial([{ jsonPath: '$.a[1]', numberValue: 1 }]))).invalid).toEqual({ offset: 0, message: 'the jsonPath "$.a[1]" is not the next element of its array (0)', json: false });
    expect(reader.read(data(chunk({ text: 'weiter' }))).text).toBe('weiter');
  });
});

describe('gemini: signatures', () => {
  it('a call keeps its own thoughtSignature; a text part\'s and a later part\'s are reasoning signatures', () => {
    const body = chunk({ text: 'A', thoughtSignature: 'T1' }) + begin('f', { thoughtSignature: 'C1' })
      + chunk({ functionCall: { partialArgs: [{ jsonPath: '$.x', numberValue: 1 }], willContinue: true }, thoughtSignature: 'LATER' })
      + chunk({ functionCall: {} }) + chunk({ functionCall: { name: 'g', args: { y: 2 } }, thoughtSignature: 'C2' }) + finish;
    const m = new ModelStream({ format: 'gemini' });
    m.push(enc.encode(body));
    m.flush();
    expect(m.toolCalls).toEqual([
      { index: 0, id: '', name: 'f', arguments: '{"x":1}', done: true, valid: true, signature: 'C1' },
      { index: 1, id: '', name: 'g', arguments: '{"y":2}', done: true, valid: true, signature: 'C2' },
    ]);
    expect(m.reasoningBlocks).toEqual([{ text: '', signature: 'T1' }, { text: '', signature: 'LATER' }]);
    const reader = new ModelEventReader({ format: 'gemini' });
    reader.read(chunk({ functionCall: { name: 'g', args: {} }, thoughtSignature: 'C3' }).slice(6, -4));
    expect(reader.toolCalls).toEqual([{ index: 0, id: '', name: 'g', arguments: '{}', done: true, valid: true, signature: 'C3' }]);
  });

  const body = begin('get_weather', { thoughtSignature: 'Cg/sig+==' }) + partial([{ jsonPath: '$.city', stringValue: 'Z\u00fcrich', willContinue: true }])
    + partial([{ jsonPath: '$.city', stringValue: '' }], false)
    + chunk({ functionCall: { id: 'c2', name: 'get_time', args: { tz: 'UTC' } } }, ',"finishReason":"STOP"');

  it('to OpenAI: the signature as extra_content.google.thought_signature of the call\'s first delta, the arguments in parts as they came (exact bytes)', () => {
    for (const chunks of standardChunkings(enc.encode(body))) {
      const r = new SseRelay({ from: 'gemini', id: 'chatcmpl-1', model: 'g' });
      let out = '';
      for (const c of chunks) out += dec.decode(r.push(c));
      out += dec.decode(r.flush());
      const head = 'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":';
      const events = out.split('\n\n').filter((e) => e !== '').map((e) => (e.startsWith(head) ? e.slice(e.indexOf('"choices":')) : e));
      expect(events, `${chunks.length} chunks`).toEqual([
        '"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}',
        `"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":${JSON.stringify(`call_seam${r.serial}_0`)},"type":"function","function":{"name":"get_weather","arguments":""},"extra_content":{"google":{"thought_signature":"Cg/sig+=="}}}]},"finish_reason":null}]}`,
        '"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{"}}]},"finish_reason":null}]}',
        '"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\"city\\":\\"Zürich"}}]},"finish_reason":null}]}',
        '"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\""}}]},"finish_reason":null}]}',
        '"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]},"finish_reason":null}]}',
        '"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c2","type":"function","function":{"name":"get_time","arguments":""}}]},"finish_reason":null}]}',
        '"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\\"tz\\":\\"UTC\\"}"}}]},"finish_reason":null}]}',
        '"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}',
        'data: [DONE]',
      ]);
    }
  });

  it('to Anthropic: each call a tool_use block, the arguments in parts as input_json_delta, a call\'s signature a thinking block of no text before it (exact bytes)', () => {
    const r = new SseRelay({ from: 'gemini', to: 'anthropic', id: 'msg_1', model: 'g' });
    const out = dec.decode(r.push(enc.encode(body))) + dec.decode(r.flush());
    const data = out.split('\n\n').filter((e) => e !== '').map((e) => e.split('\n')[1].slice('data: '.length));
    expect(data.slice(1)).toEqual([
      '{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"Cg/sig+=="}}',
      '{"type":"content_block_stop","index":0}',
      `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":${JSON.stringify(`toolu_seam${r.serial}_0`)},"name":"get_weather","input":{}}}`,
      '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{"}}',
      '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\\"city\\":\\"Zürich"}}',
      '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\\""}}',
      '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"}"}}',
      '{"type":"content_block_stop","index":1}',
      '{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"c2","name":"get_time","input":{}}}',
      '{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\\"tz\\":\\"UTC\\"}"}}',
      '{"type":"content_block_stop","index":2}',
      '{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":0}}',
      '{"type":"message_stop"}',
    ]);
  });

  it('to Anthropic: a call whose block is begun again (text between its parts) has its signature once, before its first block', () => {
    const split = begin('get_weather', { thoughtSignature: 'Cg/sig+==' }) + partial([{ jsonPath: '$.city', stringValue: 'Z', willContinue: true }])
      + chunk({ text: 'meanwhile' }) + partial([{ jsonPath: '$.city', stringValue: 'ürich' }], false) + chunk({ text: '.' }, ',"finishReason":"STOP"');
    for (const chunks of standardChunkings(enc.encode(split))) {
      const r = new SseRelay({ from: 'gemini', to: 'anthropic' });
      const out = chunks.map((c) => dec.decode(r.push(c))).join('') + dec.decode(r.flush());
      const starts = [...out.matchAll(/"content_block":\{"type":"(\w+)"/g)].map((x) => x[1]);
      expect([starts, out.split('signature_delta').length - 1], `${chunks.length} reads`).toEqual([['thinking', 'tool_use', 'text', 'tool_use', 'text'], 1]);
    }
  });

  it('to Anthropic, read by the SDK at every cut: the signed call after a thinking block of no text that holds its signature', async () => {
    const got = await sameAtEveryCut(enc.encode(body), () => new SseRelay({ from: 'gemini', to: 'anthropic' }), async (b) => (await anthropicFinal(b)).content
      .map((c) => (c.type === 'thinking' ? { type: c.type, thinking: c.thinking, signature: c.signature } : c.type === 'tool_use' ? { type: c.type, name: c.name, input: c.input } : c.type)));
    expect(got).toEqual([
      { type: 'thinking', thinking: '', signature: 'Cg/sig+==' }, { type: 'tool_use', name: 'get_weather', input: { city: 'Zürich' } },
      { type: 'tool_use', name: 'get_time', input: { tz: 'UTC' } },
    ]);
  });
});

describe('gemini: a text part\'s signature, to Anthropic', () => {
  // The thoughtSignature on the first answer part signs the thoughts before it: to Anthropic it
  // ends their thinking block, before the text, as Anthropic's own streams end theirs; the answer
  // is one text block. (It was written after the text, as an empty thinking block between two
  // text blocks.)
  const body = chunk({ text: 'Thinking it over', thought: true }) + chunk({ text: 'Old pond\n', thoughtSignature: 'CiQBsig==' })
    + chunk({ text: 'a frog' }, ',"finishReason":"STOP"');
  const blocks = (out: string) => {
    const got: string[] = [];
    for (const e of out.split('\n\n')) {
      const line = e.split('\n').find((l) => l.startsWith('data: '));
      if (line === undefined) continue;
      const v = JSON.parse(line.slice(6)) as { type: string; index?: number; content_block?: { type: string }; delta?: Record<string, string> };
      if (v.type === 'content_block_start') got.push(`${v.index} ${v.content_block!.type}`);
      else if (v.type === 'content_block_delta') {
        const d = v.delta!;
        got.push(`${v.index} ${d.type} ${d.thinking ?? d.text ?? d.signature}`);
      } else if (v.type === 'content_block_stop') got.push(`${v.index} stop`);
    }
    // (a delta cut across reads comes in pieces: joined here)
    return got.reduce<string[]>((a, x) => {
      const last = a.at(-1);
      const head = x.split(' ').slice(0, 2).join(' ');
      if (last !== undefined && last.startsWith(`${head} `) && !x.endsWith(' stop') && head.split(' ')[1].endsWith('_delta')) a[a.length - 1] = last + x.slice(head.length + 1);
      else a.push(x);
      return a;
    }, []);
  };

  it('ends the thinking block before the text: whole, at every split and dripped', () => {
    for (const chunks of standardChunkings(enc.encode(body))) {
      const r = new SseRelay({ from: 'gemini', to: 'anthropic', id: 'msg_1', model: 'g' });
      const out = chunks.map((c) => dec.decode(r.push(c))).join('') + dec.decode(r.flush());
      expect(blocks(out), `${chunks.length} chunks`).toEqual([
        '0 thinking', '0 thinking_delta Thinking it over', '0 signature_delta CiQBsig==', '0 stop',
        '1 text', '1 text_delta Old pond\na frog', '1 stop',
      ]);
    }
    const m = new ModelStream({ format: 'gemini' });
    expect(m.push(enc.encode(body)) + m.flush()).toBe('Old pond\na frog');
    expect(m.reasoningBlocks).toEqual([{ text: 'Thinking it over', signature: 'CiQBsig==' }]);
  });
});

describe(`gemini: arguments in parts equal the whole args (random trees, seed ${SEED})`, () => {
  type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
  const next = rng(SEED);
  const pick = <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)];
  const word = () => pick(['a', 'city', 'b.c', "it's", 'ü', 'x y', '"q"', 'back\\slash', '東京', '😀', 'line\nbreak']);
  function value(depth: number): Json {
    const k = Math.floor(next() * (depth > 2 ? 4 : 6));
    if (k === 0) return pick([0, 1, -2.5, 1e21, 3.25, 42]);
    if (k === 1) return next() < 0.5;
    if (k === 2) return null;
    if (k === 3) return Array.from({ length: 1 + Math.floor(next() * 3) }, word).join('');
    if (k === 4) return Array.from({ length: 1 + Math.floor(next() * 3) }, () => value(depth + 1));
    const o: Record<string, Json> = {};
    for (let i = 0, n = 1 + Math.floor(next() * 3); i < n; i++) o[`${word()}${i}`] = value(depth + 1);
    return o;
  }
  /** The leaves of an arguments object as Vertex streams them: a path each, strings in pieces. */
  function partials(v: Json, path: string, out: Record<string, unknown>[]): void {
    if (Array.isArray(v)) {
      v.forEach((x, i) => partials(x, `${path}[${i}]`, out));
      return;
    }
    if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) partials(x, /^[A-Za-z0-9_]+$/.test(k) ? `${path}.${k}` : `${path}['${k.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}']`, out);
      return;
    }
    if (typeof v === 'string') {
      const cuts = [...v].length;
      let s = v;
      while (s.length > 0 && next() < 0.6 && cuts > 1) {
        const at = Math.ceil(next() * (s.length - 1));
        const cp = s.codePointAt(at - 1)! > 0xffff ? at + 1 : at;
        out.push({ jsonPath: path, stringValue: s.slice(0, cp), willContinue: true });
        s = s.slice(cp);
      }
      out.push({ jsonPath: path, stringValue: s });
      return;
    }
    out.push(v === null ? { jsonPath: path, nullValue: 'NULL_VALUE' } : typeof v === 'number' ? { jsonPath: path, numberValue: v } : { jsonPath: path, boolValue: v });
  }

  it('each call\'s arguments are JSON.stringify of the object whose leaves came in parts (events of 1 to 3 partialArgs)', () => {
    for (let round = 0; round < 300; round++) {
      const args: Record<string, Json> = {};
      for (let i = 0, n = Math.floor(next() * 4); i < n; i++) args[`${word()}${i}`] = value(0);
      const list: Record<string, unknown>[] = [];
      partials(args, '$', list);
      let body = begin('f');
      for (let i = 0; i < list.length;) {
        const n = 1 + Math.floor(next() * 3);
        body += partial(list.slice(i, i + n));
        i += n;
      }
      body += finish;
      const m = new ModelStream({ format: 'gemini' });
      m.push(enc.encode(body));
      m.flush();
      expect(m.toolCalls, `seed ${SEED} round ${round}: ${JSON.stringify(args)}`).toEqual([
        { index: 0, id: '', name: 'f', arguments: JSON.stringify(args), done: true, valid: true },
      ]);
    }
  });
});

describe('gemini: a refused prompt', () => {
  const blocked = (reason: string) => `data: {"promptFeedback": {"blockReason": "${reason}"},"usageMetadata": {"promptTokenCount": 7,"totalTokenCount": 7}}\r\n\r\n`;
  const other = `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]},"finishReason":"OTHER"}]}\r\n\r\n`;
  const finishOf = (body: string, to: 'openai' | 'anthropic') => {
    const relay = new SseRelay({ from: 'gemini', to });
    const out = dec.decode(relay.push(enc.encode(body))) + dec.decode(relay.flush());
    expect(relay.status).toBe('done');
    return to === 'openai' ? [...out.matchAll(/"finish_reason":"([a-z_]+)"/g)].map((m) => m[1]) : [...out.matchAll(/"stop_reason":"([a-z_]+)"/g)].map((m) => m[1]);
  };

  it('is done with the block reason as its finish reason, and marked refused; a candidate that ends with the same word is not', () => {
    for (const reason of ['OTHER', 'SAFETY', 'BLOCK_REASON_UNSPECIFIED', 'JAILBREAK']) {
      const m = new ModelStream({ format: 'gemini' });
      expect(m.push(enc.encode(blocked(reason)))).toBe('');
      expect(m.flush()).toBe('');
      expect([m.status, m.finishReason, m.refused], reason).toEqual(['done', reason, true]);
      const report = m.finish();
      expect([report.finishReason, report.refused], reason).toEqual([reason, true]);
    }
    const m = new ModelStream({ format: 'gemini' });
    m.push(enc.encode(other));
    m.flush();
    const report = m.finish();
    expect([report.text, report.finishReason, report.refused, m.refused]).toEqual(['Hi', 'OTHER', undefined, false]);
  });

  it('is relayed as a filter\'s stop to OpenAI and as a refusal to Anthropic, whatever the block reason; a candidate\'s OTHER as an end', () => {
    for (const reason of ['OTHER', 'SAFETY', 'BLOCK_REASON_UNSPECIFIED', 'JAILBREAK']) {
      expect(finishOf(blocked(reason), 'openai'), reason).toEqual(['content_filter']);
      expect(finishOf(blocked(reason), 'anthropic'), reason).toEqual(['refusal']);
    }
    expect(finishOf(other, 'openai')).toEqual(['stop']);
    expect(finishOf(other, 'anthropic')).toEqual(['end_turn']);
  });
});

describe('gemini: an error chunk', () => {
  const body = `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]}}]}\r\n\r\ndata: {"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}\r\n\r\n`;
  it('is ERR_PROVIDER with its status as the provider\'s code; relayed with it, to Anthropic in Anthropic\'s words (exact bytes)', () => {
    const m = new ModelStream({ format: 'gemini' });
    let error: unknown;
    try {
      m.push(enc.encode(body));
    } catch (e) {
      error = e;
    }
    const at = enc.encode(body.slice(0, body.indexOf('{"error"'))).length; // (an event's error is at its document)
    const e = error as ModelStreamError;
    expect([e.code, e.offset, e.providerMessage, e.providerCode]).toEqual(['ERR_PROVIDER', at, 'Resource has been exhausted (e.g. check quota).', 'RESOURCE_EXHAUSTED']);
    const last = (to: 'openai' | 'anthropic') => {
      const relay = new SseRelay({ from: 'gemini', to });
      const out = dec.decode(relay.push(enc.encode(body))) + dec.decode(relay.flush());
      return out.slice(out.lastIndexOf('data: '));
    };
    const message = 'Resource has been exhausted (e.g. check quota).';
    expect(last('openai')).toBe(`data: ${JSON.stringify({ error: { message, type: 'upstream_error', code: 'ERR_PROVIDER', offset: at, provider_code: 'RESOURCE_EXHAUSTED' } })}\n\n`);
    expect(last('anthropic')).toBe(`data: ${JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message } })}\n\n`);
  });
});
