import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  REGISTRY_CONFIG_SCHEMA_ID,
  type SchemaIssue,
  type SchemaNode,
  defaultSchemaSet,
  kindSchemaId,
} from "../../src/schema/index.js";
import { type Doc, SHARED_DATA, expectValid, issuesOf } from "./helpers.js";
import { hasSharedData } from "../support/shared-data.js";

// ajv-formats is CommonJS: at run time the default import is the plugin itself.
type FormatsPlugin = (ajv: Ajv2020) => Ajv2020;
const formats = addFormatsModule as unknown as FormatsPlugin & { default?: FormatsPlugin };
const addFormats: FormatsPlugin = formats.default ?? formats;

const ROOT = join(import.meta.dirname, "../..");
const CONFIG = REGISTRY_CONFIG_SCHEMA_ID;
const CRD = kindSchemaId("MCPRegistry");

function configIssues(doc: unknown): SchemaIssue[] {
  return defaultSchemaSet().validateSchema(CONFIG, doc);
}

function readYaml(path: string): Doc {
  return parse(readFileSync(join(ROOT, path), "utf8")) as Doc;
}

function schemaFile(path: string): SchemaNode {
  return parse(readFileSync(join(ROOT, "schemas", path), "utf8")) as SchemaNode;
}

type Mutate = (doc: Doc) => void;

/** A valid case (`path` absent) or an invalid one: an issue at `path` with `level`. */
interface Case {
  name: string;
  mutate: Mutate;
  path?: string;
  level?: "schema" | "cel";
  message?: string;
}

function expectCase(issues: SchemaIssue[], c: Case): void {
  if (c.path === undefined) {
    expect(issues).toEqual([]);
    return;
  }
  const match = issues.find(
    (i) =>
      i.path === c.path &&
      i.level === c.level &&
      (c.message === undefined || i.message.includes(c.message)),
  );
  expect(
    match,
    `expected a ${c.level} issue at ${c.path}; got ${JSON.stringify(issues)}`,
  ).toBeDefined();
}

// Small accessors so mutations stay one line.
const at = (list: unknown, i: number): Doc => (list as Doc[])[i] as Doc;
const src = (d: Doc, i: number): Doc => at(d.sources, i);
const reg = (d: Doc, i: number): Doc => at(d.registries, i);
const auth = (d: Doc): Doc => d.auth as Doc;
const spec = (d: Doc): Doc => d.spec as Doc;

// ---------------------------------------------------------------------------------------------
// The configuration file
// ---------------------------------------------------------------------------------------------

function baseConfig(): Doc {
  return {
    sources: [
      { name: "catalog", file: { path: "data/registry.json" }, syncPolicy: { interval: "5m" } },
      { name: "team", managed: {} },
    ],
    registries: [{ name: "default", sources: ["catalog", "team"] }],
    auth: { mode: "anonymous" },
  };
}

const provider = {
  name: "corp",
  issuerUrl: "https://sso.example.com/realms/eng",
  audience: "mcp-registry",
};

function oauth(extra: Doc = {}): Doc {
  return { resourceUrl: "https://registry.example.com", providers: [provider], ...extra };
}

