// `mcpfleet registry publish|status|list`: the registry server's write and read API from the
// command line, as the official registry has mcp-publisher, instead of curl. A server.json is
// checked locally with the rules the server applies (src/registry/formats/publish.ts) before
// it is sent; a refusal of the server is one line from its problem details (RFC 9457).
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { McpfleetError, isMcpfleetError } from "../errors.js";
import { publishedEntry } from "../registry/formats/publish.js";
import { FieldsError } from "../registry/http/problem.js";
import { parseCommandArgs, usageError } from "./args.js";
import { type Io, stdio } from "./io.js";

export const CLIENT_COMMANDS = ["publish", "status", "list"] as const;
export type ClientCommand = (typeof CLIENT_COMMANDS)[number];

const CONNECTION = `      --url URL              the registry's API base: http://HOST:PORT/REGISTRY (the path
                             before /v0.1; default $MCPFLEET_REGISTRY_URL)
      --token-file FILE      a bearer token to send (default $MCPFLEET_REGISTRY_TOKEN, if set)
  -h, --help                 show this help`;

const USAGES: Record<ClientCommand, string> = {
  publish: `Usage: mcpfleet registry publish FILE [options]

Publishes a server.json (JSON or YAML; with url and claims as the publish API takes them) into
the registry's managed source. The file is checked first with the server's own rules; nothing
is sent when it breaks one. Exit 0 published, 1 refused (locally or by the server), 2 usage.

${CONNECTION}`,
  status: `Usage: mcpfleet registry status NAME[@VERSION] --set active|deprecated|deleted [options]

Sets the lifecycle status of one version of a published server, or of every version when no
@VERSION is given. Exit 0 set, 1 refused, 2 usage.

      --set STATUS           active, deprecated or deleted
      --message TEXT         why (served as statusMessage; cleared when not given)
${CONNECTION}`,
  list: `Usage: mcpfleet registry list [options]

Lists the registry's servers: name@version, status, and "latest" for each name's latest version.

      --search TEXT          only servers whose name, title or description contains TEXT
      --include-deleted      deleted versions too
  -o, --output text|json     lines (default), or the servers as the API returns them
${CONNECTION}`,
};

const STATUSES = ["active", "deprecated", "deleted"] as const;

interface Connection {
  url: string;
  token: string | undefined;
}

