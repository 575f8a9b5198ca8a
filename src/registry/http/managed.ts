// Writes into the managed source, shared by the official API's publish routes (through a
// registry) and ToolHive's /v1/entries (the server's managed source directly): who may write,
// which versions a caller may change, and publishing a version.
import type { ServerEntry } from "../formats/model.js";
import type { RegistryRecord, SourceRecord, StoredEntry } from "../store/store.js";
import type { Principal } from "./auth.js";
import { claimsOf, type RouteContext } from "./context.js";
import { fail } from "./problem.js";

/** The registry's managed source: 409 when it has none. */
export async function managedSourceOf(
  ctx: RouteContext,
  reg: RegistryRecord,
): Promise<SourceRecord> {
  for (const name of reg.sources) {
    const s = await ctx.store.getSource(name);
    if (s?.kind === "managed") return s;
  }
  return fail(
    "ERR_NO_MANAGED_SOURCE",
    `registry "${reg.name}" has no managed source to publish into`,
  );
}

/** The server's managed source (there is at most one): 409 when there is none. */
export async function serverManagedSource(ctx: RouteContext): Promise<SourceRecord> {
  const managed = (await ctx.store.listSources()).find((s) => s.kind === "managed");
  return managed ?? fail("ERR_NO_MANAGED_SOURCE", "this server has no managed source");
}

/**
 * The caller may write into the managed source: the manageEntries role, and claims that cover
 * the source's own (a publisher writes only into a source of its tenant).
 */
export function authorizeWrite(
  ctx: RouteContext,
  principal: Principal,
  managed: SourceRecord,
  registry?: string,
  entryClaims?: ServerEntry["claims"],
): void {
  const sourceClaims = claimsOf(managed.config.claims);
  ctx.authorizer.authorize(principal, {
    kind: "manageEntries",
    ...(registry !== undefined ? { registry } : {}),
    ...(sourceClaims !== undefined ? { sourceClaims } : {}),
    ...(entryClaims !== undefined ? { entryClaims } : {}),
  });
}

/**
 * The published versions of a name the caller may manage (one version, or all): 404 when
 * there are none, and a name whose claims the caller does not hold answers as a missing one.
 */
export async function manageableVersions(
  ctx: RouteContext,
  principal: Principal,
  managed: SourceRecord,
  name: string,
  version?: string,
  registry?: string,
): Promise<StoredEntry[]> {
  const all = await ctx.store.listVersions([managed.name], name, { includeDeleted: true });
  const found = version === undefined ? all : all.filter((e) => e.version === version);
  const first = found[0];
  if (first === undefined || !ctx.authorizer.entryVisible(principal, first.claims)) {
    return fail(
      version === undefined ? "ERR_SERVER_NOT_FOUND" : "ERR_VERSION_NOT_FOUND",
      `the managed source has no ${name}${version === undefined ? "" : ` version ${version}`}`,
    );
  }
  authorizeWrite(ctx, principal, managed, registry, first.claims);
  return found;
}

/**
 * Publishes a version into the managed source. The managed source is served last in every
 * registry (views.ts): a name another source of a registry serves would never be shown there,
 * so it is refused rather than stored unseen.
 */
export async function publishInto(
  ctx: RouteContext,
  principal: Principal,
  managed: SourceRecord,
  entry: ServerEntry,
  registry?: string,
): Promise<StoredEntry> {
  authorizeWrite(ctx, principal, managed, registry, entry.claims);
  // A name outside the caller's namespaces and a name another tenant published (its versions
  // hidden from the caller, unclaimed ones included) get the same answer, so a publish neither
  // squats a name nor tells whether a hidden one exists.
  const refused = (): never =>
    fail("ERR_FORBIDDEN", `you may not publish under the name ${entry.name}`);
  if (!ctx.authorizer.mayPublish(principal, entry.name)) refused();
  const [first] = await ctx.store.listVersions([managed.name], entry.name, {
    includeDeleted: true,
  });
  if (first !== undefined && !ctx.authorizer.entryVisible(principal, first.claims)) refused();
  const serving = (await ctx.store.listRegistries()).filter(
    (r) => r.sources.includes(managed.name) && (registry === undefined || r.name === registry),
  );
  for (const reg of serving) {
    const others = reg.sources.filter((src) => src !== managed.name);
    if (others.length > 0 && (await ctx.store.listVersions(others, entry.name)).length > 0) {
      fail(
        "ERR_NAME_TAKEN",
        `registry "${reg.name}" serves ${entry.name} from another source; publish another name`,
      );
    }
  }
  return ctx.store.publish(managed.name, entry);
}
