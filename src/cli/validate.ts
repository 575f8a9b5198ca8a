// `mcpfleet validate [PATH|-]...`: schema, CEL and reference validation of resource YAML.
import { McpfleetError } from "../errors.js";
import { didYouMean } from "../suggest.js";
import { UNKNOWN_FIELDS, type UnknownFields } from "../validate/types.js";
import { parseCommandArgs, usageError } from "./args.js";
import { chooseInputs, describeInputs } from "./inputs.js";
import { progressLine } from "./progress.js";
import { writeText } from "./write.js";
import {
  DEFAULT_OPTIONS,
  FORMATS,
  exitCode,
  formatReport,
  isFormat,
  type Format,
  KeptByText,
  type Report,
} from "../validate/index.js";
import { resourceLabel } from "../validate/resource.js";
import { holdYoungGeneration, youngGenerationCap } from "../infra/young-generation.js";
import { type KeptFiles, loadPaths } from "../synth/load.js";
import type { Resource } from "../synth/model.js";
import type { SynthIssue } from "../synth/issues.js";

const USAGE = `Usage: mcpfleet validate [options] [PATH|-]...

Validates resource YAML (files, directories searched recursively for .yaml, .yml and .json,
or - for standard input) at three levels: schema, CEL rules and references across all the
documents given; a valid set is then rendered in memory, as synth would render it. With no
path, standard input is read when it is not a terminal (a pipe), else the current directory.

Options:
  -o, --output FORMAT         text (default), json, junit or tap
      --summary               add a summary (text and tap)
  -n, --namespace NS          namespace of resources whose metadata has none (default "default")
      --unknown-fields MODE   error (default), warn or ignore: fields the schema does not have
      --strict                unknown fields are errors (the default; kept for compatibility)
      --ignore-missing-schemas  skip kinds no schema is known for (other API groups' kinds)
                              and kustomizations (one line on stderr says how many)
      --crd PATH              validate the kinds of these CustomResourceDefinitions (a file or a
                              directory of them; repeatable) with their schemas and CEL rules
      --skip KIND,...         do not validate these kinds (Kind or apiVersion/Kind; repeatable)
      --reject KIND,...       refuse these kinds wherever they appear (same forms; repeatable)
      --allow-missing-refs    references to resources not given are warnings, not errors
                              (and no synthesis check: the input is part of a set)
      --no-synth              skip the synthesis check (a valid set is rendered in memory: a
                              resource that renders nothing is an error, what it drops a warning)
      --allow-empty           an input with no resource is not an error
      --registry-config       treat every document as a registry-server configuration file
      --no-kube               skip core Kubernetes kinds instead of validating them
      --color, --no-color     force colours on or off (default: on for a terminal, off with NO_COLOR)
  -h, --help                  show this help

Exit status: 0 all valid, 1 something invalid or no resource found, 2 usage error or
unreadable path. A directory written by mcpfleet synth (it holds .mcpfleet-output.json) met
inside a directory given is not read; name it to validate it. See mcpfleet docs validate (docs/validate.md of the installation).`;

/**
 * The report with what synthesis would say of a valid set (a resource that renders nothing, a
 * backend reached without credentials), so CI finds it before `synth` or the controller do.
 */
async function withSynthesisIssues(
  report: Report,
  resources: Resource[],
  kept: KeptRuns | undefined,
): Promise<Report> {
  // Imported here: an invalid set, or --no-synth, does not pay for loading the renderers.
  const [{ reportWithIssues }, { synthesisIssues }, { DEFAULT_SYNTH_OPTIONS }] = await Promise.all([
    import("../synth/issues.js"),
    import("../synth/render.js"),
    import("../synth/options.js"),
  ]);
  const skipped = new Set(report.resources.filter((r) => r.skipped).map(resourceLabel));
  const rendered = resources.filter(
    (r) => !skipped.has(resourceLabel({ ...r.metadata, kind: r.kind })),
  );
  if (kept === undefined)
    return reportWithIssues(report, synthesisIssues(rendered, DEFAULT_SYNTH_OPTIONS));
  // The same resources render the same: the check is made again only when one of them changed.
  const key = JSON.stringify(rendered);
  if (kept.synthesis?.resources !== key) {
    kept.synthesis = { resources: key, issues: synthesisIssues(rendered, DEFAULT_SYNTH_OPTIONS) };
  }
  return reportWithIssues(report, kept.synthesis.issues);
}

