// The headless browsers the browser tests and the browser benchmark run in, launched one way:
// Debian's Chromium driven by playwright-core, and Debian's Firefox ESR driven by puppeteer-core
// over WebDriver BiDi. Neither tool downloads a browser: the paths are Debian's, or CHROMIUM_PATH
// and FIREFOX_PATH.
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';

export type BrowserName = 'chromium' | 'firefox';

/** What the tests and the benchmark use of a page: the part playwright's and puppeteer's pages share. */
export interface BrowserPage {
  goto(url: string): Promise<unknown>;
  /** An expression (a string), its value awaited. */
  evaluate(expression: string): Promise<unknown>;
  waitForFunction(fn: () => unknown): Promise<{ jsonValue(): Promise<unknown> }>;
  /** A function run in every document before its scripts. */
  addInitScript(fn: () => void): Promise<void>;
  close(): Promise<void>;
  /** Chromium's playwright page (for its DevTools protocol), undefined in Firefox. */
  readonly chromium?: import('playwright-core').Page;
}

export interface Browser {
  newPage(): Promise<BrowserPage>;
  close(): Promise<void>;
}

/** Chromium's flags: no sandbox (a container), no GPU, no background traffic. */
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];

/** The part of a playwright or puppeteer page that a BrowserPage passes through. */
interface NativePage {
  goto(url: string): Promise<unknown>;
  evaluate(expression: string): Promise<unknown>;
  waitForFunction(fn: () => unknown): Promise<{ jsonValue(): Promise<unknown> }>;
  close(): Promise<void>;
}

function pageOf(page: NativePage, addInitScript: (fn: () => void) => Promise<unknown>, chromium?: import('playwright-core').Page): BrowserPage {
  return {
    goto: (url) => page.goto(url),
    evaluate: (expression) => page.evaluate(expression),
    waitForFunction: (fn) => page.waitForFunction(fn),
    addInitScript: async (fn) => { await addInitScript(fn); },
    close: () => page.close(),
    chromium,
  };
}

export async function launchBrowser(name: BrowserName): Promise<Browser> {
  if (name === 'firefox') {
    const browser = await puppeteer.launch({
      browser: 'firefox',
      protocol: 'webDriverBiDi',
      executablePath: process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr',
      headless: true,
      // performance.now() at full precision (Firefox rounds it to 1 ms by default, a tenth of a
      // benchmark's sample)
      extraPrefsFirefox: { 'privacy.reduceTimerPrecision': false },
    });
    return {
      async newPage() {
        const page = await browser.newPage();
        return pageOf(page, (fn) => page.evaluateOnNewDocument(fn));
      },
      close: () => browser.close(),
    };
  }
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
  });
  return {
    async newPage() {
      const page = await browser.newPage();
      return pageOf(page, (fn) => page.addInitScript(fn), page);
    },
    close: () => browser.close(),
  };
}
