import { installedText } from "./assets.js";

export { projectRoot } from "./project-root.js";

export function projectVersion(): string {
  const pkg = JSON.parse(installedText("package.json")) as { version: string };
  return pkg.version;
}
