// Requests generated from the server's own /openapi.json, for every route it documents, with
// hostile values mixed in (NUL bytes, out-of-range dates, deep and wide JSON, forged cursors,
// odd content types). Every answer must be a 4xx or 2xx/3xx the document lists, with a body
// its schema accepts; never a 5xx, never a dropped connection. Runs on both stores.
// REGISTRY_FUZZ_RUNS and REGISTRY_FUZZ_SEED override the request count and the seed.
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegistryServer } from "../../src/registry/server.js";
import { oauthAuthBlock, startIssuer, type TestIssuer } from "../support/oidc.js";
import { postgresAvailable, startPostgres, type PostgresServer } from "../support/postgres.js";
import { startServer, untilReady } from "./helpers.js";

const RUNS = Number(process.env.REGISTRY_FUZZ_RUNS ?? 10_500);
const SEED = Number(process.env.REGISTRY_FUZZ_SEED ?? Date.now() % 2 ** 31);

const DATA = join(import.meta.dirname, "fixtures");

interface Operation {
  method: string;
  path: string;
  params: { name: string; in: string; schema?: { enum?: string[] } }[];
  hasBody: boolean;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

interface OpenApi {
  paths: Record<
    string,
    Record<
      string,
      Omit<Operation, "method" | "path"> & {
        parameters?: Operation["params"];
        requestBody?: unknown;
      }
    >
  >;
  components: { schemas: Record<string, unknown> };
}

function operations(doc: OpenApi): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      params: op.parameters ?? [],
      hasBody: op.requestBody !== undefined,
      responses: op.responses,
    })),
  );
}

/** Percent-encodes every byte outside the unreserved set (lone surrogates included). */
function encodeSegment(s: string): string {
  let out = "";
  for (const b of Buffer.from(s, "utf8")) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

const nasty = fc.constantFrom(
  "\u0000",
  "a\u0000b",
  "0000-01-01T00:00:00Z",
  "0001-01-01T00:00:00+01:00",
  "9999-12-31T23:59:59Z",
  "",
  " ",
  "..",
  "latest",
  "-1",
  "1e999",
  "%",
  "\uffff",
  "😀",
  "x".repeat(600),
  Buffer.from(JSON.stringify(["a\u0000", "1"])).toString("base64url"),
  Buffer.from(JSON.stringify(["io.github.x/" + "y".repeat(300), "1"])).toString("base64url"),
  Buffer.from(JSON.stringify({ toString: 1 })).toString("base64url"),
);

const known = fc.constantFrom(
  "default",
  "all",
  "catalog",
  "team",
  "io.test/alpha",
  "io.test/beta",
  "1.0.0",
  "2.0.0",
  "latest",
  "true",
  "false",
  "10",
  "100",
  "2020-01-01T00:00:00Z",
  "fz1",
  "fz2",
  "io.fuzz/x",
);

const text = fc.oneof(
  { weight: 4, arbitrary: known },
  { weight: 3, arbitrary: nasty },
  { weight: 3, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
);

/**
 * A value nested `depth` levels deep. JSON.stringify would overflow the stack on it, so it is a
 * placeholder that `serialize` replaces with the nested text.
 */
const deepValue = fc
  .tuple(fc.integer({ min: 20, max: 100_000 }), fc.boolean())
  .map(([d, list]) => `@@deep:${d}:${list ? "l" : "o"}@@`);

function serialize(v: unknown): string {
  return (JSON.stringify(v) ?? "null").replace(/"@@deep:(\d+):([lo])@@"/g, (_m, d, kind) => {
    const n = Number(d);
    return kind === "l"
      ? `${"[".repeat(n)}"x"${"]".repeat(n)}`
      : `${'{"a":'.repeat(n)}"x"${"}".repeat(n)}`;
  });
}

const jsonish: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: text },
  { weight: 1, arbitrary: deepValue },
  { weight: 1, arbitrary: fc.array(fc.constantFrom("a", "b", "a"), { maxLength: 3000 }) },
);

