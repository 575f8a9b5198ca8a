// Prometheus metrics of the registry server: requests by route and status, sync durations and
// outcomes, entries per source.
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  registerProcessMetrics,
} from "../../infra/metrics.js";

export class RegistryMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<"method" | "route" | "status">;
  readonly requestSeconds: Histogram<"method" | "route">;
  readonly syncs: Counter<"source" | "outcome">;
  readonly syncSeconds: Histogram<"source" | "outcome">;
  readonly entries: Gauge<"source">;

  constructor() {
    registerProcessMetrics(this.registry, "mcpfleet_registry_");
    this.requests = new Counter({
      name: "mcpfleet_registry_http_requests_total",
      help: "HTTP requests by method, route and status code.",
      labelNames: ["method", "route", "status"],
      registers: [this.registry],
    });
    this.requestSeconds = new Histogram({
      name: "mcpfleet_registry_http_request_duration_seconds",
      help: "HTTP request duration by method and route.",
      labelNames: ["method", "route"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [this.registry],
    });
    this.syncs = new Counter({
      name: "mcpfleet_registry_syncs_total",
      help: "Source syncs by source and outcome (updated, unchanged, failed).",
      labelNames: ["source", "outcome"],
      registers: [this.registry],
    });
    this.syncSeconds = new Histogram({
      name: "mcpfleet_registry_sync_duration_seconds",
      help: "Source sync duration by source and outcome.",
      labelNames: ["source", "outcome"],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
      registers: [this.registry],
    });
    this.entries = new Gauge({
      name: "mcpfleet_registry_source_entries",
      help: "Entries held per source.",
      labelNames: ["source"],
      registers: [this.registry],
    });
  }
}
