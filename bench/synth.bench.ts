// Synthesis of 1,000 MCPServers with tool configs, telemetry references and groups, against the
// floor: the same renderers building plain objects (no cdk8s) and the same YAML writer.
import type { Construct } from "constructs";
import { RENDERERS } from "../src/synth/constructs/index.js";
import { PlainScope } from "../src/synth/constructs/common.js";
import type { SynthContext } from "../src/synth/context.js";
import { type Resource, ResourceSet } from "../src/synth/model.js";
import { DEFAULT_SYNTH_OPTIONS } from "../src/synth/options.js";
import { sortObjects, synthesize, toYaml } from "../src/synth/render.js";
import { KINDS } from "../src/schema/kinds.js";
import { sortKeys } from "../src/synth/hash.js";

const SERVERS = 1000;
const NAMESPACES = 4;

function resource(kind: string, name: string, namespace: string, spec: unknown): Resource {
  return {
    apiVersion: "toolhive.stacklok.dev/v1alpha1",
    kind,
    metadata: { name, namespace },
    spec,
  } as unknown as Resource;
}

function fleet(): Resource[] {
  const out: Resource[] = [];
  for (let n = 0; n < NAMESPACES; n++) {
    const ns = `team-${n}`;
    for (let i = 0; i < 10; i++) {
      out.push(
        resource("MCPToolConfig", `tools-${i}`, ns, {
          toolsFilter: [`get_${i}`, `list_${i}`, `create_${i}`],
          toolsOverride: { [`get_${i}`]: { name: `fetch_${i}`, description: "Fetch one" } },
        }),
      );
      out.push(resource("MCPGroup", `group-${i}`, ns, { description: `group ${i}` }));
    }
    out.push(
      resource("MCPTelemetryConfig", "otel", ns, {
        openTelemetry: {
          enabled: true,
          endpoint: "otel-collector.monitoring:4318",
          tracing: { enabled: true, samplingRate: "0.1" },
          metrics: { enabled: true },
          sensitiveHeaders: [{ name: "Authorization", secretKeyRef: { name: "otel", key: "t" } }],
        },
        prometheus: { enabled: true },
      }),
    );
  }
  for (let i = 0; i < SERVERS; i++) {
    const ns = `team-${i % NAMESPACES}`;
    out.push(
      resource("MCPServer", `server-${i}`, ns, {
        image: `ghcr.io/example/server-${i}:1.0.${i}`,
        transport: i % 3 === 0 ? "stdio" : i % 3 === 1 ? "streamable-http" : "sse",
        proxyPort: 8080,
        mcpPort: 8081,
        args: ["--verbose"],
        env: [{ name: "LOG_LEVEL", value: "info" }],
        secrets: [{ name: `server-${i}`, key: "token", targetEnvName: "API_TOKEN" }],
        resources: { requests: { cpu: "50m", memory: "64Mi" }, limits: { memory: "256Mi" } },
        toolConfigRef: { name: `tools-${i % 10}` },
        telemetryConfigRef: { name: "otel", serviceName: `server-${i}` },
        groupRef: `group-${i % 10}`,
        audit: { enabled: true },
      }),
    );
  }
  return out;
}

/** The floor: the same renderers into plain objects, sorted and written the same way. */
function plain(resources: Resource[]): string[] {
  const set = new ResourceSet(resources);
  const context: SynthContext = { resources: set, options: DEFAULT_SYNTH_OPTIONS };
  const texts: string[] = [];
  for (const namespace of set.namespaces()) {
    const scope = new PlainScope(undefined as unknown as Construct, "");
    for (const kind of KINDS) {
      const renderer = RENDERERS[kind] as
        ((s: Construct, r: Resource, c: SynthContext) => void) | undefined;
      if (renderer === undefined) continue;
      for (const r of set.list(kind, namespace)) renderer(scope, r, context);
    }
    // cdk8s writes apiVersion, kind and metadata first, and every other key sorted; so does the
    // floor, so that both give equal bytes.
    const objects = scope.objects.map(({ apiVersion, kind, metadata, ...rest }) => ({
      apiVersion,
      kind,
      metadata: sortKeys(metadata),
      ...sortKeys(rest),
    }));
    texts.push(toYaml(sortObjects(objects)));
  }
  return texts;
}

function synth(resources: Resource[]): string[] {
  return [...synthesize(resources).byNamespace.values()].map(toYaml);
}

/**
 * Fastest of `runs` runs of each, interleaved so that both see the same load from other work on
 * the machine; the fastest run is the least disturbed one.
 */
function timeBoth(a: () => unknown, b: () => unknown, runs: number): [number, number] {
  let bestA = Infinity;
  let bestB = Infinity;
  for (let i = 0; i < runs; i++) {
    let t = performance.now();
    a();
    bestA = Math.min(bestA, performance.now() - t);
    t = performance.now();
    b();
    bestB = Math.min(bestB, performance.now() - t);
  }
  return [bestA, bestB];
}

const resources = fleet();
// Same output both ways, or the comparison means nothing.
const a = synth(resources);
const b = plain(resources);
if (a.join("") !== b.join("")) {
  console.error("bench: synth and plain output differ");

  process.exit(1);
}
for (let i = 0; i < 2; i++) {
  synth(resources);
  plain(resources);
}
const [synthMs, plainMs] = timeBoth(
  () => synth(resources),
  () => plain(resources),
  9,
);
const objects = a.join("").split("\n---\n").length;
console.log(
  `bench: synth-1000-mcpservers ${synthMs.toFixed(0)} ms ratio=${(synthMs / plainMs).toFixed(2)} (cdk8s synthesis + YAML of ${SERVERS} MCPServers, ${objects} objects, vs the same plain objects + YAML: ${plainMs.toFixed(0)} ms; target ratio <= 2, under 5000 ms)`,
);
if (synthMs > 5000) process.exitCode = 1;
