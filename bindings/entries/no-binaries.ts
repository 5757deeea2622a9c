// What the workerd and edge entries build in place of core/generated/wasm-binaries.ts: no bytes
// (their core arrives compiled, see compiled-core.ts), so that a Worker does not carry 100 KB of
// base64 it cannot compile.
export const SIMD_WASM_BASE64 = '';
export const SCALAR_WASM_BASE64 = '';
