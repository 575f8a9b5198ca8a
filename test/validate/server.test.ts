// The validate server (src/cli/validate-server.ts) as validate runs meet it: started by a run that
// found none, it runs the next runs as their own processes would have (output, streams, exit
// code), leaves standard input and large inputs to them, survives what is not a request, and a
// server that dies, before or during a run, costs the run nothing. Each test has a runtime
// directory, so a server of its own. The launcher does for validate what bin/mcpfleet.js does,
// on the sources.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createConnection, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stopServer } from "../../src/cli/validate-client.js";
import {
  answers,
  serverDirectory,
  serverSocket,
  serverWanted,
} from "../../src/cli/validate-socket.js";
import { ROOT, res, tempDir, writeTree, yamlDocs } from "./helpers.js";

const TSX = import.meta.resolve("tsx");
const EXAMPLES = join(ROOT, "examples");
const work = tempDir("mcpfleet-server-");
const launcher = join(work, "launch.mjs");
writeFileSync(
  launcher,
  `import { validatedOnServer } from ${JSON.stringify(join(ROOT, "src/cli/validate-client.ts"))};
import { serverSocket } from ${JSON.stringify(join(ROOT, "src/cli/validate-socket.ts"))};
if (process.argv[2] === "socket") console.log(serverSocket(process.env, process.argv[1]));
const served = process.argv[2] === "validate" &&
  (await validatedOnServer(process.argv.slice(3), process.argv[1], [...process.execArgv, process.argv[1]]));
if (!served && process.argv[2] !== "socket") await import(${JSON.stringify(join(ROOT, "src/cli/main.ts"))});
`,
);

const inputs = writeTree(join(work, "inputs"), {
  "invalid/a.yaml": yamlDocs(res("MCPServer", "a", { image: 7, transport: "stdio" })),
  "valid/group.yaml": yamlDocs(res("MCPGroup", "g")),
  "kustomized/kustomization.yaml": "resources: [group.yaml]\n",
  "kustomized/group.yaml": yamlDocs(res("MCPGroup", "g")),
});

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** An environment with servers on, in a runtime directory of its own. */
function serverEnv(): NodeJS.ProcessEnv {
  const runtime = join(tempDir("mcpfleet-server-runtime-"), "run");
  mkdirSync(runtime, { mode: 0o700 });
  return { ...process.env, MCPFLEET_VALIDATE_SERVER: "on", XDG_RUNTIME_DIR: runtime };
}

/** A validate run through the launcher (a child process: the test's own servers keep serving). */
function validate(args: string[], env: NodeJS.ProcessEnv, stdin = ""): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", TSX, launcher, "validate", ...args], {
      cwd: inputs,
      env,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

const cold = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
  ...env,
  MCPFLEET_VALIDATE_SERVER: "off",
});

/** The socket a run in `env` looks for its server at (Node's arguments are part of its name). */
function socketOf(env: NodeJS.ProcessEnv): string {
  const r = spawnSync(process.execPath, ["--import", TSX, launcher, "socket"], {
    env,
    encoding: "utf8",
  });
  return r.stdout.trim();
}

