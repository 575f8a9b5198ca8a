// Rules between a workload's authorization server and the configurations it names: an
// `authServerRef` must name an MCPExternalAuthConfig of type embeddedAuthServer (the reference
// operator fails the workload otherwise), and an upstreamInject configuration's providerName
// must be one of that server's upstream providers (the spec's rule: the token injected is the
// one that provider issued).
import type { Kind } from "../schema/index.js";
import { isObject } from "../json.js";
import type { Position } from "../yaml/documents.js";
import { detached } from "../yaml/values.js";

/** What the rules need of an MCPExternalAuthConfig, or of a workload that names them. */
export interface AuthFacts {
  /** MCPExternalAuthConfig: its type. */
  type?: string;
  /** MCPExternalAuthConfig of type embeddedAuthServer: its upstream providers' names. */
  upstreams?: string[];
  /** MCPExternalAuthConfig of type upstreamInject: the provider it injects the token of. */
  injects?: string;
  /** Workload: the names its authServerRef and externalAuthConfigRef give. */
  server?: string;
  external?: string;
  serverAt?: Position;
  externalAt?: Position;
}

const WORKLOADS: ReadonlySet<Kind> = new Set(["MCPServer", "MCPRemoteProxy"]);

// Every string kept here is detached(): the facts outlive their file's text.

function refName(v: unknown): string | undefined {
  return isObject(v) && typeof v.name === "string" && v.name !== "" ? detached(v.name) : undefined;
}

/** The facts of a resource, or undefined when no rule here concerns it. */
export function authFactsOf(kind: Kind, value: unknown): AuthFacts | undefined {
  const spec = isObject(value) && isObject(value.spec) ? value.spec : undefined;
  if (spec === undefined) return undefined;
  if (kind === "MCPExternalAuthConfig") {
    if (typeof spec.type !== "string") return undefined;
    const facts: AuthFacts = { type: detached(spec.type) };
    const embedded = spec.embeddedAuthServer;
    if (isObject(embedded) && Array.isArray(embedded.upstreamProviders)) {
      facts.upstreams = embedded.upstreamProviders
        .map((p: unknown) =>
          isObject(p) && typeof p.name === "string" ? detached(p.name) : undefined,
        )
        .filter((n): n is string => n !== undefined);
    }
    const inject = spec.upstreamInject;
    if (isObject(inject) && typeof inject.providerName === "string") {
      facts.injects = detached(inject.providerName);
    }
    return facts;
  }
  if (!WORKLOADS.has(kind)) return undefined;
  const server = refName(spec.authServerRef);
  const external = refName(spec.externalAuthConfigRef);
  if (server === undefined && external === undefined) return undefined;
  const facts: AuthFacts = {};
  if (server !== undefined) facts.server = server;
  if (external !== undefined) facts.external = external;
  return facts;
}

/** Where each rule reports: the workload's reference fields. */
export const SERVER_POINTER = "/spec/authServerRef/name";
export const EXTERNAL_POINTER = "/spec/externalAuthConfigRef/name";

export interface AuthIssue {
  path: string;
  position: Position | undefined;
  message: string;
}

/**
 * The issues of a workload with `facts`; `config` finds an MCPExternalAuthConfig's facts by
 * name in the workload's namespace (undefined when there is none: a missing reference is
 * reported by the reference rules).
 */
export function authServerIssues(
  facts: AuthFacts,
  config: (name: string) => AuthFacts | undefined,
): AuthIssue[] {
  const issues: AuthIssue[] = [];
  const server = facts.server === undefined ? undefined : config(facts.server);
  if (server !== undefined && server.type !== "embeddedAuthServer") {
    issues.push({
      path: SERVER_POINTER,
      position: facts.serverAt,
      message: `authServerRef: MCPExternalAuthConfig "${facts.server}" is of type ${server.type ?? "(none)"}; an authorization server must be of type embeddedAuthServer`,
    });
  }
  const external = facts.external === undefined ? undefined : config(facts.external);
  const provider = external?.type === "upstreamInject" ? external.injects : undefined;
  if (provider === undefined) return issues;
  if (facts.server === undefined) {
    issues.push({
      path: EXTERNAL_POINTER,
      position: facts.externalAt,
      message: `externalAuthConfigRef: "${facts.external}" injects the token of upstream provider "${provider}", but the workload has no authServerRef (an embedded authorization server) with upstream providers`,
    });
  } else if (
    server?.type === "embeddedAuthServer" &&
    !(server.upstreams ?? []).includes(provider)
  ) {
    issues.push({
      path: EXTERNAL_POINTER,
      position: facts.externalAt,
      message: `externalAuthConfigRef: "${facts.external}" injects the token of upstream provider "${provider}", which is not an upstream provider of authorization server "${facts.server}" (${(server.upstreams ?? []).join(", ") || "none"})`,
    });
  }
  return issues;
}
