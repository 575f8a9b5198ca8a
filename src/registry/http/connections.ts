// How answers leave with their connections: closed while shutting down (and a request that
// arrives then refused 503), and kept (with the rest of the body read and dropped) after a body
// refused before it was read.
import type { FastifyPluginAsync, FastifyReply } from "fastify";
import type { IncomingMessage } from "node:http";
import { McpfleetError } from "../../errors.js";
import { serverWide } from "./server-wide.js";

/** Most bytes of a refused body read and dropped so that its sender can read the answer. */
const DRAIN_LIMIT = 64 * 1024 * 1024;

/**
 * A body refused before it was read (too large, or not JSON) is still on its way. Fastify asks
 * for the connection to close, which resets it under a client still sending: the client gets
 * EPIPE or ECONNRESET instead of the answer. Reading the rest and dropping it (up to
 * DRAIN_LIMIT, within the request timeout) lets the answer arrive and keeps the connection.
 */
function drainRefusedBody(raw: IncomingMessage, reply: FastifyReply): void {
  const declared = Number(raw.headers["content-length"]);
  if (Number.isFinite(declared) && declared > DRAIN_LIMIT) return;
  reply.removeHeader("connection");
  let seen = 0;
  raw.on("data", (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > DRAIN_LIMIT) raw.socket.destroy();
  });
  raw.resume();
}

export const connections: FastifyPluginAsync = serverWide(async (app) => {
  // While shutting down, answers close their connections so keep-alive clients move on and
  // close() does not wait for idle keep-alive sockets to time out.
  let closing = false;
  app.addHook("preClose", (done) => {
    closing = true;
    done();
  });
  // A request that arrives while the server closes (on a kept-alive connection) is not served:
  // its client retries elsewhere.
  app.addHook("onRequest", (_req, _reply, done) => {
    done(
      closing
        ? new McpfleetError(
            "ERR_SHUTTING_DOWN",
            "the server is shutting down; retry (another replica answers)",
          )
        : undefined,
    );
  });
  app.addHook("onSend", async (req, reply, payload) => {
    if (closing) reply.header("connection", "close");
    else if ((reply.statusCode === 413 || reply.statusCode === 415) && !req.raw.complete) {
      drainRefusedBody(req.raw, reply);
    }
    return payload;
  });
  return Promise.resolve();
});
