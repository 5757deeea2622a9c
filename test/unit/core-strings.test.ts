// The strings the core's text becomes, on each runtime's routes:
// - without Node's Buffer (browsers, workerd): Core#utf16 makes them by `short` (up to 16 units),
//   `copied` (up to 128) or `unitsString`, Core#latin1 by `short`, `copiedBytes` (up to 128 bytes)
//   or a TextDecoder (a core made here without the global Buffer takes those routes in Node);
// - with it: by `short` up to 32 units (16 ASCII bytes), and above by `ucs2Slice` or `latin1Slice`;
// - with it as on Bun: by `ucs2Slice` or `latin1Slice` from 2 units;
// - and without it with `short` up to SHORT_MAX, as Node takes it.
// Each length from 0 to 300, against String.fromCharCode: UTF-16 at an even and an odd address,
// with lone surrogates and every plane, and ASCII at any address.
import { describe, expect, it, test } from 'vitest';
import { SIMD_WASM_BASE64 } from '../../bindings/core/generated/wasm-binaries.js';
import { Core, SHORT_MAX, shortUnits } from '../../bindings/core/wasm.js';
import { SEED, rng } from '../helpers/random.js';

function coreWithoutBuffer(short?: number): Core {
  const bytes = new Uint8Array(Buffer.from(SIMD_WASM_BASE64, 'base64'));
  const g = globalThis as { Buffer?: unknown };
  const B = g.Buffer;
  g.Buffer = undefined;
  try {
    return new Core('simd', bytes, short);
  } finally {
    g.Buffer = B;
  }
}

const withBuffer = (short?: number): Core => new Core('simd', new Uint8Array(Buffer.from(SIMD_WASM_BASE64, 'base64')), short);

test('the short strings each runtime makes by String.fromCharCode: up to 32 units with a Buffer, 1 on Bun, 16 without', () => {
  expect(SHORT_MAX).toBe(32);
  for (const name of ['node', 'deno', 'workerd', 'browser', 'unknown']) {
    expect(shortUnits(name, true)).toBe(32);
    expect(shortUnits(name, false)).toBe(16);
  }
  expect(shortUnits('bun', true)).toBe(1);
  expect(shortUnits('bun', false)).toBe(16);
  expect(coreWithoutBuffer().shortUnits).toBe(16);
  expect(withBuffer().shortUnits).toBe(32); // (vitest runs on Node)
});

describe.each([
  ['without Node\'s Buffer', () => coreWithoutBuffer()],
  ['with Node\'s Buffer', () => withBuffer()],
  ['with Node\'s Buffer, as on Bun', () => withBuffer(shortUnits('bun', true))],
  ['without Node\'s Buffer, short strings up to SHORT_MAX', () => coreWithoutBuffer(SHORT_MAX)],
])(`Core#utf16 and Core#latin1 %s (seed ${SEED}; SEAM_SEED replays)`, (_, make) => {
  it('every length from 0 to 300 units, at an even and an odd address, makes the string of those units', () => {
    const core = make();
    const next = rng(SEED + 81);
    const pool = [0x61, 0x7a, 0x20, 0xe9, 0x4e16, 0xd83d, 0xde00, 0xd800, 0xdfff, 0xfffd, 0xffff, 0x0];
    for (let n = 0; n <= 300; n++) {
      const units = Array.from({ length: n }, () => pool[Math.floor(next() * pool.length)]);
      const want = String.fromCharCode(...units);
      for (const at of [core.outPtr, core.outPtr + 1001]) {
        core.sync();
        for (let i = 0; i < n; i++) {
          core.u8[at + 2 * i] = units[i] & 0xff;
          core.u8[at + 2 * i + 1] = units[i] >>> 8;
        }
        const got = core.utf16(at, n);
        expect(got.length, `${n} units at ${at & 1 ? 'an odd' : 'an even'} address`).toBe(n);
        expect(got === want, `${n} units at ${at & 1 ? 'an odd' : 'an even'} address`).toBe(true);
      }
    }
  });

  it('every length from 0 to 300 ASCII bytes, at any address, makes the string of those bytes', () => {
    const core = make();
    const next = rng(SEED + 82);
    for (let n = 0; n <= 300; n++) {
      const bytes = Array.from({ length: n }, () => Math.floor(next() * 128));
      const want = String.fromCharCode(...bytes);
      for (const at of [core.outPtr, core.outPtr + 1001, core.outPtr + 2002]) {
        core.sync();
        core.u8.set(bytes, at);
        const got = core.latin1(at, n);
        expect(got.length, `${n} bytes at ${at}`).toBe(n);
        expect(got === want, `${n} bytes at ${at}`).toBe(true);
      }
    }
  });
});