const url = fc.oneof(
  { weight: 3, arbitrary: fc.constant("https://svc.example/mcp") },
  fc.constantFrom(
    "https://svc.example/mcp",
    "http://127.0.0.1:1/x",
    "javascript:alert(1)",
    "file:///etc/passwd",
    "ftp://x",
    "https://a\u0000.example",
  ),
  fc.webUrl(),
);

/** Hostile publish bodies: any field may be wrong. */
const hostilePublish = fc.record(
  {
    name: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom("io.test/alpha", "io.fuzz/x", "io.github.x/y") },
      { weight: 4, arbitrary: fc.nat(500).map((n) => `io.fuzz/n${n}`) },
      { weight: 1, arbitrary: text },
    ),
    version: fc.oneof(
      {
        weight: 4,
        arbitrary: fc.tuple(fc.nat(9), fc.nat(99), fc.nat(999)).map((v) => v.join(".")),
      },
      { weight: 1, arbitrary: fc.constantFrom("0.0.1", "3.0.0-rc.1", "1.0.0\u0000") },
      { weight: 1, arbitrary: text },
    ),
    url,
    description: text,
    title: text,
    claims: fc.oneof(
      fc.dictionary(text, fc.oneof(text, fc.array(text, { maxLength: 3 })), { maxKeys: 3 }),
      jsonish,
    ),
    _meta: fc.oneof(
      { weight: 3, arbitrary: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })) },
      deepValue,
      jsonish,
    ),
    remotes: fc.oneof(
      fc.array(fc.record({ type: fc.constantFrom("streamable-http", "sse"), url }), {
        maxLength: 3,
      }),
      jsonish,
    ),
    packages: jsonish,
    repository: jsonish,
  },
  { requiredKeys: ["name", "version", "url"] },
);

/** Publishable bodies, so the checks past validation (store, ownership, reads) run too. */
const publishBody = fc.oneof(
  hostilePublish,
  fc.record(
    {
      name: fc.oneof(
        fc.nat(500).map((n) => `io.fuzz/n${n}`),
        fc.constant("io.fuzz/x"),
      ),
      version: fc.oneof(
        fc.tuple(fc.nat(9), fc.nat(99), fc.nat(999)).map((v) => v.join(".")),
        fc.constantFrom("1.0.0", "2.0.0"),
      ),
      url: fc.constant("https://svc.example/mcp"),
      description: fc.string({ maxLength: 100 }),
      _meta: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })),
    },
    { requiredKeys: ["name", "version", "url"] },
  ),
);

const hostileSource = fc.record(
  {
    name: fc.oneof(known, text),
    format: fc.oneof(fc.constantFrom("toolhive", "upstream"), text),
    claims: fc.oneof(fc.dictionary(text, text, { maxKeys: 3 }), jsonish),
    managed: fc.oneof(fc.constant({}), jsonish),
    file: fc.record({
      path: fc.oneof(fc.constantFrom("/etc/passwd", "../../x", "nope.json"), text),
    }),
    url: fc.record({ url }),
    api: fc.record({ endpoint: url }),
    git: fc.record({
      repository: fc.oneof(fc.constantFrom("file:///", "https://git.example/x.git"), text),
    }),
    filter: fc.oneof(
      fc.record({ names: fc.record({ include: fc.array(text, { maxLength: 3 }) }) }),
      jsonish,
    ),
    syncPolicy: fc.oneof(fc.record({ interval: fc.constantFrom("1h", "1x", "0s") }), jsonish),
  },
  { requiredKeys: [] },
);

const hostileRegistry = fc.record(
  {
    name: fc.oneof(known, text),
    sources: fc.oneof(
      fc.array(fc.oneof(known, text), { maxLength: 5 }),
      fc.array(fc.constantFrom("catalog", "team", "x"), { minLength: 101, maxLength: 3000 }),
      jsonish,
    ),
    claims: fc.oneof(fc.dictionary(text, text, { maxKeys: 3 }), jsonish),
  },
  { requiredKeys: [] },
);

const claims = fc.dictionary(fc.constantFrom("team", "org"), fc.constantFrom("a", "b"), {
  maxKeys: 2,
});

