import * as fs from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tls from "node:tls";
import { describe, expect, it } from "vitest";
import { trustBundle } from "../../src/infra/git/http.js";

// git's http.sslCAInfo replaces curl's trust store: --ca-file must add to it, not replace it.
describe("trustBundle", () => {
  const dir = fs.mkdtempSync(join(tmpdir(), "trust-bundle-"));
  const extra = "-----BEGIN CERTIFICATE-----\nTEST\n-----END CERTIFICATE-----\n";

  it("holds the system's authorities and the extra one, written once per content", () => {
    const file = trustBundle(extra, dir);
    const pem = fs.readFileSync(file, "utf8");
    expect(pem.endsWith(extra)).toBe(true);
    const system = ["/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/cert.pem"].find((f) =>
      fs.existsSync(f),
    );
    const firstPublic = (
      system !== undefined ? fs.readFileSync(system, "utf8") : tls.rootCertificates[0]!
    ).split("-----END CERTIFICATE-----")[0]!;
    expect(pem.startsWith(firstPublic)).toBe(true);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(trustBundle(extra, dir)).toBe(file);
    expect(trustBundle(extra.replace("TEST", "OTHER"), dir)).not.toBe(file);
  });

  it("is written again when its file was removed", () => {
    const file = trustBundle(extra, dir);
    fs.rmSync(file);
    expect(trustBundle(extra, dir)).toBe(file);
    expect(fs.readFileSync(file, "utf8").endsWith(extra)).toBe(true);
  });
});
