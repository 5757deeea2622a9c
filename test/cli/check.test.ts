// `seam-stream check`, end to end: clean and broken captures, every problem with its byte offset.
import { beforeAll, describe, expect, it } from 'vitest';
import { codec } from '../helpers/bedrock-fixtures.js';
import { awkwardCuts, file, noStack, ollamaCapture, openaiCapture, prng, run, tempDir, writer } from './helpers.js';

const DELTAS = ['Grüße ', '👩', '\u200d🔬', ' 🇰', '🇷 ', 'cafe', '\u0301', '.'];
const TEXT = DELTAS.join('').normalize('NFC');
const graphemes = (s: string) => [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(s)].length;

let dir: string;
beforeAll(() => {
  dir = tempDir();
});

const check = async (args: string[], input?: Uint8Array | string) => {
  const r = await run(['check', '--json', ...args], input === undefined ? {} : { input });
  expect(noStack(r.stderr), r.stderr).toBe(true);
  return { code: r.code, result: JSON.parse(r.stdout), stderr: r.stderr };
};

describe('check', () => {
  it('a clean capture: exit 0, its counts, and no text printed', async () => {
    const bytes = openaiCapture(DELTAS, { crlf: true, bom: true });
    const f = file(dir, 'clean.sse', bytes);
    const { code, result, stderr } = await check([f]);
    expect(stderr).toBe('');
    expect({ code, result }).toEqual({
      code: 0,
      result: {
        input: f, format: 'openai', sniffed: true, clean: true, exitCode: 0, bytes: bytes.length,
        lines: 2 * (DELTAS.length + 5), events: DELTAS.length + 3, heartbeats: 2,
        graphemes: graphemes(TEXT), utf8Bytes: Buffer.byteLength(TEXT), completed: true, finishReason: 'stop', toolCalls: 0, invalidArguments: 0, problemCount: 0, problems: [],
      },
    });
    const human = await run(['check', f]);
    expect(human.stdout).toBe(`${f}: openai (sniffed), ${bytes.length.toLocaleString('en-US')} bytes, ${2 * (DELTAS.length + 5)} lines, ${DELTAS.length + 3} events, 2 heartbeats, ${graphemes(TEXT)} graphemes of text, completed (finish reason "stop")\nclean\n`);
  });

  it('a broken capture: every problem with its offset, in order; the exit code of the first that stops decode', async () => {
    const parts: (string | number[])[] = [
      'retry: 3000\n',
      'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n',
      'retry: 1000x\n', // bogus retry
      'colour: blue\n', // unknown field
      'data: {"choices":[{"index":0,"delta":{"content":"b', [0xff], '"}}]}\n\n', // invalid UTF-8
      'data: {"choices":[\n\n', // not JSON
      'data: {"choices":[{"index":0,"delta":{"content":"', [0xe2, 0x82], '"}}]}\n\n', // a cut character
      'data: {"choices":[{"index":0,"delta":{"content":"c"}}]}\n', // unterminated, and no [DONE]
    ];
    const bytes = Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));
    const s = bytes.toString('latin1');
    const at = (needle: string, from = 0) => s.indexOf(needle, from);
    const expected = [
      { kind: 'retry', offset: at('retry: 1000x'), message: 'retry "1000x" is not all ASCII digits (ignored by clients)' },
      { kind: 'field', offset: at('colour'), message: 'unknown field "colour" (ignored by clients)' },
      { kind: 'utf8', offset: bytes.indexOf(0xff), message: `invalid UTF-8 at byte ${bytes.indexOf(0xff)}` },
      { kind: 'json', offset: at('data: {"choices":[\n'), message: expect.stringMatching(new RegExp(`^invalid JSON in the event at byte ${at('data: {"choices":[\n')}: `)) },
      { kind: 'utf8', offset: bytes.indexOf(0xe2), message: `invalid UTF-8 at byte ${bytes.indexOf(0xe2)}` },
      { kind: 'unterminated', offset: at('data: {"choices":[{"index":0,"delta":{"content":"c"'), message: expect.stringContaining('the stream ends inside an event that starts at byte') },
      { kind: 'completion', offset: bytes.length, message: 'the stream ends without its completion (data: [DONE])' },
    ];
    const f = file(dir, 'broken.sse', bytes);
    const { code, result } = await check(['--format', 'openai', f]);
    expect(code).toBe(2);
    expect(result.problems).toEqual(expected);
    expect({ clean: result.clean, exitCode: result.exitCode, events: result.events, problemCount: result.problemCount, completed: result.completed })
      .toEqual({ clean: false, exitCode: 2, events: 4, problemCount: 7, completed: false });
    // the same through a pipe, cut at every awkward byte
    const piped = await run(['check', '--json', '--format', 'openai'], { stdin: writer(f, awkwardCuts(bytes), 0) });
    expect(JSON.parse(piped.stdout).problems).toEqual(expected);
    const human = await run(['check', f]);
    expect(human.code).toBe(2);
    expect(human.stdout).toContain(`7 problems:\n  byte ${String(at('retry: 1000x')).padStart(3)}  retry "1000x" is not all ASCII digits (ignored by clients)\n`);
    expect(human.stdout.endsWith('exit code 2\n')).toBe(true);
  });

  it('lists every invalid UTF-8 sequence as the WHATWG decoder finds them: as many as TextDecoder writes U+FFFD', async () => {
    const known = Buffer.from([0x61, 0xff, 0x62, 0xc3, 0x28, 0xe2, 0x82, 0x41, 0xf0, 0x9f, 0x98]);
    const k = await check(['--format', 'text', file(dir, 'known.txt', known)]);
    expect(k.result.problems.map((p: { offset: number; message: string }) => [p.offset, p.message])).toEqual([
      [1, 'invalid UTF-8 at byte 1'], [3, 'invalid UTF-8 at byte 3'], [5, 'invalid UTF-8 at byte 5'], [8, 'the input ends inside a character that starts at byte 8'],
    ]);
    expect(k.code).toBe(2);
    // one byte per read: the first error's sequence starts in an earlier read than the byte that breaks it
    const split = Buffer.from([0x61, 0xe2, 0x82, 0x41, 0xff]);
    const byByte = await run(['check', '--json', '--format', 'text'], { stdin: writer(file(dir, 'split.txt', split), [1, 2, 3, 4], 2) });
    expect(JSON.parse(byByte.stdout).problems.map((p: { offset: number }) => p.offset)).toEqual([1, 4]);
    const seed = 777;
    const next = prng(seed);
    const garbage = Buffer.from(Array.from({ length: 4000 }, () => (next() < 0.6 ? 0x20 + Math.floor(next() * 90) : Math.floor(next() * 256))));
    const fffd = [...new TextDecoder().decode(garbage)].filter((c) => c === '\ufffd').length;
    const g = await check(['--format', 'text', '--max-problems', '100000', file(dir, 'garbage.bin', garbage)]);
    expect(g.result.problems.length, `seed ${seed}`).toBe(fffd);
    expect(g.result.problems.every((p: { kind: string }) => p.kind === 'utf8')).toBe(true);
    const listed = await check(['--format', 'text', '--max-problems', '3', file(dir, 'garbage.bin', garbage)]);
    expect({ listed: listed.result.problems.length, counted: listed.result.problemCount }).toEqual({ listed: 3, counted: fffd });
  });

  it('300,000 problems listed (--max-problems 300000): every one, in the human list too, where it said "internal error: Maximum call stack size exceeded" (exit 1)', async () => {
    const n = 300_000;
    const r = await run(['check', '--format', 'text', '--max-problems', String(n), file(dir, 'ff.bin', Buffer.alloc(n, 0xff))], { timeoutMs: 60_000 });
    const lines = r.stdout.split('\n');
    expect({ code: r.code, stderr: r.stderr, count: lines[1], last: lines.slice(-3) }).toEqual({ code: 2, stderr: '', count: '300,000 problems:', last: [`  byte ${n - 1}  invalid UTF-8 at byte ${n - 1}`, 'exit code 2', ''] });
    expect(lines.slice(2, -2)).toEqual(Array.from({ length: n }, (_, i) => `  byte ${String(i).padStart(6)}  invalid UTF-8 at byte ${i}`));
  });

  it('plain text: its lines are counted, as those of the other framings (it said 0 lines)', async () => {
    const f = file(dir, 'three-lines.txt', 'one\r\ntwo\nthree');
    const r = await run(['check', f]);
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 0, stdout: `${f}: text (sniffed), 14 bytes, 3 lines, 0 events, 0 heartbeats, 13 graphemes of text\nclean\n` });
    const j = await run(['check', '--json', '--format', 'text'], { stdin: writer(f, [3, 4, 5], 1) });
    expect(JSON.parse(j.stdout).lines).toBe(3);
  });

  it('Bedrock: an event that is not UTF-8 (its CRCs right) is where decode stops, at its message (exit 2), where check said the stream was clean', async () => {
    const enc = new TextEncoder();
    const message = (type: string, payload: Uint8Array) => codec.encode({
      headers: { ':event-type': { type: 'string', value: type }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: 'event' } },
      body: payload,
    });
    const bad = enc.encode('{"contentBlockIndex":0,"delta":{"text":"abXY"}}');
    bad[bad.indexOf(0x58)] = 0xff;
    const first = [message('messageStart', enc.encode('{"role":"assistant"}')), message('contentBlockDelta', enc.encode('{"contentBlockIndex":0,"delta":{"text":"Grüße "}}'))];
    const at = first.reduce((n, m) => n + m.length, 0);
    const converse = Buffer.concat([...first, message('contentBlockDelta', bad), message('messageStop', enc.encode('{"stopReason":"end_turn"}'))]);
    const f = file(dir, 'bedrock-not-utf8.bin', converse);
    const d = await run(['decode', f]);
    expect([d.code, d.stdout]).toEqual([2, 'Grüße ']);
    expect(d.stderr).toMatch(new RegExp(`^seam-stream: Invalid UTF-8 in the event of the message at byte offset ${at} `));
    const c = await run(['check', f]);
    expect({ code: c.code, lines: c.stdout.split('\n').slice(1) }).toEqual({
      code: 2, lines: ['1 problem:', `  byte ${at}  invalid UTF-8 in the event of the message at byte ${at}, at byte ${converse.indexOf(0xff)}`, 'exit code 2', ''],
    });
    // InvokeModelWithResponseStream: the chunk's bytes, decoded from base64
    const chunk = (event: Uint8Array) => codec.encode({
      headers: { ':event-type': { type: 'string', value: 'chunk' }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: 'event' } },
      body: enc.encode(JSON.stringify({ bytes: Buffer.from(event).toString('base64') })),
    });
    const delta = enc.encode('{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"abXY"}}');
    delta[delta.indexOf(0x58)] = 0xc0;
    const events = [
      '{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"c","usage":{"input_tokens":1,"output_tokens":1}}}',
      '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
    ].map((e) => chunk(enc.encode(e)));
    const invokeAt = events.reduce((n, m) => n + m.length, 0);
    const invoke = Buffer.concat([...events, chunk(delta), chunk(enc.encode('{"type":"message_stop"}'))]);
    const g = file(dir, 'invoke-not-utf8.bin', invoke);
    expect((await run(['decode', g])).code).toBe(2);
    const ci = await run(['check', g]);
    expect({ code: ci.code, lines: ci.stdout.split('\n').slice(1) }).toEqual({
      code: 2, lines: ['1 problem:', `  byte ${invokeAt}  invalid UTF-8 in the event of the message at byte ${invokeAt}, at byte ${delta.indexOf(0xc0)} of its chunk's bytes (decoded from base64)`, 'exit code 2', ''],
    });
  });

  it('warnings only: exit 8', async () => {
    const bytes = Buffer.concat([Buffer.from('retry: soon\n'), Buffer.from(openaiCapture(['ok']))]);
    const { code, result } = await check([file(dir, 'warn.sse', bytes)]);
    expect({ code, kinds: result.problems.map((p: { kind: string }) => p.kind) }).toEqual({ code: 8, kinds: ['retry'] });
  });

  it('an oversized event (4), a provider error (5), NDJSON lines that are not JSON (6), an empty input (3)', async () => {
    const big = await check(['--max-event-bytes', '64', file(dir, 'big.sse', openaiCapture(['x'.repeat(100)]))]);
    expect({ code: big.code, kind: big.result.problems[0].kind }).toEqual({ code: 4, kind: 'limit' });
    expect(big.result.problems[0].message).toMatch(/exceeds maxEventBytes \(64 bytes\).*: framing stopped there$/);
    const err = 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    const p = await check(['--format', 'anthropic'], err);
    expect(p.code).toBe(5);
    expect(p.result.problems[0]).toEqual({ kind: 'provider', offset: 0, message: 'the provider sent an error: Overloaded (overloaded_error)' });
    const nd = Buffer.concat([Buffer.from(ollamaCapture(['a'], { done: false })), Buffer.from('{"oops\n\n{"model":"m","done":true}\n')]);
    const n = await check(['--format', 'ollama', file(dir, 'bad.ndjson', nd)]);
    expect(n.code).toBe(6);
    expect(n.result.problems.map((x: { kind: string; line: number; offset: number }) => [x.kind, x.line, x.offset])).toEqual([['json', 2, nd.indexOf('{"oops')]]);
    expect(n.result.completed).toBe(true);
    const e = await check([file(dir, 'empty', '')]);
    expect({ code: e.code, problems: e.result.problems }).toEqual({ code: 3, problems: [{ kind: 'empty', offset: 0, message: `${dir}/empty is empty (0 bytes)` }] });
  });
});

describe('check: tool calls', () => {
  it('counts the calls, and each one whose arguments are not one JSON value is a problem at the event that ended it (exit 8)', async () => {
    const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const body = chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '{"a":' } }] })
      + chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] })
      + chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{"b":[1,' } }] })
      + chunk({}, 'tool_calls') + 'data: [DONE]\n\n';
    const f = file(dir, 'calls.sse', body);
    const { code, result } = await check([f]);
    const at = Buffer.byteLength(body.slice(0, body.lastIndexOf('data: {')));
    expect({ code, toolCalls: result.toolCalls, invalidArguments: result.invalidArguments, problems: result.problems }).toEqual({
      code: 8, toolCalls: 2, invalidArguments: 1,
      problems: [{ kind: 'arguments', offset: at, message: 'tool call 1 ("g", id call_b) ended with arguments that are not one JSON value' }],
    });
    const human = await run(['check', f]);
    expect(human.stdout.split('\n')[0]).toMatch(/, 2 tool calls \(1 with invalid arguments\), completed \(finish reason "tool_calls"\)$/);
  });
});
