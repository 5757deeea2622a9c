// A `.wasm` import in the workerd and edge entries: the compiled module (see compiled-core.ts).
declare module '*.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
