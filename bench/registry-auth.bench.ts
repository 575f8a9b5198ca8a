// Authenticated GET /{registry}/v0.1/servers (real RS256 tokens from a local OpenID provider,
// 10,000 entries with claims, a caller who sees half of them) as a ratio to the same request
// in anonymous mode in the same run. Target ratio >= 0.8.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type autocannon from "autocannon";
import { AUDIENCE, startIssuer } from "../test/support/oidc.js";
import {
  generatedServer,
  line,
  load,
  mean,
  startFromYaml,
  waitReady,
  type LoadResult,
} from "./registry-common.js";

const ENTRIES = 10_000;
const dir = mkdtempSync(join(tmpdir(), "bench-auth-"));
// Two halves, interleaved by name: the caller's claims match the first half's source only.
for (const half of [0, 1]) {
  const servers = Array.from({ length: ENTRIES / 2 }, (_, i) => generatedServer(2 * i + half));
  writeFileSync(
    join(dir, `half-${half}.json`),
    JSON.stringify({ version: "1.0.0", meta: {}, data: { servers } }),
  );
}
const sources = `
sources:
  - name: half-a
    file: { path: ../half-0.json }
    syncPolicy: { interval: 1h }
    claims: { team: a }
  - name: half-b
    file: { path: ../half-1.json }
    syncPolicy: { interval: 1h }
    claims: { team: b }
registries:
  - name: default
    sources: [half-a, half-b]
database: { embedded: {} }
`;

const issuer = await startIssuer({ reader: { team: "a" } });
try {
  const oauth = await startFromYaml(
    `${sources}
auth:
  oauth:
    resourceUrl: https://registry.bench
    providers:
      - name: local
        issuerUrl: ${issuer.issuer}
        audience: ${AUDIENCE}
        allowPrivateIP: true
  authz:
    roles:
      superAdmin: [{ groups: root }]
`,
    mkdtempSync(join(dir, "oauth-")),
  );
  const anon = await startFromYaml(
    `${sources}auth: { mode: anonymous }\n`,
    mkdtempSync(join(dir, "anon-")),
  );
  try {
    await Promise.all([waitReady(oauth.url), waitReady(anon.url)]);
    const token = await issuer.token("reader");
    const headers = { authorization: `Bearer ${token}` };
    const authUrl = `${oauth.url}/default/v0.1/servers`;
    const anonUrl = `${anon.url}/default/v0.1/servers`;
    const page = (await (await fetch(authUrl, { headers })).json()) as {
      servers: { server: { name: string } }[];
    };
    const shown = page.servers.map((s) => Number(s.server.name.slice(-6)));
    if (page.servers.length !== 30 || shown.some((n) => n % 2 !== 0)) {
      throw new Error(`unexpected authenticated page: ${JSON.stringify(shown)}`);
    }
    await load({ url: anonUrl, duration: 1 });
    await load({ url: authUrl, headers, duration: 1 });
    // Interleaved rounds, so drift in the machine's speed falls on both sides alike.
    const rounds = { base: [] as LoadResult[], ours: [] as LoadResult[] };
    for (let i = 0; i < 2; i++) {
      rounds.base.push(await load({ url: anonUrl, duration: 3 }));
      rounds.ours.push(await load({ url: authUrl, headers, duration: 3 }));
    }
    const base = mean(rounds.base);
    const ours = mean(rounds.ours);
    if (ours.errors + ours.non2xx > 0) {
      throw new Error(`registry answered errors: ${JSON.stringify(ours)}`);
    }
    line(
      "registry-auth-get-servers",
      Math.round(ours.rps),
      "req/s",
      ours.rps / base.rps,
      `authenticated RS256 caller seeing half of ${ENTRIES} entries vs anonymous mode at ${Math.round(base.rps)} req/s; target >= 0.8`,
    );
    line(
      "registry-auth-get-servers-p99",
      ours.p99,
      "ms",
      base.p99 / Math.max(ours.p99, 0.001),
      `p99 latency; ratio = anonymous p99 ${base.p99} ms / authenticated`,
    );
    // Every request a different search: each one reads and filters rows in the store.
    let n = 0;
    let m = 0;
    const distinct = (counter: () => number): autocannon.Request[] => [
      {
        setupRequest: (req) => ({
          ...req,
          path: `/default/v0.1/servers?search=${(counter() % 9000) + 1000}`,
        }),
      },
    ];
    const baseMiss = await load({ url: anonUrl, duration: 3, requests: distinct(() => n++) });
    const ourMiss = await load({
      url: authUrl,
      headers,
      duration: 3,
      requests: distinct(() => m++),
    });
    line(
      "registry-auth-get-servers-uncached",
      Math.round(ourMiss.rps),
      "req/s",
      ourMiss.rps / baseMiss.rps,
      `distinct search per request (store query and claim filter each time) vs anonymous at ${Math.round(baseMiss.rps)} req/s; informational`,
    );
  } finally {
    await oauth.close();
    await anon.close();
  }
} finally {
  await issuer.close();
  rmSync(dir, { recursive: true, force: true });
}
