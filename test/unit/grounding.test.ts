// Gemini's grounding read whole (Grounding with Google Search, the URL context tool): each
// source with the spans of the answer it backs (`groundingSupports`, in bytes of the answer's
// UTF-8 as Gemini counts them, placed in UTF-16 units of the stream's text), the queries searched
// and the Search Suggestions an app must show (`ModelStream.grounding`), the pages the URL context
// tool retrieved. The fixture `gemini-grounded` (test/helpers/model-fixtures.ts): non-ASCII text
// over chunks and parts, so that bytes and units differ, the metadata in the last chunk.
import OpenAI from 'openai';
import { describe, expect, it, vi } from 'vitest';
import { type Citation, type Grounding, ModelEventReader, ModelPartReader, ModelStream, ModelStreamError, SseRelay, wholeAnswer } from '../../bindings/index.js';
import { FIXTURES } from '../helpers/model-fixtures.js';
import { SEED, cut, randomCuts, rng, standardChunkings } from '../helpers/random.js';
import { openaiFinal, sameAtEveryCut } from '../helpers/sdk-clients.js';
import { thrown } from '../helpers/thrown.js';

const enc = new TextEncoder();
const FIXTURE = FIXTURES.find((f) => f.name === 'gemini-grounded')!;
const TEXT = FIXTURE.expected.text;
const REDIRECT = 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQH';
const web = (n: number, title: string) => ({ web: { uri: `${REDIRECT}${n}`, title } });

// (the three sentences: bytes 0–73, 74–137, 138–171 of the answer's UTF-8 as the last chunk says
// them; UTF-16 units 0–68, 69–123, 124–157: „“ and the narrow no-break space are 3 bytes and 1
// unit, ü and ö 2 and 1, the flag 8 and 4)
const FIRST = 'Zürich ist mit rund 443\u202f000 Einwohnern die größte Stadt der Schweiz.';
const SECOND = 'Der Name geht auf das keltische „Turicum“ zurück 🇨🇭.';
const THIRD = 'Die Altstadt liegt an der Limmat.';
const CITATIONS: Citation[] = [
  { url: `${REDIRECT}1`, title: 'stadt-zuerich.ch', source: web(1, 'stadt-zuerich.ch'), spans: [{ start: 0, end: 68, confidence: 0.95 }] },
  { url: `${REDIRECT}2`, title: 'wikipedia.org', source: web(2, 'wikipedia.org'), spans: [{ start: 0, end: 68, confidence: 0.81 }, { start: 69, end: 123 }] },
  { url: `${REDIRECT}3`, title: 'nzz.ch', source: web(3, 'nzz.ch'), spans: [{ start: 69, end: 123 }, { start: 124, end: 157 }] },
];
const GROUNDING: Grounding = {
  queries: ['Zürich Einwohner 2025', 'Zürich Name Herkunft Turicum'],
  searchSuggestions: '<style>\n.container { display: flex; }\n</style>\n<div class="container"><a class="chip" href="https://www.google.com/search?q=Z%C3%BCrich+Einwohner">Zürich Einwohner</a></div>\n',
};

/** The fixture's chunkings: whole, every split, dripped, and seeded random cuts. */
function* chunkings(bytes: Uint8Array): Generator<Uint8Array[]> {
  yield* standardChunkings(bytes);
  const next = rng(SEED);
  for (let i = 0; i < 50; i++) yield cut(bytes, randomCuts(bytes, next, 1 + (i % 40)));
}

