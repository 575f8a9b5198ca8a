import { type Kind, KINDS, kindSchemaId, API_GROUP, SERVED_VERSIONS } from "./kinds.js";
import type { SchemaNode } from "./load.js";
import type { SchemaIndex } from "./resolve.js";
import { typeNames } from "./typegen.js";
import { isObject } from "../json.js";

interface NamedType {
  key: string;
  name: string;
  fileId: string;
  node: SchemaNode;
}

function escapeCell(text: string): string {
  return text
    .replace(/\|/g, "\\|")
    .replace(/\s*\n\s*/g, " ")
    .trim();
}

function anchor(name: string): string {
  return name.toLowerCase();
}

/** Renders the readable field reference of one kind: every named type reachable from it. */
class KindPage {
  private readonly queue: NamedType[] = [];
  private readonly seen = new Set<string>();

  constructor(
    private readonly index: SchemaIndex,
    private readonly names: Map<string, string>,
  ) {}

  private named(fileId: string, ref: string): NamedType {
    const target = this.index.resolve(fileId, ref);
    const key = `${target.fileId}#${target.pointer}`;
    const name = this.names.get(key) ?? key;
    const named = { key, name, fileId: target.fileId, node: target.node };
    if (!this.seen.has(key)) {
      this.seen.add(key);
      this.queue.push(named);
    }
    return named;
  }

  private typeLabel(fileId: string, node: SchemaNode): string {
    if (typeof node.$ref === "string") {
      const named = this.named(fileId, node.$ref);
      const inner = named.node;
      if (inner.type === "object" && isObject(inner.properties))
        return `[${named.name}](#${anchor(named.name)})`;
      return `${this.typeLabel(named.fileId, inner)}`;
    }
    if (Array.isArray(node.anyOf)) {
      return (node.anyOf as SchemaNode[]).map((b) => this.typeLabel(fileId, b)).join(" or ");
    }
    if (node.type === "array" && isObject(node.items))
      return `[]${this.typeLabel(fileId, node.items)}`;
    if (node.type === "object" && isObject(node.additionalProperties)) {
      return `map[string]${this.typeLabel(fileId, node.additionalProperties)}`;
    }
    if (node.type === "object" && isObject(node.properties)) return "object";
    if (node["x-kubernetes-preserve-unknown-fields"] === true) return "object (free form)";
    return typeof node.type === "string" ? node.type : "any";
  }

  private rules(fileId: string, node: SchemaNode): string[] {
    const target = typeof node.$ref === "string" ? this.index.resolve(fileId, node.$ref).node : {};
    const merged = { ...target, ...node };
    const out: string[] = [];
    const num = (key: string): string | undefined =>
      typeof merged[key] === "number" ? String(merged[key]) : undefined;
    if (merged.deprecated === true) out.push("**Deprecated.**");
    if (Array.isArray(merged.enum)) {
      out.push(`One of ${merged.enum.map((v) => `\`${JSON.stringify(v)}\``).join(", ")}.`);
    }
    if (num("minimum") !== undefined || num("maximum") !== undefined) {
      out.push(`Range ${num("minimum") ?? "−∞"} to ${num("maximum") ?? "∞"}.`);
    }
    const limits: [string, string][] = [
      ["minLength", "Min length"],
      ["maxLength", "Max length"],
      ["minItems", "Min items"],
      ["maxItems", "Max items"],
    ];
    for (const [key, label] of limits) {
      const value = num(key);
      if (value !== undefined) out.push(`${label} ${value}.`);
    }
    if (typeof merged.pattern === "string") out.push(`Pattern \`${merged.pattern}\`.`);
    return out;
  }

  private section(named: NamedType): string {
    const node = named.node;
    const lines = [`## ${named.name}`, ""];
    if (typeof node.description === "string") lines.push(escapeCell(node.description), "");
    const props = isObject(node.properties) ? node.properties : {};
    const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
    if (Object.keys(props).length > 0) {
      lines.push("| Field | Type | Default | Description |", "|---|---|---|---|");
      for (const [field, raw] of Object.entries(props)) {
        const sub = raw as SchemaNode;
        const description = [
          typeof sub.description === "string" ? sub.description : "",
          ...this.rules(named.fileId, sub),
        ]
          .filter((s) => s !== "")
          .join(" ");
        const def = sub.default === undefined ? "" : `\`${JSON.stringify(sub.default)}\``;
        lines.push(
          `| \`${field}\`${required.has(field) ? " (required)" : ""} | ${escapeCell(this.typeLabel(named.fileId, sub))} | ${escapeCell(def)} | ${escapeCell(description)} |`,
        );
      }
      lines.push("");
    }
    const celRules = node["x-kubernetes-validations"];
    if (Array.isArray(celRules) && celRules.length > 0) {
      lines.push("Rules:", "");
      for (const r of celRules as { rule: string; message?: string }[]) {
        lines.push(`- ${r.message ?? "rule"}: \`${r.rule}\``);
      }
      lines.push("");
    }
    return lines.join("\n");
  }

  render(kind: Kind): string {
    const id = kindSchemaId(kind);
    const root = this.index.file(id).schema;
    const props = root.properties as SchemaNode;
    const head = [
      `# ${kind}`,
      "",
      "<!-- Generated by `make generate` from schemas/. Do not edit by hand. -->",
      "",
      `API group \`${API_GROUP}\`, versions ${SERVED_VERSIONS.map((v) => `\`${v}\``).join(", ")}. Namespaced.`,
      "",
    ];
    if (typeof root.description === "string") head.push(escapeCell(root.description), "");
    for (const part of ["spec", "status"]) {
      const node = props[part] as SchemaNode | undefined;
      if (node && typeof node.$ref === "string") this.named(id, node.$ref);
    }
    const body: string[] = [];
    for (let i = 0; i < this.queue.length; i++) body.push(this.section(this.queue[i] as NamedType));
    return [...head, ...body].join("\n").trimEnd() + "\n";
  }
}

/** Markdown pages keyed by file name (`mcpserver.md`, ..., `README.md`). */
export function generateDocs(index: SchemaIndex): Map<string, string> {
  const names = typeNames(index.files);
  const pages = new Map<string, string>();
  const list = [
    "# API reference",
    "",
    "<!-- Generated by `make generate` from schemas/. Do not edit by hand. -->",
    "",
  ];
  for (const kind of KINDS) {
    pages.set(`${kind.toLowerCase()}.md`, new KindPage(index, names).render(kind));
    list.push(`- [${kind}](${kind.toLowerCase()}.md)`);
  }
  pages.set("README.md", list.join("\n") + "\n");
  return pages;
}
