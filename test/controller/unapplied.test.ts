// Documents the controller does not apply (core kinds, cluster-wide RBAC, other projects' kinds)
// are named once each, in the log and in the revision's outcome, and nothing is made of them.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { GitSource } from "../../src/infra/git/source.js";
import { pino } from "pino";
import { Reconciler } from "../../src/controller/reconciler.js";
import { DirTarget } from "../../src/controller/render-target.js";
import { ControllerStatus } from "../../src/controller/status.js";
import { makeRepo } from "../support/git-server.js";
import { runCli } from "../cli/helpers.js";
import { tmp } from "./helpers.js";

const SERVER = `apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPServer
metadata:
  name: fetch
  namespace: team-a
spec:
  image: ghcr.io/example/fetch:1.0.0
  transport: streamable-http
  proxyPort: 8080
  mcpPort: 8081
`;
const SECRET = `apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: team-a
stringData:
  password: hunter2
`;
const BINDING = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: everyone-admin
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
  - kind: Group
    apiGroup: rbac.authorization.k8s.io
    name: system:authenticated
`;
const WIDGET = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  namespace: team-a
spec: {}
`;
const EXPECTED = [
  "fleet/extra.yaml:1: Secret db is not applied: the controller applies only toolhive.stacklok.dev resources",
  "fleet/extra.yaml:9: ClusterRoleBinding everyone-admin is not applied: the controller applies only toolhive.stacklok.dev resources",
  "fleet/widget.yaml:1: Widget w is not applied: the controller applies only toolhive.stacklok.dev resources",
];

function repo(): string {
  const dir = tmp("unapplied");
  makeRepo(dir, {
    "fleet/server.yaml": SERVER,
    "fleet/extra.yaml": `${SECRET}---\n${BINDING}`,
    "fleet/widget.yaml": WIDGET,
  });
  return dir;
}

describe("documents the controller does not apply", () => {
  it("warns once for each, in the log and the outcome, and applies only our resources", async () => {
    const dir = repo();
    const source = new GitSource({
      url: pathToFileURL(dir).href,
      ref: { branch: "main" },
      path: "fleet",
      cacheDir: tmp("cache"),
    });
    const out = join(tmp("out"), "rendered");
    const target = new DirTarget(out);
    const warned: string[] = [];
    // Warnings only, as they are logged.
    const log = pino(
      { level: "warn" },
      {
        write: (line: string) => {
          const record = JSON.parse(line) as { level: number; msg: string };
          if (record.level === pino.levels.values.warn) warned.push(record.msg);
        },
      },
    );
    const status = new ControllerStatus(source.refName, target.target);
    const outcome = await new Reconciler({ source, applier: target, status, log }).sync();
    expect(outcome.kind).toBe("applied");
    if (outcome.kind !== "applied") return;
    expect(outcome.warnings).toEqual(EXPECTED);
    expect(warned).toEqual(EXPECTED);
    expect(outcome.result.changes.map((c) => c.object).join(" ")).not.toMatch(
      /Secret|ClusterRoleBinding|Widget/,
    );
  });

  it("names them in the summary of `mcpfleet controller --once`", async () => {
    const dir = repo();
    const r = await runCli([
      "controller",
      "--once",
      "--repo",
      pathToFileURL(dir).href,
      "--path",
      "fleet",
      "--cache-dir",
      tmp("cli-cache"),
      "--target",
      `dir:${join(tmp("cli-out"), "rendered")}`,
    ]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`; 3 warning(s): ${EXPECTED.join("; ")}`);
    for (const line of EXPECTED) expect(r.stderr).toContain(`warn ${line}`);
  });
});
