// The editor schemas (schemas-editor/, generated): what an editor using them says about a file
// agrees with `mcpfleet validate` on every example, and a misspelt field is flagged.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { projectRoot } from "../../src/project.js";
import { KINDS } from "../../src/schema/kinds.js";

const root = projectRoot();

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? yamlFiles(join(dir, e.name))
      : e.name.endsWith(".yaml")
        ? [join(dir, e.name)]
        : [],
  );
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validators = new Map(
  KINDS.map((kind) => {
    const schema = JSON.parse(
      readFileSync(join(root, "schemas-editor", `${kind.toLowerCase()}.json`), "utf8"),
    ) as object;
    return [kind, ajv.compile(schema)] as const;
  }),
);

const documents = yamlFiles(join(root, "examples"))
  .flatMap((file) =>
    parseAllDocuments(readFileSync(file, "utf8")).map((d) => ({ file, doc: d.toJS() as unknown })),
  )
  .filter(
    (d): d is { file: string; doc: { kind: (typeof KINDS)[number] } } =>
      typeof d.doc === "object" &&
      d.doc !== null &&
      validators.has((d.doc as { kind: (typeof KINDS)[number] }).kind),
  );

describe("editor schemas", () => {
  it("exist for every kind and accept every example of it", () => {
    expect(new Set(documents.map((d) => d.doc.kind)).size).toBe(KINDS.length);
    for (const { file, doc } of documents) {
      const validate = validators.get(doc.kind)!;
      expect(validate(doc), `${file}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it("flag a misspelt field, a wrong kind and a wrong API version", () => {
    const server = documents.find((d) => d.doc.kind === "MCPServer")!.doc as unknown as {
      spec: Record<string, unknown>;
    };
    const validate = validators.get("MCPServer")!;
    const typo = structuredClone(server);
    typo.spec.transprot = "stdio";
    expect(validate(typo)).toBe(false);
    expect(validate.errors?.[0]).toMatchObject({
      keyword: "additionalProperties",
      params: { additionalProperty: "transprot" },
    });
    expect(validate({ ...server, kind: "MCPRemoteProxy" })).toBe(false);
    expect(validate({ ...server, apiVersion: "toolhive.stacklok.io/v1alpha1" })).toBe(false);
  });
});
