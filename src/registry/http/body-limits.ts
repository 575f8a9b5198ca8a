// Structural limits of every body before any route looks at it: authentication has run (an
// anonymous caller of a protected route never gets here) and the walk is linear in the body.
import type { FastifyPluginAsync } from "fastify";
import { McpfleetError } from "../../errors.js";
import { jsonLimitProblem } from "../formats/bounds.js";
import { serverWide } from "./server-wide.js";

export const bodyLimits: FastifyPluginAsync = serverWide(async (app) => {
  app.addHook("preValidation", (req, _reply, done) => {
    const problem =
      req.body === undefined || req.body === null ? undefined : jsonLimitProblem(req.body);
    done(
      problem === undefined
        ? undefined
        : new McpfleetError("ERR_INPUT_LIMIT", `request body: ${problem}`),
    );
  });
  return Promise.resolve();
});
