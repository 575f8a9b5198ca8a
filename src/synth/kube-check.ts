// Checks a rendered object the way the API server would: against Kubernetes' published OpenAPI
// schema of its apiVersion/kind (compiled into the kubernetes-models package), plus the name and
// label rules the OpenAPI schemas do not express (DNS labels and subdomains, label keys and
// values, port names). Used by every test that renders objects.
import { CustomResourceDefinition } from "kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { StatefulSet } from "kubernetes-models/apps/v1/StatefulSet";
import { ClusterRole } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole";
import { ClusterRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding";
import { Role } from "kubernetes-models/rbac.authorization.k8s.io/v1/Role";
import { RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { PersistentVolumeClaim } from "kubernetes-models/v1/PersistentVolumeClaim";
import { PodTemplate } from "kubernetes-models/v1/PodTemplate";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import type { KubeObject } from "./model.js";

interface ModelClass {
  apiVersion: string;
  kind: string;
  new (data: never): { validate(): void };
}

const MODEL_LIST: ModelClass[] = [
  CustomResourceDefinition,
  Deployment,
  StatefulSet,
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
  ConfigMap,
  Namespace,
  PersistentVolumeClaim,
  PodTemplate,
  Secret,
  Service,
  ServiceAccount,
];

/** Models of every apiVersion/kind synth emits. */
export const MODELS: ReadonlyMap<string, ModelClass> = new Map(
  MODEL_LIST.map((m) => [`${m.apiVersion}/${m.kind}`, m]),
);

export interface KubeCheckIssue {
  /** `<kind>/<name>` of the object. */
  object: string;
  /** JSON pointer inside the object ("" for the whole object). */
  path: string;
  message: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const IANA_SVC_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

export function isDnsLabel(value: string): boolean {
  return value.length <= 63 && DNS_LABEL.test(value);
}

export function isDnsSubdomain(value: string): boolean {
  return value.length <= 253 && DNS_SUBDOMAIN.test(value);
}

export function isLabelValue(value: string): boolean {
  return value.length <= 63 && LABEL_VALUE.test(value);
}

/** A label or annotation key: optional DNS-subdomain prefix and `/`, then a qualified name. */
export function isQualifiedKey(key: string): boolean {
  const slash = key.lastIndexOf("/");
  const prefix = slash === -1 ? undefined : key.slice(0, slash);
  const name = slash === -1 ? key : key.slice(slash + 1);
  if (prefix !== undefined && !isDnsSubdomain(prefix)) return false;
  return name.length <= 63 && QUALIFIED_NAME.test(name);
}

/** A container port name: at most 15 characters, at least one letter, no double hyphen. */
export function isPortName(value: string): boolean {
  return (
    value.length <= 15 && IANA_SVC_NAME.test(value) && /[a-z]/.test(value) && !value.includes("--")
  );
}

/** Kinds whose names must be DNS labels rather than subdomains. */
const LABEL_NAMED = new Set(["Service", "Namespace", "StatefulSet"]);

interface AjvLikeError {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function schemaIssues(obj: KubeObject, Model: ModelClass): { path: string; message: string }[] {
  try {
    new Model(obj as never).validate();
    return [];
  } catch (err) {
    const errors = (err as { errors?: AjvLikeError[] }).errors;
    if (!Array.isArray(errors)) return [{ path: "", message: (err as Error).message }];
    return errors.map((e) => ({
      path: e.instancePath ?? "",
      message: `${e.message ?? "invalid"}${e.params !== undefined ? ` ${JSON.stringify(e.params)}` : ""}`,
    }));
  }
}

function metaIssues(
  meta: { labels?: unknown; annotations?: unknown } | undefined,
  at: string,
): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  for (const [k, v] of Object.entries((meta?.labels as Record<string, unknown>) ?? {})) {
    if (!isQualifiedKey(k)) out.push({ path: `${at}/labels`, message: `invalid label key "${k}"` });
    if (typeof v !== "string" || !isLabelValue(v))
      out.push({ path: `${at}/labels`, message: `invalid value of label "${k}": "${String(v)}"` });
  }
  let size = 0;
  for (const [k, v] of Object.entries((meta?.annotations as Record<string, unknown>) ?? {})) {
    if (!isQualifiedKey(k))
      out.push({ path: `${at}/annotations`, message: `invalid annotation key "${k}"` });
    size += k.length + String(v).length;
  }
  if (size > 256 * 1024)
    out.push({ path: `${at}/annotations`, message: "annotations exceed 256 KiB" });
  return out;
}

function containerIssues(
  containers: unknown,
  at: string,
  names: Set<string>,
): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  if (!Array.isArray(containers)) return out;
  containers.forEach((c: Record<string, unknown>, i) => {
    const name = String(c.name);
    if (!isDnsLabel(name))
      out.push({ path: `${at}/${i}/name`, message: `container name "${name}" is not a DNS label` });
    if (names.has(name))
      out.push({ path: `${at}/${i}/name`, message: `duplicate container name "${name}"` });
    names.add(name);
    const ports = (c.ports as { name?: string }[] | undefined) ?? [];
    ports.forEach((p, j) => {
      if (p.name !== undefined && !isPortName(p.name))
        out.push({ path: `${at}/${i}/ports/${j}/name`, message: `invalid port name "${p.name}"` });
    });
    const env = (c.env as { name: string }[] | undefined) ?? [];
    const seen = new Set<string>();
    env.forEach((e, j) => {
      if (!ENV_NAME.test(e.name))
        out.push({ path: `${at}/${i}/env/${j}/name`, message: `invalid env name "${e.name}"` });
      if (seen.has(e.name))
        out.push({ path: `${at}/${i}/env/${j}/name`, message: `duplicate env "${e.name}"` });
      seen.add(e.name);
    });
  });
  return out;
}

/** Checks of a pod template (metadata and spec) at `at`. */
function podIssues(template: unknown, at: string): { path: string; message: string }[] {
  if (template === null || typeof template !== "object") return [];
  const t = template as { metadata?: Record<string, unknown>; spec?: Record<string, unknown> };
  const out = metaIssues(t.metadata, `${at}/metadata`);
  const names = new Set<string>();
  out.push(...containerIssues(t.spec?.initContainers, `${at}/spec/initContainers`, names));
  out.push(...containerIssues(t.spec?.containers, `${at}/spec/containers`, names));
  const volumes = (t.spec?.volumes as { name: string }[] | undefined) ?? [];
  const vnames = new Set<string>();
  volumes.forEach((v, i) => {
    if (!isDnsLabel(v.name))
      out.push({
        path: `${at}/spec/volumes/${i}/name`,
        message: `invalid volume name "${v.name}"`,
      });
    if (vnames.has(v.name))
      out.push({ path: `${at}/spec/volumes/${i}/name`, message: `duplicate volume "${v.name}"` });
    vnames.add(v.name);
  });
  return out;
}

/** Every issue of one rendered object; empty when the API server would accept it. */
export function checkObject(obj: KubeObject): KubeCheckIssue[] {
  const label = `${obj.kind}/${obj.metadata.name}`;
  const issues: { path: string; message: string }[] = [];
  const Model = MODELS.get(`${obj.apiVersion}/${obj.kind}`);
  if (Model === undefined) {
    issues.push({ path: "", message: `no Kubernetes schema for ${obj.apiVersion}/${obj.kind}` });
  } else {
    issues.push(...schemaIssues(obj, Model));
  }
  const name = obj.metadata.name;
  const nameOk = LABEL_NAMED.has(obj.kind) ? isDnsLabel(name) : isDnsSubdomain(name);
  if (!nameOk)
    issues.push({
      path: "/metadata/name",
      message: `"${name}" is not a valid DNS ${LABEL_NAMED.has(obj.kind) ? "label" : "subdomain"}`,
    });
  if (obj.metadata.namespace !== undefined && !isDnsLabel(obj.metadata.namespace))
    issues.push({ path: "/metadata/namespace", message: "namespace is not a DNS label" });
  issues.push(...metaIssues(obj.metadata, "/metadata"));
  const spec = obj.spec as Record<string, unknown> | undefined;
  if (obj.kind === "Deployment" || obj.kind === "StatefulSet") {
    issues.push(...podIssues(spec?.template, "/spec/template"));
    const selector = (spec?.selector as { matchLabels?: Record<string, string> } | undefined)
      ?.matchLabels;
    const podLabels =
      (spec?.template as { metadata?: { labels?: Record<string, string> } } | undefined)?.metadata
        ?.labels ?? {};
    for (const [k, v] of Object.entries(selector ?? {})) {
      if (podLabels[k] !== v)
        issues.push({
          path: "/spec/selector",
          message: `selector ${k}=${v} does not match the pod template`,
        });
    }
  }
  if (obj.kind === "PodTemplate") issues.push(...podIssues(obj.template, "/template"));
  if (obj.kind === "Service") {
    const ports = (spec?.ports as { name?: string }[] | undefined) ?? [];
    ports.forEach((p, i) => {
      if (p.name !== undefined && !isPortName(p.name))
        issues.push({ path: `/spec/ports/${i}/name`, message: `invalid port name "${p.name}"` });
    });
  }
  if (obj.kind === "ConfigMap" || obj.kind === "Secret") {
    for (const part of ["data", "binaryData", "stringData"]) {
      for (const key of Object.keys((obj[part] as Record<string, unknown> | undefined) ?? {})) {
        if (key.length > 253 || !CONFIG_KEY.test(key))
          issues.push({ path: `/${part}`, message: `invalid key "${key}"` });
      }
    }
  }
  return issues.map((i) => ({ object: label, ...i }));
}

/** Issues of a pod template rendered inside something else (the runner's pod patch). */
export function checkPodTemplate(template: unknown, name = "pod-template"): KubeCheckIssue[] {
  return checkObject({
    apiVersion: "v1",
    kind: "PodTemplate",
    metadata: { name },
    template,
  });
}

/** Every issue of every object, plus duplicate kind/namespace/name. */
export function checkObjects(objects: readonly KubeObject[]): KubeCheckIssue[] {
  const issues: KubeCheckIssue[] = [];
  const seen = new Set<string>();
  for (const obj of objects) {
    const id = `${obj.apiVersion}/${obj.kind}/${obj.metadata.namespace ?? ""}/${obj.metadata.name}`;
    if (seen.has(id))
      issues.push({ object: `${obj.kind}/${obj.metadata.name}`, path: "", message: "duplicate" });
    seen.add(id);
    issues.push(...checkObject(obj));
  }
  return issues;
}
