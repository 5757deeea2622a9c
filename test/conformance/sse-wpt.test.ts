// Conformance of SseParser with the WHATWG HTML "event stream interpretation", after the
// web-platform-tests eventsource/format-*.htm cases (rewritten as byte streams, expected outcomes
// from the standard's text). Every case is fed whole, split at every byte and one byte at a time,
// through the string path and the byte-level path, and checked against the reference parser too.
import { describe, expect, test } from 'vitest';
import { wasmBackend } from '../../bindings/index.js';
import { chunkings, run, utf8, type Outcome } from './sse-harness.js';
import { referenceParse } from './sse-reference.js';

const ev = (data: string, type = 'message', id = '') => ({ type, data, id });
const long = 'x'.repeat(300);

interface Case { name: string; input: Uint8Array | string; expect: Partial<Outcome> & { events: Outcome['events'] } }

const cases: Case[] = [
  { name: 'format-bom: one BOM stripped, a second one is part of the field name', input: '\uFEFFdata: 1\n\n\uFEFFdata: 2\n\ndata: 3\n\n', expect: { events: [ev('1'), ev('3')] } },
  { name: 'format-bom-2: double BOM at the start', input: '\uFEFF\uFEFFdata: 1\n\ndata: 2\n\ndata: 3\n\n', expect: { events: [ev('2'), ev('3')] } },
  { name: 'format-comments', input: `data:1\r:\0\n:\r\ndata:2\n:${long}\rdata:3\n:data:fail\r:${long}\ndata:4\n\n`, expect: { events: [ev('1\n2\n3\n4')], comments: ['\0', '', long, 'data:fail', long] } },
  { name: 'format-data-before-final-empty-line', input: 'retry:1000\ndata:test1\n\nid:test\ndata:test2', expect: { events: [ev('test1')], retry: 1000, lastEventId: '', truncated: true } },
  { name: 'format-field-data: empty and bare data fields', input: 'data:\n\ndata\ndata\n\ndata:test\n\n', expect: { events: [ev(''), ev('\n'), ev('test')] } },
  { name: 'format-field-event-empty', input: 'event: \ndata:data\n\n', expect: { events: [ev('data')] } },
  { name: 'format-field-event: type is reset after dispatch', input: 'event:test\ndata:x\n\ndata:x\n\n', expect: { events: [ev('x', 'test'), ev('x')] } },
  { name: 'event type reset when data is empty', input: 'event:a\n\ndata:x\n\n', expect: { events: [ev('x')] } },
  { name: 'format-field-id persists; empty id resets', input: 'id: 1\ndata: 1\n\ndata: 2\n\nid\ndata: 3\n\n', expect: { events: [ev('1', 'message', '1'), ev('2', 'message', '1'), ev('3')], lastEventId: '' } },
  { name: 'format-field-id-2: an id-only block sets the last event ID without dispatching', input: 'id:1\ndata:x\n\nid:2\n\ndata:y\n\n', expect: { events: [ev('x', 'message', '1'), ev('y', 'message', '2')], lastEventId: '2' } },
  { name: 'format-field-id-null: id with NUL is ignored', input: 'id: a\n\nid: b\0c\ndata: x\n\n', expect: { events: [ev('x', 'message', 'a')], lastEventId: 'a' } },
  { name: 'id set but not yet dispatched is not the last event ID', input: 'id: 1\ndata: x\n\nid: 2\ndata: y', expect: { events: [ev('x', 'message', '1')], lastEventId: '1', truncated: true } },
  { name: 'format-field-retry with leading zeros', input: 'retry:03000\ndata:x\n\n', expect: { events: [ev('x')], retry: 3000 } },
  { name: 'format-field-retry-bogus', input: 'retry:3000\nretry:1000x\nretry: 12\nretry:-1\nretry:1.5\ndata:x\n\n', expect: { events: [ev('x')], retry: 12 } },
  { name: 'format-field-retry-bogus: space and sign are not digits', input: 'retry:  5\nretry:+5\ndata:x\n\n', expect: { events: [ev('x')], retry: undefined } },
  { name: 'format-field-retry-empty', input: 'retry\nretry:\ndata:x\n\n', expect: { events: [ev('x')], retry: undefined } },
  { name: 'format-field-unknown', input: 'data:test\n data\ndata\nfoobar:xxx\njustsometext\n:thisisacommentyay\ndata:test\n\n', expect: { events: [ev('test\n\ntest')], comments: ['thisisacommentyay'] } },
  { name: 'format-leading-space: only one space removed', input: 'data:\ttest\rdata: \ndata:  test\n\n', expect: { events: [ev('\ttest\n\n test')] } },
  { name: 'format-newlines: CRLF, LF, CR mixes', input: 'data:test\r\ndata\ndata:test\r\n\r\ndata:a\rdata:b\r\rdata:c\n\r\n', expect: { events: [ev('test\n\ntest'), ev('a\nb'), ev('c')] } },
  { name: 'CR then LF is one line end, LF then CR two', input: 'data:a\n\rdata:b\r\n\r\n', expect: { events: [ev('a'), ev('b')] } },
  { name: 'format-null-character', input: 'data:\0\n\n\n\n', expect: { events: [ev('\0')] } },
  { name: 'format-utf-8 (regardless of any declared charset)', input: 'data:ok\u2026 \u00e9 \u{1F600} \u4e2d\n\n', expect: { events: [ev('ok\u2026 \u00e9 \u{1F600} \u4e2d')] } },
  { name: 'field names are case-sensitive', input: 'Data:x\nDATA:y\nEvent:z\ndata:ok\n\n', expect: { events: [ev('ok')] } },
  { name: 'a colon in the value is kept', input: 'data: a: b:c\nevent:t:u\n\n', expect: { events: [ev('a: b:c', 't:u')] } },
  { name: 'lone CR at the end of the stream still ends the blank line', input: 'data: last\r\r', expect: { events: [ev('last')] } },
  { name: 'unterminated event dropped at EOF', input: 'data: a\n\ndata: b\n', expect: { events: [ev('a')], truncated: true } },
  { name: 'stream ending inside a line', input: 'data: a\n\ndata: b', expect: { events: [ev('a')], truncated: true } },
  { name: 'comment after the last event is not truncation', input: 'data: a\n\n: bye\n', expect: { events: [ev('a')], comments: ['bye'], truncated: false } },
  { name: 'event field with non-ASCII type and id', input: 'event: d\u00e9j\u00e0\nid: \u00fc\ndata: x\n\nevent: d\u00e9j\u00e0\ndata: y\n\n', expect: { events: [ev('x', 'd\u00e9j\u00e0', '\u00fc'), ev('y', 'd\u00e9j\u00e0', '\u00fc')] } },
  { name: 'alternating types', input: 'event:a\ndata:1\n\nevent:b\ndata:2\n\nevent:a\ndata:3\n\ndata:4\n\nevent:a\ndata:5\n\n', expect: { events: [ev('1', 'a'), ev('2', 'b'), ev('3', 'a'), ev('4'), ev('5', 'a')] } },
  { name: 'BOM only at the very start', input: 'data: x\n\n\uFEFF\n', expect: { events: [ev('x')], truncated: true } },
];

