// What bundlers keep of the built package (dist/index.js): an entry that imports only the text
// layer carries no WebAssembly, one that imports only the framing carries no Unicode tables, with
// esbuild and with Vite (scripts/bundle-sizes.mjs makes the bundles and prints their sizes); no
// module does top-level work; the Worker entry is exported and Vite bundles it from its name.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type PluginBuild } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { SCALAR_WASM_BASE64, SIMD_WASM_BASE64 } from '../../bindings/core/generated/wasm-binaries.js';
import { STAGE1_BASE64, STAGE2_BASE64 } from '../../bindings/text/unicode/generated-tables.js';
// @ts-expect-error: a plain ESM script without types
import { bundle } from '../../scripts/bundle-sizes.mjs';

const root = join(__dirname, '..', '..');
const make = bundle as (tool: 'esbuild' | 'vite', names: string[]) => Promise<string>;
/** Whether `code` holds the WebAssembly core: its bytes (either build) or the API that compiles them. */
const wasm = (code: string) => ({
  simd: code.includes(SIMD_WASM_BASE64.slice(0, 200)), scalar: code.includes(SCALAR_WASM_BASE64.slice(0, 200)),
  api: code.includes('WebAssembly'),
});
const tables = (code: string) => ({ stage1: code.includes(STAGE1_BASE64.slice(0, 200)), stage2: code.includes(STAGE2_BASE64.slice(0, 200)) });

describe.each(['esbuild', 'vite'] as const)('a bundle made by %s', (tool) => {
  it('of the text layer alone carries no WebAssembly', async () => {
    const code = await make(tool, ['TextAssembler', 'GraphemeCommitter', 'NfcCommitter', 'countText', 'convertOffset']);
    expect(wasm(code)).toEqual({ simd: false, scalar: false, api: false });
    expect(tables(code)).toEqual({ stage1: true, stage2: true });
  });

  it('of SseParser alone carries no Unicode tables', async () => {
    const code = await make(tool, ['SseParser']);
    expect(tables(code)).toEqual({ stage1: false, stage2: false });
    expect(wasm(code)).toEqual({ simd: true, scalar: true, api: true });
    expect(code).not.toContain('TransformStream');
  });

  it('of streamInWorker alone carries neither', async () => {
    const code = await make(tool, ['streamInWorker']);
    expect({ ...wasm(code), ...tables(code) }).toEqual({ simd: false, scalar: false, api: false, stage1: false, stage2: false });
  });

  it('of everything carries both', async () => {
    const code = await make(tool, ['*']);
    expect({ ...wasm(code), ...tables(code) }).toEqual({ simd: true, scalar: true, api: true, stage1: true, stage2: true });
  });
});

describe('top-level work', () => {
  // What a module does when imported, with every module marked as having side effects: a bundler
  // that ignores "sideEffects": false keeps exactly this. Numeric constants are free; anything else
  // (a call, an allocation, a class that reads a global) is work. The Worker's entry listens.
  // (the workerd and edge-light entry hands over its imported core at import: that is its job)
  const WORKS = new Set([join('worker', 'worker.ts'), 'index.ts', join('entries', 'compiled-core.ts')]);
  const modules = readdirSync(join(root, 'bindings'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !WORKS.has(f));
  const keepAll = {
    name: 'keep-all',
    setup(b: PluginBuild) {
      b.onResolve({ filter: /.*/ }, async (a) => {
        if (a.pluginData) return undefined;
        const r = await b.resolve(a.path, { resolveDir: a.resolveDir, kind: a.kind, pluginData: true });
        return { ...r, sideEffects: true };
      });
    },
  };

  it.each(modules)('%s does none', async (file) => {
    const out = await build({
      stdin: { contents: `import ${JSON.stringify(join(root, 'bindings', file))};`, resolveDir: root },
      bundle: true, format: 'esm', write: false, minifySyntax: true, plugins: [keepAll], logLevel: 'error',
    });
    const work = out.outputFiles[0].text
      .replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '')
      .replace(/(?:\bvar|,)\s*[\w$]+\s*=\s*[\d\s*+<>()-]+(?=[,;\n]|$)/g, '')
      .replace(/[;\s]/g, '');
    expect(work).toBe('');
  });
});

describe('seam-stream/worker', () => {
  it('is in the exports map: dist/worker.js', () => {
    expect(import.meta.resolve('seam-stream/worker')).toBe(pathToFileURL(join(root, 'dist', 'worker.js')).href);
  });

  it('is bundled by Vite from new Worker(new URL(\'seam-stream/worker\', import.meta.url)) as a file of its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seam-vite-worker-'));
    try {
      mkdirSync(join(dir, 'node_modules'));
      symlinkSync(root, join(dir, 'node_modules', 'seam-stream'), 'dir');
      writeFileSync(join(dir, 'index.html'), '<!doctype html><script type="module" src="./main.js"></script>');
      writeFileSync(join(dir, 'main.js'), [
        "import { streamInWorker } from 'seam-stream';",
        "const worker = new Worker(new URL('seam-stream/worker', import.meta.url), { type: 'module' });",
        "globalThis.run = (url) => streamInWorker(worker, { url, format: 'openai' });",
      ].join('\n'));
      const { build: vite } = await import('vite');
      const out = await vite({ root: dir, configFile: false, logLevel: 'silent', build: { write: false } });
      const files = (Array.isArray(out) ? out : [out]).flatMap((o) => (o as { output: Array<{ fileName: string; type: string; code?: string; source?: string | Uint8Array }> }).output);
      const worker = files.find((f) => /^assets\/worker-[\w-]+\.js$/.test(f.fileName));
      expect(worker, files.map((f) => f.fileName).join(', ')).toBeDefined();
      const main = files.find((f) => f.type === 'chunk' && /^assets\/index-/.test(f.fileName))!;
      expect(main.code).toContain(`new URL(\`/${worker!.fileName}\``);
      const workerCode = String(worker!.source ?? worker!.code);
      expect(workerCode).toContain('WebAssembly');
      expect(workerCode).toContain(SIMD_WASM_BASE64.slice(0, 200));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
