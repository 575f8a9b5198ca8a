// The peak memory a controller's fetch adds when the repository holds a 300 MB file outside the
// watched path, fetched over HTTPS from git http-backend: this process plus the git processes
// it starts, as a pod's memory limit counts them (the install bundle's limit is 1 GiB). The
// limit is 50 MB, about what a fetch of a small repository costs; fetching the pack in process
// cost 965 MB for 200 MB.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GitSource } from "../src/infra/git/source.js";
import { publishRepo, startGitServerProcess } from "../test/support/git-server.js";
import { makeRepoWithBigFile, measurePeak } from "../test/support/process-memory.js";
import { selfSignedCertificate } from "../test/support/tls.js";

const BIG_MB = 300;
const LIMIT_MB = 50;
const dir = mkdtempSync(join(tmpdir(), "mcpfleet-bench-fetch-https-"));

try {
  const work = join(dir, "work");
  const head = await makeRepoWithBigFile(
    work,
    { "fleet/a.yaml": "a: 1\n" },
    "assets/big.bin",
    BIG_MB * 1024 * 1024,
  );
  const tls = selfSignedCertificate(dir);
  const server = await startGitServerProcess({ tls });
  try {
    publishRepo(server, work, "big.git");
    const source = new GitSource({
      url: `${server.url}/big.git`,
      ref: { branch: "main" },
      path: "fleet",
      cacheDir: join(dir, "cache"),
      caFile: tls.cert,
      timeoutMs: 300_000,
    });
    const started = performance.now();
    const { result, peak } = await measurePeak(async () => source.checkout(await source.resolve()));
    const seconds = (performance.now() - started) / 1000;
    if (result.commit !== head || result.files.length !== 1) {
      throw new Error(`unexpected checkout: ${result.commit}, ${result.files.length} files`);
    }
    const mb = (n: number) => (n / (1024 * 1024)).toFixed(1);
    console.log(
      `bench: controller-fetch-https-large-blob ${peak.addedMb.toFixed(1)} MB ratio=${(peak.addedMb / LIMIT_MB).toFixed(2)} (peak memory a fetch over HTTPS of a repository with a ${BIG_MB} MB file outside the watched path adds, this process +${mb(peak.self - peak.baseline)} and git processes ${mb(peak.children)} MB / the ${LIMIT_MB} MB limit; ${seconds.toFixed(1)} s)`,
    );
  } finally {
    await server.stop();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
