// The official MCP registry (built by `make peer-tools` from its Go module) and ours, fed the
// same catalog, answer the same requests of the MCP registry API at its own paths (/v0.1 and /v0
// at the root). Every difference in status, body or `Allow` header is printed, and each must be
// listed in docs/compat.md ("The official MCP registry") with its reason; a listed difference
// that no longer occurs fails too, so the table stays true both ways. Ours runs on PostgreSQL (as
// the official server must) and on the embedded store, and the two must answer alike.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegistryServer } from "../../src/registry/server.js";
import {
  ANONYMOUS_NAMESPACE,
  officialRegistryMissing,
  startOfficialRegistry,
  type OfficialRegistry,
} from "../support/official-registry.js";
import { postgresAvailable, startPostgres, type PostgresServer } from "../support/postgres.js";
import { startServer, untilReady } from "./helpers.js";
import { bodyDiffs, isObj } from "../support/body-diff.js";

const CATALOG = join(import.meta.dirname, "fixtures", "catalog-upstream.json");
const COMPAT_DOC = join(import.meta.dirname, "..", "..", "docs", "compat.md");
const SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

// One registry and no defaultRegistry: its API answers at the root, where clients of the
// official registry look for it.
const CONFIG = `
sources:
  - name: catalog
    file:
      path: ${CATALOG}
    syncPolicy:
      interval: 1h
  - name: team
    managed: {}
registries:
  - name: default
    sources: [catalog, team]
auth:
  mode: anonymous
`;

const NS = ANONYMOUS_NAMESPACE;
/** Published into both, in this order (not semver order). */
const PUBLISHED = [
  [`${NS}/multi`, "1.0.0"],
  [`${NS}/multi`, "2.0.0"],
  [`${NS}/multi`, "1.5.0"],
  [`${NS}/multi`, "2.1.0-beta.1"],
  [`${NS}/solo`, "0.1.0"],
] as const;

function serverJson(name: string, version: string): Record<string, unknown> {
  const short = name.split("/")[1] ?? name;
  return {
    $schema: SCHEMA,
    name,
    version,
    title: short,
    description: `The ${short} server, version ${version}`,
    remotes: [{ type: "streamable-http", url: `https://mcp.example.com/${short}` }],
  };
}

interface Answer {
  status: number;
  body: unknown;
  /** The `Allow` header of a 405, its methods sorted. */
  allow?: string;
}

interface Request {
  label: string;
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  body?: unknown;
  /** Sent with the official server's anonymous token (ours runs in anonymous mode). */
  auth?: boolean;
}

const MULTI = `${NS}%2Fmulti`;
const FETCH = "io.github.stacklok%2Ffetch";

