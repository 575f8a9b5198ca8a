// The definitions of an installed schema file, from the schema set the server already loaded
// (its configuration was checked against it at start): no file is read or parsed again.
import { McpfleetError } from "../../errors.js";
import { defaultSchemaSet } from "../../schema/index.js";

export type Schema = Record<string, unknown>;

/** The `$defs` of schemas/<path> (for example `registry/server-json.yaml`). */
export function installedDefs(path: string): Record<string, Schema> {
  const file = defaultSchemaSet().files.find((f) => f.path === path);
  const defs = (file?.schema as { $defs?: Record<string, Schema> } | undefined)?.$defs;
  if (defs === undefined) {
    throw new McpfleetError("ERR_SCHEMA_LOAD", `the installed schemas have no ${path} definitions`);
  }
  return defs;
}