async function waitForServer(socket: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await answers(socket)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no server at ${socket}`);
}

/** Stops the server at `socket`: how many clients' runs it ran. */
async function stop(socket: string): Promise<number> {
  const runs = await stopServer(socket);
  if (runs === undefined) throw new Error(`no server at ${socket} to stop`);
  return runs;
}

const started: ChildProcess[] = [];
afterEach(() => {
  for (const c of started.splice(0)) c.kill("SIGKILL");
});

/** A server started as a run starts one, at `socket`. */
function startServer(socket: string, env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, ["--import", TSX, launcher, "__validate-server", socket], {
    env,
    stdio: "ignore",
  });
  started.push(child);
  return child;
}

/** A server of a test's own, listening: its clients' environment, its socket and its process. */
async function listeningServer(): Promise<{
  env: NodeJS.ProcessEnv;
  socket: string;
  server: ChildProcess;
}> {
  const env = serverEnv();
  const socket = socketOf(env);
  const server = startServer(socket, env);
  await waitForServer(socket);
  return { env, socket, server };
}

describe("the validate server", () => {
  it("runs each run as the client's own process would: output, streams, colour, exit code", async () => {
    const env = serverEnv();
    const first = await validate(["--summary", EXAMPLES], env);
    expect(first.status, first.stderr).toBe(0);
    const socket = socketOf(env);
    await waitForServer(socket); // started by that first run, as it exited
    const cases: [string[], NodeJS.ProcessEnv][] = [
      [["--summary", EXAMPLES], {}],
      [["-o", "json", join(EXAMPLES, "resources")], {}],
      [["invalid"], {}],
      [["invalid"], { FORCE_COLOR: "1" }],
      [["--output", "yaml", "valid"], {}],
      [["missing.yaml"], {}],
      [["--summary", "--ignore-missing-schemas", "kustomized"], {}],
      [["--help"], {}],
    ];
    const statuses = new Set<number | null>();
    for (const [args, extra] of cases) {
      const alone = await validate(args, cold({ ...env, ...extra }));
      const served = await validate(args, { ...env, ...extra });
      expect(served, args.join(" ")).toEqual(alone);
      statuses.add(alone.status);
    }
    expect(statuses).toEqual(new Set([0, 1, 2]));
    expect(await stop(socket)).toBe(cases.length);
  });

  it("validates again what changed since a run before: every verdict is the one a run alone reaches", async () => {
    const { env, socket } = await listeningServer();
    const dir = tempDir("mcpfleet-server-edits-");
    const server = (spec: Record<string, unknown> = {}) =>
      yamlDocs(res("MCPServer", "s", { image: "ghcr.io/x/s:1", groupRef: "g", ...spec }));
    const steps: [string, Record<string, string>, string[], number][] = [
      [
        "a valid set",
        { "group.yaml": yamlDocs(res("MCPGroup", "g")), "server.yaml": server() },
        [],
        0,
      ],
      // The reference breaks in a file that did not change: the reference level sees every file.
      ["the group renamed", { "group.yaml": yamlDocs(res("MCPGroup", "h")) }, [], 1],
      ["the group back as it was", { "group.yaml": yamlDocs(res("MCPGroup", "g")) }, [], 0],
      [
        "a configuration synthesis renders nothing for",
        { "server.yaml": server({ oidcConfig: { type: "configMap", configMap: { name: "o" } } }) },
        [],
        1,
      ],
      ["an unknown field", { "server.yaml": server({ colour: "red" }) }, [], 1],
      ["the same file, unknown fields allowed", {}, ["--unknown-fields", "warn"], 0],
      ["and refused again", {}, [], 1],
    ];
    for (const [what, files, args, status] of steps) {
      writeTree(dir, files);
      const alone = await validate(["--summary", ...args, dir], cold(env));
      expect(alone.status, what).toBe(status);
      expect(await validate(["--summary", ...args, dir], env), what).toEqual(alone);
    }
    expect(await stop(socket)).toBe(steps.length);
  });

  it("drops the output a reader that went away no longer takes, as a run of its own does", async () => {
    const { env, socket } = await listeningServer();
    // More JSON than a pipe holds (64 KiB), to a reader that closes before reading any.
    const many = writeTree(
      tempDir("mcpfleet-server-many-"),
      Object.fromEntries(
        Array.from({ length: 300 }, (_, i) => [
          `s${i}.yaml`,
          yamlDocs(res("MCPServer", `s${i}`, { image: 7, transport: "stdio" })),
        ]),
      ),
    );
    const closedReader = (runEnv: NodeJS.ProcessEnv) =>
      new Promise<{ status: number | null; stderr: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          ["--import", TSX, launcher, "validate", "-o", "json", many],
          { env: runEnv, stdio: ["ignore", "pipe", "pipe"] },
        );
        child.stdout.destroy();
        let stderr = "";
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
        child.on("close", (status) => resolve({ status, stderr }));
      });
    const served = await closedReader(env);
    expect(served).toEqual(await closedReader(cold(env)));
    expect(served).toEqual({ status: 1, stderr: "" });
    expect(await stop(socket)).toBe(1);
  });

  it("leaves standard input and a large input to the client", async () => {
    const { env, socket } = await listeningServer();
    const yaml = yamlDocs(res("MCPServer", "a", { image: 7, transport: "stdio" }));
    expect(await validate(["-"], env, yaml)).toEqual(await validate(["-"], cold(env), yaml));
    expect(await validate([], env, yaml)).toEqual(await validate([], cold(env), yaml));
    const big = writeTree(tempDir("mcpfleet-server-big-"), {
      "group.yaml": `${yamlDocs(res("MCPGroup", "g"))}# ${"x".repeat(2 * 1024 * 1024)}\n`,
    });
    const large = await validate(["--summary", big], env);
    expect(large.stdout).toMatch(/1 valid/);
    expect(large.status).toBe(0);
    expect(await stop(socket)).toBe(0);
  });

  it("takes over the socket a killed server left; the run in between validates alone", async () => {
    const { env, socket, server: killed } = await listeningServer();
    killed.kill("SIGKILL");
    await new Promise((r) => killed.once("exit", r));
    expect(existsSync(socket)).toBe(true);
    expect(await answers(socket)).toBe(false);
    expect(await validate(["invalid"], env)).toEqual(await validate(["invalid"], cold(env)));
    await waitForServer(socket); // the one that run started
    expect(await stop(socket)).toBe(0);
  });

  it("leaves the whole run to the client when the server goes away mid-run: nothing twice", async () => {
    const env = serverEnv();
    const real = join(tempDir("mcpfleet-server-real-"), "real.sock");
    startServer(real, env);
    await waitForServer(real);
    // Fault injection in front of the real server: its first reply, then the connection cut.
    const cut = createServer((client: Socket) => {
      const upstream = createConnection(real);
      client.pipe(upstream);
      let seen = "";
      upstream.on("data", (chunk: Buffer) => {
        seen += chunk.toString("utf8");
        const end = seen.indexOf("\n");
        if (end >= 0) {
          client.end(seen.slice(0, end + 1));
          upstream.destroy();
        }
      });
    });
    const socket = socketOf(env);
    await new Promise<void>((r) => cut.listen(socket, r));
    try {
      const run = await validate(["invalid"], env);
      expect(run).toEqual(await validate(["invalid"], cold(env)));
      expect(run.stdout).not.toBe("");
    } finally {
      await new Promise((r) => cut.close(r));
    }
    expect(await stop(real)).toBe(1);
  });

  it("leaves at once when another server already answers (two runs started one each)", async () => {
    const { env, socket } = await listeningServer();
    const second = startServer(socket, env);
    const code = await new Promise((r) => second.once("exit", r));
    expect(code).toBe(0);
    expect(await answers(socket)).toBe(true);
    expect(await stop(socket)).toBe(0);
  });

  it("closes a connection that does not send a request, and goes on serving", async () => {
    const { env, socket } = await listeningServer();
    for (const junk of ["not json\n", "{}\n", `${"x".repeat(2 * 1024 * 1024)}`]) {
      const replies = await new Promise<string>((resolve) => {
        const c = createConnection(socket);
        let got = "";
        c.on("data", (d: Buffer) => (got += d.toString("utf8")));
        c.on("close", () => resolve(got));
        c.on("error", () => undefined);
        c.write(junk);
      });
      expect(replies).toBe("");
    }
    expect(await validate(["invalid"], env)).toEqual(await validate(["invalid"], cold(env)));
    expect(await stop(socket)).toBe(1);
  });
});

