// Fields of the reference operator's v1beta1 that came after the spec and that mcpfleet accepts
// on a VirtualMCPServer: each reaches the vmcp config, where vmcp reads it (runtime-load.test.ts
// passes the same fields through `vmcp validate`).
import { describe, expect, it } from "vitest";
import { synthesize } from "../../src/synth/render.js";
import { configOf, loadFixture } from "./vmcp-fixture.js";

const GROUP = `
apiVersion: toolhive.stacklok.dev/v1beta1
kind: MCPGroup
metadata: {name: tools, namespace: team}
spec: {}
---
apiVersion: toolhive.stacklok.dev/v1beta1
kind: MCPServer
metadata: {name: fetch, namespace: team}
spec:
  image: ghcr.io/example/fetch:1
  transport: streamable-http
  groupRef: {name: tools}
---
apiVersion: toolhive.stacklok.dev/v1beta1
kind: MCPExternalAuthConfig
metadata: {name: fetch-token, namespace: team}
spec:
  type: bearerToken
  bearerToken:
    tokenSecretRef: {name: fetch-token, key: token}
---
apiVersion: toolhive.stacklok.dev/v1beta1
kind: MCPOIDCConfig
metadata: {name: corp, namespace: team}
spec:
  type: inline
  inline:
    issuer: https://issuer.example.com
`;

const GATEWAY = `
---
apiVersion: toolhive.stacklok.dev/v1beta1
kind: VirtualMCPServer
metadata: {name: gateway, namespace: team}
spec:
  groupRef: {name: tools}
  incomingAuth:
    type: oidc
    oidcConfigRef: {name: corp, audience: gateway}
  outgoingAuth:
    source: inline
    backends:
      fetch:
        type: externalAuthConfigRef
        externalAuthConfigRef: {name: fetch-token}
  sessionStorage: {provider: redis, address: "redis:6379"}
  config:
    optimizer:
      embeddingProvider: openai
      embeddingService: https://gateway.example.com/v1
      embeddingModel: text-embedding-3-small
      embeddingHeaders: {X-Team: tools}
    rateLimiting:
      perUser: {maxTokens: 20, refillPeriod: 1m}
      tools:
        - name: fetch
          perUser: {maxTokens: 5, refillPeriod: 1m}
`;

describe("VirtualMCPServer fields later than the spec", () => {
  it("renders the optimizer's embedding provider, model and headers into config.yaml", async () => {
    const objects = synthesize(await loadFixture(GROUP + GATEWAY)).objects;
    const config = configOf(objects, "gateway-vmcp-config") as Record<string, unknown>;
    expect(config.optimizer).toMatchObject({
      embeddingProvider: "openai",
      embeddingService: "https://gateway.example.com/v1",
      embeddingModel: "text-embedding-3-small",
      embeddingHeaders: { "X-Team": "tools" },
    });
  });

  it("renders config.rateLimiting, per-user buckets included, periods as vmcp decodes them", async () => {
    const objects = synthesize(await loadFixture(GROUP + GATEWAY)).objects;
    const config = configOf(objects, "gateway-vmcp-config") as Record<string, unknown>;
    expect(config.rateLimiting).toEqual({
      perUser: { maxTokens: 20, refillPeriod: { duration: "1m" } },
      tools: [{ name: "fetch", perUser: { maxTokens: 5, refillPeriod: { duration: "1m" } } }],
    });
  });

  it("resolves a backend's auth written with the later type spelling externalAuthConfigRef", async () => {
    const objects = synthesize(await loadFixture(GROUP + GATEWAY)).objects;
    const config = configOf(objects, "gateway-vmcp-config") as {
      outgoingAuth?: { backends?: Record<string, { type: string }> };
    };
    expect(config.outgoingAuth?.backends?.fetch?.type).toBe("header_injection");
  });

  it("refuses per-user limits without OIDC clients and rate limits without Redis", async () => {
    const anonymous = GATEWAY.replace(
      /incomingAuth:\n {4}type: oidc\n {4}oidcConfigRef: \{name: corp, audience: gateway\}/,
      "incomingAuth:\n    type: anonymous",
    );
    await expect(loadFixture(GROUP + anonymous)).rejects.toThrow(/perUser requires incomingAuth/);
    const memory = GATEWAY.replace(
      '{provider: redis, address: "redis:6379"}',
      "{provider: memory}",
    );
    await expect(loadFixture(GROUP + memory)).rejects.toThrow(/requires sessionStorage/);
  });
});
