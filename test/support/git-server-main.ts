// The test git server in a process of its own, for tests that measure their own memory: the
// packs it relays then cost this process nothing. Prints `{"url":...,"root":...}` once listening
// and serves until killed. With two arguments, a key and a certificate file, it serves HTTPS.
import { startGitServer } from "./git-server.js";

const [key, cert] = process.argv.slice(2);
const server = await startGitServer(
  key !== undefined && cert !== undefined ? { tls: { key, cert } } : {},
);
process.stdout.write(`${JSON.stringify({ url: server.url, root: server.root })}\n`);
process.on("SIGTERM", () => {
  void server.stop().then(() => process.exit(0));
});
