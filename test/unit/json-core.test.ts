// The core's JSON reader: exact records for provider events, duplicate keys (the last wins),
// strings made by the bindings' routes, and exact error codes and offsets.
import { describe, expect, test } from 'vitest';
import { getCore, wasmBackend } from '../../bindings/core/wasm.js';
import {
  JE, JF_ASCII, JF_ESCAPED, JF_INTEGER, JK, JSON_MAX_DEPTH, compilePaths, expectedAt, foundIn, jx, loadProgram,
  parses, readIn, recString, records, referenceCheck, type Rec, type ReadResult,
} from '../helpers/json-core.js';

const enc = new TextEncoder();

const OPENAI = [
  'choices[*].index', 'choices[*].delta.content', 'choices[*].delta.reasoning_content', 'choices[*].delta.reasoning',
  'choices[*].delta.tool_calls', 'choices[*].finish_reason', 'usage', 'error', 'error.message',
];
const ANTHROPIC = [
  'type', 'index', 'delta.type', 'delta.text', 'delta.thinking', 'delta.partial_json', 'delta.stop_reason', 'usage',
  'message.usage', 'error.message',
];
const [O_INDEX, O_CONTENT, O_REASONING_CONTENT, O_REASONING, O_TOOL_CALLS, O_FINISH, O_USAGE, O_ERROR, O_ERROR_MESSAGE] = OPENAI.keys();
const [A_TYPE, A_INDEX, A_DELTA_TYPE, A_TEXT, A_THINKING, A_PARTIAL, A_STOP, A_USAGE, A_MESSAGE_USAGE, A_ERROR_MESSAGE] = ANTHROPIC.keys();

// Programs side by side in the program area, as a format set would keep them.
const openaiProg = compilePaths(OPENAI);
const anthropicProg = compilePaths(ANTHROPIC);
const progAt = { openai: 0, anthropic: (openaiProg.length + 15) & ~15 };
const load = () => ({ openai: loadProgram(openaiProg, progAt.openai), anthropic: loadProgram(anthropicProg, progAt.anthropic) });

const read = (prog: number, doc: string | Uint8Array): ReadResult => readIn(prog, typeof doc === 'string' ? enc.encode(doc) : doc);
function recsOf(prog: number, doc: string): Rec[] {
  const r = read(prog, doc);
  if (!r.ok) throw new Error(`rejected (${r.code} at ${r.offset}): ${doc}`);
  return r.recs;
}

/**
 * Byte offsets of `value` in `doc`, where it follows `before` (the first occurrence of the two
 * together); a string value's span is the bytes between its quotes.
 */
function span(doc: string, before: string, value: string): [number, number] {
  const at = doc.indexOf(before + value);
  if (at < 0) throw new Error(`${before}${value} not in ${doc}`);
  const s = enc.encode(doc.slice(0, at + before.length)).length;
  const n = enc.encode(value).length;
  return value.startsWith('"') ? [s + 1, s + n - 1] : [s, s + n];
}
const rec = (path: number, kind: number, flags: number, index: number, [start, end]: [number, number]): Rec => ({ path, kind, flags, index, start, end });

/** The values at the paths agree with JSON.parse of the document. */
function agrees(prog: number, paths: string[], doc: string): void {
  const recs = recsOf(prog, doc);
  expect(foundIn(getCore(), enc.encode(doc), recs)).toEqual(expectedAt(JSON.parse(doc), paths));
}

