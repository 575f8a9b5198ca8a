import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type * as T from "../../generated/types.js";
import { parseConfig } from "../../src/registry/config/load.js";
import { defaultSchemaSet, REGISTRY_CONFIG_SCHEMA_ID } from "../../src/schema/index.js";
import {
  legacyRegistryConfig,
  registryConfigYaml,
  renderMCPRegistry,
} from "../../src/synth/constructs/mcpregistry.js";
import { CONFIG_CHECKSUM_ANNOTATION } from "../../src/synth/constructs/vmcp/index.js";
import { contentHash } from "../../src/synth/hash.js";
import { checkObjects } from "../../src/synth/kube-check.js";
import { loadTexts, resourcesOfText } from "../../src/synth/load.js";
import type { KubeObject, Resource } from "../../src/synth/model.js";
import { DEFAULT_SYNTH_OPTIONS, withRegistryServer } from "../../src/synth/options.js";
import { synthesize } from "../../src/synth/render.js";
import { projectVersion } from "../../src/project.js";
import { REFERENCE_RESOURCES } from "../schema/helpers.js";
import { hasSharedData } from "../support/shared-data.js";

const only = { MCPRegistry: renderMCPRegistry };

async function load(text: string): Promise<Resource[]> {
  const result = await loadTexts([{ name: "registry.yaml", text }], { namespace: "reg" });
  if (!result.valid) {
    throw new Error(
      result.report.resources
        .flatMap((r) => r.errors.map((e) => `${e.path}: ${e.message}`))
        .join("\n"),
    );
  }
  return result.resources;
}

function find(objects: KubeObject[], kind: string, name: string): KubeObject {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (o === undefined) throw new Error(`no ${kind}/${name}`);
  return o;
}

interface Pod {
  metadata: { annotations: Record<string, string> };
  spec: {
    initContainers?: Record<string, unknown>[];
    containers: {
      name: string;
      args?: string[];
      env?: { name: string; value?: string }[];
      volumeMounts?: { name: string; mountPath: string }[];
      [k: string]: unknown;
    }[];
    volumes: { name: string; [k: string]: unknown }[];
    [k: string]: unknown;
  };
}

function pod(objects: KubeObject[], name: string): Pod {
  return (find(objects, "Deployment", `${name}-api`).spec as { template: Pod }).template;
}

function api(objects: KubeObject[], name: string): Pod["spec"]["containers"][number] {
  const c = pod(objects, name).spec.containers.find((x) => x.name === "registry-api");
  if (c === undefined) throw new Error("no registry-api container");
  return c;
}

const CONFIG_YAML = `sources:
  - name: local
    file: {path: /data/registry.json}
registries:
  - name: default
    sources: [local]
auth: {mode: anonymous}
`;

const VERBATIM = `
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPRegistry
metadata: {name: verbatim}
spec:
  displayName: Verbatim
  configYAML: |
${CONFIG_YAML.split("\n")
  .map((l) => `    ${l}`)
  .join("\n")}
  volumes:
    - name: catalog
      configMap: {name: catalog}
  volumeMounts:
    - name: catalog
      mountPath: /data
      readOnly: true
  pgpassSecretRef: {name: pg-pass, key: .pgpass}
  podTemplateSpec:
    spec:
      containers:
        - name: registry-api
          resources:
            limits: {memory: 512Mi}
`;

const LEGACY = `
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPRegistry
metadata: {name: legacy}
spec:
  sources:
    - name: catalog
      configMapRef: {name: catalog-cm, key: registry.json}
      syncPolicy: {interval: 10m}
      filter:
        names: {include: ["io.github.*"]}
    - name: repo
      format: upstream
      git:
        repository: https://git.example.com/catalog.git
        tag: v1.2.0
        auth:
          username: git
          passwordSecretRef: {name: git-creds, key: token}
      syncPolicy: {interval: 1h}
    - name: upstream
      api: {endpoint: https://registry.modelcontextprotocol.io}
      syncPolicy: {interval: 30m}
    - name: hosted
      url: {url: https://example.com/registry.json}
      syncPolicy: {interval: 2h}
    - name: published
      managed: {}
    - name: cluster
      kubernetes: {namespaces: [team-a]}
  databaseConfig:
    host: pg.db.svc
    port: 5433
    sslMode: verify-full
    maxOpenConns: 20
    dbAppUserPasswordSecretRef: {name: db-passwords, key: app}
    dbMigrationUserPasswordSecretRef: {name: db-passwords, key: migrator}
  authConfig:
    mode: oauth
    publicPaths: [/docs]
    oauth:
      realm: corp
      providers:
        - name: corp
          issuerUrl: https://sso.example.com
          audience: registry
          clientId: registry
          clientSecretRef: {name: oauth-client-creds, key: clientSecret}
          caCertRef: {name: corp-ca, key: ca.crt}
          authTokenRef: {name: sa-token, key: token}
        - name: other
          issuerUrl: https://other.example.com
          audience: registry
          caCertPath: /etc/ssl/other.pem
    authz:
      roles:
        superAdmin:
          - groups: admins
  telemetryConfig:
    enabled: true
    endpoint: otel:4318
    tracing: {enabled: true, sampling: "0.1"}
`;

