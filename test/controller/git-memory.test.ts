// A 300 MB file outside the watched path costs the controller no memory to fetch, over any
// transport: git's index-pack streams it to disk, and the object store never inflates it. The
// peak counts the git processes too, as a pod's memory limit does.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GitSource, type GitSourceOptions } from "../../src/infra/git/source.js";
import { publishRepo, startGitServerProcess, type GitServer } from "../support/git-server.js";
import { makeRepoWithBigFile, measurePeak } from "../support/process-memory.js";
import { SSHD_PATH, startSshd, type Sshd } from "../support/sshd.js";
import { tmp } from "./helpers.js";

const BIG_BYTES = 300 * 1024 * 1024;
const LIMIT_MB = 50;
const sshdRequired = process.env.REQUIRE_SSHD === "1";
if (SSHD_PATH === undefined) {
  const line = "git memory over SSH: no sshd (apt-get install openssh-server)";
  if (sshdRequired) throw new Error(`${line}, and REQUIRE_SSHD=1`);
  console.log(`SKIPPED ${line}`);
}

describe("fetching a repository with a 300 MB file outside the watched path", () => {
  let work: string;
  let head: string;
  let server: GitServer | undefined;
  let sshd: Sshd | undefined;
  const added: Record<string, number> = {};

  beforeAll(async () => {
    work = tmp("big-work");
    head = await makeRepoWithBigFile(
      work,
      { "fleet/a.yaml": "a: 1\n" },
      "assets/big.bin",
      BIG_BYTES,
    );
    server = await startGitServerProcess();
    publishRepo(server, work, "big.git");
    if (SSHD_PATH !== undefined) sshd = await startSshd(tmp("big-sshd"));
  }, 120_000);
  afterAll(async () => {
    sshd?.stop();
    await server?.stop();
    rmSync(work, { recursive: true, force: true });
    console.log(`git memory added (MB): ${JSON.stringify(added)}`);
  });

  async function fetchAndCheckOut(name: string, opts: Partial<GitSourceOptions> & { url: string }) {
    const cacheDir = tmp(`big-cache-${name}`);
    try {
      const source = new GitSource({
        ref: { branch: "main" },
        path: "fleet",
        cacheDir,
        timeoutMs: 120_000,
        ...opts,
      });
      const { result, peak } = await measurePeak(async () => {
        const rev = await source.resolve();
        return source.checkout(rev);
      });
      expect(result.commit).toBe(head);
      expect(result.files.map((f) => f.name)).toEqual(["fleet/a.yaml"]);
      added[name] = Math.round(peak.addedMb);
      return peak;
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  }

  it("over file://, read in place", async () => {
    const peak = await fetchAndCheckOut("file", { url: pathToFileURL(work).href });
    expect(peak.addedMb).toBeLessThan(LIMIT_MB);
  });

  it("over HTTP (git http-backend), git processes included", { timeout: 60_000 }, async () => {
    const peak = await fetchAndCheckOut("http", { url: `${server!.url}/big.git` });
    // The fetch ran in git processes, and they were measured.
    expect(peak.children).toBeGreaterThan(0);
    expect(peak.addedMb).toBeLessThan(LIMIT_MB);
  });

  it.runIf(SSHD_PATH !== undefined)(
    "over SSH (OpenSSH sshd), git and ssh processes included",
    { timeout: 60_000 },
    async () => {
      const ssh = sshd!;
      const peak = await fetchAndCheckOut("ssh", {
        url: ssh.urlOf(join(server!.root, "big.git")),
        sshKeyFile: ssh.deployKey,
        knownHostsFile: ssh.knownHosts,
      });
      expect(peak.children).toBeGreaterThan(0);
      expect(peak.addedMb).toBeLessThan(LIMIT_MB);
    },
  );
});
