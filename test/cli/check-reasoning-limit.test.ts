// Reasoning past the 64 MiB a model stream keeps: decode stops there (exit 4), and check says the
// same event passed the limit (exit 4), where it said the stream was clean (its reader counted each
// event's reasoning alone).
import { beforeAll, expect, it } from 'vitest';
import { file, run, tempDir } from './helpers.js';

let dir: string;
beforeAll(() => {
  dir = tempDir();
});

it('reasoning of 65 deltas of 1 MiB: the 65th passes 64 MiB, in decode and in check, at its event', async () => {
  const MiB = 1024 * 1024;
  const ev = (type: string, d: unknown) => `event: ${type}\ndata: ${JSON.stringify({ type, ...(d as object) })}\n\n`;
  const events = [
    ev('message_start', { message: { id: 'm', type: 'message', role: 'assistant', content: [], model: 'c', stop_reason: null, usage: { input_tokens: 1, output_tokens: 1 } } }),
    ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
  ];
  const x = 'x'.repeat(MiB);
  for (let i = 0; i < 65; i++) events.push(ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: x } }));
  events.push(ev('content_block_stop', { index: 0 }), ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } }), ev('message_stop', {}));
  const body = events.join('');
  // (the 65th delta's event: before it 64 MiB of reasoning)
  const at = Buffer.byteLength(events.slice(0, 66).join(''));
  const path = file(dir, 'long-reasoning.sse', body);
  const d = await run(['decode', path]);
  // (decode: at the event's JSON, past its `event:` and `data: `; check: at the event)
  expect([d.code, d.stdout, d.stderr]).toEqual([4, '', `seam-stream: The reasoning (or refusal, or citations) in the event at byte offset ${at + 33} would pass maxReasoningBytes (67108864 bytes, 67108864 kept); nothing past the limit was kept\n`]);
  const c = await run(['check', path]);
  expect(c.code).toBe(4);
  expect(c.stdout).toContain(`byte ${at}  the reasoning (or refusal, or citations) in the event would pass maxReasoningBytes (67108864 bytes, 67108864 kept), where a model stream stops\n`);
  expect(c.stdout).toContain('exit code 4');
}, 60_000);
