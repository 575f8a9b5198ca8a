// `mcpfleet validate [PATH|-]...`: schema, CEL and reference validation of resource YAML.
import { McpfleetError } from "../errors.js";
import { parseCommandArgs } from "./args.js";
import {
  DEFAULT_OPTIONS,
  FORMATS,
  exitCode,
  formatReport,
  isFormat,
  validatePaths,
} from "../validate/index.js";

const USAGE = `Usage: mcpfleet validate [options] [PATH|-]...

Validates resource YAML (files, directories searched recursively for .yaml, .yml and .json,
or - for standard input; default .) at three levels: schema, CEL rules and references
across all the documents given.

Options:
  -o, --output FORMAT      text (default), json, junit or tap
      --summary            add a summary (text and tap)
  -n, --namespace NS       namespace of resources whose metadata has none (default "default")
      --strict             unknown fields are errors, not warnings
      --allow-missing-refs references to resources not given are warnings, not errors
      --registry-config    treat every document as a registry-server configuration file
      --kube               validate core Kubernetes kinds against Kubernetes' OpenAPI schemas
      --color, --no-color  force colours on or off (default: on for a terminal)
  -h, --help               show this help

Exit status: 0 all valid, 1 something invalid, 2 usage error or unreadable path.
See docs/validate.md.`;

function useColor(flag: boolean | undefined): boolean {
  if (flag !== undefined) return flag;
  const { NO_COLOR, FORCE_COLOR } = process.env;
  if (NO_COLOR !== undefined && NO_COLOR !== "") return false;
  if (FORCE_COLOR !== undefined && FORCE_COLOR !== "" && FORCE_COLOR !== "0") return true;
  return process.stdout.isTTY === true;
}

export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs("validate", {
    args: argv,
    allowPositionals: true,
    allowNegative: true,
    strict: true,
    options: {
      output: { type: "string", short: "o", default: "text" },
      summary: { type: "boolean", default: false },
      namespace: { type: "string", short: "n", default: DEFAULT_OPTIONS.namespace },
      strict: { type: "boolean", default: false },
      "allow-missing-refs": { type: "boolean", default: false },
      "registry-config": { type: "boolean", default: false },
      kube: { type: "boolean", default: false },
      color: { type: "boolean" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!isFormat(values.output)) {
    throw new McpfleetError(
      "ERR_USAGE",
      `validate: unknown output format "${values.output}"; use one of ${FORMATS.join(", ")}`,
    );
  }
  if (values.namespace === "") {
    throw new McpfleetError("ERR_USAGE", "validate: --namespace must not be empty");
  }
  if (positionals.filter((p) => p === "-").length > 1) {
    throw new McpfleetError("ERR_USAGE", "validate: standard input (-) can be read only once");
  }
  const report = await validatePaths(positionals, {
    namespace: values.namespace,
    strict: values.strict,
    allowMissingRefs: values["allow-missing-refs"],
    registryConfig: values["registry-config"],
    kube: values.kube,
  });
  const text = formatReport(report, values.output, {
    summary: values.summary,
    color: values.output === "text" && useColor(values.color),
  });
  // A reader gone before the end (EPIPE, see main.ts) takes nothing from the verdict.
  await new Promise<void>((resolve, reject) =>
    process.stdout.write(text, (err) =>
      err && (err as NodeJS.ErrnoException).code !== "EPIPE" ? reject(err) : resolve(),
    ),
  );
  return exitCode(report);
}
