// The files of this installation that the CLI reads while it runs (package.json, schemas/,
// crds/, generated/, docs/, the kubernetes-models modules): from the package directory, or, in
// the single executable (scripts/release.ts), from the copies built into it, since that one file
// has no directory of its own to read them from.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { McpfleetError } from "./errors.js";
import { projectRoot } from "./project-root.js";

/** What the single executable's entry hands over before the CLI starts. */
export interface BundledInstallation {
  /** The files built in, by path relative to the package root (forward slashes). */
  paths: readonly string[];
  /** One of those files' text. */
  read(path: string): string;
  /** A module of generated/validators/ by file name, loaded. */
  validators(name: string): unknown;
  /** kubernetes-models' modules by path in the package (`apps/v1/Deployment.js`). */
  kubeModels: Readonly<Record<string, () => Promise<unknown>>>;
}

let bundled: BundledInstallation | undefined;

export function provideBundledInstallation(installation: BundledInstallation): void {
  bundled = installation;
}

/** Where the installation's directory `dir` is, for messages: a path, or the executable. */
export function installedPlace(dir: string): string {
  return bundled !== undefined
    ? `built into ${process.execPath}`
    : `in ${join(projectRoot(), dir)}`;
}

/** The text of one file of the installation (`generated/schemas.json`). */
export function installedText(path: string): string {
  if (bundled === undefined) return readFileSync(join(projectRoot(), path), "utf8");
  if (!bundled.paths.includes(path)) {
    throw new McpfleetError("ERR_IO", `${path} is not built into this executable`);
  }
  return bundled.read(path);
}

export interface InstalledFile {
  /** Relative to the directory asked for, with forward slashes. */
  path: string;
  text: string;
}

/** The files under one directory of the installation whose names end in `ext`, by path. */
export function installedFiles(dir: string, ext: string): InstalledFile[] {
  const out: InstalledFile[] = [];
  if (bundled !== undefined) {
    for (const path of bundled.paths) {
      if (path.startsWith(dir + "/") && path.endsWith(ext)) {
        out.push({ path: path.slice(dir.length + 1), text: bundled.read(path) });
      }
    }
  } else {
    const root = join(projectRoot(), dir);
    const walk = (d: string): void => {
      for (const entry of readdirSync(d, { withFileTypes: true })) {
        const full = join(d, entry.name);
        if (entry.isDirectory()) walk(full);
        else if (entry.name.endsWith(ext)) {
          out.push({
            path: relative(root, full).split(sep).join("/"),
            text: readFileSync(full, "utf8"),
          });
        }
      }
    };
    walk(root);
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The module `name` of generated/validators/, loaded (throws when it was never generated). From
 * the package directory, `load` takes the file's path (the default: require).
 */
export function installedValidators(
  name: string,
  load: (path: string) => unknown = (path) => createRequire(path)(path),
): unknown {
  if (bundled !== undefined) return bundled.validators(name);
  return load(join(projectRoot(), "generated", "validators", name));
}

/** A package's directory tree, as far as existence and listing go (`.` is its root). */
export interface PackageTree {
  exists(path: string): boolean;
  readdir(path: string): string[];
  /** The module at `path` (`apps/v1/Deployment`), imported. */
  load(path: string): Promise<unknown>;
}

let models: PackageTree | undefined;

/** The kubernetes-models package: its directory, or the modules bundled into the executable. */
export function kubeModelsTree(): PackageTree {
  if (models !== undefined) return models;
  const modules = bundled?.kubeModels;
  if (modules === undefined) {
    const root = dirname(fileURLToPath(import.meta.resolve("kubernetes-models")));
    return (models = {
      exists: (path) => existsSync(join(root, path)),
      readdir: (path) => readdirSync(join(root, path)),
      load: (path) => import(`kubernetes-models/${path}`),
    });
  }
  // Directories, each with its entries, from the bundled modules' paths.
  const dirs = new Map<string, Set<string>>();
  for (const path of Object.keys(modules)) {
    const parts = path.split("/");
    for (let i = 0; i < parts.length; i++) {
      const dir = parts.slice(0, i).join("/");
      let entries = dirs.get(dir);
      if (entries === undefined) dirs.set(dir, (entries = new Set()));
      entries.add(parts[i]!);
    }
  }
  const noEntry = (path: string): Error =>
    Object.assign(new Error(`ENOENT: ${path}`), { code: "ENOENT" });
  // `apps/`, `apps` and, for the root, `.` name the same directory, as they do on disk.
  const dirKey = (path: string): string => (path === "." ? "" : path.replace(/\/+$/, ""));
  return (models = {
    exists: (path) => path in modules || dirs.has(dirKey(path)),
    readdir: (path) => {
      const entries = dirs.get(dirKey(path));
      if (entries === undefined) throw noEntry(path);
      return [...entries].sort();
    },
    load: (path) => {
      const load = modules[`${path}.js`];
      return load !== undefined ? load() : Promise.reject(noEntry(path));
    },
  });
}
