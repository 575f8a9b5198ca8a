// ToolHive's /v1 answers, checked against the ToolHive registry server's own swagger
// (../shared/data/peer-registry): a client generated from that document reads our sources,
// registries and entry listings. Each answer validates against the swagger's schema object for
// it, with every field of ours the swagger names present (sourceType, creationType,
// syncSchedule, syncStatus, filterConfig, sourceConfig, ...).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv } from "ajv";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parse } from "yaml";
import type { RegistryServer } from "../../src/registry/server.js";
import { describeWithSharedData, sharedPath } from "../support/shared-data.js";
import { startServer, untilReady } from "./helpers.js";

const SWAGGER = sharedPath("peer-registry", "toolhive-registry-server.swagger.yaml");
const DATA = join(import.meta.dirname, "fixtures", "catalog-upstream.json");
const SERVICE = "github_com_stacklok_toolhive-registry-server_internal_service.";

describeWithSharedData("our /v1 answers in ToolHive's swagger shapes", SWAGGER, () => {
  let dir = "";
  let server: RegistryServer;
  let ajv: Ajv;

  beforeAll(async () => {
    const swagger = parse(readFileSync(SWAGGER, "utf8")) as object;
    ajv = new Ajv({ strict: false, validateFormats: false });
    ajv.addSchema({ ...swagger, $id: "toolhive-swagger" });
    dir = mkdtempSync(join(tmpdir(), "toolhive-shapes-"));
    server = await startServer(
      `
sources:
  - name: catalog
    format: upstream
    file: { path: ${DATA} }
    syncPolicy: { interval: 90m }
    filter: { tags: { exclude: [experimental] } }
    claims: { team: a }
  - name: team
    managed: {}
registries:
  - name: open
    sources: [team, catalog]
    claims: { team: a }
auth: { mode: anonymous }
`,
      dir,
    );
    await untilReady(server.url);
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The answer at `path`, valid against the swagger's `definition`. */
  async function shaped(path: string, definition: string): Promise<Record<string, unknown>> {
    const res = await fetch(`${server.url}${path}`);
    expect(res.status, path).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    const validate = ajv.getSchema(`toolhive-swagger#/components/schemas/${definition}`);
    if (validate === undefined) throw new Error(`the swagger has no ${definition}`);
    expect(validate(body), `${path}: ${JSON.stringify(validate.errors)}`).toBe(true);
    return body;
  }

  it("lists and shows sources as SourceInfo", async () => {
    const list = await shaped("/v1/sources", `${SERVICE}SourceListResponse`);
    expect((list.sources as unknown[]).length).toBe(2);
    const catalog = await shaped("/v1/sources/catalog", `${SERVICE}SourceInfo`);
    expect(catalog).toMatchObject({
      name: "catalog",
      creationType: "CONFIG",
      sourceType: "file",
      type: "file",
      syncSchedule: "1h30m0s",
      filterConfig: { tags: { exclude: ["experimental"] } },
      sourceConfig: { path: DATA },
      claims: { team: "a" },
      syncStatus: { phase: "complete", serverCount: expect.any(Number) as number },
    });
    expect(await shaped("/v1/sources/team", `${SERVICE}SourceInfo`)).toMatchObject({
      sourceType: "managed",
      sourceConfig: {},
    });
  });

  it("lists and shows registries as RegistryInfo", async () => {
    await shaped("/v1/registries", "internal_api_v1.registryListResponse");
    expect(await shaped("/v1/registries/open", `${SERVICE}RegistryInfo`)).toMatchObject({
      name: "open",
      sources: ["team", "catalog"],
      claims: { team: "a" },
      creationType: "CONFIG",
    });
  });

  it("lists entries of a source and of a registry in ToolHive's entry shapes", async () => {
    const bySource = await shaped("/v1/sources/catalog/entries", `${SERVICE}SourceEntriesResponse`);
    expect((bySource.entries as unknown[]).length).toBeGreaterThan(0);
    const byRegistry = await shaped(
      "/v1/registries/open/entries",
      `${SERVICE}RegistryEntriesResponse`,
    );
    expect((byRegistry.entries as unknown[]).length).toBeGreaterThan(0);
  });
});
