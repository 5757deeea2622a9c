// llm_tokens_total{kind}: the tokens an upstream reported, counted once per answer from the usage
// the gateway read (a streamed answer's from its relay, a whole one's from its ModelStream, a whole
// answer passed through in the client's own API from its body), in the counts of the library's
// Usage: input with its cached tokens, output with its reasoning, cache_read, cache_write and
// reasoning as parts of them. For each upstream format, streamed and whole, to both client APIs;
// then streams that failed, were cut short, timed out or that their client left: counted as far
// as their usage came. The expected counts are written out from the fixtures' usage objects.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BEDROCK_FIXTURES } from '../helpers/bedrock-fixtures.js';
import { FIXTURES } from '../helpers/model-fixtures.js';
import { chat, invokeStream, metricsAt, post, startGateway, withAwsEnv, type Running } from './support.js';

type Dialect = 'openai' | 'anthropic';
const PATHS: Record<Dialect, string> = { openai: '/v1/chat/completions', anthropic: '/v1/messages' };
const KINDS = ['input', 'output', 'cache_read', 'cache_write', 'reasoning'] as const;
type Tokens = Partial<Record<(typeof KINDS)[number], number>>;

const bytesOf = (name: string): Uint8Array => {
  const f = FIXTURES.find((x) => x.name === name) ?? BEDROCK_FIXTURES.find((x) => x.name === name);
  if (f === undefined) throw new Error(`no fixture ${name}`);
  return f.bytes;
};
const bodyOf = (name: string): string => FIXTURES.find((x) => x.name === name)!.body;

/** The counter's values now, by kind. */
async function tokensAt(g: Running): Promise<Record<string, number>> {
  const m = await metricsAt(`${g.url}/metrics`);
  return Object.fromEntries(KINDS.map((k) => [k, m.get(`llm_tokens_total{kind="${k}"}`)!]));
}

/** What a request moved the counter by (every kind, 0 where it did not move). */
async function delta(g: Running, ask: () => Promise<unknown>): Promise<Record<string, number>> {
  const before = await tokensAt(g);
  await ask();
  const after = await tokensAt(g);
  return Object.fromEntries(KINDS.map((k) => [k, after[k] - before[k]]));
}

const all = (t: Tokens) => Object.fromEntries(KINDS.map((k) => [k, t[k] ?? 0]));

const ask = (g: Running, dialect: Dialect, model: string, stream: boolean) => post(g.url,
  dialect === 'openai' ? chat(model, stream) : { model, max_tokens: 64, stream, messages: [{ role: 'user', content: 'x' }] },
  PATHS[dialect], dialect === 'anthropic' ? { 'anthropic-version': '2023-06-01' } : {});

const EVENTSTREAM = 'application/vnd.amazon.eventstream';

/** Per upstream format: a stream of it with usage, and the tokens that usage says. */
const STREAMS: { format: string; fixture: string; bytes: Uint8Array; contentType?: string; tokens: Tokens }[] = [
  // usage {prompt_tokens 12, completion_tokens 85, cached_tokens 0, reasoning_tokens 41}
  { format: 'openai', fixture: 'openai-reasoning-content', bytes: bytesOf('openai-reasoning-content'), tokens: { input: 12, output: 85, reasoning: 41 } },
  // usage {input_tokens 81 (cached_tokens 64), output_tokens 152 (reasoning_tokens 128)}
  { format: 'openai-responses', fixture: 'responses-tool-call', bytes: bytesOf('responses-tool-call'), tokens: { input: 81, output: 152, cache_read: 64, reasoning: 128 } },
  // usage {input_tokens 2048, cache_read_input_tokens 1024, cache_creation_input_tokens 0, output_tokens 187}: input 2048 + 1024
  { format: 'anthropic', fixture: 'anthropic-server-tools-thinking', bytes: bytesOf('anthropic-server-tools-thinking'), tokens: { input: 3072, output: 187, cache_read: 1024 } },
  // prompt_eval_count 26, eval_count 282
  { format: 'ollama', fixture: 'ollama-chat', bytes: bytesOf('ollama-chat'), tokens: { input: 26, output: 282 } },
  // usageMetadata {promptTokenCount 12, candidatesTokenCount 11, thoughtsTokenCount 40, cachedContentTokenCount 4}: output 11 + 40
  { format: 'gemini', fixture: 'gemini-thinking', bytes: bytesOf('gemini-thinking'), tokens: { input: 12, output: 51, cache_read: 4, reasoning: 40 } },
  // usage {inputTokens 310, outputTokens 61, cacheReadInputTokens 256, cacheWriteInputTokens 0}: input 310 + 256
  { format: 'bedrock', fixture: 'bedrock-tools', bytes: bytesOf('bedrock-tools'), contentType: EVENTSTREAM, tokens: { input: 566, output: 61, cache_read: 256 } },
  // Claude on Bedrock: Anthropic's events in chunk messages, the same usage as Claude direct
  { format: 'bedrock-invoke', fixture: 'anthropic-server-tools-thinking', bytes: invokeStream(bodyOf('anthropic-server-tools-thinking')), contentType: EVENTSTREAM, tokens: { input: 3072, output: 187, cache_read: 1024 } },
];

