// The project's CRDs on a real API server: accepted (structural schemas, CEL rules within the
// server's cost budget), Established, stored as written, both versions served; every example
// resource is accepted by each version our validator accepts it in (and refused by the others),
// with no field dropped, and reads back the same through either; CEL rules reject what our own
// validator rejects, with the same message.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { KubeApiError, type KubeClient, type LiveObject } from "../../src/infra/kube/client.js";
import { defaultSchemaSet } from "../../src/schema/index.js";
import type { KubeObject } from "../../src/synth/model.js";
import { noCluster } from "../support/cluster/context.js";
import { ROOT, client, conditionTrue, installCrds, namespace } from "./helpers.js";

const GROUP = "toolhive.stacklok.dev";
const VERSIONS = ["v1alpha1", "v1beta1"];
const EXAMPLES = join(ROOT, "examples", "resources");
const examples = readdirSync(EXAMPLES)
  .filter((f) => f.endsWith(".yaml"))
  .sort()
  .map((f) => ({ file: f, doc: parse(readFileSync(join(EXAMPLES, f), "utf8")) as KubeObject }));

type Doc = KubeObject & { spec: Record<string, unknown> };

describe.skipIf(noCluster())("CRDs on the API server", () => {
  let c: KubeClient;
  let crds: KubeObject[];
  let ns: string;

  beforeAll(async () => {
    c = client();
    crds = await installCrds(c);
    ns = await namespace(c, "crds");
  });

  /**
   * Server-side apply with strict field validation: a field the schema does not know is an error
   * (400), not a warning and a silently pruned field.
   */
  const applyStrict = async (doc: KubeObject): Promise<LiveObject> => {
    const path = await c.path(doc.apiVersion, doc.kind, ns, doc.metadata.name);
    return c.request<LiveObject>("PATCH", path, {
      query: { fieldManager: "mcpfleet-test", fieldValidation: "Strict", force: "true" },
      body: { ...doc, metadata: { ...doc.metadata, namespace: ns } },
      contentType: "application/apply-patch+yaml",
    });
  };

  it("are all accepted, Established and stored as written", async () => {
    expect(crds).toHaveLength(12);
    for (const crd of crds) {
      const live = await c.get(crd);
      expect(conditionTrue(live, "NamesAccepted"), crd.metadata.name).toBe(true);
      expect(conditionTrue(live, "Established"), crd.metadata.name).toBe(true);
      const ours = crd.spec as { names: unknown; versions: { name: string; schema: unknown }[] };
      const theirs = live?.spec as { versions: { name: string; schema: unknown }[] };
      // Nothing in our schemas is dropped or rewritten by the server (unknown keywords would be).
      for (const v of ours.versions) {
        expect(
          theirs.versions.find((t) => t.name === v.name)?.schema,
          `${crd.metadata.name} ${v.name}`,
        ).toEqual(v.schema);
      }
      const status = live?.status as { acceptedNames: unknown; storedVersions: string[] };
      expect(status.acceptedNames).toMatchObject(ours.names as object);
      expect(status.storedVersions).toEqual(["v1alpha1"]);
    }
  });

  it("serves both versions in discovery", async () => {
    const kinds = crds.map((crd) => (crd.spec as { names: { kind: string } }).names.kind).sort();
    for (const version of VERSIONS) {
      const list = await c.request<{ resources: { name: string; kind: string }[] }>(
        "GET",
        `/apis/${GROUP}/${version}`,
      );
      const served = list.resources.filter((r) => !r.name.includes("/")).map((r) => r.kind);
      expect(served.sort(), version).toEqual(kinds);
      // Every kind has a status subresource.
      expect(list.resources.filter((r) => r.name.endsWith("/status"))).toHaveLength(kinds.length);
    }
  });

  it.each(examples)(
    "$file: accepted by each version our validator accepts it in, nothing pruned, same through either",
    async ({ doc }) => {
      let written = 0;
      for (const [write, read] of [
        ["v1alpha1", "v1beta1"],
        ["v1beta1", "v1alpha1"],
      ] as const) {
        const sent = { ...doc, apiVersion: `${GROUP}/${write}` } as Doc;
        // Some v1alpha1 forms are not v1beta1 (docs/compat.md): the server must agree.
        const issues = defaultSchemaSet().validateKind(doc.kind, structuredClone(sent));
        if (issues.length > 0) {
          const refused = await applyStrict(sent).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(refused, `${write}: ${issues.map((i) => i.message).join("; ")}`).toBeInstanceOf(
            KubeApiError,
          );
          continue;
        }
        const created = await applyStrict(sent);
        written++;
        expect(created.apiVersion).toBe(`${GROUP}/${write}`);
        const back = await c.get({
          ...sent,
          apiVersion: `${GROUP}/${read}`,
          metadata: { name: doc.metadata.name, namespace: ns },
        });
        expect(back?.apiVersion).toBe(`${GROUP}/${read}`);
        // Schema defaults may add fields; none of ours is lost or changed.
        expect(back?.spec).toMatchObject(sent.spec);
        expect(back?.spec).toEqual(created.spec);
        await c.delete({ ...sent, metadata: { name: doc.metadata.name, namespace: ns } });
      }
      // Every example is valid in the version it is written in.
      expect(written).toBeGreaterThan(0);
    },
  );

  /** Edits of examples that break one CEL rule each. */
  const celCases: { name: string; file: string; edit: (spec: Record<string, unknown>) => void }[] =
    [
      {
        name: "MCPServer: a builtin permission profile that does not exist",
        file: "mcpserver-github.yaml",
        edit: (spec) => (spec.permissionProfile = { type: "builtin", name: "bogus" }),
      },
      {
        name: "MCPOIDCConfig: an http issuer without insecureAllowHTTP",
        file: "mcpoidcconfig-corp-oidc.yaml",
        edit: (spec) =>
          ((spec.inline as Record<string, unknown>).issuer = "http://login.corp.example.com"),
      },
      {
        name: "MCPOIDCConfig: inline set with type kubernetesServiceAccount",
        file: "mcpoidcconfig-corp-oidc.yaml",
        edit: (spec) => (spec.type = "kubernetesServiceAccount"),
      },
      {
        name: "MCPExternalAuthConfig: a zero token lifespan",
        file: "mcpexternalauthconfig-embedded-auth-server.yaml",
        edit: (spec) => {
          const server = spec.embeddedAuthServer as { tokenLifespans: Record<string, string> };
          server.tokenLifespans.accessTokenLifespan = "0s";
        },
      },
    ];

  it.each(celCases)(
    "CEL: $name is rejected by the server as by our validator",
    async ({ file, edit }) => {
      const doc = structuredClone(examples.find((e) => e.file === file)!.doc) as Doc;
      edit(doc.spec);
      const issues = defaultSchemaSet().validateKind(doc.kind, doc);
      // Only CEL: the server evaluates rules only where the schema passed.
      expect(issues.filter((i) => i.level !== "cel")).toEqual([]);
      const local = issues.filter((i) => i.level === "cel");
      expect(local.length).toBeGreaterThan(0);
      const err = await applyStrict(doc).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(KubeApiError);
      expect((err as KubeApiError).status).toBe(422);
      for (const issue of local) expect((err as KubeApiError).message).toContain(issue.message);
    },
  );
});
