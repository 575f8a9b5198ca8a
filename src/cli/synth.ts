// `mcpfleet synth [PATH...] [--output-dir DIR | -o yaml|json]`: validates resource YAML, then
// renders it into the Kubernetes manifests an operator would create, one file per namespace (and
// the install bundle only when asked), into a directory (never deleting what it did not write) or
// to stdout.
import { parse as parseYaml, stringify } from "yaml";
import { parseCommandArgs, usageError } from "./args.js";
import { chooseInputs, describeInputs } from "./inputs.js";
import { progressLine } from "./progress.js";
import { loadPaths } from "../synth/load.js";
import { type Resource, ResourceSet } from "../synth/model.js";
import {
  DEFAULT_SYNTH_OPTIONS,
  defaultRegistryImage,
  REGISTRY_SERVERS,
  type RegistryServerKind,
  type SynthOptions,
} from "../synth/options.js";
import { hasErrors, locateIssues, type SynthIssue, synthIssueLine } from "../synth/issues.js";
import { type RenderedFiles, renderFiles } from "../synth/output.js";
import { checkOutputDir, type OutputGuard, writeOutputDir } from "../synth/output-dir.js";
import { computeStatuses } from "../synth/status.js";
import {
  DEFAULT_OPTIONS,
  UNKNOWN_FIELDS,
  type UnknownFields,
  exitCode,
  formatReport,
} from "../validate/index.js";
import { didYouMean } from "../suggest.js";
import { writeText } from "./write.js";

const USAGE = `Usage: mcpfleet synth [options] [PATH|-]...

Validates resource YAML (files, directories searched recursively, or - for standard input;
with no path, standard input when it is not a terminal, else .) with every level of mcpfleet validate, then writes the Kubernetes manifests for it:
DIR/<namespace>.yaml per namespace (with --install also the install bundle in DIR/install/).
Documents that are not resources (registry-server configs, registry data) are skipped. When
anything is invalid, the errors are printed as validate prints them and nothing is written.
What rendering itself finds is printed to standard error in the same shape, one line each: a
warning (something asked for is rendered without, e.g. a backend reached without credentials)
does not stop the run; an error (a resource that renders nothing) fails it, and nothing is
written.

synth writes into DIR and removes only files an earlier synth wrote there (listed in
DIR/.mcpfleet-output.json). It refuses a DIR that is a file or a device, the current directory,
an input or a directory holding one, and a non-empty directory it did not write (unless --force).

Options:
  -d, --output-dir DIR      output directory (default dist)
  -o, --output FORMAT       print the manifests to standard output instead: yaml or json
      --force               write into a non-empty directory synth did not write (its other
                            files are kept)
      --status              also print the computed status of every resource (YAML)
  -n, --namespace NS        namespace of resources whose metadata has none (default "default")
      --runner-image IMG    proxy runner image (default ${DEFAULT_SYNTH_OPTIONS.runnerImage})
      --vmcp-image IMG      virtual server image (default ${DEFAULT_SYNTH_OPTIONS.vmcpImage})
      --registry-server S   program an MCPRegistry deploys: mcpfleet (default: this project's
                            \`registry serve\`) or toolhive (the reference's registry server)
      --registry-image IMG  registry server image (default ${DEFAULT_SYNTH_OPTIONS.registryImage};
                            with --registry-server=toolhive ${defaultRegistryImage("toolhive")})
      --embedding-image IMG embedding server image (default ${DEFAULT_SYNTH_OPTIONS.embeddingImage})
      --install             also write the install bundle: the CRDs and the controller, as
                            mcpfleet install --export prints it (DIR/install/, or first on
                            standard output)
      --unknown-fields MODE error (default), warn or ignore: fields the schema does not have;
                            with warn or ignore they are left out of what is rendered, as the
                            API server prunes them
      --no-namespaces       leave out the Namespace each namespace's file starts with
  -h, --help                show this help

-o DIR (a directory rather than a format) still works for one release and warns: use -d DIR.

Exit status: 0 written, 1 invalid input, a resource that renders nothing or no resource found
(nothing written), 2 usage error or unreadable path.
See mcpfleet docs synth (docs/synth.md of the installation).`;

/** Formats `-o` prints to standard output. */
const PRINT_FORMATS = ["yaml", "json"] as const;
type PrintFormat = (typeof PRINT_FORMATS)[number];

/** Where the run's output goes: a directory, or standard output in a format. */
type Destination = { dir: string } | { print: PrintFormat };