/** The reads, after the publishes; each sent once to every server, under /v0.1 and /v0. */
function reads(v: string): Request[] {
  const servers = `/${v}/servers`;
  return [
    { label: `${v} list`, path: servers },
    { label: `${v} search by name`, path: `${servers}?search=git` },
    { label: `${v} search by description`, path: `${servers}?search=warehouse` },
    { label: `${v} search matching nothing`, path: `${servers}?search=zzz-nothing` },
    { label: `${v} version=latest`, path: `${servers}?version=latest` },
    { label: `${v} version=1.0.0`, path: `${servers}?version=1.0.0` },
    { label: `${v} updated_since`, path: `${servers}?updated_since=2000-01-01T00:00:00Z` },
    { label: `${v} limit=100`, path: `${servers}?limit=100` },
    { label: `${v} versions of a catalog server`, path: `${servers}/${FETCH}/versions` },
    { label: `${v} versions of a published server`, path: `${servers}/${MULTI}/versions` },
    { label: `${v} a version`, path: `${servers}/${MULTI}/versions/1.5.0` },
    { label: `${v} a pre-release version`, path: `${servers}/${MULTI}/versions/2.1.0-beta.1` },
    { label: `${v} latest`, path: `${servers}/${MULTI}/versions/latest` },
    { label: `${v} latest of a catalog server`, path: `${servers}/${FETCH}/versions/latest` },
    { label: `${v} versions of an unknown name`, path: `${servers}/io.example%2Fnope/versions` },
    { label: `${v} an unknown name`, path: `${servers}/io.example%2Fnope/versions/1.0.0` },
    { label: `${v} an unknown version`, path: `${servers}/${MULTI}/versions/9.9.9` },
    { label: `${v} limit=abc`, path: `${servers}?limit=abc` },
    { label: `${v} limit=0`, path: `${servers}?limit=0` },
    { label: `${v} limit=-1`, path: `${servers}?limit=-1` },
    { label: `${v} limit=1000`, path: `${servers}?limit=1000` },
    { label: `${v} a cursor never issued`, path: `${servers}?cursor=not-a-cursor` },
    { label: `${v} updated_since not a date`, path: `${servers}?updated_since=yesterday` },
    { label: `${v} health`, path: `/${v}/health` },
    { label: `${v} an unknown path`, path: `/${v}/nope` },
    { label: `${v} DELETE servers`, method: "DELETE", path: servers },
    { label: `${v} POST servers`, method: "POST", path: servers, body: {} },
    { label: `${v} GET publish`, path: `/${v}/publish` },
    { label: `${v} DELETE health`, method: "DELETE", path: `/${v}/health` },
  ];
}

/** Publishes the official registry refuses, or whose answer says how it checks them. */
const REFUSED: Request[] = [
  {
    label: "publish a version again",
    method: "POST",
    path: "/v0.1/publish",
    body: serverJson(`${NS}/solo`, "0.1.0"),
    auth: true,
  },
  {
    label: "publish without $schema",
    method: "POST",
    path: "/v0.1/publish",
    body: { ...serverJson(`${NS}/noschema`, "1.0.0"), $schema: undefined },
    auth: true,
  },
  {
    label: "publish with an unknown $schema",
    method: "POST",
    path: "/v0.1/publish",
    body: { ...serverJson(`${NS}/badschema`, "1.0.0"), $schema: "https://example.com/x.json" },
    auth: true,
  },
  {
    label: "publish without a description",
    method: "POST",
    path: "/v0.1/publish",
    body: { ...serverJson(`${NS}/nodesc`, "1.0.0"), description: undefined },
    auth: true,
  },
  {
    label: "publish a version range",
    method: "POST",
    path: "/v0.1/publish",
    body: serverJson(`${NS}/range`, "^1.0.0"),
    auth: true,
  },
  {
    label: "publish without a token",
    method: "POST",
    path: "/v0.1/publish",
    body: serverJson(`${NS}/anon`, "1.0.0"),
  },
  {
    label: "deprecate a version",
    method: "PATCH",
    path: `/v0.1/servers/${NS}%2Fsolo/versions/0.1.0/status`,
    body: { status: "deprecated", statusMessage: "use multi" },
    auth: true,
  },
  { label: "the deprecated version", path: `/v0.1/servers/${NS}%2Fsolo/versions/0.1.0` },
];

