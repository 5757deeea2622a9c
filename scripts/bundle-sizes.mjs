#!/usr/bin/env node
// What a bundle of seam carries: bundles tiny entries that import one thing each from the built
// package (dist/index.js) with esbuild and with Vite, minified, and prints their sizes, minified
// and gzipped. `bundle` is also what test/ecosystem/bundles.test.ts checks the contents of.
//   npm run build && node scripts/bundle-sizes.mjs [--dist DIR]
// --dist measures another build's index.js (DIR/index.js: another commit's dist, say).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const at = process.argv.indexOf('--dist');
const dist = at > 0 ? join(process.argv[at + 1], 'index.js') : join(root, 'dist', 'index.js');

/** The imports measured: a label and the names imported. */
export const IMPORTS = [
  ['TextAssembler (the text layer)', ['TextAssembler']],
  ['GraphemeCommitter', ['GraphemeCommitter']],
  ['countText', ['countText']],
  ['Utf8Decoder', ['Utf8Decoder']],
  ['SseParser', ['SseParser']],
  ['SseBatchDecoderStream', ['SseBatchDecoderStream']],
  ['ModelStream', ['ModelStream']],
  ['SseRelay', ['SseRelay']],
  ['streamInWorker (the page side of the Worker)', ['streamInWorker']],
  ['everything', ['*']],
];

/** An entry that imports `names` from dist/index.js and keeps them (a global holds them). */
function entry(names) {
  const from = JSON.stringify(dist);
  return names[0] === '*'
    ? `import * as seam from ${from};\nglobalThis.seam = seam;\n`
    : `import { ${names.join(', ')} } from ${from};\nglobalThis.seam = { ${names.join(', ')} };\n`;
}

/** The minified bundle of an entry importing `names`, made by `tool` ('esbuild' or 'vite'). */
export async function bundle(tool, names) {
  const dir = mkdtempSync(join(tmpdir(), 'seam-bundle-'));
  try {
    const file = join(dir, 'entry.js');
    writeFileSync(file, entry(names));
    if (tool === 'esbuild') {
      const { build } = await import('esbuild');
      const out = await build({ entryPoints: [file], bundle: true, minify: true, format: 'esm', platform: 'browser', write: false, logLevel: 'silent' });
      return out.outputFiles[0].text;
    }
    const { build } = await import('vite');
    const out = await build({
      root: dir, configFile: false, logLevel: 'silent',
      build: { write: false, minify: true, modulePreload: false, rollupOptions: { input: file } },
    });
    const chunks = (Array.isArray(out) ? out : [out]).flatMap((o) => o.output).filter((o) => o.type === 'chunk');
    return chunks.map((c) => c.code).join('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const kb = (n) => `${(n / 1000).toFixed(1)} KB`;

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const rows = [];
  for (const [label, names] of IMPORTS) {
    const sizes = [];
    for (const tool of ['esbuild', 'vite']) {
      // (an import the measured build does not export is a dash)
      const code = await bundle(tool, names).catch(() => undefined);
      sizes.push(...(code === undefined ? ['—', '—'] : [kb(code.length), kb(gzipSync(code).length)]));
    }
    rows.push([label, ...sizes]);
  }
  const esbuildVersion = (await import('esbuild')).version;
  const viteVersion = (await import('vite')).version;
  console.log(`Minified bundles of one import from ${dist} (esbuild ${esbuildVersion}, Vite ${viteVersion}); 1 KB = 1000 bytes\n`);
  console.log('| import | esbuild, minified | gzipped | Vite, minified | gzipped |');
  console.log('|---|---:|---:|---:|---:|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
}
