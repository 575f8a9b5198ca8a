// Admin bodies are the configuration file's shapes: a source or registry validated against the
// registry config schema, named by the path (a name in the body must agree with it).
import { defaultSchemaSet, REGISTRY_CONFIG_SCHEMA_ID } from "../../schema/index.js";
import { fail } from "./problem.js";

export function validateAdminBody(
  def: "Source" | "Registry",
  raw: Record<string, unknown> | null | undefined,
  name: string,
): Record<string, unknown> {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    fail("ERR_INVALID_RESOURCE", `the body must be a ${def.toLowerCase()} (a JSON object)`);
  }
  if (raw.name !== undefined && raw.name !== name) {
    fail(
      "ERR_INVALID_RESOURCE",
      `body name ${JSON.stringify(raw.name)} differs from the path's "${name}"`,
    );
  }
  const doc = { ...raw, name };
  const issues = defaultSchemaSet()
    .validateSchema(`${REGISTRY_CONFIG_SCHEMA_ID}#/$defs/${def}`, doc)
    .filter((i) => i.unknownField !== true);
  if (issues.length > 0) {
    fail(
      "ERR_INVALID_RESOURCE",
      `invalid ${def.toLowerCase()}: ${issues.map((i) => `${i.path || "/"}: ${i.message}`).join("; ")}`,
    );
  }
  return doc;
}
