// bindings/core/options.ts (the checks every layer can share) and the text classes' options.
import { describe, expect, it } from 'vitest';
import { TextAssembler } from '../../bindings/text/assembler.js';
import { GraphemeCommitter } from '../../bindings/text/grapheme.js';
import { NfcCommitter } from '../../bindings/text/nfc.js';
import {
  booleanOption, byteLimitOption, checkOptions, describeValue, functionOption, nearestName, oneOf,
} from '../../bindings/core/options.js';
import { TextRangeError } from '../../bindings/text/errors.js';
import { thrown } from '../helpers/thrown.js';

/** A plain TypeError (not a TextRangeError, no code); returns its message. */
function typeError(f: () => unknown): string {
  const e = thrown(f);
  expect(e).toBeInstanceOf(TypeError);
  expect((e as { code?: unknown }).code).toBeUndefined();
  return e.message;
}
/** A TextRangeError with `code`; returns its message. */
function rangeError(f: () => unknown, code = 'ERR_INVALID_OPTION'): string {
  const e = thrown<TextRangeError>(f);
  expect(e).toBeInstanceOf(TextRangeError);
  expect(e.code).toBe(code);
  return e.message;
}
const any = (x: unknown) => x as never;

describe('options.ts', () => {
  it('describes values for messages', () => {
    expect(describeValue('nfc')).toBe("'nfc'");
    expect(describeValue("it's\n")).toBe("'it\\'s\\n'");
    expect(describeValue('x'.repeat(50))).toBe(`'${'x'.repeat(32)}…' (50 characters)`);
    expect([0, -0, 1.5, NaN, Infinity].map(describeValue)).toEqual(['0', '-0', '1.5', 'NaN', 'Infinity']);
    expect([10n, true, undefined, null, Symbol('s')].map(describeValue)).toEqual(['10n', 'true', 'undefined', 'null', 'a symbol']);
    expect(describeValue({})).toBe('an object');
    expect(describeValue(Object.create(null))).toBe('an object');
    expect(describeValue([1, 2])).toBe('an array (length 2)');
    expect(describeValue(new Uint8Array(1))).toBe('a Uint8Array');
    expect(describeValue(new ArrayBuffer(1))).toBe('an ArrayBuffer');
    expect(describeValue(function onEvent() {})).toBe('a function (onEvent)');
    expect(describeValue(() => {})).toBe('a function');
    expect(describeValue(new Proxy({}, { getPrototypeOf() { throw new Error('no'); } }))).toBe('an object');
  });

  it('finds the nearest name: other case, a unique prefix, or within a third of its length', () => {
    const names = ['normalize', 'maxPendingBytes', 'maxTextBytes'];
    expect(nearestName('Normalize', names)).toBe('normalize');
    expect(nearestName('normalise', names)).toBe('normalize');
    expect(nearestName('norm', names)).toBe('normalize');
    expect(nearestName('maxPendingByte', names)).toBe('maxPendingBytes');
    expect(nearestName('maxTextBtyes', names)).toBe('maxTextBytes'); // a transposition is one edit
    expect(nearestName('max', names)).toBeUndefined(); // two names begin with it
    expect(nearestName('fatal', names)).toBeUndefined();
    expect(nearestName('utf-8', ['utf8', 'utf16'])).toBe('utf8');
  });

  it('checkOptions: undefined or an object with known keys', () => {
    expect(checkOptions(undefined, 'X', ['a'])).toBeUndefined();
    const o = { a: 1 };
    expect(checkOptions(o, 'X', ['a'])).toBe(o);
    expect(typeError(() => checkOptions(any(null), 'X', ['a']))).toBe('X: options must be an object, got null');
    expect(typeError(() => checkOptions(any('a'), 'X', ['a']))).toBe("X: options must be an object, got 'a'");
    expect(typeError(() => checkOptions(any([]), 'X', ['a']))).toBe('X: options must be an object, got an array (length 0)');
    expect(typeError(() => checkOptions(any(() => 1), 'X', ['a'], { notObject: () => 'a hint' }))).toBe('X: options must be an object, got a function (a hint)');
    expect(typeError(() => checkOptions(any({ a: 1, bb: 2 }), 'X', ['a', 'b']))).toBe("X: unknown option 'bb' (did you mean 'b'?); valid options: a, b");
    expect(typeError(() => checkOptions(any({ zzz: 1 }), 'X', ['a', 'b']))).toBe("X: unknown option 'zzz'; valid options: a, b");
    expect(typeError(() => checkOptions(any({ zzz: 1 }), 'X', ['a'], { keys: { zzz: 'a habit' } }))).toBe("X: unknown option 'zzz' (a habit); valid options: a");
    expect(typeError(() => checkOptions(any({ a: 1 }), 'X', []))).toBe("X: unknown option 'a'; it takes none");
    // hints from a list of records: the first that has the key; never an inherited property
    expect(typeError(() => checkOptions(any({ zzz: 1 }), 'X', ['a'], { keys: [{ b: 'one' }, { zzz: 'two' }, { zzz: 'three' }] }))).toBe("X: unknown option 'zzz' (two); valid options: a");
    expect(typeError(() => checkOptions(any({ constructor: 1 }), 'X', ['a'], { keys: {} }))).toBe("X: unknown option 'constructor'; valid options: a");
    // a key present with the value undefined is still a wrong name; inherited keys are not looked at
    expect(typeError(() => checkOptions(any({ toString: undefined }), 'X', ['a']))).toContain("unknown option 'toString'");
    expect(checkOptions(Object.create({ inherited: 1 }), 'X', ['a'])).toBeDefined();
  });

  it('booleanOption', () => {
    expect(booleanOption(undefined, 'fatal', 'X', true)).toBe(true);
    expect(booleanOption(false, 'fatal', 'X', true)).toBe(false);
    expect(typeError(() => booleanOption('false', 'fatal', 'X', true))).toBe("X: fatal must be true or false, got 'false' (a string: give false without quotes)");
    expect(typeError(() => booleanOption(1, 'fatal', 'X', true))).toBe('X: fatal must be true or false, got 1 (a number: give true)');
    expect(typeError(() => booleanOption(null, 'fatal', 'X', true))).toBe('X: fatal must be true or false, got null');
  });

  it('oneOf: a TypeError for another type, the caller’s error for another value of the type', () => {
    const values = ['discard', 'dispatch'] as const;
    expect(oneOf(undefined, 'eof', 'X', values, 'discard')).toBe('discard');
    expect(oneOf('dispatch', 'eof', 'X', values, 'discard')).toBe('dispatch');
    expect(typeError(() => oneOf('Dispatch', 'eof', 'X', values, 'discard'))).toBe("X: eof must be 'discard' or 'dispatch', got 'Dispatch' (did you mean 'dispatch'?)");
    expect(typeError(() => oneOf(true, 'eof', 'X', values, 'discard'))).toBe("X: eof must be 'discard' or 'dispatch', got true");
    // required when there is no default
    expect(typeError(() => oneOf(undefined, 'to', 'X', ['a', 'b', 'c'], undefined))).toBe("X: to must be 'a', 'b' or 'c', got undefined");
    const e = thrown(() => oneOf('x', 'to', 'X', ['a'], undefined, (m) => new RangeError(m), { x: 'a hint' }));
    expect(e).toBeInstanceOf(RangeError);
    expect(e.message).toBe("X: to must be 'a', got 'x' (a hint)");
  });

  it('functionOption', () => {
    const f = () => {};
    expect(functionOption(undefined, 'onComment', 'X')).toBeUndefined();
    expect(functionOption(f, 'onComment', 'X')).toBe(f);
    expect(typeError(() => functionOption('f', 'onComment', 'X'))).toBe("X: onComment must be a function, got 'f'");
  });

  it('byteLimitOption: integers from 1 to max, Infinity when max is', () => {
    const MAX = 512 * 1024 * 1024;
    expect(byteLimitOption(undefined, 'maxLineBytes', 'X', 100, MAX)).toBe(100);
    expect(byteLimitOption(MAX, 'maxLineBytes', 'X', 100, MAX)).toBe(MAX);
    expect(byteLimitOption(Infinity, 'maxPendingBytes', 'X', 100, Infinity)).toBe(Infinity);
    for (const bad of [0, -1, 1.5, NaN, MAX + 1, Infinity]) {
      expect(typeError(() => byteLimitOption(bad, 'maxLineBytes', 'X', 100, MAX)))
        .toBe(`X: maxLineBytes must be an integer number of bytes from 1 to 536870912 (512 MiB), got ${describeValue(bad)}`);
    }
    expect(typeError(() => byteLimitOption('1024', 'maxLineBytes', 'X', 100, MAX))).toContain("got '1024' (a string: give the number 1024)");
    expect(typeError(() => byteLimitOption(1024n, 'maxLineBytes', 'X', 100, MAX))).toContain('got 1024n (a bigint: give the number 1024)');
    expect(typeError(() => byteLimitOption(null, 'maxLineBytes', 'X', 100, MAX))).toContain('got null');
    const e = thrown(() => byteLimitOption(0, 'maxPendingBytes', 'X', 100, Infinity, (m) => new RangeError(m)));
    expect(e).toBeInstanceOf(RangeError);
    expect(e.message).toBe('X: maxPendingBytes must be a positive integer number of bytes or Infinity, got 0');
  });
});

