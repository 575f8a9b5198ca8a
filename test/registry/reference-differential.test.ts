// The ToolHive registry server (built by `make peer-tools` from ../shared/peers) and ours, given
// the same configuration and catalog, answer the same v0.1 and /v1 requests. Every difference in
// status or body is printed, and each must be listed in docs/compat.md ("The ToolHive registry
// server") with its reason; a listed difference that no longer occurs fails too, so the table
// stays true both ways. Ours runs on PostgreSQL (as the reference must) and on the embedded store.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegistryServer } from "../../src/registry/server.js";
import { postgresAvailable, startPostgres, type PostgresServer } from "../support/postgres.js";
import {
  referenceRegistryMissing,
  startReferenceRegistry,
  type ReferenceRegistry,
} from "../support/toolhive-registry.js";
import { startServer, untilReady } from "./helpers.js";
import { bodyDiffs, isObj } from "../support/body-diff.js";

const CATALOG = join(import.meta.dirname, "fixtures", "catalog-upstream.json");
const TOOLHIVE_CATALOG = join(import.meta.dirname, "fixtures", "catalog-toolhive.json");
const COMPAT_DOC = join(import.meta.dirname, "..", "..", "docs", "compat.md");

// Shared by both servers: everything but `database`, which each gets its own of.
const CONFIG = `
sources:
  - name: catalog
    file:
      path: ${CATALOG}
    syncPolicy:
      interval: 1h
    claims:
      team: platform
  - name: curated
    file:
      path: ${CATALOG}
    syncPolicy:
      interval: 30m
    filter:
      names:
        include: ["io.github.stacklok/*"]
        exclude: ["io.github.stacklok/git-*"]
      tags:
        exclude: ["sandbox"]
  - name: legacy
    file:
      path: ${TOOLHIVE_CATALOG}
    syncPolicy:
      interval: 1h
  - name: team
    managed: {}
registries:
  - name: default
    sources: [catalog, team]
  - name: curated
    sources: [curated]
    claims:
      team: platform
  - name: legacy
    sources: [legacy]
auth:
  mode: anonymous
`;

/** Published into the managed source of both, in this order (not semver order). */
const PUBLISHED = [
  ["io.example/multi", "1.0.0"],
  ["io.example/multi", "2.0.0"],
  ["io.example/multi", "1.5.0"],
  ["io.example/multi", "2.1.0-beta.1"],
  ["io.example/solo", "0.1.0"],
] as const;

function serverJson(name: string, version: string): Record<string, unknown> {
  return {
    $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
    name,
    version,
    title: name.split("/")[1],
    description: `The ${name.split("/")[1]} server, version ${version}`,
    remotes: [{ type: "streamable-http", url: `https://mcp.example.com/${name.split("/")[1]}` }],
  };
}

interface Answer {
  status: number;
  body: unknown;
}

interface Request {
  label: string;
  method?: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  body?: unknown;
}

const SERVERS = "/registry/default/v0.1/servers";
const MULTI = "io.example%2Fmulti";
const FETCH = "io.github.stacklok%2Ffetch";