/** Secret values: the rendered ConfigMaps must contain none of them, nor the Secret names. */
const SECRETS = `
apiVersion: v1
kind: Secret
metadata: {name: git-creds}
stringData: {token: git-token-VALUE-1}
---
apiVersion: v1
kind: Secret
metadata: {name: db-passwords}
stringData: {app: db-app-VALUE-2, migrator: db-migrator-VALUE-3}
---
apiVersion: v1
kind: Secret
metadata: {name: oauth-client-creds}
stringData: {clientSecret: oauth-client-VALUE-4}
---
apiVersion: v1
kind: Secret
metadata: {name: pg-pass}
stringData: {.pgpass: "pg:5432:registry:app:pgpass-VALUE-5"}
`;

describe("MCPRegistry with configYAML", async () => {
  const objectsInput = await load(VERBATIM);
  const objects = synthesize(objectsInput, undefined, only).objects;

  it("holds configYAML verbatim in <name>-registry-server-config", () => {
    const cm = find(objects, "ConfigMap", "verbatim-registry-server-config");
    expect((cm.data as Record<string, string>)["config.yaml"]).toBe(CONFIG_YAML);
  });

  it("runs this project's registry serve on port http 8080, probed there, with a writable /tmp", () => {
    const c = api(objects, "verbatim");
    expect(c.image).toBe(`ghcr.io/mcpfleet/mcpfleet:${projectVersion()}`);
    expect(c.args).toEqual([
      "registry",
      "serve",
      "--config=/config/config.yaml",
      "--address=0.0.0.0",
      "--port=8080",
    ]);
    expect(c.ports).toEqual([{ name: "http", containerPort: 8080, protocol: "TCP" }]);
    expect((c.readinessProbe as { httpGet: unknown }).httpGet).toEqual({
      path: "/readiness",
      port: 8080,
    });
    expect((c.livenessProbe as { httpGet: unknown }).httpGet).toEqual({
      path: "/health",
      port: 8080,
    });
    expect(c.volumeMounts).toContainEqual({ name: "tmp", mountPath: "/tmp" });
    expect(pod(objects, "verbatim").spec.volumes).toContainEqual({ name: "tmp", emptyDir: {} });
    // The pgpass copy runs in the server's own image, which has a shell.
    expect(pod(objects, "verbatim").spec.initContainers?.[0]?.image).toBe(c.image);
    const svc = find(objects, "Service", "verbatim-api").spec as Record<string, unknown>;
    expect(svc.ports).toEqual([{ name: "http", port: 8080, targetPort: 8080, protocol: "TCP" }]);
  });

  it("runs the reference's server with serve --config=/config/config.yaml when asked", () => {
    const reference = synthesize(
      objectsInput,
      withRegistryServer(DEFAULT_SYNTH_OPTIONS, "toolhive"),
      only,
    ).objects;
    const c = api(reference, "verbatim");
    expect(c.args).toEqual(["serve", "--config=/config/config.yaml"]);
    expect(c.image).toBe("ghcr.io/stacklok/thv-registry-api:v1.5.2");
    expect(c.ports).toEqual([{ name: "http", containerPort: 8080, protocol: "TCP" }]);
    // That server answers its health endpoints on its internal port only.
    expect((c.readinessProbe as { httpGet: unknown }).httpGet).toEqual({
      path: "/readiness",
      port: 8081,
    });
    expect((c.livenessProbe as { httpGet: unknown }).httpGet).toEqual({
      path: "/health",
      port: 8081,
    });
    expect(c.volumeMounts).not.toContainEqual({ name: "tmp", mountPath: "/tmp" });
    expect(pod(reference, "verbatim").spec.initContainers?.[0]?.image).toBe("busybox:1.37");
    const svc = find(reference, "Service", "verbatim-api").spec as Record<string, unknown>;
    expect(svc.ports).toEqual([{ name: "http", port: 8080, targetPort: 8080, protocol: "TCP" }]);
  });

  it("adds spec.volumes and spec.volumeMounts", () => {
    expect(pod(objects, "verbatim").spec.volumes).toContainEqual({
      name: "catalog",
      configMap: { name: "catalog" },
    });
    expect(api(objects, "verbatim").volumeMounts).toContainEqual({
      name: "catalog",
      mountPath: "/data",
      readOnly: true,
    });
  });

  it("copies the pgpass file into an emptyDir with mode 0600 and points PGPASSFILE at it", () => {
    const p = pod(objects, "verbatim");
    const init = p.spec.initContainers ?? [];
    expect(init).toHaveLength(1);
    expect(JSON.stringify(init[0]?.command)).toContain("chmod 0600 /pgpass/.pgpass");
    expect(p.spec.volumes).toContainEqual({
      name: "pgpass-secret",
      secret: { secretName: "pg-pass", items: [{ key: ".pgpass", path: "pgpass" }] },
    });
    expect(p.spec.volumes).toContainEqual({ name: "pgpass", emptyDir: { medium: "Memory" } });
    expect(api(objects, "verbatim").env).toContainEqual({
      name: "PGPASSFILE",
      value: "/pgpass/.pgpass",
    });
    // The init container and the server run as one user, so the server owns the 0600 file.
    expect((p.spec.securityContext as { runAsUser: number }).runAsUser).toBe(65532);
  });

  it("merges podTemplateSpec into registry-api and carries the config checksum", () => {
    expect(api(objects, "verbatim").resources).toEqual({
      requests: { cpu: "100m", memory: "128Mi" },
      limits: { cpu: "500m", memory: "512Mi" },
    });
    expect(pod(objects, "verbatim").metadata.annotations[CONFIG_CHECKSUM_ANNOTATION]).toBe(
      contentHash(CONFIG_YAML),
    );
    expect(find(objects, "Deployment", "verbatim-api").metadata.annotations).toEqual({
      "mcpfleet.dev/display-name": "Verbatim",
    });
  });

  it("renders RBAC <name>-registry-api reading only the kinds our kubernetes source lists", () => {
    const role = find(objects, "Role", "verbatim-registry-api");
    expect(role.rules).toEqual([
      {
        apiGroups: ["toolhive.stacklok.dev"],
        resources: ["mcpservers", "mcpremoteproxies", "virtualmcpservers"],
        verbs: ["get", "list", "watch"],
      },
    ]);
    expect(find(objects, "RoleBinding", "verbatim-registry-api").subjects).toEqual([
      { kind: "ServiceAccount", name: "verbatim-registry-api", namespace: "reg" },
    ]);
    expect(pod(objects, "verbatim").spec.serviceAccountName).toBe("verbatim-registry-api");
  });

  it("gives the reference's server the services, leases and events it uses as well", () => {
    const reference = synthesize(
      objectsInput,
      withRegistryServer(DEFAULT_SYNTH_OPTIONS, "toolhive"),
      only,
    ).objects;
    const role = find(reference, "Role", "verbatim-registry-api");
    const rules = role.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    const resources = rules.flatMap((r) => r.resources);
    for (const r of [
      "mcpservers",
      "mcpremoteproxies",
      "virtualmcpservers",
      "services",
      "leases",
      "events",
    ]) {
      expect(resources).toContain(r);
    }
    expect(resources).not.toContain("secrets");
  });

  it("passes the Kubernetes checks", () => {
    expect(checkObjects(objects)).toEqual([]);
  });
});

