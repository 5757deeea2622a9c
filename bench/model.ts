// Layer 4 benchmarks: model streams and the relay against the pipelines users write today, on the
// OpenAI-shaped and Anthropic-shaped streams of bench/sse.ts, at one event per read (what real
// APIs flush), three per read, 64 B, 1 KiB and 16 KiB. Each side's output is checked equal before
// anything is timed.
//   - bytes → delta text: ModelStream({ raw: true }) against TextDecoder (stream) +
//     eventsource-parser + JSON.parse + reading the delta's text;
//   - ModelStream with its defaults (graphemes, NFC, counts, SHA-256 at the end) against the same
//     plus an Intl.Segmenter hold-back of the last cluster and NFC per commit;
//   - SseRelay openai → openai against the JSON pipeline (… + JSON.stringify + TextEncoder) and a
//     plain forwarder (no JSON); anthropic → openai against the JSON pipeline that translates.
//
//   npm run build && node build/bench/model.js [--full] [--corpus OpenAI,Anthropic] [--chunk 1event,3events,64B,1KiB,16KiB]
import { createParser } from './peers.js';
import { ModelStream, SseRelay } from '../bindings/index.js';
import { chunked, perEvent } from './corpus.js';
import { type BenchOptions, type Row, assertSame, compare, runIfMain } from './harness.js';
import { holdBack } from './peer-commit.mjs';
import { anthropicStream, openaiStream } from './sse.js';

type Reads = { name: string; cut: (b: Uint8Array) => Uint8Array[] };
const READS: Reads[] = [
  { name: '1 event', cut: (b) => perEvent(b, 1) },
  { name: '3 events', cut: (b) => perEvent(b, 3) },
  { name: '64 B', cut: (b) => chunked(b, 64) },
  { name: '1 KiB', cut: (b) => chunked(b, 1024) },
  { name: '16 KiB', cut: (b) => chunked(b, 16384) },
];

const PEER = 'TextDecoder + eventsource-parser + JSON.parse';
const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const encoder = new TextEncoder();

/** The peer's reading of a stream: each event's data through `onData`. */
function peerRead(chunks: Uint8Array[], onData: (data: string, type: string | undefined) => void): void {
  const td = new TextDecoder();
  const p = createParser({ onEvent: (e) => onData(e.data, e.event) });
  for (const c of chunks) p.feed(td.decode(c, { stream: true }));
  p.feed(td.decode());
}

interface Delta { choices?: { delta?: { content?: string | null } }[] }
interface AnthropicEvent { type?: string; delta?: { type?: string; text?: string } }

/** The delta text of an event, as users read it. */
const textOf = {
  OpenAI: (data: string): string => (data === '[DONE]' ? '' : ((JSON.parse(data) as Delta).choices?.[0]?.delta?.content ?? '')),
  Anthropic: (data: string): string => {
    const e = JSON.parse(data) as AnthropicEvent;
    return e.type === 'content_block_delta' && e.delta?.type === 'text_delta' ? e.delta.text ?? '' : '';
  },
};

function seamRaw(chunks: Uint8Array[], format: 'openai' | 'anthropic'): string {
  const m = new ModelStream({ format, raw: true });
  let s = '';
  for (const c of chunks) s += m.push(c);
  return s + m.flush();
}

function peerRaw(chunks: Uint8Array[], corpus: 'OpenAI' | 'Anthropic'): string {
  let s = '';
  peerRead(chunks, (d) => { s += textOf[corpus](d); });
  return s;
}

function seamText(chunks: Uint8Array[], format: 'openai' | 'anthropic'): string {
  const m = new ModelStream({ format });
  let s = '';
  for (const c of chunks) s += m.push(c);
  s += m.flush();
  return m.finish().sha256 ? s : '';
}

/** The guides' pipeline: the peer, an Intl.Segmenter hold-back of the last cluster, NFC per commit. */
function peerText(chunks: Uint8Array[], corpus: 'OpenAI' | 'Anthropic'): string {
  const text = holdBack(segmenter);
  peerRead(chunks, (d) => text.push(textOf[corpus](d)));
  return text.end();
}

/** What a client reads from relayed bytes: the delta text. */
function clientText(bytes: Uint8Array[]): string {
  let s = '';
  peerRead(bytes, (d) => { s += textOf.OpenAI(d); });
  return s;
}

function seamRelay(chunks: Uint8Array[], from: 'openai' | 'anthropic', sink: Uint8Array[] | null): number {
  const r = new SseRelay({ from });
  let n = 0;
  for (const c of chunks) {
    const out = r.push(c);
    n += out.length;
    if (sink) sink.push(out.slice());
  }
  const end = r.flush();
  if (sink) sink.push(end.slice());
  return n + end.length;
}