const configCases: Case[] = [
  // Valid shapes
  { name: "the base config", mutate: () => {} },
  {
    name: "a git source with branch, path and auth",
    mutate: (d) => {
      delete src(d, 0).file;
      src(d, 0).git = {
        repository: "https://git.example.com/catalog.git",
        branch: "main",
        path: "catalog/registry.json",
        auth: { username: "git", passwordFile: "/secrets/git/token" },
      };
    },
  },
  {
    name: "git repository prefixes git@, ssh://, git:// and file:///",
    mutate: (d) => {
      const repos = ["git@example.com:a/b.git", "ssh://h/a.git", "git://h/a.git", "file:///r"];
      d.sources = repos.map((repository, i) => ({
        name: `g${i}`,
        git: { repository, tag: "v1" },
        syncPolicy: { interval: "1h" },
      }));
      d.registries = [{ name: "default", sources: ["g0", "g1", "g2", "g3"] }];
    },
  },
  {
    name: "an api source",
    mutate: (d) => {
      delete src(d, 0).file;
      src(d, 0).api = { endpoint: "http://upstream.default.svc:8080" };
    },
  },
  {
    name: "a url source with timeout and headers",
    mutate: (d) => {
      delete src(d, 0).file;
      src(d, 0).url = {
        url: "https://example.com/registry.json",
        timeout: "10s",
        headers: { Accept: "application/json" },
      };
    },
  },
  {
    name: "a kubernetes source with namespaces",
    mutate: (d) => {
      src(d, 1).kubernetes = { namespaces: ["mcp-servers"] };
      delete src(d, 1).managed;
    },
  },
  {
    name: "syncPolicy on a managed source (ignored)",
    mutate: (d) => (src(d, 1).syncPolicy = { interval: "1h" }),
  },
  {
    name: "format, claims (string and list values) and filter on a synced source",
    mutate: (d) => {
      Object.assign(src(d, 0), {
        format: "toolhive",
        claims: { org: "acme", groups: ["a", "b"] },
        filter: { names: { include: ["acme/*"], exclude: ["*/old"] }, tags: { exclude: ["beta"] } },
      });
      reg(d, 0).claims = { org: "acme" };
    },
  },
  {
    name: "oauth mode with a provider, public paths and roles",
    mutate: (d) => {
      d.auth = {
        mode: "oauth",
        publicPaths: ["/metrics"],
        oauth: oauth({
          realm: "r",
          scopesSupported: ["read"],
          publicPaths: ["/status"],
          providers: [
            {
              ...provider,
              jwksUrl: "https://sso.example.com/keys",
              introspectionUrl: "https://sso.example.com/introspect",
              clientId: "registry",
              clientSecretFile: "/s/secret",
              caCertPath: "/s/ca.crt",
              authTokenFile: "/s/token",
              allowPrivateIP: true,
            },
          ],
        }),
        authz: {
          roles: {
            superAdmin: [{ groups: "admins" }],
            manageSources: [{ groups: ["admins", "ops"] }],
            manageRegistries: [{ groups: "admins" }],
            manageEntries: [{ team: "data", groups: "publishers" }, { sub: "ci" }],
          },
        },
      };
    },
  },
  {
    name: "oauth is the default mode",
    mutate: (d) => (d.auth = { oauth: oauth() }),
  },
  {
    name: "a PostgreSQL database with password files",
    mutate: (d) =>
      (d.database = {
        host: "db",
        port: 5433,
        user: "app",
        migrationUser: "mig",
        database: "reg",
        sslMode: "verify-full",
        passwordFile: "/s/app",
        migrationPasswordFile: "/s/mig",
        maxOpenConns: 5,
        maxIdleConns: 0,
        connMaxLifetime: "1h",
        maxMetaSize: 1024,
      }),
  },
  {
    name: "a database with AWS RDS IAM authentication",
    mutate: (d) => (d.database = { host: "db", dynamicAuth: { awsRdsIam: { region: "detect" } } }),
  },
  {
    name: "the embedded store in a data directory",
    mutate: (d) => (d.database = { embedded: { dataDir: "/var/lib/registry" }, maxMetaSize: 10 }),
  },
  { name: "the embedded store in memory", mutate: (d) => (d.database = { embedded: {} }) },
  {
    name: "telemetry and audit",
    mutate: (d) => {
      d.telemetry = {
        enabled: true,
        serviceName: "reg",
        serviceVersion: "1.0.0",
        endpoint: "otel:4318",
        insecure: true,
        tracing: { enabled: true, sampling: "1.0" },
        metrics: { enabled: true },
      };
      d.audit = { enabled: true, logFile: "/var/log/audit.log", eventTypes: ["entry.publish"] };
    },
  },

  // Root: sources and registries
  { name: "sources missing", mutate: (d) => delete d.sources, path: "/sources", level: "schema" },
  { name: "sources empty", mutate: (d) => (d.sources = []), path: "/sources", level: "schema" },
  {
    name: "registries missing",
    mutate: (d) => delete d.registries,
    path: "/registries",
    level: "schema",
  },
  {
    name: "source name not a DNS label",
    mutate: (d) => {
      src(d, 0).name = "My_Catalog";
      reg(d, 0).sources = ["My_Catalog", "team"];
    },
    path: "/sources/0/name",
    level: "schema",
  },
  {
    name: "source name longer than 63",
    mutate: (d) => {
      src(d, 0).name = "a".repeat(64);
      reg(d, 0).sources = ["a".repeat(64)];
    },
    path: "/sources/0/name",
    level: "schema",
  },
  {
    name: "registry name not a DNS label",
    mutate: (d) => (reg(d, 0).name = "Default"),
    path: "/registries/0/name",
    level: "schema",
  },
  {
    name: "duplicate source names",
    mutate: (d) => (src(d, 1).name = "catalog"),
    path: "/sources",
    level: "cel",
    message: "source names must be unique",
  },
  {
    name: "duplicate registry names",
    mutate: (d) => (d.registries = [reg(d, 0), { name: "default", sources: ["team"] }]),
    path: "/registries",
    level: "cel",
    message: "registry names must be unique",
  },
  {
    name: "two managed sources",
    mutate: (d) => (d.sources = [...(d.sources as Doc[]), { name: "more", managed: {} }]),
    path: "/sources",
    level: "cel",
    message: "at most one source may be managed",
  },
  {
    name: "a registry naming an undefined source",
    mutate: (d) => (reg(d, 0).sources = ["catalog", "nope"]),
    path: "/registries",
    level: "cel",
    message: "must be defined in sources",
  },
  { name: "a default registry that is defined", mutate: (d) => (d.defaultRegistry = "default") },
  {
    name: "a default registry that is not defined",
    mutate: (d) => (d.defaultRegistry = "elsewhere"),
    path: "/defaultRegistry",
    level: "cel",
    message: "defaultRegistry must name a registry defined in registries",
  },
  {
    name: "a registry without sources",
    mutate: (d) => (reg(d, 0).sources = []),
    path: "/registries/0/sources",
    level: "schema",
  },
  {
    name: "a registry naming a source twice",
    mutate: (d) => (reg(d, 0).sources = ["team", "team"]),
    path: "/registries/0/sources",
    level: "cel",
    message: "a registry names each source once",
  },

  // Source kinds
  {
    name: "a source with two kinds",
    mutate: (d) => (src(d, 0).managed = {}),
    path: "/sources/0",
    level: "cel",
    message: "exactly one of git, api, url, file, managed and kubernetes",
  },
  {
    name: "a source with no kind",
    mutate: (d) => delete src(d, 1).managed,
    path: "/sources/1",
    level: "cel",
    message: "exactly one of",
  },
  {
    name: "managed not empty",
    mutate: (d) => (src(d, 1).managed = { namespace: "x" }),
    path: "/sources/1/managed",
    level: "schema",
  },
  {
    name: "format not toolhive or upstream",
    mutate: (d) => (src(d, 0).format = "json"),
    path: "/sources/0/format",
    level: "schema",
  },
  {
    name: "a claim value that is a number",
    mutate: (d) => (src(d, 0).claims = { tier: 1 }),
    path: "/sources/0/claims/tier",
    level: "schema",
  },
  ...(["branch", "tag", "commit"] as const).flatMap((a, i, all) => {
    const b = all[(i + 1) % all.length] ?? "branch";
    return [
      {
        name: `git ${a} and ${b} together`,
        mutate: (d: Doc) => {
          delete src(d, 0).file;
          src(d, 0).git = { repository: "https://h/r.git", [a]: "x", [b]: "y" };
        },
        path: "/sources/0/git",
        level: "cel" as const,
        message: "mutually exclusive",
      },
    ];
  }),
  {
    name: "git repository with an unsupported scheme",
    mutate: (d) => {
      delete src(d, 0).file;
      src(d, 0).git = { repository: "ftp://h/r.git" };
    },
    path: "/sources/0/git/repository",
    level: "schema",
  },
  {
    name: "git path not ending in .json",
    mutate: (d) => {
      delete src(d, 0).file;
      src(d, 0).git = { repository: "https://h/r.git", path: "registry.yaml" };
    },
    path: "/sources/0/git/path",
    level: "schema",
  },
  {
    name: "git auth without passwordFile",
    mutate: (d) => {
      delete src(d, 0).file;
      src(d, 0).git = { repository: "https://h/r.git", auth: { username: "git" } };
    },
    path: "/sources/0/git/auth/passwordFile",
    level: "schema",
  },
  {
    name: "api endpoint that is not http(s)",
    mutate: (d) => {
      delete src(d, 0).file;
      src(d, 0).api = { endpoint: "registry.example.com" };
    },
    path: "/sources/0/api/endpoint",
    level: "schema",
  },
  {
    name: "url source without url",
    mutate: (d) => {
      delete src(d, 0).file;
      src(d, 0).url = { timeout: "5s" };
    },
    path: "/sources/0/url/url",
    level: "schema",
  },
  {
    name: "url timeout that is not a duration",
    mutate: (d) => {
      delete src(d, 0).file;
      src(d, 0).url = { url: "https://example.com/r.json", timeout: "5 seconds" };
    },
    path: "/sources/0/url/timeout",
    level: "schema",
  },
  {
    name: "file source without path",
    mutate: (d) => (src(d, 0).file = {}),
    path: "/sources/0/file/path",
    level: "schema",
  },
  {
    name: "kubernetes namespace not a DNS label",
    mutate: (d) => {
      delete src(d, 1).managed;
      src(d, 1).kubernetes = { namespaces: ["Bad_NS"] };
    },
    path: "/sources/1/kubernetes/namespaces/0",
    level: "schema",
  },
  {
    name: "syncPolicy without interval",
    mutate: (d) => (src(d, 0).syncPolicy = {}),
    path: "/sources/0/syncPolicy/interval",
    level: "schema",
  },
  {
    name: "syncPolicy interval that is not a duration",
    mutate: (d) => (src(d, 0).syncPolicy = { interval: "hourly" }),
    path: "/sources/0/syncPolicy/interval",
    level: "schema",
  },
  {
    name: "filter on a managed source",
    mutate: (d) => (src(d, 1).filter = { names: { include: ["a/*"] } }),
    path: "/sources/1/filter",
    level: "cel",
    message: "filter applies only to synced sources",
  },
  {
    name: "filter on a kubernetes source",
    mutate: (d) => {
      delete src(d, 1).managed;
      src(d, 1).kubernetes = {};
      src(d, 1).filter = { tags: { include: ["x"] } };
    },
    path: "/sources/1/filter",
    level: "cel",
  },
  {
    name: "filter include that is not a list",
    mutate: (d) => (src(d, 0).filter = { names: { include: "a/*" } }),
    path: "/sources/0/filter/names/include",
    level: "schema",
  },

  // Auth
  {
    name: "auth missing (oauth default without providers)",
    mutate: (d) => delete d.auth,
    path: "/auth",
    level: "cel",
    message: "auth is required",
  },
  {
    name: "oauth mode without an oauth section",
    mutate: (d) => (d.auth = { mode: "oauth" }),
    path: "/auth/oauth",
    level: "cel",
    message: "refuses to start",
  },
  {
    name: "default mode without an oauth section",
    mutate: (d) => (d.auth = { publicPaths: ["/x"] }),
    path: "/auth/oauth",
    level: "cel",
  },
  {
    name: "oauth with an empty provider list",
    mutate: (d) => (d.auth = { mode: "oauth", oauth: oauth({ providers: [] }) }),
    path: "/auth/oauth/providers",
    level: "schema",
  },
  {
    name: "an unknown auth mode",
    mutate: (d) => (auth(d).mode = "basic"),
    path: "/auth/mode",
    level: "schema",
  },
  {
    name: "oauth without resourceUrl",
    mutate: (d) => (d.auth = { mode: "oauth", oauth: { providers: [provider] } }),
    path: "/auth/oauth/resourceUrl",
    level: "schema",
  },
  {
    name: "provider without audience",
    mutate: (d) =>
      (d.auth = { oauth: oauth({ providers: [{ name: "p", issuerUrl: "https://i" }] }) }),
    path: "/auth/oauth/providers/0/audience",
    level: "schema",
  },
  {
    name: "provider issuerUrl that is not http(s)",
    mutate: (d) => (d.auth = { oauth: oauth({ providers: [{ ...provider, issuerUrl: "i" }] }) }),
    path: "/auth/oauth/providers/0/issuerUrl",
    level: "schema",
  },
  {
    name: "clock skew over 5m",
    mutate: (d) => (d.auth = { oauth: oauth({ clockSkew: "10m" }) }),
    path: "/auth/oauth/clockSkew",
    level: "cel",
    message: "clockSkew is at most 5m",
  },
  {
    name: "clock skew that is not a duration",
    mutate: (d) => (d.auth = { oauth: oauth({ clockSkew: "soon" }) }),
    path: "/auth/oauth/clockSkew",
    level: "schema",
  },
  {
    name: "duplicate provider names",
    mutate: (d) => (d.auth = { oauth: oauth({ providers: [provider, provider] }) }),
    path: "/auth/oauth/providers",
    level: "cel",
    message: "provider names must be unique",
  },
  {
    name: "public path not starting with /",
    mutate: (d) => (auth(d).publicPaths = ["metrics"]),
    path: "/auth/publicPaths/0",
    level: "schema",
  },
  {
    name: "a role that is not a list of claim maps",
    mutate: (d) => (auth(d).authz = { roles: { superAdmin: { groups: "admins" } } }),
    path: "/auth/authz/roles/superAdmin",
    level: "schema",
  },

  // Database
  {
    name: "embedded together with PostgreSQL credentials",
    mutate: (d) => (d.database = { embedded: {}, passwordFile: "/secrets/db" }),
    path: "/database/embedded",
    level: "cel",
    message: "embedded cannot be combined",
  },
  {
    name: "dynamicAuth together with a password file",
    mutate: (d) =>
      (d.database = { passwordFile: "/p", dynamicAuth: { awsRdsIam: { region: "eu-west-1" } } }),
    path: "/database/dynamicAuth",
    level: "cel",
  },
  {
    name: "awsRdsIam without region",
    mutate: (d) => (d.database = { dynamicAuth: { awsRdsIam: {} } }),
    path: "/database/dynamicAuth/awsRdsIam/region",
    level: "schema",
  },
  {
    name: "maxIdleConns above maxOpenConns",
    mutate: (d) => (d.database = { maxOpenConns: 2, maxIdleConns: 3 }),
    path: "/database/maxIdleConns",
    level: "cel",
  },
  {
    name: "an unknown sslMode",
    mutate: (d) => (d.database = { sslMode: "on" }),
    path: "/database/sslMode",
    level: "schema",
  },
  {
    name: "port 0",
    mutate: (d) => (d.database = { port: 0 }),
    path: "/database/port",
    level: "schema",
  },
  {
    name: "maxOpenConns 0",
    mutate: (d) => (d.database = { maxOpenConns: 0 }),
    path: "/database/maxOpenConns",
    level: "schema",
  },
  {
    name: "maxIdleConns below 0",
    mutate: (d) => (d.database = { maxIdleConns: -1 }),
    path: "/database/maxIdleConns",
    level: "schema",
  },
  {
    name: "maxMetaSize 0",
    mutate: (d) => (d.database = { maxMetaSize: 0 }),
    path: "/database/maxMetaSize",
    level: "schema",
  },
  {
    name: "connMaxLifetime that is not a duration",
    mutate: (d) => (d.database = { connMaxLifetime: "30" }),
    path: "/database/connMaxLifetime",
    level: "schema",
  },

  // Telemetry and audit
  {
    name: "sampling of 0",
    mutate: (d) => (d.telemetry = { tracing: { sampling: "0" } }),
    path: "/telemetry/tracing/sampling",
    level: "schema",
  },
  {
    name: "sampling above 1",
    mutate: (d) => (d.telemetry = { tracing: { sampling: "1.5" } }),
    path: "/telemetry/tracing/sampling",
    level: "schema",
  },
  {
    name: "telemetry endpoint with a scheme",
    mutate: (d) => (d.telemetry = { endpoint: "http://otel:4318" }),
    path: "/telemetry/endpoint",
    level: "schema",
  },
  {
    name: "audit maxDataSize below 0",
    mutate: (d) => (d.audit = { maxDataSize: -1 }),
    path: "/audit/maxDataSize",
    level: "schema",
  },
];

