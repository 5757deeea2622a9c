// Where the engine refuses the core: seam's SeamWasmError instead of the engine's CompileError,
// and ready(), which compiles asynchronously and installs the instance. Each case loads the
// bindings afresh (a realm's core is made once). The real Content Security Policy is in
// test/browser/.
import { afterEach, describe, expect, it, vi } from 'vitest';

type Bindings = typeof import('../../bindings/index.js');
const fresh = async (): Promise<Bindings> => {
  vi.resetModules();
  return import('../../bindings/index.js');
};
const bytes = new TextEncoder().encode('data: 世界\n\n');
// Chromium's message under `script-src 'self'` (no 'wasm-unsafe-eval')
const CSP = "WebAssembly.Module(): Refused to compile or instantiate WebAssembly module because 'unsafe-eval' is not an "
  + "allowed source of script in the following Content Security Policy directive: \"script-src 'self'\"";

const realModule = WebAssembly.Module;
afterEach(() => {
  WebAssembly.Module = realModule;
  vi.restoreAllMocks();
});

function refuse(message: string, Kind: new (m: string) => Error): void {
  WebAssembly.Module = function Module() { throw new Kind(message); } as unknown as typeof WebAssembly.Module;
}

describe('a Content Security Policy without wasm-unsafe-eval', () => {
  it('every decoder throws SeamWasmError naming the directive; the text layer works', async () => {
    refuse(CSP, WebAssembly.CompileError);
    const m = await fresh();
    let e: unknown;
    try { new m.SseParser(); } catch (err) { e = err; }
    expect(e).toBeInstanceOf(m.SeamWasmError);
    const err = e as InstanceType<Bindings['SeamWasmError']>;
    expect(err.code).toBe('ERR_WASM_BLOCKED');
    expect(err.name).toBe('SeamWasmError');
    expect(err.message).toContain("add 'wasm-unsafe-eval' to its script-src directive");
    expect(err.cause).toBeInstanceOf(WebAssembly.CompileError);
    // the same error again, without another compile; and ready() rejects with it
    WebAssembly.Module = realModule;
    expect(() => new m.Utf8Decoder()).toThrow(err);
    expect(() => new m.ModelStream({ format: 'openai' })).toThrow(err);
    await expect(m.ready()).rejects.toBe(err);
    const a = new m.TextAssembler();
    expect(a.push('cafe\u0301 ')).toBe('café');
    expect(a.finish().text).toBe('café ');
  });
});

describe('ready()', () => {
  it('compiles asynchronously where sync compiles are refused; later use is synchronous', async () => {
    refuse('WebAssembly.Module(): Buffer size is over 4KB, use WebAssembly.compile on the main thread', RangeError);
    const m = await fresh();
    expect(() => new m.SseParser()).toThrow(expect.objectContaining({ code: 'ERR_WASM_SYNC', message: expect.stringContaining('await ready()') }));
    const compile = vi.spyOn(WebAssembly, 'compile');
    expect(await m.ready()).toBe(m.wasmBackend());
    expect(compile).toHaveBeenCalledTimes(1);
    expect(new m.SseParser().push(bytes)).toEqual([{ type: 'message', data: '世界', id: '' }]);
    expect(await m.ready()).toBe(m.wasmBackend());
    expect(compile).toHaveBeenCalledTimes(1);
  });

  it('changes nothing where sync compiles work: one instance either way', async () => {
    const m = await fresh();
    const [a, b] = await Promise.all([m.ready(), m.ready()]);
    expect(a).toBe(b);
    const p = new m.SseParser();
    expect(p.push(bytes)).toHaveLength(1);
    const n = await fresh();
    expect(new n.Utf8Decoder().push(bytes)).toBe('data: 世界\n\n');
    expect(await n.ready()).toBe(n.wasmBackend());
  });

  it('a runtime without WebAssembly gets ERR_WASM_UNAVAILABLE', async () => {
    const m = await fresh();
    const saved = globalThis.WebAssembly;
    // @ts-expect-error: removing the global for the test
    delete globalThis.WebAssembly;
    try {
      expect(() => new m.LineDecoder()).toThrow(expect.objectContaining({ code: 'ERR_WASM_UNAVAILABLE' }));
    } finally {
      globalThis.WebAssembly = saved;
    }
  });
});
