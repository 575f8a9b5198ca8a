// The catalog's pages, rendered on the server. Each function returns a whole document; the
// layout links the one stylesheet and the one script (no inline script or style: the CSP
// forbids them).
import type { SourceRecord, StoredEntry, SyncStatus, RegistryRecord } from "../store/store.js";
import {
  objects,
  PACKAGE_TYPES,
  type Filters,
  type Page,
  SORTS,
  STATUSES,
  str,
  TRANSPORTS,
} from "./catalog.js";
import type { Html } from "./html.js";
import { html, query } from "./html.js";
import { snippetsOf } from "./snippets.js";
import { ASSET_VERSION } from "./static.js";

type Obj = Record<string, unknown>;

export interface Viewer {
  /** Shown in the header: the signed-in subject, or nothing. */
  subject?: string;
  /** Sign-in is configured (oauth mode with ui.signIn). */
  signInAvailable: boolean;
  signedIn: boolean;
  csrf?: string;
  operator: boolean;
}

function layout(
  title: string,
  viewer: Viewer,
  main: Html,
  current: "catalog" | "operators",
): string {
  const account = viewer.signedIn
    ? html`<form method="post" action="/ui/logout" class="signout">
        <span class="who">${viewer.subject ?? "signed in"}</span>
        <input type="hidden" name="csrf" value="${viewer.csrf ?? ""}" />
        <button type="submit">Sign out</button>
      </form>`
    : viewer.signInAvailable
      ? html`<a class="button" href="/ui/login">Sign in</a>`
      : "";
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · mcpfleet registry</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="/ui/static/app.css?v=${ASSET_VERSION}" />
        <script src="/ui/static/app.js?v=${ASSET_VERSION}" defer></script>
      </head>
      <body>
        <header class="top">
          <a class="brand" href="/ui/">mcpfleet registry</a>
          <nav aria-label="Sections">
            <a href="/ui/" ${current === "catalog" ? html` aria-current="page"` : ""}>Catalog</a>
            ${viewer.operator ? html`<a href="/ui/operators" ${current === "operators" ? html` aria-current="page"` : ""}>Operators</a>` : ""}
          </nav>
          <div class="account">${account}</div>
        </header>
        <main id="main">${main}</main>
      </body>
    </html> `.text;
}

function statusBadge(status: string): Html {
  return html`<span class="badge status-${/^[a-z]+$/.test(status) ? status : "other"}"
    >${status}</span
  >`;
}

function select(
  name: string,
  label: string,
  value: string,
  options: readonly string[],
  any: string,
): Html {
  return html`<label
    >${label}
    <select name="${name}">
      <option value="">${any}</option>
      ${options.map((o) => html`<option value="${o}" ${o === value ? html` selected` : ""}>${o}</option>`)}
    </select></label
  >`;
}

/** The registry to browse: a choice when the caller may read several. */
function registryPicker(registries: string[], registry: string): Html {
  return registries.length > 1
    ? html`<label
        >Registry
        <select name="registry">
          ${registries.map((r) => html`<option value="${r}" ${r === registry ? html` selected` : ""}>${r}</option>`)}
        </select></label
      >`
    : html`<input type="hidden" name="registry" value="${registry}" />`;
}

/** One server of the catalog's results. */
function summaryCard(registry: string, s: Page["items"][number]): Html {
  return html`<li class="card">
    <h2>
      <a href="/ui/server${query({ registry, name: s.name })}"
        >${s.title !== "" ? s.title : s.name}</a
      >
    </h2>
    <p class="name">
      ${s.name}
      <span class="version">${s.version}</span>
      ${s.status !== "active" ? statusBadge(s.status) : ""}
    </p>
    <p class="desc">${s.description}</p>
    <p class="tags">
      ${s.types.map((t) => html`<span class="tag">${t}</span>`)}${s.transports.map((t) => html`<span class="tag transport">${t}</span>`)}
    </p>
  </li>`;
}

/** Links to the previous and next pages of results, when there are several. */
function pagerOf(page: Page, link: (p: number) => string): Html | "" {
  return page.pages > 1
    ? html`<nav class="pager" aria-label="Pages">
        ${page.page > 1 ? html`<a rel="prev" href="${link(page.page - 1)}">Previous</a>` : ""}
        <span>Page ${page.page} of ${page.pages}</span>
        ${page.page < page.pages ? html`<a rel="next" href="${link(page.page + 1)}">Next</a>` : ""}
      </nav>`
    : "";
}

/** The catalog's content (the same for every caller of one cache scope, so it is cached). */
export function catalogMain(registries: string[], registry: string, f: Filters, page: Page): Html {
  const base = {
    registry: registries.length > 1 ? registry : undefined,
    q: f.q,
    transport: f.transport,
    type: f.type,
    status: f.status,
    sort: f.sort === "name" ? undefined : f.sort,
  };
  const link = (p: number): string => `/ui/${query({ ...base, page: p === 1 ? undefined : p })}`;
  const picker = registryPicker(registries, registry);
  const items = page.items.map((s) => summaryCard(registry, s));
  const pager = pagerOf(page, link);
  const main = html`<h1>Catalog <span class="sub">${registry}</span></h1>
    <form class="filters" method="get" action="/ui/" role="search">
      ${picker}
      <label class="search"
        >Search
        <input
          type="search"
          name="q"
          value="${f.q}"
          placeholder="Name, title or description"
          maxlength="200"
        />
      </label>
      ${select("transport", "Transport", f.transport, TRANSPORTS, "Any transport")}
      ${select("type", "Package", f.type, PACKAGE_TYPES, "Any package")}
      ${select("status", "Status", f.status, STATUSES, "Any status")}
      <label
        >Sort
        <select name="sort">
          ${SORTS.map((o) => html`<option value="${o}" ${o === f.sort ? html` selected` : ""}>${o === "name" ? "Name" : "Recently updated"}</option>`)}
        </select></label
      >
      <button type="submit">Apply</button>
    </form>
    <p class="count" role="status">${page.total} ${page.total === 1 ? "server" : "servers"}</p>
    ${
      page.items.length > 0
        ? html`<ul class="results">
            ${items}
          </ul>`
        : html`<p class="empty">No server matches.</p>`
    }
    ${pager}`;
  return main;
}

export function catalogPage(viewer: Viewer, main: Html): string {
  return layout("Catalog", viewer, main, "catalog");
}

function metaOf(e: StoredEntry): Obj {
  return { status: e.status, statusMessage: e.statusMessage, publishedAt: e.publishedAt };
}

function dataIcon(server: Obj): string | undefined {
  // Only inline images: an icon on another host would be a request leaving this server.
  for (const i of objects(server.icons)) {
    const src = str(i.src);
    if (
      src !== undefined &&
      /^data:image\/(png|svg\+xml|jpeg|webp|gif);base64,[A-Za-z0-9+/=]+$/.test(src)
    )
      return src;
  }
  return undefined;
}

function httpUrl(v: unknown): string | undefined {
  const s = str(v);
  return s !== undefined && /^https?:\/\//i.test(s) ? s : undefined;
}

/** Tool names an entry lists in its publisher-provided metadata (ToolHive's `tools`). */
function toolsOf(server: Obj): string[] {
  const found = new Set<string>();
  const walk = (v: unknown, depth: number): void => {
    if (depth > 4 || typeof v !== "object" || v === null) return;
    for (const [k, x] of Object.entries(v as Obj)) {
      if (k === "tools" && Array.isArray(x)) {
        for (const t of x) {
          const n = typeof t === "string" ? t : str((t as Obj | null)?.name);
          if (n !== undefined) found.add(n);
        }
      } else walk(x, depth + 1);
    }
  };
  walk(server._meta, 0);
  return [...found];
}

function argList(v: unknown): Html {
  const args = objects(v);
  if (args.length === 0) return html``;
  return html`<dt>Arguments</dt>
    <dd>
      <ul>
        ${args.map(
          (a) =>
            html`<li>
              <code>${str(a.name) ?? str(a.value) ?? ""}</code>
              ${str(a.type) ?? ""}${a.isRequired === true ? " (required)" : ""}
              ${str(a.description) ?? ""}
            </li>`,
        )}
      </ul>
    </dd>`;
}

function envList(v: unknown, label = "Environment"): Html {
  const vars = objects(v);
  if (vars.length === 0) return html``;
  return html`<dt>${label}</dt>
    <dd>
      <ul>
        ${vars.map(
          (e) =>
            html`<li>
              <code>${str(e.name) ?? ""}</code
              >${e.isSecret === true ? html` <span class="badge secret">secret</span>` : ""}${e.isRequired === true ? " (required)" : ""}
              ${str(e.description) ?? ""}
            </li>`,
        )}
      </ul>
    </dd>`;
}

function packageCard(p: Obj): Html {
  return html`<article class="pkg">
    <h3>
      <span class="tag">${str(p.registryType) ?? "package"}</span>
      <code>${str(p.identifier) ?? ""}</code>
    </h3>
    <dl>
      <dt>Transport</dt>
      <dd>${str((p.transport as Obj | undefined)?.type) ?? "stdio"}</dd>
      ${
        str(p.version) !== undefined
          ? html`<dt>Version</dt>
              <dd>${str(p.version)}</dd>`
          : ""
      }
      ${argList(p.runtimeArguments)}${argList(p.packageArguments)}${envList(p.environmentVariables)}
    </dl>
  </article>`;
}

function remoteCard(r: Obj): Html {
  return html`<article class="pkg">
    <h3><span class="tag">remote</span> <code>${str(r.url) ?? ""}</code></h3>
    <dl>
      <dt>Transport</dt>
      <dd>${str(r.type) ?? ""}</dd>
      ${envList(r.headers, "Headers")}
    </dl>
  </article>`;
}

function toolList(tools: string[]): Html | "" {
  return tools.length > 0
    ? html`<h2>Tools</h2>
        <ul class="tools">
          ${tools.map((t) => html`<li><code>${t}</code></li>`)}
        </ul>`
    : "";
}

function snippetFigure(sn: ReturnType<typeof snippetsOf>[number], i: number): Html {
  return html`<figure class="snippet">
    <figcaption>
      <span id="snippet-${i}-title">${sn.title}</span>
      <button type="button" class="copy" data-copy="snippet-${i}" hidden>Copy</button>
    </figcaption>
    <pre
      tabindex="0"
      aria-labelledby="snippet-${i}-title"
    ><code id="snippet-${i}" class="${sn.language}">${sn.text}</code></pre>
  </figure>`;
}

/** One version in the server page's list, marked when it is the one shown. */
function versionItem(registry: string, shown: StoredEntry, v: StoredEntry): Html {
  const m = metaOf(v);
  return html`<li${v.version === shown.version ? html` aria-current="true"` : ""}>
    <a href="/ui/server${query({ registry, name: v.name, version: v.version })}">${v.version}</a>
    ${statusBadge(v.status)}${v.isLatest ? html` <span class="badge latest">latest</span>` : ""}
    <span class="when">${String(m.publishedAt).slice(0, 10)}</span>
    ${v.statusMessage !== undefined ? html`<span class="why">${v.statusMessage}</span>` : ""}
  </li>`;
}

export function serverPage(
  viewer: Viewer,
  registry: string,
  versions: StoredEntry[],
  shown: StoredEntry,
): string {
  const s = shown.server as Obj;
  const title = str(s.title) ?? shown.name;
  const icon = dataIcon(s);
  const repo = httpUrl((s.repository as Obj | undefined)?.url);
  const website = httpUrl(s.websiteUrl);
  const packages = objects(s.packages);
  const remotes = objects(s.remotes);
  const tools = toolsOf(s);
  const snippets = snippetsOf(s, shown.version);
  const main = html`<p class="crumbs">
      <a href="/ui/${query({ registry })}">Catalog</a> / ${shown.name}
    </p>
    <div class="head">
      ${icon !== undefined ? html`<img class="icon" src="${icon}" alt="" width="48" height="48" />` : ""}
      <div>
        <h1>${title}</h1>
        <p class="name">
          ${shown.name} <span class="version">${shown.version}</span> ${statusBadge(shown.status)}
        </p>
      </div>
    </div>
    ${shown.statusMessage !== undefined ? html`<p class="status-message" role="note">${shown.statusMessage}</p>` : ""}
    <p class="desc">${str(s.description) ?? ""}</p>
    <p class="links">
      ${repo !== undefined ? html`<a href="${repo}" rel="noopener noreferrer">Repository</a>` : ""}
      ${website !== undefined ? html`<a href="${website}" rel="noopener noreferrer">Website</a>` : ""}
    </p>
    <div class="columns">
      <section aria-labelledby="install">
        <h2 id="install">Packages and remotes</h2>
        ${packages.length + remotes.length === 0 ? html`<p>None listed.</p>` : ""}
        ${packages.map(packageCard)} ${remotes.map(remoteCard)} ${toolList(tools)}
        <h2>Use it</h2>
        ${snippets.length === 0 ? html`<p>No snippet for this version's packages.</p>` : ""}
        ${snippets.map(snippetFigure)}
      </section>
      <section aria-labelledby="versions">
        <h2 id="versions">Versions</h2>
        <ol class="versions">
          ${versions.map((v) => versionItem(registry, shown, v))}
        </ol>
      </section>
    </div>`;
  return layout(title, viewer, main, "catalog");
}

export interface SourceRow {
  source: SourceRecord;
  status: SyncStatus | undefined;
}

export function operatorsPage(
  viewer: Viewer,
  sources: SourceRow[],
  registries: RegistryRecord[],
): string {
  const main = html`<h1>Operators</h1>
    <p>What the server reads and serves. This page changes nothing; the admin API does.</p>
    <h2>Sources</h2>
    <table class="grid">
      <thead>
        <tr>
          <th scope="col">Source</th>
          <th scope="col">Kind</th>
          <th scope="col">Last sync</th>
          <th scope="col">Result</th>
          <th scope="col">Entries</th>
          <th scope="col">Last error</th>
        </tr>
      </thead>
      <tbody>
        ${sources.map(({ source, status }) => {
          const phase = status?.phase ?? "Pending";
          return html`<tr>
            <th scope="row">${source.name}</th>
            <td>${source.kind}${source.origin === "config" ? " (config)" : ""}</td>
            <td>
              ${
                source.kind === "managed"
                  ? "not synced: published through the API"
                  : status?.lastAttempt !== undefined
                    ? status.lastAttempt.replace("T", " ").slice(0, 19) + " UTC"
                    : "never"
              }
            </td>
            <td>
              <span class="badge phase-${phase.toLowerCase()}"
                >${phase === "Ready" ? "succeeded" : phase.toLowerCase()}</span
              >
            </td>
            <td>${status?.entryCount ?? 0}</td>
            <td class="error">${phase === "Failed" ? (status?.message ?? "failed") : ""}</td>
          </tr>`;
        })}
      </tbody>
    </table>
    <h2>Registries</h2>
    <table class="grid">
      <thead>
        <tr>
          <th scope="col">Registry</th>
          <th scope="col">Sources, in serving order</th>
          <th scope="col">Claims</th>
        </tr>
      </thead>
      <tbody>
        ${registries.map(
          (r) =>
            html`<tr>
              <th scope="row"><a href="/ui/${query({ registry: r.name })}">${r.name}</a></th>
              <td>${r.sources.join(", ")}</td>
              <td>${r.claims !== undefined ? JSON.stringify(r.claims) : "none"}</td>
            </tr>`,
        )}
      </tbody>
    </table>`;
  return layout("Operators", viewer, main, "operators");
}

export function messagePage(viewer: Viewer, title: string, text: string, signIn = false): string {
  const main = html`<h1>${title}</h1>
    <p>${text}</p>
    ${signIn && viewer.signInAvailable ? html`<p><a class="button" href="/ui/login">Sign in</a></p>` : ""}`;
  return layout(title, viewer, main, "catalog");
}
