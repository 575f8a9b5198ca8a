// The Prometheus text exposition (format 0.0.4): exact text for each kind of metric, and the
// registry server's and the controller's real /metrics output read with a strict grammar.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControllerStatus } from "../../src/controller/status.js";
import {
  Counter,
  Gauge,
  Histogram,
  PROMETHEUS_CONTENT_TYPE,
  Registry,
  registerProcessMetrics,
} from "../../src/infra/metrics.js";
import type { RegistryServer } from "../../src/registry/server.js";
import { startServer, untilReady } from "../registry/helpers.js";

const CATALOG = join(import.meta.dirname, "..", "registry", "fixtures", "catalog-upstream.json");

describe("exposition text", () => {
  it("writes counters: unlabelled at 0, labelled series in label-name order", async () => {
    const registry = new Registry();
    const plain = new Counter({ name: "jobs_total", help: "Jobs.", registers: [registry] });
    const byRoute = new Counter<"method" | "route">({
      name: "requests_total",
      help: "Requests.",
      labelNames: ["method", "route"],
      registers: [registry],
    });
    expect(await registry.metrics()).toBe(
      [
        "# HELP jobs_total Jobs.",
        "# TYPE jobs_total counter",
        "jobs_total 0",
        "",
        "# HELP requests_total Requests.",
        "# TYPE requests_total counter",
        "",
      ].join("\n"),
    );
    plain.inc({});
    plain.inc({}, 2.5);
    byRoute.inc({ route: "/a", method: "GET" });
    byRoute.inc({ method: "GET", route: "/a" }, 2);
    byRoute.inc({ method: "POST", route: "/b" }, 0);
    byRoute.inc({ method: "POST", route: "/b" }, -1);
    byRoute.inc({ method: "POST", route: "/b" }, NaN);
    expect(await registry.metrics()).toBe(
      [
        "# HELP jobs_total Jobs.",
        "# TYPE jobs_total counter",
        "jobs_total 3.5",
        "",
        "# HELP requests_total Requests.",
        "# TYPE requests_total counter",
        'requests_total{method="GET",route="/a"} 3',
        'requests_total{method="POST",route="/b"} 0',
        "",
      ].join("\n"),
    );
  });

  it("escapes help text and label values", async () => {
    const registry = new Registry();
    const gauge = new Gauge<"revision">({
      name: "last_revision",
      help: 'Back\\slash, "quotes" and\na newline.',
      labelNames: ["revision"],
      registers: [registry],
    });
    gauge.set({ revision: 'a\\b"c\nd' }, 1.5);
    expect(await registry.metrics()).toBe(
      [
        '# HELP last_revision Back\\\\slash, "quotes" and\\na newline.',
        "# TYPE last_revision gauge",
        'last_revision{revision="a\\\\b\\"c\\nd"} 1.5',
        "",
      ].join("\n"),
    );
  });

  it("writes gauges: set replaces, reset empties, special values", async () => {
    const registry = new Registry();
    const plain = new Gauge({ name: "temperature", help: "T.", registers: [registry] });
    const bySource = new Gauge<"source">({
      name: "entries",
      help: "E.",
      labelNames: ["source"],
      registers: [registry],
    });
    plain.set({}, Infinity);
    bySource.set({ source: "a" }, 1);
    bySource.set({ source: "a" }, 2);
    bySource.set({ source: "b" }, NaN);
    bySource.set({ source: 7 }, -Infinity);
    expect(await registry.metrics()).toContain(
      [
        "temperature +Inf",
        "",
        "# HELP entries E.",
        "# TYPE entries gauge",
        'entries{source="a"} 2',
        'entries{source="b"} NaN',
        'entries{source="7"} -Inf',
      ].join("\n"),
    );
    plain.reset();
    bySource.reset();
    bySource.set({ source: "c" }, 3);
    expect(await registry.metrics()).toBe(
      [
        "# HELP temperature T.",
        "# TYPE temperature gauge",
        "temperature 0",
        "",
        "# HELP entries E.",
        "# TYPE entries gauge",
        'entries{source="c"} 3',
        "",
      ].join("\n"),
    );
  });

  it("writes histograms: cumulative buckets with le first, +Inf, sum and count", async () => {
    const registry = new Registry();
    const plain = new Histogram({
      name: "wait_seconds",
      help: "W.",
      buckets: [1, 0.5],
      registers: [registry],
    });
    const labelled = new Histogram<"target" | "result">({
      name: "apply_seconds",
      help: "A.",
      labelNames: ["target", "result"],
      buckets: [0.1, 1, 10],
      registers: [registry],
    });
    const empty = `# HELP wait_seconds W.
# TYPE wait_seconds histogram
wait_seconds_bucket{le="0.5"} 0
wait_seconds_bucket{le="1"} 0
wait_seconds_bucket{le="+Inf"} 0
wait_seconds_sum 0
wait_seconds_count 0

# HELP apply_seconds A.
# TYPE apply_seconds histogram
`;
    expect(await registry.metrics()).toBe(empty);
    for (const v of [0.1, 0.5, 20, 1]) labelled.observe({ result: "ok", target: 'dir:"out"' }, v);
    labelled.observe({ target: "cluster", result: "failed" }, 3);
    labelled.observe({ target: "cluster", result: "failed" }, NaN);
    plain.observe({}, 0.25);
    expect(await registry.metrics()).toBe(`# HELP wait_seconds W.
# TYPE wait_seconds histogram
wait_seconds_bucket{le="0.5"} 1
wait_seconds_bucket{le="1"} 1
wait_seconds_bucket{le="+Inf"} 1
wait_seconds_sum 0.25
wait_seconds_count 1

# HELP apply_seconds A.
# TYPE apply_seconds histogram
apply_seconds_bucket{le="0.1",target="dir:\\"out\\"",result="ok"} 1
apply_seconds_bucket{le="1",target="dir:\\"out\\"",result="ok"} 3
apply_seconds_bucket{le="10",target="dir:\\"out\\"",result="ok"} 3
apply_seconds_bucket{le="+Inf",target="dir:\\"out\\"",result="ok"} 4
apply_seconds_sum{target="dir:\\"out\\"",result="ok"} 21.6
apply_seconds_count{target="dir:\\"out\\"",result="ok"} 4
apply_seconds_bucket{le="0.1",target="cluster",result="failed"} 0
apply_seconds_bucket{le="1",target="cluster",result="failed"} 0
apply_seconds_bucket{le="10",target="cluster",result="failed"} 1
apply_seconds_bucket{le="+Inf",target="cluster",result="failed"} 1
apply_seconds_sum{target="cluster",result="failed"} 3
apply_seconds_count{target="cluster",result="failed"} 1
`);
    plain.reset();
    labelled.reset();
    expect(await registry.metrics()).toBe(empty);
  });

  it("reads the process metrics when scraped, with their prefix", async () => {
    const registry = new Registry();
    registerProcessMetrics(registry, "app_");
    expect(registry.contentType).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await registry.metrics();
    const value = (name: string) => Number(new RegExp(`^app_${name} (\\S+)$`, "m").exec(text)?.[1]);
    const cpu = process.cpuUsage();
    expect(value("process_cpu_user_seconds_total")).toBeLessThanOrEqual(cpu.user / 1e6);
    expect(value("process_cpu_seconds_total")).toBeCloseTo(
      value("process_cpu_user_seconds_total") + value("process_cpu_system_seconds_total"),
      6,
    );
    const start = value("process_start_time_seconds");
    expect(Math.abs(start - (Date.now() / 1000 - process.uptime()))).toBeLessThan(2);
    expect(value("process_resident_memory_bytes")).toBeGreaterThan(1e6);
    expect(value("nodejs_heap_size_used_bytes")).toBeLessThanOrEqual(
      value("nodejs_heap_size_total_bytes"),
    );
    expect(value("nodejs_external_memory_bytes")).toBeGreaterThan(0);
    if (process.platform === "linux") expect(value("process_open_fds")).toBeGreaterThan(2);
    const [major, minor, patch] = process.versions.node.split(".");
    expect(text).toContain(
      `app_nodejs_version_info{version="${process.version}",major="${major}",minor="${minor}",patch="${patch}"} 1`,
    );
  });
});

