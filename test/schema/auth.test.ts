import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import {
  type IssueLevel,
  type SchemaIssue,
  compileRule,
  defaultSchemaSet,
} from "../../src/schema/index.js";
import type { Doc } from "./helpers.js";

const ROOT = join(import.meta.dirname, "../..");
const AUTH_ID = "https://mcpfleet.dev/schemas/config/authtypes.yaml";
const OWN_FILES = [
  { path: "schemas/config/authtypes.yaml", id: AUTH_ID },
  {
    path: "schemas/crd/mcpoidcconfig.yaml",
    id: "https://mcpfleet.dev/schemas/crd/mcpoidcconfig.yaml",
  },
  {
    path: "schemas/crd/mcpexternalauthconfig.yaml",
    id: "https://mcpfleet.dev/schemas/crd/mcpexternalauthconfig.yaml",
  },
];
const KINDS = ["MCPOIDCConfig", "MCPExternalAuthConfig"] as const;
type AuthKind = (typeof KINDS)[number];

/** A `$defs` entry of authtypes.yaml, or one of the two kinds. */
type Target = AuthKind | `#${string}`;

interface Case {
  name: string;
  target: Target;
  doc: unknown;
  /** "valid": no issue at all (unknown fields included); otherwise the issue that must appear. */
  want: "valid" | { path: string; level: IssueLevel };
}

function issuesOf(target: Target, doc: unknown): SchemaIssue[] {
  const set = defaultSchemaSet();
  return target.startsWith("#")
    ? set.validateSchema(`${AUTH_ID}#/$defs/${target.slice(1)}`, doc)
    : set.validateKind(target, doc);
}

function resource(kind: AuthKind, name: string, spec: unknown): Doc {
  return { apiVersion: "toolhive.stacklok.dev/v1alpha1", kind, metadata: { name }, spec };
}
const oidc = (spec: unknown): Doc => resource("MCPOIDCConfig", "corp-oidc", spec);
const ext = (spec: unknown): Doc => resource("MCPExternalAuthConfig", "auth", spec);
const secret = (name: string, key: string) => ({ name, key });

// ---- building blocks -------------------------------------------------------------------------

const inlineOidc = { issuer: "https://login.example.com/realms/eng" };
const tokenExchange = {
  tokenUrl: "https://sts.example.com/oauth2/token",
  audience: "https://api.example.com",
};
const headerInjection = { headerName: "X-API-Key", valueSecretRef: secret("api", "key") };
const bearerToken = { tokenSecretRef: secret("api", "token") };
const awsSts = { region: "us-east-1", fallbackRoleArn: "arn:aws:iam::123456789012:role/mcp" };
const upstreamInject = { providerName: "github" };
const oidcUpstream = {
  name: "corp",
  type: "oidc",
  oidcConfig: { issuerUrl: "https://login.example.com", clientId: "mcp" },
};
const userInfo = {
  endpointUrl: "https://api.github.com/user",
  httpMethod: "GET",
  additionalHeaders: { Accept: "application/vnd.github+json" },
  fieldMapping: {
    subjectFields: ["id", "login"],
    nameFields: ["name", "login"],
    emailFields: ["email"],
  },
};
const oauth2Config = {
  authorizationEndpoint: "https://github.com/login/oauth/authorize",
  tokenEndpoint: "https://github.com/login/oauth/access_token",
  clientId: "Iv1.0123456789abcdef",
  clientSecretRef: secret("github-oauth", "client-secret"),
  scopes: ["read:user", "repo"],
  userInfo,
};
const oauth2Upstream = { name: "github", type: "oauth2", oauth2Config };
const redisStorage = {
  sentinelConfig: { masterName: "mymaster", sentinelAddrs: ["redis-sentinel-0.redis:26379"] },
  aclUserConfig: {
    usernameSecretRef: secret("redis-credentials", "username"),
    passwordSecretRef: secret("redis-credentials", "password"),
  },
};

const embedded = (over: Record<string, unknown> = {}) => ({
  issuer: "https://auth.example.com",
  upstreamProviders: [oidcUpstream],
  ...over,
});
const withEmbedded = (over: Record<string, unknown>) =>
  ext({ type: "embeddedAuthServer", embeddedAuthServer: embedded(over) });
const withRedis = (redis: Record<string, unknown>) =>
  withEmbedded({ storage: { type: "redis", redis: { ...redisStorage, ...redis } } });
const withSentinel = (sentinelConfig: Record<string, unknown>) =>
  withRedis({ sentinelConfig: { masterName: "mymaster", ...sentinelConfig } });
const withSts = (over: Record<string, unknown>) =>
  ext({ type: "awsSts", awsSts: { ...awsSts, ...over } });
const withMapping = (mapping: Record<string, unknown>) =>
  withSts({
    roleMappings: [{ roleArn: "arn:aws:iam::123456789012:role/mcp-admin", ...mapping }],
  });
const withTokenExchange = (over: Record<string, unknown>) =>
  ext({ type: "tokenExchange", tokenExchange: { ...tokenExchange, ...over } });
const withHeader = (headerName: unknown) =>
  ext({ type: "headerInjection", headerInjection: { ...headerInjection, headerName } });

const EAS = "/spec/embeddedAuthServer";
const SENTINEL = `${EAS}/storage/redis/sentinelConfig`;
const bad = (path: string, level: IssueLevel = "schema") => ({ path, level });

// ---- cases -----------------------------------------------------------------------------------

