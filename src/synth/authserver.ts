// The embedded authorization server's section of the run-config, in the shape the runner
// decodes (pkg/authserver RunConfig of the pinned release): signing keys and HMAC secrets as
// files mounted from their Secrets, client secrets and Redis credentials as environment
// variables the runner reads by name, never values.
import type * as T from "../../generated/types.js";
import type { PodExtras } from "./pod-extras.js";

const SCHEMA_VERSION = "v0.1.0";
const SENTINEL_PORT = 26379;
/** The variables the runner reads the Redis ACL user's credentials from. */
export const AUTH_REDIS_USERNAME = "TOOLHIVE_AUTH_SERVER_REDIS_USERNAME";
export const AUTH_REDIS_PASSWORD = "TOOLHIVE_AUTH_SERVER_REDIS_PASSWORD";

/** The workload the authorization server runs in front of. */
export interface AuthServerContext {
  name: string;
  namespace: string;
  /** The workload's URL: the audience tokens are issued for, and the callback's base. */
  resourceUrl: string;
}

function tls(t: T.RedisTLSConfig | undefined, extras: PodExtras): unknown {
  if (t === undefined) return undefined;
  return {
    insecure_skip_verify: t.insecureSkipVerify ?? false,
    ca_cert_file:
      t.caCertSecretRef === undefined
        ? undefined
        : extras.secretFile(t.caCertSecretRef.name, t.caCertSecretRef.key),
  };
}

function userInfo(u: T.UserInfoConfig | undefined): unknown {
  if (u === undefined) return undefined;
  return {
    endpoint_url: u.endpointUrl,
    http_method: u.httpMethod,
    additional_headers: u.additionalHeaders,
    field_mapping:
      u.fieldMapping === undefined
        ? undefined
        : {
            subject_fields: u.fieldMapping.subjectFields,
            name_fields: u.fieldMapping.nameFields,
            email_fields: u.fieldMapping.emailFields,
          },
  };
}

function upstream(p: T.UpstreamProviderConfig, extras: PodExtras, callback: string): unknown {
  const secret = (ref: T.SecretKeyRef | undefined): string | undefined =>
    ref === undefined
      ? undefined
      : extras.secretEnv(`TOOLHIVE_UPSTREAM_${p.name}_CLIENT_SECRET`, ref);
  const o = p.oidcConfig;
  const a = p.oauth2Config;
  return {
    name: p.name,
    type: p.type,
    oidc_config:
      o === undefined
        ? undefined
        : {
            issuer_url: o.issuerUrl,
            client_id: o.clientId,
            client_secret_env_var: secret(o.clientSecretRef),
            redirect_uri: o.redirectUri ?? callback,
            scopes: o.scopes,
            userinfo_override: userInfo(o.userInfoOverride),
          },
    oauth2_config:
      a === undefined
        ? undefined
        : {
            authorization_endpoint: a.authorizationEndpoint,
            token_endpoint: a.tokenEndpoint,
            client_id: a.clientId,
            client_secret_env_var: secret(a.clientSecretRef),
            redirect_uri: a.redirectUri ?? callback,
            scopes: a.scopes,
            userinfo: userInfo(a.userInfo),
            token_response_mapping:
              a.tokenResponseMapping === undefined
                ? undefined
                : {
                    access_token_path: a.tokenResponseMapping.accessTokenPath,
                    scope_path: a.tokenResponseMapping.scopePath,
                    refresh_token_path: a.tokenResponseMapping.refreshTokenPath,
                    expires_in_path: a.tokenResponseMapping.expiresInPath,
                  },
          },
  };
}

function sentinelConfig(
  sentinel: T.RedisSentinelConfig | undefined,
  ctx: AuthServerContext,
): unknown {
  if (sentinel === undefined) return undefined;
  const service = sentinel.sentinelService;
  const addrs =
    sentinel.sentinelAddrs ??
    (service === undefined
      ? []
      : [
          `${service.name}.${service.namespace ?? ctx.namespace}.svc.cluster.local:${service.port ?? SENTINEL_PORT}`,
        ]);
  return { master_name: sentinel.masterName, sentinel_addrs: addrs, db: sentinel.db };
}

function storage(
  s: T.AuthServerStorageConfig | undefined,
  extras: PodExtras,
  ctx: AuthServerContext,
): unknown {
  const redis = s?.redis;
  if (redis === undefined) return { type: s?.type ?? "memory" };
  const acl = redis.aclUserConfig;
  return {
    type: "redis",
    redis_config: {
      // A standalone server or a cluster by address (v1beta1), else the Sentinels.
      addr: redis.addr,
      cluster_mode: redis.clusterMode === true ? true : undefined,
      sentinel_config: sentinelConfig(redis.sentinelConfig, ctx),
      auth_type: "aclUser",
      acl_user_config: {
        // No user name (v1beta1): the password authenticates Redis's default user.
        username_env_var:
          acl.usernameSecretRef === undefined
            ? ""
            : extras.secretEnv(AUTH_REDIS_USERNAME, acl.usernameSecretRef),
        password_env_var: extras.secretEnv(AUTH_REDIS_PASSWORD, acl.passwordSecretRef),
      },
      // One prefix per workload, as the reference operator derives it, so servers sharing a
      // Redis never see each other's keys.
      key_prefix: `thv:auth:{${ctx.namespace}:${ctx.name}}:`,
      dial_timeout: redis.dialTimeout ?? "5s",
      read_timeout: redis.readTimeout ?? "3s",
      write_timeout: redis.writeTimeout ?? "3s",
      tls: tls(redis.tls, extras),
      sentinel_tls: tls(redis.sentinelTls, extras),
    },
  };
}

/** The `embedded_auth_server_config` section. */
export function embeddedAuthServer(
  e: T.EmbeddedAuthServerConfig,
  extras: PodExtras,
  ctx: AuthServerContext,
): Record<string, unknown> {
  const keys = (e.signingKeySecretRefs ?? []).map((r) => extras.secretFile(r.name, r.key));
  const lifespans = e.tokenLifespans;
  return {
    schema_version: SCHEMA_VERSION,
    issuer: e.issuer,
    allow_confidential_client_registration:
      e.allowConfidentialClientRegistration === true ? true : undefined,
    authorization_endpoint_base_url: e.authorizationEndpointBaseUrl,
    signing_key_config:
      keys.length === 0
        ? undefined
        : {
            signing_key_file: keys[0],
            fallback_key_files: keys.length > 1 ? keys.slice(1) : undefined,
          },
    hmac_secret_files: (e.hmacSecretRefs ?? []).map((r) => extras.secretFile(r.name, r.key)),
    token_lifespans: {
      access_token_lifespan: lifespans?.accessTokenLifespan ?? "1h",
      refresh_token_lifespan: lifespans?.refreshTokenLifespan ?? "168h",
      auth_code_lifespan: lifespans?.authCodeLifespan ?? "10m",
    },
    upstreams: e.upstreamProviders.map((p) =>
      upstream(p, extras, `${ctx.resourceUrl.replace(/\/+$/, "")}/oauth/callback`),
    ),
    allowed_audiences: [ctx.resourceUrl],
    storage: storage(e.storage, extras, ctx),
  };
}
