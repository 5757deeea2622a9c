// The format the command takes a stream for (without --format) does not depend on how its first
// bytes arrive: the sniffing loop of decode and check (cli/sniff.ts: decide once the bytes tell, or
// at SNIFF_BYTES, or at the end) gives the same format whole, cut in two anywhere in the first
// bytes, and dripped. The streams: every model fixture, the Bedrock ones (both APIs), plain SSE,
// NDJSON, text, and streams whose first event or line is longer than SNIFF_BYTES.
import { describe, expect, it } from 'vitest';
import { SNIFF_BYTES, sniff } from '../../cli/sniff.js';
import { SOURCES } from '../helpers/damaged-streams.js';
import { cut } from '../helpers/random.js';
import { run } from './helpers.js';

const encoder = new TextEncoder();
const enc = (s: string) => encoder.encode(s);

/** The format decode takes the stream read in these pieces for. */
function sniffed(pieces: Uint8Array[]): string {
  const held: Uint8Array[] = [];
  let n = 0;
  const joined = () => Buffer.concat(held, n);
  for (const p of pieces) {
    held.push(p);
    n += p.length;
    const f = sniff(joined(), false);
    if (f === undefined && n < SNIFF_BYTES) continue;
    return f === undefined || f === 'empty' ? 'text' : f;
  }
  return sniff(joined(), true) ?? 'text';
}

const big = 'x'.repeat(SNIFF_BYTES + 10_000);
const streams: [string, Uint8Array][] = [
  ...SOURCES.map((s) => [s.name, s.bytes] as [string, Uint8Array]),
  ['plain SSE', enc('event: note\ndata: hello\n\n')],
  ['NDJSON', enc('{"a":1}\n{"b":2}\n')],
  ['text', enc('Hello, world.\n')],
  ['text that begins like a field', enc('dat is what I meant\n')],
  ['an OpenAI event past SNIFF_BYTES', enc(`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"${big}"}}]}\n\ndata: [DONE]\n\n`)],
  ['an Ollama line past SNIFF_BYTES', enc(`{"model":"m","message":{"role":"assistant","content":"${big}"},"done":false}\n{"model":"m","message":{"content":""},"done":true}\n`)],
  ['a Gemini event past SNIFF_BYTES', enc(`data: {"candidates":[{"content":{"parts":[{"text":"${big}"}]}}]}\r\n\r\n`)],
  // a Bedrock message whose prelude claims more than 16 MiB (its length's first byte is not 0), and a tab-led text
  ['a Bedrock prelude claiming 16 MiB and more', prelude(16 * 1024 * 1024 + 32, 0, enc('hello world'))],
  ['a Bedrock prelude claiming 500 MiB', prelude(500 * 1024 * 1024, 0, enc('hello world'))],
  ['text that begins with a tab', enc('\tindented text\n')],
  ["AWS's error body", enc('{"message":"The security token included in the request is invalid."}')],
  ["AWS's error body with its type", enc('{"Message":"User is not authorized","__type":"AccessDeniedException"}\n')],
  ["a proxy's error body", enc('{"detail":"Not Found"}\n')],
  // whole answers pretty-printed (jq's, a proxy's): their format is the whole document's, whatever the order of its keys
  ['a Converse body, pretty-printed, its keys in another order', enc(`${JSON.stringify({
    stopReason: 'end_turn', usage: { inputTokens: 3, outputTokens: 5, totalTokens: 8 },
    output: { message: { role: 'assistant', content: [{ text: 'Bonjour' }] } }, metrics: { latencyMs: 412 },
  }, null, 2)}\n`)],
  ['a Converse body, pretty-printed, in AWS\'s order', enc(JSON.stringify({
    metrics: { latencyMs: 412 }, output: { message: { role: 'assistant', content: [{ text: 'Bonjour' }] } }, stopReason: 'end_turn',
  }, null, 2))],
  ['an Anthropic message, pretty-printed, its keys in another order', enc(JSON.stringify({
    model: 'claude', content: [{ type: 'text', text: 'Bonjour' }], role: 'assistant', type: 'message', id: 'msg_1', stop_reason: 'end_turn',
  }, null, 2))],
  ['a Responses response, pretty-printed', enc(JSON.stringify({ id: 'resp_1', object: 'response', output: [{ type: 'message', content: [] }] }, null, 2))],
  ["AWS's error body with its type, pretty-printed", enc(`${JSON.stringify({ message: 'Too many requests', __type: 'ThrottlingException' }, null, 2)}\n`)],
  ["AWS's error body, pretty-printed", enc(JSON.stringify({ message: 'The security token included in the request is invalid.' }, null, 2))],
  // a first prelude damaged in transit (its CRC, or its length, which its CRC then does not match)
  ['a Bedrock stream whose first prelude CRC is damaged', damaged(SOURCES.find((x) => x.format === 'bedrock')!.bytes, 9)],
  ['a Bedrock stream whose first length is damaged', damaged(SOURCES.find((x) => x.format === 'bedrock')!.bytes, 3)],
  ['a bedrock-invoke stream whose first prelude CRC is damaged', damaged(SOURCES.find((x) => x.format === 'bedrock-invoke')!.bytes, 8)],
  ['a NUL-led text, no prelude', enc('\0\0\0\x10\0\0\0\0\0\0\0\0hello: world\n')],
];

