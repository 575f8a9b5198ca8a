// enforceServers at apply time. Before a revision's objects are applied, each MCPServer in a
// namespace with an enforcing MCPRegistry is judged against the catalogs of the namespace's
// registries (image-catalogs.ts); the workloads of one whose image is not listed are withheld
// (and deleted when an earlier revision applied them), its status says Failed with
// ImageValidated=False, and a Warning Event names the image. Verdicts are taken again whenever a
// catalog is due to be read again, so an image added to a catalog, or enforcement turned off,
// lets the server run at the next reconcile without a new commit.
import { type Resource, ResourceSet } from "../synth/model.js";
import type { Status } from "../synth/status.js";
import { decideImage, type RegistryListing } from "../registry/images/policy.js";
import type { Applier, ApplyOptions, ApplyResult } from "./applier.js";
import { APPLIED_BY } from "./cluster-plan.js";
import { warningEvent } from "./cluster-status.js";
import { type ConditionInput, conditionsOf, patchCondition, setCondition } from "./conditions.js";
import { type CatalogReaderOptions, RegistryCatalogs } from "./image-catalogs.js";
import type { Revision } from "../infra/git/source.js";
import type { InventoryStore } from "./inventory.js";
import type { KubeClient } from "../infra/kube/client.js";
import type { KubeObject } from "../synth/model.js";
import { type RevisionPlan, objectKey, resourceKey, withoutOwnedBy } from "./revision-plan.js";

export const IMAGE_CONDITION = "ImageValidated";

export interface ImageVerdict {
  allowed: boolean;
  image: string;
  reason: "ImageListed" | "ImageNotListed" | "RegistryUnavailable";
  message: string;
}

/** Verdicts by resource key, for the MCPServers of namespaces that enforce. */
export type Verdicts = ReadonlyMap<string, ImageVerdict>;

function labelsOf(r: Resource): Record<string, string> {
  return (r.metadata as { labels?: Record<string, string> }).labels ?? {};
}

/** Judges every MCPServer of the resources; namespaces without enforcement give no verdict. */
export async function judgeImages(
  resources: readonly Resource[],
  catalogs: RegistryCatalogs,
): Promise<Map<string, ImageVerdict>> {
  const set = new ResourceSet(resources);
  const verdicts = new Map<string, ImageVerdict>();
  for (const namespace of set.namespaces()) {
    const registries = set.list("MCPRegistry").filter((r) => r.metadata.namespace === namespace);
    if (!registries.some((r) => (r.spec as { enforceServers?: boolean }).enforceServers === true))
      continue;
    const listings: RegistryListing[] = await Promise.all(
      registries.map((r) => catalogs.listing(namespace, r.metadata.name, r.spec)),
    );
    const notes = listings.flatMap((l) => l.sources.flatMap((s) => (s.note ? [s.note] : [])));
    for (const server of set.list("MCPServer")) {
      if (server.metadata.namespace !== namespace) continue;
      const image = server.spec.image;
      const d = decideImage({ image, labels: labelsOf(server) }, listings);
      if (d.kind === "unenforced") continue;
      if (d.kind === "listed") {
        const stale = d.notes.length > 0 ? `; ${d.notes.join("; ")}` : "";
        verdicts.set(resourceKey(server), {
          allowed: true,
          image,
          reason: "ImageListed",
          message: `image "${image}" is listed by MCPRegistry "${d.registry}" (source "${d.source}", entry "${d.entry}")${stale}`,
        });
        continue;
      }
      const unread = d.unknown.length > 0 ? `; not read: ${d.unknown.join("; ")}` : "";
      const stale = notes.length > 0 ? `; ${notes.join("; ")}` : "";
      verdicts.set(resourceKey(server), {
        allowed: false,
        image,
        reason: d.unknown.length > 0 ? "RegistryUnavailable" : "ImageNotListed",
        message: `${d.message}${unread}${stale}`,
      });
    }
  }
  return verdicts;
}

/** A resource's computed status with its image verdict: Failed while the image is refused. */
export function withImageVerdict(status: Status, verdict: ImageVerdict | undefined): Status {
  if (verdict === undefined) return status;
  const image: ConditionInput = {
    type: IMAGE_CONDITION,
    status: verdict.allowed ? "True" : "False",
    reason: verdict.reason,
    message: verdict.message,
  };
  const conditions = setCondition(conditionsOf(status), image);
  if (verdict.allowed) return { ...status, conditions };
  return {
    ...status,
    phase: "Failed",
    message: verdict.message,
    conditions: patchCondition(conditions, "Ready", {
      status: "False",
      reason: verdict.reason,
      message: verdict.message,
    }),
  };
}

/** What the image policy needs of the target it wraps (the cluster target). */
export interface PolicyTarget extends Applier {
  status: { overlay?: (r: Resource, status: Status) => Status };
  inventory: Pick<InventoryStore, "read" | "write">;
}

export interface ImagePolicyOptions extends CatalogReaderOptions {
  fieldManager: string;
  /** Told of each refusal (`server`: `MCPServer namespace/name`), dry runs included. */
  onRefused?: (server: string, verdict: ImageVerdict) => void;
}

/**
 * A target that applies through `inner` what enforceServers admits. It withholds the objects
 * rendered for refused MCPServers, deletes those an earlier revision applied, records one Warning
 * Event per refusal, and puts the verdicts into the status `inner` writes.
 */
