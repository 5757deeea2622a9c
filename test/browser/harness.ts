// What the browser tests share: a loopback server for the built package and the test pages, and
// the browser (scripts/browsers.ts): Debian's Chromium, or with SEAM_BROWSER=firefox Debian's
// Firefox ESR (no test tool downloads a browser).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { type Browser, launchBrowser } from '../../scripts/browsers.js';

export const root = join(__dirname, '..', '..');

export type Route = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/**
 * Serves `/` (an empty page), the plain-JS pages of test/browser (`/name.mjs`), the built
 * package (`/dist/…js`, chunks included) and `routes` (by path, without the query), on 127.0.0.1.
 */
export async function serve(routes: Record<string, Route> = {}): Promise<{ server: Server; base: string }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const route = routes[url.pathname];
    if (route) {
      Promise.resolve(route(req, res)).catch((err) => { res.destroy(err as Error); });
      return;
    }
    if (url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>seam</title>');
      return;
    }
    const page = /^\/([\w-]+\.mjs)$/.exec(url.pathname);
    const dist = /^\/dist\/(chunks\/)?[\w.-]+\.js$/.test(url.pathname);
    if (!page && !dist) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/javascript' });
    res.end(readFileSync(page ? join(__dirname, page[1]) : join(root, url.pathname)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** The browser the tests run in: SEAM_BROWSER=chromium (the default) or firefox. */
export const browserName: 'chromium' | 'firefox' = process.env.SEAM_BROWSER === 'firefox' ? 'firefox' : 'chromium';
export const browserTitle = browserName === 'firefox' ? 'Firefox' : 'Chromium';

/** The browser the tests run in, launched as the browser benchmark launches it (scripts/browsers.ts). */
export type TestBrowser = Browser;
export const launch = (): Promise<TestBrowser> => launchBrowser(browserName);

export const close = (server: Server | undefined) => new Promise((r) => (server ? server.close(r) : r(undefined)));