/** Source bodies the server may accept: a file under adminSources.fileRoots, or near it. */
const sourceBody = fc.oneof(
  hostileSource,
  fc.record(
    {
      format: fc.constant("upstream"),
      file: fc.record({ path: fc.constantFrom("data.json", "missing.json", "../data.json") }),
      claims,
    },
    { requiredKeys: ["file"] },
  ),
);

/** Registry bodies over existing sources, so PUT and DELETE succeed too. */
const registryBody = fc.oneof(
  hostileRegistry,
  fc.record(
    {
      sources: fc.subarray(["fz1", "catalog", "fz2", "team"], { minLength: 1 }),
      claims,
    },
    { requiredKeys: ["sources"] },
  ),
);

interface Request {
  op: Operation;
  url: string;
  contentType?: string;
  body?: string;
}

function requestOf(op: Operation): fc.Arbitrary<Request> {
  const pathParams = op.params.filter((p) => p.in === "path");
  const queryParams = op.params.filter((p) => p.in === "query");
  const valueFor = (p: Operation["params"][number]): fc.Arbitrary<string> =>
    p.schema?.enum !== undefined
      ? fc.oneof(fc.constantFrom(...p.schema.enum), text)
      : p.name === "registry"
        ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom("default", "all") }, text)
        : p.name === "version"
          ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom("1.0.0", "latest") }, text)
          : p.name === "name" && op.path.includes("/servers/")
            ? fc.oneof(
                { weight: 3, arbitrary: fc.constantFrom("io.fuzz/x", "io.test/alpha") },
                text,
              )
            : text;
  const path = fc.tuple(...pathParams.map(valueFor)).map((values) => {
    let out = op.path;
    pathParams.forEach((p, i) => {
      out = out.replace(`{${p.name}}`, encodeSegment(values[i] as string));
    });
    return out;
  });
  const query = fc
    .tuple(
      ...queryParams.map((p) =>
        fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, valueFor(p)),
      ),
      // Sometimes a parameter twice (a list, where the routes expect one string).
      fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, fc.constant(true)),
    )
    .map((values) => {
      const twice = values[values.length - 1] === true;
      return queryParams
        .map((p, i) => {
          const v = values[i];
          if (typeof v !== "string") return "";
          const pair = `${p.name}=${encodeSegment(v)}`;
          return twice ? `${pair}&${pair}` : pair;
        })
        .filter((s) => s !== "")
        .join("&");
    });
  const structured = op.path.includes("publish")
    ? publishBody
    : op.path.includes("sources")
      ? sourceBody
      : registryBody;
  const body = op.hasBody
    ? fc.oneof(
        { weight: 6, arbitrary: structured.map(serialize) },
        { weight: 1, arbitrary: jsonish.map(serialize) },
        { weight: 1, arbitrary: fc.string({ maxLength: 50 }) },
      )
    : fc.constant(undefined);
  const contentType = fc.oneof(
    { weight: 8, arbitrary: fc.constant("application/json") },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/json; charset=latin1",
        "application/problem+json",
      ),
    },
  );
  return fc.tuple(path, query, body, contentType).map(([p, q, b, ct]) => ({
    op,
    url: q === "" ? p : `${p}?${q}`,
    ...(b !== undefined ? { body: b, contentType: ct } : {}),
  }));
}

interface Counts {
  tried: number;
  ok: number;
  "4xx": number;
  "5xx": number;
  crashes: number;
  undocumented: number;
}

