// `mcpfleet status`: the GitOps controller's state as the cluster holds it (as `flux get
// kustomizations` shows a Kustomization's): applied and attempted revision, suspension, last
// error, reconcile requests, and the readiness of every custom resource it applied. Exit 0 when
// shown (whatever the state), 1 when there is no cluster or no controller inventory, 2 usage.
import { stringify } from "yaml";
import { explainKubeError } from "../infra/kube/explain-error.js";
import { type StatusReport, readStatusReport } from "../controller/status-report.js";
import { parseCommandArgs, usageError } from "./args.js";
import { CONNECTION_ARGS, CONNECTION_OPTIONS, connectController } from "./cluster-options.js";

const USAGE = `Usage: mcpfleet status [options]

Shows the GitOps controller's state, read from its inventory ConfigMap in the cluster: the ref it
follows, the revision applied and the one last attempted, whether it is suspended, the last
error, the last reconcile request and whether it was handled, then the Ready condition of every
custom resource the controller applied. Exit 0 shown, 1 no cluster or no controller, 2 usage.

  -o, --output text|json|yaml  a summary and a table (default), or one document
${CONNECTION_OPTIONS}
  -h, --help                   show this help`;

const OUTPUTS = ["text", "json", "yaml"] as const;
type Output = (typeof OUTPUTS)[number];

/** Rows as columns padded to their widest cell (the last column is not padded). */
export function table(rows: readonly (readonly string[])[]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd(),
  );
}

const bool = (b: boolean) => (b ? "True" : "False");

/** The report for a person: a summary, then one line per resource. */
export function statusText(report: StatusReport): string[] {
  const error = report.lastError;
  const request =
    report.reconcileRequestedAt === null
      ? "-"
      : `requested ${report.reconcileRequestedAt}, ${
          report.lastHandledReconcileAt === report.reconcileRequestedAt
            ? "handled"
            : report.suspended
              ? "pending: suspended"
              : "not handled yet"
        }`;
  const summary = table([
    ["controller", `${report.inventory} in namespace ${report.namespace}`],
    ["ref", report.ref ?? "-"],
    ["suspended", bool(report.suspended)],
    ["ready", bool(report.ready)],
    [
      "applied",
      report.lastAppliedRevision === null
        ? "-"
        : `${report.lastAppliedRevision}${report.lastAppliedAt !== null ? ` at ${report.lastAppliedAt}` : ""}`,
    ],
    ["attempted", report.lastAttemptedRevision ?? "-"],
    [
      "last error",
      error === null
        ? "-"
        : `${error.stage} ${error.code}${error.revision !== undefined ? ` (revision ${error.revision.slice(0, 12)}, ${error.at})` : ` (${error.at})`}: ${error.message}`,
    ],
    ["reconcile", request],
    ["objects", String(report.objects)],
  ]);
  if (report.resources.length === 0) return [...summary, "", "No custom resources applied."];
  const rows = [
    ["KIND", "NAMESPACE", "NAME", "READY", "PHASE", "STALLED", "MESSAGE"],
    ...report.resources.map((r) => [
      r.kind,
      r.namespace ?? "-",
      r.name,
      r.ready,
      r.phase ?? "-",
      r.stalled ?? "-",
      r.message ?? r.reason ?? "",
    ]),
  ];
  return [...summary, "", ...table(rows)];
}

export async function runStatus(
  argv: string[],
  out: (text: string) => void = (t) => void process.stdout.write(t),
): Promise<number> {
  const parsed = parseCommandArgs("status", {
    args: argv,
    allowPositionals: false,
    strict: true,
    options: {
      ...CONNECTION_ARGS,
      output: { type: "string", short: "o", default: "text" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const v = parsed.values;
  if (v.help) {
    console.log(USAGE);
    return 0;
  }
  if (!(OUTPUTS as readonly string[]).includes(v.output)) {
    throw usageError("status", `-o must be text, json or yaml, not "${v.output}"`);
  }
  const output = v.output as Output;
  const target = connectController("status", v);
  try {
    const report = await readStatusReport(target);
    if (output === "json") out(`${JSON.stringify(report, null, 2)}\n`);
    else if (output === "yaml") out(stringify(report));
    else out(`${statusText(report).join("\n")}\n`);
    return 0;
  } catch (err) {
    throw explainKubeError(err, target.client) ?? err;
  } finally {
    target.client.close();
  }
}

export function main(argv: string[]): Promise<number> {
  return runStatus(argv);
}
