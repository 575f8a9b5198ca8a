// `POST /hook`: push-event receiver for GitHub (`X-Hub-Signature-256: sha256=<HMAC-SHA256 of the
// body>`) and GitLab (`X-Gitlab-Token: <secret>`). A verified push to the watched ref triggers
// an immediate sync; every other verified event is acknowledged and ignored. Secrets are compared
// in constant time; bodies are capped before they are read in full.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { ErrorCode } from "../errors.js";
import { problemOf, sendProblem } from "../registry/http/problem.js";
import type { GitRevisionSpec } from "../infra/git/source.js";

export const DEFAULT_HOOK_MAX_BYTES = 1024 * 1024;

export interface WebhookOptions {
  /** The shared secret (read each request, so a rotated file needs no restart). */
  secret: () => string;
  /** Is a push to this full ref name (`refs/heads/main`) one the controller follows? */
  watches: (ref: string) => boolean;
  /** Called for a verified push to a watched ref. */
  onPush: (push: PushEvent) => void;
  maxBytes?: number;
}

export interface PushEvent {
  provider: "github" | "gitlab";
  ref: string;
  /** Commit the ref now points to, when the payload says. */
  after?: string;
}

export type HookOutcome =
  | { status: 202; triggered: boolean; detail: string; push?: PushEvent }
  | { status: 400 | 401 | 413; code: ErrorCode; detail: string };

/** Which pushed refs concern a controller following `spec`. A pinned commit never moves. */
export function refMatcher(spec: GitRevisionSpec): (ref: string) => boolean {
  if ("branch" in spec) return (ref) => ref === `refs/heads/${spec.branch}`;
  if ("tag" in spec) return (ref) => ref === `refs/tags/${spec.tag}`;
  if ("commit" in spec) return () => false;
  // The remote's HEAD: its branch is not known here, so any branch push is worth a look.
  return (ref) => ref.startsWith("refs/heads/");
}

function header(headers: Record<string, unknown>, name: string): string | undefined {
  const v = headers[name];
  if (Array.isArray(v)) return typeof v[0] === "string" ? v[0] : undefined;
  return typeof v === "string" ? v : undefined;
}

/** Constant-time equality of two strings of any length (compares their SHA-256 digests). */
export function safeEqual(a: string, b: string): boolean {
  const da = createHash("sha256").update(a).digest();
  const db = createHash("sha256").update(b).digest();
  return timingSafeEqual(da, db) && a.length === b.length;
}

function payloadOf(body: Buffer, contentType: string | undefined): unknown {
  const text = body.toString("utf8");
  if (contentType?.startsWith("application/x-www-form-urlencoded") === true) {
    const payload = new URLSearchParams(text).get("payload");
    if (payload === null) throw new Error("form body without a payload field");
    return JSON.parse(payload);
  }
  return JSON.parse(text);
}

/** A delivery refused because it is not signed with the webhook secret. */
function unauthorized(detail: string): HookOutcome {
  return { status: 401, code: "ERR_WEBHOOK_SIGNATURE", detail };
}

/** Verifies and interprets one delivery. Pure: the HTTP layer only maps the outcome. */
export function handleHook(
  headers: Record<string, unknown>,
  body: Buffer,
  opts: Pick<WebhookOptions, "secret" | "watches" | "maxBytes">,
): HookOutcome {
  const max = opts.maxBytes ?? DEFAULT_HOOK_MAX_BYTES;
  if (body.length > max) {
    return { status: 413, code: "ERR_PAYLOAD_TOO_LARGE", detail: `body over ${max} bytes` };
  }
  const secret = opts.secret();
  const signature = header(headers, "x-hub-signature-256");
  const token = header(headers, "x-gitlab-token");
  let provider: PushEvent["provider"];
  let event: string | undefined;
  if (signature !== undefined) {
    const want = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
    if (!safeEqual(signature.trim().toLowerCase(), want)) {
      return unauthorized(
        "X-Hub-Signature-256 does not match the body signed with the webhook secret",
      );
    }
    provider = "github";
    event = header(headers, "x-github-event");
  } else if (token !== undefined) {
    if (!safeEqual(token, secret)) {
      return unauthorized("X-Gitlab-Token is not the webhook secret");
    }
    provider = "gitlab";
    event = header(headers, "x-gitlab-event");
  } else {
    return unauthorized(
      "a delivery must carry X-Hub-Signature-256 (GitHub) or X-Gitlab-Token (GitLab)",
    );
  }
  const isPush =
    provider === "github"
      ? event === "push"
      : event === "Push Hook" || event === "Tag Push Hook" || event === "System Hook";
  if (provider === "github" && event === "ping") {
    return { status: 202, triggered: false, detail: "ping received" };
  }
  if (!isPush) {
    return { status: 202, triggered: false, detail: `event ${event ?? "(none)"} ignored` };
  }
  let payload: unknown;
  try {
    payload = payloadOf(body, header(headers, "content-type"));
  } catch (err) {
    return {
      status: 400,
      code: "ERR_BAD_REQUEST",
      detail: `body is not a JSON push event: ${(err as Error).message}`,
    };
  }
  const p = payload as { ref?: unknown; after?: unknown } | null;
  if (typeof p !== "object" || p === null || typeof p.ref !== "string") {
    return { status: 400, code: "ERR_BAD_REQUEST", detail: "push event without a ref" };
  }
  const push: PushEvent = {
    provider,
    ref: p.ref,
    ...(typeof p.after === "string" ? { after: p.after } : {}),
  };
  if (!opts.watches(p.ref)) {
    return { status: 202, triggered: false, detail: `push to ${p.ref} is not watched`, push };
  }
  return { status: 202, triggered: true, detail: `push to ${p.ref}: sync triggered`, push };
}

/** Registers `POST /hook` (raw body, size-capped) on a Fastify instance. */
export function registerWebhook(app: FastifyInstance, opts: WebhookOptions): void {
  const max = opts.maxBytes ?? DEFAULT_HOOK_MAX_BYTES;
  void app.register((scope, _o, done) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: max }, (_req, body, next) => {
      next(null, body);
    });
    scope.setErrorHandler((err: { statusCode?: number; message: string }, req, reply) => {
      const status = err.statusCode ?? 500;
      const code: ErrorCode =
        status === 413
          ? "ERR_PAYLOAD_TOO_LARGE"
          : status < 500
            ? "ERR_BAD_REQUEST"
            : "ERR_INTERNAL";
      const detail = status === 413 ? `body over ${max} bytes` : err.message;
      return sendProblem(reply, { ...problemOf(code, detail, req.url), status });
    });
    scope.post("/hook", { bodyLimit: max }, (req, reply) => {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const outcome = handleHook(req.headers, body, opts);
      if (outcome.status !== 202) {
        return sendProblem(reply, problemOf(outcome.code, outcome.detail, req.url));
      }
      if (outcome.triggered && outcome.push !== undefined) opts.onPush(outcome.push);
      return reply
        .code(202)
        .header("cache-control", "no-store")
        .send({ accepted: true, triggered: outcome.triggered, detail: outcome.detail });
    });
    done();
  });
}
