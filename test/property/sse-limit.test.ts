// maxEventBytes is judged on what the standard keeps, identically for every cutting of the input:
// an event's data, type and ID values, plus the value of the line being read when that line is
// a data, event, id, retry or (listened-to) comment line. Field names, unknown fields and
// comments nobody listens to never count. A spec-literal model of that rule (below) is the
// oracle; every two-piece split, the one-byte drip and random splits must give what the whole
// stream gives, on both the string path and the byte path.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SseLimitError, SseParser } from '../../bindings/index.js';
import { SEED, cut, randomCuts, rng, standardChunkings } from '../helpers/random.js';

const enc = new TextEncoder();
const bytesOf = (s: string) => enc.encode(s).length;

interface Outcome {
  events: string[];
  error?: { code: string; offset: number };
  truncated?: boolean;
}

/** The rule, on whole lines of a strict, BOM-less stream. */
function model(text: string, max: number, comments: boolean): Outcome {
  const events: string[] = [];
  let data = 0;
  let dataText = '';
  let type = '';
  let typeBytes = 0;
  let id = '';
  let idBytes = 0;
  let lastId = '';
  let inEvent = false;
  const re = /\r\n|\r|\n/g;
  let start = 0;
  let offset = 0; // byte offset of the line
  let m: RegExpExecArray | null;
  const held = () => data + typeBytes + idBytes;
  while ((m = re.exec(text)) !== null) {
    const l = text.slice(start, m.index);
    const lineStart = offset;
    offset += bytesOf(l) + m[0].length;
    start = m.index + m[0].length;
    if (l === '') {
      lastId = id;
      inEvent = false;
      if (data !== 0) events.push(JSON.stringify([type || 'message', dataText.slice(0, -1), lastId]));
      data = 0;
      dataText = '';
      type = '';
      typeBytes = 0;
      continue;
    }
    const fail = () => ({ events, error: { code: 'ERR_SSE_EVENT_TOO_LARGE', offset: lineStart } });
    if (l.startsWith(':')) {
      if (comments && held() + bytesOf(l.slice(1).replace(/^ /, '')) > max) return fail();
      continue;
    }
    inEvent = true;
    const c = l.indexOf(':');
    const field = c >= 0 ? l.slice(0, c) : l;
    let value = c >= 0 ? l.slice(c + 1) : '';
    if (value.startsWith(' ')) value = value.slice(1);
    const v = bytesOf(value);
    if (field === 'data') {
      if (held() + v + 1 > max) return fail();
      data += v + 1;
      dataText += `${value}\n`;
    } else if (field === 'event') {
      if (held() - typeBytes + v > max) return fail();
      type = value;
      typeBytes = v;
    } else if (field === 'id') {
      if (held() - idBytes + v > max) return fail();
      if (!value.includes('\0')) {
        id = value;
        idBytes = v;
      }
    } else if (field === 'retry') {
      if (held() + v > max) return fail();
    }
  }
  return { events, truncated: text.slice(start) !== '' || inEvent };
}

function run(pieces: Uint8Array[], max: number, comments: boolean, bytes: boolean): Outcome {
  const p = new SseParser({ maxEventBytes: max, onComment: comments ? () => {} : undefined });
  const events: string[] = [];
  const take = (evs: { type: string; data: string; id: string }[]) => {
    for (const e of evs) events.push(JSON.stringify([e.type, e.data, e.id]));
  };
  const takeBytes = (r: ReturnType<SseParser['pushBytes']>) => {
    for (let i = 0; i < r.length; i++) events.push(JSON.stringify([r.type(i), r.dataText(i), r.id(i)]));
  };
  try {
    for (const piece of pieces) {
      if (bytes) takeBytes(p.pushBytes(piece));
      else take(p.push(piece));
    }
    if (bytes) takeBytes(p.flushBytes());
    else take(p.flush());
    return { events, truncated: p.truncated };
  } catch (e) {
    if (!(e instanceof SseLimitError)) throw e;
    const before = e.events as unknown;
    if (bytes) takeBytes(before as ReturnType<SseParser['pushBytes']>);
    else take(before as { type: string; data: string; id: string }[]);
    return { events, error: { code: e.code, offset: e.offset } };
  }
}

