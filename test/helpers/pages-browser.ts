/**
 * Headless Chromium for the page tests (playwright-core, Debian's `chromium`; no browser is
 * downloaded). `chromiumStatus()` says whether the tests can run: without the binary they report
 * themselves skipped, except under CI=true, where a missing browser is a failure (.ci/run installs
 * it). Each launch uses a fresh user-data-dir; every page opened records console errors, page
 * errors, dialogs and any request that leaves the allowed origin (those are aborted).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'pages');

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export type ChromiumStatus = { kind: 'ok' } | { kind: 'skip'; message: string } | { kind: 'fail'; message: string };

export function chromiumStatus(): ChromiumStatus {
  if (existsSync(CHROMIUM)) return { kind: 'ok' };
  const why = `no Chromium at ${CHROMIUM} (install Debian's: apt-get install -y chromium; or set CHROMIUM_PATH)`;
  if (process.env.CI === 'true') return { kind: 'fail', message: `${why}: CI=true, so the browser tests must run` };
  return { kind: 'skip', message: `browser tests skipped: ${why}` };
}

export interface Browser {
  context: (opts?: { javaScriptEnabled?: boolean }) => Promise<BrowserContext>;
  /**
   * Close the open contexts (their browser processes). Call it before stopping a server the pages
   * used: Chromium keeps pre-connected sockets open that never send a request, and a graceful server
   * shutdown waits for those (up to its 10 s limit).
   */
  closeContexts: () => Promise<void>;
  close: () => Promise<void>;
}

/** Launch headless Chromium with a fresh profile; `context()` opens another isolated profile. */
export function launchBrowser(): Browser {
  const dirs: string[] = [];
  const contexts: BrowserContext[] = [];
  return {
    context: async (opts = {}) => {
      const dir = mkdtempSync(join(tmpdir(), 'aw-chromium-'));
      dirs.push(dir);
      const ctx = await chromium.launchPersistentContext(dir, {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_ARGS,
        acceptDownloads: true,
        viewport: { width: 1200, height: 900 },
        javaScriptEnabled: opts.javaScriptEnabled ?? true,
      });
      contexts.push(ctx);
      return ctx;
    },
    closeContexts: async () => {
      for (const c of contexts.splice(0)) await c.close().catch(() => undefined);
    },
    close: async () => {
      for (const c of contexts.splice(0)) await c.close();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    },
  };
}

export interface WatchedPage {
  page: Page;
  /** Console messages of type error, uncaught page errors, dialogs (alert/confirm/prompt). */
  errors: string[];
  dialogs: string[];
  /** Every request the page made, and those to another origin (aborted). */
  requests: string[];
  foreign: string[];
}

/**
 * A new page that allows requests only to `allowed` (an origin like `http://127.0.0.1:8420`, or a
 * `file://` URL prefix) and `data:` URLs; everything else is recorded and aborted.
 */
export async function watchedPage(context: BrowserContext, allowed: string): Promise<WatchedPage> {
  const page = await context.newPage();
  const w: WatchedPage = { page, errors: [], dialogs: [], requests: [], foreign: [] };
  const ok = (url: string): boolean =>
    url.startsWith('data:') || (allowed.startsWith('file://') ? url.startsWith(allowed) : new URL(url).origin === allowed);
  await page.route('**/*', async (route) => {
    const url = route.request().url();
    if (ok(url)) await route.continue();
    else {
      w.foreign.push(url);
      await route.abort();
    }
  });
  page.on('request', (r) => w.requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') w.errors.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => w.errors.push(`page error: ${e.message}`));
  page.on('dialog', (d) => {
    w.dialogs.push(d.message());
    void d.dismiss();
  });
  return w;
}

/** Save a full-page screenshot under test-artifacts/pages/ and return its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
