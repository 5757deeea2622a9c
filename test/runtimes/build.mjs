// Bundles the portable suites (test/runtimes/suites.ts: the conformance suites, the model fixtures
// and the core's unit and property suites that use only the package's public names) into
// build/runtimes/suites.js, a file any runtime runs with nothing else installed:
// - `vitest` is test/runtimes/vitest-shim.ts;
// - every import of bindings/ is the built package, `seam-stream` (left to the runtime to resolve:
//   the package references itself through its exports map, so each runtime loads the entry its
//   conditions choose), or, with --entry FILE, that file;
// - `import.meta.url` in a test file is that file's own URL (the Unicode data is read from test/data/);
// - the peers and helpers (eventsource-parser, fast-check) are bundled in;
// - template literals are lowered to string literals (see `supported` below).
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const outfile = join(root, 'build', 'runtimes', 'suites.js');

const portable = {
  name: 'portable',
  setup(b) {
    b.onResolve({ filter: /^vitest$/ }, () => ({ path: join(root, 'test', 'runtimes', 'vitest-shim.ts') }));
    b.onResolve({ filter: /bindings\// }, (args) => {
      const target = resolve(args.resolveDir, args.path);
      if (!relative(root, target).startsWith('bindings')) return undefined;
      return { path: 'seam-stream', external: true };
    });
    b.onLoad({ filter: /[\\/]test[\\/].*\.ts$/ }, (args) => {
      const src = readFileSync(args.path, 'utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href));
      return { contents: src, loader: 'ts' };
    });
  },
};

await build({
  entryPoints: [join(root, 'test', 'runtimes', 'suites.ts')],
  outfile,
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  // template literals as string literals: Bun 1.4.5 hands String.raw its template's non-ASCII
  // characters as \uXXXX escapes (String.raw`всё` is "\\u0432\\u0441\\u0451"), and the model fixtures
  // are String.raw templates of multilingual streams; lowered, a template's raw text is an ordinary
  // string literal, which every runtime reads as written
  supported: { 'template-literal': false },
  mainFields: ['module', 'main'],
  conditions: ['import', 'default'],
  external: ['node:*', 'seam-stream'],
  plugins: [portable],
  // the tests' own uses of Buffer (Deno has no global one): a binding of the bundle, never a global,
  // so that seam sees each runtime as it is
  inject: [join(root, 'test', 'runtimes', 'buffer.mjs')],
  // (package.json's "sideEffects": false is the library's; the test files are nothing but side effects)
  ignoreAnnotations: true,
  logLevel: 'warning',
});
console.log(`portable suites: ${relative(root, outfile)}`);
