// For the two bundles of the CLI (scripts/bundle.ts, scripts/release.ts): a package asking for
// "punycode" means its npm dependency of that name. Node resolves the built-in first, and warns
// (DEP0040) when the caller is not inside node_modules, as no bundled code is.
import { join } from "node:path";
import type { Plugin } from "esbuild";

export function userlandPunycode(root: string): Plugin {
  return {
    name: "userland-punycode",
    setup(b) {
      b.onResolve({ filter: /^punycode$/ }, () => ({
        path: join(root, "node_modules", "punycode", "punycode.js"),
      }));
    },
  };
}
