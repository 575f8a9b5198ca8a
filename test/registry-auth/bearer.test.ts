// Reading the Authorization header: exactly one, of the form `Bearer <token>`.
import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { AuthFailure, bearerToken } from "../../src/registry/auth/authenticator.js";

const req = (...headers: string[]): IncomingMessage =>
  ({ rawHeaders: headers }) as unknown as IncomingMessage;

function outcome(r: IncomingMessage): string {
  try {
    return `token:${bearerToken(r)}`;
  } catch (err) {
    return err instanceof AuthFailure ? err.oauthError : "other";
  }
}

describe("bearer token extraction", () => {
  const cases: [string, IncomingMessage, string][] = [
    ["a Bearer token", req("Authorization", "Bearer abc.def.ghi"), "token:abc.def.ghi"],
    ["scheme case-insensitive", req("authorization", "bearer abc"), "token:abc"],
    ["no header", req("Host", "x"), "invalid_request"],
    ["Bearer alone", req("Authorization", "Bearer"), "invalid_request"],
    ["Bearer and a space", req("Authorization", "Bearer "), "invalid_request"],
    ["Basic", req("Authorization", "Basic YTpi"), "invalid_request"],
    ["two tokens in one header", req("Authorization", "Bearer a b"), "invalid_request"],
    [
      "two headers",
      req("Authorization", "Bearer a", "authorization", "Bearer a"),
      "invalid_request",
    ],
    ["characters outside the token alphabet", req("Authorization", "Bearer a,b"), "invalid_token"],
    ["a token over 8 KiB", req("Authorization", `Bearer ${"a".repeat(8193)}`), "invalid_token"],
    [
      "a token of 8 KiB",
      req("Authorization", `Bearer ${"a".repeat(8192)}`),
      `token:${"a".repeat(8192)}`,
    ],
  ];
  for (const [name, r, want] of cases) {
    it(name, () => expect(outcome(r)).toBe(want));
  }
});
