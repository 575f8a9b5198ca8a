// Signing in to the catalog in a real browser: the authorization code flow with PKCE against a
// real OpenID provider, the session cookie's attributes, CSRF-safe sign-out, and entries
// filtered by the signed-in person's claims exactly as the API filters them for their token.
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegistryServer } from "../../src/registry/server.js";
import { AUDIENCE } from "../support/oidc.js";
import { entry, startServer } from "../registry/helpers.js";
import { axeViolations, browserAvailable, launchBrowser, type Browser } from "./browser.js";
import { CLIENT, startLoginIssuer, type LoginIssuer } from "./provider.js";

const PEOPLE = {
  dana: { team: "data" },
  sam: { team: "sales", groups: ["ops"] },
};

async function freePort(): Promise<number> {
  const s = createServer().listen(0, "127.0.0.1");
  await new Promise((r) => s.once("listening", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** Generous: the whole suite shares two cores with the browser. */
const SLOW = 120_000;

describe.skipIf(!browserAvailable())("signing in to the catalog", () => {
  let idp: LoginIssuer;
  let server: RegistryServer;
  let url: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpfleet-ui-signin-"));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    idp = await startLoginIssuer(PEOPLE, `${url}/ui/callback`);
    writeFileSync(join(dir, "client-secret"), `${CLIENT.secret}\n`);
    server = await startServer(
      `sources:
  - name: team
    managed: {}
registries:
  - name: default
    sources: [team]
auth:
  mode: oauth
  oauth:
    resourceUrl: https://registry.test
    providers:
      - { name: local, issuerUrl: "${idp.issuer}", audience: ${AUDIENCE}, allowPrivateIP: true }
  authz:
    roles:
      manageSources: [{ groups: ops }]
      manageEntries: [{ groups: ops }]
ui:
  signIn:
    clientId: ${CLIENT.id}
    clientSecretFile: client-secret
    redirectUrl: ${url}/ui/callback
`,
      dir,
      { port },
    );
    await server.store.publish(
      "team",
      entry("io.example.data/warehouse", "1.0.0", { claims: { team: "data" } }),
    );
    await server.store.publish(
      "team",
      entry("io.example.sales/crm", "1.0.0", { claims: { team: "sales" } }),
    );
    await server.store.publish("team", entry("io.example.open/unclaimed", "1.0.0"));
    browser = await launchBrowser();
    page = await browser.page();
  }, SLOW);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await idp?.close();
  });

  async function signIn(person: string): Promise<void> {
    await browser.context.clearCookies();
    await page.goto(`${url}/ui/`);
    await Promise.all([page.waitForURL(/\/interaction\//), page.click("a >> text=Sign in")]);
    await page.fill("input[name=login]", person);
    await page.fill("input[name=password]", "any password");
    await page.click("button[type=submit]");
    // The development provider asks for consent once per person.
    await page.waitForURL(
      (u) => u.pathname.startsWith("/ui/") || u.pathname.includes("/interaction/"),
    );
    if (page.url().includes("/interaction/")) {
      await Promise.all([page.waitForURL(`${url}/ui/`), page.click("button[type=submit]")]);
    }
    expect(page.url()).toBe(`${url}/ui/`);
  }

  const names = async (): Promise<string[]> => page.locator("li.card p.name").allInnerTexts();

  it(
    "asks to sign in first and shows nothing before",
    async () => {
      const res = await page.goto(`${url}/ui/`);
      expect(res?.status()).toBe(401);
      expect(await page.locator("h1").innerText()).toBe("Sign in");
      expect(await page.locator("li.card").count()).toBe(0);
      expect(await axeViolations(page)).toEqual([]);
    },
    SLOW,
  );

  it(
    "signs a person in with the code flow and PKCE and shows what their claims allow",
    async () => {
      await signIn("dana");
      expect(await page.locator(".who").innerText()).toBe("dana");
      const shown = await names();
      expect(shown).toHaveLength(1);
      expect(shown[0]).toContain("io.example.data/warehouse");
      // Dana holds no operator role.
      expect(await page.locator("nav >> text=Operators").count()).toBe(0);
      expect((await page.goto(`${url}/ui/operators`))?.status()).toBe(403);
      const cookie = (await browser.context.cookies(`${url}/ui/`)).find(
        (c) => c.name === "mcpfleet_ui",
      );
      expect(cookie?.httpOnly).toBe(true);
      expect(cookie?.sameSite).toBe("Lax");
      expect(await axeViolations(page)).toEqual([]);
    },
    SLOW,
  );

  it(
    "refuses a sign-out without the session's form token",
    async () => {
      const cookie = (await browser.context.cookies(`${url}/ui/`)).find(
        (c) => c.name === "mcpfleet_ui",
      );
      const res = await fetch(`${url}/ui/logout`, {
        method: "POST",
        headers: {
          cookie: `mcpfleet_ui=${cookie?.value ?? ""}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: "csrf=forged",
        redirect: "manual",
      });
      expect(res.status).toBe(403);
      // Still signed in.
      await page.goto(`${url}/ui/`);
      expect(await page.locator(".who").count()).toBe(1);
    },
    SLOW,
  );

  it(
    "signs out",
    async () => {
      await Promise.all([page.waitForURL(`${url}/ui/`), page.click("button >> text=Sign out")]);
      expect(await page.locator("h1").innerText()).toBe("Sign in");
      expect(
        (await browser.context.cookies(`${url}/ui/`)).some((c) => c.name === "mcpfleet_ui"),
      ).toBe(false);
    },
    SLOW,
  );

  it(
    "shows another person their entries and the operators' view their role opens",
    async () => {
      await signIn("sam");
      const shown = await names();
      expect(shown).toHaveLength(1);
      expect(shown[0]).toContain("io.example.sales/crm");
      await Promise.all([page.waitForURL(/operators/), page.click("nav >> text=Operators")]);
      expect(await page.locator("th", { hasText: "team" }).count()).toBe(1);
      expect(await axeViolations(page)).toEqual([]);
    },
    SLOW,
  );

  it(
    "raised no script error, and its pages asked nothing of another host",
    () => {
      const ours = (u: string): boolean => new URL(u).origin === url;
      expect(browser.errors.filter((e) => e.includes(url))).toEqual([]);
      expect(browser.subresources.filter((r) => r.from === url && !ours(r.url))).toEqual([]);
      // Navigations went to the registry and to the provider it sent the browser to.
      const fetched = new Set(browser.subresources.map((r) => r.url));
      const navigations = browser.requests.filter((u) => !fetched.has(u));
      expect(navigations.filter((u) => !ours(u) && !u.startsWith(idp.issuer))).toEqual([]);
    },
    SLOW,
  );
});
