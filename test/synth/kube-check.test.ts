// The Kubernetes checks every rendered object goes through must catch what the API server refuses.
import { describe, expect, it } from "vitest";
import {
  checkObject,
  checkObjects,
  isDnsLabel,
  isDnsSubdomain,
  isLabelValue,
  isPortName,
  isQualifiedKey,
} from "../../src/synth/kube-check.js";
import type { KubeObject } from "../../src/synth/model.js";

const deployment = (patch: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "d", namespace: "ns", labels: { app: "d" } },
  spec: {
    selector: { matchLabels: { app: "d" } },
    template: {
      metadata: { labels: { app: "d" } },
      spec: {
        containers: [{ name: "c", image: "i", ports: [{ name: "http", containerPort: 80 }] }],
      },
    },
    ...patch,
  },
});

describe("kube-check", () => {
  it("accepts a valid object", () => {
    expect(checkObject(deployment())).toEqual([]);
  });

  it("reports OpenAPI schema violations", () => {
    const issues = checkObject(deployment({ replicas: "three" }));
    expect(issues.some((i) => i.path === "/spec/replicas")).toBe(true);
  });

  it("reports kinds it has no schema for", () => {
    const issues = checkObject({
      apiVersion: "example.com/v1",
      kind: "Thing",
      metadata: { name: "t" },
    });
    expect(issues.map((i) => i.message)).toEqual(["no Kubernetes schema for example.com/v1/Thing"]);
  });

  it("reports bad names, labels, port names, selectors and duplicates", () => {
    const bad = deployment({ selector: { matchLabels: { app: "other" } } });
    bad.metadata.name = "Bad_Name";
    bad.metadata.labels = { "bad key!": "-v" };
    const messages = checkObject(bad).map((i) => i.message);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringContaining("not a valid DNS subdomain"),
        expect.stringContaining("invalid label key"),
        expect.stringContaining("invalid value of label"),
        expect.stringContaining("does not match the pod template"),
      ]),
    );
    const svc: KubeObject = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "a.b" },
      spec: { ports: [{ name: "much-too-long-port-name", port: 80 }] },
    };
    expect(checkObject(svc).map((i) => i.message)).toEqual(
      expect.arrayContaining([
        expect.stringContaining("not a valid DNS label"),
        expect.stringContaining("invalid port name"),
      ]),
    );
    expect(checkObjects([deployment(), deployment()]).map((i) => i.message)).toContain("duplicate");
  });

  it("name and label predicates", () => {
    expect(isDnsLabel("a".repeat(63))).toBe(true);
    expect(isDnsLabel("a".repeat(64))).toBe(false);
    expect(isDnsSubdomain("a.b-c")).toBe(true);
    expect(isDnsSubdomain("A")).toBe(false);
    expect(isLabelValue("")).toBe(true);
    expect(isLabelValue("a_b.c")).toBe(true);
    expect(isLabelValue("-a")).toBe(false);
    expect(isQualifiedKey("app.kubernetes.io/name")).toBe(true);
    expect(isQualifiedKey("Bad_/x")).toBe(false);
    expect(isPortName("http")).toBe(true);
    expect(isPortName("8080")).toBe(false);
    expect(isPortName("a--b")).toBe(false);
  });
});
