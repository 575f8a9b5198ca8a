// Where the validate server of this installation listens, and what it and its clients say to each
// other (docs/validate.md, "The validate server"). Loaded before anything else of a validate run,
// so it uses only Node's own modules, taken with getBuiltinModule: an `import` of node:fs makes
// the module's ES facade, which reads every export and so loads fs/promises, 2 ms of a served
// run that takes some 30 in all.
const { lstatSync, mkdirSync, statSync } = process.getBuiltinModule("node:fs");
const { createConnection } = process.getBuiltinModule("node:net");
const path = process.getBuiltinModule("node:path");

/** Bumped whenever a message changes shape: a client and a server of two versions never meet. */
export const PROTOCOL = 1;

/** A request or reply longer than this is not one of ours. */
export const MAX_MESSAGE_BYTES = 1024 * 1024;

/** What a client sends: one line of JSON. */
export interface ValidateRequest {
  protocol: number;
  /** validate's arguments (after `validate`). */
  argv: string[];
  /** Ends the server instead (its runs so far finished first). */
  stop?: boolean;
  cwd: string;
  env: Record<string, string>;
  /** Whether each of the client's standard streams is a terminal, and its width. */
  tty: { stdin: boolean; stdout: boolean; stderr: boolean };
  columns: { stdout?: number; stderr?: number };
}

/**
 * What a server sends, one line of JSON each: output in the order it was written, then the exit
 * code; or, before any output, that the client must validate on its own (standard input to
 * read, an input too large for a process that stays, an unknown protocol).
 */
export type ValidateReply =
  | { stream: "stdout" | "stderr"; text: string }
  | { exitCode: number }
  | { declined: string }
  /** The answer to a stop: how many clients' runs the server ran. */
  | { stopped: { runs: number } };

/**
 * Variables read as a process starts (Node's options and compile cache, the C library's
 * allocator and locale, the time zone): a server runs a client's request with the client's
 * environment, but these it has from its own start, so they name the server.
 */
const STARTUP_VARIABLE = /^(NODE_|UV_|MALLOC_|LC_)|^(TZ|LANG)$/;

/**
 * FNV-1a twice over 32 bits (two offsets), as 16 hex digits: tells configurations apart, not
 * adversaries (the directory is private). Plain numbers: BigInt arithmetic cost a client 0.5 ms.
 */
function fingerprint(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193);
  }
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && value !== "" && !/^(0|false|no|off)$/i.test(value);
}

/**
 * Whether validate may use a server: MCPFLEET_VALIDATE_SERVER=off turns it off, =on turns it on
 * even in CI; by default it is on, except in CI (the CI variable set), where each run starts on
 * a fresh machine and a process left behind serves no one.
 */
export function serverWanted(env: NodeJS.ProcessEnv): boolean {
  const setting = env.MCPFLEET_VALIDATE_SERVER;
  if (setting !== undefined && setting !== "") return truthy(setting);
  return !truthy(env.CI) && process.platform !== "win32";
}

/** os.tmpdir() on POSIX systems, without loading node:os (a client's every millisecond counts). */
function temporaryDirectory(env: NodeJS.ProcessEnv): string {
  const dir = env.TMPDIR || env.TMP || env.TEMP || "/tmp";
  return dir.length > 1 && dir.endsWith("/") ? dir.slice(0, -1) : dir;
}

/**
 * The directory of this user's servers: $XDG_RUNTIME_DIR/mcpfleet, else mcpfleet-UID in the
 * temporary directory. Undefined when it cannot be made private: a directory of the name that
 * is a link, or another user's, or open to others, is not used (another user could otherwise
 * answer for the server).
 */
export function serverDirectory(env: NodeJS.ProcessEnv): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  const runtime = env.XDG_RUNTIME_DIR;
  const dir =
    runtime !== undefined && runtime.startsWith("/")
      ? path.join(runtime, "mcpfleet")
      : path.join(temporaryDirectory(env), `mcpfleet-${uid}`);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") return undefined;
  }
  try {
    const stat = lstatSync(dir);
    const private_ = stat.isDirectory() && stat.uid === uid && (stat.mode & 0o077) === 0;
    return private_ ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The socket of the server for this installation (`entry`: the file the CLI runs from, the
 * single executable or build/cli/main.js), this Node and its start-up settings: another build,
 * Node or NODE_OPTIONS gets a server of its own. Undefined when no server is to be used.
 */
export function serverSocket(env: NodeJS.ProcessEnv, entry: string): string | undefined {
  if (!serverWanted(env)) return undefined;
  let built: string;
  try {
    const stat = statSync(entry);
    built = `${entry}\0${stat.size}\0${stat.mtimeMs}`;
  } catch {
    return undefined;
  }
  const startup = Object.keys(env)
    .filter((name) => STARTUP_VARIABLE.test(name))
    .sort()
    .map((name) => `${name}=${env[name]}`);
  const key = fingerprint(
    [PROTOCOL, process.execPath, process.version, ...process.execArgv, built, ...startup].join(
      "\0",
    ),
  );
  const dir = serverDirectory(env);
  const socket = dir === undefined ? undefined : path.join(dir, `validate-${key}.sock`);
  // A Unix socket's path holds at most 107 bytes on Linux (103 on macOS).
  return socket !== undefined && Buffer.byteLength(socket) <= 100 ? socket : undefined;
}

/** The lines of JSON in `buffer` so far, and what is left of an unfinished one. */
export function splitLines(buffer: string): { lines: string[]; rest: string } {
  const lines = buffer.split("\n");
  const rest = lines.pop() ?? "";
  return { lines: lines.filter((l) => l !== ""), rest };
}

/** Whether a server answers at `socket` (a socket file with none is what a dead one left). */
export function answers(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createConnection(socket);
    probe.on("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.on("error", () => resolve(false));
  });
}