describe('Gemini grounding: sources placed in the answer', () => {
  it('the spans are the sentences the supports name', () => {
    expect([TEXT.slice(0, 68), TEXT.slice(69, 123), TEXT.slice(124, 157)]).toEqual([FIRST, SECOND, THIRD]);
  });

  for (const raw of [false, true]) {
    it(`ModelStream${raw ? ', raw' : ''}: each source with its spans, and the searches, at every chunking (seed ${SEED})`, () => {
      for (const chunks of chunkings(FIXTURE.bytes)) {
        const m = new ModelStream({ format: 'gemini', raw });
        let text = '';
        for (const c of chunks) text += m.push(c);
        // (placed at the completion, in the push that brought it)
        expect(m.citations, `${chunks.length} reads, seed ${SEED}`).toEqual(CITATIONS);
        text += m.flush();
        expect(text).toBe(TEXT);
        expect(m.grounding).toEqual(GROUNDING);
        const r = m.finish();
        expect(r.citations).toEqual(CITATIONS);
        expect(r.grounding).toEqual(GROUNDING);
      }
    });
  }

  it('ModelPartReader: the citation parts have their spans, at every chunking', () => {
    for (const chunks of chunkings(FIXTURE.bytes)) {
      const r = new ModelPartReader(new ModelStream({ format: 'gemini' }));
      const parts = [...chunks.flatMap((c) => r.push(c)), ...r.flush()];
      expect(parts.flatMap((p) => (p.type === 'citation' ? [p.citation] : []))).toEqual(CITATIONS);
    }
  });

  it('ModelEventReader: the last event has the sources and the searches, without spans (an event is not the whole text)', () => {
    const r = new ModelEventReader({ format: 'gemini' });
    const readings = FIXTURE.body.split(/(?<=\r\n\r\n)/).map((e) => r.read(e.slice(6).trimEnd()));
    expect(readings.slice(0, -1).every((x) => x.citations === undefined && x.grounding === undefined)).toBe(true);
    expect(readings.at(-1)!.citations).toEqual(CITATIONS.map(({ spans: _, ...c }) => c));
    expect(readings.at(-1)!.grounding).toEqual(GROUNDING);
  });

  it('a span is placed only where its bytes fall on characters and its text is there: never elsewhere', () => {
    const chunk = (text: string, more: object = {}) => `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text }], role: 'model' }, index: 0, ...more }] })}\r\n\r\n`;
    const supports = [
      { segment: { startIndex: 0, endIndex: 7, text: 'Grüße,' }, groundingChunkIndices: [0] }, // (bytes 0–7: "Grüße," is 8)
      { segment: { startIndex: 0, endIndex: 8, text: 'Grüße,' }, groundingChunkIndices: [0] },
      { segment: { startIndex: 9, endIndex: 11, text: 'Welt' }, groundingChunkIndices: [0] }, // (the right start, another text: a Part other than the answer's)
      { segment: { partIndex: 1, startIndex: 9, endIndex: 14, text: 'Welt!' }, groundingChunkIndices: [0, 5] }, // (no chunk 5)
      { segment: { startIndex: 9, endIndex: 90 }, groundingChunkIndices: [0] }, // (past the end)
      { segment: { startIndex: 2, endIndex: 4 }, groundingChunkIndices: [0] }, // (no text to check: placed by its bytes)
      { segment: { startIndex: 3, endIndex: 5 }, groundingChunkIndices: [0] }, // (inside ü)
    ];
    const body = chunk('Grüße, ') + chunk('Welt!', { finishReason: 'STOP', groundingMetadata: { groundingChunks: [{ web: { uri: 'https://a.example/', title: 'A' } }], groundingSupports: supports } });
    const m = new ModelStream({ format: 'gemini' });
    expect(m.push(enc.encode(body)) + m.flush()).toBe('Grüße, Welt!');
    expect(m.citations).toEqual([{ url: 'https://a.example/', title: 'A', source: { web: { uri: 'https://a.example/', title: 'A' } }, spans: [{ start: 0, end: 6 }, { start: 7, end: 12 }, { start: 2, end: 3 }] }]);
  });

  it('after text NFC changed, a span is placed in the raw text only (normalize: false), never elsewhere in the NFC text', () => {
    // (e and U+0301: 3 bytes and 2 units as sent, é's 2 bytes and 1 unit in NFC)
    const text = 'Cafe\u0301 ok. Zürich.';
    const support = { segment: { startIndex: 11, endIndex: 19, text: 'Zürich.' }, groundingChunkIndices: [0] };
    const body = `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text }], role: 'model' }, finishReason: 'STOP', index: 0, groundingMetadata: { groundingChunks: [{ web: { uri: 'https://a.example/' } }], groundingSupports: [support] } }] })}\r\n\r\n`;
    for (const [normalize, spans] of [[false, [{ start: 10, end: 17 }]], ['NFC', undefined]] as const) {
      const m = new ModelStream({ format: 'gemini', normalize });
      const got = m.push(enc.encode(body)) + m.flush();
      expect(got).toBe(normalize === 'NFC' ? text.normalize('NFC') : text);
      expect(m.citations[0].spans).toEqual(spans);
      if (spans !== undefined) expect(got.slice(spans[0].start, spans[0].end)).toBe('Zürich.');
    }
  });

  it('metadata said again in a later chunk: the last is read, the same again is no news; a stream cut short places its spans at its end', () => {
    const meta = (end: number) => ({ groundingChunks: [{ web: { uri: 'https://a.example/', title: 'A' } }], groundingSupports: [{ segment: { endIndex: end }, groundingChunkIndices: [0] }], webSearchQueries: [`q${end}`] });
    const chunk = (text: string, more: object) => `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text }], role: 'model' }, index: 0, ...more }] })}\r\n\r\n`;
    // (the second chunk no news: no text, its metadata the first's)
    const body = chunk('Ä', { groundingMetadata: meta(2) }) + chunk('', { groundingMetadata: meta(2) }) + chunk('bc', { groundingMetadata: meta(4) });
    for (const chunks of standardChunkings(enc.encode(body))) {
      const m = new ModelStream({ format: 'gemini', eof: 'allow' });
      let text = '';
      for (const c of chunks) text += m.push(c);
      expect(m.citations[0].spans).toBeUndefined(); // (not whole yet)
      text += m.flush();
      expect(text).toBe('Äbc');
      expect(m.status).toBe('truncated');
      expect(m.emptyEvents).toBe(1);
      expect(m.citations).toEqual([{ url: 'https://a.example/', title: 'A', source: { web: { uri: 'https://a.example/', title: 'A' } }, spans: [{ start: 0, end: 3 }] }]);
      expect(m.grounding).toEqual({ queries: ['q4'] });
    }
  });

  it('the URL context tool: the pages it retrieved, with their status', () => {
    const urlMetadata = [{ retrievedUrl: 'https://ai.google.dev/gemini-api/docs/url-context', urlRetrievalStatus: 'URL_RETRIEVAL_STATUS_SUCCESS' }, { retrievedUrl: 'https://x.example/', urlRetrievalStatus: 'URL_RETRIEVAL_STATUS_ERROR' }];
    const body = `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: 'Seen.' }], role: 'model' }, finishReason: 'STOP', index: 0, urlContextMetadata: { urlMetadata } }] })}\r\n\r\n`;
    for (const chunks of standardChunkings(enc.encode(body))) {
      const m = new ModelStream({ format: 'gemini' });
      for (const c of chunks) m.push(c);
      m.flush();
      expect(m.grounding).toEqual({ queries: [], urls: urlMetadata.map((u) => ({ url: u.retrievedUrl, status: u.urlRetrievalStatus })) });
      expect(m.citations).toEqual([]);
    }
  });

  it('the metadata counts toward maxReasoningBytes: past it the stream stops at the event that brings it', () => {
    const last = FIXTURE.body.lastIndexOf('data: ');
    const at = enc.encode(FIXTURE.body.slice(0, last + 6)).length;
    // (the thoughts and the signature as sent, then the metadata's JSON text whole: 1 byte short of all)
    const b = FIXTURE.body;
    const thought = b.slice(b.indexOf('**Checking'), b.indexOf('","thought": true'));
    const meta = b.slice(b.indexOf('{"searchEntryPoint"'), b.indexOf(',"index": 0}]', last));
    const max = enc.encode(thought).length + enc.encode('CrcBAdHtim8Vq3e+').length + enc.encode(meta).length - 1;
    for (const chunks of standardChunkings(FIXTURE.bytes)) {
      const m = new ModelStream({ format: 'gemini', maxReasoningBytes: max });
      const err = thrown(() => {
        for (const c of chunks) m.push(c);
        m.flush();
      });
      expect(err).toBeInstanceOf(ModelStreamError);
      expect(err).toMatchObject({ code: 'ERR_REASONING_TOO_LONG', offset: at });
      expect(m.citations).toEqual([]);
      expect(m.grounding).toBeUndefined();
    }
    const m = new ModelStream({ format: 'gemini', maxReasoningBytes: max + 1 });
    m.push(FIXTURE.bytes);
    m.flush();
    expect(m.citations).toEqual(CITATIONS);
  });
});