/** The reads, after the publishes; each sent once to every server. */
const READS: Request[] = [
  { label: "v0.1 list", path: SERVERS },
  { label: "v0.1 list of a filtered registry", path: "/registry/curated/v0.1/servers" },
  { label: "v0.1 list of a ToolHive-format catalog", path: "/registry/legacy/v0.1/servers" },
  { label: "v0.1 search by name", path: `${SERVERS}?search=git` },
  { label: "v0.1 search by description", path: `${SERVERS}?search=warehouse` },
  { label: "v0.1 search matching nothing", path: `${SERVERS}?search=zzz-nothing` },
  { label: "v0.1 version=latest", path: `${SERVERS}?version=latest` },
  { label: "v0.1 version=1.0.0", path: `${SERVERS}?version=1.0.0` },
  { label: "v0.1 updated_since", path: `${SERVERS}?updated_since=2000-01-01T00:00:00Z` },
  { label: "v0.1 limit=100", path: `${SERVERS}?limit=100` },
  { label: "v0.1 versions of a catalog server", path: `${SERVERS}/${FETCH}/versions` },
  { label: "v0.1 versions of a published server", path: `${SERVERS}/${MULTI}/versions` },
  { label: "v0.1 a version", path: `${SERVERS}/${MULTI}/versions/1.5.0` },
  { label: "v0.1 a pre-release version", path: `${SERVERS}/${MULTI}/versions/2.1.0-beta.1` },
  { label: "v0.1 latest", path: `${SERVERS}/${MULTI}/versions/latest` },
  { label: "v0.1 latest of a catalog server", path: `${SERVERS}/${FETCH}/versions/latest` },
  { label: "v0.1 unknown registry", path: "/registry/nope/v0.1/servers" },
  { label: "v0.1 versions of an unknown name", path: `${SERVERS}/io.example%2Fnope/versions` },
  { label: "v0.1 an unknown name", path: `${SERVERS}/io.example%2Fnope/versions/1.0.0` },
  { label: "v0.1 an unknown version", path: `${SERVERS}/${MULTI}/versions/9.9.9` },
  {
    label: "v0.1 a name of another registry",
    path: `/registry/curated/v0.1/servers/${MULTI}/versions`,
  },
  { label: "v0.1 limit=abc", path: `${SERVERS}?limit=abc` },
  { label: "v0.1 limit=0", path: `${SERVERS}?limit=0` },
  { label: "v0.1 limit=-1", path: `${SERVERS}?limit=-1` },
  { label: "v0.1 limit=1000", path: `${SERVERS}?limit=1000` },
  { label: "v0.1 a cursor never issued", path: `${SERVERS}?cursor=not-a-cursor` },
  { label: "v0.1 updated_since not a date", path: `${SERVERS}?updated_since=yesterday` },
  { label: "/v1 sources", path: "/v1/sources" },
  { label: "/v1 a file source", path: "/v1/sources/catalog" },
  { label: "/v1 a filtered source", path: "/v1/sources/curated" },
  { label: "/v1 the managed source", path: "/v1/sources/team" },
  { label: "/v1 a ToolHive-format source", path: "/v1/sources/legacy" },
  { label: "/v1 an unknown source", path: "/v1/sources/nope" },
  { label: "/v1 registries", path: "/v1/registries" },
  { label: "/v1 a registry", path: "/v1/registries/default" },
  { label: "/v1 a registry with claims", path: "/v1/registries/curated" },
  { label: "/v1 an unknown registry", path: "/v1/registries/nope" },
  { label: "/v1 entries of a file source", path: "/v1/sources/catalog/entries" },
  { label: "/v1 entries of the managed source", path: "/v1/sources/team/entries" },
  { label: "/v1 entries of a registry", path: "/v1/registries/default/entries" },
  { label: "/v1 entries of an unknown source", path: "/v1/sources/nope/entries" },
  { label: "/v1 claims of a published name", path: "/v1/entries/server/io.example%2Fsolo/claims" },
];

/** Sources and registries changed through /v1, after every read. */
const WRITES: Request[] = [
  {
    label: "/v1 create a registry",
    method: "PUT",
    path: "/v1/registries/extra",
    body: { sources: ["catalog", "team"] },
  },
  { label: "/v1 the created registry", path: "/v1/registries/extra" },
  {
    label: "/v1 replace the created registry",
    method: "PUT",
    path: "/v1/registries/extra",
    body: { sources: ["curated"], claims: { team: "platform" } },
  },
  {
    label: "/v1 a registry naming an unknown source",
    method: "PUT",
    path: "/v1/registries/broken",
    body: { sources: ["nope"] },
  },
  {
    label: "/v1 change a registry of the configuration",
    method: "PUT",
    path: "/v1/registries/default",
    body: { sources: ["catalog"] },
  },
  { label: "/v1 delete the created registry", method: "DELETE", path: "/v1/registries/extra" },
  { label: "/v1 delete an unknown registry", method: "DELETE", path: "/v1/registries/nope" },
  {
    label: "/v1 create a second managed source",
    method: "PUT",
    path: "/v1/sources/extra",
    body: { managed: {} },
  },
  {
    label: "/v1 change a source of the configuration",
    method: "PUT",
    path: "/v1/sources/catalog",
    body: { file: { path: CATALOG }, syncPolicy: { interval: "2h" } },
  },
  { label: "/v1 delete a source of the configuration", method: "DELETE", path: "/v1/sources/team" },
  { label: "/v1 delete an unknown source", method: "DELETE", path: "/v1/sources/nope" },
  { label: "/v1 who am I", path: "/v1/me" },
];

