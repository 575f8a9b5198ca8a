// `make bench` for the cost of CEL rules over long lists: one VirtualMCPServer whose embedded
// config lists 2,000 and then 8,000 static backends, validated at all three levels. The
// backends' uniqueness rule (`backends.all(b, backends.exists_one(c, c.name == b.name))`) is
// quadratic as written; validation must stay linear, so four times the backends may cost at
// most five times the time (quadratic would be sixteen).
import { stringify } from "yaml";
import { validateTexts } from "../src/validate/index.js";

const TARGET_RATIO = 5;
const SMALL = 2_000;
const LARGE = 8_000;

function document(backends: number): string {
  return stringify({
    apiVersion: "toolhive.stacklok.dev/v1alpha1",
    kind: "VirtualMCPServer",
    metadata: { name: "gateway", namespace: "bench" },
    spec: {
      groupRef: "tools",
      config: {
        groupRef: "tools",
        backends: Array.from({ length: backends }, (_, i) => ({
          name: `backend-${i}`,
          url: `http://backend-${i}.bench.svc:8080/mcp`,
          transport: "streamable-http",
        })),
        outgoingAuth: { source: "inline" },
      },
    },
  });
}

/** The best of a few runs, in milliseconds. */
async function time(text: string): Promise<number> {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    await validateTexts([{ name: "gateway.yaml", text }]);
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

const small = document(SMALL);
const large = document(LARGE);
await time(small); // warm-up: schemas loaded and compiled
const smallMs = await time(small);
const largeMs = await time(large);
const ratio = largeMs / smallMs;
console.log(
  `bench: validate-cel-scaling ${Math.round(largeMs)} ms ratio=${ratio.toFixed(2)} ` +
    `(time(${LARGE} backends)/time(${SMALL} backends) = ${Math.round(largeMs)}/${Math.round(smallMs)} ms; target <= ${TARGET_RATIO}, linear is 4)`,
);
if (ratio > TARGET_RATIO) process.exitCode = 1;
