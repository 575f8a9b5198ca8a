// Resource texts that several tests write into repositories: one definition each, so a change to
// what a minimal valid resource needs is made once.

/**
 * A minimal MCPServer (the time server over stdio, proxied as streamable HTTP), with `args` when
 * given: tests change them to make a new revision of the same object.
 */
export function timeServer(name = "time", args?: readonly string[]): string {
  const lines = [
    "apiVersion: toolhive.stacklok.dev/v1alpha1",
    "kind: MCPServer",
    "metadata:",
    `  name: ${name}`,
    "spec:",
    "  image: docker.io/mcp/time:latest",
    "  transport: stdio",
    "  proxyMode: streamable-http",
    "  proxyPort: 8080",
  ];
  if (args !== undefined) lines.push(`  args: ${JSON.stringify(args)}`);
  return `${lines.join("\n")}\n`;
}
