// What a container needs besides its configuration file, gathered while its configuration is
// resolved: environment variables read from Secrets, and ConfigMaps and Secrets mounted as files.
import { dnsLabel } from "./names.js";
import { type EnvVar, secretEnv } from "./pod.js";

const CONFIGMAP_DIR = "/etc/toolhive/configmaps";
const SECRET_DIR = "/etc/toolhive/secrets";

export interface KubeVolume {
  name: string;
  configMap?: { name: string };
  secret?: { secretName: string };
  [key: string]: unknown;
}

export interface KubeVolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
}

/**
 * What a container needs besides its configuration file: environment variables read from
 * Secrets, and ConfigMaps and Secrets mounted as files. Each is added once.
 */
export class PodExtras {
  readonly env: EnvVar[] = [];
  readonly volumes: KubeVolume[] = [];
  readonly mounts: KubeVolumeMount[] = [];
  private readonly envNames = new Set<string>();
  private readonly volumeNames = new Set<string>();

  private readonly providerNames = new Map<string, string>();

  /**
   * A Secret key the runner reads through its secrets provider (`environment`): the variable
   * `TOOLHIVE_SECRET_<name>` from the Secret, and `<name>` for the config to name. `<name>` is
   * the Secret's name, as the reference operator writes it; a second key of the same Secret
   * gets `<secret>-<key>`.
   */
  providerSecret(ref: { name: string; key: string }): string {
    const id = `${ref.name}/${ref.key}`;
    let name = this.providerNames.get(id);
    if (name === undefined) {
      const taken = new Set(this.providerNames.values());
      name = taken.has(ref.name) ? `${ref.name}-${ref.key}` : ref.name;
      this.providerNames.set(id, name);
      this.env.push(secretEnv(`TOOLHIVE_SECRET_${name}`, ref));
      this.envNames.add(`TOOLHIVE_SECRET_${name}`);
    }
    return name;
  }

  /** Sets `envName` from a Secret key; returns the variable's name for the config to name. */
  secretEnv(envName: string, ref: { name: string; key: string }): string {
    const name = envName.toUpperCase().replace(/[^A-Z0-9_]/g, "_");
    if (!this.envNames.has(name)) {
      this.envNames.add(name);
      this.env.push(secretEnv(name, ref));
    }
    return name;
  }

  private mount(volume: KubeVolume, mountPath: string): void {
    if (this.volumeNames.has(volume.name)) return;
    this.volumeNames.add(volume.name);
    this.volumes.push(volume);
    this.mounts.push({ name: volume.name, mountPath, readOnly: true });
  }

  /** Mounts a ConfigMap; returns the path of `key` in it. */
  configMapFile(configMap: string, key: string): string {
    const dir = `${CONFIGMAP_DIR}/${configMap}`;
    this.mount({ name: dnsLabel(`cm-${configMap}`), configMap: { name: configMap } }, dir);
    return `${dir}/${key}`;
  }

  /** Mounts a Secret; returns the path of `key` in it. */
  secretFile(secret: string, key: string): string {
    const dir = `${SECRET_DIR}/${secret}`;
    this.mount({ name: dnsLabel(`secret-${secret}`), secret: { secretName: secret } }, dir);
    return `${dir}/${key}`;
  }
}
