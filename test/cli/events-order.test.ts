// decode --events prints a stream's events and comments in the stream's order, and nothing past
// where the stream stopped, however the reads fell: whole, and cut at every line's end; for the
// SSE formats and for the line formats (Ollama's NDJSON, ddg's lines).
import { describe, expect, it } from 'vitest';
import { file, run, tempDir, writer } from './helpers.js';

const dir = tempDir();
const chunk = (content: string) => `data: {"choices":[{"index":0,"delta":{"content":"${content}"}}]}\n\n`;
/** Each case: its capture, decode's exit code, and what --events prints (c: a comment, e: an event's data). */
const cases: [string, string, number, string[]][] = [
  ['keep-alive comments between events', `: open\n\n${chunk('a')}: ping\n\n${chunk('b')}:ping\n: pong\n\ndata: [DONE]\n\n`, 0,
    ['c open', 'e a', 'c ping', 'e b', 'c ping', 'c pong', 'e [DONE]']],
  ['a bad event, then events in the same read', `${chunk('a')}: ping\n\ndata: {bad\n\n${chunk('b')}: after\n\ndata: [DONE]\n\n`, 6,
    ['e a', 'c ping', 'e {bad']],
  ['a provider error, then events', `${chunk('a')}data: {"error":{"message":"overloaded"}}\n\n${chunk('b')}data: [DONE]\n\n`, 5,
    ['e a', 'e {"error":{"message":"overloaded"}}']],
  // a comment inside an event's block comes before the event, which is whole at its blank line
  ['a comment inside an event', `${chunk('a').slice(0, -1)}: inside\ndata: \n\n: after\n\ndata: [DONE]\n\n`, 0,
    ['c inside', 'e a', 'c after', 'e [DONE]']],
  ['a comment inside a bad event', `${chunk('a')}data: {bad\n: inside\n\n: after\n\n${chunk('b')}`, 6,
    ['e a', 'c inside', 'e {bad']],
];

/** What the printed lines say, as the cases write it. */
function said(stdout: string): string[] {
  return stdout.trim().split('\n').map((l) => JSON.parse(l) as { comment?: string; data?: string }).flatMap((o) => {
    if (o.comment !== undefined) return [`c ${o.comment}`];
    if (o.data === undefined) return [];
    const content = /"content":"([^"]*)"/.exec(o.data);
    return [`e ${content ? content[1] : o.data}`];
  });
}

describe.each(cases)('%s', (_, capture, code, printed) => {
  const path = file(dir, `${_.replace(/\W+/g, '-')}.sse`, capture);
  // every line's end: where a read may end between two of its lines
  const ends = [...capture.matchAll(/\n/g)].map((m) => m.index! + 1).filter((i) => i < capture.length);

  it('the same lines whole and cut at every line end', async () => {
    const whole = await run(['decode', '--events', '--format', 'openai', path]);
    expect(whole.code, whole.stderr).toBe(code);
    expect(said(whole.stdout)).toEqual(printed);
    for (const at of ends) {
      // (a writer that waits long enough between its pieces that each is its own read)
      const cut = await run(['decode', '--events', '--format', 'openai', '-'], { stdin: writer(path, [at], 150) });
      expect([cut.code, cut.stdout], `cut at ${at}`).toEqual([whole.code, whole.stdout]);
    }
  });
});

// The line formats: a provider's error line, then lines in the same read (blank ones among them).
const ollama = (content: string) => `{"model":"m","message":{"role":"assistant","content":"${content}"},"done":false}\n`;
const lineCases: [string, string, string, number, string[]][] = [
  ['ollama: an error line, then lines', 'ollama', `${ollama('a')}\n  \n{"error":"boom"}\n${ollama('b')}{"model":"m","done":true}\n`, 5,
    ['{"model":"m","message":{"role":"assistant","content":"a"},"done":false}', '{"error":"boom"}']],
  ['ollama: a line that is not JSON, then lines', 'ollama', `${ollama('a')}{bad\n${ollama('b')}{"model":"m","done":true}\n`, 6,
    ['{"model":"m","message":{"role":"assistant","content":"a"},"done":false}']],
  ['ddg: an error line, then lines', 'ddg', 'data: {"message":"a"}\n\ndata: {"action":"error","type":"ERR_CONVERSATION_LIMIT","status":429}\n\ndata: {"message":"b"}\n\ndata: [DONE]\n', 5,
    ['"data: {\\"message\\":\\"a\\"}"', '""', '"data: {\\"action\\":\\"error\\",\\"type\\":\\"ERR_CONVERSATION_LIMIT\\",\\"status\\":429}"']],
];

describe.each(lineCases)('%s', (_, format, capture, code, printed) => {
  const path = file(dir, `${_.replace(/\W+/g, '-')}.txt`, capture);
  const ends = [...capture.matchAll(/\n/g)].map((m) => m.index! + 1).filter((i) => i < capture.length);

  it('the same lines whole and cut at every line end', async () => {
    const whole = await run(['decode', '--events', '--format', format, path]);
    expect(whole.code, whole.stderr).toBe(code);
    expect(whole.stdout.trim().split('\n')).toEqual(printed);
    for (const at of ends) {
      const cut = await run(['decode', '--events', '--format', format, '-'], { stdin: writer(path, [at], 150) });
      expect([cut.code, cut.stdout], `cut at ${at}`).toEqual([whole.code, whole.stdout]);
    }
  });
});

it('NDJSON values of every kind are printed, null among them', async () => {
  const path = file(dir, 'values.ndjson', '{"a":1}\nnull\n2\n{"offset":999}\n');
  const r = await run(['decode', '--events', '--format', 'ndjson', path]);
  expect([r.code, r.stdout]).toEqual([0, '{"a":1}\nnull\n2\n{"offset":999}\n']);
});

it('decode --events on plain text is a usage error, and its report says failed, not empty', async () => {
  const path = file(dir, 'plain.txt', 'Hello there, plain text.\n');
  const r = await run(['decode', '--events', '--report', '--json', path]);
  expect(r.code).toBe(1);
  const report = JSON.parse(r.stderr.split('\n').find((l) => l.startsWith('{'))!) as { status: string; bytes: number };
  expect([report.status, report.bytes]).toEqual(['failed', 25]);
});
