// The command on Gemini's and Bedrock's streams, end to end: decode and check find the format from
// the bytes (Bedrock's binary event stream by a prelude whose CRC matches), read it from a file and
// from standard input, and report every damaged frame, provider error and cut stream at its offset
// with the exit code the problem has.
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { BEDROCK_FIXTURES, codec, encodeMessage } from '../helpers/bedrock-fixtures.js';
import { FIXTURES } from '../helpers/model-fixtures.js';
import { file, noStack, run, start, tempDir } from './helpers.js';

let dir: string;
beforeAll(() => {
  dir = tempDir();
});

const bedrock = (name: string) => BEDROCK_FIXTURES.find((f) => f.name === name)!;
const gemini = (name: string) => FIXTURES.find((f) => f.name === name)!;

describe("Gemini's JSON array (streamGenerateContent without alt=sse)", () => {
  const pretty = '[{\n  "error": {\n    "code": 429,\n    "message": "Quota exceeded",\n    "status": "RESOURCE_EXHAUSTED"\n  }\n}\n]\n';
  const oneLine = '[{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}]\n';
  const chunks = '[{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"index":0}]}\r\n,\r\n{"candidates":[{"content":{"parts":[{"text":"!"}],"role":"model"},"finishReason":"STOP","index":0}]}]';
  it.each([['pretty', pretty], ['one line', oneLine]])("an error array (%s): the provider's error, sniffed or given, decode and check (exit 5)", async (name, body) => {
    const path = file(dir, `gemini-array-${name.replace(' ', '-')}.json`, body);
    for (const args of [['decode', path], ['decode', '--format', 'gemini', path]]) {
      expect(await run(args)).toMatchObject({ code: 5, stdout: '', stderr: 'seam-stream: The provider answered with an error body: Quota exceeded (RESOURCE_EXHAUSTED)\n' });
    }
    for (const args of [['check', path], ['check', '--format', 'gemini', path]]) {
      const c = await run(args);
      expect(c.code).toBe(5);
      expect(c.stdout).toContain('byte 0  the provider answered with an error body: Quota exceeded (RESOURCE_EXHAUSTED)\n');
      expect(c.stdout.split('\n')[0]).toMatch(/: gemini( \(sniffed\))?, /);
    }
  });
  it('its chunks: the answer, read as its stream (decode prints its text, check finds it clean); cut short, exit 3; an array of no chunks, exit 6', async () => {
    const path = file(dir, 'gemini-array-chunks.json', chunks);
    for (const args of [['decode', path], ['decode', '--format', 'gemini', path]]) {
      expect(await run(args)).toMatchObject({ code: 0, stdout: 'Hi!', stderr: '' });
    }
    for (const args of [['check', path], ['check', '--format', 'gemini', path]]) {
      const c = await run(args);
      expect([c.code, c.stdout.split('\n').slice(1, 2)]).toEqual([0, ['clean']]);
      expect(c.stdout).toMatch(/, 2 events, 0 heartbeats, 3 graphemes of text, completed \(finish reason "STOP"\)\n/);
    }
    // (without the chunk that finishes it: cut short, as its stream would be)
    const cutShort = file(dir, 'gemini-array-cut.json', chunks.slice(0, chunks.indexOf('\r\n,')) + ']');
    expect(await run(['decode', '--format', 'gemini', cutShort])).toMatchObject({ code: 3, stdout: 'Hi' });
    const cc = await run(['check', cutShort]);
    expect([cc.code, cc.stdout.includes(`byte ${Buffer.byteLength(chunks.slice(0, chunks.indexOf('\r\n,')) + ']')}  the answer ends without its completion (a chunk with a finishReason)\n`)]).toEqual([3, true]);
    // (an object that is neither an error, an answer nor a stream: a document)
    const c = await run(['check', '--format', 'gemini', file(dir, 'gemini-object.json', '{"models":[]}')]);
    expect([c.code, c.stdout.includes('byte 0  the input is a JSON document, not a gemini event stream\n')]).toEqual([6, true]);
    const a = await run(['check', '--format', 'gemini', file(dir, 'gemini-other-array.json', '[{"models":[]}]')]);
    expect([a.code, a.stdout.includes('byte 0  the input is a JSON array (streamGenerateContent without alt=sse: ask for alt=sse), not a gemini event stream\n')]).toEqual([6, true]);
  });
});

