// The first thing a validate run does: hand the run to this installation's validate server when
// one is listening, and print what it answers. A server has the validators, the YAML parser and
// the renderers loaded and compiled, so a small input is validated in a few milliseconds where a
// fresh process spends some 150 on loading them (docs/validate.md, "The validate server"). When
// there is none, the run validates on its own and then starts one in the background for the next.
// Imports Node's own modules and two small modules of ours only: the rest of the CLI is what a
// served run avoids loading, and a served run of a small input takes about as long as Node's own
// start, so the client does nothing the server can do instead (the size of the input is
// measured there).
import { dropOutputReaderGone } from "./write.js";
import {
  MAX_MESSAGE_BYTES,
  PROTOCOL,
  serverSocket,
  splitLines,
  type ValidateReply,
  type ValidateRequest,
} from "./validate-socket.js";

// Node's modules as validate-socket.ts takes them (see there).
const { createConnection } = process.getBuiltinModule("node:net");
const { isatty } = process.getBuiltinModule("node:tty");

/** A client waits this long for its server to say something before it validates on its own. */
const SILENCE_MS = 20_000;

export type ServerOutcome =
  | { served: true; exitCode: number }
  | {
      served: false;
      /** Where a server for the next run can listen: there was none (or a dead one) there. */
      startAt?: string;
    };

function requestOf(argv: string[]): ValidateRequest {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined) env[name] = value;
  }
  return {
    protocol: PROTOCOL,
    argv,
    cwd: process.cwd(),
    env,
    // isatty, not process.stdin: making the stream of standard input costs 2 ms, and a served
    // run never reads it.
    tty: { stdin: isatty(0), stdout: isatty(1), stderr: isatty(2) },
    columns: {
      stdout: isatty(1) ? process.stdout.columns : undefined,
      stderr: isatty(2) ? process.stderr.columns : undefined,
    },
  };
}

/** Whether `reply` is a server's last: nothing is read after it. */
function isLast(reply: ValidateReply): boolean {
  return "exitCode" in reply || "declined" in reply || "stopped" in reply;
}

/**
 * The server's replies to `request`, up to its last; rejects when there is no server or it stops
 * answering. The connection is dropped on the last reply, not when the server closes it: the
 * server's own end of the run is no part of the client's.
 */
export function exchange(socket: string, request: ValidateRequest): Promise<ValidateReply[]> {
  return new Promise((resolve, reject) => {
    const connection = createConnection(socket);
    const replies: ValidateReply[] = [];
    let buffer = "";
    let received = 0;
    connection.setEncoding("utf8");
    connection.setTimeout(SILENCE_MS, () =>
      connection.destroy(
        Object.assign(new Error("the validate server stopped answering"), { code: "ETIMEDOUT" }),
      ),
    );
    // Written, not ended: the server answers on the same connection and closes it when done.
    connection.on("connect", () => connection.write(`${JSON.stringify(request)}\n`));
    connection.on("data", (chunk: string) => {
      received += chunk.length;
      if (received > 64 * MAX_MESSAGE_BYTES) {
        connection.destroy(new Error("the validate server said too much"));
        return;
      }
      const { lines, rest } = splitLines(buffer + chunk);
      buffer = rest;
      try {
        for (const line of lines) {
          const reply = JSON.parse(line) as ValidateReply;
          replies.push(reply);
          if (isLast(reply)) {
            connection.destroy();
            break;
          }
        }
      } catch (err) {
        connection.destroy(err as Error);
      }
    });
    connection.on("error", reject);
    connection.on("close", () => resolve(replies));
  });
}

/**
 * Stops the server at `socket` once the runs it has started are done: how many clients' runs it
 * ran, or undefined when no server answered.
 */
export async function stopServer(socket: string): Promise<number | undefined> {
  const replies = await exchange(socket, { ...requestOf([]), stop: true }).catch(() => []);
  for (const reply of replies) if ("stopped" in reply) return reply.stopped.runs;
  return undefined;
}

/** Whether the replies fall short of a whole run (a server that went away mid-run, say). */
function incomplete(replies: ValidateReply[]): boolean {
  const last = replies.at(-1);
  return last === undefined || !("exitCode" in last);
}

/**
 * Validates `argv` (validate's arguments) on the server for `entry` (see serverSocket) and
 * prints its output, or says that this process must validate on its own. Nothing is printed
 * unless the server finished the run: its output is held until the exit code arrives, so a
 * server that dies mid-run leaves the run to this process with nothing written twice.
 */
export async function validateOnServer(argv: string[], entry: string): Promise<ServerOutcome> {
  const socket = serverSocket(process.env, entry);
  if (socket === undefined) return { served: false };
  let replies: ValidateReply[];
  try {
    replies = await exchange(socket, requestOf(argv));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // No server there, or one that died and left its socket: this run can start the next.
    const missing = code === "ENOENT" || code === "ECONNREFUSED";
    return missing ? { served: false, startAt: socket } : { served: false };
  }
  if (replies.some((r) => "declined" in r) || incomplete(replies)) return { served: false };
  let exitCode = 1;
  // As main.ts does for a run of its own, for the streams written to: a stream of standard
  // output made and not used costs a run that prints nothing (the usual one) a millisecond.
  const written = new Set<NodeJS.WriteStream>();
  for (const reply of replies) {
    if ("exitCode" in reply) exitCode = reply.exitCode;
    else if ("stream" in reply) {
      const stream = process[reply.stream];
      if (!written.has(stream)) dropOutputReaderGone([stream]);
      written.add(stream);
      stream.write(reply.text);
    }
  }
  return { served: true, exitCode };
}

/**
 * Starts a server at `socket` in the background, for the runs after this one: `command` is how
 * this CLI is started (Node's arguments and the script, or nothing for the single executable).
 * Detached in a session of its own, with no standard stream of ours: it outlives this process
 * and holds no pipe that a caller waits on. It ends itself after a while without requests.
 */
export function startServer(socket: string, command: string[]): void {
  try {
    // Taken here, not imported: only a run that starts a server pays for loading it.
    const { spawn } = process.getBuiltinModule("node:child_process");
    spawn(process.execPath, [...command, "__validate-server", socket], {
      cwd: "/",
      detached: true,
      stdio: "ignore",
    }).unref();
  } catch {
    // No server: the next run validates on its own, as this one did.
  }
}

/**
 * What bin/mcpfleet.js and the single executable do first for `validate ARGS`: the run on the
 * server when there is one (true: the exit code is set), else false, and when there was no
 * server, one is started for the next run as this process exits. `entry` names the
 * installation (see serverSocket), `command` is how to start it again (see startServer).
 */
export async function validatedOnServer(
  argv: string[],
  entry: string,
  command: string[],
): Promise<boolean> {
  const outcome = await validateOnServer(argv, entry);
  if (outcome.served) {
    process.exitCode = outcome.exitCode;
    return true;
  }
  const socket = outcome.startAt;
  if (socket !== undefined) process.once("exit", () => startServer(socket, command));
  return false;
}
