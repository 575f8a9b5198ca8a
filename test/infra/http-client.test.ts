// The shared outgoing HTTP client: its deadline, cancellation, size limit and private-address
// guard, against servers on loopback that misbehave on purpose.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OutgoingHttpError, sendRequest } from "../../src/infra/http-client.js";

let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === "/silent") return; // accepts, never answers
    if (req.url === "/trickle") {
      // Headers at once, then a byte now and then: never idle, never done.
      res.writeHead(200);
      const t = setInterval(() => res.write("x"), 20);
      res.on("close", () => clearInterval(t));
      return;
    }
    if (req.url === "/big") return void res.end("x".repeat(10_000));
    if (req.url === "/bomb") {
      res.writeHead(200, { "content-encoding": "gzip" });
      return void res.end(gzipSync(Buffer.alloc(1 << 20)));
    }
    res.end("ok");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const get = (path: string, opts: Partial<Parameters<typeof sendRequest>[1]> = {}) =>
  sendRequest(new URL(`${base}${path}`), {
    maxBytes: 1000,
    allowPrivateAddresses: true,
    ownConnection: true,
    ...opts,
  });

async function failure(p: Promise<unknown>): Promise<OutgoingHttpError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OutgoingHttpError);
  return err as OutgoingHttpError;
}

describe("outgoing HTTP client", () => {
  it("answers within its limits", async () => {
    const answer = await get("/ok");
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe("ok");
  });

  it("ends at the deadline a server that accepts and never answers", async () => {
    const started = Date.now();
    const err = await failure(get("/silent", { deadlineMs: 200 }));
    expect(err.failure).toBe("deadline");
    expect(err.code).toBe("ERR_OUTGOING_HTTP");
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("ends at the deadline a body that never ends, though bytes keep coming", async () => {
    const err = await failure(get("/trickle", { deadlineMs: 300, idleTimeoutMs: 5000 }));
    expect(err.failure).toBe("deadline");
  });

  it("ends a silent server at the idle timeout", async () => {
    const err = await failure(get("/silent", { idleTimeoutMs: 150 }));
    expect(err.failure).toBe("idle");
  });

  it("is cancelled by its AbortSignal, with the reason given", async () => {
    const stop = new AbortController();
    const pending = get("/silent", { signal: stop.signal });
    setTimeout(() => stop.abort(new Error("shutting down")), 50);
    const err = await failure(pending);
    expect(err.failure).toBe("aborted");
    expect(err.message).toBe("shutting down");
    const already = await failure(get("/ok", { signal: AbortSignal.abort() }));
    expect(already.failure).toBe("aborted");
  });

  it("refuses an answer over the size limit, decompressed or not", async () => {
    const big = await failure(get("/big"));
    expect(big.failure).toBe("too-large");
    expect(big.message).toBe("larger than 1000 bytes");
    const bomb = await failure(get("/bomb", { decompress: true, maxBytes: 64 * 1024 }));
    expect(bomb.failure).toBe("too-large");
  });

  it("refuses a private address unless allowed: IP literals and resolved names", async () => {
    const literal = await failure(get("/ok", { allowPrivateAddresses: false }));
    expect(literal.failure).toBe("private-address");
    const port = (server.address() as AddressInfo).port;
    const named = await failure(
      sendRequest(new URL(`http://localhost:${port}/ok`), {
        maxBytes: 1000,
        allowPrivateAddresses: false,
      }),
    );
    expect(named.failure).toBe("private-address");
    expect(named.message).toMatch(/localhost resolves to a private address/);
    const allowed = await sendRequest(new URL(`http://localhost:${port}/ok`), {
      maxBytes: 1000,
      allowPrivateAddresses: true,
    });
    expect(allowed.body.toString()).toBe("ok");
  });

  it("refuses other protocols", async () => {
    const err = await failure(
      sendRequest(new URL("file:///etc/passwd"), { maxBytes: 10, allowPrivateAddresses: true }),
    );
    expect(err.failure).toBe("protocol");
  });
});