function destination(values: {
  output?: string | undefined;
  "output-dir"?: string | undefined;
}): Destination {
  const { output, "output-dir": dir } = values;
  if (output !== undefined && dir !== undefined) {
    throw usageError("synth", "give -o FORMAT or -d DIR, not both");
  }
  if (dir !== undefined) {
    if (dir === "") throw usageError("synth", "--output-dir must not be empty");
    return { dir };
  }
  if (output === undefined) return { dir: "dist" };
  if ((PRINT_FORMATS as readonly string[]).includes(output))
    return { print: output as PrintFormat };
  if (output === "" || output.startsWith("=")) {
    throw usageError("synth", `-o takes ${PRINT_FORMATS.join(" or ")}, not "${output}"`);
  }
  process.stderr.write(
    `synth: -o DIR is deprecated and will mean only an output format; use -d ${output} (--output-dir)\n`,
  );
  return { dir: output };
}

/** Every file's objects as one stream, install bundle first (apply order), as kustomize prints. */
function printable(files: ReadonlyMap<string, string>, format: PrintFormat): string {
  const ordered = [...files.entries()].sort(
    ([a], [b]) => Number(!a.startsWith("install/")) - Number(!b.startsWith("install/")),
  );
  const yaml = ordered.map(([, text]) => text).filter((t) => t !== "");
  if (format === "yaml") return yaml.join("---\n");
  // JSON: a v1 List, the form kubectl prints for several objects.
  const items = yaml.flatMap((text) =>
    text.split(/^---\n/m).map((doc) => (parseYaml(doc) as unknown) ?? null),
  );
  return `${JSON.stringify({ apiVersion: "v1", kind: "List", items: items.filter((i) => i !== null) }, null, 2)}\n`;
}

/** The flags about input that need checking beyond their type; returns the unknown-fields mode. */
function checkInputFlags(
  values: Record<string, string | boolean | undefined>,
  positionals: string[],
): UnknownFields {
  for (const flag of [
    "namespace",
    "runner-image",
    "vmcp-image",
    "registry-image",
    "embedding-image",
  ] as const) {
    if (values[flag] === "") throw usageError("synth", `--${flag} must not be empty`);
  }
  if (positionals.filter((p) => p === "-").length > 1) {
    throw usageError("synth", "standard input (-) can be read only once");
  }
  const unknownFields = String(values["unknown-fields"]);
  if (!(UNKNOWN_FIELDS as readonly string[]).includes(unknownFields)) {
    throw usageError(
      "synth",
      `unknown --unknown-fields mode "${unknownFields}"${didYouMean(unknownFields, UNKNOWN_FIELDS)}; use one of ${UNKNOWN_FIELDS.join(", ")}`,
    );
  }
  return unknownFields as UnknownFields;
}

/** The images and registry server the objects are rendered with. */
function synthOptions(values: {
  "runner-image": string;
  "vmcp-image": string;
  "registry-server": string;
  "registry-image"?: string | undefined;
  "embedding-image": string;
}): SynthOptions {
  const registryServer = values["registry-server"] as RegistryServerKind;
  if (!REGISTRY_SERVERS.includes(registryServer)) {
    throw usageError(
      "synth",
      `--registry-server must be ${REGISTRY_SERVERS.join(" or ")}, not "${registryServer}"`,
    );
  }
  return {
    runnerImage: values["runner-image"],
    vmcpImage: values["vmcp-image"],
    registryServer,
    registryImage: values["registry-image"] ?? defaultRegistryImage(registryServer),
    embeddingImage: values["embedding-image"],
  };
}

/** Prints what rendering reported, one line each; true when a resource rendered nothing. */
async function printIssues(issues: SynthIssue[], where: string): Promise<boolean> {
  if (issues.length > 0) {
    await writeText(process.stderr, issues.map((i) => `${synthIssueLine(i)}\n`).join(""));
  }
  if (!hasErrors(issues)) return false;
  const failed = issues.filter((i) => i.severity === "error").length;
  await writeText(
    process.stderr,
    `synth: ${failed} resource(s) render nothing; nothing written to ${where}\n`,
  );
  return true;
}

/** Writes the files into `dir`, then (when asked) the resources' status, then a summary line. */
async function writeDir(
  dir: string,
  rendered: RenderedFiles,
  guard: OutputGuard,
  resources: Resource[],
  withStatus: boolean,
): Promise<void> {
  const outcome = writeOutputDir(dir, rendered.files, guard);
  if (withStatus) {
    const statuses = computeStatuses(new ResourceSet(resources), { resolved: rendered.resolved });
    await writeText(
      process.stdout,
      statuses.map((s) => stringify(s, { lineWidth: 0 })).join("---\n"),
    );
  }
  const removed = outcome.removed.length > 0 ? `, ${outcome.removed.length} removed` : "";
  await writeText(
    process.stderr,
    `synth: ${resources.length} resource(s) -> ${rendered.objects} object(s) in ${rendered.namespaces} namespace file(s); ${dir}: ${outcome.written.length} file(s) written, ${outcome.unchanged.length} unchanged${removed}\n`,
  );
}