const oidcConfigRefCases: Case[] = [
  {
    name: "empty object (type defaults to kubernetes)",
    target: "#OIDCConfigRef",
    doc: {},
    want: "valid",
  },
  {
    name: "kubernetes with every field",
    target: "#OIDCConfigRef",
    doc: {
      type: "kubernetes",
      resourceUrl: "https://mcp.example.com/fetch",
      kubernetes: {
        serviceAccount: "agent",
        namespace: "agents",
        audience: "fetch",
        issuer: "https://kubernetes.default.svc",
        jwksUrl: "https://kubernetes.default.svc/openid/v1/jwks",
        introspectionUrl: "https://kubernetes.default.svc/introspect",
        useClusterAuth: true,
      },
    },
    want: "valid",
  },
  {
    name: "configMap form",
    target: "#OIDCConfigRef",
    doc: { type: "configMap", configMap: { name: "oidc", key: "oidc.json" } },
    want: "valid",
  },
  {
    name: "inline form with every field",
    target: "#OIDCConfigRef",
    doc: {
      type: "inline",
      inline: {
        issuer: "https://login.example.com",
        audience: "fetch",
        jwksUrl: "https://login.example.com/jwks",
        introspectionUrl: "https://login.example.com/introspect",
        clientId: "fetch",
        clientSecretRef: secret("fetch-oidc", "client-secret"),
        caBundleRef: { configMapRef: { name: "corp-ca" } },
        jwksAuthTokenPath: "/var/run/secrets/tokens/jwks",
        jwksAllowPrivateIP: false,
        protectedResourceAllowPrivateIP: false,
        insecureAllowHTTP: false,
        scopes: ["openid", "profile"],
      },
    },
    want: "valid",
  },
  { name: "unknown type", target: "#OIDCConfigRef", doc: { type: "oauth" }, want: bad("/type") },
  {
    name: "resourceUrl is not a URL",
    target: "#OIDCConfigRef",
    doc: { resourceUrl: "mcp.example.com" },
    want: bad("/resourceUrl"),
  },
  {
    name: "kubernetes object with type inline",
    target: "#OIDCConfigRef",
    doc: { type: "inline", inline: inlineOidc, kubernetes: {} },
    want: bad("/kubernetes", "cel"),
  },
  {
    name: "configMap missing for type configMap",
    target: "#OIDCConfigRef",
    doc: { type: "configMap" },
    want: bad("/configMap", "cel"),
  },
  {
    name: "configMap object with the default type",
    target: "#OIDCConfigRef",
    doc: { configMap: { name: "oidc" } },
    want: bad("/configMap", "cel"),
  },
  {
    name: "inline missing for type inline",
    target: "#OIDCConfigRef",
    doc: { type: "inline" },
    want: bad("/inline", "cel"),
  },
  {
    name: "inline object with type configMap",
    target: "#OIDCConfigRef",
    doc: { type: "configMap", configMap: { name: "oidc" }, inline: inlineOidc },
    want: bad("/inline", "cel"),
  },
  {
    name: "configMap without name",
    target: "#OIDCConfigRef",
    doc: { type: "configMap", configMap: { key: "oidc.json" } },
    want: bad("/configMap/name"),
  },
  {
    name: "inline without issuer",
    target: "#OIDCConfigRef",
    doc: { type: "inline", inline: { audience: "fetch" } },
    want: bad("/inline/issuer"),
  },
  {
    name: "inline http issuer without insecureAllowHTTP",
    target: "#InlineOIDCConfig",
    doc: { issuer: "http://keycloak:8080/realms/dev" },
    want: bad("/issuer", "cel"),
  },
  {
    name: "inline http issuer with insecureAllowHTTP",
    target: "#InlineOIDCConfig",
    doc: { issuer: "http://keycloak:8080/realms/dev", insecureAllowHTTP: true },
    want: "valid",
  },
  {
    name: "inline http issuer on localhost",
    target: "#InlineOIDCConfig",
    doc: { issuer: "http://localhost:8080/realms/dev" },
    want: "valid",
  },
  {
    name: "inline http jwksUrl without insecureAllowHTTP",
    target: "#InlineOIDCConfig",
    doc: { issuer: "https://login.example.com", jwksUrl: "http://keycloak:8080/certs" },
    want: bad("/jwksUrl", "cel"),
  },
  {
    name: "inline http introspectionUrl without insecureAllowHTTP",
    target: "#InlineOIDCConfig",
    doc: { issuer: "https://login.example.com", introspectionUrl: "http://keycloak/introspect" },
    want: bad("/introspectionUrl", "cel"),
  },
  {
    name: "inline issuer longer than 2048 characters",
    target: "#InlineOIDCConfig",
    doc: { issuer: `https://login.example.com/${"a".repeat(2030)}` },
    want: bad("/issuer"),
  },
  {
    name: "inline issuer with another scheme",
    target: "#InlineOIDCConfig",
    doc: { issuer: "ftp://login.example.com" },
    want: bad("/issuer"),
  },
  {
    name: "inline scopes must be a list",
    target: "#InlineOIDCConfig",
    doc: { issuer: "https://login.example.com", scopes: "openid" },
    want: bad("/scopes"),
  },
];

const referenceCases: Case[] = [
  {
    name: "oidcConfigRef with name and audience",
    target: "#MCPOIDCConfigReference",
    doc: { name: "corp-oidc", audience: "fetch", scopes: ["openid"] },
    want: "valid",
  },
  {
    name: "oidcConfigRef without audience",
    target: "#MCPOIDCConfigReference",
    doc: { name: "corp-oidc" },
    want: bad("/audience"),
  },
  {
    name: "oidcConfigRef with empty audience",
    target: "#MCPOIDCConfigReference",
    doc: { name: "corp-oidc", audience: "" },
    want: bad("/audience"),
  },
  {
    name: "oidcConfigRef with empty name",
    target: "#MCPOIDCConfigReference",
    doc: { name: "", audience: "fetch" },
    want: bad("/name"),
  },
  {
    name: "externalAuthConfigRef",
    target: "#ExternalAuthConfigRef",
    doc: { name: "gh" },
    want: "valid",
  },
  {
    name: "externalAuthConfigRef without name",
    target: "#ExternalAuthConfigRef",
    doc: {},
    want: bad("/name"),
  },
  { name: "authServerRef by name", target: "#AuthServerRef", doc: { name: "auth" }, want: "valid" },
  {
    name: "authServerRef with explicit kind",
    target: "#AuthServerRef",
    doc: { kind: "MCPExternalAuthConfig", name: "auth" },
    want: "valid",
  },
  {
    name: "authServerRef to another kind",
    target: "#AuthServerRef",
    doc: { kind: "MCPOIDCConfig", name: "auth" },
    want: bad("/kind"),
  },
  {
    name: "authServerRef with empty name",
    target: "#AuthServerRef",
    doc: { name: "" },
    want: bad("/name"),
  },
];

