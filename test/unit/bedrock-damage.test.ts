// A damaged Bedrock stream read as a model stream, not only framed: every corruption of one
// message of a ConverseStream text stream (a bit flipped in each of its bytes, a total length that
// lies, the stream cut at every byte) is an error at that message's first byte, with the text of
// every message before it delivered (by ModelStream, and by SseRelay to an OpenAI client) and
// nothing invented; the error's code is the one EventStreamDecoder gives for the same bytes. And
// memory: a model stream and a relay of one-byte reads hold at most about the message being read.
import { describe, expect, test } from 'vitest';
import { EventStreamDecoder, EventStreamError, ModelStream, ModelStreamError, SseRelay } from '../../bindings/index.js';
import { getCore } from '../../bindings/core/wasm.js';
import { BEDROCK_FIXTURES, bedrockReference, crc32Ref, encodeMessage } from '../helpers/bedrock-fixtures.js';
import { readOpenAi } from '../helpers/clients.js';
import { SEED, cut, randomCuts, rng } from '../helpers/random.js';
import { textOutcome } from '../helpers/thrown.js';

const f = BEDROCK_FIXTURES.find((x) => x.name === 'bedrock-basic')!;
const K = 3; // the damaged message: the third text delta (two deltas of text before it)
const at = f.starts[K];
const len = f.starts[K + 1] - at;
const before = bedrockReference(f.bytes.subarray(0, at)).text;

/** The stream with message K edited. */
function damaged(edit: (m: Uint8Array) => void): Uint8Array {
  const b = f.bytes.slice();
  edit(b.subarray(at, at + len));
  return b;
}

/** What ModelStream (raw) and EventStreamDecoder make of the chunks. */
function read(chunks: Uint8Array[]): { text: string; error?: ModelStreamError; framing?: string } {
  const m = new ModelStream({ format: 'bedrock', raw: true });
  const { text, error } = textOutcome(m, chunks) as { text: string; error?: ModelStreamError };
  m.dispose();
  const d = new EventStreamDecoder();
  let framing: string | undefined;
  try {
    for (const c of chunks) d.push(c);
    d.flush();
  } catch (e) {
    if (!(e instanceof EventStreamError)) throw e;
    framing = e.code;
  }
  return { text, error, framing };
}

function expectDamage(bytes: Uint8Array, where: string, chunkings: Uint8Array[][]): void {
  for (const chunks of chunkings) {
    const r = read(chunks);
    const why = `${where}, ${chunks.length} chunks`;
    expect(r.error, why).toBeInstanceOf(ModelStreamError);
    expect(r.error!.code, why).toBe(r.framing === 'ERR_FRAME_TOO_LARGE' ? 'ERR_EVENT_TOO_LARGE' : r.framing);
    expect(r.error!.offset, why).toBe(at);
    expect(r.text, why).toBe(before);
  }
  // a relay's client: the text before, then an error event, never a completion
  const relay = new SseRelay({ from: 'bedrock' });
  const out: Uint8Array[] = [];
  for (const c of chunkings[chunkings.length - 1]) out.push(relay.push(c).slice());
  out.push(relay.flush().slice());
  const client = readOpenAi(new Uint8Array(Buffer.concat(out)));
  expect(client.text, where).toBe(before);
  expect(client.done, where).toBe(false);
  expect(client.error, where).not.toBeNull();
}

