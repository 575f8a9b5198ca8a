import { describe, expect, it } from "vitest";
import { ClaimsPolicy } from "../../src/registry/auth/policy.js";
import type { Action, Principal } from "../../src/registry/http/auth.js";

const authz = {
  roles: {
    superAdmin: [{ groups: "root" }],
    manageSources: [{ groups: "ops" }],
    manageRegistries: [{ groups: "ops" }],
    manageEntries: [{ groups: "publishers" }],
  },
};
const on = new ClaimsPolicy(authz);
const off = new ClaimsPolicy(undefined);
const who = (claims: Record<string, unknown>): Principal => ({
  anonymous: false,
  subject: "s",
  claims,
});
const root = who({ groups: ["root"] });
const ops = who({ groups: ["ops"], team: "a" });
const pub = who({ groups: ["publishers"], team: "a", env: ["dev", "prod"] });
const reader = who({ team: "a" });
const anon: Principal = { anonymous: true, claims: {} };

function code(fn: () => void): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
}

describe("authorization decisions", () => {
  const cases: [string, ClaimsPolicy, Principal, Action, string | undefined][] = [
    [
      "registry without claims: open",
      on,
      reader,
      { kind: "readRegistry", registry: "r" },
      undefined,
    ],
    [
      "registry gate: claims contained",
      on,
      reader,
      { kind: "readRegistry", registry: "r", claims: { team: "a" } },
      undefined,
    ],
    [
      "registry gate: claims not contained (403)",
      on,
      reader,
      { kind: "readRegistry", registry: "r", claims: { team: "b" } },
      "ERR_FORBIDDEN",
    ],
    [
      "registry gate: superAdmin bypasses",
      on,
      root,
      { kind: "readRegistry", registry: "r", claims: { team: "b" } },
      undefined,
    ],
    [
      "registry gate: no authz section, nothing checked",
      off,
      reader,
      { kind: "readRegistry", registry: "r", claims: { team: "b" } },
      undefined,
    ],
    [
      "publish without the role (403)",
      on,
      reader,
      { kind: "manageEntries", registry: "r" },
      "ERR_FORBIDDEN",
    ],
    [
      "publish with the role, no claims",
      on,
      pub,
      { kind: "manageEntries", registry: "r" },
      undefined,
    ],
    [
      "publish claims a subset",
      on,
      pub,
      { kind: "manageEntries", registry: "r", entryClaims: { team: "a" } },
      undefined,
    ],
    [
      "publish claims not a subset (403)",
      on,
      pub,
      { kind: "manageEntries", registry: "r", entryClaims: { team: "b" } },
      "ERR_FORBIDDEN",
    ],
    [
      "publish array claim: caller holds every element",
      on,
      pub,
      { kind: "manageEntries", registry: "r", entryClaims: { env: ["dev", "prod"] } },
      undefined,
    ],
    [
      "publish array claim: caller lacks one element (403)",
      on,
      pub,
      { kind: "manageEntries", registry: "r", entryClaims: { env: ["dev", "qa"] } },
      "ERR_FORBIDDEN",
    ],
    [
      "superAdmin publishes any claims",
      on,
      root,
      { kind: "manageEntries", registry: "r", entryClaims: { team: "z" } },
      undefined,
    ],
    [
      "anonymous write (401)",
      on,
      anon,
      { kind: "manageEntries", registry: "r" },
      "ERR_UNAUTHORIZED",
    ],
    ["admin list without the role (403)", on, reader, { kind: "manageSources" }, "ERR_FORBIDDEN"],
    [
      "admin create with claims a subset",
      on,
      ops,
      { kind: "manageSources", claims: { team: "a" } },
      undefined,
    ],
    [
      "admin create with claims not a subset (403)",
      on,
      ops,
      { kind: "manageSources", claims: { team: "b" } },
      "ERR_FORBIDDEN",
    ],
    [
      "admin get of an invisible source (404)",
      on,
      ops,
      { kind: "manageSources", claims: { team: "b" }, hide: true, name: "s" },
      "ERR_SOURCE_NOT_FOUND",
    ],
    [
      "admin get of an invisible registry (404)",
      on,
      ops,
      { kind: "manageRegistries", claims: { team: "b" }, hide: true, name: "r" },
      "ERR_REGISTRY_NOT_FOUND",
    ],
    [
      "admin get of a claimless registry",
      on,
      ops,
      { kind: "manageRegistries", hide: true, name: "r" },
      undefined,
    ],
    [
      "superAdmin manages any source",
      on,
      root,
      { kind: "manageSources", claims: { team: "b" }, hide: true },
      undefined,
    ],
    [
      "no authz section: every caller manages",
      off,
      reader,
      { kind: "manageSources", claims: { team: "b" } },
      undefined,
    ],
  ];
  for (const [name, policy, p, action, want] of cases) {
    it(name, () => expect(code(() => policy.authorize(p, action))).toBe(want));
  }
});

describe("visibility", () => {
  it("entries without claims are invisible when authorization is on", () => {
    expect(on.entryVisible(reader, undefined)).toBe(false);
    expect(on.entryVisible(reader, {})).toBe(false);
    expect(on.entryVisible(reader, { team: "a" })).toBe(true);
    expect(on.entryVisible(reader, { team: "b" })).toBe(false);
    expect(on.entryVisible(root, undefined)).toBe(true);
    expect(off.entryVisible(reader, undefined)).toBe(true);
  });
  it("sources and registries without claims are listed for every caller", () => {
    expect(on.resourceVisible(ops, undefined)).toBe(true);
    expect(on.resourceVisible(ops, { team: "a" })).toBe(true);
    expect(on.resourceVisible(ops, { team: "b" })).toBe(false);
    expect(on.resourceVisible(root, { team: "b" })).toBe(true);
  });
  it("cache scopes: equal claims share one; any string claim, jti included, tells them apart", () => {
    // Numeric claims (exp, iat) match no resource claim: they do not split a caller's scope.
    const a1 = who({ team: "a", exp: 1, iat: 5 });
    const a2 = who({ team: "a", exp: 2, iat: 6 });
    expect(on.cacheScope(a1)).toBe(on.cacheScope(a2));
    expect(on.cacheScope(a1)).not.toBe(on.cacheScope(who({ team: "b" })));
    // An entry may carry a jti or nonce claim, so callers differing there see different entries.
    expect(on.cacheScope(who({ team: "a", jti: "x" }))).not.toBe(
      on.cacheScope(who({ team: "a", jti: "y" })),
    );
    expect(on.cacheScope(who({ team: "a", nonce: ["n1"] }))).not.toBe(on.cacheScope(a1));
    expect(on.cacheScope(root)).toBe("all");
    expect(off.cacheScope(reader)).toBe("all");
  });
  it("roles of /v1/me", () => {
    expect(on.roles(pub)).toEqual(["manageEntries"]);
    expect(on.roles(anon)).toEqual([]);
  });
});
