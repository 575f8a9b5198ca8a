// Ready-to-copy configuration for one version: an MCPServer (this project's API) for an OCI
// package, an MCPRemoteProxy for a remote, and the JSON MCP clients read (`mcpServers`).
import { objects, str } from "./catalog.js";

type Obj = Record<string, unknown>;

export interface Snippet {
  title: string;
  language: "yaml" | "json";
  text: string;
}

/** A Kubernetes name from a server name: its last segment, DNS-1123 (at most 63 characters). */
export function resourceName(serverName: string): string {
  const last = serverName.split("/").pop() ?? serverName;
  const n = last
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63)
    .replace(/-+$/g, "");
  return n === "" ? "mcp-server" : n;
}

/** An OCI reference pinned to `version`: its tag or digest replaced. */
export function pinnedImage(identifier: string, version: string): string {
  const at = identifier.indexOf("@");
  const base = at >= 0 ? identifier.slice(0, at) : identifier;
  const slash = base.lastIndexOf("/");
  const colon = base.lastIndexOf(":");
  const repo = colon > slash ? base.slice(0, colon) : base;
  return `${repo}:${version}`;
}

/** A YAML scalar that reads back as the same string. */
function y(v: string): string {
  return JSON.stringify(v);
}

function envVars(p: Obj): { name: string; secret: boolean; value?: string }[] {
  return objects(p.environmentVariables).flatMap((e) => {
    const name = str(e.name);
    if (name === undefined || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return [];
    const value = str(e.value) ?? str(e.default);
    return [{ name, secret: e.isSecret === true, ...(value !== undefined ? { value } : {}) }];
  });
}

function mcpServer(server: Obj, p: Obj, version: string): Snippet | undefined {
  const id = str(p.identifier);
  if (id === undefined) return undefined;
  const name = resourceName(str(server.name) ?? "");
  const transport = str((p.transport as Obj | undefined)?.type) ?? "stdio";
  const lines = [
    "apiVersion: toolhive.stacklok.dev/v1alpha1",
    "kind: MCPServer",
    "metadata:",
    `  name: ${name}`,
    "spec:",
    `  image: ${y(pinnedImage(id, str(p.version) ?? version))}`,
    `  transport: ${transport}`,
    "  proxyPort: 8080",
  ];
  if (transport === "stdio") lines.push("  proxyMode: streamable-http");
  else lines.push("  mcpPort: 8080");
  const vars = envVars(p);
  const plain = vars.filter((v) => !v.secret && v.value !== undefined);
  const secret = vars.filter((v) => v.secret);
  if (plain.length > 0) {
    lines.push("  env:");
    for (const v of plain)
      lines.push(`    - name: ${y(v.name)}`, `      value: ${y(v.value ?? "")}`);
  }
  if (secret.length > 0) {
    // The values live in a Secret the operator creates; the manifest names where.
    lines.push("  secrets:");
    for (const v of secret) {
      lines.push(
        `    - name: ${name}-secrets`,
        `      key: ${y(v.name.toLowerCase().replace(/_/g, "-"))}`,
        `      targetEnvName: ${y(v.name)}`,
      );
    }
  }
  return { title: "MCPServer manifest", language: "yaml", text: `${lines.join("\n")}\n` };
}

function remoteProxy(server: Obj, r: Obj): Snippet | undefined {
  const url = str(r.url);
  if (url === undefined) return undefined;
  const transport = str(r.type) === "sse" ? "sse" : "streamable-http";
  const text = [
    "apiVersion: toolhive.stacklok.dev/v1alpha1",
    "kind: MCPRemoteProxy",
    "metadata:",
    `  name: ${resourceName(str(server.name) ?? "")}`,
    "spec:",
    `  remoteURL: ${y(url)}`,
    `  transport: ${transport}`,
    "  proxyPort: 8080",
    "",
  ].join("\n");
  return { title: "MCPRemoteProxy manifest", language: "yaml", text };
}

function clientEntry(p: Obj, version: string): Obj | undefined {
  const id = str(p.identifier);
  if (id === undefined) return undefined;
  const v = str(p.version) ?? version;
  const env: Record<string, string> = {};
  for (const e of envVars(p)) env[e.name] = e.secret ? `<${e.name}>` : (e.value ?? "");
  const withEnv = Object.keys(env).length > 0 ? { env } : {};
  switch (str(p.registryType)) {
    case "oci":
      return {
        command: "docker",
        args: [
          "run",
          "-i",
          "--rm",
          ...Object.keys(env).flatMap((k) => ["-e", k]),
          pinnedImage(id, v),
        ],
        ...withEnv,
      };
    case "npm":
      return { command: "npx", args: ["-y", `${id}@${v}`], ...withEnv };
    case "pypi":
      return { command: "uvx", args: [`${id}==${v}`], ...withEnv };
    default:
      return undefined;
  }
}

/** The snippets of a version: manifests first, then the client configuration. */
export function snippetsOf(server: Obj, version: string): Snippet[] {
  const out: Snippet[] = [];
  const key = resourceName(str(server.name) ?? "");
  const packages = objects(server.packages);
  const remotes = objects(server.remotes);
  const oci = packages.find((p) => p.registryType === "oci");
  const manifest =
    oci !== undefined
      ? mcpServer(server, oci, version)
      : remotes[0] !== undefined
        ? remoteProxy(server, remotes[0])
        : undefined;
  if (manifest !== undefined) out.push(manifest);
  let client: Obj | undefined;
  for (const p of packages) {
    if (p.transport !== undefined && str((p.transport as Obj).type) !== "stdio") continue;
    client = clientEntry(p, version);
    if (client !== undefined) break;
  }
  if (client === undefined && remotes[0] !== undefined) {
    const url = str(remotes[0].url);
    if (url !== undefined) client = { type: str(remotes[0].type) === "sse" ? "sse" : "http", url };
  }
  if (client !== undefined) {
    out.push({
      title: "MCP client configuration",
      language: "json",
      text: `${JSON.stringify({ mcpServers: { [key]: client } }, null, 2)}\n`,
    });
  }
  return out;
}