describe("registry server config schema", () => {
  it.each(configCases)("$name", (c) => {
    const doc = baseConfig();
    c.mutate(doc);
    expectCase(configIssues(doc), c);
  });

  it("reports undeclared fields as unknown", () => {
    const doc = baseConfig();
    src(doc, 0).refreshInterval = "5m";
    const issues = configIssues(doc);
    expect(issues).toContainEqual(
      expect.objectContaining({ path: "/sources/0/refreshInterval", unknownField: true }),
    );
  });

  it("takes the spec's placement of publicPaths (auth.oauth.publicPaths) too", () => {
    const doc = baseConfig();
    doc.auth = { oauth: oauth({ publicPaths: ["bad"] }) };
    expect(configIssues(doc)).toContainEqual(
      expect.objectContaining({ path: "/auth/oauth/publicPaths/0", level: "schema" }),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The MCPRegistry kind
// ---------------------------------------------------------------------------------------------

const MINIMAL_CONFIG = `sources:
  - name: k8s
    kubernetes: {}
registries:
  - name: default
    sources: [k8s]
auth:
  mode: anonymous
`;

function configYamlRegistry(): Doc {
  return {
    apiVersion: "toolhive.stacklok.dev/v1alpha1",
    kind: "MCPRegistry",
    metadata: { name: "reg" },
    spec: { configYAML: MINIMAL_CONFIG },
  };
}

function legacyRegistry(): Doc {
  return {
    apiVersion: "toolhive.stacklok.dev/v1alpha1",
    kind: "MCPRegistry",
    metadata: { name: "reg" },
    spec: {
      sources: [
        {
          name: "catalog",
          configMapRef: { name: "cat", key: "registry.json" },
          syncPolicy: { interval: "1h" },
        },
        { name: "team", managed: {} },
      ],
      registries: [{ name: "default", sources: ["catalog", "team"] }],
    },
  };
}

const secretRef = { name: "s", key: "k" };
const legacyProvider = { name: "corp", issuerUrl: "https://sso.example.com", audience: "reg" };

const configYamlCases: Case[] = [
  { name: "configYAML alone", mutate: () => {} },
  {
    name: "configYAML with pgpassSecretRef, volumes, volumeMounts and the other plain fields",
    mutate: (d) =>
      Object.assign(spec(d), {
        pgpassSecretRef: { name: "pg", key: ".pgpass" },
        volumes: [{ name: "data", configMap: { name: "cat" } }],
        volumeMounts: [{ name: "data", mountPath: "/data", readOnly: true }],
        displayName: "Registry",
        enforceServers: true,
        podTemplateSpec: { spec: { containers: [{ name: "registry-api" }] } },
      }),
  },
  {
    name: "apiVersion v1beta1 and a status",
    mutate: (d) => {
      d.apiVersion = "toolhive.stacklok.dev/v1beta1";
      d.status = {
        phase: "Ready",
        url: "http://reg-api.ns.svc.cluster.local:8080",
        readyReplicas: 1,
        observedGeneration: 2,
        message: "running",
        conditions: [
          {
            type: "Ready",
            status: "True",
            reason: "Deployed",
            message: "ready",
            lastTransitionTime: "2025-11-20T09:00:00Z",
          },
        ],
      };
    },
  },
  ...(["sources", "registries", "databaseConfig", "authConfig", "telemetryConfig"] as const).map(
    (field) => ({
      name: `configYAML together with ${field}`,
      mutate: (d: Doc) => {
        const legacy = legacyRegistry();
        const values: Record<string, unknown> = {
          sources: spec(legacy).sources,
          registries: spec(legacy).registries,
          databaseConfig: {
            dbAppUserPasswordSecretRef: secretRef,
            dbMigrationUserPasswordSecretRef: secretRef,
          },
          authConfig: { mode: "anonymous" },
          telemetryConfig: { enabled: false },
        };
        spec(d)[field] = values[field];
      },
      path: "/spec/configYAML",
      level: "cel" as const,
      message: "mutually exclusive with the legacy fields",
    }),
  ),
  {
    name: "neither configYAML nor sources",
    mutate: (d) => (d.spec = { displayName: "empty" }),
    path: "/spec/configYAML",
    level: "cel",
    message: "configYAML is required",
  },
  {
    name: "an empty configYAML",
    mutate: (d) => (spec(d).configYAML = ""),
    path: "/spec/configYAML",
    level: "schema",
  },
  {
    name: "spec missing",
    mutate: (d) => delete d.spec,
    path: "/spec",
    level: "schema",
  },
  {
    name: "a volumeMount without mountPath",
    mutate: (d) => (spec(d).volumeMounts = [{ name: "data" }]),
    path: "/spec/volumeMounts/0/mountPath",
    level: "schema",
  },
  {
    name: "pgpassSecretRef without key",
    mutate: (d) => (spec(d).pgpassSecretRef = { name: "pg" }),
    path: "/spec/pgpassSecretRef/key",
    level: "schema",
  },
  {
    name: "enforceServers that is not a boolean",
    mutate: (d) => (spec(d).enforceServers = "yes"),
    path: "/spec/enforceServers",
    level: "schema",
  },
  {
    name: "an unknown phase",
    mutate: (d) => (d.status = { phase: "Running" }),
    path: "/status/phase",
    level: "schema",
  },
];

const legacyCases: Case[] = [
  { name: "the legacy base", mutate: () => {} },
  {
    name: "legacy sources of every kind, database, auth and telemetry",
    mutate: (d) => {
      spec(d).sources = [
        ...(spec(d).sources as Doc[]),
        {
          name: "git",
          format: "upstream",
          git: {
            repository: "https://h/r.git",
            commit: "abc123",
            path: "r.json",
            auth: { username: "git", passwordSecretRef: secretRef },
          },
          syncPolicy: { interval: "1h" },
          filter: { tags: { include: ["prod"] } },
          claims: { org: "acme" },
        },
        { name: "api", api: { endpoint: "https://h" }, syncPolicy: { interval: "1h" } },
        { name: "url", url: { url: "https://h/r.json" }, syncPolicy: { interval: "1h" } },
        { name: "k8s", kubernetes: { namespaces: ["a"] }, filter: { names: { include: ["x"] } } },
      ];
      Object.assign(spec(d), {
        databaseConfig: {
          host: "db",
          port: 5432,
          user: "app",
          migrationUser: "mig",
          database: "reg",
          sslMode: "require",
          maxOpenConns: 10,
          maxIdleConns: 2,
          connMaxLifetime: "30m",
          maxMetaSize: 262144,
          dynamicAuth: { awsRdsIam: { region: "detect" } },
          dbAppUserPasswordSecretRef: secretRef,
          dbMigrationUserPasswordSecretRef: secretRef,
        },
        authConfig: {
          mode: "oauth",
          publicPaths: ["/metrics"],
          oauth: {
            resourceUrl: "https://registry.example.com",
            realm: "r",
            scopesSupported: ["read"],
            providers: [
              {
                ...legacyProvider,
                jwksUrl: "https://sso.example.com/keys",
                clientId: "reg",
                clientSecretRef: { name: "oauth", key: "clientSecret" },
                caCertRef: { name: "ca", key: "ca.crt" },
                authTokenRef: { name: "tok", key: "token" },
                introspectionUrl: "https://sso.example.com/introspect",
                allowPrivateIP: true,
              },
            ],
          },
          authz: { roles: { superAdmin: [{ groups: "admins" }] } },
        },
        telemetryConfig: { enabled: true, endpoint: "otel:4318", tracing: { sampling: "0.5" } },
      });
    },
  },
  {
    name: "legacy sources without registries",
    mutate: (d) => delete spec(d).registries,
  },
  {
    name: "legacy fields in v1beta1, which has configYAML only",
    mutate: (d) => (d.apiVersion = "toolhive.stacklok.dev/v1beta1"),
    path: "/spec/configYAML",
    level: "cel",
    message: "configYAML is required in v1beta1",
  },
  {
    name: "pgpassSecretRef with the legacy fields",
    mutate: (d) => (spec(d).pgpassSecretRef = secretRef),
    path: "/spec/pgpassSecretRef",
    level: "cel",
    message: "only with configYAML",
  },
  {
    name: "pgpassSecretRef with databaseConfig",
    mutate: (d) => {
      spec(d).pgpassSecretRef = secretRef;
      spec(d).databaseConfig = {
        dbAppUserPasswordSecretRef: secretRef,
        dbMigrationUserPasswordSecretRef: secretRef,
      };
    },
    path: "/spec/pgpassSecretRef",
    level: "cel",
    message: "pgpassSecretRef and databaseConfig are mutually exclusive",
  },
  {
    name: "volumes without configYAML",
    mutate: (d) => (spec(d).volumes = [{ name: "v", emptyDir: {} }]),
    path: "/spec/volumes",
    level: "cel",
  },
  {
    name: "volumeMounts without configYAML",
    mutate: (d) => (spec(d).volumeMounts = [{ name: "v", mountPath: "/v" }]),
    path: "/spec/volumeMounts",
    level: "cel",
  },
  {
    name: "two managed legacy sources",
    mutate: (d) => ((spec(d).sources as Doc[])[0] = { name: "catalog", managed: {} }),
    path: "/spec/sources",
    level: "cel",
  },
  {
    name: "duplicate legacy source names",
    mutate: (d) => (src(spec(d), 1).name = "catalog"),
    path: "/spec/sources",
    level: "cel",
    message: "source names must be unique",
  },
  {
    name: "duplicate legacy registry names",
    mutate: (d) =>
      (spec(d).registries = [
        { name: "default", sources: ["team"] },
        { name: "default", sources: ["catalog"] },
      ]),
    path: "/spec/registries",
    level: "cel",
    message: "registry names must be unique",
  },
  {
    name: "a legacy registry naming an undefined source",
    mutate: (d) => (reg(spec(d), 0).sources = ["missing"]),
    path: "/spec/registries",
    level: "cel",
    message: "must be defined in sources",
  },
  {
    name: "more than 20 legacy sources",
    mutate: (d) => {
      spec(d).sources = Array.from({ length: 21 }, (_, i) => ({
        name: `s${i}`,
        api: { endpoint: "https://h" },
        syncPolicy: { interval: "1h" },
      }));
      delete spec(d).registries;
    },
    path: "/spec/sources",
    level: "schema",
  },
  {
    name: "more than 20 legacy registries",
    mutate: (d) =>
      (spec(d).registries = Array.from({ length: 21 }, (_, i) => ({
        name: `r${i}`,
        sources: ["team"],
      }))),
    path: "/spec/registries",
    level: "schema",
  },
  {
    name: "a legacy source with two kinds",
    mutate: (d) => (src(spec(d), 0).api = { endpoint: "https://h" }),
    path: "/spec/sources/0",
    level: "cel",
    message: "exactly one of configMapRef, git, api, url, managed and kubernetes",
  },
  {
    name: "a legacy source with no kind",
    mutate: (d) => delete src(spec(d), 1).managed,
    path: "/spec/sources/1",
    level: "cel",
  },
  {
    name: "a legacy file source (the config-file kind)",
    mutate: (d) => {
      delete src(spec(d), 0).configMapRef;
      src(spec(d), 0).file = { path: "/data/r.json" };
    },
    path: "/spec/sources/0",
    level: "cel",
  },
  {
    name: "legacy syncPolicy missing on a configMapRef source",
    mutate: (d) => delete src(spec(d), 0).syncPolicy,
    path: "/spec/sources/0/syncPolicy",
    level: "cel",
  },
  {
    name: "legacy format not toolhive or upstream",
    mutate: (d) => (src(spec(d), 0).format = "yaml"),
    path: "/spec/sources/0/format",
    level: "schema",
  },
  {
    name: "legacy git branch and tag together",
    mutate: (d) => {
      delete src(spec(d), 0).configMapRef;
      src(spec(d), 0).git = { repository: "https://h/r.git", branch: "main", tag: "v1" };
    },
    path: "/spec/sources/0/git",
    level: "cel",
    message: "mutually exclusive",
  },
  {
    name: "legacy git auth without passwordSecretRef",
    mutate: (d) => {
      delete src(spec(d), 0).configMapRef;
      src(spec(d), 0).git = {
        repository: "https://h/r.git",
        auth: { username: "git", passwordFile: "/p" },
      };
    },
    path: "/spec/sources/0/git/auth/passwordSecretRef",
    level: "schema",
  },
  {
    name: "databaseConfig without dbAppUserPasswordSecretRef",
    mutate: (d) => (spec(d).databaseConfig = { dbMigrationUserPasswordSecretRef: secretRef }),
    path: "/spec/databaseConfig/dbAppUserPasswordSecretRef",
    level: "schema",
  },
  {
    name: "databaseConfig without dbMigrationUserPasswordSecretRef",
    mutate: (d) => (spec(d).databaseConfig = { dbAppUserPasswordSecretRef: secretRef }),
    path: "/spec/databaseConfig/dbMigrationUserPasswordSecretRef",
    level: "schema",
  },
  {
    name: "databaseConfig port above 65535",
    mutate: (d) =>
      (spec(d).databaseConfig = {
        port: 70000,
        dbAppUserPasswordSecretRef: secretRef,
        dbMigrationUserPasswordSecretRef: secretRef,
      }),
    path: "/spec/databaseConfig/port",
    level: "schema",
  },
  {
    name: "databaseConfig maxIdleConns above maxOpenConns",
    mutate: (d) =>
      (spec(d).databaseConfig = {
        maxOpenConns: 1,
        maxIdleConns: 2,
        dbAppUserPasswordSecretRef: secretRef,
        dbMigrationUserPasswordSecretRef: secretRef,
      }),
    path: "/spec/databaseConfig/maxIdleConns",
    level: "cel",
  },
  {
    name: "duplicate legacy provider names",
    mutate: (d) =>
      (spec(d).authConfig = {
        mode: "oauth",
        oauth: { providers: [legacyProvider, legacyProvider] },
      }),
    path: "/spec/authConfig/oauth/providers",
    level: "cel",
    message: "provider names must be unique",
  },
  {
    name: "authConfig oauth mode without oauth",
    mutate: (d) => (spec(d).authConfig = { mode: "oauth" }),
    path: "/spec/authConfig/oauth",
    level: "cel",
  },
  {
    name: "authConfig public path not starting with /",
    mutate: (d) => (spec(d).authConfig = { publicPaths: ["x"] }),
    path: "/spec/authConfig/publicPaths/0",
    level: "schema",
  },
  {
    name: "legacy oauth without providers",
    mutate: (d) => (spec(d).authConfig = { mode: "oauth", oauth: { providers: [] } }),
    path: "/spec/authConfig/oauth/providers",
    level: "schema",
  },
  {
    name: "legacy provider with caCertRef and caCertPath",
    mutate: (d) =>
      (spec(d).authConfig = {
        mode: "oauth",
        oauth: {
          providers: [{ ...legacyProvider, caCertRef: { key: "ca.crt" }, caCertPath: "/ca" }],
        },
      }),
    path: "/spec/authConfig/oauth/providers/0/caCertPath",
    level: "cel",
  },
  {
    name: "legacy provider with authTokenRef and authTokenFile",
    mutate: (d) =>
      (spec(d).authConfig = {
        mode: "oauth",
        oauth: {
          providers: [{ ...legacyProvider, authTokenRef: secretRef, authTokenFile: "/t" }],
        },
      }),
    path: "/spec/authConfig/oauth/providers/0/authTokenFile",
    level: "cel",
  },
  {
    name: "legacy provider issuerUrl that is not http(s)",
    mutate: (d) =>
      (spec(d).authConfig = {
        mode: "oauth",
        oauth: { providers: [{ ...legacyProvider, issuerUrl: "sso" }] },
      }),
    path: "/spec/authConfig/oauth/providers/0/issuerUrl",
    level: "schema",
  },
  {
    name: "legacy telemetry sampling above 1",
    mutate: (d) => (spec(d).telemetryConfig = { tracing: { sampling: "2" } }),
    path: "/spec/telemetryConfig/tracing/sampling",
    level: "schema",
  },
];

describe("MCPRegistry schema", () => {
  describe("configYAML form", () => {
    it.each(configYamlCases)("$name", (c) => {
      const doc = configYamlRegistry();
      c.mutate(doc);
      expectCase(issuesOf("MCPRegistry", doc), c);
    });
  });

  describe("legacy typed form", () => {
    it.each(legacyCases)("$name", (c) => {
      const doc = legacyRegistry();
      c.mutate(doc);
      expectCase(issuesOf("MCPRegistry", doc), c);
    });
  });

  it("marks the five legacy fields deprecated", () => {
    const root = schemaFile("crd/mcpregistry.yaml");
    const defs = root.$defs as Record<string, SchemaNode>;
    const props = defs.MCPRegistrySpec?.properties as Record<string, SchemaNode>;
    for (const field of [
      "sources",
      "registries",
      "databaseConfig",
      "authConfig",
      "telemetryConfig",
    ])
      expect(props[field]?.deprecated, field).toBe(true);
    for (const field of ["configYAML", "volumes", "pgpassSecretRef"])
      expect(props[field]?.deprecated, field).toBeUndefined();
  });

  it("declares short names and printer columns", () => {
    const crd = schemaFile("crd/mcpregistry.yaml")["x-mcpfleet-crd"] as SchemaNode;
    expect(crd.shortNames).toEqual(["mcpreg", "registry"]);
    const columns = crd.printerColumns as { name: string; jsonPath: string }[];
    expect(columns.map((c) => [c.name, c.jsonPath])).toEqual([
      ["Phase", ".status.phase"],
      ["URL", ".status.url"],
      ["Ready", ".status.readyReplicas"],
      ["Age", ".metadata.creationTimestamp"],
    ]);
  });
});

describe("CEL rules", () => {
  /** The message of every rule in a schema file. */
  function ruleMessages(file: string): string[] {
    const out: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node !== null && typeof node === "object") {
        const rules = (node as SchemaNode)["x-kubernetes-validations"] as
          { message: string }[] | undefined;
        for (const r of rules ?? []) out.push(r.message);
        Object.values(node).forEach(walk);
      }
    };
    walk(schemaFile(file));
    return out;
  }

  it("each rule of both files is exercised by an invalid case with the rule's message", () => {
    const seen = new Set<string>();
    const collect = (issues: SchemaIssue[]): void => {
      for (const i of issues) if (i.level === "cel") seen.add(i.message);
    };
    for (const c of configCases.filter((k) => k.level === "cel")) {
      const doc = baseConfig();
      c.mutate(doc);
      collect(configIssues(doc));
    }
    for (const [cases, base] of [
      [configYamlCases, configYamlRegistry],
      [legacyCases, legacyRegistry],
    ] as const) {
      for (const c of cases.filter((k) => k.level === "cel")) {
        const doc = base();
        c.mutate(doc);
        collect(issuesOf("MCPRegistry", doc));
      }
    }
    const config = ruleMessages("config/registry-server.yaml");
    const crd = ruleMessages("crd/mcpregistry.yaml");
    expect([config.length, crd.length]).toEqual([16, 19]);
    expect([...config, ...crd].filter((m) => !seen.has(m))).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Defaults are valid against their own schema
// ---------------------------------------------------------------------------------------------

interface DefaultSite {
  ref: string;
  pointer: string[];
  value: unknown;
}

/** Every `default` under a `$defs` entry's (nested, inline) properties. */
function defaultSites(file: string, id: string): DefaultSite[] {
  const defs = schemaFile(file).$defs as Record<string, SchemaNode>;
  const out: DefaultSite[] = [];
  const walk = (ref: string, node: SchemaNode, pointer: string[]): void => {
    const props = (node.properties ?? {}) as Record<string, SchemaNode>;
    for (const [name, sub] of Object.entries(props)) {
      if ("default" in sub) out.push({ ref, pointer: [...pointer, name], value: sub.default });
      walk(ref, sub, [...pointer, name]);
    }
  };
  for (const [name, def] of Object.entries(defs)) walk(`${id}#/$defs/${name}`, def, []);
  return out;
}

function nest(pointer: string[], value: unknown): unknown {
  return pointer.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
}

describe("defaults", () => {
  const sites = [
    ...defaultSites("config/registry-server.yaml", CONFIG),
    ...defaultSites("crd/mcpregistry.yaml", CRD),
  ];

  it("covers the documented defaults", () => {
    const names = sites.map((s) => `${s.ref.split("/").pop()}.${s.pointer.join(".")}`);
    expect(names).toEqual(
      expect.arrayContaining([
        "AuthConfig.mode",
        "OAuthConfig.realm",
        "OAuthConfig.scopesSupported",
        "DatabaseConfig.host",
        "DatabaseConfig.port",
        "DatabaseConfig.sslMode",
        "DatabaseConfig.maxMetaSize",
        "GitSource.path",
        "RegistryTelemetryConfig.tracing.sampling",
        "MCPRegistryAuthConfig.mode",
        "MCPRegistrySourceConfig.format",
      ]),
    );
  });

  it.each(sites.map((s) => [`${s.ref.split("/").pop()}.${s.pointer.join(".")}`, s] as const))(
    "%s",
    (_name, site) => {
      const issues = defaultSchemaSet().validateSchema(site.ref, nest(site.pointer, site.value));
      const at = "/" + site.pointer.join("/");
      expect(issues.filter((i) => i.path === at || i.path.startsWith(at + "/"))).toEqual([]);
    },
  );
});

// ---------------------------------------------------------------------------------------------
// Examples
// ---------------------------------------------------------------------------------------------

describe("examples", () => {
  it.each([
    "examples/registry/config-anonymous.yaml",
    "examples/registry/config-oauth.yaml",
    "examples/registry/config-postgres.yaml",
  ])("%s is a valid config", (path) => {
    expect(configIssues(readYaml(path))).toEqual([]);
  });

  it("config-anonymous uses anonymous mode, the embedded store, a file and a managed source", () => {
    const doc = readYaml("examples/registry/config-anonymous.yaml");
    expect(auth(doc).mode).toBe("anonymous");
    expect(doc.database).toEqual({ embedded: {} });
    expect(src(doc, 0).file).toEqual({ path: "data/registry.json" });
    expect(src(doc, 1).managed).toEqual({});
    expect(doc.registries).toEqual([{ name: "default", sources: ["catalog", "team"] }]);
  });

  it.each([
    "examples/resources/mcpregistry-configyaml.yaml",
    "examples/resources/mcpregistry-legacy.yaml",
  ])("%s is a valid MCPRegistry", (path) => {
    const doc = readYaml(path);
    expectValid("MCPRegistry", doc);
    expect((doc.metadata as Doc).namespace).toBeUndefined();
    const configYAML = spec(doc).configYAML as string | undefined;
    if (configYAML !== undefined) expect(configIssues(parse(configYAML))).toEqual([]);
  });

  it.skipIf(
    !hasSharedData(join(SHARED_DATA, "upstream-format"), "the sample catalog against server.json"),
  )("the sample catalog is an upstream registry file of valid server.json documents", () => {
    const data = JSON.parse(
      readFileSync(join(ROOT, "examples/registry/data/registry.json"), "utf8"),
    ) as { version: string; meta: { last_updated: string }; data: { servers: Doc[] } };
    expect(data.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(Number.isNaN(Date.parse(data.meta.last_updated))).toBe(false);
    const servers = data.data.servers;
    expect(servers.length).toBeGreaterThanOrEqual(6);
    expect(servers.length).toBeLessThanOrEqual(10);
    const serverSchema = JSON.parse(
      readFileSync(join(SHARED_DATA, "upstream-format/server.schema.json"), "utf8"),
    ) as SchemaNode;
    delete serverSchema.$schema;
    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    const validate = ajv.compile(serverSchema);
    for (const server of servers) {
      expect(validate(server), `${String(server.name)}: ${JSON.stringify(validate.errors)}`).toBe(
        true,
      );
    }
    expect(new Set(servers.map((s) => s.name)).size).toBe(servers.length);
  });
});
