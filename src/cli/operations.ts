// `mcpfleet suspend`, `mcpfleet resume` and `mcpfleet reconcile`: the GitOps controller's day-2
// requests, set as annotations on its inventory ConfigMap (as `flux suspend`, `flux resume` and
// `flux reconcile` set a Kustomization's spec.suspend and requestedAt annotation). resume and
// reconcile wait, as Flux's do, until the controller has answered with a sync, and say how it went.
import { McpfleetError } from "../errors.js";
import { inventoryName } from "../controller/inventory.js";
import { explainKubeError } from "../infra/kube/explain-error.js";
import {
  type ControllerObject,
  type RecordedStatus,
  requestReconcile,
  resume,
  suspend,
  waitHandled,
} from "../controller/operations.js";
import { parseInterval } from "../controller/schedule.js";
import { parseCommandArgs, usageError } from "./args.js";
import { CONNECTION_ARGS, CONNECTION_OPTIONS, connectController } from "./cluster-options.js";
import { type Io, stdio } from "./io.js";

const WAIT_OPTIONS = `      --timeout DURATION       how long to wait for the controller's sync (default 5m)
      --no-wait                return once the request is set`;

const USAGES: Record<Operation, string> = {
  suspend: `Usage: mcpfleet suspend [options]

Suspends the GitOps controller: it skips every sync (polls, webhooks, reconcile requests) until
mcpfleet resume; what it applied stays in place. A sync already running finishes. Sets the
annotation mcpfleet.dev/suspend: "true" on its inventory ConfigMap. Exit 0 set, 1 no cluster or
no controller, 2 usage.

${CONNECTION_OPTIONS}
  -h, --help                   show this help`,
  resume: `Usage: mcpfleet resume [options]

Resumes a suspended GitOps controller and asks it for a sync at once, then waits for that sync:
removes the annotation mcpfleet.dev/suspend and sets reconcile.mcpfleet.dev/requestedAt on its
inventory ConfigMap. Exit 0 synced, 1 the sync failed, timed out, or no cluster or controller,
2 usage.

${WAIT_OPTIONS}
${CONNECTION_OPTIONS}
  -h, --help                   show this help`,
  reconcile: `Usage: mcpfleet reconcile [options]

Asks the GitOps controller to sync now (fetch the watched ref, and validate and apply it even
when it has not moved) instead of at its next poll, then waits for that sync: sets the annotation
reconcile.mcpfleet.dev/requestedAt on its inventory ConfigMap. Refused while suspended. Exit 0
synced, 1 the sync failed, timed out, suspended, or no cluster or controller, 2 usage.

${WAIT_OPTIONS}
${CONNECTION_OPTIONS}
  -h, --help                   show this help`,
};

export type Operation = "suspend" | "resume" | "reconcile";

function where(target: ControllerObject): string {
  return `the controller of ${inventoryName(target.fieldManager)} in namespace ${target.namespace}`;
}

/** The result of the sync that answered a request: a line, or the failure it recorded. */
function answered(target: ControllerObject, recorded: RecordedStatus): string {
  const error = recorded.lastError;
  if (error !== null) {
    throw new McpfleetError(
      "ERR_SYNC_FAILED",
      `${where(target)} synced, and the sync failed at ${error.stage}: ${error.message} (${error.code})`,
    );
  }
  return `${where(target)} synced: revision ${recorded.lastAppliedRevision ?? "(none)"} of ${recorded.ref} is applied`;
}

export async function runOperation(
  operation: Operation,
  argv: string[],
  io: Io = stdio,
): Promise<number> {
  const waits = operation !== "suspend";
  const parsed = parseCommandArgs(operation, {
    args: argv,
    allowPositionals: false,
    strict: true,
    options: {
      ...CONNECTION_ARGS,
      ...(waits
        ? {
            timeout: { type: "string", default: "5m" },
            "no-wait": { type: "boolean", default: false },
          }
        : {}),
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const v = parsed.values as typeof parsed.values & { timeout?: string; "no-wait"?: boolean };
  if (v.help) {
    console.log(USAGES[operation]);
    return 0;
  }
  let timeoutMs = 0;
  if (waits) {
    try {
      timeoutMs = parseInterval(v.timeout ?? "5m", "--timeout");
    } catch (err) {
      throw usageError(operation, (err as Error).message);
    }
  }
  const target = connectController(operation, v);
  try {
    if (operation === "suspend") {
      await suspend(target);
      io.out(`${where(target)} is suspended: it skips syncs until mcpfleet resume`);
      return 0;
    }
    const at = operation === "resume" ? await resume(target) : await requestReconcile(target);
    io.out(
      `${operation === "resume" ? "resumed; " : ""}sync requested of ${where(target)} (requestedAt ${at})`,
    );
    if (v["no-wait"] === true) return 0;
    const recorded = await waitHandled(target, at, timeoutMs);
    if (recorded === undefined) {
      throw new McpfleetError(
        "ERR_RECONCILE_TIMEOUT",
        `${where(target)} did not answer the request within ${v.timeout ?? "5m"}; is it running, and does it lead? (mcpfleet status shows what it recorded)`,
      );
    }
    io.out(answered(target, recorded));
    return 0;
  } catch (err) {
    throw explainKubeError(err, target.client) ?? err;
  } finally {
    target.client.close();
  }
}

export const suspendMain = (argv: string[]) => runOperation("suspend", argv);
export const resumeMain = (argv: string[]) => runOperation("resume", argv);
export const reconcileMain = (argv: string[]) => runOperation("reconcile", argv);
