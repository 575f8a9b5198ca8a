// The built-in kinds the double serves and the few rules of theirs it enforces: Service
// clusterIP allocation and immutability, Deployment/StatefulSet selector rules, StatefulSet spec
// update limits, immutable ConfigMaps/Secrets, Secret stringData, Namespace and Pod status.
import type { StatusCause } from "./errors.js";
import { canonical } from "./fieldpath.js";
import type { NameRule } from "./metadata.js";
import type { BuiltinRules, ResourceType } from "./resource-type.js";
import { BUILTIN_SHAPE } from "./shapes.js";
import { type KObject, isRecord } from "./types.js";

function spec(obj: KObject): Record<string, unknown> {
  if (!isRecord(obj.spec)) obj.spec = {};
  return obj.spec as Record<string, unknown>;
}

let nextIp = 1;
function allocateClusterIp(): string {
  const n = nextIp++;
  return `10.96.${Math.floor(n / 250)}.${(n % 250) + 1}`;
}

const serviceRules: BuiltinRules = {
  prepare(obj, old) {
    const s = spec(obj);
    s.type ??= "ClusterIP";
    s.sessionAffinity ??= "None";
    if (Array.isArray(s.ports)) {
      for (const port of s.ports as unknown[]) {
        if (!isRecord(port)) continue;
        port.protocol ??= "TCP";
        port.targetPort ??= port.port;
      }
    }
    if (s.type === "ExternalName") return;
    const oldIp = old && isRecord(old.spec) ? old.spec.clusterIP : undefined;
    if (s.clusterIP === undefined || s.clusterIP === "") {
      s.clusterIP = typeof oldIp === "string" && oldIp !== "" ? oldIp : allocateClusterIp();
    }
    s.clusterIPs ??= [s.clusterIP];
    if (Array.isArray(s.clusterIPs) && s.clusterIPs[0] !== s.clusterIP)
      s.clusterIPs = [s.clusterIP];
  },
  validate(obj, old) {
    const s = spec(obj);
    const causes: StatusCause[] = [];
    if (old && isRecord(old.spec)) {
      const before = old.spec.clusterIP;
      if (
        typeof before === "string" &&
        before !== "" &&
        s.clusterIP !== before &&
        s.type !== "ExternalName"
      ) {
        causes.push({
          reason: "FieldValueInvalid",
          message: `Invalid value: ${JSON.stringify(s.clusterIP)}: field is immutable`,
          field: "spec.clusterIP",
        });
      }
    }
    return causes;
  },
};

function selectorRules(kind: "Deployment" | "StatefulSet"): BuiltinRules {
  return {
    prepare(obj) {
      const s = spec(obj);
      s.replicas ??= 1;
      if (kind === "StatefulSet") s.podManagementPolicy ??= "OrderedReady";
    },
    validate(obj, old) {
      const s = spec(obj);
      const causes: StatusCause[] = [];
      const selector = s.selector;
      const template = isRecord(s.template) ? s.template : {};
      const labels =
        isRecord(template.metadata) && isRecord(template.metadata.labels)
          ? template.metadata.labels
          : {};
      if (!isRecord(selector)) {
        causes.push({
          reason: "FieldValueRequired",
          message: "Required value",
          field: "spec.selector",
        });
      } else {
        const matchLabels = isRecord(selector.matchLabels) ? selector.matchLabels : {};
        const expressions = Array.isArray(selector.matchExpressions)
          ? selector.matchExpressions
          : [];
        if (Object.keys(matchLabels).length === 0 && expressions.length === 0) {
          causes.push({
            reason: "FieldValueInvalid",
            message: "Invalid value: v1.LabelSelector{}: empty selector is invalid for deployment",
            field: "spec.selector",
          });
        } else if (Object.entries(matchLabels).some(([k, v]) => labels[k] !== v)) {
          causes.push({
            reason: "FieldValueInvalid",
            message: `Invalid value: ${canonical(labels)}: \`selector\` does not match template \`labels\``,
            field: "spec.template.metadata.labels",
          });
        }
      }
      if (
        !isRecord(template.spec) ||
        !Array.isArray(template.spec.containers) ||
        template.spec.containers.length === 0
      ) {
        causes.push({
          reason: "FieldValueRequired",
          message: "Required value",
          field: "spec.template.spec.containers",
        });
      }
      if (old && isRecord(old.spec)) {
        if (canonical(old.spec.selector) !== canonical(selector)) {
          causes.push({
            reason: "FieldValueInvalid",
            message: `Invalid value: ${canonical(selector)}: field is immutable`,
            field: "spec.selector",
          });
        }
        if (kind === "StatefulSet") {
          const mutable = new Set([
            "replicas",
            "ordinals",
            "template",
            "updateStrategy",
            "persistentVolumeClaimRetentionPolicy",
            "minReadySeconds",
          ]);
          const keys = new Set([...Object.keys(old.spec), ...Object.keys(s)]);
          const changed = [...keys].filter(
            (k) =>
              !mutable.has(k) &&
              k !== "selector" &&
              canonical(old.spec && (old.spec as Record<string, unknown>)[k]) !== canonical(s[k]),
          );
          if (changed.length > 0) {
            causes.push({
              reason: "FieldValueForbidden",
              message:
                "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
              field: "spec",
            });
          }
        }
      }
      return causes;
    },
  };
}

