// Careless callers of the text layer: anything but a string is a TypeError that says what was
// expected and what was given, and changes nothing; it is never committed, counted or hashed.
import { describe, expect, it } from 'vitest';
import { TextAssembler } from '../../bindings/text/assembler.js';
import { GraphemeCommitter } from '../../bindings/text/grapheme.js';
import { NfcCommitter } from '../../bindings/text/nfc.js';
import { convertOffset, type OffsetUnit } from '../../bindings/text/offsets.js';
import { countText } from '../../bindings/text/counts.js';
import { TextRangeError } from '../../bindings/text/errors.js';
import { thrown } from '../helpers/thrown.js';

function typeError(f: () => unknown): string {
  const e = thrown(f);
  expect(e).toBeInstanceOf(TypeError);
  expect(e).not.toBeInstanceOf(TextRangeError);
  return e.message;
}
function rangeError(f: () => unknown, code: string): string {
  const e = thrown<TextRangeError>(f);
  expect(e).toBeInstanceOf(TextRangeError);
  expect(e.code).toBe(code);
  return e.message;
}
const any = (x: unknown) => x as never;

/** What a careless caller passes, with what the message must say after "must be a string, got ". */
const NOT_TEXT: [unknown, string][] = [
  [{ content: 'x' }, 'an object (did you mean push(x.content)?)'],
  [{ text: 'x' }, 'an object (did you mean push(x.text)?)'],
  [{ delta: 'x' }, 'an object (did you mean push(x.delta)?)'],
  [{ choices: [{ index: 0, delta: { content: 'x' } }] }, 'an object (did you mean push(x.choices[0].delta.content)?)'],
  [{ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x' } }, 'an object (did you mean push(x.delta.text)?)'],
  [{ message: { role: 'assistant', content: 'x' }, done: false }, 'an object (did you mean push(x.message.content)?)'],
  [{ type: 'message', data: '{"choices":[]}', id: '' }, "an object (an SseEvent: its data is the provider's JSON, and the text is inside it)"],
  [{ other: 1 }, 'an object'],
  [42, '42'],
  [true, 'true'],
  [null, "null (a chunk without text has none: push(NAME ?? ''))"],
  [undefined, "undefined (a chunk without text has none: push(NAME ?? ''))"],
  [new Uint8Array([120]), 'a Uint8Array (bytes: decode them first, with Utf8Decoder, or SseParser for an event stream)'],
  [['x', 'y'], "an array (length 2) (one string at a time, or push(NAME.join('')))"],
  [new String('x'), 'a String (a String object: push(String(NAME)))'],
  [Symbol('x'), 'a symbol'],
  [new Proxy({}, { get() { throw new Error('trap'); } }), 'an object'],
];

describe.each([
  { where: 'GraphemeCommitter.push', name: 'text', make: () => { const c = new GraphemeCommitter(); return { push: (x: unknown) => c.push(any(x)), end: () => c.flush() }; } },
  { where: 'NfcCommitter.push', name: 'text', make: () => { const c = new NfcCommitter(); return { push: (x: unknown) => c.push(any(x)), end: () => c.flush() }; } },
  {
    where: 'TextAssembler.push',
    name: 'delta',
    make: () => {
      const a = new TextAssembler();
      let committed = 0;
      const push = (x: unknown) => {
        const out = a.push(any(x));
        committed += out.length;
        return out;
      };
      return { push, end: () => a.finish().text.slice(committed) }; // the report's text after what push returned
    },
  },
])('$where', ({ where, name, make }) => {
  it('throws a TypeError for anything but a string, with a hint where one helps', () => {
    for (const [value, got] of NOT_TEXT) {
      const s = make();
      expect(typeError(() => s.push(value))).toBe(`${where}: ${name} must be a string, got ${got.replaceAll('NAME', name)}`);
    }
  });

  it('changes nothing when it throws: what follows is committed as if the bad call never happened', () => {
    const s = make();
    let out = s.push('ab');
    for (const [value] of NOT_TEXT) expect(() => s.push(value)).toThrow(TypeError);
    out += s.push('c\u0301') + s.end();
    expect(out).toBe(where.startsWith('Grapheme') ? 'abc\u0301' : 'ab\u0107');
    expect(out).not.toContain('object');
  });
});

describe('countText', () => {
  it('throws a TypeError for anything but a string', () => {
    expect(typeError(() => countText(any({ text: 'x' })))).toBe('countText: text must be a string, got an object (did you mean countText(x.text)?)');
    expect(typeError(() => countText(any(42)))).toBe('countText: text must be a string, got 42');
    expect(typeError(() => countText(any(undefined)))).toBe('countText: text must be a string, got undefined');
    expect(typeError(() => countText(any(new Uint8Array(3))))).toContain('got a Uint8Array (bytes: decode them first');
  });
});

describe('convertOffset', () => {
  it('throws a TypeError for a text that is not a string', () => {
    expect(typeError(() => convertOffset(any({ content: 'abc' }), 1, 'utf16', 'utf8'))).toBe(
      'convertOffset: text must be a string, got an object (did you mean convertOffset(x.content, offset, from, to)?)');
    expect(typeError(() => convertOffset(any(null), 0, 'utf16', 'utf8'))).toBe('convertOffset: text must be a string, got null');
  });

  it('throws a TypeError for an offset that is not a number', () => {
    expect(typeError(() => convertOffset('abc', any('1'), 'utf16', 'utf8'))).toBe("convertOffset: offset must be a number, got '1' (a string: give the number 1)");
    expect(typeError(() => convertOffset('abc', any(1n), 'utf16', 'utf8'))).toBe('convertOffset: offset must be a number, got 1n (a bigint: give the number 1)');
    expect(typeError(() => convertOffset('abc', any('utf16'), any(1), 'utf8'))).toBe("convertOffset: offset must be a number, got 'utf16' (the arguments are (text, offset, from, to))");
    expect(typeError(() => convertOffset('abc', any(undefined), 'utf16', 'utf8'))).toBe('convertOffset: offset must be a number, got undefined');
  });

  it('keeps ERR_OFFSET_OUT_OF_RANGE for numbers that are not offsets', () => {
    for (const bad of [1.5, -1, NaN, Infinity]) {
      expect(rangeError(() => convertOffset('abc', bad, 'utf16', 'utf8'), 'ERR_OFFSET_OUT_OF_RANGE')).toContain(`offset must be a non-negative integer, got ${bad}`);
    }
  });

  it('names the bad unit and the valid ones, with the likely one', () => {
    const units = "'utf8', 'utf16', 'codePoint' or 'grapheme'";
    expect(rangeError(() => convertOffset('abc', 1, 'bytes' as OffsetUnit, 'utf8'), 'ERR_INVALID_UNIT')).toBe(`convertOffset: from must be ${units}, got 'bytes' (did you mean 'utf8'?)`);
    expect(rangeError(() => convertOffset('abc', 1, 'utf16', 'utf-8' as OffsetUnit), 'ERR_INVALID_UNIT')).toBe(`convertOffset: to must be ${units}, got 'utf-8' (did you mean 'utf8'?)`);
    expect(rangeError(() => convertOffset('abc', 1, 'codepoint' as OffsetUnit, 'utf8'), 'ERR_INVALID_UNIT')).toContain("(did you mean 'codePoint'?)");
    expect(rangeError(() => convertOffset('abc', 1, 'graphemes' as OffsetUnit, 'utf8'), 'ERR_INVALID_UNIT')).toContain("(did you mean 'grapheme'?)");
    expect(rangeError(() => convertOffset('abc', 1, 'utf16', 'char' as OffsetUnit), 'ERR_INVALID_UNIT')).toContain("a JavaScript string index is 'utf16'; a user-perceived character is 'grapheme'");
    // a unit that is not a string at all (say, a missing argument) is a TypeError
    expect(typeError(() => convertOffset('abc', 1, 'utf16', any(undefined)))).toBe(`convertOffset: to must be ${units}, got undefined`);
    expect(typeError(() => convertOffset('abc', 1, any(8), 'utf16'))).toBe(`convertOffset: from must be ${units}, got 8`);
  });
});
