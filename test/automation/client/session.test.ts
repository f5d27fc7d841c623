// The client's cookie-session mode (the console's): no Authorization header, the CSRF token on writes
// only, and sign-in sending neither; against a small fake server on loopback that records the headers.
import { afterEach, expect, test } from "bun:test";
import { AutomationClient, AutomationError } from "../../../src/automation/client";

const servers: { stop(force?: boolean): void }[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.stop(true);
});

function recorder() {
  const hits: { method: string; path: string; auth: string | null; csrf: string | null }[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      hits.push({ method: req.method, path: new URL(req.url).pathname, auth: req.headers.get("authorization"), csrf: req.headers.get("x-csrf-token") });
      if (req.method === "DELETE") return new Response(null, { status: 204 });
      return Response.json(req.method === "POST" ? { user: { id: "usr_1", email: "a@b.c", name: "A" }, csrfToken: "t" } : { data: [] });
    },
  });
  servers.push(server);
  return { base: `http://127.0.0.1:${server.port}`, hits };
}

test("a session client sends no Authorization; writes carry x-csrf-token, reads do not", async () => {
  const { base, hits } = recorder();
  // The session wins over a key in the environment: a browser session never sends a key.
  const client = new AutomationClient({ baseUrl: base, session: { csrfToken: "csrf-123" } }, { AUTOMATION_API_KEY: "eak_from_env" });
  await client.members.list();
  await client.members.invite({ email: "r@example.test", role: "reviewer" });
  await client.sessions.signOut();
  expect(hits.map((h) => [h.method, h.auth, h.csrf])).toEqual([
    ["GET", null, null],
    ["POST", null, "csrf-123"],
    ["DELETE", null, "csrf-123"],
  ]);
});

test("sign-in sends neither a key nor a CSRF token; a session without a token sends none", async () => {
  const { base, hits } = recorder();
  await new AutomationClient({ baseUrl: base, session: { csrfToken: "csrf-123" } }, {}).sessions.create({ email: "a@b.c", password: "x".repeat(12) });
  await new AutomationClient({ baseUrl: base, session: {} }, {}).members.invite({ email: "r@example.test", role: "viewer" });
  expect(hits.map((h) => [h.path, h.auth, h.csrf])).toEqual([
    ["/v1/auth/sessions", null, null],
    ["/v1/members/invitations", null, null],
  ]);
});

test("a key client is unchanged: Bearer on every call, no CSRF header; neither key nor session is refused", async () => {
  const { base, hits } = recorder();
  await new AutomationClient({ baseUrl: base, apiKey: "eak_k" }, {}).members.invite({ email: "r@example.test", role: "viewer" });
  expect(hits.map((h) => [h.auth, h.csrf])).toEqual([["Bearer eak_k", null]]);
  expect(() => new AutomationClient({ baseUrl: base }, {})).toThrow(AutomationError);
});
