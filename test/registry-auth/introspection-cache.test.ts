// An introspected token is trusted for a short while only: a revocation at the provider takes
// effect once the cache window has passed.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { pino } from "pino";
import { Authenticator, INTROSPECTION_CACHE_MS } from "../../src/registry/auth/authenticator.js";
import { DEFAULT_TUNING, TokenProvider } from "../../src/registry/auth/provider.js";

let active = true;
let asked = 0;
let server: http.Server;
let url: string;
let clock = Date.now();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      asked++;
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify(
          active
            ? { active: true, sub: "u", aud: "api", exp: Math.floor(clock / 1000) + 3600 }
            : { active: false },
        ),
      );
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/introspect`;
});

afterAll(() => {
  server.closeAllConnections();
  server.close();
});

it("asks the provider again after the cache window", async () => {
  const now = (): number => clock;
  const provider = new TokenProvider(
    {
      name: "p",
      issuerUrl: "https://issuer.test",
      audience: "api",
      introspectionUrl: url,
      allowPrivateIP: true,
    },
    DEFAULT_TUNING,
    now,
  );
  const auth = new Authenticator([provider], pino({ level: "silent" }), now);
  const raw = {
    rawHeaders: ["Authorization", "Bearer opaque-1"],
  } as unknown as http.IncomingMessage;
  expect((await auth.authenticate(raw)).subject).toBe("u");
  active = false;
  expect((await auth.authenticate(raw)).subject).toBe("u");
  expect(asked).toBe(1);
  clock += INTROSPECTION_CACHE_MS + 1;
  await expect(auth.authenticate(raw)).rejects.toMatchObject({ oauthError: "invalid_token" });
  expect(asked).toBe(2);
});
