import type { KindRenderer } from "../context.js";
import { labelValue } from "../names.js";
import { restrictedContainer, restrictedPod } from "../security.js";
import { type KubeObject, type Resource } from "../model.js";
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
import { emit, serviceHost } from "./common.js";

export const EMBEDDING_CONTAINER = "embedding";
/** The user the embedding server runs as (not root, which the image defaults to). */
export const EMBEDDING_UID = 1000;
/** The reference operator's default resources of the embedding container. */
const EMBEDDING_RESOURCES: NonNullable<Container["resources"]> = {
  requests: { cpu: "250m", memory: "256Mi" },
  limits: { cpu: "500m", memory: "512Mi" },
};

/**
 * The reference operator's labels of an embedding server's objects, all four its selector, so
 * its StatefulSets (whose selector and claim templates cannot change) can be adopted.
 */
export function embeddingLabels(name: string): Record<string, string> {
  return {
    "app.kubernetes.io/name": "embeddingserver",
    "app.kubernetes.io/instance": labelValue(name),
    "app.kubernetes.io/component": "embedding-server",
    "app.kubernetes.io/managed-by": "toolhive-operator",
  };
}

export const DEFAULT_EMBEDDING_MODEL = "BAAI/bge-small-en-v1.5";
export const DEFAULT_EMBEDDING_PORT = 8080;
/** Where models are downloaded (HF_HOME): the model-cache claim, or an emptyDir without one. */
export const MODEL_CACHE_PATH = "/data";

/**
 * Longest StatefulSet name whose pods can be created: the StatefulSet controller labels each pod
 * `controller-revision-hash: <name>-<10-character hash>`, and a label value has at most 63.
 */
export const STATEFULSET_NAME_MAX = 52;

/** Name of the StatefulSet and of its Service, shortened deterministically when too long. */
export const embeddingServerName = (name: string): string => shorten(name, STATEFULSET_NAME_MAX);

/** In-cluster base URL of an EmbeddingServer's Service. */
export function embeddingServerUrl(es: Resource<"EmbeddingServer">): string {
  const port = es.spec?.port ?? DEFAULT_EMBEDDING_PORT;
  return `http://${serviceHost(embeddingServerName(es.metadata.name), es.metadata.namespace)}:${port}`;
}

type Spec = NonNullable<Resource<"EmbeddingServer">["spec"]>;
type Metadata = { labels?: Record<string, string>; annotations?: Record<string, string> };

/** The server's environment: the model, its cache, the Hugging Face token; spec.env wins by name. */
function embeddingEnv(spec: Spec, model: string): EnvVar[] {
  const env: EnvVar[] = [
    { name: "MODEL_ID", value: model },
    { name: "RUST_LOG", value: "info" },
  ];
  if (spec.hfTokenSecretRef !== undefined) env.push(secretEnv("HF_TOKEN", spec.hfTokenSecretRef));
  env.push({ name: "HF_HOME", value: MODEL_CACHE_PATH });
  for (const e of literalEnv(spec.env)) {
    const i = env.findIndex((x) => x.name === e.name);
    if (i === -1) env.push(e);
    else env[i] = e;
  }
  return env;
}

function embeddingContainer(spec: Spec, image: string, model: string, port: number): Container {
  return {
    name: EMBEDDING_CONTAINER,
    image: spec.image ?? image,
    imagePullPolicy: spec.imagePullPolicy ?? "IfNotPresent",
    args: ["--model-id", model, "--port", String(port), ...(spec.args ?? [])],
    env: embeddingEnv(spec, model),
    ports: [{ name: "http", containerPort: port, protocol: "TCP" }],
    resources: (spec.resources as Container["resources"] | undefined) ?? EMBEDDING_RESOURCES,
    volumeMounts: [{ name: "model-cache", mountPath: MODEL_CACHE_PATH }],
    // The model is downloaded at start-up: allow up to 20 minutes before liveness applies.
    startupProbe: httpProbe("/health", port, { periodSeconds: 10, failureThreshold: 120 }),
    livenessProbe: httpProbe("/health", port, {
      initialDelaySeconds: 60,
      periodSeconds: 30,
      timeoutSeconds: 10,
    }),
    readinessProbe: httpProbe("/health", port, {
      initialDelaySeconds: 30,
      periodSeconds: 10,
      timeoutSeconds: 5,
    }),
    // The server writes outside HF_HOME at run time, so the root file system stays writable.
    securityContext: restrictedContainer({ readOnlyRootFilesystem: false }),
  };
}

/** The model cache: one claim per replica when enabled, else an emptyDir in the pod. */
function modelCacheClaims(spec: Spec, labels: Record<string, string>): KubeObject[] {
  const c = spec.modelCache ?? {};
  const pvcOverrides = spec.resourceOverrides?.persistentVolumeClaim;
  const pvcLabels = mergeMaps(pvcOverrides?.labels, labels);
  const pvcAnnotations = mergeMaps(undefined, pvcOverrides?.annotations);
  return [
    {
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
    },
  ];
}

/** The pod template, with spec.podTemplateSpec merged in. */
function embeddingPodTemplate(
  spec: Spec,
  container: Container,
  labels: Record<string, string>,
  cache: boolean,
): PodTemplate {
  const base: PodTemplate = {
    metadata: { labels },
    spec: {
      // The image's default user is root; any other user works, and fsGroup lets it write the cache.
      securityContext: restrictedPod({
        runAsUser: EMBEDDING_UID,
        runAsGroup: EMBEDDING_UID,
        fsGroup: EMBEDDING_UID,
      }),
      containers: [container],
      ...(cache ? {} : { volumes: [{ name: "model-cache", emptyDir: {} }] }),
    },
  };
  return mergePodTemplate(base, spec.podTemplateSpec, EMBEDDING_CONTAINER);
}

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
  const objectName = embeddingServerName(resource.metadata.name);
  const labels = embeddingLabels(resource.metadata.name);
  const model = spec.model ?? DEFAULT_EMBEDDING_MODEL;
  const port = spec.port ?? DEFAULT_EMBEDDING_PORT;
  const cache = spec.modelCache !== undefined && spec.modelCache.enabled !== false;
  const container = embeddingContainer(spec, context.options.embeddingImage, model, port);
  const podTemplate = embeddingPodTemplate(spec, container, labels, cache);
  const overrides = spec.resourceOverrides;
  const setMeta: Metadata = { labels: { ...labels } };
  const serviceMeta: Metadata = { labels: { ...labels } };
  applyResourceOverrides(
    { deployment: setMeta, podTemplate, service: serviceMeta, proxyContainer: EMBEDDING_CONTAINER },
    {
      ...(overrides?.statefulSet !== undefined ? { proxyDeployment: overrides.statefulSet } : {}),
      ...(overrides?.service !== undefined ? { proxyService: overrides.service } : {}),
    },
  );
  const claims = cache ? modelCacheClaims(spec, labels) : [];
  emit(scope, resource, {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: objectName, ...serviceMeta },
    spec: {
      type: "ClusterIP",
      selector: labels,
      ports: [{ name: "http", port, targetPort: port, protocol: "TCP" }],
    },
  });
  emit(scope, resource, {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: objectName, ...setMeta },
    spec: {
      ...(spec.replicas !== undefined ? { replicas: spec.replicas } : {}),
      // podManagementPolicy stays the default, as the reference operator leaves it: it cannot
      // change on an existing StatefulSet, so another value would block adopting its objects.
      serviceName: objectName,
      selector: { matchLabels: labels },
      template: podTemplate,
      ...(claims.length > 0 ? { volumeClaimTemplates: claims } : {}),
    },
  });
};
