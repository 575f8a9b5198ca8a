// Prometheus metrics in the text exposition format 0.0.4: counters, gauges and histograms with
// labels, and the process metrics, read when scraped (nothing runs in the background). Node's
// built-ins only, so that loading it costs the server's start next to nothing.
import { readdirSync } from "node:fs";

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** One value per label name: a series is the set of its label values. */
export type LabelValues<L extends string> = Record<L, string | number>;

/** What a registry exposes: one metric's HELP, TYPE and sample lines. */
export interface Exposable {
  readonly name: string;
  expose(): string;
}

export class Registry {
  readonly contentType = PROMETHEUS_CONTENT_TYPE;
  readonly #metrics: Exposable[] = [];

  register(metric: Exposable): void {
    this.#metrics.push(metric);
  }

  /** The exposition text: the metrics in registration order, a blank line between two. */
  metrics(): Promise<string> {
    return Promise.resolve(`${this.#metrics.map((m) => m.expose()).join("\n\n")}\n`);
  }
}

interface MetricOptions<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
  registers?: readonly Registry[];
}

type MetricType = "counter" | "gauge" | "histogram";

/** HELP text escapes backslash and newline; label values a double quote as well. */
const escapeHelp = (text: string): string => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
const escapeLabelValue = (value: string): string => escapeHelp(value).replace(/"/g, '\\"');

function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

/** `a="x",b="y"` in the order given: also the series' key, as escaping keeps it unambiguous. */
function formatLabels(pairs: readonly (readonly [string, string | number])[]): string {
  return pairs.map(([name, value]) => `${name}="${escapeLabelValue(String(value))}"`).join(",");
}

const braced = (labels: string): string => (labels === "" ? "" : `{${labels}}`);

abstract class Metric<L extends string> implements Exposable {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  readonly #type: MetricType;

  constructor(options: MetricOptions<L>, type: MetricType) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames ?? [];
    this.#type = type;
    for (const registry of options.registers ?? []) registry.register(this);
  }

  expose(): string {
    const header = [
      `# HELP ${this.name} ${escapeHelp(this.help)}`,
      `# TYPE ${this.name} ${this.#type}`,
    ];
    return [...header, ...this.samples()].join("\n");
  }

  protected abstract samples(): string[];

  /** The series' labels in label-name order, whatever order the caller wrote them in. */
  protected seriesOf(labels: LabelValues<L>): string {
    return formatLabels(this.labelNames.map((name) => [name, labels[name]] as const));
  }
}

/** Counters and gauges: one number per series. */
abstract class SingleValueMetric<L extends string> extends Metric<L> {
  protected readonly values = new Map<string, number>();

  /** Without labels the one series exists from the start, at 0. */
  reset(): void {
    this.values.clear();
    if (this.labelNames.length === 0) this.values.set("", 0);
  }

  protected samples(): string[] {
    return [...this.values].map(([labels, v]) => `${this.name}${braced(labels)} ${formatValue(v)}`);
  }
}

export class Counter<L extends string = never> extends SingleValueMetric<L> {
  constructor(options: MetricOptions<L>) {
    super(options, "counter");
    this.reset();
  }

  /** A counter only goes up: a negative or non-finite amount is dropped, as the metric must never
   *  break the code it measures. */
  inc(labels: LabelValues<L>, amount = 1): void {
    if (!(amount >= 0 && amount < Infinity)) return;
    const series = this.seriesOf(labels);
    this.values.set(series, (this.values.get(series) ?? 0) + amount);
  }
}

export class Gauge<L extends string = never> extends SingleValueMetric<L> {
  constructor(options: MetricOptions<L>) {
    super(options, "gauge");
    this.reset();
  }

  set(labels: LabelValues<L>, value: number): void {
    this.values.set(this.seriesOf(labels), value);
  }
}

