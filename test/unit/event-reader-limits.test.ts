// ModelEventReader's tool-call arguments, kept across the events it reads, are bounded by its
// maxArgumentBytes: an event that would pass it says so (`limit`), its arguments not kept, and
// the reader reads on (its calls end at the completion).
import { describe, expect, it } from 'vitest';
import { ModelEventReader } from '../../bindings/index.js';

const delta = (d: unknown, finish: string | null = null) => JSON.stringify({ choices: [{ index: 0, delta: d, finish_reason: finish }] });
const call = (args: string, first = false) => delta({ tool_calls: [{ index: 0, ...(first ? { id: 'call_1', type: 'function', function: { name: 'f', arguments: args } } : { function: { arguments: args } }) }] });

describe('ModelEventReader: maxArgumentBytes', () => {
  it('the event that would pass it says so, its fragment not kept; the next ones read as usual, the call ended by [DONE]', () => {
    const r = new ModelEventReader({ format: 'openai', maxArgumentBytes: 14 });
    expect(r.maxArgumentBytes).toBe(14);
    // (counted as sent: `{\"a\":` is 7 bytes, `\"xy\"` 6)
    expect(r.read(call('{"a":', true)).limit).toBeUndefined();
    expect(r.read(call('"xy"')).limit).toBeUndefined(); // 13
    expect(r.read(call('}}}')).limit).toEqual({ code: 'ERR_ARGUMENTS_TOO_LARGE', message: 'the tool-call arguments in the event would pass maxArgumentBytes (14 bytes, 13 kept): they were not kept' });
    expect(r.toolCalls).toEqual([{ index: 0, id: 'call_1', name: 'f', arguments: '{"a":"xy"', done: false }]);
    const text = r.read(delta({ content: 'ok' }, 'tool_calls'));
    expect([text.text, text.limit, text.finishReason]).toEqual(['ok', undefined, 'tool_calls']);
    expect(r.read('[DONE]').done).toBe(true);
    expect(r.toolCalls).toEqual([{ index: 0, id: 'call_1', name: 'f', arguments: '{"a":"xy"', done: true, valid: false }]);
  });

  it('the default is a ModelStream\'s, 16 MiB; a limit that is not one is a TypeError', () => {
    expect(new ModelEventReader({ format: 'anthropic' }).maxArgumentBytes).toBe(16 * 1024 * 1024);
    for (const bad of [0, -1, 1.5, '12', Number.NaN]) {
      expect(() => new ModelEventReader({ format: 'openai', maxArgumentBytes: bad as number })).toThrow(TypeError);
    }
  });

  it('Anthropic: a start\'s input said whole counts, and past the limit the call does not begin', () => {
    const r = new ModelEventReader({ format: 'anthropic', maxArgumentBytes: 8 });
    const start = (index: number, input: unknown) => JSON.stringify({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: `toolu_${index}`, name: 'f', input } });
    expect(r.read(start(0, {})).limit).toBeUndefined(); // {} : 2 bytes
    expect(r.read(start(1, { long: 'value' })).limit?.code).toBe('ERR_ARGUMENTS_TOO_LARGE');
    expect(r.toolCalls.map((c) => c.id)).toEqual(['toolu_0']);
  });
});