describe("MCPRegistry with the legacy typed fields", async () => {
  const resources = await load(LEGACY);
  const objects = synthesize(resources, undefined, only).objects;
  const text = (
    find(objects, "ConfigMap", "legacy-registry-server-config").data as Record<string, string>
  )["config.yaml"];
  const config = parse(text ?? "") as T.EmbeddedRegistryServerConfig;

  it("renders a config.yaml valid against the registry config schema", () => {
    expect(defaultSchemaSet().validateSchema(REGISTRY_CONFIG_SCHEMA_ID, config)).toEqual([]);
  });

  it("renders a config.yaml the registry server's loader accepts without warnings", () => {
    expect(parseConfig(text ?? "", "config.yaml").warnings).toEqual([]);
  });

  it("turns a configMapRef source into a mounted file source", () => {
    expect(config.sources[0]).toEqual({
      name: "catalog",
      format: "toolhive",
      syncPolicy: { interval: "10m" },
      filter: { names: { include: ["io.github.*"] } },
      file: { path: "/etc/registry/sources/catalog/registry.json" },
    });
  });

  it("mounts the git password from its Secret as a file", () => {
    expect(config.sources[1]?.git).toEqual({
      repository: "https://git.example.com/catalog.git",
      tag: "v1.2.0",
      auth: { username: "git", passwordFile: "/etc/registry/git/repo/password" },
    });
  });

  it("keeps api, url, managed and kubernetes sources; format defaults to toolhive", () => {
    expect(config.sources.slice(2)).toEqual([
      {
        name: "upstream",
        format: "toolhive",
        syncPolicy: { interval: "30m" },
        api: { endpoint: "https://registry.modelcontextprotocol.io" },
      },
      {
        name: "hosted",
        format: "toolhive",
        syncPolicy: { interval: "2h" },
        url: { url: "https://example.com/registry.json" },
      },
      { name: "published", format: "toolhive", managed: {} },
      { name: "cluster", format: "toolhive", kubernetes: { namespaces: ["team-a"] } },
    ]);
  });

  it("adds one registry named default over all sources when registries are absent", () => {
    expect(config.registries).toEqual([
      {
        name: "default",
        sources: ["catalog", "repo", "upstream", "hosted", "published", "cluster"],
      },
    ]);
  });

  it("renders the database section with password files from the Secrets", () => {
    expect(config.database).toEqual({
      host: "pg.db.svc",
      port: 5433,
      user: "db_app",
      migrationUser: "db_migrator",
      database: "registry",
      sslMode: "verify-full",
      maxOpenConns: 20,
      passwordFile: "/etc/registry/database/app-password",
      migrationPasswordFile: "/etc/registry/database/migration-password",
    });
  });

  it("writes the passwords into a pgpass file for the reference's server, which reads no password files", async () => {
    const reference = synthesize(
      await load(LEGACY),
      withRegistryServer(DEFAULT_SYNTH_OPTIONS, "toolhive"),
      only,
    ).objects;
    const cm = find(reference, "ConfigMap", "legacy-registry-server-config");
    const database = (
      parse((cm.data as Record<string, string>)["config.yaml"]!) as T.EmbeddedRegistryServerConfig
    ).database;
    expect(database?.passwordFile).toBeUndefined();
    expect(database?.migrationPasswordFile).toBeUndefined();
    const p = pod(reference, "legacy");
    const init = p.spec.initContainers?.[0];
    expect(init?.image).toBe("busybox:1.37");
    const script = (init?.command as string[] | undefined)?.[2] ?? "";
    expect(script).toContain("'pg.db.svc' '5433' 'registry' 'db_app'");
    expect(script).toContain("/etc/registry/database/app-password");
    expect(script).toContain("chmod 0600 /pgpass/.pgpass");
    expect(api(reference, "legacy").env).toContainEqual({
      name: "PGPASSFILE",
      value: "/pgpass/.pgpass",
    });
  });

  it("renders the auth section: secrets, CA certificates and tokens as mounted files", () => {
    expect(config.auth).toEqual({
      mode: "oauth",
      publicPaths: ["/docs"],
      authz: { roles: { superAdmin: [{ groups: "admins" }] } },
      oauth: {
        resourceUrl: "http://legacy-api.reg.svc.cluster.local:8080",
        realm: "corp",
        providers: [
          {
            name: "corp",
            issuerUrl: "https://sso.example.com",
            audience: "registry",
            clientId: "registry",
            clientSecretFile: "/etc/registry/oauth/0/client-secret",
            caCertPath: "/etc/registry/oauth/0/ca.crt",
            authTokenFile: "/etc/registry/oauth/0/token",
          },
          {
            name: "other",
            issuerUrl: "https://other.example.com",
            audience: "registry",
            caCertPath: "/etc/ssl/other.pem",
          },
        ],
      },
    });
  });

  it("keeps telemetryConfig as the telemetry section", () => {
    expect(config.telemetry).toEqual({
      enabled: true,
      endpoint: "otel:4318",
      tracing: { enabled: true, sampling: "0.1" },
    });
  });

  it("projects every referenced Secret and ConfigMap key at the path the config names", () => {
    const volume = pod(objects, "legacy").spec.volumes.find(
      (v) => v.name === "registry-files",
    ) as unknown as {
      projected: {
        sources: Record<string, { name: string; items: { key: string; path: string }[] }>[];
      };
    };
    const files = volume.projected.sources.map((s) => {
      const [from, src] = Object.entries(s)[0] ?? [];
      return `${from}:${src?.name}/${src?.items[0]?.key}->${src?.items[0]?.path}`;
    });
    expect(files).toEqual([
      "configMap:catalog-cm/registry.json->sources/catalog/registry.json",
      "secret:git-creds/token->git/repo/password",
      "secret:oauth-client-creds/clientSecret->oauth/0/client-secret",
      "configMap:corp-ca/ca.crt->oauth/0/ca.crt",
      "secret:sa-token/token->oauth/0/token",
      "secret:db-passwords/app->database/app-password",
      "secret:db-passwords/migrator->database/migration-password",
    ]);
    expect(api(objects, "legacy").volumeMounts).toContainEqual({
      name: "registry-files",
      mountPath: "/etc/registry",
      readOnly: true,
    });
  });

  it("defaults to anonymous auth and writes no password files with dynamicAuth", async () => {
    const minimal = await load(`
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPRegistry
metadata: {name: minimal}
spec:
  sources:
    - name: published
      managed: {}
  databaseConfig:
    dynamicAuth: {awsRdsIam: {region: detect}}
    dbAppUserPasswordSecretRef: {name: db-passwords, key: app}
    dbMigrationUserPasswordSecretRef: {name: db-passwords, key: migrator}
`);
    const r = minimal[0] as Resource<"MCPRegistry">;
    const { config: c, files } = legacyRegistryConfig(r);
    expect(c.auth).toEqual({ mode: "anonymous" });
    expect(c.database).toEqual({
      port: 5432,
      user: "db_app",
      migrationUser: "db_migrator",
      database: "registry",
      dynamicAuth: { awsRdsIam: { region: "detect" } },
    });
    expect(files).toEqual([]);
    expect(
      defaultSchemaSet().validateSchema(REGISTRY_CONFIG_SCHEMA_ID, parse(registryConfigYaml(r))),
    ).toEqual([]);
  });

  it("passes the Kubernetes checks", () => {
    expect(checkObjects(objects)).toEqual([]);
  });

  it("never puts a secret value or a Secret name into a ConfigMap", async () => {
    const all = await load(`${LEGACY}\n---\n${VERBATIM}\n---\n${SECRETS}`);
    const rendered = synthesize(all, undefined, only).objects;
    const cms = rendered.filter((o) => o.kind === "ConfigMap").map((o) => JSON.stringify(o.data));
    expect(cms).toHaveLength(2);
    const values = [...SECRETS.matchAll(/VALUE-\d/g)].map((m) => m[0]);
    expect(values).toHaveLength(5);
    for (const cm of cms) {
      for (const v of values) expect(cm).not.toContain(v);
      for (const name of [
        "git-creds",
        "oauth-client-creds",
        "sa-token",
        "db-passwords",
        "pg-pass",
      ]) {
        expect(cm).not.toContain(name);
      }
    }
  });
});