describe("Gemini grounding for OpenAI's clients", () => {
  // (openai-node reads the relay's annotations: the relay keeps no text, so each source spans the
  // whole content, its end in characters, as for any other format)
  const chars = [...TEXT].length;
  it("the relay's annotations, read by openai-node at every cut: each source once, over the whole content", async () => {
    const got = await sameAtEveryCut(FIXTURE.bytes, () => new SseRelay({ from: 'gemini', to: 'openai' }), async (b) => {
      const m = (await openaiFinal(b)).choices[0].message as { content: string | null; annotations?: unknown };
      return { text: m.content, annotations: m.annotations };
    });
    expect(got).toEqual({
      text: TEXT,
      annotations: CITATIONS.map((c) => ({ type: 'url_citation', url_citation: { end_index: chars, start_index: 0, title: c.title, url: c.url } })),
    });
  });

  it('the whole answer: a url_citation at each span, in characters, as openai-node reads it', async () => {
    const m = new ModelStream({ format: 'gemini' });
    const text = m.push(FIXTURE.bytes) + m.flush();
    const body = JSON.stringify(wholeAnswer(m, text));
    const c = new OpenAI({ apiKey: 'test', baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0, fetch: async () => new Response(body, { headers: { 'content-type': 'application/json' } }) });
    const got = (await c.chat.completions.create({ model: 'm', messages: [] })).choices[0].message;
    // (characters: the flag is two, where it is four UTF-16 units)
    const a = (n: number, title: string, start: number, end: number) => ({ type: 'url_citation', url_citation: { end_index: end, start_index: start, title, url: `${REDIRECT}${n}` } });
    expect(got.annotations).toEqual([
      a(1, 'stadt-zuerich.ch', 0, 68), a(2, 'wikipedia.org', 0, 68), a(2, 'wikipedia.org', 69, 121), a(3, 'nzz.ch', 69, 121), a(3, 'nzz.ch', 122, 155),
    ]);
    const cps = [...got.content!];
    expect([cps.slice(0, 68).join(''), cps.slice(69, 121).join(''), cps.slice(122, 155).join('')]).toEqual([FIRST, SECOND, THIRD]);
  });
});

