// V8's young generation kept small, for the CLI's validate and the registry server. A validate
// run keeps it small. V8 doubles it each time more bytes have
// survived scavenges than it holds, and a run keeps a little of every file (results, reference
// facts, texts) until the end: on 10,000 resources it grew to 64 MB, the largest part of the
// run's peak memory, while what one file leaves for the next is under a megabyte. The flag that
// caps it (--max-semi-space-size) is read only as the process starts, and given there it cost
// memory (the modules' start-up garbage, promoted early, stayed in the old generation); but the
// growth factor is read at each scavenge. So the launcher holds the young generation at its
// initial size while the modules load, and the run lets it grow to a small cap and holds it
// there (docs/validate.md, "Start-up and memory"). The registry server does the same once its
// first syncs are done (docs/registry.md, "Footprint").
import { getHeapSpaceStatistics } from "node:v8";
import {
  V8_GROWTH_FACTOR,
  nodeFlagGiven,
  setYoungGenerationGrowth,
} from "../young-generation-growth.js";

/** Both semi-spaces together, in MB: the smallest measured that promotes no per-file garbage. */
export const YOUNG_GENERATION_CAP_MB = 4;

/** Whether the command line or NODE_OPTIONS sizes the young generation. */
const sizedByNodeOptions = (): boolean => nodeFlagGiven("semi-space");

/** Stops the young generation's growth where it is now (the launcher, before modules load). */
export function holdYoungGeneration(): void {
  if (!sizedByNodeOptions()) setYoungGenerationGrowth(1);
}

/**
 * A check to call once per file: the young generation may grow (as V8 would) until it holds
 * `capMb`, then it is held there. Growth already past the cap is kept: V8 does not shrink it on
 * request. Process-wide, for a process that runs one command (the CLI).
 */
export function youngGenerationCap(capMb = YOUNG_GENERATION_CAP_MB): () => void {
  let held = sizedByNodeOptions();
  let growing = false;
  return () => {
    if (held) return;
    const young = getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
    if (young !== undefined && young.space_size < capMb * 1024 * 1024) {
      if (!growing) setYoungGenerationGrowth(V8_GROWTH_FACTOR);
      growing = true;
      return;
    }
    setYoungGenerationGrowth(1);
    held = true;
  };
}
