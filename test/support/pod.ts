// Runs a rendered Deployment's pod as a kubelet would, without a container engine: each
// container in a mount namespace of its own whose root is an empty, read-only file system
// holding only the image's tree, the host's /usr (shared libraries and a shell, which the images
// also have), and the pod's volumes at their rendered mount paths with the rendered ConfigMap
// and Secret keys as files. The pod gets a network namespace of its own (only loopback), so the
// rendered ports are used as they are; the test reaches them from inside it (`podFetch`), as
// the kubelet's probes and a Service's endpoints do. Init containers run first, in order, each
// to exit 0; the main container runs as the pod's user with the rendered arguments and
// environment. Needs root (mount and network namespaces, chroot, setting the user).
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  chownSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { connect, createServer, type Socket } from "node:net";
import { dirname, join } from "node:path";
import type { KubeObject } from "../../src/synth/model.js";
import { selfSignedCertificate } from "./tls.js";

/** What an image holds that the pod needs: its files, entry point and environment. */
export interface ImageSpec {
  /** Host paths shown at these paths of the container's root (read-only). */
  files: Record<string, string>;
  entrypoint: string[];
  env: Record<string, string>;
  workingDir?: string;
}

/** The ServiceAccount token a pod finds under /run/secrets/kubernetes.io/serviceaccount. */
export interface PodAccount {
  token: string;
  ca: Buffer;
  namespace: string;
  /** KUBERNETES_SERVICE_HOST and _PORT, as the kubelet sets them. */
  host: string;
  port: string;
}

export interface PodOptions {
  deployment: KubeObject;
  /** ConfigMaps and Secrets the pod's volumes and environment refer to (by name). */
  objects: KubeObject[];
  /** The image behind each image reference of the pod's containers. */
  image(reference: string): ImageSpec;
  account?: PodAccount;
  /** Extra /etc/hosts entries (name -> address), as cluster DNS would answer. */
  hosts?: Record<string, string>;
  /**
   * Share the test's network namespace instead of one of the pod's own: for a pod that must
   * reach a server on the host's loopback (the API server). Its ports are then the host's.
   */
  hostNetwork?: boolean;
  /**
   * Started in the pod's network before its containers (a database the pod reaches on
   * loopback, as it would reach a Service); stopped with the pod.
   */
  sidecar?: (netns: string | undefined) => Promise<{ stop(): Promise<void> }>;
}

type Obj = Record<string, unknown>;
interface Volume {
  name: string;
  configMap?: { name: string; items?: { key: string; path: string }[] };
  secret?: { secretName: string; items?: { key: string; path: string }[] };
  projected?: { sources: Obj[] };
  emptyDir?: Obj;
}
interface Mount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
}
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { fieldPath: string };
    secretKeyRef?: { name: string; key: string };
    configMapKeyRef?: { name: string; key: string };
  };
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  volumeMounts?: Mount[];
  workingDir?: string;
}
interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  securityContext?: { runAsUser?: number; runAsGroup?: number; fsGroup?: number };
}

export interface RunningPod {
  /** The main container's process, its output so far, and the pod's network namespace. */
  child: ChildProcess;
  log(): string;
  netns: string | undefined;
  stop(): Promise<void>;
}

const ACCOUNT_DIR = "/run/secrets/kubernetes.io/serviceaccount";

function podSpec(deployment: KubeObject): PodSpec {
  return (deployment as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
}

/** The keys of a ConfigMap or Secret, decoded. */
function dataOf(objects: KubeObject[], kind: string, name: string): Record<string, Buffer> {
  type Keys = KubeObject & { data?: Record<string, string>; stringData?: Record<string, string> };
  const o: Keys | undefined = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (o === undefined)
    throw new Error(`the pod needs ${kind} ${name}, which the test did not give`);
  const out: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries(o.data ?? {}))
    out[k] = kind === "Secret" ? Buffer.from(v, "base64") : Buffer.from(v);
  for (const [k, v] of Object.entries(o.stringData ?? {})) out[k] = Buffer.from(v);
  return out;
}

function writeKeys(
  dir: string,
  data: Record<string, Buffer>,
  items: { key: string; path: string }[] | undefined,
  what: string,
): void {
  const chosen = items ?? Object.keys(data).map((key) => ({ key, path: key }));
  for (const { key, path } of chosen) {
    const value = data[key];
    if (value === undefined) throw new Error(`${what} has no key ${key}`);
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), value, { mode: 0o644 });
  }
}

