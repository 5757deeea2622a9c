// UTF-8 decoding in headless Chromium (Debian's /usr/bin/chromium): the ESM build's browser route
// (SIMD validation in WebAssembly, then TextDecoder on the validated span) against TextDecoder.
//   npm run build && node build/bench/browser.js
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';

const root = process.cwd();
const server = createServer((req, res) => {
  const url = req.url ?? '/';
  const file = url === '/' ? null : url === '/page.mjs' ? join(root, 'bench', 'browser-page.mjs') : /^\/dist\/(chunks\/)?[\w.-]+\.js$/.test(url) ? join(root, url) : undefined;
  if (file === undefined) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': file ? 'text/javascript' : 'text/html' });
  res.end(file ? readFileSync(file) : '<!doctype html><title>seam bench</title>');
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
});
try {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  const out = (await page.evaluate("import('/page.mjs').then((p) => p.run())")) as {
    backend: string; ua: string; rows: { corpus: string; chunk: number; seam: number; peer: number }[];
  };
  console.log(`${out.ua.replace(/^.*(Chrome\/[\d.]+).*$/, '$1')} (headless), core: ${out.backend}; 15 interleaved runs, medians\n`);
  console.log('| corpus | chunk | Utf8Decoder MB/s | TextDecoder fatal, stream MB/s | ratio |\n|---|---:|---:|---:|---:|');
  for (const r of out.rows) console.log(`| ${r.corpus} | ${r.chunk} B | ${r.seam.toFixed(0)} | ${r.peer.toFixed(0)} | **${(r.seam / r.peer).toFixed(2)}×** |`);
} finally {
  await browser.close();
  server.close();
}