describe('llm_tokens_total: every kind exported at 0 from the start', () => {
  test('a gateway that has answered nothing', async () => {
    const g = await startGateway();
    try {
      const m = await metricsAt(`${g.url}/metrics`);
      expect(KINDS.map((k) => m.get(`llm_tokens_total{kind="${k}"}`))).toEqual([0, 0, 0, 0, 0]);
      const text = await (await fetch(`${g.url}/metrics`)).text();
      expect(text).toContain('# TYPE llm_tokens_total counter');
    } finally {
      await g.close();
    }
  });
});

describe.each(STREAMS.map((s) => [s.format, s.fixture, s] as const))('llm_tokens_total from a %s upstream (%s)', (format, _fixture, s) => {
  withAwsEnv();
  let g: Running;
  beforeAll(async () => {
    g = await startGateway({ upstreamFormat: format as never });
    g.up.scripts.set('m', { contentType: s.contentType, pieces: [s.bytes] });
  });
  afterAll(async () => {
    await g.close();
  });

  // (a whole answer in the upstream's own API passes through: below)
  const asks = ([['openai', true], ['anthropic', true], ['openai', false], ['anthropic', false]] as const).filter(([dialect, stream]) => stream || dialect !== format);
  test.each(asks)('to an %s client (stream: %s): the usage, once', async (dialect, stream) => {
    const got = await delta(g, async () => {
      const res = await ask(g, dialect, 'm', stream);
      expect(res.status, res.body.toString()).toBe(200);
    });
    expect(got).toEqual(all(s.tokens));
  });
});

describe('llm_tokens_total from a whole answer passed through in the client\'s own API: its body\'s usage', () => {
  let g: Running | undefined;
  afterAll(async () => {
    await g?.close();
  });

  test('openai to an OpenAI client: prompt_tokens with cached_tokens, completion_tokens with reasoning_tokens', async () => {
    g = await startGateway({ upstreamFormat: 'openai' });
    const completion = {
      id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70, prompt_tokens_details: { cached_tokens: 16 }, completion_tokens_details: { reasoning_tokens: 8 } },
    };
    g.up.scripts.set('m', { contentType: 'application/json', pieces: [Buffer.from(JSON.stringify(completion))] });
    expect(await delta(g, async () => expect((await ask(g!, 'openai', 'm', false)).status).toBe(200))).toEqual({ input: 50, output: 20, cache_read: 16, cache_write: 0, reasoning: 8 });
    // no usage, or a body that is not JSON (not passed on: a 502): none
    g.up.scripts.set('bare', { contentType: 'application/json', pieces: [Buffer.from(JSON.stringify({ ...completion, usage: undefined }))] });
    expect(await delta(g, async () => expect((await ask(g!, 'openai', 'bare', false)).status).toBe(200))).toEqual(all({}));
    g.up.scripts.set('text', { contentType: 'text/plain', pieces: [Buffer.from('not JSON')] });
    expect(await delta(g, async () => expect((await ask(g!, 'openai', 'text', false)).status).toBe(502))).toEqual(all({}));
    await g.close();
    g = undefined;
  });

  test('anthropic to an Anthropic client: input_tokens with the cache\'s reads and writes', async () => {
    g = await startGateway({ upstreamFormat: 'anthropic' });
    const message = {
      id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null,
      usage: { input_tokens: 10, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 7 },
    };
    g.up.scripts.set('m', { contentType: 'application/json', pieces: [Buffer.from(JSON.stringify(message))] });
    expect(await delta(g, async () => expect((await ask(g!, 'anthropic', 'm', false)).status).toBe(200))).toEqual({ input: 130, output: 7, cache_read: 100, cache_write: 20, reasoning: 0 });
  });
});

