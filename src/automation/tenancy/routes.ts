// GET /auth/check: who the presented key is; and /keys, the tenant's API keys made through the API
// (ours: the hosted reference has no such routes) by people with `keys:write`, or by keys holding it.
import { Elysia } from "elysia";
import type { AutomationContext } from "../context";
import { jsonParser } from "../http/body";
import { pageQuery, parseWith } from "../http/validate";
import * as v from "valibot";
import { authenticateRequest, authPlugin, requireScope } from "./auth";
import type { AuthCheck } from "./model";
import { makeKey, revokeTenantKey, tenantKeys } from "./service";

const KeysQuery = v.object({ ...pageQuery });

export const tenancyRoutes = (ctx: AutomationContext) => {
  const tenancy = ctx.storage.tenancy;
  // The key or session is checked before the body is read.
  const parse = jsonParser(16 * 1024, (request) => authenticateRequest(ctx, request));
  return new Elysia()
    .use(authPlugin(ctx))
    .get(
      "/auth/check",
      ({ auth }): AuthCheck => ({
        ok: true,
        tenantId: auth.tenantId,
        tenantSlug: auth.tenantSlug,
        tenantName: auth.tenantName,
        // A session is a person's (keyId: its public `ses_` id); a key made by a person is theirs; a key made on the shell is the tenant's.
        userId: auth.person?.userId ?? auth.keyUserId ?? null,
        keyId: auth.keyId,
        email: auth.person?.email ?? null,
        name: auth.person?.name ?? auth.keyName,
        scope: auth.scopes,
        wildcardGranted: auth.scopes.includes("*"),
      }),
      { detail: { summary: "Check API key identity", tags: ["Metadata"] } },
    )
    .post(
      "/keys",
      async ({ auth, body, set }) => {
        requireScope(auth, "keys:write");
        const made = await makeKey(tenancy, ctx.clock, auth, body);
        set.status = 201;
        // The secret is in this answer only.
        set.headers["cache-control"] = "no-store";
        return made;
      },
      { parse, detail: { summary: "Make an API key (within the maker's own scopes; the secret is shown once)", tags: ["Keys"] } },
    )
    .get(
      "/keys",
      async ({ auth, query }) => {
        requireScope(auth, "keys:read");
        const q = parseWith(KeysQuery, query);
        const all = await tenantKeys(tenancy, auth.tenantId);
        return { data: all.slice(q.offset, q.offset + q.limit), total: all.length, limit: q.limit, offset: q.offset };
      },
      { detail: { summary: "The tenant's API keys, newest first (revoked too; never the secrets)", tags: ["Keys"] } },
    )
    .delete(
      "/keys/:id",
      async ({ auth, params }) => {
        requireScope(auth, "keys:write");
        return revokeTenantKey(tenancy, ctx.clock, auth.tenantId, params.id);
      },
      { detail: { summary: "Revoke an API key (at once, on every instance; revoking twice answers the same)", tags: ["Keys"] } },
    );
};