describe('TextAssembler options', () => {
  it('names the limit that is wrong', () => {
    const m = rangeError(() => new TextAssembler({ maxTextBytes: 0 }));
    expect(m).toBe('TextAssembler: maxTextBytes must be a positive integer number of bytes or Infinity, got 0');
    expect(rangeError(() => new TextAssembler({ maxPendingBytes: 1.5 }))).toBe('TextAssembler: maxPendingBytes must be a positive integer number of bytes or Infinity, got 1.5');
    expect(typeError(() => new TextAssembler({ maxTextBytes: any('1024') }))).toBe("TextAssembler: maxTextBytes must be a positive integer number of bytes or Infinity, got '1024' (a string: give the number 1024)");
    expect(new TextAssembler({ maxTextBytes: Infinity, maxPendingBytes: 16 })).toMatchObject({ maxTextBytes: Infinity, maxPendingBytes: 16 });
  });

  it('takes an object or nothing', () => {
    expect(typeError(() => new TextAssembler(any('x')))).toBe("TextAssembler: options must be an object, got 'x' (did you mean new TextAssembler({ normalize: 'x' })?)");
    expect(typeError(() => new TextAssembler(any(false)))).toBe('TextAssembler: options must be an object, got false (did you mean new TextAssembler({ normalize: false })?)');
    expect(typeError(() => new TextAssembler(any(1024)))).toBe('TextAssembler: options must be an object, got 1024 (did you mean new TextAssembler({ maxTextBytes: 1024 })?)');
    expect(typeError(() => new TextAssembler(any(function onText() {})))).toBe('TextAssembler: options must be an object, got a function (onText)');
    expect(typeError(() => new TextAssembler(any(null)))).toBe('TextAssembler: options must be an object, got null');
    expect(new TextAssembler(undefined).normalize).toBe('NFC');
    expect(new TextAssembler({}).normalize).toBe('NFC');
  });

  it('checks normalize', () => {
    expect(rangeError(() => new TextAssembler({ normalize: any('nfc') }))).toBe("TextAssembler: normalize must be 'NFC' or false, got 'nfc' (did you mean 'NFC'?)");
    expect(rangeError(() => new TextAssembler({ normalize: any(true) }))).toBe("TextAssembler: normalize must be 'NFC' or false, got true (NFC is the default; 'NFC' names it and false turns it off)");
    expect(rangeError(() => new TextAssembler({ normalize: any('NFKC') }))).toContain('only NFC is streamed');
    expect(typeError(() => new TextAssembler({ normalize: any(1) }))).toBe("TextAssembler: normalize must be 'NFC' or false, got 1");
    expect(typeError(() => new TextAssembler({ normalize: any(null) }))).toBe("TextAssembler: normalize must be 'NFC' or false, got null");
    expect(new TextAssembler({ normalize: false }).normalize).toBe(false);
  });

  it('rejects unknown options, naming the key and the valid ones', () => {
    const valid = 'valid options: normalize, maxPendingBytes, maxTextBytes';
    expect(typeError(() => new TextAssembler(any({ normalization: 'NFC' })))).toBe(`TextAssembler: unknown option 'normalization' (did you mean 'normalize'?); ${valid}`);
    expect(typeError(() => new TextAssembler(any({ normalise: 'NFC' })))).toBe(`TextAssembler: unknown option 'normalise' (did you mean 'normalize'?); ${valid}`);
    expect(typeError(() => new TextAssembler(any({ maxTextByte: 10 })))).toBe(`TextAssembler: unknown option 'maxTextByte' (did you mean 'maxTextBytes'?); ${valid}`);
    expect(typeError(() => new TextAssembler(any({ maxEventBytes: 10 })))).toContain("did you mean 'maxTextBytes' (all the committed text) or 'maxPendingBytes' (the text held back)?");
    expect(typeError(() => new TextAssembler(any({ fatal: true })))).toContain('fatal is an option of the decoder that makes them (Utf8Decoder, SseParser)');
    expect(typeError(() => new TextAssembler(any({ expected: 'x' })))).toContain('an option of finish(): finish({ expected })');
    expect(typeError(() => new TextAssembler(any({ colour: 1 })))).toBe(`TextAssembler: unknown option 'colour'; ${valid}`);
  });

  it('checks finish() options before the stream ends', () => {
    const a = new TextAssembler();
    expect(a.push('ab')).toBe('a');
    expect(typeError(() => a.finish(any('ab')))).toBe("TextAssembler.finish: options must be an object, got 'ab' (did you mean finish({ expected: text })?)");
    expect(typeError(() => a.finish(any({ expect: 'ab' })))).toBe("TextAssembler.finish: unknown option 'expect' (did you mean 'expected'?); valid options: expected");
    expect(typeError(() => a.finish(any({ expected: 42 })))).toBe('TextAssembler.finish: expected must be a string, got 42');
    expect(typeError(() => a.finish(any({ expected: { content: 'ab' } })))).toBe('TextAssembler.finish: expected must be a string, got an object (did you mean finish({ expected: x.content })?)');
    expect(typeError(() => a.finish(any({ expected: null })))).toBe('TextAssembler.finish: expected must be a string, got null');
    // nothing was lost or reset by the refused calls
    expect(a.pending).toBe('b');
    expect(a.finish({ expected: 'ab' })).toMatchObject({ text: 'ab', mismatch: false });
  });
});