/** The command line, parsed; a usage error for an unknown or malformed flag. */
function parseSynthArgs(argv: string[]) {
  return parseCommandArgs("synth", {
    args: argv,
    allowPositionals: true,
    allowNegative: true,
    strict: true,
    options: {
      output: { type: "string", short: "o" },
      "output-dir": { type: "string", short: "d" },
      force: { type: "boolean", default: false },
      status: { type: "boolean", default: false },
      namespace: { type: "string", short: "n", default: DEFAULT_OPTIONS.namespace },
      "runner-image": { type: "string", default: DEFAULT_SYNTH_OPTIONS.runnerImage },
      "vmcp-image": { type: "string", default: DEFAULT_SYNTH_OPTIONS.vmcpImage },
      "registry-server": { type: "string", default: DEFAULT_SYNTH_OPTIONS.registryServer },
      "registry-image": { type: "string" },
      "embedding-image": { type: "string", default: DEFAULT_SYNTH_OPTIONS.embeddingImage },
      // The install bundle is a cluster's, not the resources': printed only when asked, so that
      // synth -o yaml | kubectl apply -f - applies the resources and nothing else.
      install: { type: "boolean", default: false },
      "unknown-fields": { type: "string", default: "error" },
      namespaces: { type: "boolean", default: true },
      help: { type: "boolean", short: "h", default: false },
    },
  });
}

export async function main(argv: string[]): Promise<number> {
  const parsed = parseSynthArgs(argv);
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const unknownFields = checkInputFlags(values, positionals);
  const to = destination(values);
  if ("print" in to && values.status) {
    throw usageError("synth", "--status prints to standard output too; use it with -d DIR");
  }
  const chosen = chooseInputs("synth", positionals);
  const inputs = chosen.paths;
  if (chosen.notice !== undefined) process.stderr.write(`${chosen.notice}\n`);
  // Refuse a destructive output directory before reading anything.
  const guard = {
    flag: "--output-dir",
    inputs,
    force: values.force,
    generator: "mcpfleet synth",
    // Output of a synth from before the manifest: namespace files and install/ only.
    legacy: { signature: "install/00-crds.yaml", subdirs: ["install"] },
  };
  if ("dir" in to) checkOutputDir(to.dir, guard);
  const options = synthOptions(values);
  const progress = progressLine();
  progress.update(`synth: validating ${inputs.join(" ")}…`);
  const loaded = await loadPaths(inputs, {
    namespace: values.namespace,
    unknownFields,
    // A directory an earlier synth wrote is output, not input (validate leaves it out alike).
    onSkippedDir: (dir) =>
      void process.stderr.write(
        `synth: skipped ${dir}: written by mcpfleet (it holds .mcpfleet-output.json), not input\n`,
      ),
  });
  progress.done();
  const report = formatReport(loaded.report, "text", { summary: false, color: false });
  const where = "dir" in to ? to.dir : "standard output";
  if (!loaded.valid) {
    await writeText(process.stdout, report);
    await writeText(process.stderr, `synth: invalid input; nothing written to ${where}\n`);
    return Math.max(exitCode(loaded.report), 1);
  }
  // Warnings do not stop synthesis; they are shown as validate shows them.
  await writeText(process.stderr, report);
  if (loaded.resources.length === 0) {
    await writeText(
      process.stderr,
      `synth: no resources found in ${describeInputs(chosen)}; nothing written to ${where}\n`,
    );
    return 1;
  }
  progress.update(`synth: rendering ${loaded.resources.length} resource(s)…`);
  const rendered = renderFiles(loaded.resources, options, {
    install: values.install,
    namespaces: values.namespaces,
  });
  progress.done();
  if (await printIssues(locateIssues(rendered.issues, loaded.report), where)) return 1;
  if ("dir" in to) {
    await writeDir(to.dir, rendered, guard, loaded.resources, values.status);
    return 0;
  }
  await writeText(process.stdout, printable(rendered.files, to.print));
  await writeText(
    process.stderr,
    `synth: ${loaded.resources.length} resource(s) -> ${rendered.objects} object(s) written to ${where}\n`,
  );
  return 0;
}
