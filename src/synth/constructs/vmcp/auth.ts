// Authentication of a virtual server: incoming (who may call it: anonymous or OIDC, with Cedar
// authorization) and outgoing (how it authenticates toward each backend, from the
// MCPExternalAuthConfig the backend or the server names). Secrets become env var names.
import type * as T from "../../../../generated/types.js";
import type { IssueReporter } from "../../issues.js";
import type { Resource, ResourceSet } from "../../model.js";
import { compact } from "../../pod.js";
import type { ResolvedBackend } from "./backends.js";
import { VMCP_ENV_PREFIX } from "./names.js";
import { envFragment, type SecretEnv } from "./secret-env.js";

const TOKEN_TYPE_URN = "urn:ietf:params:oauth:token-type:";
function subjectTokenType(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return ["access_token", "id_token", "jwt"].includes(value) ? `${TOKEN_TYPE_URN}${value}` : value;
}

/**
 * The backend strategy of an MCPExternalAuthConfig, secrets as env var names. Returns
 * undefined (with a warning) for types the virtual server cannot apply toward a backend.
 */
function backendStrategy(
  auth: Resource<"MCPExternalAuthConfig">,
  env: SecretEnv,
  report: IssueReporter,
): T.BackendAuthStrategy | undefined {
  const spec = auth.spec;
  const base = `${VMCP_ENV_PREFIX}_AUTH_${envFragment(auth.metadata.name)}`;
  switch (spec.type) {
    case "unauthenticated":
      return { type: "unauthenticated" };
    case "upstreamInject":
      if (spec.upstreamInject === undefined) break;
      return {
        type: "upstream_inject",
        upstreamInject: { providerName: spec.upstreamInject.providerName },
      };
    case "headerInjection": {
      const h = spec.headerInjection;
      if (h === undefined) break;
      const headerValueEnv = env.secret(`${base}_HEADER_VALUE`, h.valueSecretRef);
      return {
        type: "header_injection",
        headerInjection: { headerName: h.headerName, headerValueEnv },
      };
    }
    case "bearerToken": {
      const b = spec.bearerToken;
      if (b === undefined) break;
      // The Secret holds the bare token; Kubernetes expands $(VAR) of earlier env vars.
      const token = env.secret(`${base}_BEARER_TOKEN`, b.tokenSecretRef);
      const headerValueEnv = env.literal(`${base}_AUTHORIZATION`, `Bearer $(${token})`);
      return {
        type: "header_injection",
        headerInjection: { headerName: "Authorization", headerValueEnv },
      };
    }
    case "tokenExchange": {
      const x = spec.tokenExchange;
      if (x === undefined) break;
      if (x.externalTokenHeaderName !== undefined) {
        report.warning(
          "SYNTH_FIELD_NOT_APPLIED",
          `MCPExternalAuthConfig ${auth.metadata.name}: externalTokenHeaderName is not applied by the virtual server; the exchanged token replaces Authorization`,
        );
      }
      return {
        type: "token_exchange",
        tokenExchange: compact({
          tokenUrl: x.tokenUrl,
          clientId: x.clientId,
          clientSecretEnv: x.clientSecretRef
            ? env.secret(`${base}_CLIENT_SECRET`, x.clientSecretRef)
            : undefined,
          audience: x.audience,
          scopes: x.scopes,
          subjectTokenType: subjectTokenType(x.subjectTokenType),
          subjectProviderName: x.subjectProviderName,
        }),
      };
    }
    default:
      break;
  }
  report.warning(
    "SYNTH_AUTH_NOT_APPLIED",
    `MCPExternalAuthConfig ${auth.metadata.name}: type ${spec.type} cannot authenticate a virtual server's backend; requests to it are sent without credentials`,
  );
  return undefined;
}

/**
 * Outgoing auth, resolved per backend so the file is self-contained (source inline): the
 * backend's own choice in spec.outgoingAuth, else the default, else what its workload names.
 */
export function outgoingAuth(
  resource: Resource<"VirtualMCPServer">,
  set: ResourceSet,
  backends: readonly T.StaticBackend[],
  members: readonly ResolvedBackend[],
  env: SecretEnv,
  report: IssueReporter,
): T.OutgoingAuthConfig {
  const ns = resource.metadata.namespace;
  const out = resource.spec.outgoingAuth ?? {};
  const strategies: Record<string, T.BackendAuthStrategy> = {};
  const byName = new Map(members.map((b) => [b.name, b]));
  for (const b of backends) {
    const choice: T.BackendAuthConfig = out.backends?.[b.name] ??
      out.default ?? { type: "discovered" };
    // Any type but discovered names its configuration (`externalAuthConfigRef` is the
    // reference operator's later spelling of `external_auth_config_ref`).
    const authName =
      choice.type !== "discovered"
        ? choice.externalAuthConfigRef?.name
        : byName.get(b.name)?.externalAuthConfigRef;
    if (authName === undefined) continue;
    const auth = set.get("MCPExternalAuthConfig", ns, authName);
    if (auth === undefined) {
      report.warning(
        "SYNTH_REFERENCE_NOT_FOUND",
        `MCPExternalAuthConfig ${authName} (backend ${b.name}) not found`,
        "/spec/outgoingAuth",
      );
      continue;
    }
    const strategy = backendStrategy(auth, env, report);
    if (strategy !== undefined) strategies[b.name] = strategy;
  }
  const result: T.OutgoingAuthConfig = { source: "inline" };
  if (Object.keys(strategies).length > 0) result.backends = strategies;
  return result;
}

