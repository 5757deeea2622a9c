// Layer 4 benchmarks for Gemini, Bedrock and Claude on Bedrock, against the pipelines their users write today, at one
// event (Gemini) or one message (Bedrock) per read, as the APIs flush them, and at 64 B and 1 KiB.
// Each side's output is checked equal before anything is timed.
//   - Gemini (SSE, CRLF): TextDecoder (stream) + eventsource-parser + JSON.parse + the parts' text;
//   - Bedrock ConverseStream (AWS's binary event stream): AWS's codec (@smithy/eventstream-codec,
//     each message split by its prelude's length as the SDK does) + JSON.parse + the delta's text;
//   - Claude on Bedrock (InvokeModelWithResponseStream, `Bedrock-invoke`): the same codec + JSON.parse
//     of each chunk, its base64 decoded (Buffer, as the SDK's fromBase64 on Node) + JSON.parse of
//     Anthropic's own event;
//   - ModelStream raw against those; ModelStream with its defaults against those + an Intl.Segmenter
//     hold-back of the last cluster + NFC per commit; SseRelay → openai against those + building
//     OpenAI's chunk + JSON.stringify + TextEncoder.
//
//   npm run build && node build/bench/providers.js [--full] [--corpus Gemini,Bedrock,Bedrock-invoke] [--chunk 1event,64B,1KiB]
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { createParser } from './peers.js';
import { ModelStream, SseRelay } from '../bindings/index.js';
import { chunked, prng } from './corpus.js';
import { type BenchOptions, type Row, assertSame, compare, runIfMain } from './harness.js';
import { holdBack } from './peer-commit.mjs';
import { delta } from './sse.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const codec = new EventStreamCodec((b: Uint8Array) => dec.decode(b), (s: string) => enc.encode(s));

/** Gemini's streamGenerateContent?alt=sse: whole GenerateContentResponses, CRLF line ends; the last with finishReason. */
export function geminiStream(bytes: number, seed = 21): { bytes: Uint8Array; events: Uint8Array[] } {
  const r = prng(seed);
  const events: Uint8Array[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const e = enc.encode(`data: ${JSON.stringify({
      candidates: [{ content: { parts: [{ text: delta(r) + delta(r) }], role: 'model' }, index: 0 }],
      usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 3 + i, totalTokenCount: 14 + i },
      modelVersion: 'gemini-2.5-flash', responseId: 'mW0xaJ2UHcSSz7IPyfnK0Qk',
    })}\r\n\r\n`);
    events.push(e);
    size += e.length;
  }
  events.push(enc.encode(`data: ${JSON.stringify({
    candidates: [{ content: { parts: [{ text: '.' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 900, totalTokenCount: 911 }, modelVersion: 'gemini-2.5-flash', responseId: 'mW0xaJ2UHcSSz7IPyfnK0Qk',
  })}\r\n\r\n`));
  return { bytes: join(events), events };
}

/** Bedrock's ConverseStream: messageStart, one text block's deltas (with Bedrock's `p` padding), its stop, messageStop, metadata. */
export function bedrockStream(bytes: number, seed = 22): { bytes: Uint8Array; events: Uint8Array[] } {
  const r = prng(seed);
  const pad = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const msg = (type: string, body: unknown) => codec.encode({
    headers: {
      ':event-type': { type: 'string', value: type }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: 'event' },
    },
    body: enc.encode(JSON.stringify(body)),
  });
  const events: Uint8Array[] = [msg('messageStart', { p: pad.slice(0, 7), role: 'assistant' })];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const m = msg('contentBlockDelta', { contentBlockIndex: 0, delta: { text: delta(r) }, p: pad.slice(0, 1 + Math.floor(r() * 30)) });
    events.push(m);
    size += m.length;
  }
  events.push(msg('contentBlockStop', { contentBlockIndex: 0, p: pad.slice(0, 12) }));
  events.push(msg('messageStop', { p: pad.slice(0, 20), stopReason: 'end_turn' }));
  events.push(msg('metadata', { metrics: { latencyMs: 2210 }, p: pad.slice(0, 5), usage: { inputTokens: 12, outputTokens: 900, totalTokens: 912 } }));
  return { bytes: join(events), events };
}

