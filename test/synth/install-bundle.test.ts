import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseControllerArgs } from "../../src/cli/controller.js";
import { projectVersion } from "../../src/project.js";
import { KINDS } from "../../src/schema/kinds.js";
import {
  CONTROLLER_NAME,
  controllerArgs,
  controllerRules,
  crdObjects,
  INSTALL_NAMESPACE,
  installFiles,
  installObjects,
} from "../../src/synth/install.js";
import { checkObjects } from "../../src/synth/kube-check.js";
import { resourcesOfText } from "../../src/synth/load.js";
import type { KubeObject } from "../../src/synth/model.js";
import { synthesize } from "../../src/synth/render.js";
import { toYaml } from "../../src/synth/yaml.js";

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

function find(objects: KubeObject[], kind: string, name: string): KubeObject {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (o === undefined) throw new Error(`no ${kind}/${name}`);
  return o;
}

function allows(rules: Rule[], group: string, resource: string, verb: string): boolean {
  return rules.some(
    (r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb),
  );
}

/** Plural resource name of a rendered object's kind (the kinds synth renders). */
const PLURALS: Record<string, [string, string]> = {
  Deployment: ["apps", "deployments"],
  StatefulSet: ["apps", "statefulsets"],
  Service: ["", "services"],
  ServiceAccount: ["", "serviceaccounts"],
  ConfigMap: ["", "configmaps"],
  Secret: ["", "secrets"],
  Role: ["rbac.authorization.k8s.io", "roles"],
  RoleBinding: ["rbac.authorization.k8s.io", "rolebindings"],
};

const objects = installObjects();
const rules = (find(objects, "ClusterRole", CONTROLLER_NAME).rules ?? []) as Rule[];

