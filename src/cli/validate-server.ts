// `mcpfleet __validate-server SOCKET` (started by a validate run, not by hand): a process that
// keeps validate loaded and runs the validate runs of this user's clients, one at a time, each
// as the client's own process would have run it: its arguments, working directory, environment
// and terminals, its output sent back in order with its exit code. It leaves standard input to
// the client (which keeps large inputs to itself: validate-client.ts). It ends after IDLE_MS
// without a request (docs/validate.md, "The validate server").
import { unlinkSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { reportFailure } from "./failure.js";
import type { KeptRuns } from "./validate.js";
import { LARGE_INPUT_BYTES, inputReaches } from "./input-size.js";
import {
  MAX_MESSAGE_BYTES,
  PROTOCOL,
  answers,
  splitLines,
  type ValidateReply,
  type ValidateRequest,
} from "./validate-socket.js";

/** How long a server waits for its next request before it ends. */
export const IDLE_MS = 15 * 60_000;

/**
 * After its first run, a server runs it again this many times with the output dropped, while no
 * client waits: V8 optimises a function after many calls, and the runs of one repository call
 * the same ones (its kinds' validators and rules, the renderers). Without it the runs after the
 * first took 12 to 20 ms for examples/; after 20 warm-up runs 9 to 10, after 100 (about a second
 * of CPU time, once) 7 to 8.
 */
const WARM_UP_RUNS = 100;

type Send = (reply: ValidateReply) => void;

function isRequest(value: unknown): value is ValidateRequest {
  const r = value as Partial<ValidateRequest> | null;
  return (
    typeof r === "object" &&
    r !== null &&
    typeof r.protocol === "number" &&
    Array.isArray(r.argv) &&
    r.argv.every((a) => typeof a === "string") &&
    typeof r.cwd === "string" &&
    typeof r.env === "object" &&
    r.env !== null &&
    typeof r.tty === "object" &&
    r.tty !== null &&
    typeof r.columns === "object" &&
    r.columns !== null
  );
}

/** Makes `stream` a terminal or not, of `columns`, whose writes are sent; returns the undo. */
function redirect(
  name: "stdout" | "stderr",
  tty: boolean,
  columns: number | undefined,
  send: Send,
): () => void {
  const stream: NodeJS.WriteStream = process[name];
  // The stream's own method, put back as it was: never called here, so `this` does not matter.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const { write, isTTY, columns: width } = stream;
  const sendWrite = (chunk: string | Uint8Array, encoding?: unknown, callback?: unknown) => {
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    if (text !== "") send({ stream: name, text });
    const done = typeof encoding === "function" ? encoding : callback;
    if (typeof done === "function") process.nextTick(done);
    return true;
  };
  stream.write = sendWrite;
  Object.assign(stream, { isTTY: tty, columns });
  return () => {
    stream.write = write;
    Object.assign(stream, { isTTY, columns: width });
  };
}

/**
 * Runs `run` as the client's process would: in its directory, with its environment, and with
 * standard streams that are terminals where the client's are (standard input is only asked
 * whether it is one), writing to `send`. This is process-wide state, which is why requests are
 * run one at a time.
 */
async function asClient(request: ValidateRequest, send: Send, run: () => Promise<number>) {
  const env = process.env;
  const stdinTTY = process.stdin.isTTY;
  const undo = [
    redirect("stdout", request.tty.stdout === true, request.columns.stdout, send),
    redirect("stderr", request.tty.stderr === true, request.columns.stderr, send),
  ];
  process.env = request.env;
  process.stdin.isTTY = request.tty.stdin === true;
  try {
    process.chdir(request.cwd);
    return await run();
  } catch (err) {
    return reportFailure(err);
  } finally {
    process.env = env;
    process.stdin.isTTY = stdinTTY;
    for (const u of undo) u();
    process.chdir("/");
  }
}

/** Why this server leaves the request to its client, if it does. */
async function declines(request: ValidateRequest): Promise<string | undefined> {
  if (request.protocol !== PROTOCOL) return `protocol ${request.protocol}, not ${PROTOCOL}`;
  const { readsStandardInput } = await import("./validate.js");
  if (readsStandardInput(request.argv, request.tty.stdin === true)) return "standard input";
  try {
    process.chdir(request.cwd);
  } catch {
    return "a working directory this server cannot enter";
  }
  try {
    // A large input grows a process's memory, which a server would keep: the client validates
    // it, with memory settings of its own (validate-launch.ts).
    if (inputReaches(request.argv, LARGE_INPUT_BYTES)) return "a large input";
  } finally {
    process.chdir("/");
  }
  return undefined;
}

/** Runs `request`, or sends why not; whether it ran. */
async function handle(request: ValidateRequest, send: Send, kept: KeptRuns): Promise<boolean> {
  const why = await declines(request);
  if (why !== undefined) {
    send({ declined: why });
    return false;
  }
  const { main } = await import("./validate.js");
  send({ exitCode: await asClient(request, send, () => main(request.argv, kept)) });
  return true;
}

/**
 * Loads what every run uses: the modules, the schema set and its precompiled validators, so
 * that the first client does not wait for them.
 */
async function preload(): Promise<void> {
  const [{ defaultSchemaSet }] = await Promise.all([
    import("../schema/validator.js"),
    import("./validate.js"),
    import("../synth/render.js"),
    import("../synth/issues.js"),
  ]);
  const set = defaultSchemaSet();
  for (const file of set.files) set.validator(file.id);
}

/** The request on `connection`: its first line, or undefined if it is not one. */
function readRequest(connection: Socket): Promise<unknown> {
  return new Promise((resolve) => {
    let buffer = "";
    connection.setEncoding("utf8");
    const onData = (chunk: string) => {
      buffer += chunk;
      const { lines } = splitLines(buffer);
      if (lines.length > 0 || buffer.length > MAX_MESSAGE_BYTES) {
        connection.off("data", onData);
        try {
          resolve(lines.length > 0 ? JSON.parse(lines[0]!) : undefined);
        } catch {
          resolve(undefined);
        }
      }
    };
    connection.on("data", onData);
    connection.on("error", () => resolve(undefined));
    connection.on("end", () => resolve(undefined));
  });
}

function listenOn(server: Server, socket: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(socket, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/**
 * Listens at `socket`; false when another server already does (two runs started one each). A
 * socket nobody answers at is what a server that died left: it is removed and taken over.
 */
async function listen(server: Server, socket: string): Promise<boolean> {
  try {
    await listenOn(server, socket);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
    if (await answers(socket)) return false;
    try {
      unlinkSync(socket);
    } catch {
      // Gone already: another server took it over first, and listening says so.
    }
    await listenOn(server, socket);
    return true;
  }
}

export async function main(argv: string[]): Promise<number> {
  const [socket] = argv;
  if (socket === undefined || argv.length !== 1) {
    process.stderr.write("mcpfleet: __validate-server SOCKET is started by validate\n");
    return 2;
  }
  // Two runs that found no server each start one: the second leaves before loading anything.
  if (await answers(socket)) return 0;
  await preload();
  // Verdicts, resources and the synthesis check kept from run to run: a client's run reads its
  // files and validates again only what changed since a run before.
  const kept = (await import("./validate.js")).keptRuns();
  process.chdir("/");
  let idle: NodeJS.Timeout | undefined;
  const rest = () => {
    clearTimeout(idle);
    if (server.listening) idle = setTimeout(() => server.close(), IDLE_MS);
  };
  // One run at a time (see asClient); clients waiting come before a warm-up run.
  let queue = Promise.resolve();
  let waiting = 0;
  let warmUps = 0;
  let runs = 0;
  const warmUp = (request: ValidateRequest) => {
    queue = queue.then(async () => {
      if (!server.listening) return;
      if (waiting > 0) {
        setImmediate(() => warmUp(request)); // after the clients
        return;
      }
      // Every other one validates every file again: a client's run does when its files change.
      const keptOrNot = warmUps % 2 === 0 ? kept : undefined;
      await asClient(
        request,
        () => undefined,
        async () => (await import("./validate.js")).main(request.argv, keptOrNot),
      );
      if (++warmUps < WARM_UP_RUNS) setImmediate(() => warmUp(request));
    });
  };
  const server = createServer((connection) => {
    connection.on("error", () => undefined); // a client gone away: nothing to tell it
    clearTimeout(idle);
    waiting++;
    queue = queue.then(async () => {
      waiting--;
      const request = await readRequest(connection);
      const send: Send = (reply) => {
        if (!connection.destroyed) connection.write(`${JSON.stringify(reply)}\n`);
      };
      if (isRequest(request)) {
        if (request.stop === true) {
          send({ stopped: { runs } });
          server.close();
        } else if (await handle(request, send, kept)) {
          if (++runs === 1) setImmediate(() => warmUp(request));
        }
      }
      connection.end();
      rest();
    });
  });
  if (!(await listen(server, socket))) return 0;
  rest();
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.once(signal, () => server.close());
  }
  await new Promise((resolve) => server.once("close", resolve));
  clearTimeout(idle);
  return 0;
}
