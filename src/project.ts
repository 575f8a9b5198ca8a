import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { installedText } from "./assets.js";

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
    if (parent === dir) throw new Error("mcpfleet: cannot find the project's package.json");
    dir = parent;
  }
}

export function projectVersion(): string {
  const pkg = JSON.parse(installedText("package.json")) as { version: string };
  return pkg.version;
}