const authzCases: Case[] = [
  {
    name: "configMap with the default type",
    target: "#AuthzConfigRef",
    doc: { configMap: { name: "authz" } },
    want: "valid",
  },
  {
    name: "inline policies",
    target: "#AuthzConfigRef",
    doc: {
      type: "inline",
      inline: { policies: ["permit(principal, action, resource);"], entitiesJson: "[]" },
    },
    want: "valid",
  },
  { name: "unknown type", target: "#AuthzConfigRef", doc: { type: "opa" }, want: bad("/type") },
  {
    name: "configMap missing with the default type",
    target: "#AuthzConfigRef",
    doc: {},
    want: bad("/configMap", "cel"),
  },
  {
    name: "configMap object with type inline",
    target: "#AuthzConfigRef",
    doc: {
      type: "inline",
      inline: { policies: ["permit(principal, action, resource);"] },
      configMap: { name: "a" },
    },
    want: bad("/configMap", "cel"),
  },
  {
    name: "inline missing for type inline",
    target: "#AuthzConfigRef",
    doc: { type: "inline" },
    want: bad("/inline", "cel"),
  },
  {
    name: "inline object with type configMap",
    target: "#AuthzConfigRef",
    doc: {
      type: "configMap",
      configMap: { name: "a" },
      inline: { policies: ["permit(principal, action, resource);"] },
    },
    want: bad("/inline", "cel"),
  },
  {
    name: "configMap without name",
    target: "#AuthzConfigRef",
    doc: { configMap: { key: "authz.json" } },
    want: bad("/configMap/name"),
  },
  {
    name: "inline without policies",
    target: "#AuthzConfigRef",
    doc: { type: "inline", inline: {} },
    want: bad("/inline/policies"),
  },
  {
    name: "inline with an empty policy list",
    target: "#AuthzConfigRef",
    doc: { type: "inline", inline: { policies: [] } },
    want: bad("/inline/policies"),
  },
];

const mcpOidcConfigCases: Case[] = [
  {
    name: "inline issuer",
    target: "MCPOIDCConfig",
    doc: oidc({ type: "inline", inline: inlineOidc }),
    want: "valid",
  },
  {
    name: "kubernetesServiceAccount with every field",
    target: "MCPOIDCConfig",
    doc: oidc({
      type: "kubernetesServiceAccount",
      kubernetesServiceAccount: {
        serviceAccount: "agent",
        namespace: "agents",
        issuer: "https://kubernetes.default.svc",
        jwksUrl: "https://kubernetes.default.svc/openid/v1/jwks",
        introspectionUrl: "https://kubernetes.default.svc/introspect",
        useClusterAuth: false,
      },
    }),
    want: "valid",
  },
  {
    name: "kubernetesServiceAccount without its object (all defaults)",
    target: "MCPOIDCConfig",
    doc: oidc({ type: "kubernetesServiceAccount" }),
    want: "valid",
  },
  {
    name: "with status",
    target: "MCPOIDCConfig",
    doc: {
      ...oidc({ type: "inline", inline: inlineOidc }),
      status: {
        observedGeneration: 2,
        configHash: "5f1c2a",
        referencingWorkloads: [{ kind: "MCPServer", name: "fetch" }],
        conditions: [
          {
            type: "Ready",
            status: "True",
            reason: "Valid",
            message: "",
            lastTransitionTime: "2025-01-01T00:00:00Z",
          },
        ],
      },
    },
    want: "valid",
  },
  {
    name: "without spec",
    target: "MCPOIDCConfig",
    doc: { ...oidc({}), spec: undefined },
    want: bad("/spec"),
  },
  {
    name: "without type",
    target: "MCPOIDCConfig",
    doc: oidc({ inline: inlineOidc }),
    want: bad("/spec/type"),
  },
  {
    name: "the workload form's type name",
    target: "MCPOIDCConfig",
    doc: oidc({ type: "kubernetes" }),
    want: bad("/spec/type"),
  },
  {
    name: "inline missing",
    target: "MCPOIDCConfig",
    doc: oidc({ type: "inline" }),
    want: bad("/spec/inline", "cel"),
  },
  {
    name: "inline object with type kubernetesServiceAccount",
    target: "MCPOIDCConfig",
    doc: oidc({ type: "kubernetesServiceAccount", inline: inlineOidc }),
    want: bad("/spec/inline", "cel"),
  },
  {
    name: "kubernetesServiceAccount object with type inline",
    target: "MCPOIDCConfig",
    doc: oidc({ type: "inline", inline: inlineOidc, kubernetesServiceAccount: {} }),
    want: bad("/spec/kubernetesServiceAccount", "cel"),
  },
  {
    name: "inline without issuer",
    target: "MCPOIDCConfig",
    doc: oidc({ type: "inline", inline: { clientId: "x" } }),
    want: bad("/spec/inline/issuer"),
  },
  {
    name: "inline http issuer without insecureAllowHTTP",
    target: "MCPOIDCConfig",
    doc: oidc({ type: "inline", inline: { issuer: "http://keycloak:8080/realms/dev" } }),
    want: bad("/spec/inline/issuer", "cel"),
  },
  {
    name: "audience belongs to the workload reference",
    target: "MCPOIDCConfig",
    doc: oidc({ type: "inline", inline: { ...inlineOidc, audience: "x" } }),
    want: bad("/spec/inline/audience"),
  },
  {
    name: "audience is not part of kubernetesServiceAccount",
    target: "MCPOIDCConfig",
    doc: oidc({ type: "kubernetesServiceAccount", kubernetesServiceAccount: { audience: "x" } }),
    want: bad("/spec/kubernetesServiceAccount/audience"),
  },
  {
    name: "foreign apiVersion",
    target: "MCPOIDCConfig",
    doc: { ...oidc({ type: "inline", inline: inlineOidc }), apiVersion: "example.com/v1" },
    want: bad("/apiVersion"),
  },
  {
    name: "status condition with a bad status",
    target: "MCPOIDCConfig",
    doc: {
      ...oidc({ type: "inline", inline: inlineOidc }),
      status: {
        conditions: [
          {
            type: "Ready",
            status: "Yes",
            reason: "Valid",
            message: "",
            lastTransitionTime: "2025-01-01T00:00:00Z",
          },
        ],
      },
    },
    want: bad("/status/conditions/0/status"),
  },
];

const typeObjects: Record<string, unknown> = {
  tokenExchange,
  headerInjection,
  bearerToken,
  embeddedAuthServer: embedded(),
  awsSts,
  upstreamInject,
};