describe(`JSON reader (${wasmBackend()})`, () => {
  test('runs on the requested core', () => {
    expect(wasmBackend()).toBe(process.env.SEAM_WASM);
  });

  describe('OpenAI Chat events: exact records', () => {
    test('a content delta', () => {
      const { openai } = load();
      const doc = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1732900000,"model":"gpt-4o","system_fingerprint":"fp_1",'
        + '"choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"logprobs":null,"finish_reason":null}]}';
      expect(recsOf(openai, doc)).toEqual([
        rec(O_INDEX, JK.number, JF_INTEGER, 0, span(doc, '"index":', '0')),
        rec(O_CONTENT, JK.string, JF_ASCII, 0, span(doc, '"content":', '"Hello"')),
        rec(O_FINISH, JK.null, 0, 0, span(doc, '"finish_reason":', 'null')),
      ]);
      agrees(openai, OPENAI, doc);
    });

    test('content: null, and a finish reason', () => {
      const { openai } = load();
      const doc = '{"choices":[{"index":0,"delta":{"content":null},"finish_reason":"stop"}]}';
      expect(recsOf(openai, doc)).toEqual([
        rec(O_INDEX, JK.number, JF_INTEGER, 0, span(doc, '"index":', '0')),
        rec(O_CONTENT, JK.null, 0, 0, span(doc, '"content":', 'null')),
        rec(O_FINISH, JK.string, JF_ASCII, 0, span(doc, '"finish_reason":', '"stop"')),
      ]);
    });

    test('choices: [] with usage (the last chunk with stream_options.include_usage)', () => {
      const { openai } = load();
      const usage = '{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21,"prompt_tokens_details":{"cached_tokens":0}}';
      const doc = `{"id":"c","object":"chat.completion.chunk","choices":[],"usage":${usage}}`;
      expect(recsOf(openai, doc)).toEqual([rec(O_USAGE, JK.object, 0, -1, span(doc, '"usage":', usage))]);
      agrees(openai, OPENAI, doc);
    });

    test('tool calls: the array as one span', () => {
      const { openai } = load();
      const calls = '[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\":"}}]';
      const doc = `{"choices":[{"index":0,"delta":{"tool_calls":${calls}},"finish_reason":null}]}`;
      expect(recsOf(openai, doc)).toEqual([
        rec(O_INDEX, JK.number, JF_INTEGER, 0, span(doc, '"index":', '0')),
        rec(O_TOOL_CALLS, JK.array, 0, 0, span(doc, '"tool_calls":', calls)),
        rec(O_FINISH, JK.null, 0, 0, span(doc, '"finish_reason":', 'null')),
      ]);
      agrees(openai, OPENAI, doc);
    });

    test('reasoning_content and reasoning, escaped and non-ASCII', () => {
      const { openai } = load();
      const doc = '{"choices":[{"index":0,"delta":{"reasoning_content":"思考\\n\\"引用\\"","reasoning":"plain é"}}]}';
      const recs = recsOf(openai, doc);
      expect(recs).toEqual([
        rec(O_INDEX, JK.number, JF_INTEGER, 0, span(doc, '"index":', '0')),
        rec(O_REASONING_CONTENT, JK.string, JF_ESCAPED, 0, span(doc, '"reasoning_content":', '"思考\\n\\"引用\\""')),
        rec(O_REASONING, JK.string, 0, 0, span(doc, '"reasoning":', '"plain é"')),
      ]);
      const core = getCore();
      expect(recString(core, core.inPtr, recs[1])).toBe('思考\n"引用"');
      expect(recString(core, core.inPtr, recs[2])).toBe('plain é');
    });

    test('several choices: each record carries its element index', () => {
      const { openai } = load();
      const doc = '{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"},"finish_reason":"length"},'
        + '{"delta":{"content":"c"},"index":2}]}';
      const recs = recsOf(openai, doc);
      expect(recs.map((r) => [r.path, r.index])).toEqual([
        [O_INDEX, 0], [O_CONTENT, 0], [O_INDEX, 1], [O_CONTENT, 1], [O_FINISH, 1], [O_CONTENT, 2], [O_INDEX, 2],
      ]);
      expect(recs[5]).toEqual(rec(O_CONTENT, JK.string, JF_ASCII, 2, span(doc, '"content":', '"c"')));
      agrees(openai, OPENAI, doc);
    });

    test('an error body: the object and its message', () => {
      const { openai } = load();
      const err = '{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}';
      const doc = `{"error":${err}}`;
      expect(recsOf(openai, doc)).toEqual([
        rec(O_ERROR, JK.object, 0, -1, span(doc, '"error":', err)),
        rec(O_ERROR_MESSAGE, JK.string, JF_ASCII, -1, span(doc, '"message":', '"Rate limit reached"')),
      ]);
    });

    test('whitespace everywhere, and values of other kinds at the paths', () => {
      const { openai } = load();
      const doc = ' \r\n{ "choices" :\t[ { "index" : -1.5e+3 , "delta" : { "content" : [ 1 , 2 ] } , "finish_reason" : false } ] ,'
        + ' "usage" : "none" , "error" : true }\n ';
      expect(recsOf(openai, doc)).toEqual([
        rec(O_INDEX, JK.number, 0, 0, span(doc, '"index" : ', '-1.5e+3')),
        rec(O_CONTENT, JK.array, 0, 0, span(doc, '"content" : ', '[ 1 , 2 ]')),
        rec(O_FINISH, JK.false, 0, 0, span(doc, '"finish_reason" : ', 'false')),
        rec(O_USAGE, JK.string, JF_ASCII, -1, span(doc, '"usage" : ', '"none"')),
        rec(O_ERROR, JK.true, 0, -1, span(doc, '"error" : ', 'true')),
      ]);
      agrees(openai, OPENAI, doc);
    });

    test('paths through values of the wrong kind find nothing', () => {
      const { openai } = load();
      for (const doc of ['{"choices":{"0":{"delta":{"content":"x"}}}}', '{"choices":[["x"],"y",1,null]}', '{"choices":[{"delta":"content"}]}', '[{"choices":[]}]', '"choices"', '0']) {
        expect(recsOf(openai, doc)).toEqual([]);
      }
    });
  });

  describe('Anthropic Messages events: exact records', () => {
    test('content_block_delta with text', () => {
      const { anthropic } = load();
      const doc = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi 👋"}}';
      expect(recsOf(anthropic, doc)).toEqual([
        rec(A_TYPE, JK.string, JF_ASCII, -1, span(doc, '"type":', '"content_block_delta"')),
        rec(A_INDEX, JK.number, JF_INTEGER, -1, span(doc, '"index":', '0')),
        rec(A_DELTA_TYPE, JK.string, JF_ASCII, -1, span(doc, '"delta":{"type":', '"text_delta"')),
        rec(A_TEXT, JK.string, 0, -1, span(doc, '"text":', '"Hi 👋"')),
      ]);
      agrees(anthropic, ANTHROPIC, doc);
    });

    test('message_start: message.usage', () => {
      const { anthropic } = load();
      const usage = '{"input_tokens":25,"output_tokens":1}';
      const doc = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","stop_reason":null,"usage":${usage}}}`;
      expect(recsOf(anthropic, doc)).toEqual([
        rec(A_TYPE, JK.string, JF_ASCII, -1, span(doc, '"type":', '"message_start"')),
        rec(A_MESSAGE_USAGE, JK.object, 0, -1, span(doc, '"usage":', usage)),
      ]);
    });

    test('message_delta: stop_reason and usage', () => {
      const { anthropic } = load();
      const doc = '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}';
      expect(recsOf(anthropic, doc)).toEqual([
        rec(A_TYPE, JK.string, JF_ASCII, -1, span(doc, '"type":', '"message_delta"')),
        rec(A_STOP, JK.string, JF_ASCII, -1, span(doc, '"stop_reason":', '"end_turn"')),
        rec(A_USAGE, JK.object, 0, -1, span(doc, '"usage":', '{"output_tokens":15}')),
      ]);
    });

    test('thinking and input_json_delta (escaped partial JSON)', () => {
      const { anthropic } = load();
      const t = '{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"Let me think…"}}';
      expect(recsOf(anthropic, t)[3]).toEqual(rec(A_THINKING, JK.string, 0, -1, span(t, '"thinking":', '"Let me think…"')));
      const j = '{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\\"location\\": \\"San Fra"}}';
      const recs = recsOf(anthropic, j);
      expect(recs[3]).toEqual(rec(A_PARTIAL, JK.string, JF_ESCAPED | JF_ASCII, -1, span(j, '"partial_json":', '"{\\"location\\": \\"San Fra"')));
      const core = getCore();
      expect(recString(core, core.inPtr, recs[3])).toBe('{"location": "San Fra');
    });

    test('error event and ping', () => {
      const { anthropic } = load();
      const doc = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}';
      expect(recsOf(anthropic, doc)).toEqual([
        rec(A_TYPE, JK.string, JF_ASCII, -1, span(doc, '"type":', '"error"')),
        rec(A_ERROR_MESSAGE, JK.string, JF_ASCII, -1, span(doc, '"message":', '"Overloaded"')),
      ]);
      const ping = '{"type": "ping"}';
      expect(recsOf(anthropic, ping)).toEqual([rec(A_TYPE, JK.string, JF_ASCII, -1, span(ping, '"type": ', '"ping"'))]);
    });
  });

  describe('duplicate keys: the last one wins, as in JSON.parse', () => {
    const cases: [string, string[], string][] = [
      ['a container replaced by an empty one', OPENAI, '{"choices":[{"delta":{"content":"a"}}],"choices":[]}'],
      ['an empty container replaced by a full one', OPENAI, '{"choices":[],"choices":[{"delta":{"content":"b"}}]}'],
      ['a container replaced by a scalar', OPENAI, '{"choices":[{"index":0,"delta":{"content":"a"}}],"choices":5}'],
      ['the same string twice', OPENAI, '{"choices":[{"delta":{"content":"a","content":"b"}}]}'],
      ['a string replaced by null', OPENAI, '{"choices":[{"delta":{"content":"a","role":"x","content":null}}]}'],
      ['the key escaped the first time', OPENAI, '{"choices":[{"delta":{"con\\u0074ent":"a","content":"b"}}]}'],
      ['the key escaped the second time', OPENAI, '{"choices":[{"delta":{"content":"a","\\u0063\\u006Fntent":"b"}}]}'],
      ['an escaped container key', OPENAI, '{"choices":[{"delta":{"content":"a"}}],"\\u0063hoices":[{"delta":{"content":"b"}}]}'],
      ['the delta replaced, the content inside kept separate', OPENAI, '{"choices":[{"delta":{"content":"a"},"index":3,"delta":{"reasoning":"r"}}]}'],
      ['per element of an array', OPENAI, '{"choices":[{"index":0,"index":1},{"index":2},{"index":3,"index":4,"index":5}]}'],
      ['a parent path and its child', OPENAI, '{"error":{"message":"a"},"error":"x"}'],
      ['a parent path replaced by one with a child', OPENAI, '{"error":"x","error":{"message":"b","message":"c"}}'],
      ['three times, containers in between', OPENAI, '{"usage":{"a":1},"choices":[],"usage":[1],"choices":[{"delta":{"tool_calls":[]}}],"usage":{"b":2}}'],
      ['keys that only look alike', OPENAI, '{"choices":[{"delta":{"content":"a","Content":"b","content ":"c","contents":"d"}}]}'],
      ['nested: the parent replaced after its child was', ['a', 'a.b', 'a.c', 'a.b.c'], '{"a":{"b":{"c":1,"c":2},"b":{"c":3}},"a":{"c":4,"b":{"c":5}}}'],
      ['nested: only inner duplicates', ['a.b.c', 'a.b'], '{"a":{"x":{},"b":{"c":1,"d":{"c":9},"c":2}}}'],
      ['a non-BMP key as a surrogate pair escape', ['😀.x', '😀'], '{"😀":{"x":1},"\\ud83d\\ude00":{"x":2}}'],
      ['a lone surrogate key is not U+FFFD', ['\ufffd'], '{"\\ud800":1,"\\ufffd":2,"\\udc00":3}'],
      ['the root path and a duplicate below it', ['', 'a'], '{"a":1,"b":2,"a":3}'],
      ['a __proto__ key is an ordinary key', ['__proto__', '__proto__.x'], '{"__proto__":{"x":1},"__proto__":{"x":2}}'],
      ['nested stars', ['a[*][*]', 'a[*][*].b'], '{"a":[[{"b":1,"b":2}],[],[3,{"b":4}]],"z":0}'],
    ];
    test.each(cases)('%s', (_name, paths, doc) => {
      const prog = loadProgram(compilePaths(paths), 4096);
      agrees(prog, paths, doc);
    });

    test('the dropped records are gone, the rest keep document order', () => {
      const { openai } = load();
      const doc = '{"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"u":1},"choices":[{"index":1,"delta":{"content":"b"}}]}';
      expect(recsOf(openai, doc)).toEqual([
        rec(O_USAGE, JK.object, 0, -1, span(doc, '"usage":', '{"u":1}')),
        rec(O_INDEX, JK.number, JF_INTEGER, 0, span(doc, '"index":', '1')),
        rec(O_CONTENT, JK.string, JF_ASCII, 0, span(doc, '"content":', '"b"')),
      ]);
    });

    test('earlier reads leave nothing behind: the same object shape twice in a row', () => {
      const { openai } = load();
      for (let k = 0; k < 3; k++) {
        agrees(openai, OPENAI, '{"choices":[{"delta":{"content":"a"}}]}');
        agrees(openai, OPENAI, '{"choices":[{"delta":{"content":"b"}}],"choices":[{"delta":{}}]}');
      }
    });
  });

  describe('strings: the bindings’ routes give JSON.parse’s text', () => {
    const texts = [
      '', 'plain ascii', 'é', '中文字符', '😀 emoji 🇯🇵', 'a"b', 'back\\slash', 'sl/ash', '\u0000\u0001\u001f\u007f',
      '\b\f\n\r\t', '\ud800', '\udfff', 'x\udc00\ud800y', '\u2028\u2029', 'tail \\', '"', 'long '.repeat(40) + '中'.repeat(40),
    ];
    test.each(texts.map((t) => [t]))('%j', (text) => {
      const prog = loadProgram(compilePaths(['s']), 4096);
      // as JSON.stringify writes it, with \u escapes for everything, and with / and non-ASCII escaped
      const forms = [
        JSON.stringify(text),
        '"' + [...text].map((c) => c.split('').map((u) => '\\u' + u.charCodeAt(0).toString(16).padStart(4, '0')).join('')).join('') + '"',
        JSON.stringify(text).replace(/\//g, '\\/').replace(/[\u0080-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')),
      ];
      for (const s of forms) {
        const doc = `{"s":${s}}`;
        const r = read(prog, doc);
        expect(r.ok).toBe(true);
        if (!r.ok) return;
        expect(recString(getCore(), getCore().inPtr, r.recs[0])).toBe(JSON.parse(s));
      }
    });
  });

  describe('errors: exact code and offset', () => {
    const nest = (n: number, open: string, close: string, inner = '') => open.repeat(n) + inner + close.repeat(n);
    const cases: [string, string, number, number][] = [
      ['trailing comma in an object', '{"a":1,}', JE.UNEXPECTED, 7],
      ['trailing comma in an array', '[1,2,]', JE.UNEXPECTED, 5],
      ['leading comma', '[,1]', JE.UNEXPECTED, 1],
      ['leading zero', '01', JE.NUMBER, 1],
      ['leading zero in an array', '[00]', JE.NUMBER, 2],
      ['leading zero after minus', '{"a":-012}', JE.NUMBER, 7],
      ['minus alone', '[-]', JE.NUMBER, 2],
      ['plus sign', '+1', JE.UNEXPECTED, 0],
      ['no integer part', '.5', JE.UNEXPECTED, 0],
      ['no fraction digits', '[1.]', JE.NUMBER, 3],
      ['fraction without digits, exponent', '1.e5', JE.NUMBER, 2],
      ['exponent without digits', '[1e]', JE.NUMBER, 3],
      ['exponent sign without digits', '1E+x', JE.NUMBER, 3],
      ['hex number', '0x10', JE.TRAILING, 1],
      ['number ended by a letter', '[12a]', JE.UNEXPECTED, 3],
      ['bad escape', '"\\x"', JE.ESCAPE, 2],
      ['escaped single quote', '["\\\'"]', JE.ESCAPE, 3],
      ['\\u with three digits', '"\\u12"', JE.ESCAPE, 5],
      ['\\u12 truncated', '"\\u12', JE.TRUNCATED, 5],
      ['\\u with a non-hex digit', '"\\u12G4"', JE.ESCAPE, 5],
      ['\\U', '"\\U0041"', JE.ESCAPE, 2],
      ['raw tab in a string', '{"a":"x\ty"}', JE.CONTROL, 7],
      ['raw LF in a key', '{"a\nb":1}', JE.CONTROL, 3],
      ['raw NUL in a string', '"\u0000"', JE.CONTROL, 1],
      ['unclosed object', '{"a":1', JE.TRUNCATED, 6],
      ['unclosed array', '[1,[2]', JE.TRUNCATED, 6],
      ['unclosed string', '{"a":"xyz', JE.TRUNCATED, 9],
      ['backslash at the end', '"abc\\', JE.TRUNCATED, 5],
      ['object cut after a key', '{"a"', JE.TRUNCATED, 4],
      ['object cut after a colon', '{"a": ', JE.TRUNCATED, 6],
      ['empty input', '', JE.TRUNCATED, 0],
      ['only whitespace', ' \t\r\n', JE.TRUNCATED, 4],
      ['garbage after the value', '{"a":1} x', JE.TRAILING, 8],
      ['a second value', '[1] [2]', JE.TRAILING, 4],
      ['a second number', '1 2', JE.TRAILING, 2],
      ['a literal run on', 'truex', JE.TRAILING, 4],
      ['a wrong literal byte', '[nulL]', JE.LITERAL, 4],
      ['a literal cut off', '[fals', JE.TRUNCATED, 5],
      ['a capital literal', 'True', JE.UNEXPECTED, 0],
      ['missing colon', '{"a" 1}', JE.UNEXPECTED, 5],
      ['non-string key', '{1:2}', JE.UNEXPECTED, 1],
      ['missing value', '{"a":}', JE.UNEXPECTED, 5],
      ['missing comma', '[1 2]', JE.UNEXPECTED, 3],
      ['wrong closer', '{"a":1]', JE.UNEXPECTED, 6],
      ['wrong closer for an empty array', '[}', JE.UNEXPECTED, 1],
      ['single-quoted string', "['a']", JE.UNEXPECTED, 1],
      ['a comment', '[1 /* x */]', JE.UNEXPECTED, 3],
      ['non-breaking space as whitespace', '[1,\u00a02]', JE.UNEXPECTED, 3],
      ['form feed as whitespace', '[\f1]', JE.UNEXPECTED, 1],
      ['arrays at the depth limit + 1', nest(JSON_MAX_DEPTH + 1, '[', ']'), JE.DEPTH, JSON_MAX_DEPTH],
      ['objects at the depth limit + 1 (in a key)', nest(JSON_MAX_DEPTH + 1, '{"k":', '}', '0'), JE.DEPTH, 5 * JSON_MAX_DEPTH],
      ['depth limit + 1 under a followed path', '{"choices":' + nest(JSON_MAX_DEPTH, '[', ']') + '}', JE.DEPTH, 11 + JSON_MAX_DEPTH - 1],
    ];
    test.each(cases)('%s', (_name, doc, code, offset) => {
      const { openai } = load();
      const bytes = enc.encode(doc);
      expect(read(openai, bytes)).toEqual({ ok: false, code, offset });
      expect(referenceCheck(bytes)).toEqual({ code, offset });
      if (code !== JE.DEPTH) expect(parses(bytes)).toBe(false);
    });

    test('the depth limit itself is accepted, on followed and skipped paths', () => {
      const { openai } = load();
      for (const doc of [
        nest(JSON_MAX_DEPTH, '[', ']'),
        nest(JSON_MAX_DEPTH, '{"k":', '}', '0'),
        '{"choices":' + nest(JSON_MAX_DEPTH - 1, '[', ']') + '}',
        '{"choices":[{"delta":{"content":' + nest(JSON_MAX_DEPTH - 4, '[', ']') + '}}]}',
      ]) {
        expect(read(openai, doc)).toMatchObject({ ok: true });
        expect(referenceCheck(enc.encode(doc)).code).toBe(0);
        expect(parses(enc.encode(doc))).toBe(true);
      }
      const over = '{"choices":[{"delta":{"content":' + nest(JSON_MAX_DEPTH - 3, '[', ']') + '}}]}';
      expect(read(openai, over)).toEqual({ ok: false, code: JE.DEPTH, offset: over.indexOf('[[') + JSON_MAX_DEPTH - 4 });
    });

    test('valid documents are accepted', () => {
      const { openai } = load();
      for (const doc of ['0', '-0', '-0.0e-0', '1E+2', '123.456e789', 'true', 'false', 'null', '""', '[]', '{}', ' [ ] ', '{"":""}',
        '"\\u0000"', '"\\/\\b\\f\\n\\r\\t\\"\\\\"', '[1e400,-1e-400]', '{"a":[{"b":[]}],"c":{}}', '\t"x"\n']) {
        expect(read(openai, doc)).toMatchObject({ ok: true });
        expect(parses(enc.encode(doc))).toBe(true);
      }
    });

    test('bytes past the end of the document are never read as part of it', () => {
      const { openai } = load();
      const core = getCore();
      for (const doc of [
        '{"choices":[{"delta":{"content":"abcdefghijklmnopqrstuvwxyz\\n0123456789 true"}}]}  ',
        '[12345, true, false, null, -1.5e+10, "ab\\u00e9", {"k": [0]}]',
        '-0.25E-3',
        'false',
      ]) {
        const full = enc.encode(doc);
        for (let n = 0; n <= full.length; n++) {
          // the whole document stays in the window after the end of the part read
          core.sync();
          core.u8.set(full, core.inPtr);
          const got = jx().jsonReadIn(openai, n);
          const want = referenceCheck(full.subarray(0, n));
          expect([got < 0 ? -got : 0, got < 0 ? jx().jsonErrorAt() : n], `${n}: ${doc.slice(0, n)}`).toEqual([want.code, want.offset]);
          // and the byte the sentinel took is back
          expect(core.u8.subarray(core.inPtr, core.inPtr + full.length)).toEqual(full);
        }
      }
    });

    test('the record limit: JE_RECORDS at the value that needs one more', () => {
      const { openai } = load();
      const core = getCore();
      const doc = enc.encode('{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1}]}');
      core.sync();
      core.u8.set(doc, core.inPtr);
      const out = jx().JSON_REC_PTR.value as number;
      expect(jx().jsonRead(openai, core.inPtr, doc.length, out, 3)).toBe(3);
      expect(jx().jsonErrorAt()).toBe(-1);
      expect(jx().jsonRead(openai, core.inPtr, doc.length, out, 2)).toBe(-JE.RECORDS);
      expect(jx().jsonErrorAt()).toBe(new TextDecoder().decode(doc).indexOf('1}'));
      expect(jx().jsonRead(openai, core.inPtr, doc.length, out, 0)).toBe(-JE.RECORDS);
      // a record for a container is taken before the records inside it
      const err = enc.encode('{"error":{"type":"x","message":"y"}}');
      core.u8.set(err, core.inPtr);
      expect(jx().jsonRead(openai, core.inPtr, err.length, out, 1)).toBe(-JE.RECORDS);
      expect(jx().jsonErrorAt()).toBe(new TextDecoder().decode(err).indexOf('"y"'));
    });
  });

  test('jsonRead anywhere in memory: offsets are relative to the document', () => {
    const { openai } = load();
    const core = getCore();
    const doc = '{"choices":[{"index":7,"delta":{"content":"x\\ty"}}]}';
    const bytes = enc.encode(doc);
    core.sync();
    const at = core.inPtr + 1001;
    core.u8.set(bytes, at);
    const out = core.outPtr + 4096;
    const n = jx().jsonRead(openai, at, bytes.length, out, 16);
    expect(records(core, out, n)).toEqual([
      rec(O_INDEX, JK.number, JF_INTEGER, 0, span(doc, '"index":', '7')),
      rec(O_CONTENT, JK.string, JF_ESCAPED | JF_ASCII, 0, span(doc, '"content":', '"x\\ty"')),
    ]);
    expect(recString(core, at, records(core, out, n)[1])).toBe('x\ty');
  });
});
