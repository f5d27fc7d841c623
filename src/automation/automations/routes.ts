// HTTP of automations and versions. Reads need automations:read, writes automations:write.
import { Elysia } from "elysia";
import type { AutomationContext } from "../context";
import { jsonParser } from "../http/body";
import { prepareWorkflow } from "../workflow/offthread";
import { docs } from "./openapi";
import { stepKindInfo } from "./step-kinds";
import { parseWith } from "../http/validate";
import { authenticateRequest, authPlugin, requireScope } from "../tenancy/auth";
import type { EmailTrigger } from "../workflow/email-trigger";
import { CreateAutomationBody, CreateVersionBody, GetAutomationQuery, ListAutomationsQuery, ListVersionsQuery, MAX_YAML_BYTES, RestoreBody, UpdateAutomationBody, ValidateBody } from "./model";
import {
  createAutomation,
  createVersion,
  getAutomation,
  currentYaml,
  getTriggers,
  getVersion,
  listAutomations,
  listVersions,
  promoteVersion,
  restoreVersion,
  setStatus,
  validateWorkflow,
} from "./service";

// JSON escaping can double a YAML's size on the wire; the 1 MiB rule is checked on the decoded YAML.
/**
 * The inbound e-mail address of an automation, for `GET /automations/{id}?expand=inboundEmail`. inbound/
 * starts runs and so sits above automations/: app.ts hands its answer in (inboundOf(ctx).inboundEmail).
 */
export type InboundEmailOf = (
  a: { tenantId: string; id: string; slug: string },
  yaml: string | undefined,
) => Promise<{ address: string | null; whitelist: EmailTrigger["whitelist"] } | null>;

export const automationRoutes = (ctx: AutomationContext, inboundEmail: InboundEmailOf) => {
  const parse = jsonParser(3 * MAX_YAML_BYTES, (request) => authenticateRequest(ctx, request));
  return new Elysia()
    .use(authPlugin(ctx))
    .post(
      "/automations",
      async ({ auth, body, set }) => {
        requireScope(auth, "automations:write");
        const { yaml } = parseWith(CreateAutomationBody, body);
        await prepareWorkflow(yaml);
        set.status = 201;
        return await createAutomation(ctx.storage.automations, ctx.clock, auth.tenantId, yaml);
      },
      { parse, detail: docs.create },
    )
    .post(
      "/automations/validate",
      async ({ auth, body }) => {
        // A check a person makes while typing: it changes nothing, so reading automations is enough.
        requireScope(auth, "automations:read");
        const { yaml, automation } = parseWith(ValidateBody, body);
        await prepareWorkflow(yaml);
        return await validateWorkflow(ctx.storage.automations, auth.tenantId, yaml, automation);
      },
      { parse, detail: docs.validate },
    )
    .get(
      "/step-kinds",
      ({ auth }) => {
        requireScope(auth, "automations:read");
        return { data: stepKindInfo() };
      },
      { detail: docs.stepKinds },
    )
    .get(
      "/automations",
      async ({ auth, query }) => {
        requireScope(auth, "automations:read");
        return await listAutomations(ctx.storage.automations, auth.tenantId, parseWith(ListAutomationsQuery, query));
      },
      { detail: docs.list },
    )
    .get(
      "/automations/:id",
      async ({ auth, params, query }) => {
        requireScope(auth, "automations:read");
        const expand = parseWith(GetAutomationQuery, query).expand ?? [];
        const detail = await getAutomation(ctx.storage.automations, auth.tenantId, params.id, expand.filter((e) => e !== "inboundEmail"));
        if (!expand.includes("inboundEmail")) return detail;
        const yaml = await currentYaml(ctx.storage.automations, auth.tenantId, detail.id);
        return { ...detail, inboundEmail: await inboundEmail({ tenantId: auth.tenantId, id: detail.id, slug: detail.slug }, yaml) };
      },
      { detail: docs.get },
    )
    .patch(
      "/automations/:id",
      async ({ auth, params, body }) => {
        requireScope(auth, "automations:write");
        const { status } = parseWith(UpdateAutomationBody, body);
        return await setStatus(ctx.storage.automations, ctx.clock, auth.tenantId, params.id, status);
      },
      { parse, detail: docs.update },
    )
    .get(
      "/automations/:id/triggers",
      async ({ auth, params }) => {
        requireScope(auth, "automations:read");
        return await getTriggers(ctx.storage.automations, auth.tenantId, params.id);
      },
      { detail: docs.triggers },
    )
    .get(
      "/automations/:id/versions",
      async ({ auth, params, query }) => {
        requireScope(auth, "automations:read");
        return await listVersions(ctx.storage.automations, auth.tenantId, params.id, parseWith(ListVersionsQuery, query));
      },
      { detail: docs.versions },
    )
    .get(
      "/automations/:id/versions/:versionId",
      async ({ auth, params }) => {
        requireScope(auth, "automations:read");
        return await getVersion(ctx.storage.automations, auth.tenantId, params.id, params.versionId);
      },
      { detail: docs.version },
    )
    .post(
      "/automations/:id/versions",
      async ({ auth, params, body, set }) => {
        requireScope(auth, "automations:write");
        const input = parseWith(CreateVersionBody, body);
        await prepareWorkflow(input.yaml);
        set.status = 201;
        return await createVersion(ctx.storage.automations, ctx.clock, auth.tenantId, params.id, input);
      },
      { parse, detail: docs.createVersion },
    )
    .post(
      "/automations/:id/versions/:versionId/promote",
      async ({ auth, params, body }) => {
        requireScope(auth, "automations:write");
        parseWith(RestoreBody, body ?? {});
        return await promoteVersion(ctx.storage.automations, ctx.clock, auth.tenantId, params.id, params.versionId);
      },
      { parse, detail: docs.promote },
    )
    .post(
      "/automations/:id/versions/:versionId/restore",
      async ({ auth, params, body, set }) => {
        requireScope(auth, "automations:write");
        const { message } = parseWith(RestoreBody, body ?? {});
        set.status = 201;
        return await restoreVersion(ctx.storage.automations, ctx.clock, auth.tenantId, params.id, params.versionId, message);
      },
      { parse, detail: docs.restore },
    );
};
