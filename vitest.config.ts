import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // No validate server left behind by the CLI runs of a test (test/validate/server.test.ts
    // turns it on for its own runs, in directories of their own).
    env: { MCPFLEET_VALIDATE_SERVER: "off" },
    // One throwaway Kubernetes control plane for the cluster tests of a run (test/cluster/).
    globalSetup: ["test/support/cluster/global-setup.ts"],
  },
});