async function fuzz(
  base: string,
  runs: number,
  seed: number,
  /** Authorization header values to pick from (oauth mode); none in anonymous mode. */
  credentials: readonly (string | undefined)[] = [undefined],
): Promise<{ counts: Counts; failures: string[]; byRoute: Record<string, Counts> }> {
  const doc = (await (await fetch(`${base}/openapi.json`)).json()) as OpenApi;
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
  ajv.addSchema({
    $id: "https://doc.test/openapi.json",
    $defs: JSON.parse(
      JSON.stringify(doc.components.schemas).replace(/"#\/components\/schemas\//g, '"#/$defs/'),
    ) as object,
  });
  const validators = new Map<unknown, ValidateFunction>();
  const validatorOf = (schema: unknown): ValidateFunction => {
    let v = validators.get(schema);
    if (v === undefined) {
      const text = JSON.stringify(schema).replace(
        /"#\/components\/schemas\//g,
        '"https://doc.test/openapi.json#/$defs/',
      );
      v = ajv.compile(JSON.parse(text) as object);
      validators.set(schema, v);
    }
    return v;
  };
  const ops = operations(doc);
  const requests = fc.sample(
    fc.tuple(fc.oneof(...ops.map(requestOf)), fc.constantFrom(...credentials)),
    { numRuns: runs, seed },
  );
  const zero = (): Counts => ({ tried: 0, ok: 0, "4xx": 0, "5xx": 0, crashes: 0, undocumented: 0 });
  const counts = zero();
  const byRoute: Record<string, Counts> = {};
  const failures: string[] = [];
  const one = async ([r, credential]: [Request, string | undefined]): Promise<void> => {
    const key = `${r.op.method} ${r.op.path}`;
    const route = (byRoute[key] ??= zero());
    const bump = (k: keyof Counts) => {
      counts[k]++;
      route[k]++;
    };
    bump("tried");
    let res: Response;
    try {
      const headers: Record<string, string> = {};
      if (credential !== undefined) headers.authorization = credential;
      if (r.body !== undefined) headers["content-type"] = r.contentType ?? "application/json";
      res = await fetch(`${base}${r.url}`, {
        method: r.op.method,
        headers,
        ...(r.body !== undefined ? { body: r.body } : {}),
      });
    } catch (err) {
      bump("crashes");
      failures.push(`${r.op.method} ${r.url.slice(0, 300)}: ${(err as Error).message}`);
      return;
    }
    const text = await res.text();
    if (res.status >= 500) {
      bump("5xx");
      failures.push(
        `${r.op.method} ${r.url.slice(0, 300)} ${r.body?.slice(0, 300) ?? ""}: ${res.status} ${text}`,
      );
      return;
    }
    bump(res.status >= 400 ? "4xx" : "ok");
    // 405 with Allow is HTTP's answer on any path for a method it lacks: a generated `..` moves a
    // request onto another route's path (`GET /v1/sources/../entries` is `GET /v1/entries`).
    const generic = res.status === 405 && res.headers.get("allow") !== null;
    const documented = r.op.responses[String(res.status)];
    if (documented === undefined && !generic) {
      bump("undocumented");
      failures.push(
        `${r.op.method} ${r.url.slice(0, 300)}: ${res.status} is not documented (${text.slice(0, 200)})`,
      );
      return;
    }
    if (documented === undefined) return;
    const schema = Object.values(documented.content ?? {})[0]?.schema;
    if (schema === undefined || text === "" || res.status === 304) return;
    // JSON answers are checked parsed; /metrics is text, checked as a string.
    let body: unknown = text;
    if (/json/.test(res.headers.get("content-type") ?? "")) {
      try {
        body = JSON.parse(text);
      } catch {
        bump("undocumented");
        failures.push(`${r.op.method} ${r.url.slice(0, 300)}: ${res.status} is not JSON`);
        return;
      }
    }
    const validate = validatorOf(schema);
    if (!validate(body)) {
      bump("undocumented");
      failures.push(
        `${r.op.method} ${r.url.slice(0, 300)}: ${res.status} body breaks the document: ${ajv.errorsText(validate.errors)}`,
      );
    }
  };
  // A few requests at a time, as clients would send them.
  for (let i = 0; i < requests.length; i += 4) {
    await Promise.all(requests.slice(i, i + 4).map(one));
  }
  return { counts, failures, byRoute };
}

function config(database: string): string {
  return `
sources:
  - name: catalog
    format: upstream
    file: { path: ${join(DATA, "upstream.json")} }
  - name: team
    managed: {}
registries:
  - name: default
    sources: [catalog, team]
  - name: all
    sources: [team, catalog]
adminSources: { fileRoots: ["."] }
auth: { mode: anonymous }
${database}
`;
}

const stores: { name: string; runs: number; database: (dir: string) => Promise<string> }[] = [
  { name: "embedded", runs: RUNS, database: () => Promise.resolve("") },
];
let pg: PostgresServer | undefined;
if (postgresAvailable()) {
  stores.push({
    name: "postgres",
    // The same routes and values; fewer of them keeps the suite's time in bounds.
    runs: Math.ceil(RUNS / 5),
    database: async (dir) => {
      pg ??= await startPostgres();
      await pg.createDatabase("fuzz");
      writeFileSync(join(dir, "app-pw"), `${pg.appPassword}\n`);
      writeFileSync(join(dir, "mig-pw"), `${pg.migrationPassword}\n`);
      return `database:
  host: 127.0.0.1
  port: ${pg.port}
  database: fuzz
  user: ${pg.appUser}
  migrationUser: ${pg.migrationUser}
  passwordFile: app-pw
  migrationPasswordFile: mig-pw
  sslMode: disable`;
    },
  });
}

describe.each(stores)("fuzzing every documented route ($name store)", (store) => {
  let dir: string;
  let server: RegistryServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "fuzz-"));
    copyFileSync(join(DATA, "upstream.json"), join(dir, "data.json"));
    server = await startServer(config(await store.database(dir)), dir);
    await untilReady(server.url);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    if (store.name === "postgres") await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers every generated request without a 5xx and as the OpenAPI document says", async () => {
    const { counts, failures, byRoute } = await fuzz(server.url, store.runs, SEED);
    console.log(
      `fuzz (${store.name}, seed ${SEED}): ${JSON.stringify(counts)}\n` +
        Object.entries(byRoute)
          .map(
            ([k, c]) =>
              `  ${k}: tried ${c.tried}, 2xx/3xx ${c.ok}, 4xx ${c["4xx"]}, 5xx ${c["5xx"]}`,
          )
          .join("\n"),
    );
    expect(failures.slice(0, 20), `seed ${SEED}`).toEqual([]);
    expect(counts.tried).toBe(store.runs);
    // The generator reaches past the checks: some requests succeed.
    expect(counts.ok).toBeGreaterThan(0);
  }, 600_000);
});