/**
 * What a process that runs validate again and again (the validate server) keeps between runs:
 * the verdicts on files and the resources in them, by text (see KeptByText), and the synthesis
 * check's last issues with the resources it was made on.
 */
export interface KeptRuns extends KeptFiles {
  synthesis?: { resources: string; issues: readonly SynthIssue[] };
}

export function keptRuns(): KeptRuns {
  return { verdicts: new KeptByText(), resources: new KeptByText() };
}

/** Fewer files than this are validated too fast for a progress line to be worth drawing. */
const PROGRESS_MIN_FILES = 20;

function useColor(flag: boolean | undefined): boolean {
  if (flag !== undefined) return flag;
  const { NO_COLOR, FORCE_COLOR } = process.env;
  if (NO_COLOR !== undefined && NO_COLOR !== "") return false;
  if (FORCE_COLOR !== undefined && FORCE_COLOR !== "" && FORCE_COLOR !== "0") return true;
  return process.stdout.isTTY === true;
}

const OPTIONS = {
  output: { type: "string", short: "o", default: "text" },
  summary: { type: "boolean", default: false },
  namespace: { type: "string", short: "n", default: DEFAULT_OPTIONS.namespace },
  "unknown-fields": { type: "string" },
  strict: { type: "boolean", default: false },
  "ignore-missing-schemas": { type: "boolean", default: false },
  crd: { type: "string", multiple: true },
  skip: { type: "string", multiple: true },
  reject: { type: "string", multiple: true },
  "allow-missing-refs": { type: "boolean", default: false },
  synth: { type: "boolean", default: true },
  "allow-empty": { type: "boolean", default: false },
  "registry-config": { type: "boolean", default: false },
  kube: { type: "boolean", default: DEFAULT_OPTIONS.kube },
  color: { type: "boolean" },
  help: { type: "boolean", short: "h", default: false },
  // Not an option: accepted only to say why there is none (see threadsRemoved).
  threads: { type: "string" },
} as const;

function parseValidateArgs(argv: string[]) {
  return parseCommandArgs("validate", {
    args: argv,
    allowPositionals: true,
    allowNegative: true,
    strict: true,
    options: OPTIONS,
  });
}

/**
 * Whether a run with these arguments reads standard input (`-`, or no path with standard input
 * not a terminal): the validate server leaves such a run to its client. Arguments a run would
 * refuse, and --help, read nothing.
 */
export function readsStandardInput(argv: string[], stdinIsTTY: boolean): boolean {
  let parsed: ReturnType<typeof parseValidateArgs>;
  try {
    parsed = parseValidateArgs(argv);
  } catch {
    return false;
  }
  const { values, positionals } = parsed;
  return !values.help && chooseInputs("validate", positionals, stdinIsTTY).paths.includes("-");
}

type ValidateValues = ReturnType<typeof parseValidateArgs>["values"];

/** Usage errors no option parser catches, in the order they are reported. */
function checkValues(
  values: ValidateValues,
  positionals: readonly string[],
): { output: Format; unknownFields: UnknownFields } {
  if (values.threads !== undefined) throw threadsRemoved();
  if (!isFormat(values.output)) {
    throw new McpfleetError(
      "ERR_USAGE",
      `validate: unknown output format "${values.output}"${didYouMean(values.output, FORMATS)}; use one of ${FORMATS.join(", ")}`,
    );
  }
  const unknownFields = unknownFieldsOption(values["unknown-fields"], values.strict);
  if (values.namespace === "") {
    throw new McpfleetError("ERR_USAGE", "validate: --namespace must not be empty");
  }
  if (positionals.filter((p) => p === "-").length > 1) {
    throw new McpfleetError("ERR_USAGE", "validate: standard input (-) can be read only once");
  }
  return { output: values.output, unknownFields };
}

