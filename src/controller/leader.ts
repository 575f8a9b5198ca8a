// Leader election through a coordination.k8s.io/v1 Lease, as client-go's leaderelection does:
// the holder renews `renewTime` every `renewMs`; another replica takes the Lease over once it has
// not been renewed for `leaseDurationSeconds`. Writes carry the resourceVersion read, so two
// replicas racing for an expired Lease cannot both win (the loser gets 409). Only the leader applies.
// Leadership is also bounded in time by this replica's own clock: it ends a safety margin before
// the Lease could expire since the last renewal that succeeded, whether or not a renewal request
// is still hanging, so a replica that cannot reach the API server stops applying before another
// one may acquire the Lease.
import { KubeApiError, type KubeClient } from "../infra/kube/client.js";
import type { Logger } from "./logger.js";

export interface LeaderOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds?: number;
  renewMs?: number;
  onStarted?: () => void;
  onStopped?: () => void;
  log?: Logger;
  now?: () => number;
}

function microTime(ms: number): string {
  return new Date(ms).toISOString().replace("Z", "000Z");
}

export class LeaderElector {
  private readonly client: KubeClient;
  private readonly opts: LeaderOptions;
  private leading = false;
  /** When the last successful acquire or renewal was sent (the renewTime it wrote). */
  private renewedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private inFlight: Promise<void> = Promise.resolve();

  constructor(client: KubeClient, opts: LeaderOptions) {
    this.client = client;
    this.opts = opts;
  }

  /** True while this replica holds the Lease and its last renewal is recent enough. */
  get isLeader(): boolean {
    return this.leading && this.now() < this.validUntil();
  }

  /**
   * The end of this replica's leadership unless it renews: the lease duration after the last
   * renewal, less a fifth of it for clock skew between replicas.
   */
  validUntil(): number {
    return this.renewedAt + this.duration * 800;
  }

  private get duration(): number {
    return this.opts.leaseDurationSeconds ?? 15;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  private setLeading(value: boolean): void {
    if (value === this.leading) return;
    this.leading = value;
    this.opts.log?.info(
      {},
      value ? `became the leader (${this.opts.identity})` : "lost the leadership",
    );
    if (value) this.opts.onStarted?.();
    else this.opts.onStopped?.();
  }

  /** One attempt to acquire or renew; returns whether this replica leads. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const ref = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: this.opts.name, namespace: this.opts.namespace },
    };
    const now = this.now();
    const spec = {
      holderIdentity: this.opts.identity,
      leaseDurationSeconds: this.duration,
      renewTime: microTime(now),
    };
    try {
      const live = await this.client.get(ref);
      if (live === undefined) {
        const lease = {
          ...ref,
          spec: { ...spec, acquireTime: microTime(now), leaseTransitions: 0 },
        } as never;
        try {
          await this.client.create(lease);
        } catch (err) {
          if (!(err instanceof KubeApiError && err.status === 404)) throw err;
          // No namespace yet (a plain kubeconfig without the install bundle).
          await this.client.apply(
            { apiVersion: "v1", kind: "Namespace", metadata: { name: this.opts.namespace } },
            { fieldManager: "mcpfleet" },
          );
          await this.client.create(lease);
        }
        this.renewedAt = now;
        this.setLeading(true);
        return true;
      }
      const s = (live.spec ?? {}) as {
        holderIdentity?: string;
        renewTime?: string;
        leaseDurationSeconds?: number;
        leaseTransitions?: number;
        acquireTime?: string;
      };
      const mine = s.holderIdentity === this.opts.identity;
      const renewed = s.renewTime !== undefined ? Date.parse(s.renewTime) : 0;
      const expired =
        s.holderIdentity === undefined ||
        s.holderIdentity === "" ||
        now > renewed + (s.leaseDurationSeconds ?? this.duration) * 1000;
      if (!mine && !expired) {
        this.setLeading(false);
        return false;
      }
      await this.client.replace({
        ...ref,
        metadata: { ...ref.metadata, resourceVersion: live.metadata.resourceVersion },
        spec: {
          ...spec,
          acquireTime: mine ? s.acquireTime : microTime(now),
          leaseTransitions: (s.leaseTransitions ?? 0) + (mine ? 0 : 1),
        },
      });
      this.renewedAt = now;
      this.setLeading(true);
      return true;
    } catch (err) {
      if (err instanceof KubeApiError && (err.status === 409 || err.status === 404)) {
        this.setLeading(false);
        return false;
      }
      this.opts.log?.info({}, `lease: ${(err as Error).message}`);
      // Could not renew: past the lease's duration another replica may lead, so stop leading.
      if (this.leading) this.setLeading(false);
      return false;
    }
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const tick = () => {
      this.inFlight = this.tryAcquireOrRenew().then(() => undefined);
      void this.inFlight.finally(() => {
        if (this.running) this.timer = setTimeout(tick, this.opts.renewMs ?? 2000);
      });
    };
    tick();
  }

  /** Stops renewing; with `release`, gives the Lease up so another replica takes over at once. */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    this.running = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.inFlight;
    if (opts.release === true && this.leading) {
      const ref = {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: this.opts.name, namespace: this.opts.namespace },
      };
      try {
        const live = await this.client.get(ref);
        const s = (live?.spec ?? {}) as { holderIdentity?: string };
        if (live !== undefined && s.holderIdentity === this.opts.identity) {
          await this.client.replace({
            ...ref,
            metadata: { ...ref.metadata, resourceVersion: live.metadata.resourceVersion },
            spec: { ...(live.spec as object), holderIdentity: "", leaseDurationSeconds: 1 },
          });
        }
      } catch {
        /* the lease expires by itself */
      }
    }
    this.setLeading(false);
  }
}
