// Synthesis of 1,000 MCPServers with tool configs, telemetry references and groups, against the
// floor: copying the objects it renders, sorting and writing them with the same YAML writer, so
// the ratio is what building the objects (renderers and cdk8s) costs over writing them out.
import type { KubeObject, Resource } from "../src/synth/model.js";
import { sortObjects, synthesize } from "../src/synth/render.js";
import { toYaml } from "../src/synth/yaml.js";

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

/** The floor: the objects of one synthesis, copied, sorted and written the same way. */
function plain(byNamespace: readonly KubeObject[][]): string[] {
  return byNamespace.map((objects) => toYaml(sortObjects(structuredClone(objects))));
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
const rendered = [...synthesize(resources).byNamespace.values()];
const a = synth(resources);
const b = plain(rendered);
if (a.join("") !== b.join("")) {
  console.error("bench: synth and plain output differ");

  process.exit(1);
}
for (let i = 0; i < 2; i++) {
  synth(resources);
  plain(rendered);
}
const [synthMs, plainMs] = timeBoth(
  () => synth(resources),
  () => plain(rendered),
  9,
);
const objects = a.join("").split("\n---\n").length;
console.log(
  `bench: synth-1000-mcpservers ${synthMs.toFixed(0)} ms ratio=${(synthMs / plainMs).toFixed(2)} (cdk8s synthesis + YAML of ${SERVERS} MCPServers, ${objects} objects, vs copying and writing the same objects: ${plainMs.toFixed(0)} ms; target ratio <= 4, under 5000 ms)`,
);
if (synthMs > 5000) process.exitCode = 1;
