// An OpenSSH sshd on loopback for git-over-SSH tests: its own host key, one deploy key allowed,
// a known_hosts file naming the host key, no PAM and no passwords. Repositories are reached by
// their absolute path on this machine.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { userInfo } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports.js";

export const SSHD_PATH = ["/usr/sbin/sshd", "/usr/local/sbin/sshd"].find((p) => existsSync(p));

export interface Sshd {
  port: number;
  /** Private key the server accepts. */
  deployKey: string;
  /** known_hosts holding the server's host key. */
  knownHosts: string;
  /** The ssh:// URL of a repository at an absolute path on this machine. */
  urlOf(path: string): string;
  stop(): void;
}

export function keygen(file: string): void {
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", file]);
}

async function waitForPort(port: number, sshd: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (sshd.exitCode !== null) throw new Error(`sshd exited: ${log()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const c = connect(port, "127.0.0.1");
      c.once("connect", () => {
        c.destroy();
        resolve(true);
      });
      c.once("error", () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`sshd did not listen: ${log()}`);
}

/** Starts sshd with its keys and configuration in `dir`. */
export async function startSshd(dir: string): Promise<Sshd> {
  if (SSHD_PATH === undefined) throw new Error("no sshd (apt-get install openssh-server)");
  mkdirSync(dir, { recursive: true });
  const deployKey = join(dir, "deploy");
  const knownHosts = join(dir, "known_hosts");
  keygen(join(dir, "host"));
  keygen(deployKey);
  writeFileSync(join(dir, "authorized_keys"), readFileSync(`${deployKey}.pub`));
  const port = await freePort();
  writeFileSync(
    join(dir, "sshd_config"),
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${join(dir, "host")}`,
      `PidFile ${join(dir, "sshd.pid")}`,
      `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
      "StrictModes no",
      "UsePAM no",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "PubkeyAuthentication yes",
      "PermitRootLogin prohibit-password",
      "",
    ].join("\n"),
  );
  // sshd started as root wants its privilege-separation directory.
  if (process.getuid?.() === 0) mkdirSync("/run/sshd", { recursive: true });
  const log: string[] = [];
  const sshd = spawn(SSHD_PATH, ["-D", "-e", "-f", join(dir, "sshd_config")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  sshd.stderr?.on("data", (c: Buffer) => log.push(c.toString()));
  await waitForPort(port, sshd, () => log.join(""));
  const hostKey = readFileSync(join(dir, "host.pub"), "utf8").split(" ").slice(0, 2).join(" ");
  writeFileSync(knownHosts, `[127.0.0.1]:${port} ${hostKey}\n`);
  return {
    port,
    deployKey,
    knownHosts,
    urlOf: (path) => `ssh://${userInfo().username}@127.0.0.1:${port}${path}`,
    stop: () => {
      sshd.kill();
    },
  };
}
