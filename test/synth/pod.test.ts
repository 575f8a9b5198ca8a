// The podTemplateSpec merge and resourceOverrides rules documented in docs/synth.md.
import { describe, expect, it } from "vitest";
import {
  type PodTemplate,
  applyResourceOverrides,
  httpProbe,
  mergeEnv,
  mergePodTemplate,
  secretEnv,
  secretRefsEnv,
} from "../../src/synth/pod.js";

const base: PodTemplate = {
  metadata: { labels: { app: "x" }, annotations: { checksum: "abc" } },
  spec: {
    serviceAccountName: "sa",
    imagePullSecrets: [{ name: "one" }],
    tolerations: [{ key: "a", operator: "Exists" }],
    nodeSelector: { zone: "a", disk: "ssd" },
    volumes: [{ name: "cfg", configMap: { name: "cfg" } }],
    containers: [
      {
        name: "mcp",
        image: "img:1",
        args: ["--a"],
        env: [
          { name: "A", value: "1" },
          { name: "B", value: "2" },
        ],
        ports: [{ name: "http", containerPort: 8080 }],
        volumeMounts: [{ name: "cfg", mountPath: "/cfg" }],
        resources: { limits: { cpu: "1", memory: "1Gi" }, requests: { cpu: "100m" } },
        securityContext: { runAsNonRoot: true },
      },
    ],
  },
};

describe("mergePodTemplate", () => {
  it("returns a copy when there is nothing to merge, and never modifies its inputs", () => {
    const snapshot = structuredClone(base);
    const out = mergePodTemplate(base, undefined, "mcp");
    expect(out).toEqual(base);
    expect(out).not.toBe(base);
    const user = { spec: { containers: [{ name: "mcp", env: [{ name: "A", value: "x" }] }] } };
    const userSnapshot = structuredClone(user);
    mergePodTemplate(base, user, "mcp");
    expect(base).toEqual(snapshot);
    expect(user).toEqual(userSnapshot);
  });

  it("merges the named container: user scalars win, env by name, resources and securityContext by key", () => {
    const out = mergePodTemplate(
      base,
      {
        spec: {
          containers: [
            {
              name: "mcp",
              image: "img:2",
              env: [
                { name: "B", value: "user" },
                { name: "C", value: "3" },
              ],
              resources: { limits: { memory: "2Gi" } },
              securityContext: { readOnlyRootFilesystem: true },
              volumeMounts: [
                { name: "cfg", mountPath: "/cfg", readOnly: true },
                { name: "tmp", mountPath: "/tmp" },
              ],
              ports: [{ name: "metrics", containerPort: 9090 }],
            },
          ],
        },
      },
      "mcp",
    );
    const c = out.spec?.containers[0];
    expect(c).toEqual({
      name: "mcp",
      image: "img:2",
      args: ["--a"],
      env: [
        { name: "A", value: "1" },
        { name: "B", value: "user" },
        { name: "C", value: "3" },
      ],
      ports: [
        { name: "http", containerPort: 8080 },
        { name: "metrics", containerPort: 9090 },
      ],
      volumeMounts: [
        { name: "cfg", mountPath: "/cfg", readOnly: true },
        { name: "tmp", mountPath: "/tmp" },
      ],
      resources: { limits: { cpu: "1", memory: "2Gi" }, requests: { cpu: "100m" } },
      securityContext: { runAsNonRoot: true, readOnlyRootFilesystem: true },
    });
  });

  it("adds other user containers as sidecars and creates the named container if missing", () => {
    const out = mergePodTemplate(
      { spec: { containers: [] } },
      {
        spec: {
          containers: [
            { name: "side", image: "busybox" },
            { name: "mcp", args: ["x"] },
          ],
        },
      },
      "mcp",
    );
    expect(out.spec?.containers).toEqual([
      { name: "mcp", args: ["x"] },
      { name: "side", image: "busybox" },
    ]);
  });

  it("merges pod-level fields: lists appended, maps merged, objects merged, scalars replaced", () => {
    const out = mergePodTemplate(
      base,
      {
        metadata: {
          labels: { app: "user", team: "a" },
          annotations: { checksum: "no", note: "n" },
        },
        spec: {
          serviceAccountName: "user-sa",
          imagePullSecrets: [{ name: "one" }, { name: "two" }],
          tolerations: [
            { key: "a", operator: "Exists" },
            { key: "b", operator: "Exists" },
          ],
          nodeSelector: { disk: "hdd" },
          securityContext: { fsGroup: 1000 },
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] },
            },
          },
          volumes: [
            { name: "cfg", secret: { secretName: "s" } },
            { name: "tmp", emptyDir: {} },
          ],
          priorityClassName: "high",
        },
      },
      "mcp",
    );
    expect(out.metadata).toEqual({
      labels: { app: "x", team: "a" },
      annotations: { checksum: "abc", note: "n" },
    });
    expect(out.spec).toMatchObject({
      serviceAccountName: "user-sa",
      imagePullSecrets: [{ name: "one" }, { name: "two" }],
      tolerations: [
        { key: "a", operator: "Exists" },
        { key: "b", operator: "Exists" },
      ],
      nodeSelector: { zone: "a", disk: "hdd" },
      securityContext: { fsGroup: 1000 },
      volumes: [
        { name: "cfg", secret: { secretName: "s" } },
        { name: "tmp", emptyDir: {} },
      ],
      priorityClassName: "high",
    });
    expect(out.spec?.affinity).toBeDefined();
  });
});

