// `mcpfleet synth` as a process: exit codes, output files, nothing written for invalid input.
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { main as synthMain } from "../../src/cli/synth.js";
import { main as validateMain } from "../../src/cli/validate.js";
import { isMcpfleetError } from "../../src/errors.js";
import { loadPaths } from "../../src/synth/load.js";
import { projectRoot } from "../../src/project.js";
import { FIXTURE } from "./vmcp-fixture.js";

const root = projectRoot();
const examples = join(root, "examples");

/** Runs a command in this process, as src/cli/main.ts would: usage errors exit 2. */
async function mcpfleet(
  ...args: string[]
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const [name, ...rest] = args;
  const out: string[] = [];
  const err: string[] = [];
  const capture =
    (sink: string[]) =>
    (chunk: unknown, ...more: unknown[]): boolean => {
      sink.push(String(chunk));
      const cb = more.find((m) => typeof m === "function") as (() => void) | undefined;
      cb?.();
      return true;
    };
  const o = vi.spyOn(process.stdout, "write").mockImplementation(capture(out));
  const e = vi.spyOn(process.stderr, "write").mockImplementation(capture(err));
  const log = vi
    .spyOn(console, "log")
    .mockImplementation((m: unknown) => void out.push(`${String(m)}\n`));
  let status: number;
  try {
    status = await (name === "validate" ? validateMain : synthMain)(rest);
  } catch (error) {
    if (!isMcpfleetError(error)) throw error;
    err.push(error.message);
    status = error.code === "ERR_USAGE" ? 2 : 1;
  } finally {
    o.mockRestore();
    e.mockRestore();
    log.mockRestore();
  }
  return { status, stdout: out.join(""), stderr: err.join("") };
}