describe("where a server is used", () => {
  it("is on by default, off in CI, and the setting decides over both", () => {
    expect(serverWanted({})).toBe(process.platform !== "win32");
    expect(serverWanted({ CI: "true" })).toBe(false);
    expect(serverWanted({ CI: "true", MCPFLEET_VALIDATE_SERVER: "on" })).toBe(true);
    expect(serverWanted({ MCPFLEET_VALIDATE_SERVER: "off" })).toBe(false);
    expect(serverWanted({ MCPFLEET_VALIDATE_SERVER: "0" })).toBe(false);
  });

  it("is in a directory only this user can open, else nowhere", () => {
    const runtime = tempDir("mcpfleet-server-dir-");
    expect(serverDirectory({ XDG_RUNTIME_DIR: runtime })).toBe(join(runtime, "mcpfleet"));
    chmodSync(join(runtime, "mcpfleet"), 0o755);
    expect(serverDirectory({ XDG_RUNTIME_DIR: runtime })).toBeUndefined();
  });

  it("is another server for another build, Node option or compile cache", () => {
    const env = serverEnv();
    const other = writeTree(tempDir("mcpfleet-server-entry-"), { "main.js": "" });
    const sockets = new Set([
      socketOf(env),
      serverSocket(env, join(other, "main.js")),
      socketOf({ ...env, NODE_OPTIONS: "--max-old-space-size=512" }),
      socketOf({ ...env, NODE_COMPILE_CACHE: "/tmp/elsewhere" }),
    ]);
    expect(sockets.size).toBe(4);
    expect(socketOf({ ...env, NO_COLOR: "1" })).toBe(socketOf(env));
  });
});
