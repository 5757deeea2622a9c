// A relay to OpenAI's clients from another format writes the sources cited at an address as
// `url_citation` annotations with every field OpenAI's typed clients require: `title` ("" when the
// provider gave none), `start_index` 0 and `end_index` the content's length in characters (code
// points). The relay counts the characters of the text it writes (in the core, on the events it
// writes itself and on those JS reads); the oracle is openai-node's content, counted by
// JavaScript's string iterator, for text of every UTF-8 length, escapes, surrogate pairs split
// across deltas and lone surrogates, at every cut and in random reads. (In the scalar project too:
// the core counts with vectors or words.)
import { describe, expect, it } from 'vitest';
import { openAiAnnotations, SseRelay } from '../../bindings/index.js';
import { codec, encodeMessage } from '../helpers/bedrock-fixtures.js';
import { concat, cut, randomCuts, rng, SEED } from '../helpers/random.js';
import { openaiFinal, sameAtEveryCut } from '../helpers/sdk-clients.js';

const enc = new TextEncoder();
const URL = 'https://example.org/z?a=1&b=2';

// Text deltas as the JSON string bodies they come as: raw UTF-8 of 1 to 4 bytes, runs past a
// vector's 16 bytes, escapes, a surrogate pair split across two deltas, lone surrogates.
const PIECES = [
  'Zürich ', '日本 ', '😀', '\\u00e9\\n\\"\\\\', 'The quick brown fox jumps — über straße, 東京タワー, 🎉🎉 done. ',
  'x\\ud83d', '', '\\ude80!', '\\ud800y', '\\udc00', '0123456789abcdefghij', 'é'.repeat(17), '\\u2028\\t',
];

const sse = (type: string, data: string) => `event: ${type}\ndata: ${data}\n\n`;

/** Anthropic: a text block with its citation first, then each piece as a text_delta (events the core writes itself). */
function anthropic(pieces: string[]): string {
  return sse('message_start', '{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}')
    + sse('content_block_start', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"","citations":[]}}')
    + sse('content_block_delta', `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","cited_text":"c","url":"${URL}","title":"Z","encrypted_index":"e"}}}`)
    + pieces.map((p) => sse('content_block_delta', `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${p}"}}`)).join('')
    + sse('content_block_stop', '{"type":"content_block_stop","index":0}')
    + sse('message_delta', '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}')
    + sse('message_stop', '{"type":"message_stop"}');
}

/**
 * Gemini: a chunk per piece, every third with its grounding source (untitled: read in JS, the
 * others by the core), the last with it too and the finish.
 */
function gemini(pieces: string[]): string {
  const chunk = (text: string, more = '') => `data: {"candidates":[{"content":{"parts":[{"text":"${text}"}],"role":"model"},"index":0${more}}]}\r\n\r\n`;
  const grounded = `,"groundingMetadata":{"groundingChunks":[{"web":{"uri":"${URL}"}}]}`;
  return pieces.slice(0, -1).map((p, i) => chunk(p, i % 3 === 0 ? grounded : '')).join('')
    + chunk(pieces.at(-1)!, `,"finishReason":"STOP"${grounded}`);
}

/** Responses: the pieces as output_text deltas, then the annotation (its own indexes, in its part) and the completion. */
function responses(pieces: string[]): string {
  return sse('response.created', '{"type":"response.created","response":{"id":"resp_1","status":"in_progress","output":[]}}')
    + pieces.map((p) => sse('response.output_text.delta', `{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"${p}"}`)).join('')
    + sse('response.output_text.annotation.added', `{"type":"response.output_text.annotation.added","item_id":"m","output_index":0,"content_index":0,"annotation_index":0,"annotation":{"type":"url_citation","url":"${URL}","title":"Z","start_index":2,"end_index":5}}`)
    + sse('response.completed', '{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[]}}');
}

/** Bedrock: the pieces as text deltas of a block, and a web citation in it. */
function bedrock(pieces: string[]): Uint8Array {
  return concat([
    { event: 'messageStart', payload: '{"role":"assistant"}' },
    ...pieces.map((p) => ({ event: 'contentBlockDelta', payload: `{"contentBlockIndex":0,"delta":{"text":"${p}"}}` })),
    { event: 'contentBlockDelta', payload: `{"contentBlockIndex":0,"delta":{"citation":{"title":"Z","location":{"web":{"url":"${URL}","domain":"example.org"}}}}}` },
    { event: 'contentBlockStop', payload: '{"contentBlockIndex":0}' },
    { event: 'messageStop', payload: '{"stopReason":"end_turn"}' },
  ].map(encodeMessage));
}

