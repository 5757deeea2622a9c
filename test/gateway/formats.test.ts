// The gateway (examples/gateway/server.mjs) in front of a fake upstream of every format, with every
// fixture of test/helpers/model-fixtures.ts as the upstream's body:
// - cut in two at every awkward byte (inside a character, around line ends, inside escapes and
//   field names), one request each: the client's bytes are exactly SseRelay's reading of the
//   whole body, translated chunks naming the model asked for (their ids and times aside; an
//   error's offset aside when the cut lies inside the failing event, where the contract makes it
//   exact only for an event read whole);
// - cut at every awkward byte at once, and at random (seeded) cuts, read by the official openai
//   client: exactly the upstream's text, no error after a completed upstream, and the upstream's
//   error code otherwise;
// - a whole answer (`stream: false`): the text assembled, or the upstream's error with status 502;
// - the request as each upstream receives it (path, body, headers).
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FIXTURES, FORMATS, type Fixture, type ModelFormat } from '../helpers/model-fixtures.js';
import { SEED, cut, randomCuts, rng } from '../helpers/random.js';
import { Oracle } from '../helpers/relay-oracle.js';
import {
  awkwardCuts, chat, clientText, expectedWire, failingFrame, normalizeIds, normalizeOffsets, pool, post, readStream, startGateway, type Running,
} from './support.js';

// The relay follows choice 0: the choice-1 reading of a body is ModelStream's alone.
const fixtures = FIXTURES.filter((f) => f.choice === undefined);
const byFormat = (format: ModelFormat) => fixtures.filter((f) => f.format === format);

describe.each(FORMATS.map((f) => [f] as const))('the gateway in front of a %s upstream', (format) => {
  let g: Running;
  let client: OpenAI;
  beforeAll(async () => {
    g = await startGateway({ upstreamFormat: format });
    client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'test-key', maxRetries: 0, timeout: 20_000 });
  });
  afterAll(async () => {
    await g.close();
  });

  test('every fixture cut in two at every awkward byte: the exact bytes of the relay', async () => {
    const jobs: { f: Fixture; at: number; name: string }[] = [];
    for (const f of byFormat(format)) for (const at of awkwardCuts(f.bytes)) jobs.push({ f, at, name: `${f.name}@${at}` });
    expect(jobs.length).toBeGreaterThan(20);
    for (const { f, at, name } of jobs) g.up.scripts.set(name, { pieces: cut(f.bytes, [at]) });
    const failures: string[] = [];
    await pool(jobs, 12, async ({ f, at, name }) => {
      const r = await post(g.url, chat(name));
      const fail = failingFrame(f);
      const inside = fail !== undefined && at > fail.start && at < fail.end;
      const norm = (s: string) => (inside ? normalizeOffsets(s) : s);
      const got = norm(normalizeIds(r.body.toString('utf8')));
      if (r.status !== 200 || r.headers['content-type'] !== 'text/event-stream; charset=utf-8') failures.push(`${name}: HTTP ${r.status} ${String(r.headers['content-type'])}`);
      else if (got !== norm(expectedWire(f, name))) failures.push(`${name}: ${JSON.stringify(got.slice(-300))}`);
    });
    expect(failures).toEqual([]);
    for (const { name } of jobs) g.up.scripts.delete(name);
    await g.up.noSockets();
  });

  test.each(byFormat(format).map((f) => [f.name, f] as const))('%s through the openai client: cut at every awkward byte, and at random (seed printed)', async (name, f) => {
    const next = rng(SEED + f.bytes.length);
    const cuttings: [string, number[]][] = [['every awkward byte', awkwardCuts(f.bytes)]];
    for (let round = 0; round < 3; round++) cuttings.push([`seed ${SEED} round ${round}`, randomCuts(f.bytes, next, [3, 17, 90][round])]);
    for (const [how, at] of cuttings) {
      const why = `${name}, ${how} (${at.length} cuts: ${at.slice(0, 12).join(',')}${at.length > 12 ? ',…' : ''})`;
      g.up.scripts.set(name, { pieces: cut(f.bytes, at) });
      const { text, thrown } = await readStream(client, name);
      expect(text, why).toBe(clientText(f));
      if (f.expected.status === 'done') expect(thrown, why).toBeUndefined();
      else {
        expect(thrown, why).toBeInstanceOf(OpenAI.APIError);
        const err = thrown as InstanceType<typeof OpenAI.APIError>;
        expect(err.code, why).toBe(f.expected.error!.code);
        if (f.expected.error!.message !== undefined) expect(err.message, why).toContain(f.expected.error!.message);
      }
    }
    g.up.scripts.delete(name);
  });

  test('a whole answer (stream: false)', async () => {
    for (const f of byFormat(format)) {
      if (format === 'openai') {
        // OpenAI's whole answer passes through as it is, with its status
        const completion = { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: clientText(f) }, finish_reason: 'stop' }] };
        g.up.scripts.set(f.name, { contentType: 'application/json', pieces: [Buffer.from(JSON.stringify(completion))] });
        const r = await client.chat.completions.create({ model: f.name, messages: [{ role: 'user', content: 'Bonjour' }] });
        expect(r).toEqual(completion);
        expect((g.up.received.at(-1)!.body as { stream?: boolean }).stream ?? false).toBe(false);
        continue;
      }
      g.up.scripts.set(f.name, { pieces: cut(f.bytes, awkwardCuts(f.bytes)) });
      const calls = f.expected.toolCalls ?? [];
      if (f.expected.status === 'done' && calls.every((c) => c.valid)) {
        const r = await client.chat.completions.create({ model: f.name, messages: [{ role: 'user', content: 'Bonjour' }] });
        const want = new Oracle(f, 'openai').expected();
        expect(r.object, f.name).toBe('chat.completion');
        const message: Record<string, unknown> = { role: 'assistant', content: calls.length > 0 && f.expected.text === '' ? null : f.expected.text };
        // (the reasoning as the relay's reasoning_content deltas have it, joined)
        if (want.reasoning !== '') message.reasoning_content = want.reasoning;
        if (calls.length > 0) {
          message.tool_calls = calls.map((c) => ({
            id: c.id === '' ? expect.stringMatching(/^call_gw/) : c.id, type: 'function', function: { name: c.name, arguments: c.arguments },
            ...(c.signature !== undefined ? { extra_content: { google: { thought_signature: c.signature } } } : {}),
          }));
        }
        // (Gemini's sources placed in the text: a url_citation at each span)
        if (f.expected.groundedSpans !== undefined) {
          message.annotations = f.expected.groundedSpans.map((g) => ({ type: 'url_citation', url_citation: { end_index: g.end, start_index: g.start, title: g.title, url: g.url } }));
        }
        expect(r.choices, f.name).toEqual([{ index: 0, message, finish_reason: want.finish }]);
        // the usage in OpenAI's words, as the relay writes it
        expect(r.usage ?? null, f.name).toEqual(want.usage);
      } else {
        const e = await client.chat.completions.create({ model: f.name, messages: [{ role: 'user', content: 'Bonjour' }] }).catch((x: unknown) => x);
        expect(e, f.name).toBeInstanceOf(OpenAI.APIError);
        expect((e as InstanceType<typeof OpenAI.APIError>).status, f.name).toBe(502);
        expect((e as InstanceType<typeof OpenAI.APIError>).code, f.name).toBe(f.expected.error?.code ?? 'ERR_BAD_ARGUMENTS');
      }
      // read from the upstream's stream, whatever the client asked
      expect((g.up.received.at(-1)!.body as { stream?: boolean }).stream ?? true, f.name).toBe(true);
    }
  });
});