function connection(
  command: ClientCommand,
  values: { url?: string | undefined; "token-file"?: string | undefined },
): Connection {
  const url = values.url ?? process.env.MCPFLEET_REGISTRY_URL;
  const name = `registry ${command}`;
  if (url === undefined || url === "") {
    throw usageError(
      name,
      "give the registry: --url http://HOST:PORT/REGISTRY (or set MCPFLEET_REGISTRY_URL)",
    );
  }
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error("scheme");
  } catch {
    throw usageError(name, `--url must be an http(s) URL, not "${url}"`);
  }
  let token = process.env.MCPFLEET_REGISTRY_TOKEN;
  const file = values["token-file"];
  if (file !== undefined) {
    if (file === "") throw usageError(name, "--token-file must not be empty");
    try {
      token = readFileSync(file, "utf8").trim();
    } catch (err) {
      throw new McpfleetError(
        "ERR_IO",
        `registry ${command}: cannot read the token file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
  }
  return { url: url.replace(/\/+$/, ""), token: token === "" ? undefined : token };
}

/** The problem details of a refusal as one line: status, title, detail, code. */
function refusal(command: ClientCommand, url: string, status: number, text: string): McpfleetError {
  let problem: { title?: unknown; detail?: unknown; code?: unknown } = {};
  try {
    problem = JSON.parse(text) as typeof problem;
  } catch {
    // Not problem details (a proxy's page): its status says enough.
  }
  const title = typeof problem.title === "string" ? problem.title : `HTTP ${status}`;
  const detail =
    typeof problem.detail === "string" && problem.detail !== "" ? `: ${problem.detail}` : "";
  const code = typeof problem.code === "string" ? ` (${problem.code})` : "";
  const hint =
    status === 401
      ? "; give a token with --token-file FILE or MCPFLEET_REGISTRY_TOKEN"
      : status === 403
        ? "; the token's claims or roles do not allow it"
        : "";
  return new McpfleetError(
    "ERR_BAD_REQUEST",
    `registry ${command}: ${url} answered ${status} ${title}${detail}${code}${hint}`,
  );
}

async function request(
  command: ClientCommand,
  conn: Connection,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const url = `${conn.url}${path}`;
  const headers: Record<string, string> = { accept: "application/json" };
  if (conn.token !== undefined) headers.authorization = `Bearer ${conn.token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    // fetch's error is "fetch failed"; the system error is its cause (or, when several
    // addresses were tried, the first of the cause's errors).
    const cause = (err as { cause?: NodeJS.ErrnoException & { errors?: NodeJS.ErrnoException[] } })
      .cause;
    const code = cause?.code ?? cause?.errors?.[0]?.code;
    const why =
      code === "ECONNREFUSED"
        ? "it refused the connection; is it running, and is --url right?"
        : code === "ENOTFOUND"
          ? "no such host; is --url right?"
          : (code ?? cause?.message ?? (err as Error).message);
    throw new McpfleetError("ERR_IO", `registry ${command}: cannot reach ${conn.url}: ${why}`);
  }
  const text = await res.text();
  if (!res.ok) throw refusal(command, `${method} ${url}`, res.status, text);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new McpfleetError(
      "ERR_BAD_REQUEST",
      `registry ${command}: ${url} answered ${res.status} with no JSON; is --url the registry's API base (http://HOST:PORT/REGISTRY)?`,
    );
  }
}

/** `a/b` as one path segment. */
const segment = (s: string): string => encodeURIComponent(s);

async function publish(file: string | undefined, conn: Connection, io: Io): Promise<number> {
  if (file === undefined)
    throw usageError("registry publish", "give the server.json file to publish");
  let body: unknown;
  try {
    const text = file === "-" ? readFileSync(0, "utf8") : readFileSync(file, "utf8");
    body = parseYaml(text) as unknown;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new McpfleetError(
      "ERR_IO",
      `registry publish: cannot read ${file}: ${e.code === "ENOENT" ? "no such file" : (e.message.split("\n")[0] ?? "")}`,
    );
  }
  // The server's own rules, so that a mistake is found before anything is sent. _meta's size
  // limit is the server's configuration; it decides that one.
  try {
    publishedEntry(body, Number.POSITIVE_INFINITY, { requireSchema: true });
  } catch (err) {
    if (err instanceof FieldsError) {
      for (const e of err.errors) io.err(`${file}: ${e.location}: ${e.message}`);
      throw new McpfleetError(
        "ERR_INVALID_ENTRY",
        `registry publish: ${file} breaks ${err.errors.length} rule(s) of the registry; nothing was sent`,
      );
    }
    if (isMcpfleetError(err)) {
      throw new McpfleetError(
        "ERR_INVALID_ENTRY",
        `registry publish: ${file}: ${err.message}; nothing was sent`,
      );
    }
    throw err;
  }
  const item = (await request("publish", conn, "POST", "/v0.1/publish", body)) as {
    server?: { name?: string; version?: string };
  };
  io.out(`published ${item.server?.name ?? "?"}@${item.server?.version ?? "?"} to ${conn.url}`);
  return 0;
}

async function setStatus(
  target: string | undefined,
  values: { set?: string | undefined; message?: string | undefined },
  conn: Connection,
  io: Io,
): Promise<number> {
  const name = "registry status";
  if (target === undefined || target === "") throw usageError(name, "give NAME or NAME@VERSION");
  const status = values.set;
  if (status === undefined || !(STATUSES as readonly string[]).includes(status)) {
    throw usageError(
      name,
      `--set must be ${STATUSES.join(", ")}${status === undefined ? "" : `, not "${status}"`}`,
    );
  }
  const at = target.lastIndexOf("@");
  const server = at > 0 ? target.slice(0, at) : target;
  const version = at > 0 ? target.slice(at + 1) : undefined;
  if (version === "") throw usageError(name, `no version after "@" in "${target}"`);
  const body = {
    status,
    ...(values.message !== undefined ? { statusMessage: values.message } : {}),
  };
  const path =
    version === undefined
      ? `/v0.1/servers/${segment(server)}/status`
      : `/v0.1/servers/${segment(server)}/versions/${segment(version)}/status`;
  const answer = (await request("status", conn, "PATCH", path, body)) as {
    metadata?: { count?: number };
  };
  const which =
    version === undefined
      ? `${answer.metadata?.count ?? "every"} version(s) of ${server}`
      : `${server}@${version}`;
  io.out(`${which}: ${status}${values.message !== undefined ? ` (${values.message})` : ""}`);
  return 0;
}

interface ListedItem {
  server?: { name?: string; version?: string };
  _meta?: Record<string, { status?: string; isLatest?: boolean; statusMessage?: string }>;
}

async function list(
  values: {
    search?: string | undefined;
    "include-deleted"?: boolean | undefined;
    output?: string | undefined;
  },
  conn: Connection,
  io: Io,
): Promise<number> {
  const output = values.output ?? "text";
  if (output !== "text" && output !== "json") {
    throw usageError("registry list", `-o must be text or json, not "${output}"`);
  }
  const items: ListedItem[] = [];
  let cursor: string | undefined;
  do {
    const query = new URLSearchParams({ limit: "100" });
    if (values.search !== undefined) query.set("search", values.search);
    if (values["include-deleted"] === true) query.set("include_deleted", "true");
    if (cursor !== undefined) query.set("cursor", cursor);
    const page = (await request("list", conn, "GET", `/v0.1/servers?${query.toString()}`)) as {
      servers?: ListedItem[];
      metadata?: { nextCursor?: string };
    };
    items.push(...(page.servers ?? []));
    cursor = page.metadata?.nextCursor || undefined;
  } while (cursor !== undefined);
  if (output === "json") {
    io.out(JSON.stringify({ servers: items }, null, 2));
    return 0;
  }
  for (const item of items) {
    const official = item._meta?.["io.modelcontextprotocol.registry/official"] ?? {};
    const notes = [official.status ?? "active", ...(official.isLatest === true ? ["latest"] : [])];
    const why = official.statusMessage !== undefined ? `: ${official.statusMessage}` : "";
    io.out(`${item.server?.name ?? "?"}@${item.server?.version ?? "?"}  ${notes.join(", ")}${why}`);
  }
  io.err(`${items.length} server version(s) at ${conn.url}`);
  return 0;
}

/** Runs `registry COMMAND ARGS`; the exit code. */
export async function runClient(
  command: ClientCommand,
  argv: string[],
  io: Io = stdio,
): Promise<number> {
  const name = `registry ${command}`;
  const { values, positionals } = parseCommandArgs(name, {
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      url: { type: "string" },
      "token-file": { type: "string" },
      set: { type: "string" },
      message: { type: "string" },
      search: { type: "string" },
      "include-deleted": { type: "boolean" },
      output: { type: "string", short: "o" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help === true) {
    console.log(USAGES[command]);
    return 0;
  }
  // Each command's own flags only: a flag of another is a mistake, not something to ignore.
  const own: Record<ClientCommand, readonly string[]> = {
    publish: [],
    status: ["set", "message"],
    list: ["search", "include-deleted", "output"],
  };
  for (const flag of ["set", "message", "search", "include-deleted", "output"] as const) {
    if (values[flag] !== undefined && !own[command].includes(flag)) {
      throw usageError(name, `--${flag} is not an option of registry ${command}`);
    }
  }
  const maxPositionals = command === "list" ? 0 : 1;
  if (positionals.length > maxPositionals) {
    throw usageError(name, `unexpected argument ${positionals[maxPositionals]}`);
  }
  const conn = connection(command, values);
  switch (command) {
    case "publish":
      return publish(positionals[0], conn, io);
    case "status":
      return setStatus(positionals[0], values, conn, io);
    case "list":
      return list(values, conn, io);
  }
}