/** Validates the inputs (then, when valid, renders them in memory) with a progress line. */
async function validateInputs(
  values: ValidateValues,
  unknownFields: UnknownFields,
  paths: string[],
  notices: string[],
  kept: KeptRuns | undefined,
): Promise<Report> {
  const progress = progressLine(process.stderr);
  // V8's young generation may grow, file by file, up to its cap; from the last file on (the
  // synthesis check included) it is held where it is.
  const capYoungGeneration = youngGenerationCap();
  let loaded;
  try {
    loaded = await loadPaths(
      paths,
      {
        namespace: values.namespace,
        unknownFields,
        ignoreMissingSchemas: values["ignore-missing-schemas"],
        allowMissingRefs: values["allow-missing-refs"],
        registryConfig: values["registry-config"],
        kube: values.kube,
        crdPaths: values.crd ?? [],
        skipKinds: kindList(values.skip),
        rejectKinds: kindList(values.reject),
        onSkippedDir: (dir) => notices.push(skippedDirNotice("validate", dir)),
        onProgress: (done, total) => {
          capYoungGeneration();
          // A few files take less time than reading a progress line would.
          if (total >= PROGRESS_MIN_FILES) progress.update(`validate: ${done}/${total} files`);
        },
      },
      kept,
    );
  } finally {
    progress.done();
    holdYoungGeneration();
  }
  // Synthesis needs the whole set: with references allowed to be missing, the input is a part.
  const synth = values.synth && !values["allow-missing-refs"] && !values["registry-config"];
  return loaded.valid && synth
    ? withSynthesisIssues(loaded.report, loaded.resources, kept)
    : loaded.report;
}

/** What stderr says beside the report: directories not read, kustomizations, an empty input. */
function notify(report: Report, notices: string[], emptyIsFine: boolean, inputs: string): void {
  for (const n of notices) process.stderr.write(`${n}\n`);
  const kustomizations = report.resources.filter((r) => r.skipped && r.kind === "Kustomization");
  if (kustomizations.length > 0) {
    process.stderr.write(
      `validate: ${kustomizations.length} kustomization(s) skipped (${kustomizations[0]!.file}${kustomizations.length > 1 ? ", ..." : ""}): they are not resources; kustomize build DIR | mcpfleet validate checks what they render\n`,
    );
  }
  if (report.resources.length === 0) {
    const verdict = emptyIsFine ? "" : " (an error; --allow-empty accepts it)";
    process.stderr.write(`validate: no resources found in ${inputs}${verdict}\n`);
  }
}

/** `kept`: what the validate server keeps between the runs it serves (see KeptRuns). */
export async function main(argv: string[], kept?: KeptRuns): Promise<number> {
  const { values, positionals } = parseValidateArgs(argv);
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const { output, unknownFields } = checkValues(values, positionals);
  const inputs = chooseInputs("validate", positionals);
  if (inputs.notice !== undefined) process.stderr.write(`${inputs.notice}\n`);
  const notices: string[] = [];
  const report = await validateInputs(values, unknownFields, inputs.paths, notices, kept);
  notify(report, notices, values["allow-empty"], describeInputs(inputs));
  const text = formatReport(report, output, {
    summary: values.summary,
    color: output === "text" && useColor(values.color),
  });
  await writeText(process.stdout, text);
  return exitCode(report, { allowEmpty: values["allow-empty"] });
}

/**
 * `--threads N` was asked for and measured: worker threads took several times one thread's wall
 * time even on 10,000 resources (each worker loads the validators and starts with a cold JIT;
 * docs/validate.md), so validate runs in one thread and a script that passes it is told so.
 */
function threadsRemoved(): McpfleetError {
  return usageError(
    "validate",
    "--threads is not an option: validate runs in one thread, which was faster than worker threads on every input measured (10,000 resources included); drop --threads",
  );
}

/** `--skip A,B --skip C` as kubeconform takes it: comma-separated, repeatable. */
function kindList(values: readonly string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((v) => v.split(","))
    .map((k) => k.trim())
    .filter((k) => k !== "");
}

/** The line saying a directory mcpfleet wrote was left out of a recursive read. */
export function skippedDirNotice(command: string, dir: string): string {
  return `${command}: skipped ${dir}: written by mcpfleet (it holds .mcpfleet-output.json), not input; name it to read it`;
}

/** `--unknown-fields`, with `--strict` as the old spelling of its default. */
function unknownFieldsOption(mode: string | undefined, strict: boolean): UnknownFields {
  if (mode === undefined) return "error";
  if (!isUnknownFields(mode)) {
    throw new McpfleetError(
      "ERR_USAGE",
      `validate: unknown --unknown-fields mode "${mode}"${didYouMean(mode, UNKNOWN_FIELDS)}; use one of ${UNKNOWN_FIELDS.join(", ")}`,
    );
  }
  if (strict && mode !== "error") {
    throw new McpfleetError(
      "ERR_USAGE",
      `validate: --strict means --unknown-fields=error; it cannot go with --unknown-fields=${mode}`,
    );
  }
  return mode;
}

function isUnknownFields(mode: string): mode is UnknownFields {
  return (UNKNOWN_FIELDS as readonly string[]).includes(mode);
}
