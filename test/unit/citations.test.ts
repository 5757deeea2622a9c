// The sources an answer cites: Anthropic's `citations_delta` (a web search result's location, a
// document's characters), Responses' `response.output_text.annotation.added` (a URL, a file),
// Gemini's grounding and citation metadata, Bedrock's `delta.citation`, OpenAI Chat's
// `delta.annotations` (search models, OpenRouter), and Perplexity's `search_results` and
// `citations` beside the choices, said whole again in every chunk.
// ModelStream keeps each, with its address, title and quoted passage and the provider's citation
// as sent, in the order they came, apart from the text, whatever the reads; the report and
// ModelEventReader's readings have them; they count toward maxReasoningBytes. A relay in the
// same format passes them as they came.
import { describe, expect, it } from 'vitest';
import { type Citation, ModelEventReader, ModelStream, ModelStreamError, SseRelay } from '../../bindings/index.js';
import { encodeMessage } from '../helpers/bedrock-fixtures.js';
import { concat, standardChunkings } from '../helpers/random.js';
import { anthropicFinal, openaiFinal, sameAtEveryCut } from '../helpers/sdk-clients.js';
import { thrown } from '../helpers/thrown.js';

const enc = new TextEncoder();
const sse = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;

const WEB = { type: 'web_search_result_location', cited_text: 'Zürich is "the largest" city… 🚀', url: 'https://example.org/z?a=1&b=2', title: 'Zürich', encrypted_index: 'Eo8BCioIAhgBIiQ=' };
const SEARCH = { type: 'search_result_location', cited_text: 'Results say so.', source: 'https://docs.example/x', title: 'X', search_result_index: 0, start_block_index: 0, end_block_index: 0 };
const DOC = { type: 'char_location', cited_text: 'The grass is green.', document_index: 0, document_title: 'Facts "A"', start_char_index: 0, end_char_index: 20 };
const block = (index: number, start: Record<string, unknown>, deltas: Record<string, unknown>[]) => sse({ type: 'content_block_start', index, content_block: start })
  + deltas.map((delta) => sse({ type: 'content_block_delta', index, delta })).join('') + sse({ type: 'content_block_stop', index });
const anthropic = sse({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude', stop_reason: null, stop_sequence: null, usage: { input_tokens: 9, output_tokens: 1 } } })
  + block(0, { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }, [{ type: 'input_json_delta', partial_json: '{"query":"zürich"}' }])
  + block(1, { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: WEB.url, title: WEB.title, encrypted_content: 'x', page_age: null }] }, [])
  + block(2, { type: 'text', text: '' }, [{ type: 'text_delta', text: 'Per the sources, ' }])
  + block(3, { type: 'text', text: '', citations: [] }, [{ type: 'citations_delta', citation: WEB }, { type: 'text_delta', text: 'Zürich is the largest.' }])
  + block(4, { type: 'text', text: '', citations: [] }, [{ type: 'citations_delta', citation: DOC }, { type: 'text_delta', text: ' Grass is green.' }])
  + block(5, { type: 'text', text: '', citations: [] }, [{ type: 'citations_delta', citation: SEARCH }, { type: 'text_delta', text: ' So.' }])
  + sse({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 30 } })
  + sse({ type: 'message_stop' });
const ANTHROPIC: Citation[] = [
  { url: WEB.url, title: 'Zürich', citedText: WEB.cited_text, source: WEB },
  { title: 'Facts "A"', citedText: DOC.cited_text, source: DOC },
  { url: SEARCH.source, title: 'X', citedText: SEARCH.cited_text, source: SEARCH },
];