/** Each volume as a host directory holding what the kubelet would put in it. */
function volumeDirs(spec: PodSpec, objects: KubeObject[], base: string, fsGroup: number) {
  const dirs = new Map<string, string>();
  for (const v of spec.volumes ?? []) {
    const dir = join(base, "volumes", v.name);
    mkdirSync(dir, { recursive: true });
    if (v.configMap !== undefined) {
      const data = dataOf(objects, "ConfigMap", v.configMap.name);
      writeKeys(dir, data, v.configMap.items, `ConfigMap ${v.configMap.name}`);
    } else if (v.secret !== undefined) {
      const data = dataOf(objects, "Secret", v.secret.secretName);
      writeKeys(dir, data, v.secret.items, `Secret ${v.secret.secretName}`);
    } else if (v.projected !== undefined) {
      for (const s of v.projected.sources) {
        const src = (s.secret ?? s.configMap) as {
          name: string;
          items?: { key: string; path: string }[];
        };
        const kind = s.secret !== undefined ? "Secret" : "ConfigMap";
        writeKeys(dir, dataOf(objects, kind, src.name), src.items, `${kind} ${src.name}`);
      }
    } else if (v.emptyDir !== undefined) {
      // An emptyDir is writable by the pod's group (fsGroup), as the kubelet leaves it.
      chownSync(dir, 0, fsGroup);
      spawnSync("chmod", ["2777", dir]);
    } else {
      throw new Error(`volume ${v.name}: only configMap, secret, projected and emptyDir are run`);
    }
    dirs.set(v.name, dir);
  }
  return dirs;
}

function envOf(c: Container, objects: KubeObject[], namespace: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of c.env ?? []) {
    const from = e.valueFrom;
    if (e.value !== undefined) out[e.name] = e.value;
    else if (from?.fieldRef?.fieldPath === "metadata.namespace") out[e.name] = namespace;
    else if (from?.secretKeyRef !== undefined)
      out[e.name] = dataOf(objects, "Secret", from.secretKeyRef.name)[
        from.secretKeyRef.key
      ]!.toString();
    else if (from?.configMapKeyRef !== undefined)
      out[e.name] = dataOf(objects, "ConfigMap", from.configMapKeyRef.name)[
        from.configMapKeyRef.key
      ]!.toString();
    else throw new Error(`env ${e.name}: unsupported source ${JSON.stringify(from)}`);
  }
  return out;
}

const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The shell script that builds one container's root in its mount namespace and starts it:
 * a tmpfs root, the host's /usr and /dev, a minimal /etc, the image's files, the volumes in
 * path order (each mount point made in its parent first), then the root made read-only.
 */
function containerScript(
  c: Container,
  image: ImageSpec,
  volumes: Map<string, string>,
  base: string,
  opts: {
    account: string;
    hosts: string;
    uid: number;
    gid: number;
    fsGroup: number;
    env: Record<string, string>;
  },
): string {
  const root = join(base, `root-${c.name}`);
  mkdirSync(root, { recursive: true });
  const lines = [
    "set -e",
    `R=${q(root)}`,
    'mount -t tmpfs -o mode=0755 tmpfs "$R"',
    'mkdir -p "$R/usr" "$R/dev" "$R/proc" "$R/etc" "$R/run" "$R/var" "$R/tmp"',
    'ln -s usr/bin "$R/bin"; ln -s usr/lib "$R/lib"; ln -s usr/lib64 "$R/lib64"; ln -s usr/sbin "$R/sbin"',
    'ln -s ../run "$R/var/run"',
    'mount --bind /usr "$R/usr"; mount -o remount,bind,ro "$R/usr"',
    'mount --rbind /dev "$R/dev"',
    'mount --rbind /proc "$R/proc"',
    'cp /etc/passwd /etc/group /etc/nsswitch.conf "$R/etc/"',
    `cp ${q(opts.hosts)} "$R/etc/hosts"`,
    'mkdir -p "$R/etc/ssl"; mount --bind /etc/ssl "$R/etc/ssl"',
  ];
  const mount = (source: string, target: string, readOnly: boolean, file = false) => {
    lines.push(
      file
        ? `mkdir -p "$R"${q(dirname(target))}; touch "$R"${q(target)}`
        : `mkdir -p "$R"${q(target)}`,
      `mount --bind ${q(source)} "$R"${q(target)}`,
    );
    // Read-only once every mount is made: a mount point may lie inside another volume.
    if (readOnly) readOnlyLater.unshift(`mount -o remount,bind,ro "$R"${q(target)}`);
  };
  const readOnlyLater: string[] = [];
  for (const [target, source] of Object.entries(image.files)) {
    mount(source, target, true, !statSync(source).isDirectory());
  }
  mount(opts.account, ACCOUNT_DIR, true);
  const mounts = [...(c.volumeMounts ?? [])].sort(
    (a, b) => a.mountPath.split("/").length - b.mountPath.split("/").length,
  );
  for (const m of mounts) {
    const dir = volumes.get(m.name);
    if (dir === undefined) throw new Error(`mount ${m.mountPath}: no volume ${m.name}`);
    const source = m.subPath !== undefined ? join(dir, m.subPath) : dir;
    const file = m.subPath !== undefined && !statSync(source).isDirectory();
    mount(source, m.mountPath, m.readOnly === true, file);
  }
  // readOnlyRootFilesystem: what no volume covers cannot be written.
  lines.push(...readOnlyLater, 'mount -o remount,ro "$R"');
  const argv = [...(c.command ?? image.entrypoint), ...(c.args ?? [])];
  const env = Object.entries(opts.env).map(([k, v]) => q(`${k}=${v}`));
  lines.push(
    `exec chroot --userspec=${opts.uid}:${opts.gid} --groups=${opts.fsGroup} "$R" ` +
      `env -i -C ${q(c.workingDir ?? image.workingDir ?? "/")} ${env.join(" ")} ${argv.map(q).join(" ")}`,
  );
  return lines.join("\n");
}

