// `mcpfleet docs [NAME]`: the documentation shipped with this installation, printed. Help texts
// point here rather than at a repository path, since an npm installation or the single
// executable has no checkout: the package ships docs/, the executable carries a copy.
import { installedFiles, installedPlace } from "../assets.js";
import { didYouMean } from "../suggest.js";
import { usageError } from "./args.js";

const USAGE = `Usage: mcpfleet docs [NAME]

Prints the document NAME (docs/NAME.md of this installation: validate, synth, gitops,
registry, api/mcpserver, ...) as Markdown; with no NAME, lists the documents and where they are.

Options:
  -h, --help   show this help`;

export function main(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(USAGE);
    return Promise.resolve(0);
  }
  if (argv.length > 1) throw usageError("docs", "give at most one document name");
  const docs = new Map(
    installedFiles("docs", ".md").map((f) => [f.path.slice(0, -".md".length), f.text]),
  );
  const [name] = argv;
  if (name === undefined) {
    console.log(`Documents ${installedPlace("docs")} (mcpfleet docs NAME prints one):`);
    for (const doc of docs.keys()) console.log(`  ${doc}`);
    return Promise.resolve(0);
  }
  const text = docs.get(name.replace(/^docs\//, "").replace(/\.md$/, ""));
  if (text === undefined) {
    throw usageError("docs", `no document "${name}"${didYouMean(name, [...docs.keys()])}`);
  }
  process.stdout.write(text);
  return Promise.resolve(0);
}
