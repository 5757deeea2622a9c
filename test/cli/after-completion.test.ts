// What follows a provider's completion, as the command reads it: `decode` takes nothing after the
// completion for the answer, so damage there (bytes that are not UTF-8, an error event, an event
// cut short; for Bedrock, whose stream is read on for its metadata, an exception or a message cut
// short) ends it as a complete stream, exit 0, whether those bytes came in the completion's read
// or a later one, with `--events` too; `check` lists such a problem and tolerates it (exit 8), as
// its exit code is the first problem that would stop decode. Damage to Bedrock's framing after
// messageStop stops a stream anywhere, and stops both. A control case: the same damage before the
// completion stops both.
import { describe, expect, it } from 'vitest';
import { encodeMessage } from '../helpers/bedrock-fixtures.js';
import { file, run, tempDir, writer } from './helpers.js';

const enc = new TextEncoder();
const join = (...parts: (string | Uint8Array)[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? enc.encode(p) : p)));

const openai = 'data: {"choices":[{"index":0,"delta":{"content":"caf\\u0065\\u0301"}}]}\n\ndata: [DONE]\n\n';
const anthropic = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"café"}}\n\n'
  + 'event: message_stop\ndata: {"type":"message_stop"}\n\n';
const ev = (event: string, payload: unknown) => encodeMessage({ event, payload: JSON.stringify(payload) });
const bedrock = join(ev('messageStart', { role: 'assistant' }), ev('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'café' } }), ev('messageStop', { stopReason: 'end_turn' }));
const metadata = ev('metadata', { usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 }, metrics: { latencyMs: 9 } });
const damaged = metadata.slice();
damaged[damaged.length - 10] ^= 0x20; // (its payload changed in transit: the message CRC does not match)

interface Case {
  name: string;
  format: string;
  /** The stream up to and with its completion, and what follows it. */
  answer: Uint8Array;
  after: Uint8Array;
  /** decode's exit code and text, and check's exit code. */
  decode: [number, string];
  check: number;
  /** What decode --events prints of what follows the completion, when it reads on (Bedrock's metadata). */
  printsAfter?: string;
}

const cases: Case[] = [
  { name: 'openai: invalid UTF-8 after [DONE]', format: 'openai', answer: join(openai), after: join('data: ', Uint8Array.of(0xff), '\n\n'), decode: [0, 'café'], check: 8 },
  { name: 'openai: an error event after [DONE]', format: 'openai', answer: join(openai), after: join('data: {"error":{"message":"late"}}\n\n'), decode: [0, 'café'], check: 8 },
  { name: 'openai: an event cut short after [DONE]', format: 'openai', answer: join(openai), after: join('data: {"choi'), decode: [0, 'café'], check: 8 },
  { name: 'anthropic: an error event after message_stop', format: 'anthropic', answer: join(anthropic), after: join('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"late"}}\n\n'), decode: [0, 'café'], check: 8 },
  { name: 'bedrock: the metadata message cut short', format: 'bedrock', answer: bedrock, after: metadata.subarray(0, metadata.length - 7), decode: [0, 'café'], check: 8 },
  { name: 'bedrock: an exception after messageStop, then the metadata', format: 'bedrock', answer: bedrock, after: join(encodeMessage({ exception: 'internalServerException', payload: '{"message":"late"}' }), metadata), decode: [0, 'café'], check: 8, printsAfter: '"metadata"' },
  { name: 'bedrock: the metadata message damaged (its CRC): stops both', format: 'bedrock', answer: bedrock, after: damaged, decode: [6, 'café'], check: 6 },
  { name: 'control: openai, an error event before [DONE]', format: 'openai', answer: join(openai.slice(0, openai.indexOf('data: [DONE]'))), after: join('data: {"error":{"message":"early"}}\n\ndata: [DONE]\n\n'), decode: [5, 'café'], check: 5 },
];

describe.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
  const dir = tempDir();
  const all = join(c.answer, c.after);
  const path = file(dir, 'capture', all);

  it('decode: the same exit code and text from the file, and from standard input cut where the completion ends', async () => {
    const whole = await run(['decode', '--format', c.format, path]);
    expect([whole.code, whole.stdout], whole.stderr).toEqual(c.decode);
    const cut = await run(['decode', '--format', c.format, '-'], { stdin: writer(path, [c.answer.length], 40) });
    expect([cut.code, cut.stdout], cut.stderr).toEqual(c.decode);
  });

  it('decode --events ends as decode does, and prints the same events whether what follows the completion came in its read or later', async () => {
    const r = await run(['decode', '--events', '--format', c.format, path]);
    expect(r.code, r.stderr).toBe(c.decode[0]);
    const cut = await run(['decode', '--events', '--format', c.format, '-'], { stdin: writer(path, [c.answer.length], 40) });
    expect([cut.code, cut.stdout]).toEqual([r.code, r.stdout]);
    if (c.printsAfter !== undefined) expect(r.stdout).toContain(c.printsAfter);
  });

  it('check: the problem listed, and tolerated when it follows the completion', async () => {
    const r = await run(['check', '--json', '--format', c.format, path]);
    const out = JSON.parse(r.stdout) as { exitCode: number; completed: boolean; graphemes: number; problems: { afterCompletion?: true }[] };
    expect([r.code, out.exitCode, out.completed, out.graphemes]).toEqual([c.check, c.check, true, 4]);
    expect(out.problems.length).toBeGreaterThan(0);
    expect(out.problems.every((p) => p.afterCompletion === (c.check === 8 ? true : undefined))).toBe(true);
  });
});