describe('bedrock and gemini captures', () => {
  it.each(['bedrock-basic', 'bedrock-tools', 'bedrock-reasoning'])('decode %s (a file, and standard input): the text, exit 0; check: clean', async (name) => {
    const f = bedrock(name);
    const path = file(dir, `${name}.bin`, f.bytes);
    for (const r of [await run(['decode', path]), await run(['decode', '--format', 'bedrock', '-'], { input: f.bytes })]) {
      expect(r.stderr).toBe('');
      expect({ code: r.code, text: r.stdout }).toEqual({ code: 0, text: f.expected.text.normalize('NFC') });
    }
    const c = await run(['check', '--json', path]);
    const result = JSON.parse(c.stdout);
    expect({ code: c.code, format: result.format, sniffed: result.sniffed, clean: result.clean, events: result.events, finishReason: result.finishReason, toolCalls: result.toolCalls })
      .toEqual({ code: 0, format: 'bedrock', sniffed: true, clean: true, events: f.expected.events, finishReason: f.expected.finishReason, toolCalls: f.expected.toolCalls.length });
  });

  it.each([
    ['bedrock-throttling', 5, 'provider'],
    ['bedrock-bad-crc', 6, 'frame'],
    ['bedrock-cut-in-frame', 3, 'unterminated'],
    ['bedrock-truncated', 3, 'completion'],
  ] as const)('%s: exit %d, the problem (%s) at its offset, the text before it printed', async (name, exit, kind) => {
    const f = bedrock(name);
    const path = file(dir, `${name}.bin`, f.bytes);
    const d = await run(['decode', path]);
    expect(noStack(d.stderr), d.stderr).toBe(true);
    expect(d.code).toBe(exit);
    expect(f.expected.text.startsWith(d.stdout)).toBe(true);
    const c = await run(['check', '--json', path]);
    const result = JSON.parse(c.stdout) as { exitCode: number; problems: { kind: string; offset: number }[] };
    expect(c.code).toBe(exit);
    expect(result.problems[0]).toMatchObject({ kind, offset: f.expected.error!.offset });
  });

  it('decode --events prints each message with its headers and the event it is', async () => {
    const f = bedrock('bedrock-tools');
    const r = await run(['decode', '--events', file(dir, 'tools.bin', f.bytes)]);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const messages = lines.filter((l) => 'offset' in l);
    expect(messages.map((m) => m.offset)).toEqual(f.starts);
    expect(messages[1]).toMatchObject({ headers: { ':event-type': 'contentBlockDelta', ':message-type': 'event' } });
    expect(lines.filter((l) => 'toolCall' in l).at(-1)).toMatchObject({ toolCall: { index: 1, name: 'list_alerts', done: true, valid: true } });
  });

  it.each(['gemini-basic', 'gemini-function-calls', 'gemini-thinking', 'gemini-streamed-args'])('gemini: decode and check %s (sniffed)', async (name) => {
    const f = gemini(name);
    const path = file(dir, `${name}.sse`, f.bytes);
    const d = await run(['decode', path]);
    expect({ code: d.code, text: d.stdout }).toEqual({ code: 0, text: f.expected.text.normalize('NFC') });
    const c = await run(['check', '--json', path]);
    const result = JSON.parse(c.stdout);
    expect({ code: c.code, format: result.format, clean: result.clean, finishReason: result.finishReason, toolCalls: result.toolCalls, invalidArguments: result.invalidArguments })
      .toEqual({ code: 0, format: 'gemini', clean: true, finishReason: f.expected.finishReason, toolCalls: f.expected.toolCalls?.length ?? 0, invalidArguments: 0 });
  });

  it('bedrock-invoke (sniffed by its chunk messages): Claude\'s events in base64 decode to their text from a file and standard input; check is clean; a throttlingException after four of them is exit 5 at its message, the text before it printed', async () => {
    const f = FIXTURES.find((x) => x.name === 'anthropic-basic')!;
    const headers = (type: string, kind: string) => ({
      [kind === 'event' ? ':event-type' : ':exception-type']: { type: 'string' as const, value: type },
      ':content-type': { type: 'string' as const, value: 'application/json' }, ':message-type': { type: 'string' as const, value: kind },
    });
    const datas = f.body.split(/\r?\n\r?\n/).map((ev) => ev.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(l[5] === ' ' ? 6 : 5)).join('\n')).filter((d) => d !== '');
    const messages = datas.map((d) => codec.encode({ headers: headers('chunk', 'event'), body: new TextEncoder().encode(`{"bytes":"${Buffer.from(d).toString('base64')}"}`) }));
    const bytes = Buffer.concat(messages);
    const path = file(dir, 'invoke.bin', bytes);
    for (const r of [await run(['decode', path]), await run(['decode', '--format', 'bedrock-invoke', '-'], { input: bytes })]) {
      expect(r.stderr).toBe('');
      expect({ code: r.code, text: r.stdout }).toEqual({ code: 0, text: f.expected.text.normalize('NFC') });
    }
    const c = JSON.parse((await run(['check', '--json', path])).stdout);
    expect({ format: c.format, sniffed: c.sniffed, clean: c.clean, finishReason: c.finishReason }).toEqual({ format: 'bedrock-invoke', sniffed: true, clean: true, finishReason: f.expected.finishReason });
    // throttled after four of the events (the first text delta among them): the text so far, then exit 5 at the exception's message
    const throttled = Buffer.concat([...messages.slice(0, 4), codec.encode({ headers: headers('throttlingException', 'exception'), body: new TextEncoder().encode('{"message":"Too many requests, please wait before trying again."}') })]);
    const at = messages.slice(0, 4).reduce((n, m) => n + m.length, 0);
    const t = await run(['check', '--json', file(dir, 'throttled.bin', throttled)]);
    expect(t.code).toBe(5);
    expect(JSON.parse(t.stdout).problems[0]).toMatchObject({ kind: 'provider', offset: at });
    const d = await run(['decode', file(dir, 'throttled2.bin', throttled)]);
    expect(d.code).toBe(5);
    expect(d.stdout.length > 0 && 'مرحبا بالعالم! '.startsWith(d.stdout), d.stdout).toBe(true);
    expect(d.stderr).toContain(`byte offset ${at}`);
    expect(d.stderr).toContain('Too many requests');
  });

  it('gemini: an error chunk is exit 5 at its offset', async () => {
    const f = gemini('gemini-error-mid');
    const c = await run(['check', '--json', file(dir, 'err.sse', f.bytes)]);
    expect(c.code).toBe(5);
    // (check names the event's first byte, its `data:` line; the stream's error names its JSON's)
    expect(JSON.parse(c.stdout).problems[0]).toMatchObject({ kind: 'provider', offset: f.expected.error!.offset - 'data: '.length });
  });
});

