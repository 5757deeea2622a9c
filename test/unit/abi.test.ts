// The contract between the core and the bindings is assembly/abi.ts alone: the bindings' mirror
// (bindings/core/generated/abi.ts) is generated from it, and both builds of the core export every
// constant of it as a global. These tests fail when either side changes a value the other has not
// seen, when the mirror is stale, and when a core of another ABI version is instantiated.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ABI_ADDRESSES, ABI_CONSTANTS, ABI_VERSION } from '../../bindings/core/generated/abi.js';
import { SCALAR_WASM_BASE64, SIMD_WASM_BASE64 } from '../../bindings/core/generated/wasm-binaries.js';
import { Core } from '../../bindings/core/wasm.js';
// @ts-expect-error: a plain ES module script without types
import { parseAbi, render } from '../../scripts/gen-abi.mjs';

const root = join(__dirname, '..', '..');
const abiSource = readFileSync(join(root, 'assembly', 'abi.ts'), 'utf8');
const mirror = readFileSync(join(root, 'bindings', 'core', 'generated', 'abi.ts'), 'utf8');

function globalsOf(b64: string): Map<string, number> {
  const instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(b64, 'base64')), {});
  const out = new Map<string, number>();
  for (const [name, v] of Object.entries(instance.exports)) {
    if (v instanceof WebAssembly.Global) out.set(name, v.value as number);
  }
  return out;
}

/** A module that exports only `ABI_VERSION` as an i32 global of the given value (0..63). */
function moduleWithVersion(version: number): Uint8Array {
  const name = [...'ABI_VERSION'].map((c) => c.charCodeAt(0));
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    0x06, 0x06, 0x01, 0x7f, 0x00, 0x41, version, 0x0b, // one immutable i32 global = version
    0x07, name.length + 4, 0x01, name.length, ...name, 0x03, 0x00, // exported as ABI_VERSION
  ]);
}

describe('the ABI', () => {
  it('the generated mirror is what assembly/abi.ts gives now', () => {
    expect(render(parseAbi(abiSource))).toBe(mirror);
    execFileSync(process.execPath, [join(root, 'scripts', 'gen-abi.mjs'), '--check'], { stdio: 'pipe' });
  });

  it('a changed constant in assembly/abi.ts makes the mirror stale', () => {
    const changed = abiSource.replace('export const R_LIMIT: i32 = 4;', 'export const R_LIMIT: i32 = 128;');
    expect(changed).not.toBe(abiSource);
    expect(render(parseAbi(changed))).not.toBe(mirror);
  });

  it('the contract holds constants only: a function in it is refused', () => {
    expect(() => parseAbi(`${abiSource}\nexport function f(): i32 { return 1; }\n`)).toThrow(/only constants belong in the contract/);
  });

  for (const [backend, b64] of [['simd', SIMD_WASM_BASE64], ['scalar', SCALAR_WASM_BASE64]] as const) {
    it(`the ${backend} core exports every constant of the mirror with its value, and no other`, () => {
      const globals = globalsOf(b64);
      const names = Object.keys(ABI_CONSTANTS);
      expect(names.length).toBeGreaterThan(60);
      for (const name of names) expect([name, globals.get(name)]).toEqual([name, ABI_CONSTANTS[name]]);
      const others = [...globals.keys()].filter((n) => !(n in ABI_CONSTANTS));
      expect(others.sort()).toEqual([...ABI_ADDRESSES].sort());
      // the windows lie where the contract says they fit
      const inPtr = globals.get('IN_PTR')!;
      expect(inPtr % 16).toBe(0);
      expect(globals.get('OUT_PTR')!).toBeGreaterThanOrEqual(inPtr + ABI_CONSTANTS.IN_CAP + ABI_CONSTANTS.IN_SLACK);
    });
  }

  it('a core of another ABI version is refused as a stale build', () => {
    expect(() => new Core('simd', moduleWithVersion(ABI_VERSION))).not.toThrow(/stale build|WebAssembly.Module/);
    expect(() => new Core('simd', moduleWithVersion(ABI_VERSION + 1))).toThrow(
      `seam: stale build: the WebAssembly core speaks ABI version ${ABI_VERSION + 1} and the bindings version ${ABI_VERSION}`,
    );
    const noVersion = Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
    expect(() => new Core('simd', noVersion)).toThrow('ABI version undefined');
  });
});
