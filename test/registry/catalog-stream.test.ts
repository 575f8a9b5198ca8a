// Catalogs are read one server at a time (src/registry/formats/json-spans.ts) instead of with one
// JSON.parse of the whole text. Held here to the whole-text reading: for the fixture catalogs,
// generated catalogs of every shape, and thousands of broken texts, the entries, the problems
// and the errors are those of JSON.parse of the whole text and a conversion of each item.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonLimitProblem } from "../../src/registry/formats/bounds.js";
import type { ServerEntry } from "../../src/registry/formats/model.js";
import { type Format, detectFormat, parseRegistryData } from "../../src/registry/formats/parse.js";
import {
  convertToolhiveRemote,
  convertToolhiveServer,
} from "../../src/registry/formats/toolhive.js";
import { convertUpstream, upstreamItems } from "../../src/registry/formats/upstream.js";

const FIXTURES = join(import.meta.dirname, "fixtures");

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);

/** The whole-text reading: JSON.parse, then each item converted. */
function wholeText(text: string, format?: Format): { entries: ServerEntry[]; problems: string[] } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error("registry data is not JSON");
  }
  const f = format ?? detectFormat(doc);
  if (f === undefined) throw new Error("registry data is in no known format");
  const entries: ServerEntry[] = [];
  const problems: string[] = [];
  const add = (r: ServerEntry | string) =>
    typeof r === "string" ? problems.push(r) : entries.push(r);
  if (f === "upstream") {
    const items = upstreamItems(doc);
    if (items === undefined)
      problems.push("not an upstream registry: expected data.servers, servers or a list");
    items?.forEach((item, i) => {
      const r = convertUpstream(item);
      add(typeof r === "string" ? `servers[${i}]: ${r}` : r);
    });
  } else {
    const d = doc as Obj;
    if (!isObj(d) || (!isObj(d.servers) && !isObj(d.remote_servers))) {
      problems.push("not a toolhive registry: expected a `servers` map");
    } else {
      const limited = (e: ServerEntry) => {
        const p = jsonLimitProblem(e.server);
        return p === undefined ? e : `${e.name}: ${p}`;
      };
      for (const [k, v] of Object.entries(isObj(d.servers) ? d.servers : {})) {
        add(
          isObj(v) && typeof v.image === "string"
            ? limited(convertToolhiveServer(k, v))
            : `servers.${k}: needs an image`,
        );
      }
      for (const [k, v] of Object.entries(isObj(d.remote_servers) ? d.remote_servers : {})) {
        add(
          isObj(v) && typeof v.url === "string"
            ? limited(convertToolhiveRemote(k, v))
            : `remote_servers.${k}: needs a url`,
        );
      }
    }
  }
  if (entries.length === 0 && problems.length > 0) {
    throw new Error(`registry data has no valid entry: ${problems[0]}`);
  }
  return { entries, problems };
}

type Outcome = { entries: ServerEntry[]; problems: string[] } | { error: string };

function outcome(read: () => { entries: ServerEntry[]; problems: string[] }): Outcome {
  try {
    const { entries, problems } = read();
    return { entries, problems };
  } catch (err) {
    // The first words name the error; the format error's list of shapes is the same in both.
    return { error: (err as Error).message.split(" (")[0]! };
  }
}

function expectSame(text: string, format?: Format): void {
  const streamed = outcome(() => parseRegistryData(text, format));
  const whole = outcome(() => wholeText(text, format));
  expect(streamed, text.length > 300 ? `${text.slice(0, 300)}...` : text).toEqual(whole);
}

const server = fc.record(
  {
    name: fc.oneof(fc.constant("io.example/a"), fc.string(), fc.integer()),
    version: fc.oneof(fc.constant("1.0.0"), fc.string()),
    description: fc.oneof(fc.string(), fc.integer()),
    packages: fc.array(fc.record({ registryType: fc.constant("oci"), identifier: fc.string() })),
  },
  { requiredKeys: [] },
);
const toolhiveServer = fc.record(
  { image: fc.oneof(fc.string(), fc.integer()), url: fc.string(), tags: fc.array(fc.string()) },
  { requiredKeys: [] },
);
/** Keys as a catalog may have them, with repeats and integer-like keys. */
const key = fc.oneof(fc.constantFrom("a", "b", "1", "02", "10", "__proto__", 'é"\\'), fc.string());
/** An object written with possibly repeated keys (what JSON.stringify cannot produce). */
const objectText = (value: fc.Arbitrary<unknown>) =>
  fc
    .array(fc.tuple(key, value), { maxLength: 6 })
    .map(
      (ms) => `{${ms.map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(",\n ")}}`,
    );

const catalogText = fc.oneof(
  fc
    .array(fc.oneof(server, fc.record({ server, _meta: fc.jsonValue() }), fc.jsonValue()))
    .map((items) => JSON.stringify(items)),
  fc.array(server).map((servers) => JSON.stringify({ servers, metadata: { count: 1 } })),
  fc
    .tuple(fc.array(server), fc.jsonValue())
    .map(([servers, extra]) => JSON.stringify({ version: "1", data: { servers, extra } }, null, 2)),
  fc
    .tuple(objectText(toolhiveServer), objectText(fc.oneof(toolhiveServer, fc.jsonValue())))
    .map(([s, r]) => `{"version": "1.0.0", "servers": ${s}, "remote_servers": ${r}}`),
  fc
    .tuple(objectText(toolhiveServer), fc.array(server))
    .map(([s, list]) => `{"servers": ${s}, "data": {"servers": ${JSON.stringify(list)}}}`),
  fc.jsonValue().map((v) => JSON.stringify(v)),
);

/** A text broken (or not) at one place: cut, a character inserted or removed. */
const broken = fc
  .tuple(
    catalogText,
    fc.nat(),
    fc.constantFrom("", ",", "}", "]", '"', "\\", ":", " ", "x", "\uFEFF"),
  )
  .map(([text, at, c]) => {
    const i = text.length === 0 ? 0 : at % text.length;
    return c === "" ? text.slice(0, i) + text.slice(i + 1) : text.slice(0, i) + c + text.slice(i);
  });

describe("catalogs read one server at a time", () => {
  it("read the fixture catalogs as the whole text does", () => {
    const files = readdirSync(FIXTURES).filter((f) => f.endsWith(".json"));
    expect(files.length).toBeGreaterThan(1);
    for (const f of files) {
      const text = readFileSync(join(FIXTURES, f), "utf8");
      expectSame(text);
      expectSame(text, "upstream");
      expectSame(text, "toolhive");
    }
  });

  it("read generated catalogs of every shape as the whole text does", () => {
    fc.assert(
      fc.property(catalogText, fc.constantFrom(undefined, "upstream", "toolhive"), (text, f) =>
        expectSame(text, f),
      ),
      { numRuns: 1500, seed: 20261125 },
    );
  });

  it("refuse exactly the texts JSON.parse refuses, with the same error", () => {
    let refused = 0;
    fc.assert(
      fc.property(broken, (text) => {
        expectSame(text);
        try {
          JSON.parse(text);
        } catch {
          refused++;
        }
      }),
      { numRuns: 3000, seed: 20261125 },
    );
    // Most single-character breaks make a text that is not JSON: the property saw many.
    expect(refused).toBeGreaterThan(1000);
  });
});
