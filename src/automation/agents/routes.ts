// HTTP of agents: POST /automations/{id}/sync (automations:write). Agents are listed, read and run
// through the automations and runs routes like workflows.
import { Elysia, type DocumentDecoration } from "elysia";
import type { AutomationContext } from "../context";
import { envelopeSchema } from "../http/envelope";
import { jsonParser } from "../http/body";
import { parseWith } from "../http/validate";
import { authenticateRequest, authPlugin, requireScope } from "../tenancy/auth";
import { SyncBody, syncResponseSchema } from "./model";
import { agentDeps, syncAgent } from "./service";

const json = (schema: unknown) => ({ content: { "application/json": { schema } } });
const syncDoc = {
  summary: "Sync an agent from its latest Git release",
  description:
    "Reconciles name, description, inputs, triggers and the version list (= release tags) from the agent's Git repository. Idempotent. A versioned target → 400; no such automation, no Git source, no release or no agent.yaml → 404; an invalid agent.yaml → 400 with issues naming the lines.",
  tags: ["Automations"],
  parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" }, description: "agt_ id or agents.<slug>, without a version" }],
  responses: {
    "200": { description: "Synced", ...json(syncResponseSchema) },
    ...Object.fromEntries(["400", "401", "403", "404", "503"].map((c) => [c, { description: "Error envelope", ...json(envelopeSchema) }])),
  },
} as unknown as DocumentDecoration;

export const agentRoutes = (ctx: AutomationContext) => {
  const parse = jsonParser(64 * 1024, (request) => authenticateRequest(ctx, request));
  return new Elysia().use(authPlugin(ctx)).post(
    "/automations/:id/sync",
    ({ auth, params, body }) => {
      requireScope(auth, "automations:write");
      parseWith(SyncBody, body ?? {});
      return syncAgent(agentDeps(ctx), auth.tenantId, params.id);
    },
    { parse, detail: syncDoc },
  );
};
