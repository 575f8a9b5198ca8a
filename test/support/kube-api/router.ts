// Maps a request URL to a discovery document or to a resource request (type, version,
// namespace, name, subresource) and the verb it is.
import { resourceNotFound } from "./errors.js";
import type { Registry } from "./registry.js";
import type { ResourceType } from "./resource-type.js";
import type { Verb } from "./types.js";

export interface ResourceRequest {
  type: ResourceType;
  group: string;
  version: string;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

export type Route =
  | { kind: "discovery"; path: string }
  | { kind: "resource"; request: ResourceRequest }
  | { kind: "meta"; body: Record<string, unknown> | string };

const VERSION = {
  major: "1",
  minor: "31",
  gitVersion: "v1.31.0",
  gitCommit: "kube-api-double",
  gitTreeState: "clean",
  buildDate: "2024-08-13T00:00:00Z",
  goVersion: "go1.22.5",
  compiler: "gc",
  platform: "linux/amd64",
};

export function route(registry: Registry, pathname: string): Route {
  const path = pathname.replace(/\/+$/, "") || "/";
  if (path === "/version") return { kind: "meta", body: VERSION };
  if (path === "/healthz" || path === "/readyz" || path === "/livez")
    return { kind: "meta", body: "ok" };
  const segments = path
    .split("/")
    .filter((s) => s.length > 0)
    .map(decodeURIComponent);
  let group: string;
  let version: string | undefined;
  let rest: string[];
  if (segments[0] === "api") {
    group = "";
    version = segments[1];
    rest = segments.slice(2);
  } else if (segments[0] === "apis") {
    group = segments[1] ?? "";
    version = segments[2];
    rest = segments.slice(3);
  } else throw resourceNotFound();
  if (version === undefined || rest.length === 0) {
    if (registry.discovery(path) === undefined) throw resourceNotFound();
    return { kind: "discovery", path };
  }
  let namespace: string | undefined;
  if (
    rest[0] === "namespaces" &&
    rest.length >= 3 &&
    !(rest.length === 3 && (rest[2] === "status" || rest[2] === "finalize"))
  ) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  if (rest.length > 3) throw resourceNotFound();
  const [plural, name, subresource] = rest;
  const type = registry.lookup(group, version, plural!);
  if (!type) throw resourceNotFound();
  if (!type.namespaced && namespace !== undefined) throw resourceNotFound();
  if (subresource !== undefined && (subresource !== "status" || !type.status))
    throw resourceNotFound();
  return { kind: "resource", request: { type, group, version, namespace, name, subresource } };
}

export function verbOf(
  method: string,
  route: Route | undefined,
  query: Record<string, string>,
  contentType: string | undefined,
): Verb {
  if (route === undefined) return "other";
  if (route.kind === "discovery") return "discovery";
  if (route.kind === "meta") return "other";
  const named = route.request.name !== undefined;
  switch (method) {
    case "GET":
      if (named) return "get";
      return query.watch === "true" || query.watch === "1" ? "watch" : "list";
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return contentType?.startsWith("application/apply-patch") ? "apply" : "patch";
    case "DELETE":
      return named ? "delete" : "deletecollection";
    default:
      return "other";
  }
}
