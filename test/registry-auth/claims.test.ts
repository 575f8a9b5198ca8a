import { describe, expect, it } from "vitest";
import type { Claims } from "../../src/registry/config/types.js";
import { containsClaims, matchesRule } from "../../src/registry/auth/claims.js";
import { resolveRoles, type AuthzSettings } from "../../src/registry/auth/roles.js";

describe("claim containment (the spec's table)", () => {
  const cases: [string, Claims | undefined, Record<string, unknown>, boolean][] = [
    ["one key; caller has the same key and more", { team: "a" }, { team: "a", org: "x" }, true],
    ["two keys; caller has only one of them", { team: "a", org: "x" }, { team: "a" }, false],
    ["no claims; any caller", undefined, { team: "a" }, true],
    ["empty claims; a caller with none", {}, {}, true],
    ["one key; caller has the same key, other value", { team: "a" }, { team: "b" }, false],
    ["one key; caller has no claims", { team: "a" }, {}, false],
    ["JWT array claim holds the value", { team: "a" }, { team: ["b", "a"] }, true],
    ["JWT array claim lacks the value", { team: "a" }, { team: ["b", "c"] }, false],
    ["resource array: caller holds every element", { g: ["a", "b"] }, { g: ["b", "a", "c"] }, true],
    ["resource array: caller holds one element", { g: ["a", "b"] }, { g: ["a"] }, false],
    ["resource array: caller string equals one element", { g: ["a", "b"] }, { g: "a" }, false],
    ["resource array of one: caller string", { g: ["a"] }, { g: "a" }, true],
    ["non-string caller value never matches", { n: "1" }, { n: 1 }, false],
    ["key inherited from the prototype does not count", { toString: "x" }, {}, false],
  ];
  for (const [name, resource, caller, want] of cases) {
    it(name, () => expect(containsClaims(caller, resource)).toBe(want));
  }
});

describe("role rule matching", () => {
  const cases: [string, Claims[] | undefined, Record<string, unknown>, boolean][] = [
    ["one map, one pair, matching", [{ role: "admin" }], { role: "admin" }, true],
    ["any map matches (OR)", [{ role: "admin" }, { team: "ops" }], { team: "ops" }, true],
    ["no map matches", [{ role: "admin" }, { team: "ops" }], { team: "dev" }, false],
    ["all pairs of a map (AND)", [{ role: "admin", org: "x" }], { role: "admin", org: "x" }, true],
    ["one pair of a map missing", [{ role: "admin", org: "x" }], { role: "admin" }, false],
    ["JWT array claim: any element equals", [{ groups: "ops" }], { groups: ["dev", "ops"] }, true],
    ["JWT array claim: no element equals", [{ groups: "ops" }], { groups: ["dev"] }, false],
    ["role not configured", undefined, { role: "admin" }, false],
    ["empty list", [], { role: "admin" }, false],
    ["an empty map matches no one", [{}], { role: "admin" }, false],
  ];
  for (const [name, rules, caller, want] of cases) {
    it(name, () => expect(matchesRule(caller, rules)).toBe(want));
  }
});

describe("role resolution", () => {
  it("without auth.authz every caller holds every role", () => {
    expect(resolveRoles({}, undefined)).toEqual([
      "superAdmin",
      "manageSources",
      "manageRegistries",
      "manageEntries",
    ]);
  });
  it("with auth.authz only the matching roles, in a fixed order", () => {
    const authz: AuthzSettings = {
      roles: {
        manageEntries: [{ groups: "publishers" }],
        manageSources: [{ groups: "ops" }, { sub: "alice" }],
        superAdmin: [{ groups: "root" }],
      },
    };
    expect(resolveRoles({ sub: "alice", groups: ["publishers"] }, authz)).toEqual([
      "manageSources",
      "manageEntries",
    ]);
    expect(resolveRoles({ sub: "bob" }, authz)).toEqual([]);
  });
});
