// A resource of one of our kinds: its facts taken for the reference level, then its schema,
// CEL, registry-config and run-time checks.
import { API_GROUP, type Kind, SERVED_VERSIONS, isOwnApiVersion } from "../schema/index.js";
import type { Context } from "./context.js";
import { validateEmbeddedConfig } from "./registry-config-checks.js";
import { sourceRuleIssues } from "./registry-config.js";
import { resourceFacts } from "./reference-facts.js";
import { isObject } from "../json.js";
import { type Unit, addIssue } from "./resource.js";
import { runtimeIssues } from "./runtime-rules.js";
import { addConfigIssues, addRuntimeIssues, addSchemaIssues } from "./unit-issues.js";

/** Validates a resource of kind `kind` (one of ours) at the schema, CEL and run-time levels. */
export function validateOwn(
  unit: Unit,
  kind: Kind,
  apiVersion: string,
  value: Record<string, unknown>,
  ctx: Context,
): void {
  // What the reference level needs is taken now, from the document as written, so that the
  // document itself need not be kept until every file has been read.
  const { namespace, name } = unit.result;
  if (name !== "") {
    const identity = { kind, namespace, name };
    const facts = resourceFacts(identity, value, ctx.patterns(kind), ctx.references.known);
    ctx.references.add(facts, unit);
  }
  if (kind === "MCPServer" || kind === "MCPRegistry") ctx.enforce.noteOwn(kind, unit, value);
  const spec = kind === "MCPRegistry" && isObject(value.spec) ? value.spec : undefined;
  const covered = spec === undefined ? [] : sourceRuleIssues(spec);
  const configYAML = typeof spec?.configYAML === "string" ? spec.configYAML : undefined;
  const issues = ctx.set.validateKindInPlace(kind, value, unit.doc.nullFields);
  if (!isOwnApiVersion(apiVersion) && !issues.some((i) => i.path === "/apiVersion")) {
    addIssue(
      unit,
      "/apiVersion",
      `${kind} is served as ${SERVED_VERSIONS.map((v) => `${API_GROUP}/${v}`).join(" or ")}, not ${apiVersion}`,
      "schema",
    );
  }
  // Server-side apply needs a name (generateName only works with create); the schemas'
  // ObjectMeta leaves it optional, so the validator checks it.
  if (isObject(value.metadata) && name === "" && !issues.some((i) => i.path === "/metadata/name")) {
    addIssue(unit, "/metadata/name", 'missing required field "name"', "schema");
  }
  addSchemaIssues(unit, issues, ctx.options, "/spec", covered);
  addConfigIssues(unit, "/spec", covered);
  addRuntimeIssues(unit, runtimeIssues(kind, value));
  if (configYAML !== undefined) validateEmbeddedConfig(unit, "/spec/configYAML", configYAML, ctx);
}
