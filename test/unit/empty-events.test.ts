// emptyEvents: the events a stream read that said no part of the answer and were not keep-alives
// (`{}`, a role or an envelope alone, an empty string of text or reasoning, the same usage or finish
// again), whether the core read them to the end (quiet events) or JavaScript did. progressEvents,
// `events - pings - emptyEvents`, is then the events that carried something, what a server's idle
// timeout counts as progress (the gateway's bodyTimeout, decode --idle-timeout). Exact at every
// chunking: whole, every two-piece split, a byte per read, seeded random cuts.
import { describe, expect, it } from 'vitest';
import { type ModelFormat, ModelStream, SseRelay } from '../../bindings/index.js';
import { encodeMessage } from '../helpers/bedrock-fixtures.js';
import { concat, cut, randomCuts, standardChunkings } from '../helpers/random.js';

const enc = new TextEncoder();
const sse = (events: string[]) => events.map((e) => (e.startsWith('event:') || e.startsWith(':') ? `${e}\n\n` : `data: ${e}\n\n`)).join('');
const delta = (d: string, finish = 'null') => `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":${d},"finish_reason":${finish}}]}`;

const cited = (content: string, finish = 'null') => `{"id":"c","object":"chat.completion.chunk","created":1,"model":"sonar","citations":["https://a.example/","https://b.example/"],"search_results":[{"title":"A","url":"https://a.example/"}],"choices":[{"index":0,"delta":{"content":${content}},"finish_reason":${finish}}]}`;
const grounded = (text: string) => `{"candidates":[{"content":{"parts":[{"text":"${text}"}],"role":"model"},"groundingMetadata":{"groundingChunks":[{"web":{"uri":"https://a.example/","title":"A"}}]},"index":0}]}`;

interface Case { name: string; format: ModelFormat; input: string; events: number; pings: number; empty: number }

