// The command on Gemini's and Bedrock's streams, end to end: decode and check find the format from
// the bytes (Bedrock's binary event stream by a prelude whose CRC matches), read it from a file and
// from standard input, and report every damaged frame, provider error and cut stream at its offset
// with the exit code the problem has.
import { beforeAll, describe, expect, it } from 'vitest';
import { BEDROCK_FIXTURES, codec } from '../helpers/bedrock-fixtures.js';
import { FIXTURES } from '../helpers/model-fixtures.js';
import { file, noStack, run, tempDir } from './helpers.js';

let dir: string;
beforeAll(() => {
  dir = tempDir();
});

const bedrock = (name: string) => BEDROCK_FIXTURES.find((f) => f.name === name)!;
const gemini = (name: string) => FIXTURES.find((f) => f.name === name)!;

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