/** Claude on Bedrock: Anthropic's events, each the base64 of a chunk message. */
function bedrockInvoke(pieces: string[]): Uint8Array {
  const events = anthropic(pieces).split('\n\n').filter((e) => e !== '').map((e) => e.slice(e.indexOf('data: ') + 6));
  return concat(events.map((json) => codec.encode({
    headers: { ':event-type': { type: 'string', value: 'chunk' }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: 'event' } },
    body: enc.encode(`{"bytes":"${Buffer.from(json).toString('base64')}","p":"abc"}`),
  })));
}

const STREAMS = [
  { from: 'anthropic' as const, bytes: (p: string[]) => enc.encode(anthropic(p)), title: 'Z' },
  { from: 'gemini' as const, bytes: (p: string[]) => enc.encode(gemini(p)), title: '' },
  { from: 'openai-responses' as const, bytes: (p: string[]) => enc.encode(responses(p)), title: 'Z' },
  { from: 'bedrock' as const, bytes: bedrock, title: 'Z' },
  { from: 'bedrock-invoke' as const, bytes: bedrockInvoke, title: 'Z' },
];

const relay = (from: (typeof STREAMS)[number]['from']) => new SseRelay(from === 'bedrock-invoke' ? { from, inner: 'anthropic', to: 'openai' } : { from, to: 'openai' });

/** openai-node's content and annotations of what a relay wrote for these reads. */
async function read(from: (typeof STREAMS)[number]['from'], chunks: Uint8Array[]) {
  const r = relay(from);
  const m = (await openaiFinal(concat([...chunks.map((c) => r.push(c).slice()), r.flush().slice()]))).choices[0].message as { content: string; annotations?: unknown };
  return { content: m.content, annotations: m.annotations, textBytes: r.textBytes };
}

/** What the client should have: the text of the pieces, and the annotation spanning all of it. */
function expected(pieces: string[], title: string) {
  const content = JSON.parse(`"${pieces.join('')}"`) as string;
  // (and the relay's textBytes: the content's UTF-8, a lone surrogate as U+FFFD, as TextEncoder writes it)
  return { content, annotations: [{ type: 'url_citation', url_citation: { end_index: [...content].length, start_index: 0, title, url: URL } }], textBytes: enc.encode(content).length };
}

describe("a relay's annotations to OpenAI's clients: every field, the whole content's characters", () => {
  for (const { from, bytes, title } of STREAMS) {
    it(`${from}: end_index is the content's characters as openai-node has it, at every cut`, async () => {
      const got = await sameAtEveryCut(bytes(PIECES), () => relay(from), async (b) => {
        const m = (await openaiFinal(b)).choices[0].message as { content: string; annotations?: unknown };
        return { content: m.content, annotations: m.annotations };
      });
      const { textBytes: _, ...want } = expected(PIECES, title);
      expect(got).toEqual(want);
      expect(await read(from, [bytes(PIECES)])).toEqual(expected(PIECES, title));
    });

    it(`${from}: a lone high surrogate at the end is one character`, async () => {
      const pieces = ['ab', 'c\\ud83d'];
      expect(await read(from, [bytes(pieces)])).toEqual(expected(pieces, title));
    });
  }

  it(`random text in random deltas and random reads (seed ${SEED})`, async () => {
    const next = rng(SEED);
    const ALPHABET = ['a', ' ', 'ü', 'ß', '東', 'タ', '😀', '🎉', '\\n', '\\"', '\\u00e9', '\\u6771', '\\ud83d\\ude00', '\\ud800', '\\udfff', 'abcdefghijklmnopqr', ''];
    for (let round = 0; round < 100; round++) {
      // (a pair of escapes may be split by a delta's end: pieces cut the joined text at any escape's edge)
      const atoms = Array.from({ length: 1 + Math.floor(next() * 60) }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]);
      const pieces: string[] = [];
      for (const a of atoms) {
        if (pieces.length === 0 || next() < 0.3) pieces.push(a);
        else pieces[pieces.length - 1] += a;
      }
      for (const s of STREAMS) {
        const b = s.bytes(pieces);
        const chunks = cut(b, randomCuts(b, next, 1 + Math.floor(next() * 64)));
        expect(await read(s.from, chunks), `seed ${SEED}, round ${round}, ${s.from}: ${JSON.stringify(pieces)}`).toEqual(expected(pieces, s.title));
      }
    }
  });

  it('openAiAnnotations: each address once, in order, its title or "", the span given', () => {
    expect(openAiAnnotations([{ url: 'a', title: 'A' }, { title: 'no address' }, { url: 'b' }, { url: 'a', title: 'again' }], 7)).toEqual([
      { type: 'url_citation', url_citation: { end_index: 7, start_index: 0, title: 'A', url: 'a' } },
      { type: 'url_citation', url_citation: { end_index: 7, start_index: 0, title: '', url: 'b' } },
    ]);
    expect(openAiAnnotations([], 3)).toEqual([]);
  });
});