describe('bedrock: check and decode say the same of every message', () => {
  const enc = new TextEncoder();
  const ev = (event: string, payload: string) => encodeMessage({ event, payload });

  it('an error message (:message-type error, its :error-code and :error-message): check names the provider\'s error at the message, exit 5, as decode does', async () => {
    const before = [ev('messageStart', '{"role":"assistant"}'), ev('contentBlockDelta', '{"contentBlockIndex":0,"delta":{"text":"Hi"}}')];
    const error = codec.encode({
      headers: {
        ':message-type': { type: 'string', value: 'error' }, ':error-code': { type: 'string', value: 'InternalServerError' },
        ':error-message': { type: 'string', value: 'The server could not finish the answer.' },
      },
      body: new Uint8Array(0),
    });
    const bytes = Buffer.concat([...before, error]);
    const at = before[0].length + before[1].length;
    const path = file(dir, 'error-message.bin', bytes);
    for (const [args, named] of [[['check', '--format', 'bedrock', path], 'bedrock'], [['check', path], 'bedrock (sniffed)']] as const) {
      const c = await run([...args]);
      expect({ code: c.code, stdout: c.stdout, stderr: c.stderr }).toEqual({
        code: 5,
        stdout: `${path}: ${named}, ${bytes.length.toLocaleString('en-US')} bytes, 0 lines, 3 events, 0 heartbeats, 2 graphemes of text\n`
          + '2 problems:\n'
          + `  byte ${at}  the provider sent an error: The server could not finish the answer. (InternalServerError)\n`
          + `  byte ${bytes.length}  the stream ends without its completion (a messageStop event)\n`
          + 'exit code 5\n',
        stderr: '',
      });
    }
    const j = await run(['check', '--json', path]);
    expect({ code: j.code, problems: JSON.parse(j.stdout).problems }).toEqual({
      code: 5,
      problems: [
        { kind: 'provider', offset: at, message: 'the provider sent an error: The server could not finish the answer. (InternalServerError)' },
        { kind: 'completion', offset: bytes.length, message: 'the stream ends without its completion (a messageStop event)' },
      ],
    });
    const d = await run(['decode', path]);
    expect({ code: d.code, stdout: d.stdout, stderr: d.stderr }).toEqual({
      code: 5, stdout: 'Hi', stderr: `seam-stream: The provider sent an error at byte offset ${at}: The server could not finish the answer. (InternalServerError)\n`,
    });
  });

  it('bedrock-invoke: a chunk whose bytes are not base64 (characters outside the alphabet, which Buffer would skip) is a bad event at its chunk for check, decode --events and decode', async () => {
    const events = [
      '{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","usage":{"input_tokens":3,"output_tokens":1}}}',
      '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}',
      '{"type":"content_block_stop","index":0}',
      '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}',
      '{"type":"message_stop"}',
    ];
    const chunk = (b64: string) => codec.encode({
      headers: { ':event-type': { type: 'string', value: 'chunk' }, ':message-type': { type: 'string', value: 'event' } },
      body: enc.encode(`{"bytes":"${b64}"}`),
    });
    const b64 = events.map((e) => Buffer.from(e).toString('base64'));
    // the third chunk's base64 with four '!' after its eighth character: its length still a multiple of 4
    const bad = `${b64[2].slice(0, 8)}!!!!${b64[2].slice(8)}`;
    expect(Buffer.from(bad, 'base64').toString()).toBe(events[2]); // (what skipping them would read)
    const messages = b64.map((b, i) => chunk(i === 2 ? bad : b));
    const bytes = Buffer.concat(messages);
    const at = messages[0].length + messages[1].length;
    const why = `The chunk at byte offset ${at} is not one: its bytes are not base64 (at byte 8 of them)`;
    const path = file(dir, 'invoke-bad-base64.bin', bytes);

    const c = await run(['check', path]);
    expect({ code: c.code, stdout: c.stdout, stderr: c.stderr }).toEqual({
      code: 6,
      stdout: `${path}: bedrock-invoke (sniffed), ${bytes.length.toLocaleString('en-US')} bytes, 0 lines, 6 events, 0 heartbeats, 0 graphemes of text, completed (finish reason "end_turn")\n`
        + `1 problem:\n  byte ${at}  ${why}\nexit code 6\n`,
      stderr: '',
    });
    const j = await run(['check', '--json', path]);
    expect({ code: j.code, problems: JSON.parse(j.stdout).problems }).toEqual({ code: 6, problems: [{ kind: 'json', offset: at, message: why }] });

    // decode --events: the messages up to the bad chunk, that one with its error, and nothing after it
    const headers = { ':event-type': 'chunk', ':message-type': 'event' };
    const e = await run(['decode', '--events', path]);
    expect({ code: e.code, stdout: e.stdout, stderr: e.stderr }).toEqual({
      code: 6,
      stdout: [
        { offset: 0, headers, data: events[0] },
        { offset: messages[0].length, headers, data: events[1] },
        { offset: at, headers, data: '', error: { code: 'ERR_BAD_EVENT', message: why } },
      ].map((l) => `${JSON.stringify(l)}\n`).join(''),
      stderr: `seam-stream: ${why}\n`,
    });
    const d = await run(['decode', path]);
    expect({ code: d.code, stdout: d.stdout, stderr: d.stderr }).toEqual({ code: 6, stdout: '', stderr: `seam-stream: ${why}\n` });
  });
});

