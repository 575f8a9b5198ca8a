// Provider connections: which addresses are private, and the guard applied to DNS answers as
// well as to IP literals.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPrivateAddress } from "../../src/infra/private-address.js";
import { providerRequest } from "../../src/registry/auth/fetch.js";

describe("private addresses", () => {
  const cases: [string, boolean][] = [
    ["127.0.0.1", true],
    ["127.8.9.10", true],
    ["10.1.2.3", true],
    ["172.16.0.1", true],
    ["172.31.255.255", true],
    ["172.32.0.1", false],
    ["192.168.1.1", true],
    ["169.254.169.254", true],
    ["100.64.0.1", true],
    ["0.0.0.0", true],
    ["8.8.8.8", false],
    ["::1", true],
    ["::", true],
    ["fd00::1", true],
    ["fe80::1", true],
    ["::ffff:127.0.0.1", true],
    ["::ffff:8.8.8.8", false],
    ["2001:4860:4860::8888", false],
    ["not-an-ip", true],
  ];
  for (const [addr, want] of cases) {
    it(`${addr} ${want ? "is" : "is not"} private`, () =>
      expect(isPrivateAddress(addr)).toBe(want));
  }
});

describe("provider requests", () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end('{"ok":true}');
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });
  const opts = (allowPrivateIP: boolean) => ({ allowPrivateIP, timeoutMs: 1000, maxBytes: 1000 });

  it("refuses a host name that resolves to loopback (checked after DNS)", async () => {
    await expect(providerRequest(`http://localhost:${port}/x`, opts(false))).rejects.toThrow(
      /resolves to a private address/,
    );
  });
  it("refuses a loopback IP literal", async () => {
    await expect(providerRequest(`http://127.0.0.1:${port}/x`, opts(false))).rejects.toThrow(
      /private address/,
    );
  });
  it("connects when allowPrivateIP is set", async () => {
    const r = await providerRequest(`http://localhost:${port}/x`, opts(true));
    expect(r).toEqual({ status: 200, body: { ok: true } });
  });
  it("refuses other schemes and oversized answers", async () => {
    await expect(providerRequest("file:///etc/passwd", opts(true))).rejects.toThrow(/only http/);
    await expect(
      providerRequest(`http://127.0.0.1:${port}/x`, { ...opts(true), maxBytes: 4 }),
    ).rejects.toThrow(/larger than 4 bytes/);
  });
});