export class ImagePolicyApplier implements Applier {
  readonly target: string;
  readonly sameTreeIsNoop: boolean | undefined;
  private readonly inner: PolicyTarget;
  private readonly client: KubeClient;
  private readonly opts: ImagePolicyOptions;
  private readonly catalogs: RegistryCatalogs;
  private verdicts: Verdicts = new Map();
  /** Refusals recorded as Events, by resource key: the message recorded. */
  private readonly recorded = new Map<string, string>();
  private last: { plan: RevisionPlan; revision: Revision; options: ApplyOptions } | undefined;

  constructor(inner: PolicyTarget, client: KubeClient, opts: ImagePolicyOptions) {
    this.inner = inner;
    this.client = client;
    this.opts = opts;
    this.target = inner.target;
    this.sameTreeIsNoop = inner.sameTreeIsNoop;
    this.catalogs = new RegistryCatalogs(client, opts);
    inner.status.overlay = (r, status) =>
      withImageVerdict(status, this.verdicts.get(resourceKey(r)));
  }

  get warnings() {
    return this.inner.warnings;
  }

  async notApplied(reason: string, message: string): Promise<void> {
    await this.inner.notApplied?.(reason, message);
  }

  async apply(
    plan: RevisionPlan,
    revision: Revision,
    options: ApplyOptions = {},
  ): Promise<ApplyResult> {
    const verdicts = await judgeImages(plan.resources, this.catalogs);
    const { admitted, withheld } = withholdRefused(plan, verdicts);
    const dryRun = options.dryRun === true;
    if (!dryRun) this.verdicts = verdicts;
    const result = await this.inner.apply(admitted, revision, options);
    for (const r of plan.resources) {
      const v = verdicts.get(resourceKey(r));
      if (v?.allowed === false)
        this.opts.onRefused?.(`${r.kind} ${r.metadata.namespace}/${r.metadata.name}`, v);
    }
    if (dryRun) return result;
    this.last = { plan, revision, options };
    await this.remove(withheld);
    await this.record(verdicts, plan.resources);
    return result;
  }

  /**
   * Between revisions: when a catalog is due to be read again, the verdicts are taken again, and
   * a change applies the last revision anew; otherwise the target refreshes its status.
   */
  async refreshStatus(): Promise<number> {
    const last = this.last;
    if (last !== undefined && this.catalogs.due()) {
      const next = await judgeImages(last.plan.resources, this.catalogs);
      if (!sameVerdicts(next, this.verdicts)) {
        const result = await this.apply(last.plan, last.revision, {
          ...last.options,
          resend: false,
        });
        return result.statuses ?? 0;
      }
    }
    return (await this.inner.refreshStatus?.()) ?? 0;
  }

  /**
   * Deletes the withheld objects an earlier revision applied (ours only; without prune the
   * target keeps them), and drops them from the inventory so that they are sent again once the
   * image is admitted.
   */
  private async remove(withheld: readonly KubeObject[]): Promise<void> {
    if (withheld.length === 0) return;
    for (const o of withheld) {
      const live = await this.client.get(o);
      if (live?.metadata.annotations?.[APPLIED_BY] === this.opts.fieldManager) {
        await this.client.delete(o);
      }
    }
    const inventory = await this.inner.inventory.read();
    if (inventory === undefined) return;
    const before = inventory.entries.size;
    for (const o of withheld) inventory.entries.delete(objectKey(o));
    if (inventory.entries.size !== before) await this.inner.inventory.write(inventory);
  }

  /** One Warning Event per refusal (again when its message changes); forgets admitted ones. */
  private async record(verdicts: Verdicts, resources: readonly Resource[]): Promise<void> {
    const byKey = new Map(resources.map((r) => [resourceKey(r), r]));
    for (const [key, v] of verdicts) {
      if (v.allowed) {
        this.recorded.delete(key);
        continue;
      }
      const r = byKey.get(key);
      if (r === undefined || this.recorded.get(key) === v.message) continue;
      this.recorded.set(key, v.message);
      const ref = {
        apiVersion: r.apiVersion,
        kind: r.kind,
        metadata: { name: r.metadata.name, namespace: r.metadata.namespace },
      };
      const uid = (await this.client.get(ref))?.metadata.uid;
      await warningEvent(
        this.client,
        { ...ref.metadata, apiVersion: r.apiVersion, kind: r.kind, ...(uid ? { uid } : {}) },
        v.reason,
        v.message,
        r.metadata.namespace,
      );
    }
    for (const key of [...this.recorded.keys()]) if (!verdicts.has(key)) this.recorded.delete(key);
  }
}

/**
 * The plan without the workloads of the MCPServers whose image is refused (the resources
 * themselves stay, to carry the verdict in their status), and the workloads withheld.
 */
export function withholdRefused(
  plan: RevisionPlan,
  verdicts: Verdicts,
): { admitted: RevisionPlan; withheld: KubeObject[] } {
  const refused = new Set([...verdicts].filter(([, v]) => !v.allowed).map(([k]) => k));
  const withheld = plan.objects.filter((p) => p.owner !== undefined && refused.has(p.owner));
  return { admitted: withoutOwnedBy(plan, refused), withheld: withheld.map((p) => p.object) };
}

function sameVerdicts(a: Verdicts, b: Verdicts): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (w === undefined || w.allowed !== v.allowed || w.message !== v.message) return false;
  }
  return true;
}

/** The cluster target with enforceServers in force (what `mcpfleet controller` and `apply` use). */
export function withImagePolicy(
  client: KubeClient,
  fieldManager: string,
  inner: PolicyTarget,
  onRefused?: ImagePolicyOptions["onRefused"],
): ImagePolicyApplier {
  return new ImagePolicyApplier(inner, client, {
    fieldManager,
    ...(onRefused !== undefined ? { onRefused } : {}),
  });
}
