// HTML built with plain template functions. Every interpolated value goes through one escape
// helper unless it is already Html (built here), so no caller can forget to escape.
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** The one escape helper: text for element content and quoted attribute values. */
export function escapeHtml(v: string): string {
  return v.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

type Part = Html | string | number | undefined | null | false | readonly Part[];

function render(v: Part): string {
  if (v === undefined || v === null || v === false) return "";
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map((x: Part) => render(x)).join("");
  return escapeHtml(String(v));
}

/** Tagged template: literal parts are trusted, interpolated ones escaped. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? "");
  return new Html(out);
}

/** A query string from parameters, leaving out empty ones. */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return s === "" ? "" : `?${s}`;
}
