// The model a translated answer names: the one the client asked for, streamed (each OpenAI chunk,
// Anthropic's message_start) as whole, read by the official clients; and the model names the
// gateway refuses before calling the upstream, with a 400 in the client's API naming the field.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, test } from 'vitest';
import { BEDROCK_FIXTURES } from '../helpers/bedrock-fixtures.js';
import { FIXTURES } from '../helpers/model-fixtures.js';
import { invokeStream, metricsAt, startGateway, withAwsEnv, type Running } from './support.js';

const bytesOf = (name: string): Uint8Array => (FIXTURES.find((x) => x.name === name) ?? BEDROCK_FIXTURES.find((x) => x.name === name))!.bytes;
const EVENTSTREAM = 'application/vnd.amazon.eventstream';

/** Translated streams: an upstream format, a stream of it, and the model a client asks for (as the upstream reads it). */
const TRANSLATED = [
  { format: 'gemini', fixture: 'gemini-thinking', model: 'gemini-2.5-flash' },
  { format: 'bedrock', fixture: 'bedrock-tools', model: 'eu.anthropic.claude-sonnet-4-20250514-v1:0', contentType: EVENTSTREAM },
  { format: 'anthropic', fixture: 'anthropic-thinking-crlf', model: 'claude-sonnet-4-5' },
  { format: 'ollama', fixture: 'ollama-chat', model: 'qwen3:8b' },
  { format: 'openai', fixture: 'openai-reasoning-content', model: 'deepseek-reasoner' },
  { format: 'openai-responses', fixture: 'responses-basic', model: 'gpt-5-mini' },
] as const;

async function serving(format: string, f: { fixture: string; model: string; contentType?: string }, fn: (g: Running) => Promise<void>): Promise<void> {
  const g = await startGateway({ upstreamFormat: format as never });
  try {
    g.up.scripts.set(f.model, { contentType: f.contentType, pieces: [bytesOf(f.fixture)] });
    await fn(g);
  } finally {
    await g.close();
  }
}

describe('a translated stream names the model the client asked for, as the whole answer does', () => {
  withAwsEnv();

  test.each(TRANSLATED.filter((t) => t.format !== 'openai').map((t) => [t.format, t] as const))('from %s to openai-node: every chunk\'s model, the final completion\'s, the whole answer\'s', async (format, t) => {
    await serving(format, t, async (g) => {
      const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'k', maxRetries: 0 });
      const stream = client.chat.completions.stream({ model: t.model, messages: [{ role: 'user', content: 'x' }], stream: true });
      const models = new Set<string>();
      let chunks = 0;
      for await (const c of stream) { models.add(c.model); chunks++; }
      expect(chunks).toBeGreaterThan(2);
      expect([...models]).toEqual([t.model]);
      expect((await stream.finalChatCompletion()).model).toBe(t.model);
      expect((await client.chat.completions.create({ model: t.model, messages: [{ role: 'user', content: 'x' }] })).model).toBe(t.model);
    });
  });

  test.each(TRANSLATED.filter((t) => t.format !== 'anthropic').map((t) => [t.format, t] as const))('from %s to the Anthropic SDK: message_start\'s model, the final message\'s, the whole answer\'s', async (format, t) => {
    await serving(format, t, async (g) => {
      const client = new Anthropic({ baseURL: g.url, apiKey: 'k', maxRetries: 0 });
      const stream = client.messages.stream({ model: t.model, max_tokens: 64, messages: [{ role: 'user', content: 'x' }] });
      const started: string[] = [];
      for await (const e of stream) if (e.type === 'message_start') started.push(e.message.model);
      expect(started).toEqual([t.model]);
      expect((await stream.finalMessage()).model).toBe(t.model);
      expect((await client.messages.create({ model: t.model, max_tokens: 64, messages: [{ role: 'user', content: 'x' }] })).model).toBe(t.model);
    });
  });

  test('in the upstream\'s own API the upstream\'s events pass as they came: their model, not the one asked for', async () => {
    const t = { ...TRANSLATED.find((x) => x.format === 'openai')!, model: 'another-name' } as const;
    await serving('openai', t, async (g) => {
      const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'k', maxRetries: 0 });
      const models = new Set<string>();
      for await (const c of await client.chat.completions.create({ model: t.model, messages: [{ role: 'user', content: 'x' }], stream: true })) models.add(c.model);
      expect([...models]).toEqual(['deepseek-reasoner']); // (the fixture's own)
    });
  });
});

describe('a model name too long to name in every chunk: a 400 before the upstream is called', () => {
  test.each(['openai', 'anthropic'] as const)('to an %s client, from an upstream of another API (2048 characters pass, 2049 do not)', async (dialect) => {
    const g = await startGateway({ upstreamFormat: dialect === 'openai' ? 'anthropic' : 'openai' });
    try {
      const ok = 'm'.repeat(2048);
      g.up.scripts.set(ok, { pieces: [bytesOf(dialect === 'openai' ? 'anthropic-basic' : 'openai-basic')] });
      const long = 'm'.repeat(2049);
      if (dialect === 'openai') {
        const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'k', maxRetries: 0 });
        expect((await client.chat.completions.create({ model: ok, messages: [{ role: 'user', content: 'x' }] })).model).toBe(ok);
        const e = await client.chat.completions.create({ model: long, messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x) as InstanceType<typeof OpenAI.APIError>;
        expect([e.status, e.error]).toEqual([400, { message: 'model: a name of at most 2048 characters, not 2049', type: 'invalid_request_error', code: 'ERR_BAD_REQUEST', param: 'model' }]);
      } else {
        const client = new Anthropic({ baseURL: g.url, apiKey: 'k', maxRetries: 0 });
        expect((await client.messages.create({ model: ok, max_tokens: 9, messages: [{ role: 'user', content: 'x' }] })).model).toBe(ok);
        const e = await client.messages.create({ model: long, max_tokens: 9, messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x) as InstanceType<typeof Anthropic.APIError>;
        expect([e.status, e.error]).toEqual([400, { type: 'error', error: { type: 'invalid_request_error', message: 'model: a name of at most 2048 characters, not 2049' } }]);
      }
      expect(g.up.received.length).toBe(1);
    } finally {
      await g.close();
    }
  });
});