describe('bedrock: a damaged message read as a model stream', () => {
  test('the undamaged stream reads whole (the premise)', () => {
    expect(read([f.bytes])).toEqual({ text: f.expected.text, error: undefined, framing: undefined });
    expect(before).toBe('Grüße aus 東京 🇯🇵 "zitiert"\n');
  });

  test('a bit flipped in each byte of the message: an error at its first byte (whole, dripped), the text before it, nothing after', () => {
    for (let i = 0; i < len; i++) {
      const bit = 1 << (i % 8);
      const bytes = damaged((m) => { m[i] ^= bit; });
      expectDamage(bytes, `bit ${bit} of byte ${i}`, [[bytes], cut(bytes, [at + (i % len)]), Array.from({ length: bytes.length }, (_, k) => bytes.subarray(k, k + 1))]);
      expect(read([bytes]).framing, `byte ${i}`).toBe('ERR_CRC_MISMATCH');
    }
  });

  test(`a total length that lies (its prelude CRC made right): an error at the message, seed ${SEED}`, () => {
    for (const v of [0, 12, 15, len - 9, len - 1, len + 1, len + 40, 0x7fffffff]) {
      const bytes = damaged((m) => {
        const d = new DataView(m.buffer, m.byteOffset);
        d.setUint32(0, v);
        d.setUint32(8, crc32Ref(m.subarray(0, 8)));
      });
      const next = rng(SEED + v);
      expectDamage(bytes, `length ${v}`, [[bytes], cut(bytes, randomCuts(bytes, next, 7)), Array.from({ length: bytes.length }, (_, k) => bytes.subarray(k, k + 1))]);
    }
  });

  test('the stream cut at every byte: the text of the messages before the cut, truncated at the cut (done once messageStop is whole)', () => {
    for (let c = 0; c <= f.bytes.length; c++) {
      const bytes = f.bytes.subarray(0, c);
      const want = bedrockReference(bytes);
      for (const chunks of [[bytes], cut(bytes, [c >> 1])]) {
        const r = read(chunks);
        expect(r.text, `cut at ${c}`).toBe(want.text);
        if (want.status === 'done') expect(r.error, `cut at ${c}`).toBeUndefined();
        else expect({ code: r.error?.code, offset: r.error?.offset }, `cut at ${c}`).toEqual({ code: 'ERR_STREAM_TRUNCATED', offset: c });
      }
    }
  });
});

describe('bedrock: memory on one-byte reads', () => {
  test.each(['stream', 'relay'] as const)('a %s of 200 text deltas (one of 24 KiB) read one byte at a time holds about its largest message, not the stream; the core\'s heap is back after dispose()', (kind) => {
    const core = getCore();
    const P = '"p":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123"';
    const delta = (t: string) => encodeMessage({ event: 'contentBlockDelta', payload: `{"contentBlockIndex":0,"delta":{"text":${JSON.stringify(t)}},${P}}` });
    const msgs = [encodeMessage({ event: 'messageStart', payload: `{${P},"role":"assistant"}` })];
    let want = '';
    for (let i = 0; i < 200; i++) {
      const t = i === 100 ? 'Grüße '.repeat(3500) : `${'Grüße '.repeat(100)}${i} `;
      want += t;
      msgs.push(delta(t));
    }
    msgs.push(encodeMessage({ event: 'contentBlockStop', payload: `{"contentBlockIndex":0,${P}}` }), encodeMessage({ event: 'messageStop', payload: `{${P},"stopReason":"end_turn"}` }));
    const bytes = new Uint8Array(Buffer.concat(msgs));
    const largest = Math.max(...msgs.map((x) => x.length));
    expect(bytes.length).toBeGreaterThan(6 * largest);
    const start = core.x.heapInUse();
    // (the committed mode: the raw mode keeps its text in the core for the report, up to maxTextBytes)
    const m = kind === 'stream' ? new ModelStream({ format: 'bedrock' }) : new SseRelay({ from: 'bedrock' });
    let out = '';
    let peak = 0;
    const dec = new TextDecoder();
    for (let i = 0; i < bytes.length; i++) {
      const got = m.push(bytes.subarray(i, i + 1));
      out += typeof got === 'string' ? got : dec.decode(got);
      if ((i & 127) === 0) peak = Math.max(peak, core.x.heapInUse() - start);
    }
    const rest = m.flush();
    out += typeof rest === 'string' ? rest : dec.decode(rest);
    expect(m.status).toBe('done');
    if (kind === 'stream') expect(out).toBe(want);
    else expect(out).toContain(JSON.stringify(want.slice(0, 600)).slice(1, -1));
    // what is held: the message being assembled, the event read from it, the text written for it
    expect(peak).toBeLessThan(3 * largest + 32 * 1024);
    m.dispose();
    expect(core.x.heapInUse()).toBe(start);
  });
});