const METRIC_NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL_VALUE = '"(?:[^"\\\\\\n]|\\\\[\\\\"n])*"';
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*=${LABEL_VALUE}`;
const VALUE = "(?:[+-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][+-]?\\d+)?|[+-]Inf|NaN)";
const SAMPLE = new RegExp(`^(${METRIC_NAME})(?:\\{(${LABEL}(?:,${LABEL})*)\\})? (${VALUE})$`);
const HELP = new RegExp(`^# HELP (${METRIC_NAME}) (?:[^\\\\\\n]|\\\\[\\\\n])*$`);
const TYPE = new RegExp(`^# TYPE (${METRIC_NAME}) (counter|gauge|histogram)$`);

interface Family {
  type: string;
  samples: { name: string; labels: string; value: number }[];
}

/**
 * Reads exposition text line by line, failing on any line outside the grammar, a sample before
 * its family's HELP and TYPE, or a family declared twice.
 */
function parseExposition(text: string): Map<string, Family> {
  expect(text.endsWith("\n")).toBe(true);
  const families = new Map<string, Family>();
  let current: { name: string; family: Family | undefined } | undefined;
  for (const line of text.slice(0, -1).split("\n")) {
    if (line === "") continue;
    const help = HELP.exec(line);
    const type = TYPE.exec(line);
    const sample = SAMPLE.exec(line);
    if (help !== null) {
      expect(families.has(help[1]!), `${help[1]} declared twice`).toBe(false);
      current = { name: help[1]!, family: undefined };
    } else if (type !== null) {
      expect(type[1], `TYPE right after its HELP: ${line}`).toBe(current?.name);
      current!.family = { type: type[2]!, samples: [] };
      families.set(type[1]!, current!.family);
    } else {
      expect(sample, `not a sample line: ${line}`).not.toBeNull();
      const [, name, labels = "", value] = sample!;
      const family = current?.family;
      expect(family, `sample before HELP and TYPE: ${line}`).toBeDefined();
      const suffixes = family!.type === "histogram" ? ["_bucket", "_sum", "_count"] : [""];
      expect(
        suffixes.map((s) => current!.name + s),
        line,
      ).toContain(name);
      family!.samples.push({ name: name!, labels, value: Number(value) });
    }
  }
  return families;
}