/** Why pods cannot be run here, or undefined when they can. */
export function podsMissing(): string | undefined {
  if (process.getuid?.() !== 0) return "running a pod needs root (namespaces, chroot)";
  const probe = spawnSync("unshare", ["--mount", "--net", "--propagation", "private", "true"]);
  if (probe.status !== 0) return `unshare fails: ${probe.stderr?.toString().trim()}`;
  return undefined;
}

/** A network namespace holding only loopback, kept by a sleeping process (the pod's sandbox). */
async function sandbox(): Promise<{ proc: ChildProcess; netns: string }> {
  const proc = spawn(
    "unshare",
    ["--net", "sh", "-c", "ip link set lo up && echo up && exec sleep 100000"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  await new Promise<void>((resolve, reject) => {
    proc.stdout.once("data", () => resolve());
    proc.once("exit", (code) => reject(new Error(`pod sandbox exited ${code}`)));
  });
  return { proc, netns: `/proc/${proc.pid}/ns/net` };
}

/** Starts the Deployment's pod; resolves once the main container has been started. */
export async function startPod(opts: PodOptions): Promise<RunningPod> {
  const spec = podSpec(opts.deployment);
  const namespace = opts.deployment.metadata.namespace ?? "default";
  const base = mkdtempSync(join(tmpdir(), "mcpfleet-pod-"));
  const uid = spec.securityContext?.runAsUser ?? 0;
  const gid = spec.securityContext?.runAsGroup ?? uid;
  const fsGroup = spec.securityContext?.fsGroup ?? gid;
  const volumes = volumeDirs(spec, opts.objects, base, fsGroup);
  const hosts = join(base, "hosts");
  writeFileSync(
    hosts,
    [
      "127.0.0.1 localhost",
      "::1 localhost",
      ...Object.entries(opts.hosts ?? {}).map(([n, a]) => `${a} ${n}`),
    ].join("\n") + "\n",
  );
  // The kubelet mounts the pod's ServiceAccount token unless told not to; without a cluster the
  // files are stand-ins (a CA nobody signs with), and no API server address is set.
  const account = join(base, "serviceaccount");
  mkdirSync(account);
  const accountEnv: Record<string, string> = {};
  if (opts.account !== undefined) {
    writeFileSync(join(account, "token"), opts.account.token);
    writeFileSync(join(account, "ca.crt"), opts.account.ca);
    writeFileSync(join(account, "namespace"), opts.account.namespace);
    accountEnv.KUBERNETES_SERVICE_HOST = opts.account.host;
    accountEnv.KUBERNETES_SERVICE_PORT = opts.account.port;
  } else {
    const standIn = selfSignedCertificate(base);
    writeFileSync(join(account, "token"), "stand-in");
    writeFileSync(join(account, "ca.crt"), readFileSync(standIn.cert));
    writeFileSync(join(account, "namespace"), namespace);
  }
  const box = opts.hostNetwork === true ? undefined : await sandbox();
  const sidecar = await opts.sidecar?.(box?.netns);
  const run = (c: Container, stdio: "pipe"): ChildProcess => {
    const image = opts.image(c.image);
    const env = { ...image.env, ...accountEnv, ...envOf(c, opts.objects, namespace) };
    const script = containerScript(c, image, volumes, base, {
      account,
      hosts,
      uid,
      gid,
      fsGroup,
      env,
    });
    const inPod = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script];
    const argv = box === undefined ? inPod : ["nsenter", `--net=${box.netns}`, ...inPod];
    return spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", stdio, stdio] });
  };
  let log = "";
  const collect = (child: ChildProcess, name: string) => {
    const add = (d: Buffer) => (log += d.toString().replace(/^/gm, `[${name}] `));
    child.stdout?.on("data", add);
    child.stderr?.on("data", add);
  };
  const cleanup = async () => {
    await sidecar?.stop();
    box?.proc.kill("SIGKILL");
    rmSync(base, { recursive: true, force: true });
  };
  try {
    for (const c of spec.initContainers ?? []) {
      const child = run(c, "pipe");
      collect(child, c.name);
      const code = await new Promise<number | null>((r) => child.once("exit", r));
      if (code !== 0) throw new Error(`init container ${c.name} exited ${code}:\n${log}`);
    }
  } catch (err) {
    await cleanup();
    throw err;
  }
  const main = spec.containers[0]!;
  const child = run(main, "pipe");
  collect(child, main.name);
  return {
    child,
    log: () => log,
    netns: box?.netns,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
        child.kill("SIGKILL");
      }
      await cleanup();
    },
  };
}

