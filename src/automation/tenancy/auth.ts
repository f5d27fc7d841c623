// The auth plugin every feature's routes `.use()`: resolves the Bearer key into `auth` (401 when
// missing or invalid), so handlers can filter by `auth.tenantId` and call `requireScope`.
import { Elysia } from "elysia";
import type { AutomationContext } from "../context";
import { authenticate } from "./service";

export { requireScope, hasScope } from "./service";
export type { Auth } from "./model";

/**
 * `new Elysia().use(authPlugin(ctx)).get("/x", ({ auth }) => ...)`: routes registered after the
 * `.use` in that plugin require a valid API key.
 */
export const authPlugin = (ctx: AutomationContext) =>
  new Elysia().resolve({ as: "scoped" }, ({ request }) => ({
    auth: authenticate(ctx.sqlite, ctx.clock, request.headers.get("authorization")),
  }));