async function send(base: string, r: Request, token?: string): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (r.body !== undefined) headers["content-type"] = "application/json";
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${base}${r.path}`, {
    method: r.method ?? "GET",
    headers,
    ...(r.body !== undefined ? { body: JSON.stringify(r.body) } : {}),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    // Not JSON: compared as text.
  }
  const allow = res.headers.get("allow");
  return {
    status: res.status,
    body,
    ...(allow !== null
      ? {
          allow: allow
            .split(",")
            .map((m) => m.trim())
            .sort()
            .join(", "),
        }
      : {}),
  };
}

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Times and cursors are instance-specific: each server issues its own. */
function normalize(v: unknown, key = ""): unknown {
  if (typeof v === "string") {
    if (key === "nextCursor") return "<cursor>";
    if (TIME.test(v)) return "<time>";
    return v;
  }
  if (Array.isArray(v)) return v.map((x) => normalize(x));
  if (typeof v === "object" && v !== null) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalize(x, k)]));
  }
  return v;
}

interface Difference {
  label: string;
  /**
   * `(status)`, `(allow)`, `(error body)`, or a JSON pointer into the body: `*` for an element
   * matched on both sides, `[name@version]` for one only one side has, `(order)` and `(length)`.
   */
  where: string;
  official: unknown;
  ours: unknown;
}

/** The differences of one request's answers, one per `where` (the first example kept). */
function differences(label: string, official: Answer, ours: Answer): Difference[] {
  const out: Difference[] = [];
  if (official.status !== ours.status) {
    out.push({ label, where: "(status)", official: official.status, ours: ours.status });
  }
  if (official.allow !== ours.allow) {
    out.push({ label, where: "(allow)", official: official.allow, ours: ours.allow });
  }
  const [a, b] = [normalize(official.body), normalize(ours.body)];
  // Errors are compared by status: the bodies are both RFC 9457 problems, with each server's
  // own wording (and our `code`); see the table.
  if (official.status >= 400 || ours.status >= 400) {
    if (JSON.stringify(a) !== JSON.stringify(b)) {
      out.push({ label, where: "(error body)", official: a, ours: b });
    }
    return out;
  }
  const found: [string, unknown, unknown][] = [];
  bodyDiffs(a, b, "", found);
  const seen = new Set<string>();
  for (const [where, o, x] of found) {
    if (seen.has(where)) continue;
    seen.add(where);
    out.push({ label, where, official: o, ours: x });
  }
  return out;
}

interface Documented {
  requests: RegExp[];
  where: RegExp[];
  text: string;
}

/** A glob where `*` matches any characters. */
function glob(pattern: string): RegExp {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*");
  return new RegExp(`^${escaped}$`);
}

const globs = (cell: string): RegExp[] =>
  [...cell.matchAll(/`([^`]+)`/g)].map((m) => glob(m[1] ?? ""));

/** The rows of the table in docs/compat.md, "The official MCP registry". */
function documentedDifferences(): Documented[] {
  const text = readFileSync(COMPAT_DOC, "utf8");
  const table = /<!-- official-registry:begin -->([\s\S]*?)<!-- official-registry:end -->/.exec(
    text,
  )?.[1];
  if (table === undefined) throw new Error("docs/compat.md has no official registry table");
  return table
    .split("\n")
    .filter((line) => line.startsWith("| ") && !/^\| (Requests|-+) /.test(line))
    .map((line) => {
      const [requests = "", where = ""] = line.split(" | ").map((c) => c.replace(/^\| /, ""));
      return { requests: globs(requests), where: globs(where), text: `${requests} | ${where}` };
    });
}

const matches = (row: Documented, d: Difference): boolean =>
  row.requests.some((g) => g.test(d.label)) && row.where.some((g) => g.test(d.where));

const show = (v: unknown): string => {
  const s = JSON.stringify(v) ?? "(absent)";
  return s.length > 160 ? `${s.slice(0, 157)}...` : s;
};

const missing = officialRegistryMissing();
if (missing !== undefined)
  console.warn(`SKIPPED the official registry differential test: ${missing}`);

