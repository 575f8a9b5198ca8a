// The test git server in a process of its own, for tests that measure their own memory: the
// packs it relays then cost this process nothing. Prints `{"url":...,"root":...}` once listening
// and serves until killed.
import { startGitServer } from "./git-server.js";

const server = await startGitServer();
process.stdout.write(`${JSON.stringify({ url: server.url, root: server.root })}\n`);
process.on("SIGTERM", () => {
  void server.stop().then(() => process.exit(0));
});