describe('a model name the upstream\'s URL cannot hold (a lone surrogate, for an upstream with the model in its path): the client\'s 400, not a 500', () => {
  withAwsEnv();
  const lone = 'gemini-2.5-flash\ud800';
  const MESSAGE = 'model: the name has a lone surrogate (it is not well-formed Unicode), which the upstream\'s URL cannot hold';

  test.each(['gemini', 'bedrock', 'bedrock-invoke'].flatMap((f) => [true, false].map((s) => [f, s] as const)))('%s upstream (stream: %s): each client API\'s 400 naming the field; the upstream not called', async (format, stream) => {
    const g = await startGateway({ upstreamFormat: format as never });
    try {
      const openai = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'k', maxRetries: 0 });
      const e1 = await openai.chat.completions.create({ model: lone, stream, messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x) as InstanceType<typeof OpenAI.APIError>;
      expect([e1.status, e1.error]).toEqual([400, { message: MESSAGE, type: 'invalid_request_error', code: 'ERR_BAD_REQUEST', param: 'model' }]);
      const anthropic = new Anthropic({ baseURL: g.url, apiKey: 'k', maxRetries: 0 });
      const e2 = await anthropic.messages.create({ model: lone, stream, max_tokens: 9, messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x) as InstanceType<typeof Anthropic.APIError>;
      expect([e2.status, e2.error]).toEqual([400, { type: 'error', error: { type: 'invalid_request_error', message: MESSAGE } }]);
      expect(g.up.received).toEqual([]);
      const m = await metricsAt(`${g.url}/metrics`);
      expect([m.get('gateway_errors_total'), m.get('llm_streams_total{status="failed"}')]).toEqual([0, 0]);
      expect(g.log).toEqual([]);
      // (a name of any other character, paired surrogates among them, goes to the upstream percent-encoded)
      const named = 'modèle-🌦';
      g.up.scripts.set(named, { contentType: format === 'gemini' ? undefined : EVENTSTREAM, pieces: [format === 'gemini' ? bytesOf('gemini-basic') : format === 'bedrock' ? bytesOf('bedrock-basic') : invokeStream(FIXTURES.find((f) => f.name === 'anthropic-basic')!.body)] });
      expect((await openai.chat.completions.create({ model: named, messages: [{ role: 'user', content: 'x' }] })).model).toBe(named);
      expect(g.up.received.length).toBe(1);
    } finally {
      await g.close();
    }
  });
});

describe('a model name with a "." or ".." segment, for an upstream with the model in its path: a 400, not a step out of the path', () => {
  // (`models/../../v1/files` to a gemini upstream went as `/v1beta/models/../../v1/files:streamGenerateContent`,
  // which the upstream's server reads as `/v1/files:…`: a path of its host the client chose, out of
  // the base URL's own path too, with the gateway's key)
  withAwsEnv();
  const MESSAGE = 'model: a name with a "." or ".." segment, which the upstream\'s URL path would read as a step in the path';

  test.each([
    ['gemini', ['..', '.', 'models/../../v1/files', 'tunedModels/../../../admin', 'models/x/./y']],
    ['bedrock', ['..', '.']],
    ['bedrock-invoke', ['..', '.']],
  ] as const)('%s upstream: each client API\'s 400 naming the field, the upstream not called; dots within a segment pass', async (format, names) => {
    const g = await startGateway({ upstreamFormat: format });
    try {
      const openai = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'k', maxRetries: 0 });
      const anthropic = new Anthropic({ baseURL: g.url, apiKey: 'k', maxRetries: 0 });
      for (const model of names) {
        for (const stream of [true, false]) {
          const e1 = await openai.chat.completions.create({ model, stream, messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x) as InstanceType<typeof OpenAI.APIError>;
          expect([model, e1.status, e1.error]).toEqual([model, 400, { message: MESSAGE, type: 'invalid_request_error', code: 'ERR_BAD_REQUEST', param: 'model' }]);
          const e2 = await anthropic.messages.create({ model, stream, max_tokens: 9, messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x) as InstanceType<typeof Anthropic.APIError>;
          expect([model, e2.status, e2.error]).toEqual([model, 400, { type: 'error', error: { type: 'invalid_request_error', message: MESSAGE } }]);
        }
      }
      expect(g.up.received).toEqual([]);
      expect(g.log).toEqual([]);
      // (a name with dots inside a segment is a name: it goes to the upstream)
      const named = 'a..b';
      g.up.scripts.set(named, { contentType: format === 'gemini' ? undefined : EVENTSTREAM, pieces: [format === 'gemini' ? bytesOf('gemini-basic') : format === 'bedrock' ? bytesOf('bedrock-basic') : invokeStream(FIXTURES.find((f) => f.name === 'anthropic-basic')!.body)] });
      expect((await openai.chat.completions.create({ model: named, messages: [{ role: 'user', content: 'x' }] })).model).toBe(named);
      expect(g.up.received.map((r) => r.url.split('?')[0])).toEqual([format === 'gemini' ? '/v1beta/models/a..b:streamGenerateContent'
        : format === 'bedrock' ? '/model/a..b/converse-stream' : '/model/a..b/invoke-with-response-stream']);
    } finally {
      await g.close();
    }
  });
});
