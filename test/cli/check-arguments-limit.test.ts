// Tool-call arguments past the 16 MiB a model stream keeps: decode stops there (exit 4, the
// library's message, where it said "internal error"), and check says the same event passed the
// limit (exit 4), where it said nothing and the call never ended.
import { beforeAll, expect, it } from 'vitest';
import { file, run, tempDir } from './helpers.js';

let dir: string;
beforeAll(() => {
  dir = tempDir();
});

it('arguments of 17 fragments of 1 MiB: the 16th passes 16 MiB, in decode and in check, at its event', async () => {
  const MiB = 1024 * 1024;
  const ev = (d: unknown) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: d, finish_reason: null }] })}\n\n`;
  const events = [ev({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":"' } }] })];
  for (let i = 0; i < 17; i++) events.push(ev({ tool_calls: [{ index: 0, function: { arguments: 'x'.repeat(MiB) } }] }));
  events.push(ev({ tool_calls: [{ index: 0, function: { arguments: '"}' } }] }), 'data: [DONE]\n\n');
  const body = events.join('');
  // (the 16th fragment's event: before it 15 MiB and the 9 bytes of `{\"a\":\"`, counted as sent)
  const at = Buffer.byteLength(events.slice(0, 16).join(''));
  const kept = 15 * MiB + 9;
  const path = file(dir, 'big-arguments.sse', body);
  const d = await run(['decode', path]);
  // (decode: at the event's JSON, past `data: `; check: at the event)
  expect([d.code, d.stdout, d.stderr]).toEqual([4, '', `seam-stream: The tool-call arguments in the event at byte offset ${at + 6} would pass maxArgumentBytes (16777216 bytes, ${kept} kept); nothing past the limit was kept\n`]);
  const c = await run(['check', path]);
  expect(c.code).toBe(4);
  expect(c.stdout).toContain(`byte ${at}  the tool-call arguments in the event would pass maxArgumentBytes (16777216 bytes, ${kept} kept): they were not kept\n`);
  expect(c.stdout).toContain('exit code 4');
}, 60_000);