function immutableData(fields: string[]): BuiltinRules["validate"] {
  return (obj, old) => {
    if (!old || old.immutable !== true) return [];
    const causes: StatusCause[] = [];
    for (const field of fields) {
      if (canonical(old[field]) !== canonical(obj[field])) {
        causes.push({
          reason: "FieldValueForbidden",
          message: "Forbidden: field is immutable when `immutable` is set",
          field,
        });
      }
    }
    if (obj.immutable !== true) {
      causes.push({
        reason: "FieldValueForbidden",
        message: "Forbidden: field is immutable when `immutable` is set",
        field: "immutable",
      });
    }
    return causes;
  };
}

const secretRules: BuiltinRules = {
  prepare(obj) {
    obj.type ??= "Opaque";
    if (isRecord(obj.stringData)) {
      const data = isRecord(obj.data) ? obj.data : {};
      for (const [key, value] of Object.entries(obj.stringData)) {
        data[key] = Buffer.from(String(value)).toString("base64");
      }
      obj.data = data;
      delete obj.stringData;
    }
  },
  validate: immutableData(["data", "type"]),
};

const namespaceRules: BuiltinRules = {
  prepare(obj, old) {
    if (!old) obj.status = { phase: "Active" };
    spec(obj).finalizers ??= ["kubernetes"];
  },
};

const podRules: BuiltinRules = {
  prepare(obj, old) {
    if (!old) obj.status = { phase: "Pending", qosClass: "BestEffort" };
  },
};

const crdRules: BuiltinRules = {
  validate(obj) {
    const causes: StatusCause[] = [];
    const s = spec(obj);
    const names = isRecord(s.names) ? s.names : {};
    const group = typeof s.group === "string" ? s.group : "";
    if (group === "" || !group.includes(".")) {
      causes.push({
        reason: "FieldValueInvalid",
        message: `Invalid value: ${JSON.stringify(group)}: should be a domain with at least one dot`,
        field: "spec.group",
      });
    }
    for (const key of ["plural", "kind"]) {
      if (typeof names[key] !== "string" || names[key] === "") {
        causes.push({
          reason: "FieldValueRequired",
          message: "Required value",
          field: `spec.names.${key}`,
        });
      }
    }
    if (obj.metadata?.name !== `${String(names.plural)}.${group}`) {
      causes.push({
        reason: "FieldValueInvalid",
        message: `Invalid value: ${JSON.stringify(obj.metadata?.name)}: must be spec.names.plural+"."+spec.group`,
        field: "metadata.name",
      });
    }
    if (s.scope !== "Namespaced" && s.scope !== "Cluster") {
      causes.push({
        reason: "FieldValueNotSupported",
        message: `Unsupported value: ${JSON.stringify(s.scope)}: supported values: "Cluster", "Namespaced"`,
        field: "spec.scope",
      });
    }
    const versions = Array.isArray(s.versions) ? (s.versions as unknown[]).filter(isRecord) : [];
    if (versions.length === 0) {
      causes.push({
        reason: "FieldValueRequired",
        message: "Required value: must have exactly one version marked as storage version",
        field: "spec.versions",
      });
    } else if (versions.filter((v) => v.storage === true).length !== 1) {
      causes.push({
        reason: "FieldValueInvalid",
        message: "Invalid value: must have exactly one version marked as storage version",
        field: "spec.versions",
      });
    }
    return causes;
  },
};

interface Def {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  status?: boolean;
  generation?: boolean;
  nameRule?: NameRule;
  fieldSelectors?: string[];
  rules?: BuiltinRules;
  categories?: string[];
}

