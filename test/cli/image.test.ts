// The container image's runtime tree, built by the script the Dockerfile runs, used as the
// image's user would: uid 65532, a tree it cannot write (the read-only root file system), only
// the temporary directory writable. No Docker engine is needed: the tree is what the image holds.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { examples, root } from "./helpers.js";

const base = mkdtempSync(join(tmpdir(), "mcpfleet-image-"));
chmodSync(base, 0o755);
const tree = join(base, "opt-mcpfleet");
const tmp = join(base, "tmp");
mkdirSync(tmp, { mode: 0o1777 });
chmodSync(tmp, 0o1777);

const IMAGE_UID = 65532;
const asRoot = process.getuid?.() === 0;
// The image's environment: Node on PATH, production mode, nothing but /tmp writable, and no
// validate server (the Dockerfile's ENV).
const env = {
  PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
  NODE_ENV: "production",
  TMPDIR: tmp,
  HOME: "/nonexistent",
  MCPFLEET_VALIDATE_SERVER: "off",
};

/** argv as the image runs it: `node /opt/mcpfleet/bin/mcpfleet.js ARGS`, as uid 65532 when root. */
function imageArgv(args: string[]): [string, string[]] {
  const node = [process.execPath, join(tree, "bin", "mcpfleet.js"), ...args];
  if (!asRoot) return [node[0]!, node.slice(1)];
  return ["setpriv", [`--reuid=${IMAGE_UID}`, `--regid=${IMAGE_UID}`, "--clear-groups", ...node]];
}

function runImage(args: string[]) {
  const [cmd, argv] = imageArgv(args);
  const r = spawnSync(cmd, argv, { cwd: tree, env, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Every file of the tree with its size and modification time, to prove nothing was written. */
function fingerprint(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((f) => {
      const s = statSync(join(dir, f));
      return `${f} ${s.size} ${s.mtimeMs}`;
    })
    .sort();
}

let before: string[] = [];

beforeAll(() => {
  const built = spawnSync("bash", [join(root, "scripts", "image-tree.sh"), tree], {
    cwd: root,
    env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}` },
    encoding: "utf8",
  });
  expect(built.status, built.stderr).toBe(0);
  before = fingerprint(tree);
}, 300_000);

describe("the container image", () => {
  it("is built by the same script the Dockerfile runs, as a non-root user", () => {
    const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
    expect(dockerfile).toMatch(/^RUN scripts\/image-tree\.sh \/out$/m);
    expect(dockerfile).toMatch(/^COPY --from=build \/out \/opt\/mcpfleet$/m);
    expect(dockerfile).toMatch(new RegExp(`^USER ${IMAGE_UID}:${IMAGE_UID}$`, "m"));
    expect(dockerfile).toMatch(/^FROM node:24-/m);
    expect(existsIn(tree, "node_modules/vitest")).toBe(false);
    expect(existsIn(tree, "node_modules/@kubernetes/client-node")).toBe(true);
  });

  it("runs --version, validate and synth as the image's user without writing to its tree", () => {
    const version = runImage(["--version"]);
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const validate = runImage(["validate", examples, "--summary"]);
    expect(validate.status, validate.stderr).toBe(0);
    expect(readFileSync(join(root, "Dockerfile"), "utf8")).toMatch(
      /^ENV MCPFLEET_VALIDATE_SERVER=off$/m,
    );
    expect(readdirSync(tmp).filter((f) => f.startsWith("mcpfleet-"))).toEqual([]);
    const synth = runImage(["synth", join(examples, "resources"), "-o", "yaml"]);
    expect(synth.status, synth.stderr).toBe(0);
    expect(synth.stdout).toContain("kind: Deployment");
    expect(fingerprint(tree)).toEqual(before);
  });

  it("serves the registry and stops cleanly on SIGTERM", async () => {
    const [cmd, argv] = imageArgv([
      "registry",
      "serve",
      "--config",
      join(examples, "registry", "config-anonymous.yaml"),
      "--port",
      "0",
    ]);
    const child = spawn(cmd, argv, { cwd: tree, env, stdio: ["ignore", "pipe", "pipe"] });
    const url = await listeningUrl(child);
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(fingerprint(tree)).toEqual(before);
  });
});

function existsIn(dir: string, path: string): boolean {
  try {
    statSync(join(dir, path));
    return true;
  } catch {
    return false;
  }
}

/** The URL the registry server logs once it listens (pino JSON lines on standard output). */
function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const onData = (chunk: Buffer) => {
      seen += chunk.toString("utf8");
      const match = /"url":"(http:\/\/[^"]+)"[^\n]*registry server listening/.exec(seen);
      if (match !== null) resolve(match[1]!);
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.on("exit", (code) => reject(new Error(`registry exited ${code}: ${seen}`)));
  });
}
