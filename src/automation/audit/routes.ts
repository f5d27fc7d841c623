// GET /v1/audit: the caller's tenant's audit trail, newest first, for admins and owners (`audit:read`).
import { Elysia } from "elysia";
import type { AutomationContext } from "../context";
import { parseWith } from "../http/validate";
import { authPlugin, requireScope } from "../tenancy/auth";
import { AuditListQuery } from "./model";
import { listAudit } from "./service";

export const auditRoutes = (ctx: AutomationContext) =>
  new Elysia().use(authPlugin(ctx)).get(
    "/audit",
    async ({ auth, query }) => {
      requireScope(auth, "audit:read");
      return listAudit(ctx.storage.audit, auth.tenantId, parseWith(AuditListQuery, query));
    },
    {
      detail: {
        summary: "The tenant's audit trail: every state-changing request and sign-in, newest first (filters: actor, action, resource, since, until; cursor paging)",
        tags: ["Audit"],
      },
    },
  );
