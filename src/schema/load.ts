import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { installedFiles, installedText } from "../assets.js";
import { yamlPackage } from "../yaml-package.js";
import { projectRoot } from "../project.js";
import { SCHEMA_BASE } from "./kinds.js";
import { McpfleetError } from "../errors.js";

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

interface SourceText {
  path: string;
  text: string;
}

function readSources(dir: string): SourceText[] {
  return listYaml(dir).map((file) => ({
    path: relative(dir, file).split(sep).join("/"),
    text: readFileSync(file, "utf8"),
  }));
}

function parseSources(sources: readonly SourceText[]): SchemaFile[] {
  return sources.map(({ path, text }) => {
    const schema = yamlPackage().parse(text) as SchemaNode;
    const expected = SCHEMA_BASE + path;
    if (schema.$id !== expected) {
      throw new McpfleetError(
        "ERR_SCHEMA_LOAD",
        `schemas/${path}: $id must be ${expected}, found ${String(schema.$id)}`,
      );
    }
    return { id: expected, path, schema };
  });
}

/** Reads every schema file; each must declare the `$id` its path implies. */
export function loadSchemaFiles(dir: string = schemasDir()): SchemaFile[] {
  return parseSources(readSources(dir));
}

/** Where `make generate` writes the parsed schemas as JSON (see schemaSnapshot). */
export const SNAPSHOT_PATH = "generated/schemas.json";

interface Snapshot {
  /** Digest of the schema files the snapshot was made from (paths and texts). */
  digest: string;
  files: SchemaFile[];
}

function digestOf(sources: readonly SourceText[]): string {
  const hash = createHash("sha256");
  for (const { path, text } of sources) hash.update(path).update("\0").update(text).update("\0");
  return hash.digest("hex");
}

/**
 * The parsed schemas as JSON, with the digest of their sources: parsing JSON costs about a
 * hundredth of parsing the YAML, which is most of a one-file `mcpfleet validate`'s start.
 */
export function schemaSnapshot(dir: string = schemasDir()): string {
  const sources = readSources(dir);
  const snapshot: Snapshot = { digest: digestOf(sources), files: parseSources(sources) };
  return JSON.stringify(snapshot) + "\n";
}

/** Schema sets read from the snapshot, with its digest. */
const snapshots = new WeakMap<readonly SchemaFile[], string>();

/**
 * True for schemas read from the snapshot, which `make generate` writes only after checking every
 * schema against the JSON Schema meta-schema: a schema set need not check them again.
 */
export function isCheckedSnapshot(files: readonly SchemaFile[]): boolean {
  return snapshots.has(files);
}

/** The digest of the sources of schemas read from the snapshot; undefined for any others. */
export function snapshotDigest(files: readonly SchemaFile[]): string | undefined {
  return snapshots.get(files);
}

/**
 * The schemas of this installation: from the snapshot when it was made from exactly the files
 * in schemas/ (their texts are read and hashed, which is cheap), else parsed from the YAML.
 */
export function loadInstalledSchemaFiles(): SchemaFile[] {
  const sources: SourceText[] = installedFiles("schemas", ".yaml");
  try {
    const text = installedText(SNAPSHOT_PATH);
    const snapshot = JSON.parse(text) as Snapshot;
    if (snapshot.digest === digestOf(sources) && Array.isArray(snapshot.files)) {
      snapshots.set(snapshot.files, snapshot.digest);
      return snapshot.files;
    }
  } catch {
    // No snapshot (or an unreadable one): the YAML is the source of truth.
  }
  return parseSources(sources);
}
