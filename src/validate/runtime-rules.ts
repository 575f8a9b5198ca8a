// Rules the reference operator checks when it reconciles a resource, not at admission: the API
// server accepts such a resource, and the operator then marks it failed. validate reports them
// at their own level, `runtime`, so that a CI run catches them before they are applied, and so
// that the schema and CEL levels stay exactly what the API server decides. docs/validate.md
// lists them.
import type { Kind } from "../schema/index.js";
import { cedarShapeError } from "./cedar-shape.js";
import { privateEndpoint } from "./endpoint-guard.js";
import { isObject } from "../json.js";
import { podTemplateIssues } from "./pod-template.js";
import { mayHoldUnrenderedField, unrenderedFieldIssues } from "./unrendered-fields.js";
import { workflowIssues } from "./workflow-rules.js";

export interface RuntimeIssue {
  /** JSON pointer relative to the resource. */
  path: string;
  message: string;
  severity: "error" | "warning";
}

/** The kinds with a pod template, and the container each merges it into. */
const POD_TEMPLATE_CONTAINER: Partial<Record<Kind, string>> = {
  MCPServer: "mcp",
  MCPRegistry: "registry-api",
  EmbeddingServer: "embedding",
  VirtualMCPServer: "vmcp",
};

const NONE: readonly RuntimeIssue[] = [];

/** The kinds with rules here besides inline authorization policies. */
const RULED_KINDS: ReadonlySet<Kind> = new Set<Kind>([
  "VirtualMCPCompositeToolDefinition",
  "VirtualMCPServer",
  "MCPTelemetryConfig",
  "MCPServerEntry",
]);

/** The issues without the pod template's (see podTemplateRuntimeIssues). */
export function runtimeIssues(kind: Kind, value: Record<string, unknown>): readonly RuntimeIssue[] {
  const spec = value.spec;
  // Most resources have nothing here: nothing is allocated for them.
  if (!isObject(spec)) return NONE;
  if (!(RULED_KINDS.has(kind) || spec.authzConfig !== undefined || mayHoldUnrenderedField(spec))) {
    return NONE;
  }
  const issues: RuntimeIssue[] = [];
  const add = (path: string, message: string, severity: "error" | "warning" = "error") =>
    issues.push({ path: `/spec${path}`, message, severity });
  policyIssues(spec.authzConfig, "/authzConfig", add);
  if (isObject(spec.incomingAuth)) {
    policyIssues(spec.incomingAuth.authzConfig, "/incomingAuth/authzConfig", add);
  }
  unrenderedFieldIssues(spec, add);
  switch (kind) {
    case "VirtualMCPCompositeToolDefinition":
      for (const i of workflowIssues(spec, true)) add(i.path, i.message);
      break;
    case "VirtualMCPServer":
      virtualServerIssues(spec, add);
      break;
    case "MCPTelemetryConfig": {
      const otel = spec.openTelemetry;
      if (isObject(otel) && otel.insecure === true && otel.caBundleRef !== undefined) {
        add(
          "/openTelemetry/caBundleRef",
          "caBundleRef cannot be set when insecure is true: a CA bundle is for TLS, insecure turns TLS off",
        );
      }
      break;
    }
    case "MCPServerEntry":
      entryIssues(spec, add);
      break;
    default:
      break;
  }
  return issues;
}

/** Inline Cedar policies have the shape of Cedar (the operator fails a policy it cannot parse). */
function policyIssues(
  authz: unknown,
  base: string,
  add: (path: string, message: string) => void,
): void {
  if (!isObject(authz) || !isObject(authz.inline) || !Array.isArray(authz.inline.policies)) return;
  authz.inline.policies.forEach((policy: unknown, i) => {
    if (typeof policy !== "string") return;
    const why = cedarShapeError(policy);
    if (why !== undefined) add(`${base}/inline/policies/${i}`, `not a Cedar policy: ${why}`);
  });
}

/** A catalog entry may not point a virtual server into the cluster's network unless allowed. */
function entryIssues(
  spec: Record<string, unknown>,
  add: (path: string, message: string) => void,
): void {
  if (spec.allowPrivateEndpoint === true) return;
  for (const field of ["remoteURL", "remoteUrl"]) {
    const url = spec[field];
    const why = typeof url === "string" ? privateEndpoint(url) : undefined;
    if (why === undefined) continue;
    add(
      `/${field}`,
      `${field} names ${why}; set allowPrivateEndpoint: true if the entry is meant to reach it`,
    );
  }
}

function virtualServerIssues(
  spec: Record<string, unknown>,
  add: (path: string, message: string, severity?: "error" | "warning") => void,
): void {
  const config = isObject(spec.config) ? spec.config : undefined;
  const tools = config?.compositeTools;
  if (Array.isArray(tools)) {
    tools.forEach((tool, t) => {
      if (!isObject(tool)) return;
      for (const i of workflowIssues(tool, false)) {
        add(
          `/config/compositeTools/${t}${i.path}`,
          i.message,
          i.warning === true ? "warning" : "error",
        );
      }
    });
  }
  const optimizer = config?.optimizer;
  if (optimizer === undefined || optimizer === null) return;
  const service = isObject(optimizer) ? optimizer.embeddingService : undefined;
  const hasService = typeof service === "string" && service !== "";
  const hasRef = isObject(spec.embeddingServerRef);
  if (!hasService && !hasRef) {
    add(
      "/config/optimizer",
      "the optimizer needs an embedding service: set embeddingServerRef or optimizer.embeddingService",
    );
  } else if (hasService && hasRef) {
    add(
      "/config/optimizer/embeddingService",
      "embeddingService is overridden by embeddingServerRef: the referenced EmbeddingServer is used",
      "warning",
    );
  }
}

/** The pod template's issues, when the kind has one (the check loads Kubernetes' schema). */
export async function podTemplateRuntimeIssues(
  kind: Kind,
  value: Record<string, unknown>,
): Promise<RuntimeIssue[]> {
  const container = POD_TEMPLATE_CONTAINER[kind];
  const spec = value.spec;
  if (container === undefined || !isObject(spec) || spec.podTemplateSpec === undefined) return [];
  const issues = await podTemplateIssues(spec.podTemplateSpec, container);
  return issues.map((i) => ({
    path: `/spec/podTemplateSpec${i.path}`,
    message: i.message,
    severity: "error",
  }));
}

/** Whether `kind` can have issues podTemplateRuntimeIssues finds (it must be awaited). */
export function hasPodTemplate(kind: Kind, value: Record<string, unknown>): boolean {
  return (
    POD_TEMPLATE_CONTAINER[kind] !== undefined &&
    isObject(value.spec) &&
    value.spec.podTemplateSpec !== undefined
  );
}
