// What an apply would change against the live cluster, as a readable diff: each object's live
// state and its state after a server-side dry-run apply, both without the fields the server
// populates (managedFields, resourceVersion, uid, generation, timestamps, status), so defaulted
// fields the repository does not set appear on both sides and never as a change. Objects that do
// not exist yet are shown whole; objects prune would delete are listed as deletions.
import { stringify } from "yaml";
import type { KubeObject } from "../synth/model.js";
import {
  appliedByUs,
  entryRef,
  ownerOfPlanned,
  pruneCandidates,
  withOwner,
} from "./cluster-plan.js";
import type { InventoryStore } from "./inventory.js";
import { KubeApiError, type KubeClient, type LiveObject } from "../infra/kube/client.js";
import { type RevisionPlan, objectName } from "./revision-plan.js";

export interface ObjectDiff {
  object: string;
  action: "create" | "change" | "delete";
  diff: string;
}

const SERVER_METADATA = [
  "managedFields",
  "resourceVersion",
  "uid",
  "generation",
  "creationTimestamp",
  "selfLink",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
];

/** A copy without server-populated fields. */
export function normalize(o: Record<string, unknown>): Record<string, unknown> {
  const { status: _s, ...rest } = o;
  void _s;
  const metadata = { ...(rest.metadata as Record<string, unknown>) };
  for (const k of SERVER_METADATA) delete metadata[k];
  const annotations = metadata.annotations as Record<string, string> | undefined;
  if (annotations !== undefined) {
    const a = { ...annotations };
    delete a["kubectl.kubernetes.io/last-applied-configuration"];
    if (Object.keys(a).length === 0) delete metadata.annotations;
    else metadata.annotations = a;
  }
  return { ...rest, metadata };
}

/** Line diff (longest common subsequence) in unified format with `context` lines around changes. */
export function unifiedDiff(a: string, b: string, label: string, context = 3): string {
  const x = a === "" ? [] : a.replace(/\n$/, "").split("\n");
  const y = b === "" ? [] : b.replace(/\n$/, "").split("\n");
  const n = x.length;
  const m = y.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] =
        x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const ops: { t: " " | "-" | "+"; line: string; ai: number; bi: number }[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      ops.push({ t: " ", line: x[i]!, ai: i++, bi: j++ });
    } else if (j < m && (i >= n || lcs[i]![j + 1]! > lcs[i + 1]![j]!)) {
      ops.push({ t: "+", line: y[j]!, ai: i, bi: j++ });
    } else {
      ops.push({ t: "-", line: x[i]!, ai: i++, bi: j });
    }
  }
  const out: string[] = [`--- live/${label}`, `+++ merged/${label}`];
  let k = 0;
  while (k < ops.length) {
    if (ops[k]!.t === " ") {
      k++;
      continue;
    }
    const start = Math.max(0, k - context);
    let end = k;
    while (end < ops.length) {
      if (ops[end]!.t !== " ") {
        end++;
        continue;
      }
      let run = 0;
      while (end + run < ops.length && ops[end + run]!.t === " ") run++;
      if (end + run >= ops.length || run > 2 * context) {
        end = Math.min(ops.length, end + context);
        break;
      }
      end += run;
    }
    const hunk = ops.slice(start, end);
    const aStart = hunk[0]!.ai;
    const bStart = hunk[0]!.bi;
    const aLen = hunk.filter((o) => o.t !== "+").length;
    const bLen = hunk.filter((o) => o.t !== "-").length;
    out.push(
      `@@ -${aLen === 0 ? aStart : aStart + 1},${aLen} +${bLen === 0 ? bStart : bStart + 1},${bLen} @@`,
    );
    for (const o of hunk) out.push(`${o.t}${o.line}`);
    k = end;
  }
  return `${out.join("\n")}\n`;
}

const yaml = (o: unknown) => stringify(o, { lineWidth: 0, sortMapEntries: true });

/**
 * The diff of every object of a plan as the cluster target sends it (clusterPlan) against the
 * cluster, and what prune would delete.
 */
export async function diffPlan(
  client: KubeClient,
  plan: RevisionPlan,
  opts: { fieldManager: string; prune: boolean; inventory: InventoryStore },
): Promise<ObjectDiff[]> {
  const out: ObjectDiff[] = [];
  const uids = new Map<string, { apiVersion: string; kind: string; name: string; uid: string }>();
  for (const p of plan.objects) {
    let live: LiveObject | undefined;
    try {
      live = await client.get(p.object);
    } catch (err) {
      // A kind the cluster does not serve yet (its CRD is part of this apply).
      if (!(err instanceof KubeApiError && err.status === 404)) throw err;
    }
    if (live?.metadata.uid !== undefined && (p.stage === "config" || p.stage === "resources")) {
      uids.set(p.key, {
        apiVersion: p.object.apiVersion,
        kind: p.object.kind,
        name: p.object.metadata.name,
        uid: live.metadata.uid,
      });
    }
    const desired: KubeObject = withOwner(
      p.object,
      ownerOfPlanned(p, (key) => uids.get(key)),
    );
    const label = objectName(p.object).replace(" ", "/");
    if (live === undefined) {
      out.push({
        object: objectName(p.object),
        action: "create",
        diff: unifiedDiff("", yaml(normalize(desired)), label),
      });
      continue;
    }
    let merged: LiveObject;
    try {
      merged = await client.apply(desired, { fieldManager: opts.fieldManager, dryRun: true });
    } catch (err) {
      if (!(err instanceof KubeApiError)) throw err;
      out.push({
        object: objectName(p.object),
        action: "change",
        diff: `# ${objectName(p.object)}: the apply would fail: ${err.message}\n`,
      });
      continue;
    }
    const before = yaml(normalize(live));
    const after = yaml(normalize(merged));
    if (before !== after) {
      out.push({
        object: objectName(p.object),
        action: "change",
        diff: unifiedDiff(before, after, label),
      });
    }
  }
  if (opts.prune) {
    const previous = (await opts.inventory.read())?.entries ?? new Map();
    for (const [, e] of pruneCandidates(previous, plan.keys)) {
      const ref = entryRef(e);
      const live = await client.get(ref);
      if (live === undefined || !appliedByUs(live, opts.fieldManager)) continue;
      const name = objectName(ref);
      out.push({
        object: name,
        action: "delete",
        diff: unifiedDiff(yaml(normalize(live)), "", name.replace(" ", "/")),
      });
    }
  }
  return out;
}
