import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { parse } from "yaml";
import { projectRoot } from "../project.js";
import { SCHEMA_BASE } from "./kinds.js";

/** A JSON Schema node as written in schemas/ (YAML). */
export type SchemaNode = { [key: string]: unknown };

export interface SchemaFile {
  /** The file's `$id`. */
  id: string;
  /** Path relative to the schemas directory, with forward slashes. */
  path: string;
  schema: SchemaNode;
}

export function schemasDir(): string {
  return join(projectRoot(), "schemas");
}

function listYaml(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listYaml(full));
    else if (entry.name.endsWith(".yaml")) out.push(full);
  }
  return out.sort();
}

/** Reads every schema file; each must declare the `$id` its path implies. */
export function loadSchemaFiles(dir: string = schemasDir()): SchemaFile[] {
  return listYaml(dir).map((file) => {
    const path = relative(dir, file).split(sep).join("/");
    const schema = parse(readFileSync(file, "utf8")) as SchemaNode;
    const expected = SCHEMA_BASE + path;
    if (schema.$id !== expected) {
      throw new Error(`schemas/${path}: $id must be ${expected}, found ${String(schema.$id)}`);
    }
    return { id: expected, path, schema };
  });
}
