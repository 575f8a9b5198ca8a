// Field-by-field differences between two JSON answers, for the differential tests that put our
// registry server beside a peer's: lists of identifiable elements are matched by identity, so
// one extra element is one difference (`/servers/[name@version]`) and a different order another
// (`/servers (order)`); fields of matched elements are reported under `*`.

export const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** What identifies an element of a list: a server version, or a named resource. */
function identity(v: unknown): string | undefined {
  if (!isObj(v)) return undefined;
  const doc = isObj(v.server) ? v.server : v;
  if (typeof doc.name !== "string") return undefined;
  return typeof doc.version === "string" ? `${doc.name}@${doc.version}` : doc.name;
}

/** Differences between two bodies as `[JSON pointer, theirs, ours]`, appended to `out`. */
export function bodyDiffs(
  a: unknown,
  b: unknown,
  path: string,
  out: [string, unknown, unknown][],
): void {
  if (isObj(a) && isObj(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      bodyDiffs(a[k], b[k], `${path}/${k.replace(/~/g, "~0").replace(/\//g, "~1")}`, out);
    }
  } else if (Array.isArray(a) && Array.isArray(b)) {
    const [ka, kb] = [a.map(identity), b.map(identity)];
    const keyed = (ks: (string | undefined)[]): ks is string[] =>
      ks.every((k) => k !== undefined) && new Set(ks).size === ks.length;
    if (keyed(ka) && keyed(kb)) {
      for (const [i, k] of ka.entries()) {
        const j = kb.indexOf(k);
        if (j < 0) out.push([`${path}/[${k}]`, a[i], undefined]);
        else bodyDiffs(a[i], b[j], `${path}/*`, out);
      }
      for (const [j, k] of kb.entries()) {
        if (!ka.includes(k)) out.push([`${path}/[${k}]`, undefined, b[j]]);
      }
      const [oa, ob] = [ka.filter((k) => kb.includes(k)), kb.filter((k) => ka.includes(k))];
      if (oa.join("\n") !== ob.join("\n")) out.push([`${path} (order)`, oa, ob]);
      return;
    }
    if (a.length !== b.length) out.push([`${path} (length)`, a.length, b.length]);
    for (let i = 0; i < Math.min(a.length, b.length); i++) bodyDiffs(a[i], b[i], `${path}/*`, out);
  } else if (JSON.stringify(a) !== JSON.stringify(b)) {
    out.push([path === "" ? "/" : path, a, b]);
  }
}
