// A real browser for the catalog tests: Debian's Chromium, headless, driven by playwright-core
// (whose own browser download cannot run here). Without Chromium the tests skip with one line,
// unless REQUIRE_BROWSER=1 (CI), which turns the skip into a failure.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** True when Chromium is installed; prints one line (or throws under REQUIRE_BROWSER=1). */
export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const msg = `${CHROMIUM} not found: the catalog's browser tests are SKIPPED (apt-get install chromium)`;
  if (process.env.REQUIRE_BROWSER === "1") throw new Error(`REQUIRE_BROWSER=1: ${msg}`);
  console.warn(msg);
  return false;
}

export interface Browser {
  context: BrowserContext;
  /** Every URL the browser requested, in order. */
  requests: string[];
  /** Subresource requests (not navigations) of pages: the page's origin and the URL asked. */
  subresources: { from: string; url: string }[];
  /** Uncaught exceptions and console errors of every page. */
  errors: string[];
  page(): Promise<Page>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "mcpfleet-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    // Without the background-networking flags Chromium reaches for outside hosts by itself.
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1200, height: 900 },
  });
  const requests: string[] = [];
  const subresources: { from: string; url: string }[] = [];
  const errors: string[] = [];
  context.on("request", (r) => {
    requests.push(r.url());
    if (!r.isNavigationRequest()) {
      subresources.push({ from: new URL(r.frame().url()).origin, url: r.url() });
    }
  });
  const watch = (p: Page): void => {
    p.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
    p.on("console", (m) => {
      // A page answered with an error status (the sign-in page is a 401) is no script error.
      if (m.type() === "error" && m.location().url !== p.url()) {
        errors.push(`console: ${m.text()} (${m.location().url})`);
      }
    });
  };
  context.on("page", watch);
  context.pages().forEach(watch);
  return {
    context,
    requests,
    subresources,
    errors,
    async page() {
      return context.pages()[0] ?? context.newPage();
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
  "utf8",
);

export interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: number;
}

/**
 * axe-core's serious and critical violations of the page shown. The script is evaluated by
 * the browser's debugging protocol, which the page's CSP does not govern (it forbids inline
 * scripts, as it should).
 */
export async function axeViolations(page: Page): Promise<Violation[]> {
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } })
      .axe;
    const r = await axe.run();
    return r.violations as { id: string; impact: string | null; help: string; nodes: unknown[] }[];
  });
  return result
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length }));
}