function oidcFromProvider(
  provider: T.InlineOIDCProviderConfig,
  audience: string | undefined,
  scopes: string[] | undefined,
  env: SecretEnv,
): T.OIDCConfig {
  return compact({
    issuer: provider.issuer,
    clientId: provider.clientId,
    clientSecretEnv: provider.clientSecretRef
      ? env.secret(`${VMCP_ENV_PREFIX}_OIDC_CLIENT_SECRET`, provider.clientSecretRef)
      : undefined,
    audience,
    jwksUrl: provider.jwksUrl,
    introspectionUrl: provider.introspectionUrl,
    scopes,
    protectedResourceAllowPrivateIp: provider.protectedResourceAllowPrivateIP,
    jwksAllowPrivateIp: provider.jwksAllowPrivateIP,
    insecureAllowHttp: provider.insecureAllowHTTP,
  });
}

const CLUSTER_ISSUER = "https://kubernetes.default.svc";

function oidcFromServiceAccount(
  sa: T.KubernetesServiceAccountOIDCConfig | T.KubernetesOIDCConfig,
  audience: string | undefined,
  scopes: string[] | undefined,
): T.OIDCConfig {
  return compact({
    issuer: sa.issuer ?? CLUSTER_ISSUER,
    audience,
    jwksUrl: sa.jwksUrl,
    introspectionUrl: sa.introspectionUrl,
    scopes,
    // The cluster's issuer answers on a private address.
    jwksAllowPrivateIp: sa.useClusterAuth === false ? undefined : true,
  });
}

/** Why a client's authentication cannot be rendered safely: the server then renders nothing. */
export type AuthFailure = { fatal: string };

/** OIDC from the referenced MCPOIDCConfig, or from the deprecated inline oidcConfig. */
function incomingOidc(
  resource: Resource<"VirtualMCPServer">,
  set: ResourceSet,
  env: SecretEnv,
): T.OIDCConfig | AuthFailure {
  const spec = resource.spec.incomingAuth;
  if (spec.oidcConfigRef !== undefined) {
    const ref = spec.oidcConfigRef;
    const cfg = set.get("MCPOIDCConfig", resource.metadata.namespace, ref.name);
    if (cfg === undefined) return { fatal: `MCPOIDCConfig ${ref.name} not found` };
    const oidc =
      cfg.spec.type === "inline" && cfg.spec.inline !== undefined
        ? oidcFromProvider(cfg.spec.inline, ref.audience, ref.scopes, env)
        : oidcFromServiceAccount(cfg.spec.kubernetesServiceAccount ?? {}, ref.audience, ref.scopes);
    return ref.resourceUrl !== undefined ? { ...oidc, resource: ref.resourceUrl } : oidc;
  }
  const o = spec.oidcConfig;
  if (o === undefined) return { fatal: "incomingAuth type oidc without an OIDC configuration" };
  const type = o.type ?? "kubernetes";
  let oidc: T.OIDCConfig;
  if (type === "inline" && o.inline !== undefined) {
    oidc = oidcFromProvider(o.inline, o.inline.audience, o.inline.scopes, env);
  } else if (type === "kubernetes") {
    const k = o.kubernetes ?? {};
    oidc = oidcFromServiceAccount(k, k.audience ?? "toolhive", undefined);
  } else {
    return { fatal: `incomingAuth.oidcConfig type ${type} cannot be rendered; use oidcConfigRef` };
  }
  return o.resourceUrl !== undefined ? { ...oidc, resource: o.resourceUrl } : oidc;
}

/** Who may call the virtual server, or why that cannot be rendered. */
export function incomingAuth(
  resource: Resource<"VirtualMCPServer">,
  set: ResourceSet,
  env: SecretEnv,
): { auth: T.IncomingAuthConfig } | AuthFailure {
  const spec = resource.spec.incomingAuth;
  let authz: T.VmcpAuthzConfig | undefined;
  if (spec.authzConfig !== undefined) {
    const a = spec.authzConfig;
    if ((a.type ?? "configMap") !== "inline" || a.inline === undefined) {
      return {
        fatal: `authzConfig type configMap cannot be rendered into the virtual server's configuration; write the policies inline`,
      };
    }
    authz = { type: "cedar", policies: a.inline.policies };
  }
  if (spec.type === "anonymous") return { auth: compact({ type: "anonymous", authz }) };
  const oidc = incomingOidc(resource, set, env);
  if ("fatal" in oidc) return oidc;
  return { auth: compact({ type: "oidc", oidc, authz }) };
}
