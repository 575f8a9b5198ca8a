import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { createControllerServer, parseListen } from "../../src/controller/server.js";
import { ControllerStatus } from "../../src/controller/status.js";
import { handleHook, refMatcher, safeEqual, type PushEvent } from "../../src/controller/webhook.js";

const SECRET = "It's a Secret to Everybody";
const sign = (body: string, secret = SECRET) =>
  `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
const push = (ref: string) =>
  JSON.stringify({ ref, after: "0123456789abcdef0123456789abcdef01234567", commits: [] });

describe("handleHook", () => {
  const opts = { secret: () => SECRET, watches: refMatcher({ branch: "main" }) };

  it("accepts a GitHub push signed with the secret and triggers on the watched ref", () => {
    const body = push("refs/heads/main");
    const out = handleHook(
      { "x-hub-signature-256": sign(body), "x-github-event": "push" },
      Buffer.from(body),
      opts,
    );
    expect(out).toMatchObject({ status: 202, triggered: true, push: { provider: "github" } });
  });

  it("matches GitHub's published test vector", () => {
    // From GitHub's webhook documentation: secret above, payload "Hello, World!".
    expect(sign("Hello, World!")).toBe(
      "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
    );
  });

  it("refuses a wrong or missing signature with 401", () => {
    const body = push("refs/heads/main");
    for (const headers of [
      { "x-hub-signature-256": sign(body, "other"), "x-github-event": "push" },
      { "x-hub-signature-256": "sha256=", "x-github-event": "push" },
      { "x-hub-signature-256": sign(body + " "), "x-github-event": "push" },
      { "x-github-event": "push" },
      { "x-gitlab-token": "guess", "x-gitlab-event": "Push Hook" },
    ]) {
      expect(handleHook(headers, Buffer.from(body), opts)).toMatchObject({
        status: 401,
        code: "ERR_WEBHOOK_SIGNATURE",
      });
    }
  });

  it("accepts a GitLab push with the token, and ignores other refs and events", () => {
    const gl = (ref: string, event = "Push Hook") =>
      handleHook(
        { "x-gitlab-token": SECRET, "x-gitlab-event": event },
        Buffer.from(push(ref)),
        opts,
      );
    expect(gl("refs/heads/main")).toMatchObject({ status: 202, triggered: true });
    expect(gl("refs/heads/feature")).toMatchObject({ status: 202, triggered: false });
    expect(gl("refs/heads/main", "Merge Request Hook")).toMatchObject({
      status: 202,
      triggered: false,
    });
  });

  it("400 for a signed body that is not a push event, 413 over the size limit", () => {
    const bad = "{not json";
    expect(
      handleHook(
        { "x-hub-signature-256": sign(bad), "x-github-event": "push" },
        Buffer.from(bad),
        opts,
      ),
    ).toMatchObject({ status: 400, code: "ERR_BAD_REQUEST" });
    const noRef = "{}";
    expect(
      handleHook(
        { "x-hub-signature-256": sign(noRef), "x-github-event": "push" },
        Buffer.from(noRef),
        opts,
      ),
    ).toMatchObject({ status: 400 });
    const big = Buffer.alloc(2048, 32);
    expect(handleHook({}, big, { ...opts, maxBytes: 1024 })).toMatchObject({ status: 413 });
  });

  it("matches refs for branch, tag, commit and HEAD", () => {
    expect(refMatcher({ tag: "v1" })("refs/tags/v1")).toBe(true);
    expect(refMatcher({ tag: "v1" })("refs/heads/v1")).toBe(false);
    expect(refMatcher({ commit: "abc" })("refs/heads/main")).toBe(false);
    expect(refMatcher({})("refs/heads/anything")).toBe(true);
    expect(refMatcher({})("refs/tags/v1")).toBe(false);
  });

  it("compares in constant time whatever the lengths", () => {
    expect(safeEqual("abc", "abc")).toBe(true);
    expect(safeEqual("abc", "abcd")).toBe(false);
    expect(safeEqual("", "")).toBe(true);
  });
});

describe("controller HTTP server", () => {
  let app: FastifyInstance;
  const pushes: PushEvent[] = [];
  const status = new ControllerStatus("branch main", "dir:out");

  beforeAll(async () => {
    app = createControllerServer({
      status,
      webhook: {
        secret: () => SECRET,
        watches: refMatcher({ branch: "main" }),
        onPush: (p) => pushes.push(p),
        maxBytes: 4096,
      },
    });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
  });

  const post = (body: string, headers: Record<string, string>) =>
    app.inject({
      method: "POST",
      url: "/hook",
      payload: body,
      headers: { "content-type": "application/json", ...headers },
    });

  it("POST /hook: 202 and a trigger for a valid push; problem+json otherwise", async () => {
    const body = push("refs/heads/main");
    const ok = await post(body, { "x-hub-signature-256": sign(body), "x-github-event": "push" });
    expect(ok.statusCode).toBe(202);
    expect(ok.json()).toMatchObject({ accepted: true, triggered: true });
    expect(pushes).toHaveLength(1);

    const wrongRef = push("refs/heads/dev");
    const ignored = await post(wrongRef, {
      "x-hub-signature-256": sign(wrongRef),
      "x-github-event": "push",
    });
    expect(ignored.statusCode).toBe(202);
    expect(ignored.json()).toMatchObject({ triggered: false });
    expect(pushes).toHaveLength(1);

    const wrong = await post(body, {
      "x-hub-signature-256": sign(body, "nope"),
      "x-github-event": "push",
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(wrong.json()).toMatchObject({ status: 401, code: "ERR_WEBHOOK_SIGNATURE" });

    const missing = await post(body, { "x-github-event": "push" });
    expect(missing.statusCode).toBe(401);

    const big = JSON.stringify({ ref: "refs/heads/main", pad: "x".repeat(8192) });
    const tooBig = await post(big, { "x-hub-signature-256": sign(big), "x-github-event": "push" });
    expect(tooBig.statusCode).toBe(413);
    expect(tooBig.json()).toMatchObject({ code: "ERR_PAYLOAD_TOO_LARGE" });

    const bare = await app.inject({
      method: "POST",
      url: "/hook",
      payload: body,
      headers: { "x-hub-signature-256": sign(body), "x-github-event": "push" },
    });
    expect(bare.statusCode).toBe(202);
    expect(pushes).toHaveLength(2);

    const form = `payload=${encodeURIComponent(body)}`;
    const viaForm = await app.inject({
      method: "POST",
      url: "/hook",
      payload: form,
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-hub-signature-256": sign(form),
        "x-github-event": "push",
      },
    });
    expect(viaForm.statusCode).toBe(202);
    expect(pushes).toHaveLength(3);
    expect(pushes.every((p) => p.provider === "github" && p.ref === "refs/heads/main")).toBe(true);
  });

  it("/readyz turns ready after the first success; /healthz and /metrics report revisions", async () => {
    expect((await app.inject("/readyz")).statusCode).toBe(503);
    status.attempted("bad0000");
    status.failed(
      { stage: "validate", code: "ERR_INVALID_RESOURCES", message: "a.yaml:3:1 bad" },
      0.01,
    );
    const notReady = await app.inject("/readyz");
    expect(notReady.statusCode).toBe(503);
    expect(notReady.json()).toMatchObject({ ready: false, reason: "a.yaml:3:1 bad" });

    status.attempted("good111");
    status.succeeded("good111", { seconds: 0.2, applied: 5, pruned: 1 });
    expect((await app.inject("/readyz")).statusCode).toBe(200);
    const health = (await app.inject("/healthz")).json<Record<string, unknown>>();
    expect(health).toMatchObject({
      status: "ok",
      lastAppliedRevision: "good111",
      lastAttemptedRevision: "good111",
      lastError: null,
    });
    const metrics = (await app.inject("/metrics")).body;
    expect(metrics).toMatch(
      /mcpfleet_controller_last_applied_revision\{revision="good111",ref="branch main"\} \d/,
    );
    expect(metrics).not.toMatch(/last_attempted_revision\{revision="bad0000"/);
    expect(metrics).toMatch(/mcpfleet_controller_objects_applied_total\{target="dir:out"\} 5/);
    expect(metrics).toMatch(/mcpfleet_controller_objects_pruned_total\{target="dir:out"\} 1/);
    expect(metrics).toMatch(
      /mcpfleet_controller_failures_total\{stage="validate",code="ERR_INVALID_RESOURCES"\} 1/,
    );
    expect(metrics).toMatch(
      /mcpfleet_controller_apply_duration_seconds_count\{target="dir:out",result="success"\} 1/,
    );
  });

  it("parses --listen", () => {
    expect(parseListen("8080")).toEqual({ host: "0.0.0.0", port: 8080 });
    expect(parseListen(":9090")).toEqual({ host: "0.0.0.0", port: 9090 });
    expect(parseListen("127.0.0.1:0")).toEqual({ host: "127.0.0.1", port: 0 });
    expect(parseListen("[::1]:80")).toEqual({ host: "::1", port: 80 });
    expect(() => parseListen("host")).toThrow(/--listen/);
    expect(() => parseListen("1:99999")).toThrow(/--listen/);
  });
});
