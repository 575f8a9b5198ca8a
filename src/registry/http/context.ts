// What every route plugin works with, and the one way a route loads a source or registry by
// name: 404 when it does not exist, the role check with the resource's own claims (a resource
// whose claims the caller does not hold answers as a missing one), 403 for a change to one the
// configuration file defines.
import type { Claims } from "../config/types.js";
import type { LocationPolicy } from "../sources/location.js";
import type { SyncScheduler } from "../sources/scheduler.js";
import type { RegistryRecord, SourceRecord, Store } from "../store/store.js";
import type { Authorizer, Principal } from "./auth.js";
import { fail } from "./problem.js";
import type { ViewCache } from "./views.js";

export interface RouteContext {
  store: Store;
  views: ViewCache;
  scheduler: SyncScheduler;
  authorizer: Authorizer;
  maxMetaSize: number;
  /** Where sources created through the admin API may read, and where relative paths start. */
  locations: { policy: LocationPolicy; baseDir: string };
}

export function claimsOf(v: unknown): Claims | undefined {
  return v === undefined || v === null ? undefined : (v as Claims);
}

interface ResourceKind<T> {
  noun: "source" | "registry";
  role: "manageSources" | "manageRegistries";
  notFound: "ERR_SOURCE_NOT_FOUND" | "ERR_REGISTRY_NOT_FOUND";
  get(store: Store, name: string): Promise<T | undefined>;
  claims(r: T): Claims | undefined;
}

export const SOURCE: ResourceKind<SourceRecord> = {
  noun: "source",
  role: "manageSources",
  notFound: "ERR_SOURCE_NOT_FOUND",
  get: (store, name) => store.getSource(name),
  claims: (s) => claimsOf(s.config.claims),
};

export const REGISTRY: ResourceKind<RegistryRecord> = {
  noun: "registry",
  role: "manageRegistries",
  notFound: "ERR_REGISTRY_NOT_FOUND",
  get: (store, name) => store.getRegistry(name),
  claims: (r) => r.claims,
};

/** The caller may manage this existing resource (else its 404, so existence stays hidden). */
export function authorizeExisting<T extends { name: string }>(
  ctx: RouteContext,
  principal: Principal,
  kind: ResourceKind<T>,
  r: T,
): void {
  const claims = kind.claims(r);
  ctx.authorizer.authorize(principal, {
    kind: kind.role,
    hide: true,
    name: r.name,
    ...(claims !== undefined ? { claims } : {}),
  });
}

/** Loads a resource the caller may manage: 404 when missing or hidden from the caller. */
export async function loadAuthorized<T extends { name: string }>(
  ctx: RouteContext,
  principal: Principal,
  kind: ResourceKind<T>,
  name: string,
): Promise<T> {
  const r = await kind.get(ctx.store, name);
  if (r === undefined) fail(kind.notFound, `no ${kind.noun} named "${name}"`);
  authorizeExisting(ctx, principal, kind, r);
  return r;
}

/** Resources the configuration file defines change only there (403). */
export function refuseConfigDefined(
  kind: ResourceKind<unknown>,
  r: { name: string; origin: string } | undefined,
  verb: "change" | "remove",
): void {
  if (r?.origin === "config") {
    fail(
      "ERR_CONFIG_RESOURCE_READONLY",
      `${kind.noun} "${r.name}" is defined in the configuration file; ${verb} it there`,
    );
  }
}

/** A registry the caller may read: 404 when missing, 403 when its claims gate the caller out. */
export async function readableRegistry(
  ctx: RouteContext,
  principal: Principal,
  name: string,
): Promise<RegistryRecord> {
  const reg = await ctx.views.registry(name);
  if (reg === undefined) fail("ERR_REGISTRY_NOT_FOUND", `no registry named "${name}"`);
  ctx.authorizer.authorize(principal, {
    kind: "readRegistry",
    registry: name,
    ...(reg.claims !== undefined ? { claims: reg.claims } : {}),
  });
  return reg;
}

/** Options of the plugins serving one registry's API under a prefix. */
export interface RegistryApiOptions extends RouteContext {
  /** The registry served; undefined: the `:registry` path parameter names it. */
  registry?: string;
  /** Left out of /openapi.json (a second spelling of documented paths). */
  hide: boolean;
}

/** The registry a request under a registry prefix addresses. */
export function registryParam(opts: RegistryApiOptions, params: unknown): string {
  return opts.registry ?? (params as { registry: string }).registry;
}