/** The JSON gateway people write: parse each event, stringify it again, encode it. */
function jsonGateway(chunks: Uint8Array[], sink: Uint8Array[] | null): number {
  let n = 0;
  peerRead(chunks, (d) => {
    const out = encoder.encode(d === '[DONE]' ? 'data: [DONE]\n\n' : `data: ${JSON.stringify(JSON.parse(d))}\n\n`);
    n += out.length;
    if (sink) sink.push(out);
  });
  return n;
}

/** A plain forwarder: frame with eventsource-parser, forward the data as it is. */
function plainForwarder(chunks: Uint8Array[], sink: Uint8Array[] | null): number {
  let n = 0;
  peerRead(chunks, (d) => {
    const out = encoder.encode(`data: ${d}\n\n`);
    n += out.length;
    if (sink) sink.push(out);
  });
  return n;
}

/** The JSON gateway that translates Anthropic to OpenAI chunks. */
function jsonTranslator(chunks: Uint8Array[], sink: Uint8Array[] | null): number {
  let n = 0;
  const created = Math.floor(Date.now() / 1000);
  peerRead(chunks, (d) => {
    const e = JSON.parse(d) as AnthropicEvent & { delta?: { stop_reason?: string } };
    let chunk: unknown;
    if (e.type === 'content_block_delta' && e.delta?.type === 'text_delta') {
      chunk = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created, model: 'anthropic', choices: [{ index: 0, delta: { content: e.delta.text }, finish_reason: null }] };
    } else if (e.type === 'message_delta') {
      chunk = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created, model: 'anthropic', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] };
    } else if (e.type === 'message_stop') {
      const out = encoder.encode('data: [DONE]\n\n');
      n += out.length;
      if (sink) sink.push(out);
      return;
    } else {
      return;
    }
    const out = encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`);
    n += out.length;
    if (sink) sink.push(out);
  });
  return n;
}

export function runModelBench(opts: BenchOptions, log: (r: Row) => void = () => {}, filter?: { corpus?: string[]; chunk?: string[] }): Row[] {
  const rows: Row[] = [];
  const add = (r: Row) => { rows.push(r); log(r); };
  const corpora = [
    { name: 'OpenAI' as const, format: 'openai' as const, bytes: openaiStream(1 << 20) },
    { name: 'Anthropic' as const, format: 'anthropic' as const, bytes: anthropicStream(1 << 20) },
  ].filter((c) => !filter?.corpus || filter.corpus.includes(c.name));
  const reads = READS.filter((r) => !filter?.chunk || filter.chunk.includes(r.name.replace(/ /g, '')));
  for (const c of corpora) {
    for (const r of reads) {
      const chunks = r.cut(c.bytes);
      const meta = (what: string, peerName: string) => ({ layer: 'model', case: what, corpus: c.name, chunk: r.name, peerName });
      assertSame(`${c.name} raw ${r.name}`, seamRaw(chunks, c.format), peerRaw(chunks, c.name));
      add(compare(meta('ModelStream raw: bytes → delta text', PEER), c.bytes.length, () => seamRaw(chunks, c.format), () => peerRaw(chunks, c.name), opts));
      assertSame(`${c.name} text ${r.name}`, seamText(chunks, c.format), peerText(chunks, c.name));
      add(compare(meta('ModelStream (graphemes, NFC, counts, SHA-256)', `${PEER} + Intl.Segmenter hold-back + NFC`), c.bytes.length,
        () => seamText(chunks, c.format), () => peerText(chunks, c.name), opts));
      const ours: Uint8Array[] = [];
      seamRelay(chunks, c.format, ours);
      if (c.format === 'openai') {
        const theirs: Uint8Array[] = [];
        jsonGateway(chunks, theirs);
        assertSame(`relay ${r.name}`, clientText(ours), clientText(theirs));
        add(compare(meta('SseRelay openai → openai', 'JSON gateway (+ JSON.stringify + TextEncoder)'), c.bytes.length,
          () => seamRelay(chunks, 'openai', null), () => jsonGateway(chunks, null), opts));
        add(compare(meta('SseRelay openai → openai', 'plain forwarder (eventsource-parser, no JSON)'), c.bytes.length,
          () => seamRelay(chunks, 'openai', null), () => plainForwarder(chunks, null), opts));
      } else {
        const theirs: Uint8Array[] = [];
        jsonTranslator(chunks, theirs);
        assertSame(`relay ${r.name}`, clientText(ours), clientText(theirs));
        add(compare(meta('SseRelay anthropic → openai', 'JSON gateway that translates'), c.bytes.length,
          () => seamRelay(chunks, 'anthropic', null), () => jsonTranslator(chunks, null), opts));
      }
    }
  }
  return rows;
}

runIfMain(import.meta.url, 'model', runModelBench);