describe('errors in the completion\'s own read', () => {
  const dir = tempDir();

  it('a text limit passed before the completion is not after it: exit 4, as when the completion comes in a later read', async () => {
    const capture = 'data: {"choices":[{"index":0,"delta":{"content":"abc"}}]}\n\ndata: {"choices":[{"index":0,"delta":{"content":"defgh"}}]}\n\ndata: [DONE]\n\n';
    const path = file(dir, 'limit.sse', capture);
    const r = await run(['decode', '--max-text-bytes', '4', path]);
    expect([r.code, r.stderr]).toEqual([4, expect.stringContaining('maxTextBytes')]);
  });

  it('a text limit stops at the event whose text passes it, at its offset, however the reads fell', async () => {
    const ev = (t: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: t } }] })}\n\n`;
    const events = ['Hello', ' wörld', ' café', ' and', ' more'].map(ev);
    const capture = `${events.join('')}data: [DONE]\n\n`;
    const path = file(dir, 'limit-events.sse', capture);
    // after 'Hello' and ' wörld' the text layer has committed 11 bytes and holds the 'd'; ' café' would pass 12
    const at = Buffer.byteLength(events[0] + events[1]) + 'data: '.length;
    const want = [4, 'Hello wörld', `seam-stream: The text of the event at byte offset ${at} would pass maxTextBytes (12 bytes, 11 committed); the stream stops before it (raise it with --max-text-bytes)\n`];
    const whole = await run(['decode', '--max-text-bytes', '12', path]);
    expect([whole.code, whole.stdout, whole.stderr]).toEqual(want);
    const bytes = Buffer.byteLength(capture);
    const cuts = Array.from({ length: Math.floor(bytes / 7) }, (_, i) => 7 * (i + 1));
    const cut = await run(['decode', '--max-text-bytes', '12', '-'], { stdin: writer(path, cuts, 5) });
    expect([cut.code, cut.stdout, cut.stderr]).toEqual(want);
  });

  it('decode --events: of the printer\'s error and the stream\'s in one read, the one first in the stream ends the command', async () => {
    // a bad event at byte 6 (not JSON), then invalid UTF-8 at byte 9: exit 6, as when they come in two reads
    const path = file(dir, 'race.sse', join('data: x\n\n', Uint8Array.of(0xff), '\n\n'));
    const whole = await run(['decode', '--events', '--format', 'anthropic', path]);
    const cut = await run(['decode', '--events', '--format', 'anthropic', '-'], { stdin: writer(path, [9], 40) });
    expect([whole.code, cut.code]).toEqual([6, 6]);
  });
});
