// Our CRDs (crds/*.yaml) as the JSON schema files kubeconform reads by location template
// (`-schema-location 'DIR/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json'`), for
// the bench that times validate against it: the openAPIV3Schema of each served version, as
// kubeconform's openapi2jsonschema converts a CRD. Strict as validate is by default: every
// object node that lists its properties and keeps no unknown fields
// (`x-kubernetes-preserve-unknown-fields`) gets `additionalProperties: false`, so an unknown
// field is an error to both. CEL rules (`x-kubernetes-validations`) are left as they are:
// kubeconform ignores keywords it does not know, so it checks the schema level only.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { load } from "js-yaml";

type Node = Record<string, unknown>;

const isNode = (v: unknown): v is Node => typeof v === "object" && v !== null && !Array.isArray(v);

/** A copy of a structural schema node with unknown fields refused where the CRD prunes them. */
function strict(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strict);
  if (!isNode(node)) return node;
  const out: Node = {};
  for (const [k, v] of Object.entries(node)) {
    // Maps of schemas by name: their keys are field names, not keywords.
    out[k] =
      (k === "properties" || k === "patternProperties") && isNode(v)
        ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, strict(s)]))
        : strict(v);
  }
  if (
    isNode(node.properties) &&
    node["x-kubernetes-preserve-unknown-fields"] !== true &&
    node.additionalProperties === undefined
  ) {
    out.additionalProperties = false;
  }
  return out;
}

/** Writes DIR/GROUP/KIND_VERSION.json (kind in lower case) for every served version; the count. */
export function writeKubeconformSchemas(crdDir: string, outDir: string): number {
  let written = 0;
  for (const file of readdirSync(crdDir).filter((f) => f.endsWith(".yaml"))) {
    const crd = load(readFileSync(join(crdDir, file), "utf8")) as {
      spec: {
        group: string;
        names: { kind: string };
        versions: { name: string; served: boolean; schema: { openAPIV3Schema: Node } }[];
      };
    };
    const { group, names, versions } = crd.spec;
    mkdirSync(join(outDir, group), { recursive: true });
    for (const v of versions.filter((x) => x.served)) {
      const schema = strict(v.schema.openAPIV3Schema) as Node;
      const name = `${names.kind.toLowerCase()}_${v.name}.json`;
      writeFileSync(join(outDir, group, name), JSON.stringify(schema));
      written++;
    }
  }
  return written;
}

/** The location template kubeconform is given for a directory written above. */
export function kubeconformLocation(outDir: string): string {
  return `${outDir}/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json`;
}