const externalTypeCases: Case[] = [
  ...Object.entries(typeObjects).flatMap(([type, object]): Case[] => [
    {
      name: `${type} with its object`,
      target: "MCPExternalAuthConfig",
      doc: ext({ type, [type]: object }),
      want: "valid",
    },
    {
      name: `${type} without its object`,
      target: "MCPExternalAuthConfig",
      doc: ext({ type }),
      want: bad(`/spec/${type}`, "cel"),
    },
    {
      name: `${type} object with type unauthenticated`,
      target: "MCPExternalAuthConfig",
      doc: ext({ type: "unauthenticated", [type]: object }),
      want: bad(`/spec/${type}`, "cel"),
    },
  ]),
  {
    name: "unauthenticated",
    target: "MCPExternalAuthConfig",
    doc: ext({ type: "unauthenticated" }),
    want: "valid",
  },
  {
    name: "two type objects",
    target: "MCPExternalAuthConfig",
    doc: ext({ type: "bearerToken", bearerToken, headerInjection }),
    want: bad("/spec/headerInjection", "cel"),
  },
  {
    name: "without type",
    target: "MCPExternalAuthConfig",
    doc: ext({ bearerToken }),
    want: bad("/spec/type"),
  },
  {
    name: "unknown type",
    target: "MCPExternalAuthConfig",
    doc: ext({ type: "oauth2" }),
    want: bad("/spec/type"),
  },
];

const tokenExchangeCases: Case[] = [
  {
    name: "every field",
    target: "MCPExternalAuthConfig",
    doc: withTokenExchange({
      clientId: "mcp",
      clientSecretRef: secret("sts", "client-secret"),
      scopes: ["repo"],
      subjectTokenType: "urn:ietf:params:oauth:token-type:id_token",
      externalTokenHeaderName: "X-Upstream-Authorization",
      subjectProviderName: "corp",
    }),
    want: "valid",
  },
  ...["access_token", "id_token", "jwt", "urn:ietf:params:oauth:token-type:jwt"].map((t): Case => ({
    name: `subjectTokenType ${t}`,
    target: "MCPExternalAuthConfig",
    doc: withTokenExchange({ subjectTokenType: t }),
    want: "valid",
  })),
  {
    name: "subjectTokenType saml2",
    target: "MCPExternalAuthConfig",
    doc: withTokenExchange({ subjectTokenType: "urn:ietf:params:oauth:token-type:saml2" }),
    want: bad("/spec/tokenExchange/subjectTokenType"),
  },
  {
    name: "without tokenUrl",
    target: "MCPExternalAuthConfig",
    doc: ext({ type: "tokenExchange", tokenExchange: { audience: "x" } }),
    want: bad("/spec/tokenExchange/tokenUrl"),
  },
  {
    name: "tokenUrl that is not a URL",
    target: "MCPExternalAuthConfig",
    doc: withTokenExchange({ tokenUrl: "sts.example.com/token" }),
    want: bad("/spec/tokenExchange/tokenUrl"),
  },
  {
    name: "without audience",
    target: "MCPExternalAuthConfig",
    doc: ext({ type: "tokenExchange", tokenExchange: { tokenUrl: tokenExchange.tokenUrl } }),
    want: bad("/spec/tokenExchange/audience"),
  },
  {
    name: "empty externalTokenHeaderName (replace Authorization)",
    target: "MCPExternalAuthConfig",
    doc: withTokenExchange({ externalTokenHeaderName: "" }),
    want: "valid",
  },
  {
    name: "externalTokenHeaderName with a space",
    target: "MCPExternalAuthConfig",
    doc: withTokenExchange({ externalTokenHeaderName: "X Upstream" }),
    want: bad("/spec/tokenExchange/externalTokenHeaderName"),
  },
  {
    name: "snake_case field name",
    target: "MCPExternalAuthConfig",
    doc: withTokenExchange({ client_id: "mcp" }),
    want: bad("/spec/tokenExchange/client_id"),
  },
];

const headerAndBearerCases: Case[] = [
  {
    name: "header name of 255 characters",
    target: "MCPExternalAuthConfig",
    doc: withHeader("X".repeat(255)),
    want: "valid",
  },
  {
    name: "header name of 256 characters",
    target: "MCPExternalAuthConfig",
    doc: withHeader("X".repeat(256)),
    want: bad("/spec/headerInjection/headerName"),
  },
  {
    name: "empty header name",
    target: "MCPExternalAuthConfig",
    doc: withHeader(""),
    want: bad("/spec/headerInjection/headerName"),
  },
  {
    name: "header name with a colon",
    target: "MCPExternalAuthConfig",
    doc: withHeader("X-Key:"),
    want: bad("/spec/headerInjection/headerName"),
  },
  {
    name: "header injection without valueSecretRef",
    target: "MCPExternalAuthConfig",
    doc: ext({ type: "headerInjection", headerInjection: { headerName: "X-API-Key" } }),
    want: bad("/spec/headerInjection/valueSecretRef"),
  },
  {
    name: "header value given in plaintext",
    target: "MCPExternalAuthConfig",
    doc: ext({ type: "headerInjection", headerInjection: { ...headerInjection, value: "k" } }),
    want: bad("/spec/headerInjection/value"),
  },
  {
    name: "valueSecretRef without key",
    target: "MCPExternalAuthConfig",
    doc: ext({
      type: "headerInjection",
      headerInjection: { headerName: "X-Key", valueSecretRef: { name: "a" } },
    }),
    want: bad("/spec/headerInjection/valueSecretRef/key"),
  },
  {
    name: "bearer token without tokenSecretRef",
    target: "MCPExternalAuthConfig",
    doc: ext({ type: "bearerToken", bearerToken: {} }),
    want: bad("/spec/bearerToken/tokenSecretRef"),
  },
  {
    name: "bearer token in plaintext",
    target: "MCPExternalAuthConfig",
    doc: ext({ type: "bearerToken", bearerToken: { ...bearerToken, token: "abc" } }),
    want: bad("/spec/bearerToken/token"),
  },
  {
    name: "upstreamInject without providerName",
    target: "MCPExternalAuthConfig",
    doc: ext({ type: "upstreamInject", upstreamInject: {} }),
    want: bad("/spec/upstreamInject/providerName"),
  },
  {
    name: "upstreamInject with empty providerName",
    target: "MCPExternalAuthConfig",
    doc: ext({ type: "upstreamInject", upstreamInject: { providerName: "" } }),
    want: bad("/spec/upstreamInject/providerName"),
  },
];

