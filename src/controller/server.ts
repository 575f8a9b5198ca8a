// The controller's HTTP endpoints: /healthz (alive, with the last applied and attempted revision
// and last error), /readyz (ready once a revision has been applied or rendered), /metrics
// (Prometheus) and, when a webhook secret is configured, POST /hook.
import Fastify, { type FastifyInstance } from "fastify";
import { McpfleetError } from "../errors.js";
import type { ControllerStatus } from "./status.js";
import { registerWebhook, type WebhookOptions } from "./webhook.js";

export interface ServerOptions {
  status: ControllerStatus;
  webhook?: WebhookOptions;
}

export function createControllerServer(opts: ServerOptions): FastifyInstance {
  const app = Fastify({ logger: false });
  const { status } = opts;
  app.get("/healthz", (_req, reply) =>
    reply.header("cache-control", "no-store").send({ status: "ok", ...status.toJSON() }),
  );
  app.get("/readyz", (_req, reply) =>
    reply
      .code(status.ready ? 200 : 503)
      .header("cache-control", "no-store")
      .send({
        ready: status.ready,
        ...(status.ready
          ? { revision: status.lastAppliedRevision }
          : { reason: status.lastError?.message ?? "no revision applied yet" }),
      }),
  );
  app.get("/metrics", async (_req, reply) => {
    const text = await status.metrics.registry.metrics();
    return reply.header("content-type", status.metrics.registry.contentType).send(text);
  });
  if (opts.webhook !== undefined) registerWebhook(app, opts.webhook);
  return app;
}

/** Parses `--listen`: `PORT`, `:PORT` or `HOST:PORT` (IPv6 hosts in brackets). */
export function parseListen(text: string): { host: string; port: number } {
  const m = /^(?:(\[[^\]]+\]|[^:]*):)?(\d{1,5})$/.exec(text);
  const port = m === null ? NaN : Number(m[2]);
  if (m === null || port > 65535) {
    throw new McpfleetError("ERR_USAGE", `--listen must be PORT, :PORT or HOST:PORT, not ${text}`);
  }
  const host = (m[1] ?? "").replace(/^\[|\]$/g, "");
  return { host: host === "" ? "0.0.0.0" : host, port };
}
