// HTTP of automations and versions. Reads need automations:read, writes automations:write.
import { Elysia } from "elysia";
import type { AutomationContext } from "../context";
import { jsonParser } from "../http/body";
import { parseWith } from "../http/validate";
import { authPlugin, requireScope } from "../tenancy/auth";
import { authenticate } from "../tenancy/service";
import { CreateAutomationBody, CreateVersionBody, ListAutomationsQuery, ListVersionsQuery, MAX_YAML_BYTES, RestoreBody } from "./model";
import {
  createAutomation,
  createVersion,
  getAutomation,
  getTriggers,
  listAutomations,
  listVersions,
  promoteVersion,
  restoreVersion,
} from "./service";

// JSON escaping can double a YAML's size on the wire; the 1 MiB rule is checked on the decoded YAML.
const tags = ["Automations"];

export const automationRoutes = (ctx: AutomationContext) => {
  const parse = jsonParser(3 * MAX_YAML_BYTES, (request) => {
    authenticate(ctx.sqlite, ctx.clock, request.headers.get("authorization"));
  });
  return new Elysia()
    .use(authPlugin(ctx))
    .post(
      "/automations",
      ({ auth, body, set }) => {
        requireScope(auth, "automations:write");
        const { yaml } = parseWith(CreateAutomationBody, body);
        set.status = 201;
        return createAutomation(ctx.sqlite, ctx.clock, auth.tenantId, yaml);
      },
      { parse, detail: { summary: "Create a workflow from YAML", tags } },
    )
    .get(
      "/automations",
      ({ auth, query }) => {
        requireScope(auth, "automations:read");
        return listAutomations(ctx.sqlite, auth.tenantId, parseWith(ListAutomationsQuery, query));
      },
      { detail: { summary: "List automations", tags } },
    )
    .get(
      "/automations/:id",
      ({ auth, params }) => {
        requireScope(auth, "automations:read");
        return getAutomation(ctx.sqlite, auth.tenantId, params.id);
      },
      { detail: { summary: "Get automation by id or alias (workflows.<slug>, agents.<slug>)", tags } },
    )
    .get(
      "/automations/:id/triggers",
      ({ auth, params }) => {
        requireScope(auth, "automations:read");
        return getTriggers(ctx.sqlite, auth.tenantId, params.id);
      },
      { detail: { summary: "Get automation triggers", tags } },
    )
    .get(
      "/automations/:id/versions",
      ({ auth, params, query }) => {
        requireScope(auth, "automations:read");
        return listVersions(ctx.sqlite, auth.tenantId, params.id, parseWith(ListVersionsQuery, query));
      },
      { detail: { summary: "List versions", tags } },
    )
    .post(
      "/automations/:id/versions",
      ({ auth, params, body, set }) => {
        requireScope(auth, "automations:write");
        const input = parseWith(CreateVersionBody, body);
        set.status = 201;
        return createVersion(ctx.sqlite, ctx.clock, auth.tenantId, params.id, input);
      },
      { parse, detail: { summary: "Create a version (yaml or historyId)", tags } },
    )
    .post(
      "/automations/:id/versions/:versionId/promote",
      ({ auth, params, body }) => {
        requireScope(auth, "automations:write");
        parseWith(RestoreBody, body ?? {});
        return promoteVersion(ctx.sqlite, ctx.clock, auth.tenantId, params.id, params.versionId);
      },
      { parse, detail: { summary: "Make a tagged version current", tags } },
    )
    .post(
      "/automations/:id/versions/:versionId/restore",
      ({ auth, params, body, set }) => {
        requireScope(auth, "automations:write");
        const { message } = parseWith(RestoreBody, body ?? {});
        set.status = 201;
        return restoreVersion(ctx.sqlite, ctx.clock, auth.tenantId, params.id, params.versionId, message);
      },
      { parse, detail: { summary: "Restore a snapshot as a new untagged current version", tags } },
    );
};
