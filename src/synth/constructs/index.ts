import type { RendererTable } from "../context.js";
import { renderEmbeddingServer } from "./embeddingserver.js";
import { renderMCPRegistry } from "./mcpregistry.js";
import { renderMCPRemoteProxy } from "./mcpremoteproxy.js";
import { renderMCPServer } from "./mcpserver.js";
import { renderVirtualMCPServer } from "./vmcp/index.js";

/**
 * One construct per kind that creates workloads. MCPGroup, MCPServerEntry, the composite tool
 * definitions and the configuration kinds create nothing: they are read by the others and only
 * get a computed status.
 */
export const RENDERERS: RendererTable = {
  EmbeddingServer: renderEmbeddingServer,
  MCPServer: renderMCPServer,
  MCPRemoteProxy: renderMCPRemoteProxy,
  VirtualMCPServer: renderVirtualMCPServer,
  MCPRegistry: renderMCPRegistry,
};