describe('bedrock: decode reads what the format sends after its completion', () => {
  const ev = (event: string, payload: string) => encodeMessage({ event, payload });
  /** A ConverseStream answer: its text, then messageStop and the metadata event (the usage) after it. */
  const usage = { inputTokens: 12, outputTokens: 3, totalTokens: 15 };
  const answer = [
    ev('messageStart', '{"role":"assistant"}'),
    ev('contentBlockDelta', '{"contentBlockIndex":0,"delta":{"text":"Hello, "}}'),
    ev('contentBlockDelta', '{"contentBlockIndex":0,"delta":{"text":"world."}}'),
    ev('contentBlockStop', '{"contentBlockIndex":0}'),
    ev('messageStop', '{"stopReason":"end_turn"}'),
    ev('metadata', `{"usage":${JSON.stringify(usage)},"metrics":{"latencyMs":212}}`),
  ];
  const answerBytes = Buffer.concat(answer);
  const metadataAt = answerBytes.length - answer[5].length;
  /** decode's report of it (--report --json), but for its time. */
  const report = {
    input: 'standard input', format: 'bedrock', sniffed: false, status: 'done', finishReason: 'end_turn', usage,
    bytes: answerBytes.length, events: 6, heartbeats: 0, utf8Bytes: 13, codePoints: 13, utf16Units: 13, graphemes: 13,
    normalizationChanged: false, sha256: createHash('sha256').update('Hello, world.').digest('hex'), reasoningBytes: 0, toolCalls: [], exitCode: 0,
  };
  const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

  /**
   * Writes the answer to the command's standard input in pieces of `size` bytes, `ms` apart, as a
   * live stream sends it: up to messageStop's last byte; then, once the command has printed the
   * text so far and a pause has let it read messageStop, the metadata event. The input is then
   * left open or ended. Returns the errors of the writes (a command that stopped reading at
   * messageStop has exited by then).
   */
  async function drip(d: ReturnType<typeof start>, size: number, ms: number, end: boolean): Promise<unknown[]> {
    const errors: unknown[] = [];
    const stdin = d.child.stdin!;
    stdin.on('error', () => {}); // (a write's own callback says it)
    const write = async (from: number, to: number) => {
      for (let p = from; p < to; p += size) {
        stdin.write(answerBytes.subarray(p, Math.min(p + size, to)), (e) => (e ? errors.push((e as NodeJS.ErrnoException).code ?? e.message) : undefined));
        await sleep(ms);
      }
    };
    await write(0, metadataAt);
    await d.waitStdout((o) => o === 'Hello, world.'); // (whole at messageStop: no more of the answer can follow it)
    await sleep(300);
    await write(metadataAt, answerBytes.length);
    if (end) stdin.end();
    return errors;
  }

  it('standard input in pieces: the metadata event after messageStop is still read, its usage in the report, and the writer can write it all', async () => {
    const d = start(['decode', '--format', 'bedrock', '--report', '--json', '-'], { stdin: 'open' });
    const errors = await drip(d, 16, 3, true);
    const r = await d.done;
    const { seconds, ...said } = JSON.parse(r.stderr) as Record<string, unknown>;
    expect(typeof seconds).toBe('number');
    expect({ code: r.code, stdout: r.stdout, report: said, writeErrors: errors }).toEqual({ code: 0, stdout: 'Hello, world.', report, writeErrors: [] });
  });

  it('a live stream left open after its metadata: --idle-timeout ends the command as a complete stream (exit 0, the usage read), not as idle', async () => {
    const d = start(['decode', '--format', 'bedrock', '--report', '--json', '--idle-timeout', '2', '-'], { stdin: 'open' });
    const errors = await drip(d, 16, 3, false);
    const r = await d.done;
    d.child.stdin!.destroy();
    const { seconds, ...said } = JSON.parse(r.stderr) as Record<string, unknown>;
    expect({ code: r.code, stdout: r.stdout, report: said, writeErrors: errors }).toEqual({ code: 0, stdout: 'Hello, world.', report, writeErrors: [] });
    expect(seconds as number).toBeGreaterThanOrEqual(2); // (ended by the timeout, the input still open)
  });

  it('a live stream left open after a stop that says the turn failed, its metadata not come: --idle-timeout ends the command with the provider\'s error (exit 5, the whole text), not as idle', async () => {
    const failed = Buffer.concat([
      { event: 'messageStart', payload: '{"role":"assistant"}' },
      { event: 'contentBlockDelta', payload: '{"contentBlockIndex":0,"delta":{"text":"Calling e"}}' },
      { event: 'contentBlockDelta', payload: '{"contentBlockIndex":0,"delta":{"text":"\\u0301"}}' },
      { event: 'messageStop', payload: '{"stopReason":"malformed_tool_use"}' },
    ].map(encodeMessage));
    const d = start(['decode', '--format', 'bedrock', '--idle-timeout', '1', '-'], { stdin: 'open' });
    d.child.stdin!.write(failed);
    const r = await d.done;
    d.child.stdin!.destroy();
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr.trim() }).toEqual({
      code: 5, stdout: 'Calling é',
      stderr: 'seam-stream: The provider sent an error at byte offset 425: the model wrote a tool call that is not valid (malformed_tool_use)',
    });
  });
});

