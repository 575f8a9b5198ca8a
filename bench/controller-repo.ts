// The repository the controller benchmark applies: 1,000 custom resources in four namespaces
// (400 configuration resources, 600 MCPServers, about 5,000 rendered objects).
import { stringify } from "yaml";

export const NAMESPACES = 4;
export const RESOURCES = 1000;
/** Tool configs and groups per namespace: 400 configuration resources, 600 MCPServers. */
const CONFIGS = 50;

function doc(kind: string, name: string, namespace: string, spec: unknown): string {
  return stringify({
    apiVersion: "toolhive.stacklok.dev/v1alpha1",
    kind,
    metadata: { name, namespace },
    spec,
  });
}

export function repository(): Record<string, string> {
  const files: Record<string, string> = { "README.md": "fleet\n" };
  let count = 0;
  for (let n = 0; n < NAMESPACES; n++) {
    const ns = `team-${n}`;
    const docs: string[] = [];
    for (let i = 0; i < CONFIGS; i++) {
      docs.push(doc("MCPToolConfig", `tools-${i}`, ns, { toolsFilter: [`get_${i}`, `list_${i}`] }));
      docs.push(doc("MCPGroup", `group-${i}`, ns, { description: `group ${i}` }));
      count += 2;
    }
    files[`fleet/${ns}/config.yaml`] = docs.join("---\n");
  }
  const servers = RESOURCES - count;
  const perNs: string[][] = Array.from({ length: NAMESPACES }, () => []);
  for (let i = 0; i < servers; i++) {
    const ns = i % NAMESPACES;
    perNs[ns]!.push(
      doc("MCPServer", `server-${i}`, `team-${ns}`, {
        image: `ghcr.io/example/server-${i}:1.0.${i}`,
        transport: i % 2 === 0 ? "streamable-http" : "sse",
        proxyPort: 8080,
        mcpPort: 8081,
        env: [{ name: "LOG_LEVEL", value: "info" }],
        toolConfigRef: { name: `tools-${i % CONFIGS}` },
        groupRef: `group-${i % CONFIGS}`,
      }),
    );
  }
  perNs.forEach((docs, n) => (files[`fleet/team-${n}/servers.yaml`] = docs.join("---\n")));
  return files;
}