const STS = "/spec/awsSts";
const awsStsCases: Case[] = [
  ...["us-east-1", "eu-west-1", "ap-southeast-2", "us-gov-west-1", "cn-north-1"].map(
    (region): Case => ({
      name: `region ${region}`,
      target: "MCPExternalAuthConfig",
      doc: withSts({ region }),
      want: "valid",
    }),
  ),
  ...["US-EAST-1", "useast1", "us-east", "us_east_1", "e-west-1"].map((region): Case => ({
    name: `region ${region}`,
    target: "MCPExternalAuthConfig",
    doc: withSts({ region }),
    want: bad(`${STS}/region`),
  })),
  {
    name: "without region",
    target: "MCPExternalAuthConfig",
    doc: ext({ type: "awsSts", awsSts: { fallbackRoleArn: awsSts.fallbackRoleArn } }),
    want: bad(`${STS}/region`),
  },
  {
    name: "sessionDuration 900",
    target: "MCPExternalAuthConfig",
    doc: withSts({ sessionDuration: 900 }),
    want: "valid",
  },
  {
    name: "sessionDuration 43200",
    target: "MCPExternalAuthConfig",
    doc: withSts({ sessionDuration: 43200 }),
    want: "valid",
  },
  {
    name: "sessionDuration 899",
    target: "MCPExternalAuthConfig",
    doc: withSts({ sessionDuration: 899 }),
    want: bad(`${STS}/sessionDuration`),
  },
  {
    name: "sessionDuration 43201",
    target: "MCPExternalAuthConfig",
    doc: withSts({ sessionDuration: 43201 }),
    want: bad(`${STS}/sessionDuration`),
  },
  {
    name: "sessionDuration as a duration string",
    target: "MCPExternalAuthConfig",
    doc: withSts({ sessionDuration: "1h" }),
    want: bad(`${STS}/sessionDuration`),
  },
  {
    name: "neither fallbackRoleArn nor roleMappings",
    target: "MCPExternalAuthConfig",
    doc: ext({ type: "awsSts", awsSts: { region: "us-east-1" } }),
    want: bad(STS, "cel"),
  },
  {
    name: "empty roleMappings and no fallbackRoleArn",
    target: "MCPExternalAuthConfig",
    doc: ext({ type: "awsSts", awsSts: { region: "us-east-1", roleMappings: [] } }),
    want: bad(STS, "cel"),
  },
  {
    name: "roleMappings without fallbackRoleArn",
    target: "MCPExternalAuthConfig",
    doc: ext({
      type: "awsSts",
      awsSts: {
        region: "us-east-1",
        roleMappings: [{ claim: "admins", roleArn: "arn:aws:iam::123456789012:role/admin" }],
      },
    }),
    want: "valid",
  },
  ...[
    "arn:aws:iam::123456789012:role/mcp",
    "arn:aws-cn:iam::123456789012:role/mcp",
    "arn:aws-us-gov:iam::123456789012:role/team/mcp-read_only+x=y,z.w@v",
  ].map((arn): Case => ({
    name: `fallbackRoleArn ${arn}`,
    target: "MCPExternalAuthConfig",
    doc: withSts({ fallbackRoleArn: arn }),
    want: "valid",
  })),
  ...[
    "arn:aws-iso:iam::123456789012:role/mcp",
    "arn:aws:iam::12345678901:role/mcp",
    "arn:aws:iam::123456789012:user/mcp",
    "arn:aws:iam::123456789012:role/",
    "arn:aws:sts::123456789012:role/mcp",
  ].map((arn): Case => ({
    name: `fallbackRoleArn ${arn}`,
    target: "MCPExternalAuthConfig",
    doc: withSts({ fallbackRoleArn: arn }),
    want: bad(`${STS}/fallbackRoleArn`),
  })),
  {
    name: "mapping by claim",
    target: "MCPExternalAuthConfig",
    doc: withMapping({ claim: "admins", priority: 0 }),
    want: "valid",
  },
  {
    name: "mapping by matcher",
    target: "MCPExternalAuthConfig",
    doc: withMapping({ matcher: '"admins" in claims["groups"]' }),
    want: "valid",
  },
  {
    name: "mapping with claim and matcher",
    target: "MCPExternalAuthConfig",
    doc: withMapping({ claim: "admins", matcher: '"admins" in claims["groups"]' }),
    want: bad(`${STS}/roleMappings/0`, "cel"),
  },
  {
    name: "mapping with neither claim nor matcher",
    target: "MCPExternalAuthConfig",
    doc: withMapping({}),
    want: bad(`${STS}/roleMappings/0`, "cel"),
  },
  {
    name: "mapping with empty claim",
    target: "MCPExternalAuthConfig",
    doc: withMapping({ claim: "" }),
    want: bad(`${STS}/roleMappings/0/claim`),
  },
  {
    name: "mapping without roleArn",
    target: "MCPExternalAuthConfig",
    doc: withSts({ roleMappings: [{ claim: "admins" }] }),
    want: bad(`${STS}/roleMappings/0/roleArn`),
  },
  {
    name: "mapping with a malformed roleArn",
    target: "MCPExternalAuthConfig",
    doc: withMapping({ claim: "admins", roleArn: "mcp-admin" }),
    want: bad(`${STS}/roleMappings/0/roleArn`),
  },
  {
    name: "mapping with a negative priority",
    target: "MCPExternalAuthConfig",
    doc: withMapping({ claim: "admins", priority: -1 }),
    want: bad(`${STS}/roleMappings/0/priority`),
  },
  {
    name: "empty roleClaim",
    target: "MCPExternalAuthConfig",
    doc: withSts({ roleClaim: "" }),
    want: bad(`${STS}/roleClaim`),
  },
];

const issuerCases: Case[] = [
  ...[
    "https://auth.example.com",
    "https://auth.example.com:8443/tenants/a",
    "http://localhost:8080",
    "http://127.0.0.1:9000/auth",
    "http://[::1]:8080",
  ].map((issuer): Case => ({
    name: `issuer ${issuer}`,
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({ issuer, authorizationEndpointBaseUrl: issuer }),
    want: "valid",
  })),
  ...[
    "https://auth.example.com/",
    "https://auth.example.com/tenants/a/",
    "https://auth.example.com?tenant=a",
    "https://auth.example.com#x",
    "http://auth.example.com",
    "http://localhost.evil.example.com",
    "auth.example.com",
    "https://",
  ].flatMap((url): Case[] => [
    {
      name: `issuer ${url}`,
      target: "MCPExternalAuthConfig",
      doc: withEmbedded({ issuer: url }),
      want: bad(`${EAS}/issuer`),
    },
    {
      name: `authorizationEndpointBaseUrl ${url}`,
      target: "MCPExternalAuthConfig",
      doc: withEmbedded({ authorizationEndpointBaseUrl: url }),
      want: bad(`${EAS}/authorizationEndpointBaseUrl`),
    },
  ]),
  {
    name: "without issuer",
    target: "MCPExternalAuthConfig",
    doc: ext({
      type: "embeddedAuthServer",
      embeddedAuthServer: { upstreamProviders: [oidcUpstream] },
    }),
    want: bad(`${EAS}/issuer`),
  },
];