const cases: Case[] = [
  {
    name: 'OpenAI: empty chunks among the content, the same usage twice',
    format: 'openai',
    input: sse([
      '{}', delta('{"role":"assistant"}'), delta('{"content":""}'), delta('{"content":"Hel"}'), '{}', delta('{"reasoning_content":"hm"}'),
      delta('{"content":"lo"}'), delta('{"content":""}'), ': keep-alive', delta('{}', '"stop"'),
      '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}',
      '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}',
      '[DONE]',
    ]),
    // 12 events ([DONE] one); empty: {}, the role, "", {}, "" again, the same usage again
    events: 12, pings: 0, empty: 6,
  },
  {
    name: 'Anthropic: pings, an unknown event, {}, an empty text delta, a block\'s end',
    format: 'anthropic',
    input: sse([
      'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}',
      'event: ping\ndata: {"type":"ping"}', 'event: foo\ndata: {"type":"foo"}', '{}',
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}',
      'event: ping\ndata: {"type":"ping"}',
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}',
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}',
      'event: message_stop\ndata: {"type":"message_stop"}',
    ]),
    events: 11, pings: 2, empty: 5,
  },
  {
    name: 'Gemini: {} and no candidates among the content',
    format: 'gemini',
    input: sse([
      '{}', '{"candidates":[]}', '{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"index":0}]}', '{}',
      '{"candidates":[{"content":{"parts":[{"text":"!"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"totalTokenCount":5}}',
    ]),
    events: 5, pings: 0, empty: 3,
  },
  {
    name: 'Gemini: usage alone that grows (a thinking model\'s running counts) is something; the same usage again, and an empty text, are not',
    format: 'gemini',
    input: sse([
      '{"usageMetadata":{"promptTokenCount":3,"thoughtsTokenCount":1,"totalTokenCount":4}}', '{"usageMetadata":{"promptTokenCount":3,"thoughtsTokenCount":1,"totalTokenCount":4}}',
      '{"usageMetadata":{"promptTokenCount":3,"thoughtsTokenCount":2,"totalTokenCount":5}}', '{"usageMetadata":{"promptTokenCount":3,"thoughtsTokenCount":2,"totalTokenCount":5}}', '{}',
      '{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"index":0}]}', '{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"index":0}]}',
      '{"candidates":[{"content":{"parts":[{"text":"!"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"thoughtsTokenCount":2,"totalTokenCount":7}}',
    ]),
    events: 8, pings: 0, empty: 4,
  },
  {
    name: 'OpenAI (Perplexity): the same citations and search results in every chunk, with empty text between',
    format: 'openai',
    input: sse([
      cited('"Hi"'), cited('""'), cited('""'), cited('""'), cited('"!"', '"stop"'), '[DONE]',
    ]),
    // (the lists said again as they were, with no text: nothing new)
    events: 6, pings: 0, empty: 3,
  },
  {
    name: 'OpenAI: a call\'s start said again with every fragment, its id and name as they were',
    format: 'openai',
    input: sse([
      delta('{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}'),
      delta('{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}'),
      delta('{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\\"a\\":"}}]}'),
      delta('{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}'),
      delta('{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"1}"}}]}'),
      delta('{}', '"tool_calls"'), '[DONE]',
    ]),
    // (the start once, two fragments, the finish and [DONE]; the start again with no fragment, twice, says nothing)
    events: 7, pings: 0, empty: 2,
  },
  {
    name: 'OpenAI: an answer in audio, its id said again and empty audio data',
    format: 'openai',
    input: sse([
      delta('{"role":"assistant","content":null,"audio":{"id":"audio_1","transcript":""}}'), delta('{"audio":{"data":"AAAA"}}'),
      delta('{"audio":{"id":"audio_1"}}'), delta('{"audio":{"data":""}}'), delta('{"audio":{"transcript":"Hi"}}'),
      delta('{"audio":{"id":"audio_1","expires_at":1796600000}}'), delta('{}', '"stop"'), '[DONE]',
    ]),
    // (the id once, the data, the transcript, the finish and [DONE]; the id again, empty data, and the id again with its expiry)
    events: 8, pings: 0, empty: 3,
  },
  {
    name: 'Gemini: the same grounding metadata in every chunk, with empty text between',
    format: 'gemini',
    input: sse([
      grounded('Hi'), grounded(''), grounded(''), grounded(''),
      '{"candidates":[{"content":{"parts":[{"text":"!"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"totalTokenCount":5}}',
    ]),
    events: 5, pings: 0, empty: 3,
  },
];

type Reader = ModelStream | SseRelay;
const makers: [string, (format: ModelFormat) => Reader][] = [
  ['ModelStream', (format) => new ModelStream({ format })],
  // (near its text limit every event is read in JavaScript, the core's quiet reading off: the same counts)
  ['ModelStream near maxTextBytes', (format) => new ModelStream({ format, maxTextBytes: 16 })],
  ['SseRelay to OpenAI', (format) => new SseRelay({ from: format, to: 'openai' })],
  ['SseRelay to Anthropic', (format) => new SseRelay({ from: format, to: 'anthropic' })],
];

function counts(make: (f: ModelFormat) => Reader, format: ModelFormat, chunks: Uint8Array[]) {
  const r = make(format);
  const progress: number[] = [];
  for (const c of chunks) {
    r.push(c);
    // (after each read, the events less the pings and the empty ones)
    expect(r.progressEvents).toBe(r.events - r.pings - r.emptyEvents);
    progress.push(r.progressEvents);
  }
  r.flush();
  const got = { events: r.events, pings: r.pings, empty: r.emptyEvents, progress: r.progressEvents, status: r.status };
  r.dispose();
  return { got, progress };
}

