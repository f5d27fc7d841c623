// The client's keys resource against the real app on a loopback port: a key made with the tenant's
// first key, used by a second client, listed with its last use, revoked (then refused), and an
// escalation refused with a typed error.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AuthenticationError, AutomationClient, ForbiddenError, NotFoundError } from "../../../src/automation/client";
import { clientOnLoopback } from "./loopback";

let client: AutomationClient;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ client, close } = await clientOnLoopback("keys"));
});
afterAll(() => close());

describe("client.keys", () => {
  test("create (secret once), use, list with last use, revoke; escalation and unknown ids are typed errors", async () => {
    const made = await client.keys.create({ name: "reader", scopes: ["keys:read", "runs:read"], expiresInDays: 7 });
    expect(made.key).toMatch(/^eak_/);
    expect(made).toMatchObject({ name: "reader", scopes: ["keys:read", "runs:read"], revokedAt: null, createdBy: { type: "key" } });

    // The loopback helper hands out one client; a second one, with the new key, talks to the same server.
    const baseUrl = (client as unknown as { http: { opts: { baseUrl: string } } }).http.opts.baseUrl;
    const reader = new AutomationClient({ baseUrl, apiKey: made.key, retryBaseMs: 1, maxRetries: 0 });
    const page = await reader.keys.list();
    expect(page.total).toBe(2);
    expect(page.data[0]).toMatchObject({ id: made.id, name: "reader" });
    expect(page.data[0]!.lastUsedAt).not.toBeNull();
    expect(JSON.stringify(page)).not.toContain(made.key);
    await expect(reader.keys.create({ name: "more", scopes: ["runs:write"] })).rejects.toBeInstanceOf(ForbiddenError);

    const revoked = await client.keys.revoke(made.id);
    expect(revoked.revokedAt).not.toBeNull();
    expect((await client.keys.revoke(made.id)).revokedAt).toBe(revoked.revokedAt);
    await expect(reader.keys.list()).rejects.toBeInstanceOf(AuthenticationError);
    await expect(client.keys.revoke("key_nope")).rejects.toBeInstanceOf(NotFoundError);
  });
});