/** Each histogram series: buckets ascending and cumulative, ending in +Inf equal to _count. */
function checkHistograms(families: Map<string, Family>): number {
  let series = 0;
  for (const [name, family] of families) {
    if (family.type !== "histogram") continue;
    const buckets = family.samples
      .filter((s) => s.name === `${name}_bucket`)
      .map((s) => {
        const le = /^le="([^"]*)"(?:,(.*))?$/.exec(s.labels);
        expect(le, `${name}_bucket{${s.labels}}: le first`).not.toBeNull();
        return { le: le![1]!, series: le![2] ?? "", value: s.value };
      });
    const counts = family.samples.filter((s) => s.name === `${name}_count`);
    for (const { labels, value: count } of counts) {
      const own = buckets.filter((b) => b.series === labels);
      expect(own.at(-1), `${name}{${labels}}`).toMatchObject({ le: "+Inf", value: count });
      const bounds = own.map((b) => Number(b.le.replace("+Inf", "Infinity")));
      expect(bounds).toEqual([...bounds].sort((a, b) => a - b));
      const values = own.map((b) => b.value);
      expect(values).toEqual([...values].sort((a, b) => a - b));
      expect(
        family.samples.filter((s) => s.name === `${name}_sum` && s.labels === labels),
      ).toHaveLength(1);
      series++;
    }
    expect(new Set(buckets.map((b) => b.series)).size, `${name}: buckets without a count`).toBe(
      counts.length,
    );
  }
  return series;
}

describe("the registry server's /metrics", () => {
  let dir: string;
  let server: RegistryServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "metrics-"));
    server = await startServer(
      `sources:
  - name: catalog
    format: upstream
    file: { path: ${CATALOG} }
registries:
  - name: default
    sources: [catalog]
auth: { mode: anonymous }
database: { embedded: {} }
`,
      dir,
    );
    await untilReady(server.url);
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is exposition text every line of which parses", async () => {
    await fetch(`${server.url}/default/v0.1/servers`);
    await fetch(`${server.url}/no/such/"path"`);
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(PROMETHEUS_CONTENT_TYPE);
    const families = parseExposition(await res.text());
    const p = "mcpfleet_registry_";
    expect([...families.keys()]).toEqual(
      expect.arrayContaining([
        `${p}process_cpu_user_seconds_total`,
        `${p}process_cpu_system_seconds_total`,
        `${p}process_cpu_seconds_total`,
        `${p}process_start_time_seconds`,
        `${p}process_resident_memory_bytes`,
        `${p}nodejs_heap_size_total_bytes`,
        `${p}nodejs_heap_size_used_bytes`,
        `${p}nodejs_external_memory_bytes`,
        `${p}nodejs_version_info`,
        `${p}http_requests_total`,
        `${p}http_request_duration_seconds`,
        `${p}syncs_total`,
        `${p}sync_duration_seconds`,
        `${p}source_entries`,
      ]),
    );
    expect(families.get(`${p}syncs_total`)?.samples).toEqual([
      { name: `${p}syncs_total`, labels: 'source="catalog",outcome="updated"', value: 1 },
    ]);
    expect(checkHistograms(families)).toBeGreaterThanOrEqual(3);
  });
});

describe("the controller's metrics", () => {
  it("parse, before any sync and after a success and a failure", async () => {
    const status = new ControllerStatus('branch "main"', "dir:out");
    const before = parseExposition(await status.metrics.registry.metrics());
    expect([...before.values()].every((f) => f.samples.length === 0)).toBe(true);
    status.attempted("abc123");
    status.succeeded("abc123", { seconds: 0.3, applied: 4, pruned: 0 });
    status.failed({ stage: "validate", code: "ERR_INVALID_RESOURCES", message: "x" }, 200);
    const after = parseExposition(await status.metrics.registry.metrics());
    expect(after.get("mcpfleet_controller_last_applied_revision")?.samples[0]?.labels).toBe(
      'revision="abc123",ref="branch \\"main\\""',
    );
    expect(checkHistograms(after)).toBe(2);
  });
});
