// Documents of a revision the controller does not apply: it renders and applies only the
// resources of our API group, so a Secret, a ClusterRoleBinding or another project's custom
// resource committed beside them would otherwise be dropped without a word. Each gets one
// warning line, `file:line`, for the log and the revision's outcome.
import { API_GROUP, isKind } from "../schema/index.js";
import type { Report } from "../validate/types.js";

/** One line for each document of the report that is not one of our kinds. */
export function unappliedWarnings(report: Report): string[] {
  const lines: string[] = [];
  for (const r of report.resources) {
    // No kind: a document that did not parse, already an error of the report.
    if (r.kind === "" || isKind(r.kind)) continue;
    // By name only: the report gives every document a namespace, cluster-scoped ones too.
    const name = r.name === "" ? "" : ` ${r.name}`;
    lines.push(
      `${r.file}:${r.line}: ${r.kind}${name} is not applied: the controller applies only ${API_GROUP} resources`,
    );
  }
  return lines;
}