const keys = (n: number) => Array.from({ length: n }, (_, i) => secret("signing", `key-${i}.pem`));
const embeddedCases: Case[] = [
  {
    name: "five signing keys and HMAC secrets",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({
      signingKeySecretRefs: keys(5),
      hmacSecretRefs: [secret("hmac", "current")],
    }),
    want: "valid",
  },
  {
    name: "six signing keys",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({ signingKeySecretRefs: keys(6) }),
    want: bad(`${EAS}/signingKeySecretRefs`),
  },
  {
    name: "HMAC secret reference without key",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({ hmacSecretRefs: [{ name: "hmac" }] }),
    want: bad(`${EAS}/hmacSecretRefs/0/key`),
  },
  {
    name: "token lifespans",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({
      tokenLifespans: {
        accessTokenLifespan: "15m",
        refreshTokenLifespan: "720h",
        authCodeLifespan: "1m30s",
      },
    }),
    want: "valid",
  },
  {
    name: "lifespan in days",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({ tokenLifespans: { refreshTokenLifespan: "7d" } }),
    want: bad(`${EAS}/tokenLifespans/refreshTokenLifespan`),
  },
  ...["accessTokenLifespan", "refreshTokenLifespan", "authCodeLifespan"].map((field): Case => ({
    name: `zero ${field}`,
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({ tokenLifespans: { [field]: "0s" } }),
    want: bad(`${EAS}/tokenLifespans/${field}`, "cel"),
  })),
  {
    name: "without upstreamProviders",
    target: "MCPExternalAuthConfig",
    doc: ext({
      type: "embeddedAuthServer",
      embeddedAuthServer: { issuer: "https://auth.example.com" },
    }),
    want: bad(`${EAS}/upstreamProviders`),
  },
  {
    name: "empty upstreamProviders",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({ upstreamProviders: [] }),
    want: bad(`${EAS}/upstreamProviders`),
  },
  {
    name: "OIDC and OAuth 2.0 upstreams",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({
      upstreamProviders: [
        {
          ...oidcUpstream,
          oidcConfig: {
            ...oidcUpstream.oidcConfig,
            clientSecretRef: secret("corp", "client-secret"),
            redirectUri: "https://mcp.example.com/oauth/callback",
            scopes: ["openid", "email"],
            userInfoOverride: {
              endpointUrl: "https://login.example.com/userinfo",
              httpMethod: "POST",
            },
          },
        },
        {
          ...oauth2Upstream,
          oauth2Config: {
            ...oauth2Config,
            redirectUri: "https://mcp.example.com/oauth/callback",
            tokenResponseMapping: {
              accessTokenPath: "authed_user.access_token",
              scopePath: "authed_user.scope",
              refreshTokenPath: "authed_user.refresh_token",
              expiresInPath: "authed_user.expires_in",
            },
          },
        },
      ],
    }),
    want: "valid",
  },
  {
    name: "upstream without name",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({
      upstreamProviders: [{ type: "oidc", oidcConfig: oidcUpstream.oidcConfig }],
    }),
    want: bad(`${EAS}/upstreamProviders/0/name`),
  },
  {
    name: "upstream of unknown type",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({ upstreamProviders: [{ name: "x", type: "saml" }] }),
    want: bad(`${EAS}/upstreamProviders/0/type`),
  },
  {
    name: "oidc upstream without oidcConfig",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({ upstreamProviders: [{ name: "corp", type: "oidc" }] }),
    want: bad(`${EAS}/upstreamProviders/0/oidcConfig`, "cel"),
  },
  {
    name: "oidc upstream with oauth2Config",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({ upstreamProviders: [{ ...oidcUpstream, oauth2Config }] }),
    want: bad(`${EAS}/upstreamProviders/0/oauth2Config`, "cel"),
  },
  {
    name: "oauth2 upstream without oauth2Config",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({ upstreamProviders: [{ name: "gh", type: "oauth2" }] }),
    want: bad(`${EAS}/upstreamProviders/0/oauth2Config`, "cel"),
  },
  {
    name: "oauth2 upstream with oidcConfig",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({
      upstreamProviders: [{ ...oauth2Upstream, oidcConfig: oidcUpstream.oidcConfig }],
    }),
    want: bad(`${EAS}/upstreamProviders/0/oidcConfig`, "cel"),
  },
  {
    name: "oidc upstream with an http issuer",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({
      upstreamProviders: [
        { ...oidcUpstream, oidcConfig: { issuerUrl: "http://login.example.com", clientId: "m" } },
      ],
    }),
    want: bad(`${EAS}/upstreamProviders/0/oidcConfig/issuerUrl`),
  },
  {
    name: "oidc upstream without clientId",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({
      upstreamProviders: [
        { ...oidcUpstream, oidcConfig: { issuerUrl: "https://login.example.com" } },
      ],
    }),
    want: bad(`${EAS}/upstreamProviders/0/oidcConfig/clientId`),
  },
  ...["authorizationEndpoint", "tokenEndpoint", "userInfo", "clientId"].map((field): Case => ({
    name: `oauth2 upstream without ${field}`,
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({
      upstreamProviders: [
        { ...oauth2Upstream, oauth2Config: { ...oauth2Config, [field]: undefined } },
      ],
    }),
    want: bad(`${EAS}/upstreamProviders/0/oauth2Config/${field}`),
  })),
  {
    name: "oauth2 upstream with a non-http token endpoint",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({
      upstreamProviders: [
        { ...oauth2Upstream, oauth2Config: { ...oauth2Config, tokenEndpoint: "github.com/token" } },
      ],
    }),
    want: bad(`${EAS}/upstreamProviders/0/oauth2Config/tokenEndpoint`),
  },
  {
    name: "token response mapping without accessTokenPath",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({
      upstreamProviders: [
        {
          ...oauth2Upstream,
          oauth2Config: { ...oauth2Config, tokenResponseMapping: { scopePath: "scope" } },
        },
      ],
    }),
    want: bad(`${EAS}/upstreamProviders/0/oauth2Config/tokenResponseMapping/accessTokenPath`),
  },
  {
    name: "user info with an unsupported method",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({
      upstreamProviders: [
        {
          ...oauth2Upstream,
          oauth2Config: { ...oauth2Config, userInfo: { ...userInfo, httpMethod: "PUT" } },
        },
      ],
    }),
    want: bad(`${EAS}/upstreamProviders/0/oauth2Config/userInfo/httpMethod`),
  },
  {
    name: "user info without endpointUrl",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({
      upstreamProviders: [
        { ...oauth2Upstream, oauth2Config: { ...oauth2Config, userInfo: { httpMethod: "GET" } } },
      ],
    }),
    want: bad(`${EAS}/upstreamProviders/0/oauth2Config/userInfo/endpointUrl`),
  },
];

