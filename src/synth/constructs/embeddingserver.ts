import type { KindRenderer } from "../context.js";
import { selectorLabels, workloadLabels } from "../labels.js";
import { type KubeObject } from "../model.js";
import { shorten } from "../names.js";
import {
  applyResourceOverrides,
  type Container,
  type EnvVar,
  httpProbe,
  literalEnv,
  mergeMaps,
  mergePodTemplate,
  type PodTemplate,
  secretEnv,
} from "../pod.js";
import { emit } from "./common.js";

export const EMBEDDING_CONTAINER = "embedding";
export const DEFAULT_EMBEDDING_MODEL = "BAAI/bge-small-en-v1.5";
export const DEFAULT_EMBEDDING_PORT = 8080;
/** Where models are downloaded (HF_HOME): the model-cache claim, or an emptyDir without one. */
export const MODEL_CACHE_PATH = "/data";
const APP = "embeddingserver";

/**
 * Longest StatefulSet name whose pods can be created: the StatefulSet controller labels each pod
 * `controller-revision-hash: <name>-<10-character hash>`, and a label value has at most 63.
 */
export const STATEFULSET_NAME_MAX = 52;

/** Name of the StatefulSet and of its Service, shortened deterministically when too long. */
export const embeddingServerName = (name: string): string => shorten(name, STATEFULSET_NAME_MAX);

/**
 * Renders an EmbeddingServer: StatefulSet and Service `<n>`, container `embedding` running the
 * inference server with `--model-id <model> --port <port>`, models cached on a volume claim
 * `model-cache` per replica when `modelCache` is enabled.
 */
export const renderEmbeddingServer: KindRenderer<"EmbeddingServer"> = (
  scope,
  resource,
  context,
) => {
  const spec = resource.spec ?? {};
  const name = resource.metadata.name;
  const objectName = embeddingServerName(name);
  const labels = workloadLabels(APP, name);
  const selector = selectorLabels(APP, name);
  const model = spec.model ?? DEFAULT_EMBEDDING_MODEL;
  const port = spec.port ?? DEFAULT_EMBEDDING_PORT;
  const cache = spec.modelCache !== undefined && spec.modelCache.enabled !== false;

  const env: EnvVar[] = [{ name: "MODEL_ID", value: model }];
  if (spec.hfTokenSecretRef !== undefined) env.push(secretEnv("HF_TOKEN", spec.hfTokenSecretRef));
  env.push({ name: "HF_HOME", value: MODEL_CACHE_PATH });
  const userEnv = literalEnv(spec.env);
  for (const e of userEnv) {
    const i = env.findIndex((x) => x.name === e.name);
    if (i === -1) env.push(e);
    else env[i] = e;
  }

  const container: Container = {
    name: EMBEDDING_CONTAINER,
    image: spec.image ?? context.options.embeddingImage,
    imagePullPolicy: spec.imagePullPolicy ?? "IfNotPresent",
    args: ["--model-id", model, "--port", String(port), ...(spec.args ?? [])],
    env,
    ports: [{ name: "http", containerPort: port, protocol: "TCP" }],
    ...(spec.resources !== undefined
      ? { resources: spec.resources as Container["resources"] }
      : {}),
    volumeMounts: [{ name: "model-cache", mountPath: MODEL_CACHE_PATH }],
    // The model is downloaded at start-up: allow up to 20 minutes before liveness applies.
    startupProbe: httpProbe("/health", "http", { periodSeconds: 10, failureThreshold: 120 }),
    livenessProbe: httpProbe("/health", "http", { periodSeconds: 20 }),
    readinessProbe: httpProbe("/health", "http", { periodSeconds: 10 }),
    securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
  };
  const base: PodTemplate = {
    metadata: { labels },
    spec: {
      containers: [container],
      ...(cache ? {} : { volumes: [{ name: "model-cache", emptyDir: {} }] }),
    },
  };
  const podTemplate = mergePodTemplate(base, spec.podTemplateSpec, EMBEDDING_CONTAINER);
  const overrides = spec.resourceOverrides;
  const setMeta: { labels?: Record<string, string>; annotations?: Record<string, string> } = {
    labels: { ...labels },
  };
  const serviceMeta: { labels?: Record<string, string>; annotations?: Record<string, string> } = {
    labels: { ...labels },
  };
  applyResourceOverrides(
    { deployment: setMeta, podTemplate, service: serviceMeta, proxyContainer: EMBEDDING_CONTAINER },
    {
      ...(overrides?.statefulSet !== undefined ? { proxyDeployment: overrides.statefulSet } : {}),
      ...(overrides?.service !== undefined ? { proxyService: overrides.service } : {}),
    },
  );

  const claims: KubeObject[] = [];
  if (cache) {
    const c = spec.modelCache ?? {};
    const pvcOverrides = overrides?.persistentVolumeClaim;
    const pvcLabels = mergeMaps(pvcOverrides?.labels, labels);
    const pvcAnnotations = mergeMaps(undefined, pvcOverrides?.annotations);
    claims.push({
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: {
        name: "model-cache",
        ...(pvcLabels !== undefined ? { labels: pvcLabels } : {}),
        ...(pvcAnnotations !== undefined ? { annotations: pvcAnnotations } : {}),
      },
      spec: {
        accessModes: [c.accessMode ?? "ReadWriteOnce"],
        ...(c.storageClassName !== undefined && c.storageClassName !== ""
          ? { storageClassName: c.storageClassName }
          : {}),
        resources: { requests: { storage: c.size ?? "10Gi" } },
      },
    });
  }

  emit(scope, resource, {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: objectName, ...serviceMeta },
    spec: {
      type: "ClusterIP",
      selector,
      ports: [{ name: "http", port, targetPort: "http", protocol: "TCP" }],
    },
  });
  emit(scope, resource, {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: objectName, ...setMeta },
    spec: {
      ...(spec.replicas !== undefined ? { replicas: spec.replicas } : {}),
      serviceName: objectName,
      // Replicas are independent: start and replace them all at once.
      podManagementPolicy: "Parallel",
      selector: { matchLabels: selector },
      template: podTemplate,
      ...(claims.length > 0 ? { volumeClaimTemplates: claims } : {}),
    },
  });
};
