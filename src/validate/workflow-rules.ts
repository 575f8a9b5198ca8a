// A composite tool's workflow as the virtual server checks it when it loads its configuration:
// rules of the spec that a schema cannot state (dependsOn forms no cycle, a step that may be
// skipped has the defaultResults later steps read) and the ones the spec implies (a tool is
// described to clients, a retry retries at least once).
import { isObject } from "../json.js";

export interface WorkflowIssue {
  /** JSON pointer relative to the composite tool. */
  path: string;
  message: string;
  /** A warning where the spec leaves the rule to the operator (see workflowIssues). */
  warning?: boolean;
}

interface Step {
  index: number;
  id: string;
  value: Record<string, unknown>;
}

/**
 * The issues of one composite tool (a CompositeToolConfig). A missing description is an error
 * for a VirtualMCPCompositeToolDefinition (`definition`), which the reference operator marks
 * Invalid without one, and a warning for a tool written inline in a virtual server, which the
 * spec does not require one of.
 */
export function workflowIssues(
  tool: Record<string, unknown>,
  definition: boolean,
): WorkflowIssue[] {
  const issues: WorkflowIssue[] = [];
  if (typeof tool.description !== "string" || tool.description.trim() === "") {
    issues.push({
      path: "/description",
      message: definition
        ? "description is required: it is what clients are told the tool does"
        : "no description: clients are told nothing of what the tool does",
      warning: !definition,
    });
  }
  if (!Array.isArray(tool.steps)) return issues;
  const steps: Step[] = [];
  tool.steps.forEach((value: unknown, index) => {
    if (isObject(value) && typeof value.id === "string") steps.push({ index, id: value.id, value });
  });
  for (const step of steps) retryIssues(step, issues);
  cycleIssues(steps, issues);
  defaultResultsIssues(steps, tool.output, issues);
  return issues;
}

function retryIssues(step: Step, issues: WorkflowIssue[]): void {
  const onError = step.value.onError;
  if (!isObject(onError) || onError.action !== "retry") return;
  const count = onError.retryCount;
  if (typeof count !== "number" || count < 1) {
    issues.push({
      path: `/steps/${step.index}/onError/retryCount`,
      message: "retryCount must be at least 1 with action retry",
    });
  }
}

/** A cycle of dependsOn, reported once, at the steps list, naming the steps in it. */
function cycleIssues(steps: readonly Step[], issues: WorkflowIssue[]): void {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const state = new Map<string, "open" | "done">();
  const trail: string[] = [];
  const visit = (id: string): string[] | undefined => {
    const mark = state.get(id);
    if (mark === "done") return undefined;
    if (mark === "open") return [...trail.slice(trail.indexOf(id)), id];
    state.set(id, "open");
    trail.push(id);
    const deps = byId.get(id)?.value.dependsOn;
    if (Array.isArray(deps)) {
      for (const d of deps) {
        if (typeof d !== "string" || !byId.has(d)) continue;
        const cycle = visit(d);
        if (cycle !== undefined) return cycle;
      }
    }
    trail.pop();
    state.set(id, "done");
    return undefined;
  };
  for (const step of steps) {
    const cycle = visit(step.id);
    if (cycle !== undefined) {
      issues.push({
        path: "/steps",
        message: `dependency cycle: ${cycle.join(" -> ")} (dependsOn must order the steps)`,
      });
      return;
    }
  }
}

/**
 * A step that may not run (it has a condition) or may fail without stopping the workflow
 * (onError continue) leaves its output empty: each output field a later template reads must be
 * in its defaultResults.
 */
function defaultResultsIssues(steps: readonly Step[], output: unknown, issues: WorkflowIssue[]) {
  for (const step of steps) {
    const onError = step.value.onError;
    const skippable =
      step.value.condition !== undefined || (isObject(onError) && onError.action === "continue");
    if (!skippable) continue;
    const used = new Set<string>();
    const pattern = new RegExp(
      `\\.steps\\.${escapeRegExp(step.id)}\\.output(?:\\.([A-Za-z0-9_-]+))?`,
      "g",
    );
    const scan = (v: unknown): void => {
      if (typeof v === "string") {
        for (const m of v.matchAll(pattern)) used.add(m[1] ?? "");
      } else if (Array.isArray(v)) v.forEach(scan);
      else if (isObject(v)) Object.values(v).forEach(scan);
    };
    for (const other of steps) if (other !== step) scan(other.value);
    scan(output);
    if (used.size === 0) continue;
    const defaults = step.value.defaultResults;
    const missing = [...used].filter(
      (f) => !isObject(defaults) || (f !== "" && !Object.hasOwn(defaults, f)),
    );
    if (missing.length === 0) continue;
    const named = missing.filter((f) => f !== "");
    const fields =
      named.length > 0 ? named.map((f) => `defaultResults.${f}`).join(", ") : "defaultResults";
    issues.push({
      path: `/steps/${step.index}/defaultResults`,
      message: `${fields} required: later steps use this step's output, which is empty when the step is skipped (it has ${step.value.condition !== undefined ? "a condition" : "onError action continue"})`,
    });
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
