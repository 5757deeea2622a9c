// When the shared memory cannot grow (the allocator's only failure), the core traps. The
// bindings turn the trap into a CoreMemoryError that stops that decoder until reset(), and the
// other streams go on.
import { afterEach, describe, expect, it } from 'vitest';
import { CoreMemoryError, LineDecoder, SseParser } from '../../bindings/index.js';
import { type CoreExports, getCore } from '../../bindings/core/wasm.js';

const enc = new TextEncoder();
const core = getCore();
const real = core.x;
let trapNext = new Set<string>();

// The instance's exports are frozen: give the core a copy whose functions can trap on demand.
const wrapped: Record<string, unknown> = {};
for (const [key, v] of Object.entries(real)) {
  wrapped[key] = typeof v !== 'function' ? v : (...args: number[]) => {
    if (trapNext.delete(key)) throw new WebAssembly.RuntimeError('unreachable');
    return (v as (...a: number[]) => number)(...args);
  };
}
(core as unknown as { x: CoreExports }).x = wrapped as unknown as CoreExports;

afterEach(() => {
  trapNext = new Set();
});

describe('the core runs out of memory', () => {
  it('SseParser: a typed error with the offset, kept until reset; other parsers unaffected', () => {
    const p = new SseParser();
    const other = new SseParser();
    expect(p.push(enc.encode('data: one\n\n'))).toEqual([{ type: 'message', data: 'one', id: '' }]);
    trapNext.add('ssePush');
    let err: unknown;
    try {
      p.push(enc.encode('data: two\n\n'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CoreMemoryError);
    expect(err).toMatchObject({ code: 'ERR_CORE_MEMORY', offset: 11 });
    expect((err as CoreMemoryError).memoryBytes).toBe(real.memory.buffer.byteLength);
    expect(() => p.push(enc.encode('data: three\n\n'))).toThrow(err as Error);
    expect(other.push(enc.encode('data: fine\n\n'))).toEqual([{ type: 'message', data: 'fine', id: '' }]);
    p.reset();
    expect(p.push(enc.encode('data: again\n\n'))).toEqual([{ type: 'message', data: 'again', id: '' }]);
  });

  it('LineDecoder: the same, on push and on flush', () => {
    const d = new LineDecoder();
    trapNext.add('linesPush');
    expect(() => d.push(enc.encode('a\nb'))).toThrow(CoreMemoryError);
    expect(() => d.flush()).toThrow(CoreMemoryError);
    d.reset();
    expect(d.push(enc.encode('x\ny'))).toEqual(['x']);
    trapNext.add('linesFlush');
    expect(() => d.flush()).toThrow(/could not grow/);
  });

  it('limits above what one buffer of the core can hold are refused up front', () => {
    expect(() => new SseParser({ maxEventBytes: 1024 ** 3 })).toThrow(
      'SseParser: maxEventBytes must be an integer number of bytes from 1 to 536870912 (512 MiB), got 1073741824',
    );
    expect(new SseParser({ maxEventBytes: 512 * 1024 ** 2 }).push(enc.encode('data: x\n\n'))).toHaveLength(1);
  });
});