const storageCases: Case[] = [
  {
    name: "memory storage",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({ storage: { type: "memory" } }),
    want: "valid",
  },
  {
    name: "default storage",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({ storage: {} }),
    want: "valid",
  },
  {
    name: "redis with sentinel addresses",
    target: "MCPExternalAuthConfig",
    doc: withRedis({}),
    want: "valid",
  },
  {
    name: "redis with every field",
    target: "MCPExternalAuthConfig",
    doc: withRedis({
      sentinelConfig: {
        masterName: "mymaster",
        sentinelAddrs: ["10.0.0.5:26379", "[fd00::5]:26379", "sentinel-1.redis.svc:26379"],
        db: 2,
      },
      dialTimeout: "10s",
      readTimeout: "500ms",
      writeTimeout: "1s",
      tls: { insecureSkipVerify: false, caCertSecretRef: secret("redis-tls", "ca.crt") },
      sentinelTls: { insecureSkipVerify: true },
    }),
    want: "valid",
  },
  {
    name: "redis type without redis",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({ storage: { type: "redis" } }),
    want: bad(`${EAS}/storage/redis`, "cel"),
  },
  {
    name: "redis settings with type memory",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({ storage: { type: "memory", redis: redisStorage } }),
    want: bad(`${EAS}/storage/redis`, "cel"),
  },
  {
    name: "redis settings with the default type",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({ storage: { redis: redisStorage } }),
    want: bad(`${EAS}/storage/redis`, "cel"),
  },
  {
    name: "unknown storage type",
    target: "MCPExternalAuthConfig",
    doc: withEmbedded({ storage: { type: "postgres" } }),
    want: bad(`${EAS}/storage/type`),
  },
  {
    name: "redis without sentinelConfig",
    target: "MCPExternalAuthConfig",
    doc: withRedis({ sentinelConfig: undefined }),
    want: bad(`${EAS}/storage/redis/sentinelConfig`),
  },
  {
    name: "redis without aclUserConfig",
    target: "MCPExternalAuthConfig",
    doc: withRedis({ aclUserConfig: undefined }),
    want: bad(`${EAS}/storage/redis/aclUserConfig`),
  },
  {
    name: "ACL user without password",
    target: "MCPExternalAuthConfig",
    doc: withRedis({ aclUserConfig: { usernameSecretRef: secret("redis", "username") } }),
    want: bad(`${EAS}/storage/redis/aclUserConfig/passwordSecretRef`),
  },
  {
    name: "sentinel service",
    target: "MCPExternalAuthConfig",
    doc: withSentinel({
      sentinelService: { name: "redis-sentinel", namespace: "redis", port: 26379 },
    }),
    want: "valid",
  },
  {
    name: "sentinel addresses and service",
    target: "MCPExternalAuthConfig",
    doc: withSentinel({
      sentinelAddrs: ["10.0.0.5:26379"],
      sentinelService: { name: "redis-sentinel" },
    }),
    want: bad(`${SENTINEL}/sentinelService`, "cel"),
  },
  {
    name: "neither sentinel addresses nor service",
    target: "MCPExternalAuthConfig",
    doc: withSentinel({}),
    want: bad(SENTINEL, "cel"),
  },
  {
    name: "sentinel config without masterName",
    target: "MCPExternalAuthConfig",
    doc: withRedis({ sentinelConfig: { sentinelAddrs: ["10.0.0.5:26379"] } }),
    want: bad(`${SENTINEL}/masterName`),
  },
  {
    name: "sentinel address without port",
    target: "MCPExternalAuthConfig",
    doc: withSentinel({ sentinelAddrs: ["redis-sentinel"] }),
    want: bad(`${SENTINEL}/sentinelAddrs/0`),
  },
  {
    name: "sentinel service without name",
    target: "MCPExternalAuthConfig",
    doc: withSentinel({ sentinelService: { namespace: "redis" } }),
    want: bad(`${SENTINEL}/sentinelService/name`),
  },
  {
    name: "sentinel service port out of range",
    target: "MCPExternalAuthConfig",
    doc: withSentinel({ sentinelService: { name: "redis-sentinel", port: 70000 } }),
    want: bad(`${SENTINEL}/sentinelService/port`),
  },
  {
    name: "negative database number",
    target: "MCPExternalAuthConfig",
    doc: withSentinel({ sentinelAddrs: ["10.0.0.5:26379"], db: -1 }),
    want: bad(`${SENTINEL}/db`),
  },
  ...["dialTimeout", "readTimeout", "writeTimeout"].flatMap((field): Case[] => [
    {
      name: `${field} that is not a duration`,
      target: "MCPExternalAuthConfig",
      doc: withRedis({ [field]: "5 seconds" }),
      want: bad(`${EAS}/storage/redis/${field}`),
    },
    {
      name: `zero ${field}`,
      target: "MCPExternalAuthConfig",
      doc: withRedis({ [field]: "0s" }),
      want: bad(`${EAS}/storage/redis/${field}`, "cel"),
    },
  ]),
  {
    name: "TLS with a non-boolean insecureSkipVerify",
    target: "MCPExternalAuthConfig",
    doc: withRedis({ tls: { insecureSkipVerify: "yes" } }),
    want: bad(`${EAS}/storage/redis/tls/insecureSkipVerify`),
  },
];

const groups: Record<string, Case[]> = {
  OIDCConfigRef: oidcConfigRefCases,
  references: referenceCases,
  AuthzConfigRef: authzCases,
  MCPOIDCConfig: mcpOidcConfigCases,
  "MCPExternalAuthConfig types": externalTypeCases,
  tokenExchange: tokenExchangeCases,
  "headerInjection, bearerToken, upstreamInject": headerAndBearerCases,
  awsSts: awsStsCases,
  "embedded authorization server issuer": issuerCases,
  "embedded authorization server": embeddedCases,
  "embedded authorization server storage": storageCases,
};