describe("every MCPRegistry of the examples and the reference resources", () => {
  const withReference = hasSharedData(
    REFERENCE_RESOURCES,
    "MCPRegistries of the reference resources",
  );
  const dirs = [
    join(import.meta.dirname, "../../examples/resources"),
    ...(withReference ? [REFERENCE_RESOURCES] : []),
  ];
  const resources = dirs.flatMap((dir) =>
    readdirSync(dir)
      .filter((f) => f.endsWith(".yaml"))
      .sort()
      .flatMap((f) => resourcesOfText(readFileSync(join(dir, f), "utf8"), "default"))
      .filter((r) => r.kind === "MCPRegistry"),
  );
  const unique = [
    ...new Map(resources.map((r) => [`${r.metadata.namespace}/${r.metadata.name}`, r])).values(),
  ];

  it("renders objects that pass the Kubernetes checks", () => {
    expect(unique.length).toBeGreaterThan(withReference ? 3 : 1);
    const objects = synthesize(unique, undefined, only).objects;
    expect(objects.filter((o) => o.kind === "Deployment")).toHaveLength(unique.length);
    expect(checkObjects(objects)).toEqual([]);
  });

  it("renders legacy configurations the registry config schema accepts", () => {
    const legacy = unique.filter(
      (r) => (r as Resource<"MCPRegistry">).spec.configYAML === undefined,
    );
    expect(legacy.length).toBeGreaterThan(0);
    for (const r of legacy) {
      const c = parse(registryConfigYaml(r)) as unknown;
      expect(defaultSchemaSet().validateSchema(REGISTRY_CONFIG_SCHEMA_ID, c)).toEqual([]);
    }
  });
});
