// Where the control plane's programs are: the directory `make cluster-tools` built
// (.tools/cluster/current/bin, see tools/cluster/build.sh), or MCPFLEET_CLUSTER_BIN.
import { existsSync, realpathSync } from "node:fs";
import { join } from "node:path";

export const REPO_ROOT = join(import.meta.dirname, "..", "..", "..");

export const PROGRAMS = ["etcd", "kube-apiserver", "kube-controller-manager", "kubectl"] as const;
export type Program = (typeof PROGRAMS)[number];

export interface ClusterBinaries {
  dir: string;
  path(program: Program): string;
}

/** The binaries' directory, or the reason there is none. */
export function findClusterBinaries(): ClusterBinaries | { missing: string } {
  const fromEnv = process.env.MCPFLEET_CLUSTER_BIN;
  const dir =
    fromEnv !== undefined && fromEnv !== ""
      ? fromEnv
      : join(REPO_ROOT, ".tools", "cluster", "current", "bin");
  const absent = PROGRAMS.filter((p) => !existsSync(join(dir, p)));
  if (absent.length > 0) {
    return { missing: `${absent.join(", ")} not found in ${dir} (run \`make cluster-tools\`)` };
  }
  const real = realpathSync(dir);
  return { dir: real, path: (program) => join(real, program) };
}
