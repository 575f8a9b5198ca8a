// The catalog's one script and one stylesheet, kept in the module so they ship with the
// compiled package and the single executable without a file lookup. The pages work without
// the script: it only submits the filters on change, adds copy buttons and a `/` shortcut.
import { createHash } from "node:crypto";

export const APP_JS = `"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var form = document.querySelector("form.filters");
  if (form) {
    form.querySelectorAll("select").forEach(function (s) {
      s.addEventListener("change", function () {
        form.requestSubmit();
      });
    });
    // Empty fields stay out of the address, so shared links are short.
    form.addEventListener("submit", function () {
      form.querySelectorAll("input, select").forEach(function (el) {
        if (el.name && el.value === "") el.disabled = true;
      });
    });
  }
  document.addEventListener("keydown", function (e) {
    var search = document.querySelector("input[type=search]");
    if (e.key === "/" && search && document.activeElement !== search) {
      e.preventDefault();
      search.focus();
    }
  });
  document.querySelectorAll("button.copy").forEach(function (b) {
    var target = document.getElementById(b.getAttribute("data-copy"));
    if (!target || !navigator.clipboard) return;
    b.hidden = false;
    b.addEventListener("click", function () {
      navigator.clipboard.writeText(target.textContent).then(function () {
        b.textContent = "Copied";
        setTimeout(function () { b.textContent = "Copy"; }, 1500);
      });
    });
  });
});
`;

export const APP_CSS = `:root { --fg: #1b1f24; --muted: #505a66; --line: #d0d7de; --bg: #fff; --accent: #0b5cad; --soft: #f3f5f8; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 13px; }
header.top { display: flex; gap: 1.5rem; align-items: center; padding: .6rem 1.5rem; border-bottom: 1px solid var(--line); background: var(--soft); }
.brand { font-weight: 700; text-decoration: none; color: var(--fg); }
header nav a { margin-right: 1rem; text-decoration: none; }
header nav a[aria-current] { font-weight: 700; text-decoration: underline; }
.account { margin-left: auto; }
.signout { display: flex; gap: .5rem; align-items: center; margin: 0; }
main { max-width: 1100px; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
h1 .sub { font-weight: 400; color: var(--muted); font-size: .7em; }
.filters { display: flex; flex-wrap: wrap; gap: .75rem; align-items: end; padding: .75rem; background: var(--soft); border: 1px solid var(--line); border-radius: 6px; }
.filters label { display: flex; flex-direction: column; font-size: 13px; color: var(--muted); }
.filters .search { flex: 1 1 16rem; }
input, select, button, .button { font: inherit; padding: .35rem .5rem; border: 1px solid #8c959f; border-radius: 4px; background: #fff; color: var(--fg); }
button, .button { cursor: pointer; background: var(--accent); color: #fff; border-color: var(--accent); text-decoration: none; display: inline-block; }
.count { color: var(--muted); }
.results { list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: .75rem; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; }
.card h2 { font-size: 1.05rem; margin: 0 0 .25rem; }
.name { color: var(--muted); margin: 0; word-break: break-all; }
.version { font-family: ui-monospace, monospace; }
.desc { margin: .4rem 0; }
.tag { display: inline-block; font-size: 12px; border: 1px solid var(--line); border-radius: 10px; padding: 0 .5rem; margin-right: .3rem; background: var(--soft); }
.tag.transport { border-style: dashed; }
.badge { display: inline-block; font-size: 12px; font-weight: 600; border-radius: 4px; padding: 0 .4rem; border: 1px solid; }
.status-active, .phase-ready { color: #116329; border-color: #116329; }
.status-deprecated, .phase-pending, .phase-syncing { color: #7a4700; border-color: #7a4700; background: #fff8c5; }
.status-deleted, .phase-failed, .secret { color: #a40e26; border-color: #a40e26; background: #ffebe9; }
.latest { color: var(--accent); border-color: var(--accent); }
.status-message { border-left: 4px solid #7a4700; background: #fff8c5; padding: .5rem .75rem; }
.pager { display: flex; gap: 1rem; align-items: center; justify-content: center; }
.head { display: flex; gap: 1rem; align-items: center; }
.head h1 { margin: 0; }
.columns { display: grid; grid-template-columns: 2fr 1fr; gap: 2rem; }
@media (max-width: 800px) { .columns { grid-template-columns: 1fr; } }
.pkg { border: 1px solid var(--line); border-radius: 6px; padding: .5rem 1rem; margin-bottom: .75rem; }
.pkg h3 { font-size: 1rem; margin: .25rem 0; word-break: break-all; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: .5rem 0; }
dt { color: var(--muted); }
dd { margin: 0; }
dd ul { margin: 0; padding-left: 1rem; }
.snippet { margin: 0 0 1rem; }
.snippet figcaption { display: flex; justify-content: space-between; align-items: center; font-weight: 600; margin-bottom: .25rem; }
pre { background: #0d1117; color: #e6edf3; padding: .75rem; border-radius: 6px; overflow: auto; }
.versions { list-style: none; padding: 0; }
.versions li { padding: .35rem 0; border-bottom: 1px solid var(--line); }
.versions li[aria-current] { font-weight: 700; }
.when { color: var(--muted); font-size: 13px; margin-left: .4rem; }
.why { display: block; color: var(--muted); font-size: 13px; font-weight: 400; }
table.grid { border-collapse: collapse; width: 100%; margin-bottom: 1.5rem; }
.grid th, .grid td { border: 1px solid var(--line); padding: .4rem .6rem; text-align: left; vertical-align: top; }
.grid thead th { background: var(--soft); }
td.error { color: #a40e26; }
`;

/** Changes with the assets, so browsers may cache them for long. */
export const ASSET_VERSION = createHash("sha256")
  .update(APP_JS)
  .update(APP_CSS)
  .digest("base64url")
  .slice(0, 12);