/** Claude on Bedrock (InvokeModelWithResponseStream): Anthropic's Messages events, each a `chunk` message's `{"bytes": base64, "p": …}`. */
export function invokeStream(bytes: number, seed = 23): { bytes: Uint8Array; events: Uint8Array[] } {
  const r = prng(seed);
  const pad = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const chunk = (event: unknown) => codec.encode({
    headers: {
      ':event-type': { type: 'string', value: 'chunk' }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: 'event' },
    },
    body: enc.encode(JSON.stringify({ bytes: toBase64(enc.encode(JSON.stringify(event))), p: pad.slice(0, 1 + Math.floor(r() * 30)) })),
  });
  const events: Uint8Array[] = [
    chunk({ type: 'message_start', message: { id: 'msg_bdrk_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } } }),
    chunk({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  ];
  let size = 0;
  while (size < bytes) {
    const m = chunk({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: delta(r) } });
    events.push(m);
    size += m.length;
  }
  events.push(chunk({ type: 'content_block_stop', index: 0 }));
  events.push(chunk({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 900 } }));
  events.push(chunk({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 12, outputTokenCount: 900, invocationLatency: 2210, firstByteLatency: 300 } }));
  return { bytes: join(events), events };
}

function toBase64(b: Uint8Array): string {
  let s = '';
  for (const x of b) s += String.fromCharCode(x);
  return btoa(s);
}

function join(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
}

interface GeminiChunk { candidates?: { content?: { parts?: { text?: string; thought?: boolean }[] }; finishReason?: string }[] }
interface ConverseEvent { delta?: { text?: string }; stopReason?: string; bytes?: string }
interface AnthropicEvent { type: string; delta?: { type?: string; text?: string } }

/** Gemini as its users read it: each event's parts' text. */
function geminiPeer(chunks: Uint8Array[], onText: (t: string, finish: string | undefined) => void): void {
  const td = new TextDecoder();
  const p = createParser({
    onEvent: (e) => {
      const v = JSON.parse(e.data) as GeminiChunk;
      const c = v.candidates?.[0];
      let t = '';
      for (const part of c?.content?.parts ?? []) if (typeof part.text === 'string' && part.thought !== true) t += part.text;
      onText(t, c?.finishReason);
    },
  });
  for (const c of chunks) p.feed(td.decode(c, { stream: true }));
  p.feed(td.decode());
}

/** Bedrock as AWS's SDK reads it: messages split by their prelude's length, decoded by the codec, each payload JSON.parse'd. */
function bedrockPeer(chunks: Uint8Array[], onEvent: (type: string, v: ConverseEvent) => void): void {
  let buf = new Uint8Array(0);
  for (const c of chunks) {
    let b: Uint8Array;
    if (buf.length === 0) b = c;
    else { b = new Uint8Array(buf.length + c.length); b.set(buf); b.set(c, buf.length); }
    let at = 0;
    while (b.length - at >= 4) {
      const len = new DataView(b.buffer, b.byteOffset + at).getUint32(0);
      if (b.length - at < len) break;
      const m = codec.decode(b.subarray(at, at + len));
      at += len;
      const type = m.headers[':event-type']?.value;
      if (typeof type === 'string') onEvent(type, JSON.parse(dec.decode(m.body)) as ConverseEvent);
    }
    buf = at === b.length ? new Uint8Array(0) : b.slice(at);
  }
}

/** Claude on Bedrock as AWS's SDK and the user read it: each chunk's base64 decoded (Buffer, as the SDK's fromBase64 on Node), Anthropic's event JSON.parse'd. */
function invokePeer(chunks: Uint8Array[], onEvent: (v: AnthropicEvent) => void): void {
  bedrockPeer(chunks, (type, v) => {
    if (type === 'chunk' && typeof v.bytes === 'string') onEvent(JSON.parse(dec.decode(Buffer.from(v.bytes, 'base64'))) as AnthropicEvent);
  });
}

type Corpus = 'Gemini' | 'Bedrock' | 'Bedrock-invoke';

const PEERS: Record<Corpus, string> = {
  Gemini: 'TextDecoder + eventsource-parser + JSON.parse',
  Bedrock: 'AWS codec + JSON.parse',
  'Bedrock-invoke': 'AWS codec + JSON.parse + base64 + JSON.parse',
};

/** Anthropic's text delta, for the peers. */
const textOf = (v: AnthropicEvent): string | undefined => (v.type === 'content_block_delta' && v.delta?.type === 'text_delta' ? v.delta.text : undefined);

function peerRaw(corpus: Corpus, chunks: Uint8Array[]): string {
  let s = '';
  if (corpus === 'Gemini') geminiPeer(chunks, (t) => { s += t; });
  else if (corpus === 'Bedrock-invoke') invokePeer(chunks, (v) => { const t = textOf(v); if (t !== undefined) s += t; });
  else bedrockPeer(chunks, (type, v) => { if (type === 'contentBlockDelta' && typeof v.delta?.text === 'string') s += v.delta.text; });
  return s;
}

function peerText(corpus: Corpus, chunks: Uint8Array[]): string {
  const h = holdBack(segmenter);
  if (corpus === 'Gemini') geminiPeer(chunks, (t) => h.push(t));
  else if (corpus === 'Bedrock-invoke') invokePeer(chunks, (v) => { const t = textOf(v); if (t !== undefined) h.push(t); });
  else bedrockPeer(chunks, (type, v) => { if (type === 'contentBlockDelta' && typeof v.delta?.text === 'string') h.push(v.delta.text); });
  return h.end();
}

/** The JSON gateway to OpenAI's chunks: parse, build the chunk, stringify, encode. */
function peerRelay(corpus: Corpus, chunks: Uint8Array[], sink: Uint8Array[] | null): number {
  let n = 0;
  const created = Math.floor(Date.now() / 1000);
  const out = (delta: Record<string, unknown>, finish: string | null) => {
    const b = enc.encode(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    n += b.length;
    if (sink) sink.push(b);
  };
  const done = () => {
    const b = enc.encode('data: [DONE]\n\n');
    n += b.length;
    if (sink) sink.push(b);
  };
  if (corpus === 'Gemini') {
    geminiPeer(chunks, (t, finish) => {
      if (t !== '') out({ content: t }, null);
      if (finish !== undefined) { out({}, 'stop'); done(); }
    });
  } else if (corpus === 'Bedrock-invoke') {
    invokePeer(chunks, (v) => {
      const t = textOf(v);
      if (t !== undefined) out({ content: t }, null);
      else if (v.type === 'message_delta') out({}, 'stop');
      else if (v.type === 'message_stop') done();
    });
  } else {
    bedrockPeer(chunks, (type, v) => {
      if (type === 'contentBlockDelta' && typeof v.delta?.text === 'string') out({ content: v.delta.text }, null);
      else if (type === 'messageStop') out({}, 'stop');
      else if (type === 'metadata') done();
    });
  }
  return n;
}

const FORMAT = { Gemini: 'gemini', Bedrock: 'bedrock', 'Bedrock-invoke': 'bedrock-invoke' } as const;

function seamRaw(corpus: Corpus, chunks: Uint8Array[]): string {
  const m = new ModelStream({ format: FORMAT[corpus], raw: true });
  let s = '';
  for (const c of chunks) s += m.push(c);
  return s + m.flush();
}

function seamText(corpus: Corpus, chunks: Uint8Array[]): string {
  const m = new ModelStream({ format: FORMAT[corpus] });
  let s = '';
  for (const c of chunks) s += m.push(c);
  s += m.flush();
  return m.finish().sha256 ? s : '';
}

function seamRelay(corpus: Corpus, chunks: Uint8Array[], sink: Uint8Array[] | null): number {
  const r = new SseRelay({ from: FORMAT[corpus] });
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

/** What an OpenAI client reads from relayed bytes: the delta text. */
function clientText(bytes: Uint8Array[]): string {
  const td = new TextDecoder();
  let s = '';
  const p = createParser({
    onEvent: (e) => {
      if (e.data === '[DONE]') return;
      const c = (JSON.parse(e.data) as { choices?: { delta?: { content?: string | null } }[] }).choices?.[0]?.delta?.content;
      if (typeof c === 'string') s += c;
    },
  });
  for (const b of bytes) p.feed(td.decode(b, { stream: true }));
  return s;
}

export function runProvidersBench(opts: BenchOptions, log: (r: Row) => void = () => {}, filter?: { corpus?: string[]; chunk?: string[] }): Row[] {
  const rows: Row[] = [];
  const add = (r: Row) => { rows.push(r); log(r); };
  const corpora = [
    { name: 'Gemini' as const, ...geminiStream(1 << 20) },
    { name: 'Bedrock' as const, ...bedrockStream(1 << 20) },
    { name: 'Bedrock-invoke' as const, ...invokeStream(1 << 20) },
  ].filter((c) => !filter?.corpus || filter.corpus.includes(c.name));
  for (const c of corpora) {
    const reads = [
      { name: '1 event', chunks: c.events },
      { name: '64 B', chunks: chunked(c.bytes, 64) },
      { name: '1 KiB', chunks: chunked(c.bytes, 1024) },
    ].filter((r) => !filter?.chunk || filter.chunk.includes(r.name.replace(/ /g, '')));
    for (const r of reads) {
      const chunks = r.chunks;
      const meta = (what: string, peerName: string) => ({ layer: 'model', case: what, corpus: c.name, chunk: r.name, peerName });
      assertSame(`${c.name} raw ${r.name}`, seamRaw(c.name, chunks), peerRaw(c.name, chunks));
      add(compare(meta('ModelStream raw: bytes → delta text', PEERS[c.name]), c.bytes.length, () => seamRaw(c.name, chunks), () => peerRaw(c.name, chunks), opts));
      assertSame(`${c.name} text ${r.name}`, seamText(c.name, chunks), peerText(c.name, chunks));
      add(compare(meta('ModelStream (graphemes, NFC, counts, SHA-256)', `${PEERS[c.name]} + Intl.Segmenter hold-back + NFC`), c.bytes.length,
        () => seamText(c.name, chunks), () => peerText(c.name, chunks), opts));
      const ours: Uint8Array[] = [];
      const theirs: Uint8Array[] = [];
      seamRelay(c.name, chunks, ours);
      peerRelay(c.name, chunks, theirs);
      assertSame(`${c.name} relay ${r.name}`, clientText(ours), clientText(theirs));
      add(compare(meta(`SseRelay ${FORMAT[c.name]} → openai`, `${PEERS[c.name]} + JSON.stringify + TextEncoder`), c.bytes.length,
        () => seamRelay(c.name, chunks, null), () => peerRelay(c.name, chunks, null), opts));
    }
  }
  return rows;
}

runIfMain(import.meta.url, 'providers', runProvidersBench);
