// The runtime programs `make runtime-tools` builds (tools/runtime/build.sh): where they are, and
// whether the tests that run them can. Without them those tests skip with one line saying why,
// unless REQUIRE_RUNTIME=1 (CI), which fails them instead.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, ".tools", "runtime", "current", "bin");
export const PROGRAMS = ["thv-proxyrunner", "vmcp", "runconfig-check", "resource-check"] as const;
export type Program = (typeof PROGRAMS)[number];

/** Why the runtime programs cannot run here, or undefined when they can. */
export function runtimeMissing(): string | undefined {
  const absent = PROGRAMS.filter((p) => !existsSync(join(BIN, p)));
  if (absent.length === 0) return undefined;
  const reason = `runtime programs not built (${absent.join(", ")} missing in ${BIN}; run make runtime-tools)`;
  if (process.env.REQUIRE_RUNTIME === "1") throw new Error(`REQUIRE_RUNTIME=1: ${reason}`);
  return reason;
}

export function programPath(p: Program): string {
  return join(BIN, p);
}

/** The ToolHive version tools/runtime/go.mod pins. */
export function pinnedToolhiveVersion(): string {
  const mod = readFileSync(join(ROOT, "tools", "runtime", "go.mod"), "utf8");
  const m = /^\s*github\.com\/stacklok\/toolhive (v\S+)/m.exec(mod);
  if (m?.[1] === undefined)
    throw new Error("tools/runtime/go.mod pins no github.com/stacklok/toolhive");
  return m[1];
}

type Json = unknown;
const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function isZero(v: Json): boolean {
  return (
    v === false ||
    v === 0 ||
    v === "" ||
    (Array.isArray(v) && v.length === 0) ||
    (isObj(v) && Object.values(v).every(isZero))
  );
}

const UNIT_NS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/** Nanoseconds of a Go duration string ("1m", "1m0s", "1h30m"), or undefined. */
function goDuration(v: unknown): number | undefined {
  if (typeof v !== "string" || !/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(v)) return undefined;
  let total = 0;
  for (const m of v.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g))
    total += Number(m[1]) * (UNIT_NS[m[2]!] ?? 0);
  return total;
}

/**
 * The paths of `written` that the program did not decode as written: a key it dropped (a zero
 * value it omits on output excepted) or a value it holds differently. Go matches field names
 * case-insensitively where a struct declares none, so keys are looked up that way too.
 */
export function notDecoded(written: Json, decoded: Json, path = ""): string[] {
  if (written === undefined || written === null) return [];
  if (isObj(written)) {
    if (!isObj(decoded))
      return isZero(written) ? [] : [`${path} (decoded ${JSON.stringify(decoded)})`];
    return Object.entries(written).flatMap(([k, v]) => {
      const key =
        k in decoded ? k : Object.keys(decoded).find((d) => d.toLowerCase() === k.toLowerCase());
      if (key === undefined) return isZero(v) || v === null ? [] : [`${path}.${k} (dropped)`];
      return notDecoded(v, decoded[key], `${path}.${k}`);
    });
  }
  if (Array.isArray(written)) {
    if (!Array.isArray(decoded)) return written.length === 0 ? [] : [`${path} (dropped)`];
    if (decoded.length !== written.length) return [`${path} (length ${decoded.length})`];
    return written.flatMap((v, i) => notDecoded(v, decoded[i], `${path}[${i}]`));
  }
  if (decoded === undefined && isZero(written)) return [];
  if (written === decoded) return [];
  // Go writes a duration back in its own form: "1m" is "1m0s".
  const d = goDuration(written);
  if (d !== undefined && d === goDuration(decoded)) return [];
  return [`${path} (decoded ${JSON.stringify(decoded)})`];
}
