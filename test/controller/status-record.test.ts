// The status recorded on the inventory: bounded whatever the failure, and recorded cut short when
// the API server refuses the full form, so an older ready status never stays for a failure.
import { describe, expect, it } from "vitest";
import type { KubeClient, KubeObjectRef } from "../../src/infra/kube/client.js";
import { textLogger } from "../../src/controller/logger.js";
import { OperationRequests } from "../../src/controller/operation-requests.js";
import { STATUS_KEY } from "../../src/controller/operations.js";
import { ControllerStatus, MAX_ERROR_MESSAGE_BYTES } from "../../src/controller/status.js";

/** A client whose applies of more than `limit` bytes are refused, as an API server's are. */
function refusingClient(limit: number) {
  const written: string[] = [];
  const client = {
    apply(obj: KubeObjectRef & { data?: Record<string, string> }) {
      const size = Buffer.byteLength(JSON.stringify(obj));
      if (size > limit) return Promise.reject(new Error(`request entity too large: ${size}`));
      written.push(obj.data?.[STATUS_KEY] ?? "");
      return Promise.resolve(obj);
    },
  } as unknown as KubeClient;
  return { client, written };
}

function failedStatus(message: string): ControllerStatus {
  const status = new ControllerStatus("branch main", "cluster");
  status.succeeded("a".repeat(40), { seconds: 1, applied: 1, pruned: 0 });
  status.attempted("b".repeat(40));
  status.failed({ stage: "apply", code: "ERR_KUBE_API", message, revision: "b".repeat(40) });
  return status;
}

describe("the recorded status", () => {
  it("is not ready while the last sync failed, though the process stays ready to serve", () => {
    const status = failedStatus("the API server refused it");
    expect(status.ready).toBe(true);
    expect(status.toJSON()).toMatchObject({ ready: false, lastAppliedRevision: "a".repeat(40) });
    expect(status.shortJSON()).toMatchObject({ ready: false });
    status.succeeded("b".repeat(40), { seconds: 1, applied: 1, pruned: 0 });
    expect(status.toJSON()).toMatchObject({ ready: true, lastError: null });
  });

  it("bounds any error message", () => {
    const status = failedStatus("x".repeat(5_000_000));
    expect(Buffer.byteLength(JSON.stringify(status.toJSON()))).toBeLessThan(
      MAX_ERROR_MESSAGE_BYTES + 1_000,
    );
  });

  it("is recorded cut short when the full form is refused, and the refusal is logged", async () => {
    const { client, written } = refusingClient(4_000);
    const lines: string[] = [];
    const status = failedStatus(`first line; ${"x".repeat(10_000)}`);
    const requests = new OperationRequests({
      client,
      namespace: "mcpfleet-system",
      fieldManager: "mcpfleet",
      status,
      log: textLogger((l) => lines.push(l)),
    });
    await requests.record();
    expect(written).toHaveLength(1);
    const recorded = JSON.parse(written[0]!) as Record<string, unknown>;
    expect(recorded).toMatchObject({
      lastAttemptedRevision: "b".repeat(40),
      lastError: { stage: "apply", code: "ERR_KUBE_API", revision: "b".repeat(40) },
    });
    const message = (recorded.lastError as { message: string }).message;
    expect(message.startsWith("first line; ")).toBe(true);
    expect(Buffer.byteLength(message)).toBeLessThanOrEqual(1_000);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^error cannot record the status on the inventory \(\d+ bytes\): request entity too large: \d+; recording it with the error message cut short$/,
    );
    // The same status is not written again on the next sync.
    await requests.record();
    expect(written).toHaveLength(1);
  });

  it("logs an error when even the short form is refused", async () => {
    const { client, written } = refusingClient(100);
    const lines: string[] = [];
    const requests = new OperationRequests({
      client,
      namespace: "mcpfleet-system",
      fieldManager: "mcpfleet",
      status: failedStatus("boom"),
      log: textLogger((l) => lines.push(l)),
    });
    await requests.record();
    expect(written).toEqual([]);
    expect(lines.at(-1)).toMatch(
      /^error cannot record the status on the inventory, even cut short: .*the status it shows is out of date$/,
    );
  });
});
