// The reference operator's own validation expectations (../shared/data/peer-tests/validate):
// one folder per case, `resource.yaml` and `case.txt`. Read in place, never copied.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { type Issue, type Level, type Report, validateTexts } from "../../src/validate/index.js";
import { sharedPath } from "../support/shared-data.js";

export const PEER_CASES = sharedPath("peer-tests", "validate");

export interface PeerCase {
  name: string;
  expect: "valid" | "invalid";
  /** Where the reference decides: `admission` (CRD schema or CEL, the API server) or `runtime`. */
  stage: "admission" | "runtime";
  stageText: string;
  /** JSON pointer the reference names (invalid cases). */
  field: string;
  message: string;
  text: string;
}

export function readPeerCases(): PeerCase[] {
  return readdirSync(PEER_CASES)
    .sort()
    .map((name) => {
      const dir = join(PEER_CASES, name);
      const fields = new Map<string, string>();
      for (const line of readFileSync(join(dir, "case.txt"), "utf8").split("\n")) {
        const colon = line.indexOf(": ");
        if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 2));
      }
      const stageText = fields.get("stage") ?? "";
      return {
        name,
        expect: fields.get("expect") === "invalid" ? "invalid" : "valid",
        stage: stageText.startsWith("admission") ? "admission" : "runtime",
        stageText,
        field: fields.get("field") ?? "",
        message: fields.get("reference-message") ?? "",
        text: readFileSync(join(dir, "resource.yaml"), "utf8"),
      } satisfies PeerCase;
    });
}

export interface PeerOutcome {
  peer: PeerCase;
  /**
   * Our verdict at the reference's stage: for an admission-stage case, what schema and CEL say
   * (the API server's part, which is all the reference's test asserts); otherwise every level.
   */
  verdict: "valid" | "invalid";
  /** Errors at a later level (references, run time) on an admission-stage case we admit. */
  later: string[];
  agrees: boolean;
  /** For a case both reject: one of our errors on its resource names the reference's field. */
  sameField: boolean;
  /** Our errors, one line each. */
  errors: string[];
}

/**
 * The same field: equal pointers, or one inside the other (the reference names an object
 * where a rule of ours names its offending member, or the other way round).
 */
export function sameField(ours: string, theirs: string): boolean {
  return ours === theirs || ours.startsWith(`${theirs}/`) || theirs.startsWith(`${ours}/`);
}

/** The levels the API server decides: a document that is not one, its schema, its CEL rules. */
const ADMISSION_LEVELS: ReadonlySet<Level> = new Set(["parse", "schema", "cel"]);

/**
 * What the API server decides at create time: the levels above, and a second resource of the
 * same identity (AlreadyExists), which validate reports among its reference checks.
 */
function decidedAtAdmission(e: Issue): boolean {
  return ADMISSION_LEVELS.has(e.level) || e.message.startsWith("duplicate ");
}

/** Validates a case as `mcpfleet validate` with its defaults does. */
export async function runPeerCase(peer: PeerCase): Promise<PeerOutcome> {
  const report: Report = await validateTexts([{ name: "resource.yaml", text: peer.text }], {});
  const line = (r: { kind: string; name: string }, e: Issue) =>
    `${r.kind}/${r.name} ${e.path}: ${e.message} (${e.level})`;
  const counted = (e: Issue) => peer.stage === "runtime" || decidedAtAdmission(e);
  const errors = report.resources.flatMap((r) => r.errors.filter(counted).map((e) => line(r, e)));
  const later = report.resources.flatMap((r) =>
    r.errors.filter((e) => !counted(e)).map((e) => line(r, e)),
  );
  const verdict = errors.length > 0 ? "invalid" : "valid";
  const all = report.resources.flatMap((r) => r.errors.filter(counted));
  return {
    peer,
    verdict,
    later,
    agrees: verdict === peer.expect,
    sameField:
      verdict === "invalid" && peer.expect === "invalid"
        ? all.some((e) => sameField(e.path, peer.field))
        : true,
    errors,
  };
}