describe('Gemini grounding: hostile metadata, time and memory bounded', () => {
  const event = (meta: object, finish = false) =>
    `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: 'A' }], role: 'model' }, index: 0, ...(finish ? { finishReason: 'STOP' } : {}), groundingMetadata: meta }] })}\r\n\r\n`;

  it('a source a support names again (the same index, or another of the same address) backs its span once', () => {
    const groundingChunks = [{ web: { uri: 'https://a.example/', title: 'A' } }, { web: { uri: 'https://b.example/' } }, { web: { uri: 'https://a.example/', title: 'A' } }];
    const groundingSupports = [
      { segment: { startIndex: 0, endIndex: 1, text: 'A' }, groundingChunkIndices: [0, 0, 1, 2, 0, 1], confidenceScores: [0.5, 0.6, 0.7, 0.8, 0.9, 1] },
      { segment: { startIndex: 0, endIndex: 1, text: 'A' }, groundingChunkIndices: new Array(50).fill(1) },
    ];
    for (const chunks of standardChunkings(enc.encode(event({ groundingChunks, groundingSupports }, true)))) {
      const m = new ModelStream({ format: 'gemini' });
      for (const c of chunks) m.push(c);
      m.flush();
      expect(m.citations.map((c) => [c.url, c.spans])).toEqual([
        ['https://a.example/', [{ start: 0, end: 1, confidence: 0.5 }]],
        ['https://b.example/', [{ start: 0, end: 1, confidence: 0.7 }, { start: 0, end: 1 }]],
      ]);
    }
  });

  it('metadata of many sources said again, changed: each kept source found by its key, not by a walk of all (no JSON.stringify per pair)', () => {
    // (sources without an address: kept once by their JSON)
    const N = 3000;
    const groundingChunks = Array.from({ length: N }, (_, i) => ({ web: { title: `t${i}` } }));
    const supports = (k: number) => [{ segment: { startIndex: 0, endIndex: 1, text: 'A' }, groundingChunkIndices: [k] }];
    const body = enc.encode(event({ groundingChunks, groundingSupports: supports(0), webSearchQueries: ['a'] })
      + event({ groundingChunks, groundingSupports: supports(N - 1), webSearchQueries: ['b'] }, true));
    const m = new ModelStream({ format: 'gemini' });
    const spy = vi.spyOn(JSON, 'stringify');
    try {
      m.push(body);
      m.flush();
      // (a few for each source of each metadata; a walk of the citations for each would make N² / 2)
      expect(spy.mock.calls.length).toBeLessThan(10 * N);
    } finally {
      spy.mockRestore();
    }
    expect(m.citations.length).toBe(N);
    // (the second metadata's support, on the source kept from the first)
    expect(m.citations.flatMap((c, i) => (c.spans === undefined ? [] : [[i, c.spans]]))).toEqual([[N - 1, [{ start: 0, end: 1 }]]]);
    expect(m.grounding).toEqual({ queries: ['b'] });
  });
});

