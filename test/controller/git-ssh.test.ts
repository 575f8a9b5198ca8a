// Git over SSH against a real OpenSSH server (Debian's openssh-server) started here on a free
// loopback port, with a throwaway host key and a bare repository: deploy keys, strict host-key
// checking, errors that say what is wrong, and the deadline and cancellation of a fetch.
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitSourceOptions, GitSource } from "../../src/infra/git/source.js";
import { isSshUrl } from "../../src/infra/git/ssh.js";
import { isMcpfleetError } from "../../src/errors.js";
import { runCli } from "../cli/helpers.js";
import { commitFiles, gitCmd, makeRepo } from "../support/git-server.js";
import { tmp } from "./helpers.js";
import { SSHD_PATH, keygen, startSshd, type Sshd } from "../support/sshd.js";

const sshdRequired = process.env.REQUIRE_SSHD === "1";
if (SSHD_PATH === undefined) {
  const line = "git-ssh tests: no sshd (apt-get install openssh-server)";
  if (sshdRequired) throw new Error(`${line}, and REQUIRE_SSHD=1`);
  console.log(`SKIPPED ${line}`);
}

async function failure(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    if (isMcpfleetError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error("no error");
}

const SERVER = [
  "apiVersion: toolhive.stacklok.dev/v1alpha1",
  "kind: MCPServer",
  "metadata:",
  "  name: fetch",
  "  namespace: team-a",
  "spec:",
  "  image: ghcr.io/example/fetch:1.0.0",
  "  transport: streamable-http",
  "  proxyPort: 8080",
  "  mcpPort: 8081",
  "",
].join("\n");

describe.runIf(SSHD_PATH !== undefined)("GitSource over SSH (OpenSSH sshd)", () => {
  const dir = tmp("sshd");
  const otherKey = join(dir, "other");
  const wrongHosts = join(dir, "wrong_known_hosts");
  const bare = join(dir, "fleet.git");
  const work = join(dir, "work");
  let sshd: Sshd;
  let deployKey: string;
  let knownHosts: string;
  let url: string;
  let first: string;

  beforeAll(async () => {
    sshd = await startSshd(join(dir, "server"));
    ({ deployKey, knownHosts } = sshd);
    keygen(join(dir, "other-host"));
    keygen(otherKey);
    const otherHost = readFileSync(join(dir, "other-host.pub"), "utf8").split(" ");
    writeFileSync(wrongHosts, `[127.0.0.1]:${sshd.port} ${otherHost[0]} ${otherHost[1]}\n`);

    first = makeRepo(work, { "fleet/a.yaml": SERVER, "README.md": "fleet\n" });
    gitCmd(work, "tag", "-a", "v1", "-m", "release 1");
    execFileSync("git", ["clone", "-q", "--bare", work, bare]);
    url = sshd.urlOf(bare);
  });
  afterAll(() => {
    sshd?.stop();
  });

  const source = (extra: Partial<GitSourceOptions> = {}) =>
    new GitSource({
      url,
      ref: { branch: "main" },
      path: "fleet",
      cacheDir: tmp("ssh-cache"),
      sshKeyFile: deployKey,
      knownHostsFile: knownHosts,
      ...extra,
    });

  it("fetches with a deploy key, follows new commits, tags and pinned commits", async () => {
    const cacheDir = tmp("ssh-cache");
    const src = source({ cacheDir });
    const rev = await src.resolve();
    expect(rev.commit).toBe(first);
    expect((await src.checkout(rev)).files).toEqual([{ name: "fleet/a.yaml", text: SERVER }]);

    const second = commitFiles(work, { "fleet/b.yaml": SERVER.replace("fetch", "other") }, "add b");
    gitCmd(work, "push", "-q", bare, "main");
    const next = await src.resolve();
    expect(next.commit).toBe(second);
    const names = (await src.checkout(next)).files.map((f) => f.name);
    expect(names).toEqual(["fleet/a.yaml", "fleet/b.yaml"]);
    // Unchanged tip: one ls-remote, no fetch.
    const before = src.fetches;
    expect((await src.resolve()).commit).toBe(second);
    expect(src.fetches - before).toBe(1);

    // Each fetch is one pack (no loose objects), so the cache is bounded by its pack count.
    const [repo] = readdirSync(join(cacheDir, "repos"));
    const counts = gitCmd(join(cacheDir, "repos", repo!), "count-objects", "-v");
    expect(counts).toMatch(/^count: 0$/m);
    expect(counts).toMatch(/^packs: 2$/m);

    expect((await source({ ref: { tag: "v1" } }).resolve()).commit).toBe(first);
    expect((await source({ ref: { commit: first } }).resolve()).commit).toBe(first);
    expect((await source({ ref: {} }).resolve()).commit).toBe(second);
  });

  it("runs `mcpfleet controller --once` over SSH with a deploy key", async () => {
    const out = join(tmp("ssh-out"), "manifests");
    const r = await runCli([
      "controller",
      "--once",
      "--repo",
      url,
      "--branch",
      "main",
      "--path",
      "fleet",
      "--ssh-key-file",
      deployKey,
      "--known-hosts-file",
      knownHosts,
      "--cache-dir",
      tmp("ssh-cli-cache"),
      "--target",
      `dir:${out}`,
    ]);
    expect(r.stderr).not.toMatch(/error/);
    expect(r.status).toBe(0);
    expect(readFileSync(join(out, "team-a.yaml"), "utf8")).toMatch(/name: fetch/);
    const refused = await runCli([
      "controller",
      "--once",
      "--repo",
      url,
      "--token-file",
      deployKey,
    ]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/over SSH give --ssh-key-file/);
  });

  it("takes a key file others can read, as a mounted Secret often is", async () => {
    const loose = join(tmp("key"), "id");
    writeFileSync(loose, readFileSync(deployKey));
    chmodSync(loose, 0o644);
    expect((await source({ sshKeyFile: loose }).resolve()).commit).toMatch(/^[0-9a-f]{40}$/);
  });

  it("refuses a server whose host key is not the one in known_hosts", async () => {
    for (const file of [wrongHosts, join(tmp("empty"), "known_hosts")]) {
      if (!existsSync(file)) writeFileSync(file, "");
      const err = await failure(source({ knownHostsFile: file }).resolve());
      expect(err.code).toBe("ERR_GIT_AUTH");
      expect(err.message).toMatch(/host key is not in the known_hosts file/);
      expect(err.message).toContain(`127.0.0.1`);
    }
  });

  it("says ERR_GIT_AUTH for a key the server does not accept", async () => {
    const err = await failure(source({ sshKeyFile: otherKey }).resolve());
    expect(err.code).toBe("ERR_GIT_AUTH");
    expect(err.message).toMatch(/Permission denied.*--ssh-key-file/);
  });

  it("says ERR_GIT_REF_NOT_FOUND for a missing branch or repository", async () => {
    expect((await failure(source({ ref: { branch: "nope" } }).resolve())).code).toBe(
      "ERR_GIT_REF_NOT_FOUND",
    );
    const missing = await failure(source({ url: `${url}-missing` }).resolve());
    expect(missing.code).toBe("ERR_GIT_REF_NOT_FOUND");
    expect(missing.message).toMatch(/does not appear to be a git repository|No such file/);
  });
});

describe("git over SSH to a server that never answers", () => {
  let silent: Server;
  let port: number;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    silent = createServer((s) => sockets.push(s)); // accepts, says nothing
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    port = (silent.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
  });

  const hung = (extra: Partial<GitSourceOptions>) => {
    const known = join(tmp("hung"), "known_hosts");
    writeFileSync(known, "");
    return new GitSource({
      url: `ssh://git@127.0.0.1:${port}/fleet.git`,
      ref: { branch: "main" },
      cacheDir: tmp("hung-cache"),
      knownHostsFile: known,
      ...extra,
    });
  };

  it("gives up at the deadline with ERR_GIT_UNREACHABLE", async () => {
    const err = await failure(hung({ timeoutMs: 700 }).resolve());
    expect(err.code).toBe("ERR_GIT_UNREACHABLE");
    expect(err.message).toMatch(/not done within 1 s \(--git-timeout\)/);
  });

  it("stops at once when the controller stops (ERR_INTERRUPTED)", async () => {
    const stop = new AbortController();
    const pending = failure(hung({ timeoutMs: 60_000, signal: stop.signal }).resolve());
    setTimeout(() => stop.abort(), 300);
    const err = await pending;
    expect(err.code).toBe("ERR_INTERRUPTED");
    expect(err.message).toMatch(/shutting down/);
  });
});

describe("SSH repository URLs", () => {
  it("knows ssh:// and scp-like forms from local paths and other schemes", () => {
    for (const u of [
      "ssh://git@github.com/org/fleet.git",
      "git+ssh://git@example.com:2222/fleet.git",
      "git@github.com:org/fleet.git",
      "deploy@git.example.com:fleet",
    ]) {
      expect(isSshUrl(u), u).toBe(true);
    }
    for (const u of [
      "https://github.com/org/fleet.git",
      "file:///srv/fleet",
      "/srv/fleet",
      "./a:b",
      "C:\\fleet",
    ]) {
      expect(isSshUrl(u), u).toBe(false);
    }
  });
});