async function send(base: string, r: Request): Promise<Answer> {
  const res = await fetch(`${base}${r.path}`, {
    method: r.method ?? "GET",
    ...(r.body !== undefined
      ? { headers: { "content-type": "application/json" }, body: JSON.stringify(r.body) }
      : {}),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    // Not JSON: compared as text.
  }
  return { status: res.status, body };
}

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * What is legitimately instance-specific, replaced by a placeholder: times (when each server
 * synced or was published), generated ids, cursors (opaque: each server issues its own, and the
 * paging below follows each server's own) and our sync's content hash.
 */
function normalize(v: unknown, key = ""): unknown {
  if (typeof v === "string") {
    if (key === "nextCursor") return "<cursor>";
    // A digest of what the source read as the store holds it (PostgreSQL's jsonb orders the
    // keys of the configuration it includes), so it differs between stores.
    if (key === "contentHash") return "<hash>";
    if (TIME.test(v)) return "<time>";
    if (UUID.test(v)) return "<id>";
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
   * `(status)`, `(error body)`, or a JSON pointer into the body: `*` for an element matched on
   * both sides, `[name@version]` for one only one side has, `(order)` and `(length)` for lists.
   */
  where: string;
  reference: unknown;
  ours: unknown;
}

/** The differences of one request's answers, one per `where` (the first example kept). */
function differences(label: string, ref: Answer, ours: Answer): Difference[] {
  const out: Difference[] = [];
  if (ref.status !== ours.status) {
    out.push({ label, where: "(status)", reference: ref.status, ours: ours.status });
  }
  const [a, b] = [normalize(ref.body), normalize(ours.body)];
  // An error's body is its message: the two servers' texts and shapes differ by design (see
  // the table), so an error is compared by its status only.
  if (ref.status >= 400 || ours.status >= 400) {
    if (JSON.stringify(a) !== JSON.stringify(b)) {
      out.push({ label, where: "(error body)", reference: a, ours: b });
    }
    return out;
  }
  const found: [string, unknown, unknown][] = [];
  bodyDiffs(a, b, "", found);
  const seen = new Set<string>();
  for (const [where, reference, o] of found) {
    if (seen.has(where)) continue;
    seen.add(where);
    out.push({ label, where, reference, ours: o });
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

/** The globs of a cell: each in backticks, separated by commas. */
const globs = (cell: string): RegExp[] =>
  [...cell.matchAll(/`([^`]+)`/g)].map((m) => glob(m[1] ?? ""));

/** The rows of the table in docs/compat.md, "The ToolHive registry server". */
function documentedDifferences(): Documented[] {
  const text = readFileSync(COMPAT_DOC, "utf8");
  const table =
    /<!-- toolhive-registry-server:begin -->([\s\S]*?)<!-- toolhive-registry-server:end -->/.exec(
      text,
    )?.[1];
  if (table === undefined) throw new Error("docs/compat.md has no ToolHive registry server table");
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

const missing = referenceRegistryMissing();
if (missing !== undefined)
  console.warn(`SKIPPED the reference registry differential test: ${missing}`);

describe.runIf(missing === undefined && postgresAvailable())(
  "the ToolHive registry server and ours answer alike (docs/compat.md)",
  () => {
    let dir: string;
    let pg: PostgresServer;
    let reference: ReferenceRegistry;
    let oursPg: RegistryServer;
    let oursSqlite: RegistryServer;
    /** Per label: the reference's answer, ours on PostgreSQL, ours embedded. */
    const answers = new Map<string, [Answer, Answer, Answer]>();

    const sendAll = async (r: Request): Promise<void> => {
      answers.set(r.label, [
        await send(reference.url, r),
        await send(oursPg.url, r),
        await send(oursSqlite.url, r),
      ]);
    };

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "reference-differential-"));
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
      [reference, oursPg, oursSqlite] = await Promise.all([
        startReferenceRegistry(CONFIG, { pg }),
        startServer(`${CONFIG}${postgresSection}`, dir),
        startServer(CONFIG, dir),
      ]);
      await Promise.all([untilReady(oursPg.url), untilReady(oursSqlite.url)]);
      await referenceSynced(reference);

      // The same publishes, in the same order, to each.
      for (const [name, version] of PUBLISHED) {
        await sendAll({
          label: `/v1 publish ${name} ${version}`,
          method: "POST",
          path: "/v1/entries",
          body: { server: serverJson(name, version) },
        });
      }
      await sendAll({
        label: "/v1 publish a version again",
        method: "POST",
        path: "/v1/entries",
        body: { server: serverJson("io.example/solo", "0.1.0") },
      });
      for (const r of READS) await sendAll(r);
      await pageThrough();
      // Last: the reference accepts these and we do not, so the catalogs differ after them.
      await sendAll({
        label: "/v1 publish without a description",
        method: "POST",
        path: "/v1/entries",
        body: { server: { ...serverJson("io.example/bad", "1.0.0"), description: undefined } },
      });
      await sendAll({
        label: "/v1 publish a name the catalog serves",
        method: "POST",
        path: "/v1/entries",
        body: { server: serverJson("io.github.stacklok/fetch", "9.0.0") },
      });
      for (const r of WRITES) await sendAll(r);
    }, 240_000);

    /** `limit=5` pages, each server followed through its own cursors. */
    async function pageThrough(): Promise<void> {
      const next: (string | undefined)[] = ["", "", ""];
      const bases = [reference.url, oursPg.url, oursSqlite.url];
      for (let page = 1; page <= 10 && next.some((c) => c !== undefined); page++) {
        const got = await Promise.all(
          bases.map(async (base, i) => {
            const c = next[i];
            if (c === undefined) return { status: 0, body: "(no such page)" };
            const cursor = c === "" ? "" : `&cursor=${encodeURIComponent(c)}`;
            const a = await send(base, { label: "", path: `${SERVERS}?limit=5${cursor}` });
            const n =
              isObj(a.body) && isObj(a.body.metadata) ? a.body.metadata.nextCursor : undefined;
            next[i] = typeof n === "string" && n !== "" ? n : undefined;
            return a;
          }),
        );
        answers.set(`v0.1 limit=5 page ${page}`, got as [Answer, Answer, Answer]);
      }
    }

    afterAll(async () => {
      await Promise.all([reference?.stop(), oursPg?.close(), oursSqlite?.close()]);
      await pg?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it("differs from the reference only where docs/compat.md says, and everywhere it says", () => {
      const found: Difference[] = [];
      for (const [label, [ref, ours]] of answers) found.push(...differences(label, ref, ours));
      for (const d of found) {
        console.log(
          `reference differential: ${d.label}: ${d.where}: reference ${show(d.reference)}, ours ${show(d.ours)}`,
        );
      }
      console.log(`reference differential: ${answers.size} requests, ${found.length} differences`);
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

/**
 * The synced sources of the reference, and those among them it has tried to sync (a sync ends
 * with `lastSyncTime`, failed or complete; before it, a source shows only the start's status).
 */
async function syncState(
  reference: ReferenceRegistry,
): Promise<{ synced: string[]; tried: string[] }> {
  const r = await send(reference.url, { label: "", path: "/v1/sources" });
  const sources =
    isObj(r.body) && Array.isArray(r.body.sources) ? r.body.sources.filter(isObj) : [];
  const synced = sources.filter((s) => s.sourceType !== "managed");
  return {
    synced: synced.map((s) => String(s.name)),
    tried: synced
      .filter((s) => isObj(s.syncStatus) && typeof s.syncStatus.lastSyncTime === "string")
      .map((s) => String(s.name)),
  };
}

/**
 * Waits until the reference has tried to sync every synced source. It syncs one source at start
 * and then one per 2-minute tick, so it is restarted (same database) while sources are waiting.
 */
async function referenceSynced(reference: ReferenceRegistry): Promise<void> {
  let tried = 0;
  for (let starts = 1; starts <= 10; starts++) {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const state = await syncState(reference);
      if (state.synced.length > 0 && state.tried.length === state.synced.length) return;
      if (state.tried.length > tried) {
        tried = state.tried.length;
        break;
      }
      if (Date.now() > deadline) {
        throw new Error(`the reference did not sync: ${show(state)}\n${reference.output()}`);
      }
      await new Promise((res) => setTimeout(res, 200));
    }
    await reference.restart();
  }
  throw new Error("the reference needed more than 10 starts to sync its sources");
}
