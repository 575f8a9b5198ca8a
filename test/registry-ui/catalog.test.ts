// The web catalog in a real browser (anonymous mode): search, filters, sort and paging carried
// in the address, a server's page with its versions and snippets, the operators' view after a
// failed sync, accessibility (axe-core), no script error and no request leaving the server.
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../cli/helpers.js";
import { axeViolations, browserAvailable, launchBrowser, type Browser } from "./browser.js";
import { DEPRECATION, GENERATED, LEGACY, startCatalog, type Fixture } from "./fixtures.js";

const SHOTS = join(import.meta.dirname, "../../docs/images");

/** Generous: the whole suite shares two cores with the browser. */
const SLOW = 120_000;

describe.skipIf(!browserAvailable())("web catalog in a browser", () => {
  let fx: Fixture;
  let browser: Browser;
  let page: Page;
  /** Every page visited, checked with axe-core at the end. */
  const visited = new Set<string>();

  beforeAll(async () => {
    fx = await startCatalog();
    browser = await launchBrowser();
    page = await browser.page();
    page.on("load", () => visited.add(page.url()));
  }, SLOW);

  afterAll(async () => {
    await browser?.close();
    await fx?.server.close();
  });

  const count = async (): Promise<string> => (await page.locator("p.count").innerText()) ?? "";
  const address = (): URL => new URL(page.url());
  /** How many servers the API lists with a package or remote offering this. */
  const offering = (value: string, field: "transport" | "registryType"): number =>
    fx.latest.filter((s) => {
      const packages = (s.packages ?? []) as {
        registryType: string;
        transport: { type: string };
      }[];
      const remotes = (s.remotes ?? []) as { type: string }[];
      return field === "transport"
        ? packages.some((p) => p.transport.type === value) || remotes.some((r) => r.type === value)
        : packages.some((p) => p.registryType === value);
    }).length;

  it(
    "sends a browser asking for / to the catalog, which lists every server",
    async () => {
      await page.goto(`${fx.url}/`);
      expect(address().pathname).toBe("/ui/");
      expect(fx.latest.length).toBeGreaterThan(GENERATED + 1);
      expect(await count()).toBe(`${fx.latest.length} servers`);
      expect(await page.locator("li.card").count()).toBe(20);
      // Two registries are readable: the picker offers both.
      expect(await page.locator("select[name=registry] option").allInnerTexts()).toEqual([
        "default",
        "partners",
      ]);
    },
    SLOW,
  );

  it(
    "searches name, title and description, and keeps the search in the address",
    async () => {
      await page.goto(`${fx.url}/ui/`);
      await page.fill("input[type=search]", "legacy weather");
      await page.press("input[type=search]", "Enter");
      await page.waitForURL(/q=legacy/);
      expect(await count()).toBe("1 server");
      expect(address().searchParams.get("q")).toBe("legacy weather");
      // Description words match too.
      await page.goto(`${fx.url}/ui/?q=${encodeURIComponent("seven-day forecasts")}`);
      expect(await page.locator("li.card h2").allInnerTexts()).toEqual(["Weather Forecast"]);
    },
    SLOW,
  );

  it(
    "filters by transport, package type and status; a select submits by itself",
    async () => {
      await page.goto(`${fx.url}/ui/`);
      await Promise.all([
        page.waitForURL(/transport=sse/),
        page.selectOption("select[name=transport]", "sse"),
      ]);
      expect(await count()).toBe(`${offering("sse", "transport")} servers`);
      expect(address().searchParams.has("q")).toBe(false);
      await page.goto(`${fx.url}/ui/`);
      await Promise.all([
        page.waitForURL(/type=npm/),
        page.selectOption("select[name=type]", "npm"),
      ]);
      expect(await count()).toBe(`${offering("npm", "registryType")} servers`);
      await page.goto(`${fx.url}/ui/?status=deprecated`);
      expect(await page.locator("li.card h2").allInnerTexts()).toEqual(["Legacy Weather"]);
      expect(await page.locator("li.card .badge").innerText()).toBe("deprecated");
    },
    SLOW,
  );

  it(
    "pages and sorts, and a shared address shows the same page",
    async () => {
      await page.goto(`${fx.url}/ui/?q=fleet`);
      const total = Number((await count()).split(" ")[0]);
      expect(total).toBe(GENERATED + 1);
      const first = await page.locator("li.card h2").allInnerTexts();
      await Promise.all([page.waitForURL(/page=2/), page.click("a[rel=next]")]);
      expect(address().searchParams.get("q")).toBe("fleet");
      const second = await page.locator("li.card h2").allInnerTexts();
      expect(second.length).toBe(Math.min(20, total - 20));
      expect(second.some((t) => first.includes(t))).toBe(false);
      // The address alone brings back the same page in a fresh tab.
      const shared = page.url();
      const other = await browser.context.newPage();
      await other.goto(shared);
      expect(await other.locator("li.card h2").allInnerTexts()).toEqual(second);
      await other.close();
      // Recently updated first: the last published server leads.
      await page.goto(`${fx.url}/ui/?sort=updated`);
      expect(await page.locator("li.card h2").first().innerText()).toBe("Legacy Weather");
      expect(await page.locator("select[name=sort]").inputValue()).toBe("updated");
    },
    SLOW,
  );

  it(
    "shows a server's versions newest first with their status, and copyable snippets",
    async () => {
      await page.goto(`${fx.url}/ui/?q=legacy`);
      await Promise.all([page.waitForURL(/\/ui\/server/), page.click("li.card h2 a")]);
      expect(await page.locator("h1").innerText()).toBe("Legacy Weather");
      expect(await page.locator(".head img.icon").count()).toBe(1);
      expect(await page.locator(".status-message").innerText()).toBe(DEPRECATION);
      const versions = page.locator("ol.versions li");
      expect(await versions.locator("a").allInnerTexts()).toEqual(["2.0.0", "1.0.0", "0.9.0"]);
      expect(await versions.nth(0).locator(".badge").first().innerText()).toBe("deprecated");
      expect(await versions.nth(2).locator(".badge").first().innerText()).toBe("deleted");
      expect(await versions.nth(2).locator(".why").innerText()).toBe("Leaked a token");
      expect(await page.locator("a", { hasText: "Repository" }).getAttribute("href")).toBe(
        "https://github.com/example-fleet/legacy-weather",
      );
      // The secret variable is marked; the argument is listed.
      expect(
        await page.locator("li", { hasText: "WEATHER_TOKEN" }).locator(".secret").count(),
      ).toBe(1);
      expect(await page.locator("dd code", { hasText: "--units" }).count()).toBe(1);
      // The script reveals the copy buttons.
      expect(await page.locator("button.copy").first().isVisible()).toBe(true);

      const manifest = (await page.locator("#snippet-0").textContent()) ?? "";
      expect(manifest).toContain("kind: MCPServer");
      expect(manifest).toContain('image: "ghcr.io/example-fleet/legacy-weather:2.0.0"');
      const validate = await runCli(["validate", "-"], { input: manifest });
      expect(validate.stdout + validate.stderr).not.toMatch(/error/i);
      expect(validate.status).toBe(0);
      const client = JSON.parse((await page.locator("#snippet-1").textContent()) ?? "{}") as {
        mcpServers: Record<string, { command: string; args: string[] }>;
      };
      expect(client.mcpServers["legacy-weather"]?.args.at(-1)).toBe(
        "ghcr.io/example-fleet/legacy-weather:2.0.0",
      );

      // An older version pins its own image.
      await Promise.all([
        page.waitForURL(/version=1\.0\.0/),
        page.click("ol.versions a >> text=1.0.0"),
      ]);
      expect(await page.locator("#snippet-0").textContent()).toContain("legacy-weather:1.0.0");
    },
    SLOW,
  );

  it(
    "offers an MCPRemoteProxy for a remote",
    async () => {
      await page.goto(
        `${fx.url}/ui/server?registry=default&name=${encodeURIComponent("io.example.fleet/srv-03")}`,
      );
      const manifest = (await page.locator("#snippet-0").textContent()) ?? "";
      expect(manifest).toContain("kind: MCPRemoteProxy");
      expect(manifest).toContain('remoteURL: "https://mcp.example.com/srv-03/mcp"');
      const validate = await runCli(["validate", "-"], { input: manifest });
      expect(validate.status).toBe(0);
    },
    SLOW,
  );

  it(
    "shows operators each source's last sync, its result and the error in words",
    async () => {
      await page.goto(`${fx.url}/ui/`);
      await Promise.all([page.waitForURL(/operators/), page.click("nav >> text=Operators")]);
      const row = page.locator("tr", { has: page.locator("th", { hasText: "partners" }) }).first();
      expect(await row.locator(".badge").innerText()).toBe("failed");
      expect(await row.locator("td.error").innerText()).toMatch(/does not exist/);
      const team = page.locator("tr", { has: page.locator("th", { hasText: "team" }) });
      expect(await team.locator("td").nth(3).innerText()).toBe(String(GENERATED + 3));
      expect(await page.locator("tr", { hasText: "catalog, team" }).count()).toBe(1);
      // Nothing here changes data: no form but the filters' and sign-out's.
      expect(await page.locator("main form").count()).toBe(0);
    },
    SLOW,
  );

  it(
    "has no serious or critical accessibility violation on any page",
    async () => {
      expect(visited.size).toBeGreaterThan(3);
      for (const url of visited) {
        await page.goto(url);
        expect({ url, violations: await axeViolations(page) }).toEqual({ url, violations: [] });
      }
    },
    SLOW,
  );

  it(
    "never requested another host and raised no script error",
    () => {
      const origin = new URL(fx.url).origin;
      expect(browser.requests.filter((u) => new URL(u).origin !== origin)).toEqual([]);
      expect(browser.errors).toEqual([]);
    },
    SLOW,
  );

  // The documentation's screenshots: taken on every run (a page that cannot be drawn fails
  // here), written into docs/images/ with UPDATE_SCREENSHOTS=1.
  it(
    "draws the three pages of the documentation's screenshots",
    async () => {
      const dir =
        process.env.UPDATE_SCREENSHOTS === "1" ? SHOTS : mkdtempSync(join(tmpdir(), "ui-shots-"));
      mkdirSync(dir, { recursive: true });
      const shots = [
        ["registry-ui-catalog.png", "/ui/", false],
        [
          "registry-ui-server.png",
          `/ui/server?registry=default&name=${encodeURIComponent(LEGACY)}`,
          true,
        ],
        ["registry-ui-operators.png", "/ui/operators", false],
      ] as const;
      for (const [file, path, fullPage] of shots) {
        await page.goto(`${fx.url}${path}`);
        const png = await page.screenshot({ path: join(dir, file), fullPage });
        // A PNG signature and more than an empty page's worth of pixels.
        expect(png.subarray(1, 4).toString("latin1")).toBe("PNG");
        expect(png.length).toBeGreaterThan(10_000);
      }
    },
    SLOW,
  );
});