describe("fuzzing every documented route (oauth mode, scoped callers)", () => {
  let dir: string;
  let server: RegistryServer;
  let issuer: TestIssuer;
  const credentials: (string | undefined)[] = [undefined, "Bearer not-a-token"];
  beforeAll(async () => {
    const clients = {
      root: { groups: ["root"] },
      opsA: { team: "a", groups: ["ops"] },
      pubB: { team: "b", groups: ["publishers"] },
      reader: { team: "a" },
    };
    issuer = await startIssuer(clients);
    for (const c of Object.keys(clients)) credentials.push(`Bearer ${await issuer.token(c)}`);
    dir = mkdtempSync(join(tmpdir(), "fuzz-oauth-"));
    copyFileSync(join(DATA, "upstream.json"), join(dir, "data.json"));
    server = await startServer(
      `
sources:
  - name: catalog
    format: upstream
    file: { path: ${join(DATA, "upstream.json")} }
    claims: { team: a }
  - name: team
    managed: {}
    claims: { team: b }
registries:
  - name: default
    sources: [team, catalog]
  - name: all
    sources: [catalog]
    claims: { team: a }
adminSources: { fileRoots: ["."] }
${oauthAuthBlock(issuer)}`,
      dir,
    );
    await untilReady(server.url);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await issuer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers every generated request without a 5xx and as the OpenAPI document says", async () => {
    const runs = Math.ceil(RUNS / 5);
    const { counts, failures } = await fuzz(server.url, runs, SEED, credentials);
    console.log(`fuzz (oauth, seed ${SEED}): ${JSON.stringify(counts)}`);
    expect(failures.slice(0, 20), `seed ${SEED}`).toEqual([]);
    expect(counts.tried).toBe(runs);
    expect(counts.ok).toBeGreaterThan(0);
  }, 600_000);
});
