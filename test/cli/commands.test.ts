// The command line as a new user meets it: help, version, "did you mean", one usage-error form
// with exit code 2, failures as one line with exit code 1 and no stack trace.
import { createServer } from "node:net";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { examples, runCli } from "./helpers.js";

const work = mkdtempSync(join(tmpdir(), "mcpfleet-cli-"));
/** `registry serve` with the anonymous example configuration; tests add their flags. */
const SERVE_EXAMPLE = [
  "registry",
  "serve",
  "--config",
  join(examples, "registry", "config-anonymous.yaml"),
];

/** A kubeconfig whose server refuses connections (nothing listens on port 1 of loopback). */
function refusedKubeconfig(): string {
  const file = join(work, "refused.kubeconfig");
  writeFileSync(
    file,
    `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: not-a-token}
contexts:
- name: lab
  context: {cluster: c, user: u}
current-context: lab
`,
  );
  return file;
}

function oneLine(text: string): string {
  const lines = text.trim().split("\n");
  expect(lines, text).toHaveLength(1);
  return lines[0]!;
}

describe("help and version", () => {
  it("no arguments prints the overview, lists version and help, and exits 0", async () => {
    const r = await runCli([]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^ {2}version +/m);
    expect(r.stdout).toMatch(/^ {2}help +/m);
    expect((await runCli(["version"])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("help COMMAND prints that command's help", async () => {
    const r = await runCli(["help", "synth"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("Usage: mcpfleet synth");
    expect((await runCli(["help", "apply"])).stdout).toContain("--dry-run=none|client|server");
  });
});

describe("usage errors: one form, exit 2, a suggestion when close", () => {
  it("suggests the command meant", async () => {
    const r = await runCli(["vaildate"]);
    expect(r.status).toBe(2);
    expect(oneLine(r.stderr)).toBe(
      'mcpfleet: unknown command "vaildate" (did you mean "validate"?); see mcpfleet help',
    );
  });

  it("suggests the flag meant, and never leaks an error code", async () => {
    const r = await runCli(["synth", "--outptu-dir", "x"]);
    expect(r.status).toBe(2);
    expect(oneLine(r.stderr)).toBe(
      'mcpfleet: synth: unknown option --outptu-dir (did you mean "--output-dir"?); see mcpfleet help synth',
    );
    expect(r.stderr).not.toContain("ERR_");
  });

  it("a bad duration is a usage error in every command", async () => {
    const registry = await runCli([...SERVE_EXAMPLE, "--request-timeout", "5"]);
    const controller = await runCli(["controller", "--repo", "file:///x", "--interval", "5"]);
    for (const [name, r] of [
      ["registry", registry],
      ["controller", controller],
    ] as const) {
      expect(r.status).toBe(2);
      expect(oneLine(r.stderr)).toMatch(
        new RegExp(
          `^mcpfleet: ${name}: --\\S+: "5" is not a duration .*; see mcpfleet help ${name}$`,
        ),
      );
    }
  });
});

describe("failures: one line naming the thing, exit 1", () => {
  it("no kubeconfig", async () => {
    const r = await runCli(["apply", "-f", examples], {
      env: { KUBECONFIG: join(work, "missing.kubeconfig") },
    });
    expect(r.status).toBe(1);
    expect(oneLine(r.stderr)).toMatch(
      /cannot load the kubeconfig .*missing\.kubeconfig: no such file/,
    );
  });

  it("an unknown context is a usage error naming the contexts there are", async () => {
    const r = await runCli([
      "apply",
      examples,
      "--kubeconfig",
      refusedKubeconfig(),
      "--context",
      "lba",
    ]);
    expect(r.status).toBe(2);
    expect(oneLine(r.stderr)).toContain('has no context "lba" (contexts: lab)');
  });

  it("a refused connection fails within a few retries, shown with -v, a stack only with MCPFLEET_DEBUG", async () => {
    const kubeconfig = refusedKubeconfig();
    const r = await runCli(["apply", "-f", examples, "--kubeconfig", kubeconfig]);
    expect(r.status).toBe(1);
    expect(oneLine(r.stderr)).toBe(
      "mcpfleet: cannot reach the API server https://127.0.0.1:1 (context lab): it refused the connection; is the cluster running, and is --kubeconfig/--context the right one?",
    );
    const verbose = await runCli(["apply", "-f", examples, "--kubeconfig", kubeconfig, "-v"]);
    expect(verbose.status).toBe(1);
    expect(verbose.stderr).toMatch(
      /^retry: attempt 1 failed \(.*ECONNREFUSED.*\); trying again in \d+ ms$/m,
    );
    const debug = await runCli(["apply", "-f", examples, "--kubeconfig", kubeconfig], {
      env: { MCPFLEET_DEBUG: "1" },
    });
    expect(debug.stderr).toMatch(/^\s+at /m);
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });

  it("a port in use for registry serve", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const r = await runCli([...SERVE_EXAMPLE, "--port", String(port)]);
      expect(r.status).toBe(1);
      const last = r.stderr.trim().split("\n").at(-1);
      expect(last).toBe(
        `mcpfleet: 127.0.0.1:${port} is already in use by another process; stop it or choose another port (--port)`,
      );
      expect(r.stderr).not.toMatch(/^\s+at /m);
    } finally {
      taken.close();
    }
  });
});

describe("kubectl habits", () => {
  it("apply --dry-run=client renders and lists objects without contacting any server", async () => {
    const r = await runCli([
      "apply",
      "--dry-run=client",
      "-f",
      join(examples, "resources"),
      "--kubeconfig",
      refusedKubeconfig(),
      "-o",
      "json",
    ]);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { dryRun: string; objects: string[] };
    expect(out.dryRun).toBe("client");
    expect(out.objects).toContain("Deployment default/engineering-gateway");
    expect(r.stderr).toContain("the cluster was not contacted");
  });

  it("--dry-run takes none, client or server only", async () => {
    const r = await runCli(["apply", "--dry-run=maybe", examples]);
    expect(r.status).toBe(2);
    expect(oneLine(r.stderr)).toContain('--dry-run must be none, client or server, not "maybe"');
  });

  it("synth reads standard input when no path is given and it is not a terminal", async () => {
    const piped = await runCli(["synth", "-o", "yaml", "--no-install"], {
      cwd: work,
      input: `apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPGroup
metadata:
  name: piped
spec: {}
`,
    });
    expect(piped.status).toBe(0);
    expect(piped.stderr).toContain("written to standard output");
    const empty = await runCli(["synth", "-o", "yaml"], { cwd: work, input: "" });
    expect(empty.status).toBe(1);
    expect(empty.stderr).toContain("synth: no resources found in standard input");
  });
});

describe("registry serve --first-sync-deadline", () => {
  it("takes a duration and refuses anything else as a usage error", async () => {
    const r = await runCli([...SERVE_EXAMPLE, "--first-sync-deadline", "soon", "--check"]);
    expect(r.status).toBe(2);
    expect(oneLine(r.stderr)).toMatch(
      /^mcpfleet: registry: --first-sync-deadline: "soon" is not a duration/,
    );
    const ok = await runCli([...SERVE_EXAMPLE, "--first-sync-deadline", "30s", "--check"]);
    expect(ok.status, ok.stderr).toBe(0);
  });
});