describe("resourceOverrides", () => {
  it("keeps rendered labels, adds the rest, and lets override annotations win", () => {
    const targets = {
      deployment: { labels: { app: "x" }, annotations: { a: "rendered" } },
      podTemplate: structuredClone(base),
      service: { labels: { app: "x" } },
      proxyContainer: "mcp",
    };
    applyResourceOverrides(targets, {
      proxyDeployment: {
        labels: { app: "override", team: "t" },
        annotations: { a: "override" },
        podTemplateMetadataOverrides: { labels: { app: "o", pod: "p" }, annotations: { x: "y" } },
        env: [
          { name: "A", value: "override" },
          { name: "Z", value: "z" },
        ],
        imagePullSecrets: [{ name: "one" }, { name: "three" }],
      },
      proxyService: { labels: { svc: "s" }, annotations: { dns: "d" } },
    });
    expect(targets.deployment).toEqual({
      labels: { app: "x", team: "t" },
      annotations: { a: "override" },
    });
    expect(targets.podTemplate.metadata).toEqual({
      labels: { app: "x", pod: "p" },
      annotations: { checksum: "abc", x: "y" },
    });
    expect(targets.podTemplate.spec?.containers[0]?.env).toEqual([
      { name: "A", value: "override" },
      { name: "B", value: "2" },
      { name: "Z", value: "z" },
    ]);
    expect(targets.podTemplate.spec?.imagePullSecrets).toEqual([
      { name: "one" },
      { name: "three" },
    ]);
    expect(targets.service).toEqual({ labels: { app: "x", svc: "s" }, annotations: { dns: "d" } });
  });
});

describe("env and probe helpers", () => {
  it("secretEnv, secretRefsEnv and mergeEnv", () => {
    expect(secretEnv("T", { name: "s", key: "k" })).toEqual({
      name: "T",
      valueFrom: { secretKeyRef: { name: "s", key: "k" } },
    });
    expect(secretRefsEnv([{ name: "s", key: "KEY" }])).toEqual([
      { name: "KEY", valueFrom: { secretKeyRef: { name: "s", key: "KEY" } } },
    ]);
    expect(mergeEnv([{ name: "A", value: "1" }], [{ name: "A", value: "2" }])).toEqual([
      { name: "A", value: "2" },
    ]);
  });

  it("httpProbe", () => {
    expect(httpProbe("/health", "http", { periodSeconds: 7 })).toEqual({
      httpGet: { path: "/health", port: "http" },
      initialDelaySeconds: 5,
      periodSeconds: 7,
      timeoutSeconds: 3,
      failureThreshold: 3,
    });
  });
});