describe("install bundle", () => {
  it("passes the Kubernetes checks", () => {
    expect(checkObjects(objects)).toEqual([]);
  });

  it("holds a CRD for every kind, as generated in crds/", () => {
    const crds = objects.filter((o) => o.kind === "CustomResourceDefinition");
    expect(crds).toHaveLength(KINDS.length);
    const kinds = crds.map((c) => (c.spec as { names: { kind: string } }).names.kind).sort();
    expect(kinds).toEqual([...KINDS].sort());
    const onDisk = readdirSync(join(import.meta.dirname, "../../crds")).filter((f) =>
      f.endsWith(".yaml"),
    );
    for (const f of onDisk) {
      const crd = parse(
        readFileSync(join(import.meta.dirname, "../../crds", f), "utf8"),
      ) as KubeObject;
      expect(crds).toContainEqual(crd);
    }
  });

  it("puts the Namespace and the CRDs before everything else", () => {
    const kinds = objects.map((o) => o.kind);
    expect(kinds[0]).toBe("Namespace");
    const lastCrd = kinds.lastIndexOf("CustomResourceDefinition");
    expect(kinds.slice(1, lastCrd + 1).every((k) => k === "CustomResourceDefinition")).toBe(true);
  });

  it("runs `mcpfleet controller` from the release's image in mcpfleet-system", () => {
    const dep = find(objects, "Deployment", CONTROLLER_NAME);
    expect(dep.metadata.namespace).toBe(INSTALL_NAMESPACE);
    const spec = dep.spec as {
      template: {
        spec: { serviceAccountName: string; containers: { image: string; args: string[] }[] };
      };
    };
    const c = spec.template.spec.containers[0];
    expect(c?.image).toBe(`ghcr.io/mcpfleet/mcpfleet:${projectVersion()}`);
    expect(c?.args[0]).toBe("controller");
    expect(spec.template.spec.serviceAccountName).toBe(CONTROLLER_NAME);
    expect(find(objects, "ServiceAccount", CONTROLLER_NAME).metadata.namespace).toBe(
      INSTALL_NAMESPACE,
    );
    expect(find(objects, "ClusterRoleBinding", CONTROLLER_NAME).subjects).toEqual([
      { kind: "ServiceAccount", name: CONTROLLER_NAME, namespace: INSTALL_NAMESPACE },
    ]);
  });

  it("follows the repository named in the ConfigMap mcpfleet-controller by default, pruning", () => {
    const c = (
      find(objects, "Deployment", CONTROLLER_NAME).spec as {
        template: { spec: { containers: { args: string[]; env: unknown[] }[] } };
      }
    ).template.spec.containers[0];
    expect(c?.args).toEqual([
      "controller",
      "--repo=$(MCPFLEET_REPO)",
      "--target=cluster",
      "--prune",
      "--cache-dir=/var/lib/mcpfleet",
      "--listen=:8080",
    ]);
    expect(c?.env).toContainEqual({
      name: "MCPFLEET_REPO",
      valueFrom: { configMapKeyRef: { name: "mcpfleet-controller", key: "repo" } },
    });
  });

  it("takes the image, namespace, replicas, repository, token and extra flags as options", () => {
    const custom = installObjects({
      image: "registry.internal/mcpfleet:dev",
      namespace: "platform",
      replicas: 2,
      repo: "https://git.example.com/fleet.git",
      branch: "main",
      path: "clusters/prod",
      tokenSecret: "git-token",
      extraArgs: ["--interval=5m"],
    });
    const dep = find(custom, "Deployment", CONTROLLER_NAME);
    const spec = dep.spec as {
      replicas: number;
      template: {
        spec: {
          containers: {
            image: string;
            args: string[];
            env: { name: string }[];
            volumeMounts: unknown[];
          }[];
          volumes: unknown[];
        };
      };
    };
    const c = spec.template.spec.containers[0];
    expect(dep.metadata.namespace).toBe("platform");
    expect(spec.replicas).toBe(2);
    expect(c?.image).toBe("registry.internal/mcpfleet:dev");
    expect(c?.args).toEqual([
      "controller",
      "--repo=https://git.example.com/fleet.git",
      "--branch=main",
      "--path=clusters/prod",
      "--token-file=/etc/mcpfleet/git/token",
      "--target=cluster",
      "--prune",
      "--cache-dir=/var/lib/mcpfleet",
      "--listen=:8080",
      "--interval=5m",
    ]);
    expect(c?.env.map((e) => e.name)).not.toContain("MCPFLEET_REPO");
    expect(c?.volumeMounts).toContainEqual({
      name: "git-token",
      mountPath: "/etc/mcpfleet/git",
      readOnly: true,
    });
    expect(spec.template.spec.volumes).toContainEqual({
      name: "git-token",
      secret: { secretName: "git-token", items: [{ key: "token", path: "token" }] },
    });
    expect(find(custom, "Namespace", "platform")).toBeDefined();
    expect(checkObjects(custom)).toEqual([]);
  });

  it("passes flags the controller command accepts", () => {
    const args = controllerArgs({
      repo: "https://git.example.com/fleet.git",
      branch: "main",
      path: "clusters/prod",
      tokenSecret: "git-token",
    });
    const config = parseControllerArgs(args.slice(1));
    expect(config?.repo).toBe("https://git.example.com/fleet.git");
    expect(config?.ref).toEqual({ branch: "main" });
    expect(config?.path).toBe("clusters/prod");
    expect(config?.target).toEqual(parseControllerArgs(["--repo=x", "--target=cluster"])?.target);
    expect(config?.cluster.prune).toBe(true);
    expect(config?.cacheDir).toBe("/var/lib/mcpfleet");
    // Kubernetes expands $(MCPFLEET_REPO) before the process sees it.
    const fromConfigMap = controllerArgs().map((a) =>
      a.replace("$(MCPFLEET_REPO)", "https://git.example.com/fleet.git"),
    );
    expect(parseControllerArgs(fromConfigMap.slice(1))?.repo).toBe(
      "https://git.example.com/fleet.git",
    );
  });

  it("grants no wildcard and no cluster-wide RBAC writes", () => {
    for (const r of rules) {
      expect(r.apiGroups).not.toContain("*");
      expect(r.resources).not.toContain("*");
      expect(r.verbs).not.toContain("*");
      expect(r.verbs).not.toContain("escalate");
      expect(r.verbs).not.toContain("bind");
    }
    expect(allows(rules, "rbac.authorization.k8s.io", "clusterroles", "create")).toBe(false);
    expect(allows(rules, "rbac.authorization.k8s.io", "clusterrolebindings", "create")).toBe(false);
    expect(allows(rules, "apiextensions.k8s.io", "customresourcedefinitions", "delete")).toBe(
      false,
    );
  });

  it("lets the controller apply, prune and write status of every kind of ours", () => {
    const plurals = crdObjects().map((c) => (c.spec as { names: { plural: string } }).names.plural);
    for (const p of plurals) {
      // Server-side apply creates and patches; prune reads the marker, then deletes.
      for (const verb of ["get", "create", "patch", "delete"]) {
        expect(allows(rules, "toolhive.stacklok.dev", p, verb)).toBe(true);
      }
      expect(allows(rules, "toolhive.stacklok.dev", `${p}/status`, "patch")).toBe(true);
    }
    expect(controllerRules(crdObjects())).toEqual(rules);
  });

  describe("against what synth renders for the examples", () => {
    const dir = join(import.meta.dirname, "../../examples/resources");
    const resources = readdirSync(dir)
      .filter((f) => f.endsWith(".yaml"))
      .sort()
      .flatMap((f) => resourcesOfText(readFileSync(join(dir, f), "utf8"), "default"));
    const rendered = synthesize(resources).objects;

    it("may apply and prune every kind of object synth renders", () => {
      expect(rendered.length).toBeGreaterThan(0);
      for (const kind of new Set(rendered.map((o) => o.kind))) {
        const plural = PLURALS[kind];
        expect({ kind, known: plural !== undefined }).toEqual({ kind, known: true });
        if (plural === undefined) continue;
        for (const verb of ["get", "create", "patch", "delete"]) {
          expect({ kind, verb, ok: allows(rules, plural[0], plural[1], verb) }).toEqual({
            kind,
            verb,
            ok: true,
          });
        }
      }
    });

    it("holds every permission of the Roles it renders (Kubernetes refuses to grant more)", () => {
      const roles = rendered.filter((o) => o.kind === "Role");
      expect(roles.length).toBeGreaterThan(0);
      for (const role of roles) {
        for (const r of (role.rules ?? []) as Rule[]) {
          for (const g of r.apiGroups)
            for (const res of r.resources)
              for (const v of r.verbs)
                expect({
                  role: role.metadata.name,
                  g,
                  res,
                  v,
                  ok: allows(rules, g, res, v),
                }).toEqual({
                  role: role.metadata.name,
                  g,
                  res,
                  v,
                  ok: true,
                });
        }
      }
    });
  });

  it("splits into files kubectl applies CRDs first", () => {
    const files = installFiles();
    expect([...files.keys()]).toEqual(["00-crds.yaml", "01-controller.yaml"]);
    expect(files.get("00-crds.yaml")?.every((o) => o.kind === "CustomResourceDefinition")).toBe(
      true,
    );
    expect(files.get("01-controller.yaml")?.[0]?.kind).toBe("Namespace");
    const total = [...files.values()].reduce((n, f) => n + f.length, 0);
    expect(total).toBe(objects.length);
  });

  it("is deterministic", () => {
    expect(toYaml(installObjects())).toBe(toYaml(objects));
  });
});