/** Drops keys whose value is undefined, so cases can remove a field with `{ field: undefined }`. */
function clean(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

for (const [group, cases] of Object.entries(groups)) {
  describe(`auth schemas: ${group}`, () => {
    it.each(cases.map((c) => [c.name, c] as const))("%s", (_name, c) => {
      const issues = issuesOf(c.target, clean(c.doc));
      if (c.want === "valid") {
        expect(issues).toEqual([]);
      } else {
        const want = c.want;
        const match = issues.find((i) => i.path === want.path && i.level === want.level);
        expect(
          match,
          `expected a ${want.level} issue at ${want.path}; got ${JSON.stringify(issues)}`,
        ).toBeDefined();
      }
    });
  });
}

// ---- defaults, rules, CRD facts ---------------------------------------------------------------

interface SchemaFileDoc {
  $id: string;
  $defs: Record<string, unknown>;
  [key: string]: unknown;
}

function readSchema(path: string): SchemaFileDoc {
  return parse(readFileSync(join(ROOT, path), "utf8")) as SchemaFileDoc;
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** Every (JSON pointer, node) of a schema tree. */
function walk(node: unknown, pointer = ""): [string, Record<string, unknown>][] {
  if (node === null || typeof node !== "object") return [];
  if (Array.isArray(node)) return node.flatMap((n, i) => walk(n, `${pointer}/${i}`));
  const obj = node as Record<string, unknown>;
  const out: [string, Record<string, unknown>][] = [[pointer, obj]];
  for (const [key, value] of Object.entries(obj)) {
    if (key === "default" || key === "enum" || key === "x-mcpfleet-crd") continue;
    out.push(...walk(value, `${pointer}/${escapePointer(key)}`));
  }
  return out;
}

describe("auth schemas: defaults and rules", () => {
  const withDefaults = OWN_FILES.flatMap(({ path, id }) =>
    walk(readSchema(path))
      .filter(([, node]) => "default" in node)
      .map(([pointer, node]) => [`${path}#${pointer}`, `${id}#${pointer}`, node.default] as const),
  );

  it("has defaults to check", () => {
    expect(withDefaults.length).toBeGreaterThan(30);
  });

  it.each(withDefaults)("default of %s is valid against its own schema", (_where, ref, value) => {
    expect(defaultSchemaSet().validateSchema(ref, value)).toEqual([]);
  });

  const rules = OWN_FILES.flatMap(({ path }) =>
    walk(readSchema(path)).flatMap(([pointer, node]) =>
      Array.isArray(node["x-kubernetes-validations"])
        ? (node["x-kubernetes-validations"] as { rule: string; message?: string }[]).map(
            (r) => [`${path}#${pointer}`, r] as const,
          )
        : [],
    ),
  );

  it.each(rules)("rule at %s compiles and has a message", (_where, rule) => {
    expect(() => compileRule(rule.rule)).not.toThrow();
    expect(rule.message ?? "").not.toBe("");
  });

  it("has no additionalProperties: false and no forbidden keywords", () => {
    for (const { path } of OWN_FILES) {
      for (const [pointer, node] of walk(readSchema(path))) {
        expect(node.additionalProperties, `${path}#${pointer}`).not.toBe(false);
        for (const keyword of ["const", "oneOf", "allOf", "if", "not", "exclusiveMinimum"]) {
          expect(keyword in node, `${path}#${pointer} uses ${keyword}`).toBe(false);
        }
      }
    }
  });

  it.each([
    ["schemas/crd/mcpoidcconfig.yaml", "mcpoidcconfigs", ["mcpoidc", "oidcconfig"]],
    ["schemas/crd/mcpexternalauthconfig.yaml", "mcpexternalauthconfigs", ["extauth", "mcpextauth"]],
  ])("%s carries its CRD facts", (path, plural, shortNames) => {
    const crd = readSchema(path)["x-mcpfleet-crd"] as {
      plural: string;
      shortNames: string[];
      printerColumns: { name: string; jsonPath: string }[];
    };
    expect(crd.plural).toBe(plural);
    expect(crd.shortNames).toEqual(shortNames);
    expect(crd.printerColumns.map((c) => c.name)).toEqual(["Type", "Ready", "Hash", "Age"]);
    expect(crd.printerColumns[0]?.jsonPath).toBe(".spec.type");
  });
});

// ---- examples and reference resources --------------------------------------------------------

const EXAMPLES = join(ROOT, "examples/resources");

describe("auth schemas: examples", () => {
  const examples = readdirSync(EXAMPLES)
    .filter((f) => /^(mcpoidcconfig|mcpexternalauthconfig)-.*\.yaml$/.test(f))
    .sort()
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(EXAMPLES, file), "utf8")).map(
        (d) => [file, d.toJS() as Doc] as const,
      ),
    );

  it("covers both kinds and every type the brief names", () => {
    const kinds = new Set(examples.map(([, doc]) => doc.kind));
    expect(kinds).toEqual(new Set(KINDS));
    const types = examples.map(
      ([, doc]) => `${String(doc.kind)}/${String((doc.spec as Doc).type)}`,
    );
    for (const t of [
      "MCPOIDCConfig/inline",
      "MCPOIDCConfig/kubernetesServiceAccount",
      "MCPExternalAuthConfig/tokenExchange",
      "MCPExternalAuthConfig/bearerToken",
      "MCPExternalAuthConfig/headerInjection",
      "MCPExternalAuthConfig/awsSts",
      "MCPExternalAuthConfig/embeddedAuthServer",
    ]) {
      expect(types).toContain(t);
    }
  });

  it.each(examples)("%s validates with no issues", (_file, doc) => {
    expect((doc.metadata as Doc).namespace).toBeUndefined();
    expect(doc.apiVersion).toBe("toolhive.stacklok.dev/v1alpha1");
    expect(issuesOf(doc.kind as AuthKind, doc)).toEqual([]);
  });
});

/**
 * Compatibility exceptions: reference documents that use fields our specification does not have.
 * The fields are not added; the documents get exactly these issues. The three token-exchange
 * examples of the reference operator's docs write the settings in snake_case (`token_url`, ...),
 * which its own CRD does not accept either (the API server prunes them and then rejects the
 * missing `tokenUrl`).
 */
