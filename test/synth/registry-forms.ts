// The rendered MCPRegistry forms and how their pods are run, shared by the test files
// registry-pods*.test.ts so that vitest runs the three sets side by side. Every form is started
// as its pod would start: the registry server from the image's tree, with the rendered arguments
// and environment, the rendered ConfigMaps and the Secrets as files at their mount paths, as uid
// 65532 with a read-only root, in a network of its own where the rendered probes and the
// Service's target port are asked. The database the
// config names is a real PostgreSQL reached as the pod would reach its Service (the host name
// resolves to the pod's loopback, where it listens), with the credentials the rendering mounts.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml, parseAllDocuments } from "yaml";
import { afterEach, beforeAll, expect } from "vitest";
import { PGPASS_INIT_IMAGE } from "../../src/synth/constructs/mcpregistry.js";
import { loadTexts } from "../../src/synth/load.js";
import type { KubeObject } from "../../src/synth/model.js";
import {
  DEFAULT_SYNTH_OPTIONS,
  type SynthOptions,
  withRegistryServer,
} from "../../src/synth/options.js";
import { synthesize } from "../../src/synth/render.js";
import { formatReport } from "../../src/validate/index.js";
import { buildImageTree, mcpfleetImage } from "../support/image.js";
import {
  type ImageSpec,
  podFetch,
  podsMissing,
  type PodResponse,
  type RunningPod,
  startPod,
  untilPod,
} from "../support/pod.js";
import { type PostgresServer, postgresAvailable, startPostgres } from "../support/postgres.js";
import { referenceRegistryMissing, referenceRegistryPath } from "../support/toolhive-registry.js";
import { hasSharedData, sharedPath } from "../support/shared-data.js";
import { selfSignedCertificate } from "../support/tls.js";

const ROOT = join(import.meta.dirname, "..", "..");
const REFERENCE = sharedPath("reference-resources");
const REFERENCE_CONFIGS = sharedPath("reference-registry-configs");

export const missing = podsMissing() ?? (postgresAvailable() ? undefined : "PostgreSQL is missing");
if (missing !== undefined) {
  if (process.env.REQUIRE_POSTGRES === "1") throw new Error(`rendered registry pods: ${missing}`);
  console.warn(`rendered registry pod tests SKIPPED: ${missing}`);
}
export const haveReference =
  missing === undefined && hasSharedData(REFERENCE, "the reference's MCPRegistry forms");
export const haveConfigs =
  missing === undefined && hasSharedData(REFERENCE_CONFIGS, "the reference's registry configs");
export const referenceMissing = missing ?? referenceRegistryMissing();
if (missing === undefined && referenceMissing !== undefined)
  console.warn(`rendered pods of the reference's registry server SKIPPED: ${referenceMissing}`);

type Obj = KubeObject & Record<string, unknown>;

/** How the database of a form is reached, as its config and Secrets describe it. */
interface Database {
  /** The host name the config gives (port 5432); it resolves to the pod's loopback. */
  host: string;
  /** Users and database other than the defaults (db_app, db_migrator, registry). */
  names?: { user: string; migrationUser: string; database: string };
  /** The passwords the form's Secrets hold; absent: the config names none, logins are trusted. */
  passwords?: { app: string; migrator: string };
}

interface Form {
  name: string;
  /** Resource YAML (the MCPRegistry and any ConfigMaps and Secrets it names). */
  text: string;
  /** ConfigMaps and Secrets the form names but does not hold, as its user would create them. */
  extra?: string;
  database: Database;
  /** What the Service's port answers for GET /registry/<registry>/v0.1/servers, or why it stops. */
  servers: Answer | { refused: RegExp };
  /**
   * The same form rendered for the reference's server (`--registry-server=toolhive`): what it
   * answers (default: as ours), or why it does not start.
   */
  reference?: Answer | { refused: RegExp };
  /** The registry asked for (default `default`). */
  registry?: string;
}

interface Answer {
  status: number;
  names?: string[];
}

const cert = selfSignedCertificate(mkdtempSync(join(tmpdir(), "mcpfleet-ca-")));
const caPem = readFileSync(cert.cert, "utf8");

const reference = (file: string): string =>
  readFileSync(join(REFERENCE, `mcp-registries__${file}.yaml`), "utf8");

/** The reference's ConfigMap of three servers, two tagged production (configmap example). */
const prodRegistry = (): string =>
  parseAllDocuments(reference("mcpregistry-configyaml-configmap"))
    .map((d) => d.toString())
    .find((d) => /^kind: ConfigMap$/m.test(d))!;

const indent = (text: string, n: number): string =>
  text
    .split("\n")
    .map((l) => (l === "" ? l : " ".repeat(n) + l))
    .join("\n");