describe('a turn that failed (a finish reason that says so): check names the provider\'s error, and not a missing completion', () => {
  const NOTE = 'Malformed function call: x(';
  const gem = (o: unknown) => `data: ${JSON.stringify(o)}\r\n\r\n`;
  const first = gem({ candidates: [{ content: { role: 'model', parts: [{ text: 'Let me check.' }] }, index: 0 }] });
  const body = first + gem({ candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'MALFORMED_FUNCTION_CALL', finishMessage: NOTE, index: 0 }] });

  it('gemini: one problem at the event, exit 5; decode says the same error', async () => {
    const path = file(dir, 'failed-turn.sse', body);
    const c = await run(['check', '--json', '--format', 'gemini', path]);
    const result = JSON.parse(c.stdout);
    expect({ code: c.code, problems: result.problems, finishReason: result.finishReason }).toEqual({
      code: 5, finishReason: 'MALFORMED_FUNCTION_CALL',
      problems: [{ kind: 'provider', offset: first.length, message: `the provider sent an error: ${NOTE} (MALFORMED_FUNCTION_CALL)` }],
    });
    const d = await run(['decode', '--format', 'gemini', path]);
    expect({ code: d.code, stdout: d.stdout, stderr: d.stderr }).toEqual({
      code: 5, stdout: 'Let me check.', stderr: `seam-stream: The provider sent an error at byte offset ${first.length + 6}: ${NOTE} (MALFORMED_FUNCTION_CALL)\n`,
    });
  });

  it('bedrock: malformed_tool_use, then the metadata after it: one problem at its message', async () => {
    const frames = [
      encodeMessage({ event: 'messageStart', payload: '{"role":"assistant"}' }),
      encodeMessage({ event: 'contentBlockDelta', payload: '{"contentBlockIndex":0,"delta":{"text":"Hi"}}' }),
      encodeMessage({ event: 'messageStop', payload: '{"stopReason":"malformed_tool_use"}' }),
      encodeMessage({ event: 'metadata', payload: '{"usage":{"inputTokens":3,"outputTokens":1,"totalTokens":4},"metrics":{"latencyMs":9}}' }),
    ];
    const at = frames[0].length + frames[1].length;
    const c = await run(['check', '--json', file(dir, 'failed-turn.bin', Buffer.concat(frames))]);
    expect({ code: c.code, problems: JSON.parse(c.stdout).problems }).toEqual({
      code: 5, problems: [{ kind: 'provider', offset: at, message: 'the provider sent an error: the model wrote a tool call that is not valid (malformed_tool_use)' }],
    });
  });

  it('bedrock: decode --events prints the metadata after a stop that says the turn failed (the stream reads its usage), then nothing, whole and a message a read', async () => {
    const m = (event: string, payload: string) => encodeMessage({ event, payload });
    const head = [
      m('messageStart', '{"role":"assistant"}'),
      m('contentBlockDelta', '{"contentBlockIndex":0,"delta":{"text":"Hi"}}'),
      m('messageStop', '{"stopReason":"malformed_tool_use"}'),
    ];
    const metadata = m('metadata', '{"usage":{"inputTokens":3,"outputTokens":1,"totalTokens":4},"metrics":{"latencyMs":9}}');
    const exception = encodeMessage({ exception: 'throttlingException', payload: '{"message":"slow down"}' });
    const later = m('contentBlockDelta', '{"contentBlockIndex":0,"delta":{"text":"more"}}');
    const printedOf = (frames: Uint8Array[]) => {
      let offset = 0;
      return frames.map((f) => {
        const { headers, body } = codec.decode(f);
        const line = JSON.stringify({ offset, headers: Object.fromEntries(Object.entries(headers).map(([k, h]) => [k, h.value])), data: `{"${headers[':event-type'].value}":${new TextDecoder().decode(body)}}` });
        offset += f.length;
        return `${line}\n`;
      }).join('');
    };
    const stop = head[0].length + head[1].length;
    const stderr = `seam-stream: The provider sent an error at byte offset ${stop}: the model wrote a tool call that is not valid (malformed_tool_use)\n`;
    const cases: [string, Uint8Array[], string][] = [
      ['its metadata', [...head, metadata], printedOf([...head, metadata])],
      ['its metadata, then more', [...head, metadata, later], printedOf([...head, metadata])],
      ['an exception in place of its metadata', [...head, exception], printedOf(head)],
    ];
    // the metadata cut short: the turn's error, which comes first, as without --events (not the cut message's)
    const cutShort = file(dir, 'failed-cut.bin', Buffer.concat([...head, metadata.subarray(0, 20)]));
    const plain = await run(['decode', '--format', 'bedrock', cutShort]);
    const printed = await run(['decode', '--format', 'bedrock', '--events', cutShort]);
    expect({ code: printed.code, stdout: printed.stdout, stderr: printed.stderr }).toEqual({ code: 5, stdout: printedOf(head), stderr });
    expect([plain.code, plain.stderr]).toEqual([5, stderr]);
    for (const [what, frames, stdout] of cases) {
      const whole = await run(['decode', '--format', 'bedrock', '--events', file(dir, 'failed-events.bin', Buffer.concat(frames))]);
      expect({ code: whole.code, stdout: whole.stdout, stderr: whole.stderr }, what).toEqual({ code: 5, stdout, stderr });
      const d = start(['decode', '--format', 'bedrock', '--events', '-'], { stdin: 'open' });
      for (const f of frames) {
        d.child.stdin!.write(f);
        await new Promise((r) => setTimeout(r, 40));
      }
      d.child.stdin!.end();
      const dripped = await d.done;
      expect({ code: dripped.code, stdout: dripped.stdout, stderr: dripped.stderr }, `${what}, a message a read`).toEqual({ code: 5, stdout, stderr });
    }
  });
});
