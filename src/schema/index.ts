export { SchemaSet, defaultSchemaSet, type SchemaIssue, type IssueLevel } from "./validator.js";
export { loadSchemaFiles, schemasDir, type SchemaFile, type SchemaNode } from "./load.js";
export * from "./kinds.js";
export { compileRule, evaluateRule, CelCompileError } from "./cel.js";