describe('the upstream request of each format', () => {
  let g: Running;
  afterAll(async () => {
    await g?.close();
  });

  const cases: [ModelFormat, string, (body: Record<string, unknown>, headers: Record<string, unknown>) => void][] = [
    ['openai', '/v1/chat/completions', (b, h) => {
      expect(b).toEqual({ model: 'probe', stream: true, max_tokens: 5, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Bonjour' }] });
      expect(h.authorization).toBe('Bearer sk-test');
    }],
    ['openai-responses', '/v1/responses', (b, h) => {
      expect(b).toEqual({ model: 'probe', stream: true, max_output_tokens: 5, store: false, input: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Bonjour' }] });
      expect(h.authorization).toBe('Bearer sk-test');
    }],
    ['anthropic', '/v1/messages', (b, h) => {
      expect(b).toEqual({ model: 'probe', stream: true, max_tokens: 5, system: 'Be brief.', messages: [{ role: 'user', content: 'Bonjour' }] });
      expect(h['x-api-key']).toBe('sk-test');
      expect(h['anthropic-version']).toBe('2023-06-01');
      expect(h.authorization).toBeUndefined();
    }],
    ['ollama', '/api/chat', (b) => {
      expect(b).toEqual({ model: 'probe', stream: true, options: { num_predict: 5 }, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Bonjour' }] });
    }],
    ['ddg', '/duckchat/v1/chat?x=1', (b) => {
      expect(b).toEqual({ model: 'probe', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Bonjour' }] });
    }],
  ];

  test.each(cases)('%s: %s', async (format, path, check) => {
    await g?.close();
    // the ddg base URL is the endpoint itself
    g = await startGateway({ upstreamFormat: format }, format === 'ddg' ? '/duckchat/v1/chat?x=1' : '');
    const f = fixtures.find((x) => x.format === format && x.expected.status === 'done')!;
    g.up.scripts.set('probe', { pieces: [f.bytes] });
    const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'probe', stream: true, max_tokens: 5, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Bonjour' }],
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe(clientText(f));
    const got = g.up.received.at(-1)!;
    expect(got.method).toBe('POST');
    expect(got.url).toBe(path);
    check(got.body as Record<string, unknown>, got.headers);
  });
});