describe('llm_tokens_total from answers that did not complete: as far as their usage came', () => {
  let g: Running;
  beforeAll(async () => {
    g = await startGateway({ upstreamFormat: 'anthropic', bodyTimeout: 400, keepalive: 0 });
  });
  afterAll(async () => {
    await g.close();
  });

  test.each([['openai', true], ['openai', false], ['anthropic', true]] as const)('an error event mid-stream (anthropic-error-mid), to an %s client (stream: %s)', async (dialect, stream) => {
    g.up.scripts.set('err', { pieces: [bytesOf('anthropic-error-mid')] });
    const got = await delta(g, async () => {
      const res = await ask(g, dialect, 'err', stream);
      expect(res.status).toBe(stream ? 200 : 502);
      if (stream) expect(res.body.toString()).toContain('Overloaded');
    });
    expect(got).toEqual(all({ input: 15, output: 1 }));
  });

  test.each([['openai', true], ['openai', false], ['anthropic', true]] as const)('message_delta but no message_stop (anthropic-truncated), to an %s client (stream: %s)', async (dialect, stream) => {
    g.up.scripts.set('cut', { pieces: [bytesOf('anthropic-truncated')] });
    const m0 = await metricsAt(`${g.url}/metrics`);
    const got = await delta(g, async () => expect((await ask(g, dialect, 'cut', stream)).status).toBe(stream ? 200 : 502));
    expect(got).toEqual(all({ input: 30, output: 12 }));
    const m1 = await metricsAt(`${g.url}/metrics`);
    expect(m1.get('llm_upstream_truncated_total')! - m0.get('llm_upstream_truncated_total')!).toBe(1);
  });

  test.each([['openai', true], ['openai', false]] as const)('an upstream silent after its message_start: bodyTimeout ends it, to an %s client (stream: %s)', async (dialect, stream) => {
    const start = 'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":44,"cache_read_input_tokens":6,"output_tokens":1}}}\n\n';
    g.up.scripts.set('silent', { pieces: [Buffer.from(start)], then: 'hang' });
    const m0 = await metricsAt(`${g.url}/metrics`);
    const got = await delta(g, async () => {
      const res = await ask(g, dialect, 'silent', stream);
      expect(res.status).toBe(stream ? 200 : 504);
      await expect.poll(async () => (await metricsAt(`${g.url}/metrics`)).get('llm_streams_open')).toBe(0);
    });
    const m1 = await metricsAt(`${g.url}/metrics`);
    expect(m1.get('gateway_timeouts_total{timeout="body"}')! - m0.get('gateway_timeouts_total{timeout="body"}')!).toBe(1);
    expect(got).toEqual(all({ input: 50, output: 1, cache_read: 6 }));
    await g.up.noSockets();
  });

  test('the client leaves after the usage was relayed', async () => {
    const start = 'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":21,"output_tokens":3}}}\n\n';
    const text = 'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
      + 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Salut"}}\n\n';
    g.up.scripts.set('left', { pieces: [Buffer.from(start + text)], then: 'hang' });
    const m0 = await metricsAt(`${g.url}/metrics`);
    const got = await delta(g, async () => {
      await new Promise<void>((resolve, reject) => {
        const payload = JSON.stringify(chat('left'));
        const req = request(`${g.url}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
          let seen = '';
          res.on('data', (b: Buffer) => {
            seen += b.toString();
            if (seen.includes('Salut')) { req.destroy(); resolve(); } // (the relay read the message_start before it)
          });
          res.on('error', () => {});
        });
        req.on('error', (e) => { if (!req.destroyed) reject(e); });
        req.end(payload);
      });
      await expect.poll(async () => (await metricsAt(`${g.url}/metrics`)).get('llm_streams_total{status="aborted"}')).toBe(m0.get('llm_streams_total{status="aborted"}')! + 1);
    });
    expect(got).toEqual(all({ input: 21, output: 3 }));
    await g.up.noSockets();
  });
});

describe('with metrics off', () => {
  test('the usage is not read, and the answer is as with them', async () => {
    const g = await startGateway({ upstreamFormat: 'anthropic', metrics: false });
    try {
      g.up.scripts.set('m', { pieces: [bytesOf('anthropic-basic')] });
      for (const stream of [true, false]) expect((await ask(g, 'openai', 'm', stream)).status).toBe(200);
      g.up.scripts.set('w', { contentType: 'application/json', pieces: [Buffer.from('{"type":"message","usage":{"input_tokens":1,"output_tokens":1}}')] });
      expect((await ask(g, 'anthropic', 'w', false)).status).toBe(200);
      expect((await fetch(`${g.url}/metrics`)).status).toBe(404);
    } finally {
      await g.close();
    }
  });
});
