import { copyFileSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { defineConfig } from 'tsup';

// The entries for runtimes that compile no WebAssembly from bytes (bindings/entries/compiled-core.ts):
// dist/workerd.js (package.json's `workerd` condition) and dist/edge.js (`edge-light`), each one
// file, importing the SIMD core as dist/seam.simd.wasm, which this build copies from build/ (written
// by scripts/build-wasm.mjs) with the scalar build beside it. Run after the main build (npm run build).
const core = (spec: string) => ({
  name: 'seam-compiled-core',
  setup(build: { onResolve(o: { filter: RegExp }, f: (a: { path: string; resolveDir: string }) => unknown): void }) {
    // the compiled module: left to the runtime's loader, as the file beside the entry
    build.onResolve({ filter: /^\.\/core\.wasm$/ }, () => ({ path: spec, external: true }));
    // the embedded binaries: none
    build.onResolve({ filter: /\/generated\/wasm-binaries\.js$/ }, () => ({ path: resolve('bindings/entries/no-binaries.ts') }));
  },
});

const common = {
  entry: {} as Record<string, string>,
  target: 'es2022',
  platform: 'neutral',
  format: ['esm'],
  splitting: false,
  sourcemap: false,
  clean: false,
  noExternal: [/^@noble\/hashes/],
  esbuildOptions(options: { minifySyntax?: boolean }) {
    options.minifySyntax = true;
  },
} as const;

/** The cores in dist/, each checked against the bytes the other builds embed. */
function copyCores(): void {
  const embedded = readFileSync('bindings/core/generated/wasm-binaries.ts', 'utf8');
  for (const [from, to, name] of [['build/seam.simd.wasm', 'dist/seam.simd.wasm', 'SIMD'], ['build/seam.wasm', 'dist/seam.scalar.wasm', 'SCALAR']]) {
    const bytes = readFileSync(from);
    const b64 = new RegExp(`${name}_WASM_BASE64 =\\s*'([^']*)'`).exec(embedded)?.[1];
    if (b64 !== bytes.toString('base64')) throw new Error(`${from} is not the core embedded in wasm-binaries.ts: run npm run build`);
    copyFileSync(from, to);
    console.log(`${to}: ${bytes.length} bytes, sha256 ${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}…`);
  }
}

export default defineConfig([
  { ...common, entry: { workerd: join('bindings', 'entries', 'compiled-core.ts') }, esbuildPlugins: [core('./seam.simd.wasm')], onSuccess: async () => copyCores() },
  { ...common, entry: { edge: join('bindings', 'entries', 'compiled-core.ts') }, esbuildPlugins: [core('./seam.simd.wasm?module')] },
]);