describe('Gemini grounding: a segment without its text', () => {
  it('placed by its bytes in the text as sent, and not at all after NFC changed the text (never elsewhere)', () => {
    // (e and U+0301: 3 bytes as sent, é's 2 in NFC: "Zürich" is bytes 11–18 as sent, 10–17 in NFC,
    // where bytes 11–18 would be "ürich.")
    const text = 'Cafe\u0301 ok. Zürich.';
    const support = { segment: { startIndex: 11, endIndex: 18 }, groundingChunkIndices: [0] };
    const body = `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text }], role: 'model' }, finishReason: 'STOP', index: 0, groundingMetadata: { groundingChunks: [{ web: { uri: 'https://a.example/' } }], groundingSupports: [support] } }] })}\r\n\r\n`;
    for (const [normalize, raw, spans] of [[false, false, [{ start: 10, end: 16 }]], [false, true, [{ start: 10, end: 16 }]], ['NFC', false, undefined]] as const) {
      for (const chunks of standardChunkings(enc.encode(body))) {
        const m = new ModelStream({ format: 'gemini', normalize, raw });
        let got = '';
        for (const c of chunks) got += m.push(c);
        got += m.flush();
        expect(got).toBe(normalize === 'NFC' ? text.normalize('NFC') : text);
        expect(m.citations[0].spans, `${normalize} ${raw}, ${chunks.length} reads`).toEqual(spans);
        if (spans !== undefined) expect(got.slice(spans[0].start, spans[0].end)).toBe('Zürich');
      }
    }
  });

  it('placed by its bytes in an NFC stream whose text NFC did not change', () => {
    const support = { segment: { startIndex: 9, endIndex: 16 }, groundingChunkIndices: [0] };
    const body = `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: 'Café ok Zürich.' }], role: 'model' }, finishReason: 'STOP', index: 0, groundingMetadata: { groundingChunks: [{ web: { uri: 'https://a.example/' } }], groundingSupports: [support] } }] })}\r\n\r\n`;
    const m = new ModelStream({ format: 'gemini' });
    const got = m.push(enc.encode(body)) + m.flush();
    expect(m.citations[0].spans).toEqual([{ start: 8, end: 14 }]);
    expect(got.slice(8, 14)).toBe('Zürich');
  });
});