const CATALOG = readFileSync(join(ROOT, "examples", "registry", "data", "registry.json"), "utf8");
const catalogNames = (JSON.parse(CATALOG) as { data: { servers: { name: string }[] } }).data.servers
  .map((s) => s.name)
  .sort();

/** A ConfigMap or Secret document. */
function object(kind: "ConfigMap" | "Secret", name: string, data: Record<string, string>): string {
  const key = kind === "Secret" ? "stringData" : "data";
  return [
    `apiVersion: v1`,
    `kind: ${kind}`,
    `metadata: {name: ${name}}`,
    `${key}:`,
    ...Object.entries(data).map(([k, v]) => `  ${JSON.stringify(k)}: |\n${indent(v, 4)}`),
  ].join("\n");
}

export const OURS: Form[] = [
  {
    name: "configYAML: file, managed and kubernetes sources, OAuth, pgpass, extra volume",
    text: readFileSync(join(ROOT, "examples", "resources", "mcpregistry-configyaml.yaml"), "utf8"),
    extra: [
      object("ConfigMap", "mcp-catalog", { "registry.json": CATALOG }),
      object("Secret", "registry-pgpass", {
        ".pgpass":
          "postgres.registry.svc.cluster.local:5432:registry:db_app:app-pass\n" +
          "postgres.registry.svc.cluster.local:5432:registry:db_migrator:migrator-pass\n",
      }),
    ].join("\n---\n"),
    database: {
      host: "postgres.registry.svc.cluster.local",
      passwords: { app: "app-pass", migrator: "migrator-pass" },
    },
    servers: { status: 401 },
    // The reference's server stops when a kubernetes source finds no cluster; ours serves the
    // other sources and retries that one.
    reference: { refused: /unable to get kubeconfig/ },
  },
  {
    name: "legacy typed fields: configMap, git, managed sources, databaseConfig, OAuth, telemetry",
    text: readFileSync(join(ROOT, "examples", "resources", "mcpregistry-legacy.yaml"), "utf8"),
    extra: [
      object("ConfigMap", "mcp-catalog", { "registry.json": CATALOG }),
      object("Secret", "git-credentials", { token: "git-token" }),
      object("Secret", "registry-db", {
        "app-password": "legacy-app",
        "migrator-password": "legacy-migrator",
      }),
      object("Secret", "registry-oauth", { clientSecret: "client-secret" }),
      object("ConfigMap", "corp-ca", { "ca.crt": caPem }),
    ].join("\n---\n"),
    database: {
      host: "postgres.registry.svc.cluster.local",
      passwords: { app: "legacy-app", migrator: "legacy-migrator" },
    },
    servers: { status: 401 },
  },
  {
    name: "legacy typed fields, anonymous: a configMap source on the embedded store",
    text: `apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPRegistry
metadata: {name: plain}
spec:
  sources:
    - name: catalog
      format: upstream
      configMapRef: {name: mcp-catalog, key: registry.json}
      syncPolicy: {interval: 1h}
`,
    extra: object("ConfigMap", "mcp-catalog", { "registry.json": CATALOG }),
    database: { host: "" },
    servers: { status: 200, names: catalogNames },
    // The reference's server has no embedded store: a config without a database is refused.
    reference: { refused: /database\.host is required/ },
  },
];

export const REFERENCE_FORMS = (): Form[] => [
  {
    name: "reference configmap: a filtered file source from a mounted ConfigMap",
    text: reference("mcpregistry-configyaml-configmap"),
    database: { host: "postgres" },
    servers: {
      status: 200,
      names: ["io.github.example/filesystem", "io.github.example/github"],
    },
  },
  {
    name: "reference pgpass: PostgreSQL over TLS with the pgpass Secret",
    text: reference("mcpregistry-configyaml-pgpass"),
    extra: prodRegistry(),
    database: {
      host: "postgres",
      passwords: { app: "myapppassword", migrator: "mymigrationpassword" },
    },
    // The reference's server refuses its own example: a file source without syncPolicy.
    reference: { refused: /syncPolicy\.interval is required/ },
    servers: {
      status: 200,
      names: [
        "io.github.example/experimental-ai",
        "io.github.example/filesystem",
        "io.github.example/github",
      ],
    },
  },
  {
    name: "reference oauth: provider secret and CA from mounted volumes",
    text: reference("mcpregistry-configyaml-oauth"),
    extra: [
      prodRegistry(),
      object("Secret", "oauth-client-secret", { secret: "client-secret" }),
      object("ConfigMap", "keycloak-ca", { "ca.crt": caPem }),
    ].join("\n---\n"),
    database: { host: "postgres" },
    servers: { status: 401 },
    // The reference's server refuses its own example: a file source without syncPolicy.
    reference: { refused: /syncPolicy\.interval is required/ },
  },
  {
    name: "reference api: an upstream registry this pod cannot reach",
    text: reference("mcpregistry-configyaml-api"),
    database: { host: "postgres" },
    servers: { status: 200, names: [] },
  },
  {
    name: "reference git-auth: a private repository this pod cannot reach",
    text: reference("mcpregistry-configyaml-git-auth"),
    database: { host: "postgres" },
    servers: { status: 200, names: [] },
  },
  {
    name: "reference minimal: a kubernetes source outside a cluster",
    text: reference("mcpregistry-configyaml-minimal"),
    database: { host: "postgres" },
    servers: { status: 200, names: [] },
    reference: { refused: /unable to get kubeconfig/ },
  },
];

