// Fastify encapsulates what a plugin adds (hooks, handlers, decorators) to the plugin's own
// context. The server's cross-cutting plugins must reach every route, so they opt out of that
// encapsulation with Fastify's `skip-override` symbol (what the fastify-plugin package sets).
import type { FastifyPluginAsync, FastifyPluginOptions } from "fastify";

const SKIP_OVERRIDE = Symbol.for("skip-override");

/** Marks a plugin so what it adds applies to the server that registers it, not a child. */
export function serverWide<O extends FastifyPluginOptions>(
  plugin: FastifyPluginAsync<O>,
): FastifyPluginAsync<O> {
  return Object.assign(plugin, { [SKIP_OVERRIDE]: true });
}
