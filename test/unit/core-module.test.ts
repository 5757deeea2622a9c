// setCoreModule: the core handed over as a compiled WebAssembly.Module, for runtimes that compile no
// WebAssembly from bytes (workerd, Vercel's edge runtime: simulated here by a WebAssembly.Module
// that refuses bytes with workerd's message; test/runtimes/workerd.test.ts runs the real one).
// Each case loads the bindings afresh (a realm's core is made once).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SCALAR_WASM_BASE64, SIMD_WASM_BASE64 } from '../../bindings/core/generated/wasm-binaries.js';

type Bindings = typeof import('../../bindings/index.js');
const fresh = async (): Promise<Bindings> => {
  vi.resetModules();
  return import('../../bindings/index.js');
};
const compiled = (b64: string) => new WebAssembly.Module(Buffer.from(b64, 'base64'));
const simd = compiled(SIMD_WASM_BASE64);
const scalar = compiled(SCALAR_WASM_BASE64);
const bytes = new TextEncoder().encode('data: 世界 👩‍💻\n\n');
const WORKERD = 'WebAssembly.Module(): Wasm code generation disallowed by embedder';

const realModule = WebAssembly.Module;
const realCompile = WebAssembly.compile;
afterEach(() => {
  WebAssembly.Module = realModule;
  WebAssembly.compile = realCompile;
  vi.restoreAllMocks();
});

/** WebAssembly as workerd has it: a module from bytes is refused, a compiled one instantiates. */
function refuseBytes(): void {
  const Refusing = function Module(this: unknown, source: unknown) {
    if (source instanceof Uint8Array || source instanceof ArrayBuffer) throw new WebAssembly.CompileError(WORKERD);
    return Reflect.construct(realModule, [source], new.target ?? Refusing);
  } as unknown as typeof WebAssembly.Module;
  Object.assign(Refusing, { exports: realModule.exports, imports: realModule.imports, customSections: realModule.customSections });
  Refusing.prototype = realModule.prototype;
  WebAssembly.Module = Refusing;
  WebAssembly.compile = () => Promise.reject(new WebAssembly.CompileError(WORKERD.replace('Module', 'compile')));
}

describe('where WebAssembly is not compiled from bytes', () => {
  it('every decoder throws SeamWasmError ERR_WASM_CODEGEN, which names the workerd entry and setCoreModule', async () => {
    refuseBytes();
    const m = await fresh();
    let e: unknown;
    try { new m.SseParser(); } catch (err) { e = err; }
    expect(e).toBeInstanceOf(m.SeamWasmError);
    const err = e as InstanceType<Bindings['SeamWasmError']>;
    expect(err.code).toBe('ERR_WASM_CODEGEN');
    expect(err.message).toContain('"workerd"');
    expect(err.message).toContain("setCoreModule(core)");
    expect((err.cause as Error).message).toBe(WORKERD);
    expect(() => new m.Utf8Decoder()).toThrow(err);
    await expect(m.ready()).rejects.toBe(err);
    // then handed the compiled module, it works: no compile from bytes
    m.setCoreModule(simd);
    expect(new m.SseParser().push(bytes)).toEqual([{ type: 'message', data: '世界 👩‍💻', id: '' }]);
    expect(m.wasmBackend()).toBe('simd');
  });

  it('setCoreModule before the first decoder: instantiated on first use, either build, ready() compiles nothing', async () => {
    refuseBytes();
    for (const [module, backend] of [[simd, 'simd'], [scalar, 'scalar']] as const) {
      const m = await fresh();
      m.setCoreModule(module);
      const compile = vi.spyOn(WebAssembly, 'compile');
      expect(await m.ready()).toBe(backend);
      expect(compile).not.toHaveBeenCalled();
      expect(m.wasmBackend()).toBe(backend);
      const d = new m.Utf8Decoder();
      expect(d.push(bytes.subarray(0, 8)) + d.push(bytes.subarray(8)) + d.flush()).toBe('data: 世界 👩‍💻\n\n');
      const stream = new m.ModelStream({ format: 'openai' });
      expect(stream.push(new TextEncoder().encode('data: {"choices":[{"index":0,"delta":{"content":"e\\u0301!"}}]}\n\ndata: [DONE]\n\n')) + stream.flush()).toBe('é!');
    }
  });
});

describe('setCoreModule', () => {
  it('refuses what is not seam\'s core', async () => {
    const m = await fresh();
    expect(() => m.setCoreModule(new Uint8Array(8) as unknown as WebAssembly.Module)).toThrow(/expects a WebAssembly\.Module/);
    const empty = new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
    expect(() => m.setCoreModule(empty)).toThrow(/seam's own core/);
    expect(new m.SseParser().push(bytes)).toHaveLength(1); // and the realm goes on as usual
  });

  it('once a core is in use: the same module again is a no-op, another one an Error', async () => {
    const m = await fresh();
    m.setCoreModule(scalar);
    const p = new m.SseParser();
    m.setCoreModule(scalar);
    expect(() => m.setCoreModule(simd)).toThrow(/already in use/);
    expect(p.push(bytes)).toHaveLength(1);
    const n = await fresh();
    expect(new n.LineDecoder().push(bytes)).toEqual(['data: 世界 👩‍💻', '']);
    expect(() => n.setCoreModule(simd)).toThrow(/already in use/);
  });
});
