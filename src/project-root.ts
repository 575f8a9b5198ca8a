// Where mcpfleet's own package directory is. Kept apart from project.ts, which reads the
// version through the installation's files (assets.ts), so that assets.ts can find the
// package directory without depending on project.ts.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { McpfleetError } from "./errors.js";

let cachedRoot: string | undefined;

/**
 * The directory holding mcpfleet's package.json. Found by walking up from this module, so it is
 * the same whether the code runs from src/ (tsx) or from build/ (compiled).
 */
export function projectRoot(): string {
  if (cachedRoot !== undefined) return cachedRoot;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, "package.json");
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, "utf8")) as { name?: string };
      if (pkg.name === "mcpfleet") return (cachedRoot = dir);
    }
    const parent = dirname(dir);
    if (parent === dir) {
      throw new McpfleetError("ERR_IO", "cannot find the project's package.json");
    }
    dir = parent;
  }
}