const DEFAULT_ROLES = new Set(["db_app", "db_migrator"]);

/**
 * A config that asks for a verified certificate of its database host is refused at start, in one
 * line, by a database whose certificate nobody signed (the test's).
 */
const VERIFY_FULL = {
  servers: { refused: /cannot open the postgres store: self-signed certificate/ },
};

/**
 * Each registry-server config of the reference's (written for its server) as the `configYAML`
 * of an MCPRegistry: our server must serve it as written. Its files and hosts are not there, so
 * those sources fail; the server is ready and answers all the same.
 */
export const CONFIG_FORMS = (): Form[] =>
  readdirSync(REFERENCE_CONFIGS)
    .filter((f) => f.endsWith(".yaml") && !f.startsWith("with-format-key__"))
    .sort()
    .map((file) => {
      const text = readFileSync(join(REFERENCE_CONFIGS, file), "utf8");
      const config = parseYaml(text) as {
        registries: { name: string }[];
        auth?: { mode?: string };
        database: {
          host: string;
          user?: string;
          migrationUser?: string;
          database?: string;
          sslMode?: string;
        };
      };
      const d = config.database;
      return {
        name: `reference config ${file}`,
        text: `apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPRegistry
metadata: {name: config}
spec:
  configYAML: |
${indent(text, 4)}`,
        database: {
          host: d.host,
          names: {
            user: d.user ?? "db_app",
            migrationUser: d.migrationUser ?? "db_migrator",
            database: d.database ?? "registry",
          },
        },
        servers: { status: config.auth?.mode === "anonymous" ? 200 : 401 },
        registry: config.registries[0]!.name,
        ...(d.sslMode === "verify-full" ? VERIFY_FULL : {}),
      };
    });

let tree = "";
const pods: RunningPod[] = [];

/** In a describe block of pods: the image's tree built first, every pod stopped after its test. */
export function usePods(): void {
  beforeAll(() => {
    tree = buildImageTree();
  }, 300_000);
  afterEach(async () => {
    for (const p of pods.splice(0)) await p.stop();
  });
}

/** The Deployment, Service, ConfigMaps and Secrets of a form, as synth renders them. */
async function render(
  form: Form,
  options: SynthOptions,
): Promise<{ deployment: Obj; service: Obj; objects: Obj[] }> {
  const text = form.extra === undefined ? form.text : `${form.text}\n---\n${form.extra}`;
  const loaded = await loadTexts([{ name: "form.yaml", text }]);
  const report = formatReport(loaded.report, "text", { summary: false, color: false });
  expect(loaded.valid, report).toBe(true);
  const rendered = synthesize(loaded.resources, options).objects as Obj[];
  const inputs = parseAllDocuments(text)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null && (o.kind === "ConfigMap" || o.kind === "Secret"));
  const deployment = rendered.find((o) => o.kind === "Deployment")!;
  const service = rendered.find((o) => o.kind === "Service")!;
  return { deployment, service, objects: [...rendered, ...inputs] };
}

interface Probe {
  httpGet: { path: string; port: number };
}

/** The init image beside the reference's server: a shell, cp and chmod, as the host's /usr has. */
const BUSYBOX: ImageSpec = { files: {}, entrypoint: [], env: { PATH: "/usr/bin:/bin" } };

/** The two programs an MCPRegistry can deploy, as their images hold them. */
const PROGRAMS = {
  mcpfleet: {
    options: DEFAULT_SYNTH_OPTIONS,
    image: (): ImageSpec => mcpfleetImage(tree),
  },
  toolhive: {
    options: withRegistryServer(DEFAULT_SYNTH_OPTIONS, "toolhive"),
    // Its image holds the one static binary at /main, its entry point.
    image: (): ImageSpec => ({
      files: { "/main": referenceRegistryPath()! },
      entrypoint: ["/main"],
      env: {},
    }),
  },
};
type Program = keyof typeof PROGRAMS;

/**
 * The one-time setup the reference's server documents for its database, as an administrator
 * runs it: its migration user may create roles, the user that migrates may create tables, and its \`prime-db\` SQL (printed by
 * \`--dry-run\`) creates the role the application user acts through.
 */
