// The HTTP layer providers share: endpoint overrides, Retry-After, and status classes.
import { expect, test } from "bun:test";
import { DEFAULT_TIMEOUT_MS, makeCtx } from "../../src/quotas/core/context";
import { endpointFor, retryAfter } from "../../src/quotas/fetch/http";
import { replyProblem } from "../../src/quotas/providers/provider";

test("QUOTAS_ENDPOINT_<PROVIDER> beats [endpoints] beats the default; trailing slashes go", () => {
  expect(endpointFor("claude", "https://api.anthropic.com", {}, {})).toBe("https://api.anthropic.com");
  expect(endpointFor("claude", "https://api.anthropic.com", {}, { claude: "http://proxy/" })).toBe("http://proxy");
  expect(endpointFor("claude", "https://api.anthropic.com", { QUOTAS_ENDPOINT_CLAUDE: "http://127.0.0.1:9" }, { claude: "http://proxy" })).toBe("http://127.0.0.1:9");
});

test("Retry-After as seconds or as a date", () => {
  const now = Date.parse("2026-11-22T09:00:00Z");
  expect(retryAfter("120", now)).toBe(120);
  expect(retryAfter("Sun, 22 Nov 2026 09:05:00 GMT", now)).toBe(300);
  expect(retryAfter("soon", now)).toBeUndefined();
  expect(retryAfter(null, now)).toBeUndefined();
});

test("401/403 → auth_required with the provider's hint; 429 → network_error with a back-off; other errors → unavailable", () => {
  const def = { hint: "run `x login`" };
  const reply = (status: number, json: unknown = {}, extra = {}) => ({ status, ok: status < 300, json, text: JSON.stringify(json), ...extra });
  expect(replyProblem(reply(401), def)).toMatchObject({ status: "auth_required", hint: "run `x login`" });
  expect(replyProblem(reply(403), def)).toMatchObject({ status: "auth_required" });
  expect(replyProblem(reply(429, {}, { retryAfter: 60 }), def)).toMatchObject({ status: "network_error", retryAfterSeconds: 60 });
  expect(replyProblem(reply(429), def)).toMatchObject({ status: "network_error", retryAfterSeconds: 300 });
  expect(replyProblem(reply(500, { error: { message: "plan expired" } }), def)).toEqual({ status: "unavailable", message: "HTTP 500: plan expired" });
  expect(replyProblem({ status: 200, ok: true, json: undefined, text: "<html>" }, def)).toMatchObject({ status: "unavailable" });
  expect(replyProblem(reply(200, { a: 1 }), def)).toBeNull();
});

test("the per-provider timeout is 10 s unless QUOTAS_TIMEOUT_MS says otherwise", () => {
  expect(DEFAULT_TIMEOUT_MS).toBe(10_000);
  expect(makeCtx({ HOME: "/h" }).timeoutMs).toBe(10_000);
  expect(makeCtx({ HOME: "/h", QUOTAS_TIMEOUT_MS: "250" }).timeoutMs).toBe(250);
  expect(makeCtx({ HOME: "/h", QUOTAS_TIMEOUT_MS: "soon" }).timeoutMs).toBe(10_000);
});
