// A --format that is not the input's: when that format cannot read it (bad UTF-8, a bad event, no
// completion) or finds nothing in it, and the first bytes look like another model format's,
// decode and check say which to try. With the right format, damage gets no such line.
import { describe, expect, it } from 'vitest';
import { BEDROCK_FIXTURES } from '../helpers/bedrock-fixtures.js';
import { anthropicCapture, ollamaCapture, openaiCapture, run } from './helpers.js';

const hint = (looks: string, given: string) => `seam-stream: the input looks like ${looks}, not ${given}: try --format ${looks} (or leave --format out: it is then sniffed)\n`;
const DELTAS = ['Hallo ', 'Welt'];
/** An OpenAI stream with no comment (ddg reads every line, and a comment is not one of its). */
const OPENAI = DELTAS.map((d) => `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: d } }] })}\n\n`).join('') + 'data: [DONE]\n\n';

describe('--format that is not the input\'s', () => {
  it('decode: the error, then the format the input looks like', async () => {
    const anthropic = anthropicCapture(DELTAS);
    const a = await run(['decode', '--format', 'openai'], { input: anthropic });
    expect({ code: a.code, stdout: a.stdout, stderr: a.stderr }).toEqual({
      code: 3, stdout: '',
      stderr: `seam-stream: The stream ended without its completion (data: [DONE]) after ${anthropic.length} bytes: the text is incomplete (--allow-truncated takes the text as it is, exit 0)\n${hint('anthropic', 'openai')}`,
    });
    const bedrock = BEDROCK_FIXTURES.find((f) => f.name === 'bedrock-basic')!.bytes;
    const b = await run(['decode', '--format', 'anthropic'], { input: bedrock });
    expect({ code: b.code, stdout: b.stdout, stderr: b.stderr.replace(/^(seam-stream: Invalid UTF-8 at byte offset \d+) .*\n/, '$1\n') })
      .toEqual({ code: 2, stdout: '', stderr: `seam-stream: Invalid UTF-8 at byte offset 3\n${hint('bedrock', 'anthropic')}` });
    const o = await run(['decode', '--format', 'ndjson'], { input: openaiCapture(DELTAS) });
    expect({ code: o.code, stderr: o.stderr.split('\n').slice(1).join('\n') }).toEqual({ code: 6, stderr: hint('openai', 'ndjson') });
  });

  it('decode: a model format that finds nothing in the stream (exit 0) says so too', async () => {
    const r = await run(['decode', '--format', 'ddg'], { input: OPENAI });
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: '', stderr: hint('openai', 'ddg') });
  });

  it('check: the line before the exit code, and looksLike in --json', async () => {
    const r = await run(['check', '--format', 'openai', '-'], { input: ollamaCapture(DELTAS) });
    expect(r.code).toBe(6);
    expect(r.stdout.endsWith(`${hint('ollama', 'openai').replace('seam-stream: ', '')}exit code 6\n`)).toBe(true);
    const j = await run(['check', '--json', '--format', 'ddg'], { input: OPENAI });
    expect({ code: j.code, result: JSON.parse(j.stdout) }).toMatchObject({ code: 0, result: { clean: true, looksLike: 'openai' } });
  });

  it('the right format, or none: no such line', async () => {
    const cut = openaiCapture(DELTAS, { done: false });
    for (const args of [['--format', 'openai'], []]) {
      const r = await run(['decode', ...args], { input: cut });
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        code: 3, stdout: DELTAS.join(''), stderr: `seam-stream: The stream ended without its completion (data: [DONE]) after ${cut.length} bytes: the text is incomplete (--allow-truncated takes the text as it is, exit 0)\n`,
      });
      const c = await run(['check', '--json', ...args], { input: cut });
      expect(JSON.parse(c.stdout).looksLike).toBeUndefined();
    }
    // a plain format that reads it
    const s = await run(['decode', '--format', 'sse'], { input: openaiCapture(DELTAS) });
    expect({ code: s.code, stderr: s.stderr }).toEqual({ code: 0, stderr: '' });
  });
});