describe('emptyEvents', () => {
  for (const [who, make] of makers) {
    for (const c of cases) {
      it(`${who}: ${c.name}`, () => {
        const bytes = enc.encode(c.input);
        const want = { events: c.events, pings: c.pings, empty: c.empty, progress: c.events - c.pings - c.empty, status: 'done' };
        let runs = 0;
        for (const chunks of standardChunkings(bytes)) {
          const { got, progress } = counts(make, c.format, chunks);
          expect(got, `${chunks.length} reads`).toEqual(want);
          // (progress never goes back)
          for (let i = 1; i < progress.length; i++) expect(progress[i]).toBeGreaterThanOrEqual(progress[i - 1]);
          runs++;
        }
        expect(runs).toBe(bytes.length + 3);
        const seed = 0xe3 + bytes.length;
        let x = seed;
        const next = () => ((x = (x * 1103515245 + 12345) >>> 0) / 2 ** 32);
        for (let i = 0; i < 40; i++) expect(counts(make, c.format, cut(bytes, randomCuts(bytes, next, 24))).got, `seed ${seed}, run ${i}`).toEqual(want);
      });
    }
  }

  it('after the completion, anything but the usage that a format sends after it (Bedrock\'s metadata) says nothing', () => {
    const said = (event: string, payload: string) => encodeMessage({ event, payload });
    const stop = concat([
      said('messageStart', '{"role":"assistant"}'), said('contentBlockDelta', '{"contentBlockIndex":0,"delta":{"text":"Oui"}}'),
      said('contentBlockStop', '{"contentBlockIndex":0}'), said('messageStop', '{"stopReason":"end_turn"}'),
    ]);
    const junk = concat([said('messageStop', '{"stopReason":"end_turn"}'), said('contentBlockStop', '{"contentBlockIndex":0}'), said('somethingElse', '{}')]);
    const metadata = said('metadata', '{"usage":{"inputTokens":3,"outputTokens":1,"totalTokens":4},"metrics":{"latencyMs":1}}');
    for (const make of [() => new ModelStream({ format: 'bedrock' }), () => new SseRelay({ from: 'bedrock', to: 'openai' }), () => new SseRelay({ from: 'bedrock', to: 'anthropic' })]) {
      const r = make();
      r.push(stop);
      // (the start, its role alone, and the block's end are empty; the text and the stop are not)
      expect([r.events, r.emptyEvents, r.status]).toEqual([4, 2, 'done']);
      const before = 2;
      for (let i = 0; i < 10; i++) r.push(junk);
      expect([r.events, r.emptyEvents]).toEqual([34, 32]);
      r.push(metadata);
      expect([r.events - r.pings - r.emptyEvents, r.progressEvents]).toEqual([before + 1, before + 1]);
      // (the same metadata again, for ever, is no news: an upstream that says it holds no stream)
      for (let i = 0; i < 5; i++) r.push(metadata);
      expect([r.events, r.emptyEvents, r.progressEvents]).toEqual([40, 37, before + 1]);
      r.flush();
      expect([r.status, r.usage?.inputTokens]).toEqual(['done', 3]);
      r.dispose();
    }
    // (OpenAI: an event after its [DONE])
    const m = new ModelStream({ format: 'openai' });
    m.push(enc.encode(sse([delta('{"content":"x"}', '"stop"'), '[DONE]', '{}', delta('{"content":"y"}')])));
    expect([m.events, m.emptyEvents, m.status]).toEqual([4, 2, 'done']);
    m.dispose();
  });

  it('a stream of nothing but {} makes no progress; one of reasoning alone, or of usage alone that changes, does', () => {
    const r = new SseRelay({ from: 'openai', to: 'openai' });
    r.push(enc.encode(sse(Array(50).fill('{}'))));
    expect([r.events, r.emptyEvents]).toEqual([50, 50]);
    r.push(enc.encode(sse(Array(50).fill(delta('{"content":""}')))));
    expect([r.events, r.emptyEvents]).toEqual([100, 100]);
    for (let i = 0; i < 20; i++) r.push(enc.encode(sse([delta(`{"reasoning_content":"step ${i}. "}`)])));
    expect([r.events, r.emptyEvents]).toEqual([120, 100]);
    for (let i = 1; i <= 5; i++) r.push(enc.encode(sse([`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":${i},"total_tokens":${3 + i}}}`])));
    expect([r.events, r.emptyEvents]).toEqual([125, 100]);
    r.dispose();
  });
});