describe('GraphemeCommitter and NfcCommitter options', () => {
  it('name their limit and check it', () => {
    expect(rangeError(() => new GraphemeCommitter({ maxPendingBytes: 0 }))).toBe('GraphemeCommitter: maxPendingBytes must be a positive integer number of bytes or Infinity, got 0');
    expect(rangeError(() => new NfcCommitter({ maxPendingBytes: -1 }))).toBe('NfcCommitter: maxPendingBytes must be a positive integer number of bytes or Infinity, got -1');
    expect(typeError(() => new NfcCommitter({ maxPendingBytes: any('64') }))).toContain("got '64' (a string: give the number 64)");
    expect(new NfcCommitter({ maxPendingBytes: 10 }).maxPendingBytes).toBe(10);
    expect(new NfcCommitter().maxPendingBytes).toBe(65536);
  });

  it('take an object or nothing', () => {
    expect(typeError(() => new GraphemeCommitter(any('en')))).toBe("GraphemeCommitter: options must be an object, got 'en' (GraphemeCommitter takes no locale: clusters are the same in every locale (UAX #29, Unicode 17.0))");
    expect(typeError(() => new GraphemeCommitter(any(1024)))).toBe('GraphemeCommitter: options must be an object, got 1024 (did you mean new GraphemeCommitter({ maxPendingBytes: 1024 })?)');
    expect(typeError(() => new NfcCommitter(any('NFC')))).toContain("got 'NFC' (NfcCommitter always normalizes to NFC");
    expect(typeError(() => new NfcCommitter(any(null)))).toBe('NfcCommitter: options must be an object, got null');
  });

  it('reject unknown options, with the habit that explains them', () => {
    expect(typeError(() => new GraphemeCommitter(any({ normalize: 'NFC' })))).toBe(
      "GraphemeCommitter: unknown option 'normalize' (GraphemeCommitter does not normalize: TextAssembler commits whole graphemes in NFC); valid options: maxPendingBytes");
    expect(typeError(() => new GraphemeCommitter(any({ granularity: 'grapheme' })))).toContain('clusters are always extended grapheme clusters');
    expect(typeError(() => new GraphemeCommitter(any({ maxPendingByte: 10 })))).toBe(
      "GraphemeCommitter: unknown option 'maxPendingByte' (did you mean 'maxPendingBytes'?); valid options: maxPendingBytes");
    expect(typeError(() => new NfcCommitter(any({ maxTextBytes: 10 })))).toBe(
      "NfcCommitter: unknown option 'maxTextBytes' (a limit of TextAssembler; NfcCommitter holds only text that may still change, up to maxPendingBytes); valid options: maxPendingBytes");
    expect(typeError(() => new NfcCommitter(any({ form: 'NFD' })))).toContain('NfcCommitter always normalizes to NFC');
  });
});