const value = fc.stringMatching(/^[a-z é世]{0,18}$/);
const line = fc.oneof(
  value.map((v) => `data: ${v}`), value.map((v) => `data:${v}`), fc.constant('data'), value.map((v) => `datax: ${v}`),
  fc.constant('dat'), value.map((v) => `event: ${v}`), value.map((v) => `eventy: ${v}`), fc.constant('event'),
  value.map((v) => `id: ${v}`), value.map((v) => `id: ${v}\0x`), value.map((v) => `i: ${v}`), fc.constant('id'),
  fc.stringMatching(/^[0-9]{0,20}$/).map((v) => `retry: ${v}`), fc.constant('retry: 12x'), fc.constant('retr: 5'),
  value.map((v) => `: ${v}`), fc.constant(':'), value.map((v) => `unknown: ${v}`), fc.constant(''), fc.constant(''),
);
const stream = fc.tuple(
  fc.array(fc.tuple(line, fc.constantFrom('\n', '\r\n', '\r')), { minLength: 1, maxLength: 10 }),
  fc.boolean(),
).map(([ls, tail]) => ls.map(([l, t]) => l + t).join('') + (tail ? '\n' : ''));

describe('maxEventBytes does not depend on where the stream was cut', () => {
  it('the cases that used to throw at some cuts and not others', () => {
    const cases: [string, number, Outcome][] = [
      ['datax: this started like data, but is not a valid field\ndata: ok\n\n', 16, { events: ['["message","ok",""]'], truncated: false }],
      ...[12, 13, 14, 15].map((n): [string, number, Outcome] => [`data: ${'y'.repeat(n)}\n\n`, 16, { events: [JSON.stringify(['message', 'y'.repeat(n), ''])], truncated: false }]),
      [`event: ${'y'.repeat(12)}\ndata: x\n\n`, 16, { events: [JSON.stringify(['y'.repeat(12), 'x', ''])], truncated: false }],
      [`data: ${'y'.repeat(16)}\n\n`, 16, { events: [], error: { code: 'ERR_SSE_EVENT_TOO_LARGE', offset: 0 } }],
      [`data: a\nevent: ${'y'.repeat(15)}\n\n`, 16, { events: [], error: { code: 'ERR_SSE_EVENT_TOO_LARGE', offset: 8 } }],
    ];
    for (const [text, max, want] of cases) {
      expect(model(text, max, false), text).toEqual(want);
      const bytes = enc.encode(text);
      for (const bytesPath of [false, true]) {
        for (const pieces of standardChunkings(bytes)) {
          expect(run(pieces, max, false, bytesPath), `${JSON.stringify(text)} cut ${pieces.map((q) => q.length)}`).toEqual(want);
        }
      }
    }
  });

  it('random streams: the rule, for every cutting, on both paths (seeded)', () => {
    fc.assert(
      fc.property(stream, fc.integer({ min: 1, max: 40 }), fc.boolean(), (text, max, comments) => {
        const want = model(text, max, comments);
        const bytes = enc.encode(text);
        const next = rng(bytes.length * 31 + max);
        const chunkings = [...standardChunkings(bytes), ...Array.from({ length: 4 }, () => cut(bytes, randomCuts(bytes, next, 7)))];
        for (const bytesPath of [false, true]) {
          for (const pieces of chunkings) {
            const got = run(pieces, max, comments, bytesPath);
            if (JSON.stringify(got) !== JSON.stringify(want)) {
              throw new Error(`${JSON.stringify(text)} max ${max} comments ${comments} bytes ${bytesPath} cut ${pieces.map((q) => q.length)}: ${JSON.stringify(got)} !== ${JSON.stringify(want)}`);
            }
          }
        }
      }),
      { seed: SEED, numRuns: 250 },
    );
  });
});