const DEFS: Def[] = [
  {
    group: "",
    version: "v1",
    plural: "namespaces",
    kind: "Namespace",
    namespaced: false,
    shortNames: ["ns"],
    status: true,
    nameRule: "label",
    fieldSelectors: ["status.phase"],
    rules: namespaceRules,
  },
  {
    group: "",
    version: "v1",
    plural: "configmaps",
    kind: "ConfigMap",
    namespaced: true,
    shortNames: ["cm"],
    rules: { validate: immutableData(["data", "binaryData"]) },
  },
  {
    group: "",
    version: "v1",
    plural: "secrets",
    kind: "Secret",
    namespaced: true,
    fieldSelectors: ["type"],
    rules: secretRules,
  },
  {
    group: "",
    version: "v1",
    plural: "services",
    kind: "Service",
    namespaced: true,
    shortNames: ["svc"],
    status: true,
    nameRule: "label1035",
    rules: serviceRules,
    categories: ["all"],
  },
  {
    group: "",
    version: "v1",
    plural: "serviceaccounts",
    kind: "ServiceAccount",
    namespaced: true,
    shortNames: ["sa"],
  },
  {
    group: "",
    version: "v1",
    plural: "events",
    kind: "Event",
    namespaced: true,
    shortNames: ["ev"],
    nameRule: "any",
    fieldSelectors: [
      "involvedObject.kind",
      "involvedObject.name",
      "involvedObject.namespace",
      "involvedObject.uid",
      "reason",
      "type",
      "source",
    ],
  },
  {
    group: "",
    version: "v1",
    plural: "pods",
    kind: "Pod",
    namespaced: true,
    shortNames: ["po"],
    status: true,
    fieldSelectors: ["status.phase", "spec.nodeName"],
    rules: podRules,
    categories: ["all"],
  },
  {
    group: "apps",
    version: "v1",
    plural: "deployments",
    kind: "Deployment",
    namespaced: true,
    shortNames: ["deploy"],
    status: true,
    generation: true,
    rules: selectorRules("Deployment"),
    categories: ["all"],
  },
  {
    group: "apps",
    version: "v1",
    plural: "statefulsets",
    kind: "StatefulSet",
    namespaced: true,
    shortNames: ["sts"],
    status: true,
    generation: true,
    rules: selectorRules("StatefulSet"),
    categories: ["all"],
  },
  {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    plural: "roles",
    kind: "Role",
    namespaced: true,
    nameRule: "any",
  },
  {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    plural: "rolebindings",
    kind: "RoleBinding",
    namespaced: true,
    nameRule: "any",
  },
  {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    plural: "clusterroles",
    kind: "ClusterRole",
    namespaced: false,
    nameRule: "any",
  },
  {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    plural: "clusterrolebindings",
    kind: "ClusterRoleBinding",
    namespaced: false,
    nameRule: "any",
  },
  {
    group: "coordination.k8s.io",
    version: "v1",
    plural: "leases",
    kind: "Lease",
    namespaced: true,
  },
  {
    group: "apiextensions.k8s.io",
    version: "v1",
    plural: "customresourcedefinitions",
    kind: "CustomResourceDefinition",
    namespaced: false,
    shortNames: ["crd", "crds"],
    status: true,
    generation: true,
    rules: crdRules,
  },
  {
    group: "events.k8s.io",
    version: "v1",
    plural: "events",
    kind: "Event",
    namespaced: true,
    shortNames: ["ev"],
    nameRule: "any",
    fieldSelectors: [
      "regarding.kind",
      "regarding.name",
      "regarding.namespace",
      "regarding.uid",
      "reason",
      "type",
      "reportingController",
    ],
  },
];

export function builtinTypes(): ResourceType[] {
  return DEFS.map((d) => {
    const type: ResourceType = {
      group: d.group,
      versions: [d.version],
      plural: d.plural,
      singular: d.kind.toLowerCase(),
      kind: d.kind,
      listKind: `${d.kind}List`,
      namespaced: d.namespaced,
      shortNames: d.shortNames ?? [],
      categories: d.categories ?? [],
      status: d.status ?? false,
      generation: d.generation ?? false,
      nameRule: d.nameRule ?? "subdomain",
      fieldSelectors: d.fieldSelectors ?? [],
      builtin: true,
      shape: () => BUILTIN_SHAPE,
    };
    if (d.rules) type.rules = d.rules;
    return type;
  });
}