interface HistogramSeries {
  /** Observations per bucket, not cumulative (the last slot: above the highest bound). */
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram<L extends string = never> extends Metric<L> {
  readonly #bounds: readonly number[];
  readonly #series = new Map<string, HistogramSeries>();

  constructor(options: MetricOptions<L> & { buckets: readonly number[] }) {
    super(options, "histogram");
    this.#bounds = [...options.buckets].sort((a, b) => a - b);
    if (this.labelNames.length === 0) this.#series.set("", this.#empty());
  }

  /** A non-finite value is dropped: it would turn the sum into NaN for good. */
  observe(labels: LabelValues<L>, value: number): void {
    if (!Number.isFinite(value)) return;
    const key = this.seriesOf(labels);
    const series = this.#series.get(key) ?? this.#empty();
    this.#series.set(key, series);
    const bucket = this.#bounds.findIndex((bound) => value <= bound);
    series.counts[bucket === -1 ? this.#bounds.length : bucket]! += 1;
    series.sum += value;
    series.count += 1;
  }

  reset(): void {
    this.#series.clear();
    if (this.labelNames.length === 0) this.#series.set("", this.#empty());
  }

  protected samples(): string[] {
    const lines: string[] = [];
    for (const [labels, series] of this.#series) {
      const rest = labels === "" ? "" : `,${labels}`;
      let cumulative = 0;
      this.#bounds.forEach((bound, i) => {
        cumulative += series.counts[i]!;
        lines.push(`${this.name}_bucket{le="${formatValue(bound)}"${rest}} ${cumulative}`);
      });
      lines.push(`${this.name}_bucket{le="+Inf"${rest}} ${series.count}`);
      lines.push(`${this.name}_sum${braced(labels)} ${formatValue(series.sum)}`);
      lines.push(`${this.name}_count${braced(labels)} ${series.count}`);
    }
    return lines;
  }

  #empty(): HistogramSeries {
    return { counts: new Array<number>(this.#bounds.length + 1).fill(0), sum: 0, count: 0 };
  }
}

/** A metric whose one series is read when scraped; `undefined` leaves it without a sample. */
class ReadOnScrape extends Metric<string> {
  readonly #labels: string;
  readonly #read: () => number | undefined;

  constructor(
    options: MetricOptions<string> & {
      type: "counter" | "gauge";
      labels?: Record<string, string | number>;
      read: () => number | undefined;
    },
  ) {
    super(options, options.type);
    this.#labels = formatLabels(Object.entries(options.labels ?? {}));
    this.#read = options.read;
  }

  protected samples(): string[] {
    const value = this.#read();
    return value === undefined ? [] : [`${this.name}${braced(this.#labels)} ${formatValue(value)}`];
  }
}

/** Whole seconds since the epoch at which the process started. */
const processStart = Math.round(Date.now() / 1000 - process.uptime());

/** Open file descriptors, from Linux's /proc (whose listing opens one more, not counted). */
function openFds(): number | undefined {
  try {
    return readdirSync("/proc/self/fd").length - 1;
  } catch {
    return undefined;
  }
}

/**
 * The process metrics Prometheus clients share (CPU, memory, start time, open files, Node's heap
 * and version), each name prefixed, read on every scrape.
 */
export function registerProcessMetrics(registry: Registry, prefix: string): void {
  const add = (
    type: "counter" | "gauge",
    name: string,
    help: string,
    read: () => number | undefined,
    labels?: Record<string, string>,
  ) => registry.register(new ReadOnScrape({ name: prefix + name, help, type, read, labels }));
  // Each group is read once per scrape, by its first metric (a registry writes its metrics in
  // the order registered), so that the figures of one scrape agree with each other.
  let cpu = process.cpuUsage();
  let memory = process.memoryUsage();

  add("counter", "process_cpu_user_seconds_total", "Total user CPU time spent in seconds.", () => {
    cpu = process.cpuUsage();
    return cpu.user / 1e6;
  });
  add(
    "counter",
    "process_cpu_system_seconds_total",
    "Total system CPU time spent in seconds.",
    () => cpu.system / 1e6,
  );
  add(
    "counter",
    "process_cpu_seconds_total",
    "Total user and system CPU time spent in seconds.",
    () => (cpu.user + cpu.system) / 1e6,
  );
  add(
    "gauge",
    "process_start_time_seconds",
    "Start time of the process since unix epoch in seconds.",
    () => processStart,
  );
  add("gauge", "process_resident_memory_bytes", "Resident memory size in bytes.", () => {
    memory = process.memoryUsage();
    return memory.rss;
  });
  if (process.platform === "linux") {
    add("gauge", "process_open_fds", "Number of open file descriptors.", openFds);
  }
  add(
    "gauge",
    "nodejs_heap_size_total_bytes",
    "Process heap size from Node.js in bytes.",
    () => memory.heapTotal,
  );
  add(
    "gauge",
    "nodejs_heap_size_used_bytes",
    "Process heap size used from Node.js in bytes.",
    () => memory.heapUsed,
  );
  add(
    "gauge",
    "nodejs_external_memory_bytes",
    "Node.js external memory size in bytes.",
    () => memory.external,
  );
  const [major = "", minor = "", patch = ""] = process.versions.node.split(".");
  add("gauge", "nodejs_version_info", "Node.js version info.", () => 1, {
    version: process.version,
    major,
    minor,
    patch,
  });
}
