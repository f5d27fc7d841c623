// HTTP of e-mail servers. Reads need email:read, writes and test sends email:write.
import { Elysia } from "elysia";
import type { AutomationContext } from "../context";
import { jsonParser } from "../http/body";
import { requestBody } from "../http/openapi-body";
import { parseWith } from "../http/validate";
import { authenticateRequest, authPlugin, requireScope } from "../tenancy/auth";
import { CreateServerBody, ListServersQuery, PatchServerBody, TestBody } from "./model";
import { createServer, deleteServer, getServer, listServers, patchServer, testServer } from "./service";

const tags = ["E-mail servers"];
const doc = (summary: string, extra: Record<string, unknown> = {}) => ({ summary, tags, ...extra });

export const emailRoutes = (ctx: AutomationContext) => {
  const parse = jsonParser(256 * 1024, (request) => authenticateRequest(ctx, request));
  return new Elysia()
    .use(authPlugin(ctx))
    .post(
      "/email-servers",
      ({ auth, body, set }) => {
        requireScope(auth, "email:write");
        set.status = 201;
        return createServer(ctx, auth.tenantId, parseWith(CreateServerBody, body));
      },
      { parse, detail: doc("Create an e-mail server (resend or smtp); secrets are stored encrypted and never returned; an SMTP host that is a loopback, private, link-local or metadata address → 400 host_not_allowed unless the operator allows it (--outbound-allow)", { requestBody: requestBody(CreateServerBody) }) },
    )
    .get(
      "/email-servers",
      ({ auth, query }) => {
        requireScope(auth, "email:read");
        const q = parseWith(ListServersQuery, query);
        return listServers(ctx, auth.tenantId, { limit: Number(q.limit), offset: Number(q.offset) });
      },
      { detail: doc("List e-mail servers") },
    )
    .get(
      "/email-servers/:id",
      ({ auth, params }) => {
        requireScope(auth, "email:read");
        return getServer(ctx, auth.tenantId, params.id);
      },
      { detail: doc("Get an e-mail server") },
    )
    .patch(
      "/email-servers/:id",
      ({ auth, params, body }) => {
        requireScope(auth, "email:write");
        return patchServer(ctx, auth.tenantId, params.id, parseWith(PatchServerBody, body));
      },
      { parse, detail: doc("Update metadata, or replace the transport (a changed SMTP host or username needs its password)", { requestBody: requestBody(PatchServerBody) }) },
    )
    .delete(
      "/email-servers/:id",
      ({ auth, params }) => {
        requireScope(auth, "email:write");
        return deleteServer(ctx, auth.tenantId, params.id);
      },
      { detail: doc("Delete an e-mail server (soft: it answers 404 afterwards)") },
    )
    .post(
      "/email-servers/:id/test",
      ({ auth, params, body }) => {
        requireScope(auth, "email:write");
        return testServer(ctx, auth.tenantId, params.id, parseWith(TestBody, body).to);
      },
      { parse, detail: doc("Send a test message; failures answer {ok: false, error} with a generic reason; an SMTP host inside this server's network (without --outbound-allow) → 400 host_not_allowed, nothing sent", { requestBody: requestBody(TestBody) }) },
    );
};