async function primeForReference(pg: PostgresServer, appPassword: string): Promise<void> {
  await pg.adminQuery(`ALTER ROLE db_migrator CREATEROLE`);
  // A config naming no migrationUser has it migrate as the application user.
  await pg.adminQuery(`GRANT CREATE ON SCHEMA public TO db_app`, "registry");
  const sql = spawnSync(
    referenceRegistryPath()!,
    ["prime-db", "--dry-run", "--config", "/dev/null", "db_app"],
    { input: `${appPassword}\n`, encoding: "utf8" },
  );
  expect(sql.status, sql.stderr).toBe(0);
  await pg.adminQuery(sql.stdout.slice(0, sql.stdout.lastIndexOf("$$;") + 3));
}

/** Starts the form's pod with its database, waits for the readiness probe, checks the rest. */
export async function runForm(form: Form, program: Program = "mcpfleet"): Promise<void> {
  const { options, image } = PROGRAMS[program];
  const { deployment, service, objects } = await render(form, options);
  const expected = program === "mcpfleet" ? form.servers : (form.reference ?? form.servers);
  const container = (
    deployment as unknown as {
      spec: {
        template: { spec: { containers: { readinessProbe: Probe; livenessProbe: Probe }[] } };
      };
    }
  ).spec.template.spec.containers[0]!;
  const db = form.database;
  const pod = await startPod({
    deployment,
    objects,
    image: (ref) => {
      if (ref === PGPASS_INIT_IMAGE) return BUSYBOX;
      expect(ref).toBe(options.registryImage);
      return image();
    },
    hosts: db.host === "" ? {} : { [db.host]: "127.0.0.1" },
    sidecar:
      db.host === ""
        ? undefined
        : async (netns) => {
            // TLS on, as a production server has it: a config may require it (the
            // reference's server asks for it unless told otherwise), and ours prefers it.
            const pg = await startPostgres({
              netns,
              port: 5432,
              hostAuth: db.passwords === undefined ? "trust" : "scram-sha-256",
              ssl: true,
            });
            if (db.passwords !== undefined) {
              await pg.adminQuery(`ALTER ROLE db_app PASSWORD '${db.passwords.app}'`);
              await pg.adminQuery(`ALTER ROLE db_migrator PASSWORD '${db.passwords.migrator}'`);
            }
            if (db.names === undefined) await pg.createDatabase("registry");
            else {
              // The users and database a config names, as its administrator created them.
              const { user, migrationUser, database } = db.names;
              for (const role of new Set([user, migrationUser])) {
                if (!DEFAULT_ROLES.has(role)) await pg.adminQuery(`CREATE ROLE "${role}" LOGIN`);
              }
              await pg.adminQuery(`CREATE DATABASE "${database}" OWNER "${migrationUser}"`);
            }
            if (program === "toolhive") await primeForReference(pg, db.passwords?.app ?? "");
            return pg;
          },
  });
  pods.push(pod);
  if ("refused" in expected) {
    const code = await new Promise<number | null>((r) =>
      pod.child.exitCode !== null ? r(pod.child.exitCode) : pod.child.once("exit", r),
    );
    expect(code, pod.log()).not.toBe(0);
    expect(pod.log()).toMatch(expected.refused);
    return;
  }
  const url = (p: Probe): string => `http://127.0.0.1:${p.httpGet.port}${p.httpGet.path}`;
  const ready = await untilPod(
    pod,
    "readiness probe",
    url(container.readinessProbe),
    (r) => r.status === 200,
  );
  console.log(`${program} ${form.name}: ready after ${ready.afterMs} ms`);
  const live = podFetch(pod, url(container.livenessProbe));
  expect(live?.status, pod.log()).toBe(200);
  const port = (service as unknown as { spec: { ports: { targetPort: number }[] } }).spec.ports[0]!
    .targetPort;
  // The registry's own path, which the reference's server answers too.
  const servers = podFetch(
    pod,
    `http://127.0.0.1:${port}/registry/${form.registry ?? "default"}/v0.1/servers`,
  ) as PodResponse;
  expect(servers?.status, pod.log()).toBe(expected.status);
  if (expected.names !== undefined) {
    const names = (JSON.parse(servers.body) as { servers: { server: { name: string } }[] }).servers
      .map((s) => s.server.name)
      .sort();
    expect(names, pod.log()).toEqual(expected.names);
  }
  if (expected.status === 401) {
    // The rendered OAuth settings are the ones served.
    const meta = podFetch(pod, `http://127.0.0.1:${port}/.well-known/oauth-protected-resource`);
    expect(meta?.status, pod.log()).toBe(200);
    expect((JSON.parse(meta!.body) as { resource: string }).resource).toMatch(/^https:\/\//);
  }
}
