// Opens the built UI in headless system Chromium with the fake engine installed and seeded.
import { chromium, type Browser, type Page } from 'playwright-core';
import { inject } from 'vitest';
import type { IpcRecord } from './fake/install';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

let browser: Browser | null = null;

export async function launch(): Promise<Browser> {
  browser ??= await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ARGS });
  return browser;
}

export async function close(): Promise<void> {
  await browser?.close();
  browser = null;
}

export interface App {
  page: Page;
  /** Every command and event of the window so far. */
  ipc: () => Promise<IpcRecord[]>;
  /** Runs `fn` on the fake engine inside the page. */
  fake: <A>(fn: (fake: Window['__fake'], arg: A) => unknown, arg?: A) => Promise<unknown>;
  errors: string[];
}

export async function openApp(seed = 'empty', colorScheme: 'light' | 'dark' = 'light'): Promise<App> {
  const b = await launch();
  const context = await b.newContext({ viewport: { width: 1280, height: 860 }, colorScheme });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.addInitScript((s) => {
    window.__E2E_SEED__ = s;
  }, seed);
  await page.addInitScript({ path: inject('fakeScript') });
  await page.goto(inject('baseUrl'));
  await page.evaluate(() => window.__seeded);
  return {
    page,
    errors,
    ipc: () => page.evaluate(() => structuredClone(window.__ipcLog)),
    fake: (fn, arg) => page.evaluate(({ src, arg }) => new Function('fake', 'arg', `return (${src})(fake, arg)`)(window.__fake, arg), { src: fn.toString(), arg }),
  };
}
