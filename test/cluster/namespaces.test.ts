// synth's files start with their Namespace: `kubectl apply --server-side -f` of a namespace's
// file works on a cluster where that namespace does not exist yet.
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { noCluster } from "../support/cluster/context.js";
import { examples, runCli } from "../cli/helpers.js";
import { client, kubectl, tmpDir } from "./helpers.js";

describe.skipIf(noCluster())("Namespaces in synth's output", () => {
  it("a namespace's file applies on a cluster without that namespace", async () => {
    const ns = `synth-ns-${randomBytes(3).toString("hex")}`;
    const out = join(tmpDir("namespaces"), "dist");
    const synth = await runCli([
      "synth",
      join(examples, "resources"),
      "-n",
      ns,
      "-d",
      out,
      "--no-install",
    ]);
    expect(synth.status, synth.stderr).toBe(0);
    const c = client();
    try {
      const applied = kubectl([
        "apply",
        "--server-side",
        "--field-manager=user",
        "-f",
        join(out, `${ns}.yaml`),
      ]);
      expect(applied.stderr).toBe("");
      expect(applied.status).toBe(0);
      expect(applied.stdout.split("\n")[0]).toBe(`namespace/${ns} serverside-applied`);
      const deployment = await c.get({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "engineering-gateway", namespace: ns },
      });
      expect(deployment?.metadata.namespace).toBe(ns);
    } finally {
      await c.delete({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    }
  });
});

describe("synth --no-namespaces", () => {
  it("leaves them out", async () => {
    const synthYaml = (...flags: string[]) =>
      runCli([
        "synth",
        join(examples, "resources"),
        "-n",
        "team",
        "-o",
        "yaml",
        "--no-install",
        ...flags,
      ]);
    const r = await synthYaml("--no-namespaces");
    expect(r.status).toBe(0);
    expect(r.stdout).not.toContain("kind: Namespace");
    const withNs = await synthYaml();
    expect(withNs.stdout.indexOf("kind: Namespace")).toBe(withNs.stdout.indexOf("kind: "));
  });
});
