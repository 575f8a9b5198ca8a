// `mcpfleet validate`'s schema and CEL levels against the real API server with our CRDs: for
// every admission-stage case of the reference operator's tests, every example, and thousands of
// generated mutations of the examples, validate's verdict equals a server-side dry-run create
// with strict field validation. The run prints the agreement and each disagreement with its
// resource.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { parseAllDocuments } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { KubeApiError, type KubeClient } from "../../src/infra/kube/client.js";
import { validateTexts } from "../../src/validate/index.js";
import { noCluster } from "../support/cluster/context.js";
import { hasSharedData } from "../support/shared-data.js";
import { PEER_CASES, readPeerCases } from "../validate/peer-cases.js";
import { applyValue } from "../validate/mutations.js";
import { ROOT, client, installCrds, namespace } from "./helpers.js";

const GROUP = "toolhive.stacklok.dev";
const MUTATIONS = 5000;
/** Requests in flight at once: the client's connection pool holds 16. */
const BATCH = 16;

type Doc = Record<string, unknown> & { apiVersion: string; kind: string; metadata?: unknown };

interface Case {
  origin: string;
  doc: Doc;
}

interface Verdict {
  valid: boolean;
  detail: string;
}

function ourDocs(text: string): Doc[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as unknown)
    .filter(
      (d): d is Doc =>
        d !== null &&
        typeof d === "object" &&
        typeof (d as Doc).apiVersion === "string" &&
        (d as Doc).apiVersion.startsWith(`${GROUP}/`),
    );
}

function exampleCases(): Case[] {
  const dir = join(ROOT, "examples", "resources");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .flatMap((f) =>
      ourDocs(readFileSync(join(dir, f), "utf8")).map((doc) => ({ origin: `example ${f}`, doc })),
    );
}

function peerCases(): Case[] {
  if (!hasSharedData(PEER_CASES, "the differential test's peer cases")) return [];
  return readPeerCases()
    .filter((p) => p.stage === "admission")
    .flatMap((p) => ourDocs(p.text).map((doc) => ({ origin: `peer ${p.name}`, doc })));
}

/** Values a mutation puts in place: arbitrary JSON, and values near the schemas' edges. */
const mutationValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    "",
    "x",
    "1h",
    "-1s",
    "http://example.com",
    "https://example.com/a",
    "ftp://example.com",
    "redis",
    "memory",
    "inline",
    "tool",
    0,
    -1,
    1,
    65535,
    65536,
    1.5,
    true,
    false,
    null,
    [],
    {},
    { name: "x" },
    [{ name: "a" }, { name: "a" }],
  ),
);

/** Mutations of the examples' specs: one value replaced at a random path. */
function mutationCases(examples: readonly Case[]): Case[] {
  const arb = fc.record({
    example: fc.nat({ max: examples.length - 1 }),
    path: fc.array(fc.nat({ max: 64 }), { minLength: 1, maxLength: 6 }),
    value: mutationValue,
  });
  return fc.sample(arb, { numRuns: MUTATIONS, seed: 20261125 }).map((m, i) => {
    const base = examples[m.example]!;
    const spec = applyValue(base.doc.spec, m.path, m.value);
    return { origin: `mutation ${i} of ${base.origin}`, doc: { ...base.doc, spec } };
  });
}

/** With the namespace of the run and a name of its own (dry runs store nothing anyway). */
function placed(doc: Doc, ns: string, i: number): Doc {
  const metadata = doc.metadata !== null && typeof doc.metadata === "object" ? doc.metadata : {};
  return { ...doc, metadata: { ...metadata, name: `case-${i}`, namespace: ns } };
}

/**
 * validate's verdict without its run-time level (rules the operator checks after admission, and
 * what a CRD cannot express: a value union's type, a rule reading one, the registry-server
 * configuration inside configYAML); missing references are warnings. A registry's typed source
 * rules are reported at the reference level, but are CEL rules of the CRD too: they count.
 */
async function ourVerdict(doc: Doc): Promise<Verdict> {
  const report = await validateTexts([{ name: "case.json", text: JSON.stringify(doc) }], {
    allowMissingRefs: true,
  });
  const errors = report.resources.flatMap((r) => r.errors).filter((e) => e.level !== "runtime");
  return {
    valid: errors.length === 0,
    detail: errors.map((e) => `${e.path}: ${e.message}`).join("; "),
  };
}

async function serverVerdict(c: KubeClient, doc: Doc, ns: string): Promise<Verdict> {
  const path = await c.path(doc.apiVersion, doc.kind, ns);
  try {
    await c.request("POST", path, {
      query: { dryRun: "All", fieldValidation: "Strict", fieldManager: "mcpfleet-test" },
      body: doc,
    });
    return { valid: true, detail: "" };
  } catch (err) {
    if (err instanceof KubeApiError && (err.status === 422 || err.status === 400)) {
      return { valid: false, detail: err.message };
    }
    throw err;
  }
}

describe.skipIf(noCluster())("validate against the API server (dry-run create)", () => {
  let c: KubeClient;
  let ns: string;

  beforeAll(async () => {
    c = client();
    await installCrds(c);
    ns = await namespace(c, "validate-diff");
  });

  it("gives the API server's verdict on peer cases, examples and mutations", async () => {
    const examples = exampleCases();
    const cases = [...peerCases(), ...examples, ...mutationCases(examples)];
    const differences: string[] = [];
    for (let start = 0; start < cases.length; start += BATCH) {
      await Promise.all(
        cases.slice(start, start + BATCH).map(async (k, j) => {
          const doc = placed(k.doc, ns, start + j);
          const [ours, theirs] = await Promise.all([ourVerdict(doc), serverVerdict(c, doc, ns)]);
          if (ours.valid === theirs.valid) return;
          differences.push(
            `  ${k.origin}: API server ${theirs.valid ? "accepts" : "rejects"}, validate ${ours.valid ? "accepts" : "rejects"}\n` +
              `    server: ${theirs.detail || "-"}\n    validate: ${ours.detail || "-"}\n` +
              `    resource: ${JSON.stringify(doc)}`,
          );
        }),
      );
    }
    const agree = cases.length - differences.length;
    const pct = ((100 * agree) / cases.length).toFixed(2);
    console.log(
      [
        `validate vs API server: ${agree}/${cases.length} agree (${pct}%); ` +
          `${differences.length} differences`,
        ...differences,
      ].join("\n"),
    );
    expect(cases.length).toBeGreaterThan(MUTATIONS);
    expect(differences).toEqual([]);
  }, 600_000);
});