export interface PodResponse {
  status: number;
  contentType: string;
  body: string;
}

/**
 * An HTTP GET from inside the pod's network (as a probe or a Service's endpoint reaches the
 * pod), or from the host's when the pod shares it. `undefined` when nothing answers.
 */
export function podFetch(
  pod: RunningPod,
  url: string,
  headers: Record<string, string> = {},
): PodResponse | undefined {
  const script = `fetch(process.argv[1], { headers: JSON.parse(process.argv[2]), signal: AbortSignal.timeout(3000) })
  .then(async (r) => console.log(JSON.stringify({ status: r.status, contentType: r.headers.get("content-type") ?? "", body: await r.text() })))
  .catch(() => console.log("null"));`;
  const argv = [process.execPath, "-e", script, url, JSON.stringify(headers)];
  const cmd = pod.netns === undefined ? argv : ["nsenter", `--net=${pod.netns}`, ...argv];
  const r = spawnSync(cmd[0]!, cmd.slice(1), { encoding: "utf8" });
  const out = r.stdout.trim();
  return out === "" || out === "null" ? undefined : (JSON.parse(out) as PodResponse);
}

/** Polls `podFetch` until `ok` holds or the main container exits; throws with the pod's log. */
export async function untilPod(
  pod: RunningPod,
  what: string,
  url: string,
  ok: (r: PodResponse) => boolean,
  timeoutMs = 60_000,
): Promise<{ response: PodResponse; afterMs: number }> {
  const start = Date.now();
  let last: PodResponse | undefined;
  while (Date.now() - start < timeoutMs) {
    if (pod.child.exitCode !== null)
      throw new Error(`${what}: the container exited ${pod.child.exitCode}:\n${pod.log()}`);
    last = podFetch(pod, url);
    if (last !== undefined && ok(last)) return { response: last, afterMs: Date.now() - start };
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(
    `${what}: not within ${timeoutMs} ms (last ${JSON.stringify(last)}):\n${pod.log()}`,
  );
}

/**
 * A Service address on the pod's loopback that reaches a server on the host's (as kube-proxy
 * takes a pod to the API server): a listener in the pod's network and a relay in this process,
 * joined by a Unix socket, which no network namespace divides.
 */
export async function forwardIntoPod(
  netns: string,
  port: number,
  target: { host: string; port: number },
): Promise<{ stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "mcpfleet-fwd-"));
  const socket = join(dir, "relay.sock");
  const open = new Set<Socket>();
  const relay = createServer((c) => {
    const t = connect(target.port, target.host);
    for (const s of [c, t]) {
      open.add(s);
      s.once("close", () => open.delete(s));
    }
    c.pipe(t).pipe(c);
    t.on("error", () => c.destroy());
    c.on("error", () => t.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(socket, resolve));
  const script = `const net = require("node:net");
net.createServer((c) => {
  const u = net.connect(process.argv[1]);
  c.pipe(u).pipe(c);
  u.on("error", () => c.destroy());
  c.on("error", () => u.destroy());
}).listen(Number(process.argv[2]), "127.0.0.1", () => console.log("up"));`;
  const listener = spawn(
    "nsenter",
    [`--net=${netns}`, process.execPath, "-e", script, socket, String(port)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    listener.stdout.once("data", () => resolve());
    listener.once("exit", (code) => reject(new Error(`the pod's Service listener exited ${code}`)));
  });
  return {
    async stop() {
      listener.kill("SIGKILL");
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