describe(`SSE conformance (${wasmBackend()})`, () => {
  test('the backend is the one asked for', () => {
    if (process.env.SEAM_WASM) expect(wasmBackend()).toBe(process.env.SEAM_WASM);
  });

  for (const c of cases) {
    test(c.name, () => {
      const bytes = typeof c.input === 'string' ? utf8(c.input) : c.input;
      const want: Outcome = { comments: [], lastEventId: c.expect.events.at(-1)?.id ?? '', retry: undefined, truncated: false, ...c.expect };
      // the reference agrees with the expectation written from the standard
      expect(referenceParse(bytes)).toEqual(want);
      for (const [how, chunks] of chunkings(bytes)) {
        expect(run(chunks), how).toEqual(want);
        expect(run(chunks, {}, true), `${how} (bytes)`).toEqual(want);
      }
    });
  }

  test("eof: 'dispatch' delivers an unterminated last event", () => {
    for (const [input, data] of [['data: a\n\ndata: b', 'b'], ['data: a\n\ndata: b\n', 'b'], ['data: a\n\ndata: b\r', 'b'], ['data: a\n\ndata', '']] as const) {
      for (const [how, chunks] of chunkings(utf8(input))) {
        const out = run(chunks, { eof: 'dispatch' });
        expect(out.events, how).toEqual([ev('a'), ev(data)]);
        expect(out.truncated, how).toBe(true);
      }
    }
  });

  test('UTF-8 is decoded with replacement when fatal is false, as EventSource does', () => {
    const bytes = new Uint8Array([...utf8('data: a'), 0xff, 0xe2, 0x82, ...utf8('\nevent: '), 0xc3, ...utf8('\n\ndata: z'), 0xf0, 0x9f]);
    const want = referenceParse(bytes, { eof: 'dispatch' });
    expect(want.events).toEqual([ev('a\uFFFD\uFFFD', '\uFFFD'), ev('z\uFFFD')]);
    for (const [how, chunks] of chunkings(bytes)) {
      expect(run(chunks, { fatal: false, eof: 'dispatch' }), how).toEqual(want);
    }
  });
});
