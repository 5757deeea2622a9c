// The entries for runtimes that compile no WebAssembly from bytes: package.json's `workerd` and
// `edge-light` conditions resolve to dist/workerd.js and dist/edge.js, which import the core as a
// .wasm module (dist/seam.simd.wasm, the very bytes the other builds embed) instead of carrying it
// as base64, and export every name the ESM build does. Here each is bundled as a bundler would with
// its condition, the .wasm import given the compiled module (as workerd and Vercel's loaders give
// it), and run. test/runtimes/workerd.test.ts runs dist/workerd.js in workerd itself.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIMD_WASM_BASE64, SCALAR_WASM_BASE64 } from '../../bindings/core/generated/wasm-binaries.js';

const root = join(__dirname, '..', '..');
let dir = '';

beforeAll(() => {
  mkdirSync(join(root, 'build'), { recursive: true });
  dir = mkdtempSync(join(root, 'build', 'entries-'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(root, join(dir, 'node_modules', 'seam-stream'), 'dir');
});
afterAll(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** `seam-stream` bundled with `condition`; the .wasm imports it made, and the bundle's module. */
async function bundled(condition: string, cjs = false): Promise<{ imports: string[]; code: string; m: Record<string, any> }> {
  const imports: string[] = [];
  const out = await build({
    // (cjs: an app written as CommonJS, which wrangler and Vercel's builder bundle the same way)
    stdin: cjs ? { contents: "module.exports = require('seam-stream');", resolveDir: dir, sourcefile: 'app.cjs', loader: 'js' }
      : { contents: "export * from 'seam-stream';", resolveDir: dir, sourcefile: 'app.js' },
    bundle: true, format: 'esm', platform: 'neutral', write: false, logLevel: 'error',
    conditions: [condition, 'worker', 'browser'], mainFields: ['module', 'main'],
    plugins: [{
      name: 'compiled-wasm',
      setup(b) {
        b.onResolve({ filter: /\.wasm(\?module)?$/ }, (args) => {
          imports.push(args.path);
          return { path: join(args.resolveDir, args.path.replace(/\?module$/, '')), namespace: 'wasm' };
        });
        b.onLoad({ filter: /.*/, namespace: 'wasm' }, (args) => ({
          contents: `export default new WebAssembly.Module(new Uint8Array(${JSON.stringify(Array.from(readFileSync(args.path)))}));`,
          loader: 'js',
        }));
      },
    }],
  });
  const code = out.outputFiles[0].text;
  const file = join(dir, `${condition}${cjs ? '-cjs' : ''}.mjs`);
  writeFileSync(file, code);
  const m = await import(pathToFileURL(file).href);
  return { imports, code, m: cjs ? m.default : m };
}

describe('the workerd and edge-light entries', () => {
  it('ship the cores as .wasm files, the bytes the other builds embed', () => {
    expect(sha(readFileSync(join(root, 'dist', 'seam.simd.wasm')))).toBe(sha(Buffer.from(SIMD_WASM_BASE64, 'base64')));
    expect(sha(readFileSync(join(root, 'dist', 'seam.scalar.wasm')))).toBe(sha(Buffer.from(SCALAR_WASM_BASE64, 'base64')));
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    expect(pkg.exports['.'].import.workerd).toBe('./dist/workerd.js');
    expect(pkg.exports['.'].import['edge-light']).toBe('./dist/edge.js');
    expect(pkg.exports['.'].require.workerd).toBe('./dist/workerd.js');
    expect(pkg.exports['.'].require['edge-light']).toBe('./dist/edge.js');
    expect(pkg.exports['./seam.simd.wasm']).toBe('./dist/seam.simd.wasm');
  });

  for (const [condition, spec] of [['workerd', './seam.simd.wasm'], ['edge-light', './seam.simd.wasm?module']] as const) {
    it(`${condition}, from CommonJS (require): the same entry, no base64 core`, async () => {
      const { imports, code, m } = await bundled(condition, true);
      expect(imports).toEqual([spec]);
      expect(code).not.toContain(SIMD_WASM_BASE64.slice(0, 64));
      const relay = new m.SseRelay({ from: 'anthropic', to: 'openai', id: 'x', model: 'm' });
      const out = new TextDecoder().decode(relay.push(new TextEncoder().encode(
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"世界"}}\n\n')));
      expect(out).toContain('"content":"世界"');
    });

    it(`${condition}: imports ${spec}, carries no base64 core, exports what the ESM build does, and runs on the compiled module`, async () => {
      const { imports, code, m } = await bundled(condition);
      expect(imports).toEqual([spec]);
      expect(code).not.toContain(SIMD_WASM_BASE64.slice(0, 64));
      expect(code).not.toContain(SCALAR_WASM_BASE64.slice(0, 64));
      const esm = await import(pathToFileURL(join(root, 'dist', 'index.js')).href);
      expect(Object.keys(m).sort()).toEqual(Object.keys(esm).sort());
      // (this bundle's realm is its own: its core is the module handed over at import)
      const relay = new m.SseRelay({ from: 'anthropic', to: 'openai', id: 'x', model: 'm' });
      const out = new TextDecoder().decode(relay.push(new TextEncoder().encode(
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"世界"}}\n\n')));
      expect(out).toContain('"content":"世界"');
      expect(m.wasmBackend()).toBe('simd');
    });
  }
});
