// Helpers for driving the API server double with @kubernetes/client-node as production code does.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ApiException, type KubernetesObject } from "@kubernetes/client-node";
import { parse } from "yaml";
import { expect } from "vitest";

export interface StatusBody {
  kind: string;
  apiVersion: string;
  status: string;
  message: string;
  reason: string;
  code: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: { reason?: string; message: string; field?: string }[];
    retryAfterSeconds?: number;
  };
}

/** The Kubernetes Status of a failed client call (ApiException with code and JSON body). */
export async function failure(
  promise: Promise<unknown>,
): Promise<{ code: number; status: StatusBody; headers: Record<string, string> }> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiException);
    const e = err as ApiException<unknown>;
    const status = (typeof e.body === "string" ? JSON.parse(e.body) : e.body) as StatusBody;
    expect(status.kind).toBe("Status");
    expect(status.code).toBe(e.code);
    return { code: e.code, status, headers: e.headers };
  }
  throw new Error("expected the call to fail");
}

export function loadCrd(file: string): KubernetesObject & Record<string, unknown> {
  return parse(
    readFileSync(join(import.meta.dirname, "../../crds", file), "utf8"),
  ) as KubernetesObject & Record<string, unknown>;
}

export async function eventually<T>(probe: () => T | Promise<T>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      return await probe();
    } catch (err) {
      last = err;
      if (Date.now() > deadline) throw last;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

export function deployment(name: string, app = name, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: "default", labels: { app } },
    spec: {
      selector: { matchLabels: { app } },
      template: {
        metadata: { labels: { app } },
        spec: { containers: [{ name: "main", image: "nginx:1.27" }] },
      },
      ...extra,
    },
  };
}
