// `mcpfleet synth [PATH...] [-o DIR]`: validates resource YAML, then renders it into the
// Kubernetes manifests an operator would create, one file per namespace plus the install bundle.
import { stringify } from "yaml";
import { parseCommandArgs } from "./args.js";
import { McpfleetError } from "../errors.js";
import { loadPaths } from "../synth/load.js";
import { ResourceSet } from "../synth/model.js";
import { DEFAULT_SYNTH_OPTIONS, type SynthOptions } from "../synth/options.js";
import { renderFiles, writeFilesAtomically } from "../synth/output.js";
import { computeStatuses } from "../synth/status.js";
import { DEFAULT_OPTIONS, exitCode, formatReport } from "../validate/index.js";

const USAGE = `Usage: mcpfleet synth [options] [PATH|-]...

Validates resource YAML (files, directories searched recursively, or - for standard input;
default .) with every level of mcpfleet validate, then writes the Kubernetes manifests for it:
DIR/<namespace>.yaml per namespace and the install bundle in DIR/install/. Documents that are
not resources (registry-server configs, registry data) are skipped. When anything is invalid,
the errors are printed as validate prints them and DIR is left untouched.

Options:
  -o, --output DIR          output directory (default dist)
      --status              also print the computed status of every resource (YAML)
  -n, --namespace NS        namespace of resources whose metadata has none (default "default")
      --runner-image IMG    proxy runner image (default ${DEFAULT_SYNTH_OPTIONS.runnerImage})
      --vmcp-image IMG      virtual server image (default ${DEFAULT_SYNTH_OPTIONS.vmcpImage})
      --registry-image IMG  registry API image (default ${DEFAULT_SYNTH_OPTIONS.registryImage})
      --embedding-image IMG embedding server image (default ${DEFAULT_SYNTH_OPTIONS.embeddingImage})
      --no-install          do not write the install bundle
  -h, --help                show this help

Exit status: 0 written, 1 invalid input (nothing written), 2 usage error or unreadable path.
See docs/synth.md.`;

function write(stream: NodeJS.WriteStream, text: string): Promise<void> {
  if (text === "") return Promise.resolve();
  return new Promise((resolve, reject) =>
    stream.write(text, (err) => (err ? reject(err) : resolve())),
  );
}

export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs("synth", {
    args: argv,
    allowPositionals: true,
    allowNegative: true,
    strict: true,
    options: {
      output: { type: "string", short: "o", default: "dist" },
      status: { type: "boolean", default: false },
      namespace: { type: "string", short: "n", default: DEFAULT_OPTIONS.namespace },
      "runner-image": { type: "string", default: DEFAULT_SYNTH_OPTIONS.runnerImage },
      "vmcp-image": { type: "string", default: DEFAULT_SYNTH_OPTIONS.vmcpImage },
      "registry-image": { type: "string", default: DEFAULT_SYNTH_OPTIONS.registryImage },
      "embedding-image": { type: "string", default: DEFAULT_SYNTH_OPTIONS.embeddingImage },
      install: { type: "boolean", default: true },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  for (const flag of [
    "output",
    "namespace",
    "runner-image",
    "vmcp-image",
    "registry-image",
    "embedding-image",
  ] as const) {
    if (values[flag] === "")
      throw new McpfleetError("ERR_USAGE", `synth: --${flag} must not be empty`);
  }
  if (positionals.filter((p) => p === "-").length > 1) {
    throw new McpfleetError("ERR_USAGE", "synth: standard input (-) can be read only once");
  }
  const options: SynthOptions = {
    runnerImage: values["runner-image"],
    vmcpImage: values["vmcp-image"],
    registryImage: values["registry-image"],
    embeddingImage: values["embedding-image"],
  };
  const loaded = await loadPaths(positionals, { namespace: values.namespace });
  const report = formatReport(loaded.report, "text", { summary: false, color: false });
  if (!loaded.valid) {
    await write(process.stdout, report);
    await write(process.stderr, `synth: invalid input; nothing written to ${values.output}\n`);
    return Math.max(exitCode(loaded.report), 1);
  }
  // Warnings (unknown fields) do not stop synthesis; they are shown as validate shows them.
  await write(process.stderr, report);
  const rendered = renderFiles(loaded.resources, options, { install: values.install });
  writeFilesAtomically(values.output, rendered.files);
  if (values.status) {
    const statuses = computeStatuses(new ResourceSet(loaded.resources));
    await write(process.stdout, statuses.map((s) => stringify(s, { lineWidth: 0 })).join("---\n"));
  }
  await write(
    process.stderr,
    `synth: ${loaded.resources.length} resource(s) -> ${rendered.objects} object(s) in ${rendered.namespaces} namespace file(s), ${rendered.files.size} file(s) written to ${values.output}\n`,
  );
  return 0;
}
