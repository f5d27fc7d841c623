// GET /auth/check: who the presented key is.
import { Elysia } from "elysia";
import type { AutomationContext } from "../context";
import { authPlugin } from "./auth";
import type { AuthCheck } from "./model";

export const tenancyRoutes = (ctx: AutomationContext) =>
  new Elysia().use(authPlugin(ctx)).get(
    "/auth/check",
    ({ auth }): AuthCheck => ({
      ok: true,
      tenantId: auth.tenantId,
      tenantSlug: auth.tenantSlug,
      tenantName: auth.tenantName,
      // API keys belong to tenants, not users; a session is a person's (keyId: its public `ses_` id).
      userId: auth.person?.userId ?? null,
      keyId: auth.keyId,
      email: auth.person?.email ?? null,
      name: auth.person?.name ?? auth.keyName,
      scope: auth.scopes,
      wildcardGranted: auth.scopes.includes("*"),
    }),
    { detail: { summary: "Check API key identity", tags: ["Metadata"] } },
  );
