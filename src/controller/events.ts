// Warning Events for the controller's own failures (a Git fetch that fails, an invalid revision,
// an apply that fails) and for what an applied revision's rendering warned of, attached to its inventory ConfigMap: a stable object in its namespace
// that `kubectl describe configmap mcpfleet-inventory` shows them on. The inventory need not
// exist yet (an Event may name an object that does not); the namespace is created when missing.
// The same failure is recorded once, not on every poll: a key (reason, revision, code) already
// recorded is skipped until a sync succeeds, after which a recurrence is recorded again.
import { warningEvent } from "./cluster-status.js";
import type { KubeClient } from "../infra/kube/client.js";

export interface WarningSink {
  /** Records `reason`/`message` unless `key` was already recorded since the last success. */
  warning(key: string, reason: string, message: string): Promise<void>;
  /** A sync succeeded: failures seen before are recorded again when they recur. */
  clearWarnings(): void;
}

export class EventRecorder implements WarningSink {
  private readonly client: KubeClient;
  private readonly involved: { apiVersion: string; kind: string; name: string; namespace: string };
  private readonly fieldManager: string;
  private readonly recorded = new Set<string>();

  constructor(client: KubeClient, opts: { name: string; namespace: string; fieldManager: string }) {
    this.client = client;
    this.fieldManager = opts.fieldManager;
    this.involved = {
      apiVersion: "v1",
      kind: "ConfigMap",
      name: opts.name,
      namespace: opts.namespace,
    };
  }

  async warning(key: string, reason: string, message: string): Promise<void> {
    if (this.recorded.has(key)) return;
    this.recorded.add(key);
    const namespace = this.involved.namespace;
    // A first failure (the Git server down at start) may come before the namespace exists.
    try {
      const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } };
      if ((await this.client.get(ns)) === undefined) {
        await this.client.apply(ns, { fieldManager: this.fieldManager });
      }
    } catch {
      // Not allowed to read or create namespaces, or the API is down: the Event is best effort.
    }
    await warningEvent(this.client, this.involved, reason, message, namespace);
  }

  clearWarnings(): void {
    this.recorded.clear();
  }
}
