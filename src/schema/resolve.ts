import { unescapeSegment } from "../json-pointer.js";
import type { SchemaFile, SchemaNode } from "./load.js";
import { McpfleetError } from "../errors.js";

export interface ResolvedNode {
  /** `$id` of the file the node lives in (the base for its own relative references). */
  fileId: string;
  /** JSON pointer of the node inside that file ("" for the root). */
  pointer: string;
  node: SchemaNode;
}

/** Looks up schema nodes by `$id` plus JSON-pointer fragment, across the files of schemas/. */
export class SchemaIndex {
  private readonly byId = new Map<string, SchemaFile>();

  constructor(readonly files: readonly SchemaFile[]) {
    for (const file of files) this.byId.set(file.id, file);
  }

  file(id: string): SchemaFile {
    const file = this.byId.get(id);
    if (file === undefined) throw new McpfleetError("ERR_SCHEMA_LOAD", `unknown schema file ${id}`);
    return file;
  }

  /** Resolves `ref` (relative or absolute, with optional fragment) against the file `baseId`. */
  resolve(baseId: string, ref: string): ResolvedNode {
    const [target = "", fragment = ""] = ref.split("#");
    const fileId = target === "" ? baseId : new URL(target, baseId).href;
    const file = this.file(fileId);
    let node: unknown = file.schema;
    for (const raw of fragment.split("/").filter((p) => p !== "")) {
      node = (node as SchemaNode | undefined)?.[unescapeSegment(raw)];
    }
    if (node === null || typeof node !== "object") {
      throw new McpfleetError(
        "ERR_SCHEMA_LOAD",
        `${ref} (from ${baseId}) does not resolve to a schema`,
      );
    }
    return { fileId, pointer: fragment, node: node as SchemaNode };
  }
}
