// A throwaway Kubernetes control plane, as envtest runs one: etcd on a random loopback port with a
// temporary data directory, kube-apiserver in front of it (TLS, client certificates, RBAC,
// service-account tokens) and kube-controller-manager for garbage collection, namespace deletion
// and Deployment rollouts. No kubelet and no scheduler: Pods are created and stay Pending.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { type ClusterBinaries } from "./binaries.js";
import { type ClientCertificate, type Pki, makePki } from "./pki.js";
import { freePort } from "../ports.js";
import { type Proc, logTail, startProcess, startWatchdog, stopProcess } from "./processes.js";

export interface ControlPlane {
  /** https://127.0.0.1:PORT */
  server: string;
  /** Admin kubeconfig (system:masters). */
  kubeconfig: string;
  dir: string;
  pki: Pki;
  /** Milliseconds from spawning etcd to a ready API server. */
  startMs: number;
  stop(): Promise<void>;
}

const b64 = (file: string): string => readFileSync(file).toString("base64");

/**
 * A kubeconfig for `server` with a client certificate or a bearer token; with no CA certificate
 * (a plain-HTTP stand-in server injecting faults), nothing is verified.
 */
export function kubeconfigYaml(
  server: string,
  caCert: string | undefined,
  user: ClientCertificate | { token: string },
  namespace = "default",
): string {
  const auth =
    "token" in user
      ? `    token: ${user.token}\n`
      : `    client-certificate-data: ${b64(user.cert)}\n    client-key-data: ${b64(user.key)}\n`;
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: test",
    "  cluster:",
    `    server: ${server}`,
    caCert !== undefined
      ? `    certificate-authority-data: ${b64(caCert)}`
      : "    insecure-skip-tls-verify: true",
    "users:",
    "- name: test",
    "  user:",
    auth.trimEnd(),
    "contexts:",
    "- name: test",
    "  context:",
    "    cluster: test",
    "    user: test",
    `    namespace: ${namespace}`,
    "current-context: test",
    "",
  ].join("\n");
}

/** GET `path` as the admin; resolves with the HTTP status (0 when nothing answered). */
function probe(server: string, pki: Pki, path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      `${server}${path}`,
      {
        ca: readFileSync(pki.caCert),
        cert: readFileSync(pki.admin.cert),
        key: readFileSync(pki.admin.key),
        timeout: 2_000,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(0));
    req.end();
  });
}

async function waitFor(what: string, procs: Proc[], ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (await ready()) return;
    const dead = procs.find((p) => p.child.exitCode !== null || p.child.signalCode !== null);
    if (dead !== undefined) {
      throw new Error(`${dead.name} exited while waiting for ${what}:\n${logTail(dead)}`);
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}:\n${procs.map((p) => logTail(p)).join("\n")}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface ControlPlaneOptions {
  /**
   * Also run kube-controller-manager (default true). Without it nothing collects garbage, deletes
   * namespaces or rolls Deployments out: what a benchmark of our own requests wants.
   */
  controllerManager?: boolean;
}

export async function startControlPlane(
  bins: ClusterBinaries,
  opts: ControlPlaneOptions = {},
): Promise<ControlPlane> {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), "mcpfleet-cluster-"));
  const pkiDir = join(dir, "pki");
  mkdirSync(pkiDir);
  const pki = makePki(pkiDir);
  const procs: Proc[] = [];
  const stopAll = async (): Promise<void> => {
    for (const p of [...procs].reverse()) await stopProcess(p);
  };
  try {
    const etcdPort = await freePort();
    const peerPort = await freePort();
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    // No fsync: the data is thrown away, and fsync dominates etcd's latency on shared disks.
    const etcd = startProcess(
      "etcd",
      bins.path("etcd"),
      [
        "--name=test",
        `--data-dir=${join(dir, "etcd")}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=test=${peerUrl}`,
        "--unsafe-no-fsync",
        "--log-level=warn",
      ],
      join(dir, "etcd.log"),
    );
    procs.push(etcd);

    const apiPort = await freePort();
    const server = `https://127.0.0.1:${apiPort}`;
    const apiserver = startProcess(
      "kube-apiserver",
      bins.path("kube-apiserver"),
      [
        `--etcd-servers=${etcdUrl}`,
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        // The `kubernetes` Service's endpoints would point at a loopback address, which the
        // endpoint reconciler refuses; nothing in the tests reaches the API through that Service.
        "--endpoint-reconciler-type=none",
        `--secure-port=${apiPort}`,
        `--cert-dir=${join(dir, "apiserver-certs")}`,
        `--tls-cert-file=${pki.servingCert}`,
        `--tls-private-key-file=${pki.servingKey}`,
        `--client-ca-file=${pki.caCert}`,
        "--authorization-mode=RBAC",
        `--service-account-key-file=${pki.serviceAccountPub}`,
        `--service-account-signing-key-file=${pki.serviceAccountKey}`,
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        // Room for the 600 Services of the controller benchmark.
        "--service-cluster-ip-range=10.0.0.0/16",
        "--allow-privileged=true",
        "--profiling=false",
      ],
      join(dir, "kube-apiserver.log"),
    );
    procs.push(apiserver);
    // Ready means every post-start hook ran, RBAC's bootstrap roles included.
    await waitFor(
      "kube-apiserver /readyz",
      procs,
      async () => (await probe(server, pki, "/readyz")) === 200,
    );
    const startMs = Date.now() - started;

    const kubeconfig = join(dir, "admin.kubeconfig");
    writeFileSync(kubeconfig, kubeconfigYaml(server, pki.caCert, pki.admin), { mode: 0o600 });
    const kcmConfig = join(dir, "controller-manager.kubeconfig");
    writeFileSync(kcmConfig, kubeconfigYaml(server, pki.caCert, pki.controllerManager), {
      mode: 0o600,
    });
    // Each controller acts as its own service account (system:controller:*), as in a kubeadm
    // cluster, so that the bootstrap RBAC policy is what authorizes it.
    if (opts.controllerManager !== false) {
      const kcm = startProcess(
        "kube-controller-manager",
        bins.path("kube-controller-manager"),
        [
          `--kubeconfig=${kcmConfig}`,
          `--authentication-kubeconfig=${kcmConfig}`,
          `--authorization-kubeconfig=${kcmConfig}`,
          "--controllers=garbage-collector-controller,namespace-controller,deployment-controller,replicaset-controller,serviceaccount-controller,serviceaccount-token-controller",
          "--use-service-account-credentials=true",
          `--service-account-private-key-file=${pki.serviceAccountKey}`,
          `--root-ca-file=${pki.caCert}`,
          "--leader-elect=false",
          "--bind-address=127.0.0.1",
          "--secure-port=0",
        ],
        join(dir, "kube-controller-manager.log"),
      );
      procs.push(kcm);
    }
    const watchdog = startWatchdog(
      process.pid,
      procs.map((p) => p.child.pid ?? 0).filter((pid) => pid > 0),
      dir,
    );
    return {
      server,
      kubeconfig,
      dir,
      pki,
      startMs,
      async stop() {
        await stopAll();
        watchdog.kill("SIGKILL");
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
