// Publish namespaces (auth.authz.publishNamespaces) in oauth mode against a real OpenID
// provider: a name is published only under a prefix granted to the caller, so nobody squats
// another's name, and a name another tenant published answers exactly as a name outside the
// caller's namespaces (no oracle for hidden names).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { untilReady } from "../registry/helpers.js";
import { AUDIENCE, startIssuer, type TestIssuer } from "../support/oidc.js";
import { call, startRegistry, type Started } from "./helpers.js";

const CLIENTS = {
  root: { groups: ["root"] },
  alice: { login: "alice", team: "a", groups: ["publishers"] },
  bob: { login: "bob", team: "b", groups: ["publishers"] },
  mallory: { login: "acme/x", team: "m", groups: ["publishers"] },
};

let issuer: TestIssuer;
let reg: Started;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  issuer = await startIssuer(CLIENTS);
  for (const c of Object.keys(CLIENTS)) tokens[c] = await issuer.token(c);
  reg = await startRegistry({
    sources: [{ name: "team", managed: {} }],
    registries: [{ name: "default", sources: ["team"] }],
    auth: {
      mode: "oauth",
      oauth: {
        resourceUrl: "https://registry.test",
        providers: [
          { name: "local", issuerUrl: issuer.issuer, audience: AUDIENCE, allowPrivateIP: true },
        ],
      },
      authz: {
        roles: { superAdmin: [{ groups: "root" }], manageEntries: [{ groups: "publishers" }] },
        publishNamespaces: [
          { prefix: "io.github.{login}/" },
          { prefix: "com.acme.", claims: { team: "a" } },
          { prefix: "org.shared/" },
        ],
      },
    },
  });
  await untilReady(reg.url);
});
afterAll(async () => {
  await reg?.server.close();
  await issuer?.close();
});

const publish = (who: keyof typeof CLIENTS, name: string, version: string, claims?: object) =>
  call(`${reg.url}/default/v0.1/publish`, {
    method: "POST",
    token: tokens[who] ?? "",
    body: {
      name,
      version,
      description: "d",
      url: "https://mcp.example.com/x",
      ...(claims !== undefined ? { claims } : {}),
    },
  });

/** The refusal with the name taken out: what must not differ between two refusals. */
const refusal = (r: { status: number; body: Record<string, unknown> }, name: string) => ({
  status: r.status,
  body: { ...r.body, detail: String(r.body.detail).replace(name, "<name>") },
});

describe("publish namespaces", () => {
  it("grants each caller the prefixes its claims fill or match", async () => {
    expect((await publish("alice", "io.github.alice/tool", "1.0.0", { team: "a" })).status).toBe(
      200,
    );
    expect((await publish("alice", "com.acme.tools/x", "1.0.0", { team: "a" })).status).toBe(200);
    expect((await publish("bob", "io.github.bob/tool", "1.0.0", { team: "b" })).status).toBe(200);
    expect((await publish("bob", "org.shared/b", "1.0.0", { team: "b" })).status).toBe(200);
  });

  it("refuses a name outside the caller's namespaces with 403, superAdmin excepted", async () => {
    for (const [who, name] of [
      ["bob", "io.github.alice/other"],
      ["bob", "com.acme.tools/y"],
      ["alice", "io.elsewhere/x"],
      // A claim value that would reach past its name segment grants nothing.
      ["mallory", "io.github.acme/x-tool"],
    ] as const) {
      const r = await publish(who, name, "1.0.0");
      expect(r.status, `${who} ${name}`).toBe(403);
      expect(r.body.code).toBe("ERR_FORBIDDEN");
      expect(r.body.detail).toBe(`you may not publish under the name ${name}`);
    }
    expect((await publish("root", "io.elsewhere/x", "1.0.0", { team: "z" })).status).toBe(200);
  });

  it("never lets another caller add a version to a name (no squatting)", async () => {
    const r = await publish("bob", "io.github.alice/tool", "9.0.0", { team: "b" });
    expect(r.status).toBe(403);
    expect((await publish("alice", "io.github.alice/tool", "1.1.0", { team: "a" })).status).toBe(
      200,
    );
  });

  it("answers a name another tenant published exactly as one the caller may not publish under", async () => {
    // org.shared/ is open to every publisher; bob holds org.shared/b (claims team b).
    const hidden = await publish("alice", "org.shared/b", "2.0.0", { team: "a" });
    const outside = await publish("alice", "io.elsewhere/y", "2.0.0", { team: "a" });
    expect(refusal(hidden, "org.shared/b")).toEqual(refusal(outside, "io.elsewhere/y"));
    expect(hidden.status).toBe(403);
    // The same version number too: no 409 telling that it exists.
    const same = await publish("alice", "org.shared/b", "1.0.0", { team: "a" });
    expect(refusal(same, "org.shared/b")).toEqual(refusal(outside, "io.elsewhere/y"));
    // A name published without claims belongs to nobody a publisher can see: nobody else adds
    // a version to it either.
    expect((await publish("bob", "org.shared/open", "1.0.0")).status).toBe(200);
    const unclaimed = await publish("alice", "org.shared/open", "2.0.0");
    expect(refusal(unclaimed, "org.shared/open")).toEqual(refusal(outside, "io.elsewhere/y"));
    // A name nobody published in an open namespace is the caller's to take.
    expect((await publish("alice", "org.shared/a", "1.0.0", { team: "a" })).status).toBe(200);
  });
});
