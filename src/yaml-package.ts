// The yaml package, loaded on first use rather than with the module that needs it: validate
// reads nearly every file with js-yaml's events (src/yaml/events.ts) and the schemas
// from their JSON snapshot, so most runs never need it, and loading its 72 modules took about
// 15 ms of every start. Node resolves `yaml` to the same CommonJS build for require and import.
import { createRequire } from "node:module";
import type * as Yaml from "yaml";

const require = createRequire(import.meta.url);
let loaded: typeof Yaml | undefined;

export function yamlPackage(): typeof Yaml {
  return (loaded ??= require("yaml") as typeof Yaml);
}