const URL_CITE = { type: 'url_citation', url: 'https://example.org/é', title: 'Café "B"', start_index: 4, end_index: 9 };
const FILE_CITE = { type: 'file_citation', file_id: 'file-1', filename: 'notes.pdf', index: 12 };
const responses = sse({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress', output: [] } })
  + sse({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'See café, and notes.' })
  + sse({ type: 'response.output_text.annotation.added', item_id: 'msg_1', output_index: 0, content_index: 0, annotation_index: 0, annotation: URL_CITE })
  + sse({ type: 'response.output_text.annotation.added', item_id: 'msg_1', output_index: 0, content_index: 0, annotation_index: 1, annotation: FILE_CITE })
  + sse({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', output: [] } });
const RESPONSES: Citation[] = [
  { url: URL_CITE.url, title: 'Café "B"', source: URL_CITE },
  { title: 'notes.pdf', source: FILE_CITE },
];

const GROUNDED = { uri: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbF9', title: 'example.org' };
const RETRIEVED = { uri: 'gs://bucket/doc.pdf', title: 'Doc "C"', text: 'A passage, é.' };
const SOURCE = { startIndex: 0, endIndex: 10, uri: 'https://x.org/a', license: '' };
const gem = (o: unknown) => `data: ${JSON.stringify(o)}\r\n\r\n`;
const cand = (parts: string, more: Record<string, unknown> = {}, index = 0) => ({ content: { parts: [{ text: parts }], role: 'model' }, index, ...more });
const VERTEX = { startIndex: 3, endIndex: 9, uri: 'https://v.org/b', title: 'Vertex "V"', license: 'mit' };
const gemini = gem({ candidates: [cand('Zürich ')], usageMetadata: { promptTokenCount: 5 }, modelVersion: 'gemini-2.5-flash' })
  + gem({ candidates: [cand('is ')], usageMetadata: { promptTokenCount: 5 }, modelVersion: 'gemini-2.5-flash' })
  // (a text chunk of the shape the stream has had, but for its metadata)
  + gem({ candidates: [cand('large.', { citationMetadata: { citationSources: [SOURCE] } })], usageMetadata: { promptTokenCount: 5 }, modelVersion: 'gemini-2.5-flash' })
  // (Vertex AI's key; a candidate not followed)
  + gem({ candidates: [cand(' Done', { citationMetadata: { citations: [VERTEX] } }), cand('other', { groundingMetadata: { groundingChunks: [{ web: { uri: 'https://not.followed', title: 'no' } }] } }, 1)] })
  // (the same source again, and at another range: kept once)
  + gem({ candidates: [cand('.', {
    finishReason: 'STOP', citationMetadata: { citationSources: [SOURCE, { ...SOURCE, startIndex: 20, endIndex: 30 }] },
    groundingMetadata: {
      searchEntryPoint: { renderedContent: '<div>…</div>' }, webSearchQueries: ['zürich size'],
      groundingChunks: [{ web: GROUNDED }, { retrievedContext: RETRIEVED }],
      groundingSupports: [{ segment: { startIndex: 0, endIndex: 16, text: 'Zürich is large.' }, groundingChunkIndices: [0], confidenceScores: [0.9] }],
    },
  })], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 6, totalTokenCount: 11 } });
const GEMINI: Citation[] = [
  { url: SOURCE.uri, source: SOURCE },
  { url: VERTEX.uri, title: VERTEX.title, source: VERTEX },
  { url: GROUNDED.uri, title: GROUNDED.title, source: { web: GROUNDED } },
  { url: RETRIEVED.uri, title: RETRIEVED.title, citedText: RETRIEVED.text, source: { retrievedContext: RETRIEVED } },
];

const ANNOTATION = { type: 'url_citation', url_citation: { url: 'https://example.org/ü', title: 'Über "U"', start_index: 0, end_index: 6, content: 'A quote.' } };
const ANNOTATION2 = { type: 'url_citation', url_citation: { url: 'https://example.com', title: 'Com', start_index: 7, end_index: 12 } };
const oa = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-search', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const openai = oa({ role: 'assistant', content: '', annotations: null }) + oa({ content: 'Über, ' }) + oa({ content: 'com.' })
  + oa({ annotations: [ANNOTATION] }) + oa({ annotations: [ANNOTATION2] }, 'stop') + 'data: [DONE]\n\n';
const OPENAI: Citation[] = [
  { url: 'https://example.org/ü', title: 'Über "U"', citedText: 'A quote.', source: ANNOTATION },
  { url: 'https://example.com', title: 'Com', source: ANNOTATION2 },
];

const CASES = [
  { format: 'openai' as const, body: openai, text: 'Über, com.', citations: OPENAI, readings: OPENAI.map((c) => [c]) },
  { format: 'anthropic' as const, body: anthropic, text: 'Per the sources, Zürich is the largest. Grass is green. So.', citations: ANTHROPIC, readings: ANTHROPIC.map((c) => [c]) },
  { format: 'openai-responses' as const, body: responses, text: 'See café, and notes.', citations: RESPONSES, readings: RESPONSES.map((c) => [c]) },
  { format: 'gemini' as const, body: gemini, text: 'Zürich is large. Done.', citations: GEMINI,
    // (a reading is of its own event: the source the last chunk says again is in its reading)
    readings: [[GEMINI[0]], [GEMINI[1]], [GEMINI[0], GEMINI[2], GEMINI[3]]] },
];

describe('citations', () => {
  for (const { format, body, text, citations, readings } of CASES) {
    const bytes = enc.encode(body);
    for (const raw of [false, true]) {
      it(`${format}${raw ? ', raw' : ''}: ModelStream keeps each, apart from the text, whatever the reads`, () => {
        for (const chunks of standardChunkings(bytes)) {
          const m = new ModelStream({ format, raw });
          let got = '';
          for (const c of chunks) got += m.push(c);
          got += m.flush();
          expect(got).toBe(text);
          expect(m.citations).toEqual(citations);
          expect(m.finish().citations).toEqual(citations);
        }
      });
    }

    it(`${format}: ModelEventReader has each in the reading of its own event only`, () => {
      const r = new ModelEventReader({ format });
      const got = body.split(/(?<=\n\r?\n)/).map((e) => r.read(e.slice(e.indexOf('data: ') + 6).trimEnd()).citations);
      expect(got.filter((c) => c !== undefined)).toEqual(readings);
    });

    it(`${format}: the citations count toward maxReasoningBytes, the event that passes it stops the stream at its data`, () => {
      const first = enc.encode(JSON.stringify(citations[0].source)).length;
      const second = body.indexOf(JSON.stringify(citations[1].source));
      const at = enc.encode(body.slice(0, body.lastIndexOf('data: ', second) + 6)).length;
      for (const chunks of standardChunkings(bytes)) {
        const m = new ModelStream({ format, maxReasoningBytes: first + 10 });
        const err = thrown(() => {
          for (const c of chunks) m.push(c);
          m.flush();
        });
        expect(err).toBeInstanceOf(ModelStreamError);
        expect(err).toMatchObject({ code: 'ERR_REASONING_TOO_LONG', offset: at });
        expect(m.citations).toEqual([citations[0]]);
      }
    });
  }

  it('a stream with none: no citations, and none in the report', () => {
    const m = new ModelStream({ format: 'openai-responses' });
    m.push(enc.encode(responses.split(/(?<=\n\n)/).filter((e) => !e.includes('annotation.added')).join('')));
    m.flush();
    expect(m.citations).toEqual([]);
    expect('citations' in m.finish()).toBe(false);
  });

  it('OpenAI relayed to OpenAI: the annotations pass as they came, at every cut', () => {
    const bytes = enc.encode(openai);
    for (const chunks of standardChunkings(bytes)) {
      const r = new SseRelay({ from: 'openai', to: 'openai' });
      const out = new TextDecoder().decode(concat([...chunks.map((c) => r.push(c).slice()), r.flush().slice()]));
      expect(out).toBe(openai);
    }
  });

  it('Anthropic relayed to Anthropic: the Anthropic SDK has the citations on their text blocks, at every cut', async () => {
    const got = await sameAtEveryCut(enc.encode(anthropic), () => new SseRelay({ from: 'anthropic', to: 'anthropic' }), async (b) => {
      const msg = await anthropicFinal(b);
      return msg.content.flatMap((c) => (c.type === 'text' ? [{ text: c.text, citations: c.citations ?? [] }] : []));
    });
    expect(got).toEqual([
      { text: 'Per the sources, ', citations: [] }, { text: 'Zürich is the largest.', citations: [WEB] }, { text: ' Grass is green.', citations: [DOC] },
      { text: ' So.', citations: [SEARCH] },
    ]);
  });
});

describe("OpenAI's clients, from another format: each source at an address once, as annotations before the finish", () => {
  // (what openai-node keeps: the list said last, which the relay says once, whole; each spans the
  // whole content, its end the content's characters as JavaScript's string iterator counts them)
  const annotated = (cs: Citation[], text: string) => {
    const seen = new Set<string>();
    return cs.flatMap((c) => (c.url === undefined || seen.has(c.url) ? [] : (seen.add(c.url), [{
      type: 'url_citation', url_citation: { end_index: [...text].length, start_index: 0, title: c.title ?? '', url: c.url },
    }])));
  };
  for (const { format, body, text, citations } of CASES.filter((c) => c.format !== 'openai')) {
    it(`${format}: openai-node's message has them, with the text, at every cut`, async () => {
      const got = await sameAtEveryCut(enc.encode(body), () => new SseRelay({ from: format, to: 'openai' }), async (b) => {
        const m = (await openaiFinal(b)).choices[0].message as { content: string | null; annotations?: unknown };
        return { text: m.content, annotations: m.annotations };
      });
      expect(got).toEqual({ text, annotations: annotated(citations, text) });
    });
  }

  it('the exact chunk, after the text and before the finish; a document without an address is left out', () => {
    const r = new SseRelay({ from: 'anthropic', to: 'openai', id: 'c', model: 'm' });
    const out = new TextDecoder().decode(concat([r.push(enc.encode(anthropic)).slice(), r.flush().slice()]))
      .replace(/"created":\d+/g, '"created":0');
    const chunk = (delta: string, finish = 'null') => `data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":${delta},"finish_reason":${finish}}]}\n\n`;
    expect(out.split('\n\n').slice(-5).join('\n\n')).toBe(`${chunk(`{"annotations":[${[
      '{"type":"url_citation","url_citation":{"end_index":59,"start_index":0,"title":"Zürich","url":"https://example.org/z?a=1&b=2"}}',
      '{"type":"url_citation","url_citation":{"end_index":59,"start_index":0,"title":"X","url":"https://docs.example/x"}}',
    ].join(',')}]}`)}${chunk('{}', '"stop"')}`
      + 'data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"m","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":30,"total_tokens":39}}\n\ndata: [DONE]\n\n');
  });

  it('a stream that cites none, or fails: no annotations chunk', () => {
    const none = responses.split(/(?<=\n\n)/).filter((e) => !e.includes('annotation.added')).join('');
    const r = new SseRelay({ from: 'openai-responses', to: 'openai' });
    const out = new TextDecoder().decode(concat([r.push(enc.encode(none)).slice(), r.flush().slice()]));
    expect(out).not.toContain('annotations');
    const cut = anthropic.slice(0, anthropic.indexOf('event: message_delta'));
    const f = new SseRelay({ from: 'anthropic', to: 'openai' });
    const failed = new TextDecoder().decode(concat([f.push(enc.encode(cut)).slice(), f.flush().slice()]));
    expect(failed).not.toContain('annotations');
    expect(failed).toContain('"code":"ERR_STREAM_TRUNCATED"');
  });

  it('Bedrock: the web source, not the document', async () => {
    const DOC_CITE = { title: 'Doc', sourceContent: [{ text: 'A.' }], location: { documentChar: { documentIndex: 0, start: 0, end: 2 } } };
    const WEB_CITE = { title: 'Web', location: { web: { url: 'https://e.org/z', domain: 'e.org' } } };
    const bytes = concat([
      { event: 'messageStart', payload: '{"role":"assistant"}' },
      { event: 'contentBlockDelta', payload: '{"contentBlockIndex":0,"delta":{"text":"Z."}}' },
      { event: 'contentBlockDelta', payload: JSON.stringify({ contentBlockIndex: 0, delta: { citation: DOC_CITE } }) },
      { event: 'contentBlockDelta', payload: JSON.stringify({ contentBlockIndex: 0, delta: { citation: WEB_CITE } }) },
      { event: 'contentBlockStop', payload: '{"contentBlockIndex":0}' },
      { event: 'messageStop', payload: '{"stopReason":"end_turn"}' },
    ].map(encodeMessage));
    const got = await sameAtEveryCut(bytes, () => new SseRelay({ from: 'bedrock', to: 'openai' }), async (b) => (await openaiFinal(b)).choices[0].message.annotations);
    expect(got).toEqual([{ type: 'url_citation', url_citation: { end_index: 2, start_index: 0, title: 'Web', url: 'https://e.org/z' } }]);
  });

  it("what the relay keeps of them counts toward its maxReasoningBytes: past it, ERR_REASONING_TOO_LONG at the event, whatever the reads", () => {
    // (the first source's address and title fit; the second's do not)
    const first = enc.encode('https://example.org/z?a=1&b=2Zürich').length;
    const at = Buffer.from(anthropic).indexOf('data: {"type":"content_block_delta","index":5') + 6;
    for (const chunks of standardChunkings(enc.encode(anthropic))) {
      const r = new SseRelay({ from: 'anthropic', to: 'openai', maxReasoningBytes: first + 5 });
      const out = new TextDecoder().decode(concat([...chunks.map((c) => r.push(c).slice()), r.flush().slice()]));
      expect(r.error).toMatchObject({ code: 'ERR_REASONING_TOO_LONG', offset: at });
      expect(out).not.toContain('annotations');
    }
    // (to Anthropic's clients nothing is kept: the same limit passes)
    const a = new SseRelay({ from: 'anthropic', to: 'anthropic', maxReasoningBytes: first + 5 });
    a.push(enc.encode(anthropic));
    a.flush();
    expect(a.error).toBeUndefined();
  });

  it('OpenAI to OpenAI: a chunk written anew (content as an array) keeps none and counts none, whatever the limit', () => {
    const body = oa({ role: 'assistant', content: [{ type: 'text', text: 'Hi' }], annotations: [ANNOTATION] }) + oa({}, 'stop') + 'data: [DONE]\n\n';
    const r = new SseRelay({ from: 'openai', to: 'openai', maxReasoningBytes: 5 });
    const out = new TextDecoder().decode(concat([r.push(enc.encode(body)).slice(), r.flush().slice()]));
    expect(r.error).toBeUndefined();
    expect(r.status).toBe('done');
    expect(out.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('OpenAI to OpenAI: a chunk written anew whose data came on several lines keeps its annotations and usage on one line of one event, at every cut', async () => {
    const json = JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-search', choices: [{ index: 0, delta: { role: 'assistant', content: [{ type: 'text', text: 'Hi ü' }], annotations: [ANNOTATION] }, finish_reason: null }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }, null, 1);
    const body = `${json.split('\n').map((l) => `data: ${l}`).join('\n')}\n\n${oa({}, 'stop')}data: [DONE]\n\n`;
    const final = await sameAtEveryCut(enc.encode(body), () => new SseRelay({ from: 'openai', to: 'openai' }), async (b) => {
      const c = await openaiFinal(b);
      return [c.choices[0]!.message.content, c.choices[0]!.message.annotations, c.usage];
    });
    expect(final).toEqual(['Hi ü', [ANNOTATION], { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }]);
  });

  it('OpenAI to OpenAI: a chunk written anew (content as an array) keeps its annotations, as they came, before its finish; openai-node reads them, at every cut', async () => {
    const body = oa({ role: 'assistant', content: [{ type: 'text', text: 'Hi ü' }], annotations: [ANNOTATION] }) + oa({}, 'stop') + 'data: [DONE]\n\n';
    const wire = (chunks: Uint8Array[]) => {
      const r = new SseRelay({ from: 'openai', to: 'openai' });
      return new TextDecoder().decode(concat([...chunks.map((c) => r.push(c).slice()), r.flush().slice()]));
    };
    const out = wire([enc.encode(body)]);
    expect(out.split('\n\n').filter((e) => e.includes('annotations'))).toEqual([
      `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-search","choices":[{"index":0,"delta":{"annotations":${JSON.stringify([ANNOTATION])}},"finish_reason":null}]}`,
    ]);
    const final = await sameAtEveryCut(enc.encode(body), () => new SseRelay({ from: 'openai', to: 'openai' }), async (b) => {
      const m = (await openaiFinal(b)).choices[0]!.message;
      return [m.content, m.annotations];
    });
    expect(final).toEqual(['Hi ü', [ANNOTATION]]);
  });

  it('the error past the limit says what a relay keeps', () => {
    const r = new SseRelay({ from: 'anthropic', to: 'openai', maxReasoningBytes: 5 });
    r.push(enc.encode(anthropic));
    r.flush();
    expect(r.error?.message).toMatch(/^The sources cited \(their addresses and titles, kept until the completion\) in the event at byte offset \d+ would pass maxReasoningBytes \(5 bytes, 0 kept\)/);
  });

  it('to Anthropic: unchanged (its citation types want what other providers do not send)', () => {
    for (const { format, body } of CASES.filter((c) => c.format !== 'anthropic')) {
      const r = new SseRelay({ from: format, to: 'anthropic' });
      const out = new TextDecoder().decode(concat([r.push(enc.encode(body)).slice(), r.flush().slice()]));
      expect(out, format).not.toMatch(/citation/);
    }
  });
});

describe("Bedrock's citations", () => {
  const DOC_CITE = { title: 'Doc "D"', sourceContent: [{ text: 'A passage, ' }, { text: 'é.' }], location: { documentChar: { documentIndex: 0, start: 0, end: 13 } } };
  const WEB_CITE = { title: 'Web', location: { web: { url: 'https://e.org/z', domain: 'e.org' } } };
  const msgs = [
    { event: 'messageStart', payload: '{"role":"assistant","p":"abc"}' },
    { event: 'contentBlockDelta', payload: '{"contentBlockIndex":0,"delta":{"text":"Zürich is large."},"p":"ab"}' },
    { event: 'contentBlockDelta', payload: JSON.stringify({ contentBlockIndex: 0, delta: { citation: DOC_CITE }, p: 'a' }) },
    { event: 'contentBlockDelta', payload: JSON.stringify({ contentBlockIndex: 0, delta: { citation: WEB_CITE }, p: 'a' }) },
    { event: 'contentBlockStop', payload: '{"contentBlockIndex":0,"p":"abcd"}' },
    { event: 'messageStop', payload: '{"stopReason":"end_turn","p":"ab"}' },
    { event: 'metadata', payload: '{"usage":{"inputTokens":5,"outputTokens":6,"totalTokens":11},"metrics":{"latencyMs":9},"p":"a"}' },
  ];
  const parts = msgs.map(encodeMessage);
  const bytes = concat(parts);
  const BEDROCK: Citation[] = [
    { title: 'Doc "D"', citedText: 'A passage, é.', source: DOC_CITE },
    { url: 'https://e.org/z', title: 'Web', source: WEB_CITE },
  ];

  for (const raw of [false, true]) {
    it(`ModelStream keeps each${raw ? ', raw' : ''}, whatever the reads`, () => {
      for (const chunks of standardChunkings(bytes)) {
        const m = new ModelStream({ format: 'bedrock', raw });
        let got = '';
        for (const c of chunks) got += m.push(c);
        got += m.flush();
        expect(got).toBe('Zürich is large.');
        expect(m.citations).toEqual(BEDROCK);
      }
    });
  }

  it('past maxReasoningBytes: ERR_REASONING_TOO_LONG at the message that passes it', () => {
    const first = enc.encode(JSON.stringify(DOC_CITE)).length;
    const at = parts.slice(0, 3).reduce((n, p) => n + p.length, 0);
    for (const chunks of standardChunkings(bytes)) {
      const m = new ModelStream({ format: 'bedrock', maxReasoningBytes: first + 10 });
      expect(() => {
        for (const c of chunks) m.push(c);
        m.flush();
      }).toThrow(expect.objectContaining({ code: 'ERR_REASONING_TOO_LONG', offset: at }));
      expect(m.citations).toEqual([BEDROCK[0]]);
    }
  });
});

describe("Perplexity's search_results and citations, said whole in every chunk", () => {
  const R1 = { title: 'Zürich — Wikipedia', url: 'https://en.wikipedia.org/wiki/Z%C3%BCrich', date: '2026-11-02', last_updated: '2026-11-30', snippet: 'Zürich is the largest city…', source: 'web' };
  const R2 = { title: 'Stadt "Zürich"', url: 'https://www.stadt-zuerich.ch/', date: null, last_updated: '2026-10-01', snippet: '', source: 'web' };
  const URLS = [R1.url, R2.url, 'https://example.org/only-an-address'];
  const px = (delta: unknown, finish: string | null, results: unknown[], urls: string[], n: number) => `data: ${JSON.stringify({
    id: 'px-1', model: 'sonar-pro', created: 1, usage: { prompt_tokens: 9, completion_tokens: n, total_tokens: 9 + n },
    citations: urls, search_results: results, object: 'chat.completion.chunk',
    choices: [{ index: 0, finish_reason: finish, message: { role: 'assistant', content: '' }, delta }],
  })}\r\n\r\n`;
  // (the last chunk says one more source: only it is added)
  const R3 = { title: 'Late', url: 'https://late.example/', date: null, snippet: 'x' };
  const body = px({ role: 'assistant', content: 'Zürich [1] ' }, null, [R1, R2], URLS, 1) + px({ content: 'is large [2][3].' }, null, [R1, R2], URLS, 5)
    + px({ content: '' }, 'stop', [R1, R2, R3], [...URLS, R3.url], 6) + 'data: [DONE]\r\n\r\n';
  const WANT: Citation[] = [
    { url: R1.url, title: R1.title, source: R1 }, { url: R2.url, title: R2.title, source: R2 },
    { url: URLS[2], source: { url: URLS[2] } }, { url: R3.url, title: 'Late', source: R3 },
  ];

  for (const raw of [false, true]) {
    it(`ModelStream keeps each source once, the results' before the bare addresses, whatever the reads${raw ? ' (raw)' : ''}`, () => {
      for (const chunks of standardChunkings(enc.encode(body))) {
        const m = new ModelStream({ format: 'openai', raw });
        let text = '';
        for (const c of chunks) text += m.push(c);
        text += m.flush();
        expect(text).toBe('Zürich [1] is large [2][3].');
        expect(m.citations).toEqual(WANT);
        expect(m.finish().citations).toEqual(WANT);
      }
    });
  }

  it('ModelEventReader: each event has the sources it says', () => {
    const r = new ModelEventReader({ format: 'openai' });
    const got = body.split(/(?<=\r\n\r\n)/).slice(0, 3).map((e) => r.read(e.slice(6).trimEnd()).citations);
    const first = [WANT[0], WANT[1], WANT[2]];
    expect(got).toEqual([first, first, [WANT[0], WANT[1], WANT[3], WANT[2]]]);
  });

  it('a list counts toward maxReasoningBytes as it was sent: the same outcome at every cut, whatever the limit', () => {
    // (40 short bare addresses, each kept as {url}: longer than it was sent; then reasoning the core reads itself)
    const short = Array.from({ length: 40 }, (_, i) => `u${String(i).padStart(2, '0')}`);
    const oa = (delta: unknown, finish: string | null = null, more: Record<string, unknown> = {}) => `data: ${JSON.stringify({ id: 'px', object: 'chat.completion.chunk', created: 1, model: 'sonar', ...more, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const text = oa({ role: 'assistant', content: 'A' }, null, { citations: short }) + oa({ reasoning_content: 'r'.repeat(75) }) + oa({ reasoning_content: 's'.repeat(75) })
      + oa({ content: 'B' }, 'stop') + 'data: [DONE]\n\n';
    const bytes = enc.encode(text);
    const outcome = (chunks: Uint8Array[], max: number) => {
      const m = new ModelStream({ format: 'openai', maxReasoningBytes: max });
      let err: ModelStreamError | undefined;
      try {
        for (const c of chunks) m.push(c);
        m.flush();
      } catch (e) {
        err = e as ModelStreamError;
      }
      return { code: err?.code, offset: err?.offset, citations: m.citations.length, reasoning: m.reasoning.length, status: m.status };
    };
    const listed = enc.encode(JSON.stringify(short)).length;
    const seen = new Set<string>();
    for (const max of [listed - 1, listed, listed + 74, listed + 75, listed + 149, listed + 150]) {
      const whole = outcome([bytes], max);
      seen.add(whole.status);
      for (const chunks of standardChunkings(bytes)) expect(outcome(chunks, max), `limit ${max}, ${chunks.length} reads`).toEqual(whole);
    }
    expect([...seen].sort()).toEqual(['done', 'failed']);
  });

  it('a list that is not an array, or entries that are not sources, give none', () => {
    const m = new ModelStream({ format: 'openai' });
    m.push(enc.encode(px({ content: 'Hi' }, null, [null, 3, 'x'], [4, null] as unknown as string[], 1) + px({ content: '' }, 'stop', {} as unknown as unknown[], 'x' as unknown as string[], 1) + 'data: [DONE]\n\n'));
    m.flush();
    expect(m.citations).toEqual([]);
  });
});