/** `bytes` with the byte at `at` changed. */
function damaged(bytes: Uint8Array, at: number): Uint8Array {
  const b = Uint8Array.from(bytes);
  b[at] ^= 0x01;
  return b;
}

/** A message prelude (its CRC right) claiming `total` bytes, then `rest`. */
function prelude(total: number, headers: number, rest: Uint8Array): Uint8Array {
  const p = new Uint8Array(12);
  const v = new DataView(p.buffer);
  v.setUint32(0, total);
  v.setUint32(4, headers);
  v.setUint32(8, crc32(p.subarray(0, 8)));
  return Buffer.concat([p, rest]);
}

function crc32(b: Uint8Array): number {
  let c = 0xffffffff;
  for (const x of b) {
    c ^= x;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

describe.each(streams.map(([name, bytes]) => [name, bytes] as const))('%s', (_, bytes) => {
  it('is taken for one format however its first bytes are cut', () => {
    const whole = sniffed([bytes]);
    const head = Math.min(bytes.length, 300);
    for (let at = 1; at < head; at++) expect(sniffed(cut(bytes, [at])), `cut at ${at}`).toBe(whole);
    expect(sniffed(cut(bytes, [30_000])), 'cut at 30000').toBe(whole);
    const drip = Array.from({ length: head }, (_, i) => bytes.subarray(i, i + 1));
    expect(sniffed([...drip, bytes.subarray(head)]), 'dripped').toBe(whole);
  });
});

it('the formats taken (a check of the sniffer itself, on streams whose first bytes are in one read)', () => {
  const of = (name: string) => sniffed([streams.find(([n]) => n === name)![1]]);
  expect(['plain SSE', 'NDJSON', 'text', 'text that begins like a field', 'an OpenAI event past SNIFF_BYTES', 'an Ollama line past SNIFF_BYTES', 'a Gemini event past SNIFF_BYTES',
    'a Bedrock prelude claiming 16 MiB and more', 'a Bedrock prelude claiming 500 MiB', 'text that begins with a tab',
    "AWS's error body", "AWS's error body with its type", "a proxy's error body"].map(of))
    .toEqual(['sse', 'ndjson', 'text', 'text', 'openai', 'ollama', 'gemini', 'bedrock', 'bedrock', 'text', 'openai', 'bedrock', 'openai']);
  expect(['a Converse body, pretty-printed, its keys in another order', "a Converse body, pretty-printed, in AWS's order", 'an Anthropic message, pretty-printed, its keys in another order',
    'a Responses response, pretty-printed', "AWS's error body with its type, pretty-printed", "AWS's error body, pretty-printed"].map(of))
    .toEqual(['bedrock', 'bedrock', 'anthropic', 'openai-responses', 'bedrock', 'openai']);
  for (const s of SOURCES.filter((x) => x.format === 'bedrock' || x.format === 'bedrock-invoke')) expect(sniffed([s.bytes]), s.name).toBe(s.format);
  // (a damaged first prelude was taken for text: decode printed its NUL bytes and said it was not UTF-8)
  expect(['a Bedrock stream whose first prelude CRC is damaged', 'a Bedrock stream whose first length is damaged', 'a bedrock-invoke stream whose first prelude CRC is damaged', 'a NUL-led text, no prelude'].map(of))
    .toEqual(['bedrock', 'bedrock', 'bedrock-invoke', 'text']);
});

it('the command on a Bedrock capture whose first prelude is damaged: the prelude\'s CRC at byte 0 (exit 6), where it printed NUL bytes and said the text was not UTF-8 (exit 2)', async () => {
  const bytes = damaged(SOURCES.find((x) => x.format === 'bedrock')!.bytes, 9);
  const sent = new DataView(bytes.buffer, bytes.byteOffset).getUint32(8).toString(16).padStart(8, '0');
  const computed = crc32(bytes.subarray(0, 8)).toString(16).padStart(8, '0');
  const said = `The prelude CRC32 of the message at byte offset 0 does not match: sent 0x${sent}, computed 0x${computed}`;
  const d = await run(['decode'], { input: bytes });
  expect({ code: d.code, stdout: d.stdout, stderr: d.stderr }).toEqual({ code: 6, stdout: '', stderr: `seam-stream: ${said}\n` });
  const c = await run(['check', '-'], { input: bytes });
  expect({ code: c.code, lines: c.stdout.split('\n').slice(1) }).toEqual({ code: 6, lines: ['1 problem:', `  byte 0  ${said}: framing stopped there`, 'exit code 6', ''] });
  expect(c.stdout.split('\n')[0]).toMatch(/^standard input: bedrock \(sniffed\), /);
});
