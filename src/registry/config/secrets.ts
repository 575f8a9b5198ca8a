// Secrets for the registry server: database passwords come from a password file, then the
// environment, then the pgpass file ($PGPASSFILE or ~/.pgpass), then a clear-text value in the
// config (accepted with a warning when the config is loaded).
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { McpfleetError } from "../../errors.js";

/** Reads a secret file, without its trailing newline. */
export function readSecretFile(path: string): string {
  try {
    return readFileSync(path, "utf8").replace(/\r?\n$/, "");
  } catch (err) {
    throw new McpfleetError(
      "ERR_IO",
      `cannot read secret file ${path}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
}

function splitPgpassLine(line: string): string[] {
  const fields: string[] = [];
  let cur = "";
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (c === "\\" && i + 1 < line.length) {
      cur += line[++i];
    } else if (c === ":") {
      fields.push(cur);
      cur = "";
    } else {
      cur += c;
    }
  }
  fields.push(cur);
  return fields;
}

/** Looks a password up in a pgpass file (host:port:database:user:password, `*` wildcards). */
export function pgpassLookup(
  text: string,
  want: { host: string; port: number; database: string; user: string },
): string | undefined {
  for (const raw of text.split(/\r?\n/)) {
    if (raw.trim() === "" || raw.startsWith("#")) continue;
    const f = splitPgpassLine(raw);
    if (f.length < 5) continue;
    const [h, p, d, u] = f as [string, string, string, string];
    const match = (pat: string, v: string): boolean => pat === "*" || pat === v;
    if (
      match(h, want.host) &&
      match(p, String(want.port)) &&
      match(d, want.database) &&
      match(u, want.user)
    ) {
      return f.slice(4).join(":");
    }
  }
  return undefined;
}

export interface PasswordSources {
  file?: string;
  env?: string[];
  clearText?: string;
  host: string;
  port: number;
  database: string;
  user: string;
}

/** Finds a database password; undefined when none is configured anywhere. */
export function resolvePassword(
  s: PasswordSources,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (s.file !== undefined) return readSecretFile(s.file);
  for (const name of s.env ?? []) {
    const v = env[name];
    if (v !== undefined && v !== "") return v;
  }
  const pgpass = env.PGPASSFILE ?? join(homedir(), ".pgpass");
  let text: string | undefined;
  try {
    text = readFileSync(pgpass, "utf8");
  } catch {
    text = undefined;
  }
  if (text !== undefined) {
    const found = pgpassLookup(text, s);
    if (found !== undefined) return found;
  }
  return s.clearText;
}