/** The real command line, for exit codes set by src/cli/main.ts. */
function spawnMcpfleet(...args: string[]): {
  status: number | null;
  stdout: string;
  stderr: string;
} {
  const r = spawnSync(
    process.execPath,
    ["--import", "tsx", join(root, "src/cli/main.ts"), ...args],
    {
      cwd: root,
      encoding: "utf8",
    },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function listFiles(dir: string, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? listFiles(join(dir, e.name), `${prefix}${e.name}/`)
        : [`${prefix}${e.name}`],
    )
    .sort();
}

const INVALID = `apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPServer
metadata:
  name: broken
spec:
  transport: carrier-pigeon
`;

describe("mcpfleet synth", () => {
  const work = mkdtempSync(join(tmpdir(), "synth-cli-"));

  it("renders the examples into one file per namespace, plus the install bundle with --install, skipping registry configs", async () => {
    const out = join(work, "dist");
    const r = await mcpfleet("synth", examples, "-d", out, "--install");
    expect(r.stderr).toContain("file(s) written");
    expect(r.status).toBe(0);
    // examples/resources has no namespace (default); examples/gitops has one per directory,
    // examples/enforce-servers its own.
    expect(listFiles(out)).toEqual([
      ".mcpfleet-output.json",
      "default.yaml",
      "engineering.yaml",
      "install/00-crds.yaml",
      "install/01-controller.yaml",
      "mcp-approved.yaml",
      "platform.yaml",
    ]);
    const text = readFileSync(join(out, "default.yaml"), "utf8");
    expect(text).toContain("name: mcp-github-proxy");
    expect(text).not.toContain("kind: MCPServer\n");
    // Same input, same bytes.
    const out2 = join(work, "dist2");
    expect((await mcpfleet("synth", examples, "-d", out2, "--install")).status).toBe(0);
    for (const f of listFiles(out)) {
      expect(readFileSync(join(out2, f), "utf8"), f).toBe(readFileSync(join(out, f), "utf8"));
    }
  });

  it("prints validate's errors, exits 1 and leaves the output directory untouched when invalid", async () => {
    const input = join(work, "invalid");
    mkdirSync(input);
    writeFileSync(join(input, "broken.yaml"), INVALID);
    const out = join(work, "kept");
    mkdirSync(out);
    writeFileSync(join(out, "previous.yaml"), "previous\n");
    const r = await mcpfleet("synth", examples, input, "-d", out, "--force");
    expect(r.status).toBe(1);
    const v = await mcpfleet("validate", examples, input);
    expect(v.status).toBe(1);
    expect(r.stdout).toBe(v.stdout);
    expect(r.stdout).toContain("broken");
    expect(r.stderr).toContain("nothing written");
    expect(listFiles(out)).toEqual(["previous.yaml"]);
    const fresh = join(work, "never");
    expect((await mcpfleet("synth", input, "-d", fresh)).status).toBe(1);
    expect(existsSync(fresh)).toBe(false);
  });

  it("replaces its own previous output and keeps what it did not write", async () => {
    const out = join(work, "replaced");
    expect((await mcpfleet("synth", examples, "-d", out, "--install")).status).toBe(0);
    writeFileSync(join(out, "README.md"), "notes\n");
    // Without --install the bundle written before goes with the namespaces no longer rendered.
    const r = await mcpfleet("synth", join(examples, "resources"), "-d", out);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain("5 removed");
    expect(listFiles(out)).toEqual([".mcpfleet-output.json", "README.md", "default.yaml"]);
  });

  it("--status prints the computed status; --namespace and image flags apply", async () => {
    const out = join(work, "status");
    const r = await mcpfleet(
      "synth",
      join(examples, "resources", "mcpserver-sse.yaml"),
      "-d",
      out,
      "--status",
      "--namespace",
      "tools",
      "--runner-image",
      "registry.local/runner:1",
      "--no-install",
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(
      "url: http://mcp-yardstick-proxy.tools.svc.cluster.local:8080/sse#yardstick",
    );
    expect(r.stdout).toContain("phase: Pending");
    expect(listFiles(out)).toEqual([".mcpfleet-output.json", "tools.yaml"]);
    expect(readFileSync(join(out, "tools.yaml"), "utf8")).toContain(
      "image: registry.local/runner:1",
    );
  });

  it("warns, with validate, of the later fields it does not render and of an overridden embedding service", async () => {
    const input = join(work, "warned");
    mkdirSync(input);
    writeFileSync(
      join(input, "resources.yaml"),
      [
        "apiVersion: toolhive.stacklok.dev/v1beta1",
        "kind: MCPGroup",
        "metadata: {name: tools}",
        "spec: {}",
        "---",
        "apiVersion: toolhive.stacklok.dev/v1beta1",
        "kind: EmbeddingServer",
        "metadata: {name: tei}",
        "spec: {model: BAAI/bge-small-en-v1.5}",
        "---",
        "apiVersion: toolhive.stacklok.dev/v1beta1",
        "kind: VirtualMCPServer",
        "metadata: {name: gateway}",
        "spec:",
        "  groupRef: {name: tools}",
        "  incomingAuth: {type: anonymous}",
        "  embeddingServerRef: {name: tei}",
        "  config:",
        "    optimizer: {embeddingService: 'http://elsewhere:8080'}",
        "---",
        "apiVersion: toolhive.stacklok.dev/v1beta1",
        "kind: MCPExternalAuthConfig",
        "metadata: {name: entra}",
        "spec:",
        "  type: obo",
        "  obo: {tenantId: contoso.onmicrosoft.com, clientId: app, audience: 'api://backend'}",
        "",
      ].join("\n"),
    );
    const r = await mcpfleet("synth", input, "-d", join(work, "warned-out"), "--no-install");
    expect(r.status).toBe(0);
    const v = await mcpfleet("validate", input);
    expect(v.status).toBe(0);
    for (const out of [r.stdout + r.stderr, v.stdout + v.stderr]) {
      expect(out).toMatch(
        /\/spec\/config\/optimizer\/embeddingService: .*overridden by embeddingServerRef/,
      );
      expect(out).toMatch(/\/spec\/obo: obo is not rendered/);
    }
  });

  it("prints what rendering reports, one line per issue, as validate prints its findings", async () => {
    const input = join(work, "vmcp-warned.yaml");
    writeFileSync(input, FIXTURE);
    const r = await mcpfleet("synth", input, "-n", "team", "-d", join(work, "vmcp-warned-out"));
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(
      /^.*vmcp-warned\.yaml:\d+:1: VirtualMCPServer\/team\/gateway: -: MCPExternalAuthConfig aws: type awsSts cannot authenticate a virtual server's backend; requests to it are sent without credentials \(SYNTH_AUTH_NOT_APPLIED, warning\)$/m,
    );
    expect(existsSync(join(work, "vmcp-warned-out", "team.yaml"))).toBe(true);
  });

  it("fails, writing nothing, when a resource renders nothing, and says which and why", async () => {
    const input = join(work, "vmcp-unrendered.yaml");
    const text = FIXTURE.replace(
      "    authzConfig:\n      type: inline\n      inline:\n        policies: ['permit(principal, action, resource);']",
      "    authzConfig:\n      type: configMap\n      configMap: {name: policies}",
    );
    expect(text).not.toBe(FIXTURE);
    writeFileSync(input, text);
    const out = join(work, "vmcp-unrendered-out");
    const r = await mcpfleet("synth", input, "-n", "team", "-d", out);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /vmcp-unrendered\.yaml:\d+:1: VirtualMCPServer\/team\/gateway: \/spec\/incomingAuth: renders nothing: authzConfig type configMap .* \(SYNTH_NOT_RENDERED\)$/m,
    );
    expect(r.stderr).toContain("synth: 1 resource(s) render nothing; nothing written to");
    expect(existsSync(out)).toBe(false);
    const printed = await mcpfleet("synth", input, "-n", "team", "-o", "yaml");
    expect(printed.status).toBe(1);
    expect(printed.stdout).toBe("");
  });

  it("exits 2 for usage errors and unreadable paths", async () => {
    expect(spawnMcpfleet("synth", "--no-such-flag").status).toBe(2);
    expect((await mcpfleet("synth", "--runner-image", "", examples)).status).toBe(2);
    const missing = await mcpfleet("synth", join(work, "does-not-exist"), "-d", join(work, "x"));
    expect(missing.status).toBe(2);
    expect(existsSync(join(work, "x"))).toBe(false);
  });
});

describe("loadPaths", () => {
  it("reads standard input once and validates it with the rest", async () => {
    const stdin = `apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPServer
metadata:
  name: piped
spec:
  image: img:1
  groupRef: engineering
`;
    const loaded = await loadPaths(
      ["-", join(examples, "resources", "mcpgroup-engineering.yaml")],
      {
        stdin: () => Promise.resolve(Buffer.from(stdin)),
      },
    );
    expect(loaded.valid).toBe(true);
    expect(loaded.resources.map((r) => `${r.kind}/${r.metadata.name}`).sort()).toEqual([
      "MCPGroup/engineering",
      "MCPServer/piped",
    ]);
    const alone = await loadPaths(["-"], { stdin: () => Promise.resolve(Buffer.from(stdin)) });
    expect(alone.valid).toBe(false);
    expect(alone.resources).toEqual([]);
  });
});
