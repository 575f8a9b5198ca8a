// The virtual server's environment: every secret it needs becomes an env var read from a Secret
// key, named once per distinct purpose, so that the configuration names variables, never values.
import type * as T from "../../../../generated/types.js";

/** A container env var: a literal, or a key of a Secret, or a field of the pod. */
export interface ContainerEnv {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string };
    fieldRef?: { apiVersion: string; fieldPath: string };
  };
}

/** Collects env vars read from Secrets, one per distinct purpose, never their values. */
export class SecretEnv {
  readonly vars: ContainerEnv[] = [];
  private readonly byName = new Map<string, string>();

  /** Env var `name` from a Secret key; returns the name actually used. */
  secret(name: string, ref: T.SecretKeyRef): string {
    return this.add({ name, valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } } });
  }

  /** A literal env var (may use `$(OTHER)` of vars added before it). */
  literal(name: string, value: string): string {
    return this.add({ name, value });
  }

  private add(env: ContainerEnv): string {
    const signature = JSON.stringify(env.valueFrom ?? env.value);
    let name = env.name;
    for (let i = 2; ; i++) {
      const seen = this.byName.get(name);
      if (seen === undefined) break;
      if (seen === signature) return name;
      name = `${env.name}_${i}`;
    }
    this.byName.set(name, signature);
    this.vars.push({ ...env, name });
    return name;
  }
}

/** Upper-case env var fragment of a resource name: `github-token` → `GITHUB_TOKEN`. */
export function envFragment(name: string): string {
  return name
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .toUpperCase();
}
