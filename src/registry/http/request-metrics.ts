// Counts and times every answer by method, route pattern and status.
import type { RegistryMetrics } from "./metrics.js";
import { serverWide } from "./server-wide.js";

export const requestMetrics = serverWide<{ metrics: RegistryMetrics }>(async (app, opts) => {
  app.addHook("onResponse", async (req, reply) => {
    const route = req.routeOptions.url ?? "unmatched";
    opts.metrics.requests.inc({ method: req.method, route, status: String(reply.statusCode) });
    opts.metrics.requestSeconds.observe({ method: req.method, route }, reply.elapsedTime / 1000);
  });
  return Promise.resolve();
});
