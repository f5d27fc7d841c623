// `--demo`: a demo tenant with a known API key (printed at startup) and the example workflows of
// demo/workflows/. Idempotent: a restart over the same data dir keeps what is there.
import { DomainError } from "../../kernel/errors";
import { createAutomation, hasWorkflow } from "../automations/service";
import { parseSource } from "../automations/workflow-source";
import type { AutomationContext } from "../context";
import { createTenant, findTenant } from "../tenancy/service";
import { DEMO_TEMPLATE_PLACEHOLDER, seedDemoDocuments } from "./documents";
import { demoWorkflows } from "./workflows/index";
import { seedDemoEvaluation } from "./evaluation/index";

/** Known on purpose: the demo is for trying the API locally, never for production data. */
export const DEMO_KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
export const DEMO_TENANT = "demo";

export interface DemoResult {
  tenantId: string;
  workflows: string[];
  banner(url: string): string;
}

/** Runs `create`; a conflict (another start created the same thing meanwhile) counts as done. */
async function unlessRaced<T>(create: () => Promise<T>): Promise<T | undefined> {
  try {
    return await create();
  } catch (err) {
    if (err instanceof DomainError && err.kind === "conflict") return undefined;
    throw err;
  }
}

export async function runDemo(ctx: AutomationContext): Promise<DemoResult> {
  // Two instances starting with --demo on one database may race: the loser finds what the winner wrote.
  const tenancy = ctx.storage.tenancy;
  if (!(await findTenant(tenancy, DEMO_TENANT))) await unlessRaced(() => createTenant(tenancy, ctx.clock, { name: "Demo", slug: DEMO_TENANT }, { key: DEMO_KEY }));
  const tenantId = (await findTenant(tenancy, DEMO_TENANT))!.id;
  const documents = await seedDemoDocuments(ctx, tenantId);
  const workflows: string[] = [];
  for (const w of demoWorkflows) {
    const slug = parseSource(w.yaml).slug;
    if (!(await hasWorkflow(ctx.storage.automations, tenantId, slug))) await unlessRaced(() => createAutomation(ctx.storage.automations, ctx.clock, tenantId, w.yaml.replaceAll(DEMO_TEMPLATE_PLACEHOLDER, documents.templateId)));
    workflows.push(`workflows.${slug}`);
  }
  await seedDemoEvaluation(ctx, tenantId);
  return {
    tenantId,
    workflows,
    banner: (url) =>
      [
        "",
        "Demo tenant ready:",
        `  tenant     ${DEMO_TENANT} (${tenantId})`,
        `  API key    ${DEMO_KEY}`,
        `  workflows  ${workflows.join(", ")}`,
        `  documents  template "Demo invoice" (${documents.templateId}), e-mail server ${documents.mailServer} (SMTP 127.0.0.1:1025)`,
        `  try        curl -H 'Authorization: Bearer ${DEMO_KEY}' ${url}/v1/automations`,
        "",
      ].join("\n") + "\n",
  };
}