describe.runIf(missing === undefined && postgresAvailable())(
  "the official MCP registry and ours answer alike (docs/compat.md)",
  () => {
    let dir: string;
    let pg: PostgresServer;
    let official: OfficialRegistry;
    let oursPg: RegistryServer;
    let oursSqlite: RegistryServer;
    /** Per label: the official server's answer, ours on PostgreSQL, ours embedded. */
    const answers = new Map<string, [Answer, Answer, Answer]>();

    const sendAll = async (r: Request): Promise<void> => {
      const token = r.auth === true ? await official.token() : undefined;
      answers.set(r.label, [
        await send(official.url, r, token),
        await send(oursPg.url, r),
        await send(oursSqlite.url, r),
      ]);
    };

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "official-differential-"));
      // The same documents: the official server imports an array of server.json documents,
      // ours syncs the catalog file they come from.
      const catalog = JSON.parse(readFileSync(CATALOG, "utf8")) as { data: { servers: unknown } };
      const seed = join(dir, "seed.json");
      writeFileSync(seed, JSON.stringify(catalog.data.servers));
      pg = await startPostgres();
      await pg.createDatabase("ours");
      writeFileSync(join(dir, "app-pw"), pg.appPassword);
      writeFileSync(join(dir, "mig-pw"), pg.migrationPassword);
      const postgresSection = `
database:
  host: ${pg.host}
  port: ${pg.port}
  database: ours
  user: ${pg.appUser}
  migrationUser: ${pg.migrationUser}
  passwordFile: app-pw
  migrationPasswordFile: mig-pw
  sslMode: disable
`;
      [official, oursPg, oursSqlite] = await Promise.all([
        startOfficialRegistry({ pg, seed }),
        startServer(`${CONFIG}${postgresSection}`, dir),
        startServer(CONFIG, dir),
      ]);
      await Promise.all([untilReady(oursPg.url), untilReady(oursSqlite.url)]);

      for (const [name, version] of PUBLISHED) {
        await sendAll({
          label: `publish ${name} ${version}`,
          method: "POST",
          path: "/v0.1/publish",
          body: serverJson(name, version),
          auth: true,
        });
      }
      for (const v of ["v0.1", "v0"]) {
        for (const r of reads(v)) await sendAll(r);
        await pageThrough(v);
      }
      for (const r of REFUSED) await sendAll(r);
    }, 240_000);

    /** `limit=5` pages, each server followed through its own cursors. */
    async function pageThrough(v: string): Promise<void> {
      const next: (string | undefined)[] = ["", "", ""];
      const bases = [official.url, oursPg.url, oursSqlite.url];
      for (let page = 1; page <= 10 && next.some((c) => c !== undefined); page++) {
        const got = await Promise.all(
          bases.map(async (base, i) => {
            const c = next[i];
            if (c === undefined) return { status: 0, body: "(no such page)" };
            const cursor = c === "" ? "" : `&cursor=${encodeURIComponent(c)}`;
            const a = await send(base, { label: "", path: `/${v}/servers?limit=5${cursor}` });
            const n =
              isObj(a.body) && isObj(a.body.metadata) ? a.body.metadata.nextCursor : undefined;
            next[i] = typeof n === "string" && n !== "" ? n : undefined;
            return a;
          }),
        );
        answers.set(`${v} limit=5 page ${page}`, got as [Answer, Answer, Answer]);
      }
    }

    afterAll(async () => {
      await Promise.all([official?.stop(), oursPg?.close(), oursSqlite?.close()]);
      await pg?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it("differs from the official registry only where docs/compat.md says, and everywhere it says", () => {
      const found: Difference[] = [];
      for (const [label, [off, ours]] of answers) found.push(...differences(label, off, ours));
      for (const d of found) {
        console.log(
          `official differential: ${d.label}: ${d.where}: official ${show(d.official)}, ours ${show(d.ours)}`,
        );
      }
      console.log(`official differential: ${answers.size} requests, ${found.length} differences`);
      const rows = documentedDifferences();
      const undocumented = found
        .filter((d) => !rows.some((row) => matches(row, d)))
        .map((d) => `${d.label} | ${d.where}`);
      const stale = rows
        .filter((row) => !found.some((d) => matches(row, d)))
        .map((row) => row.text);
      expect(undocumented, "differences docs/compat.md does not list").toEqual([]);
      expect(stale, "rows of docs/compat.md that no longer occur").toEqual([]);
    });

    it("answers alike on the embedded store and on PostgreSQL", () => {
      const unlike: string[] = [];
      for (const [label, [, onPg, embedded]] of answers) {
        for (const d of differences(label, onPg, embedded)) unlike.push(`${label} | ${d.where}`);
      }
      expect(unlike).toEqual([]);
    });
  },
);
