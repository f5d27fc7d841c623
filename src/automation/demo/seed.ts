// `--demo`: a demo tenant with a known API key (printed at startup, for programs), a demo owner who
// signs in to the console by a single-use code (people/service.ts: 10 minutes, once, stored hashed; a
// new one each start), and the example workflows of demo/workflows/. Idempotent: a restart over the
// same data dir keeps what is there.
import { DomainError } from "../../kernel/errors";
import { createAutomation, hasWorkflow } from "../automations/service";
import { parseSource } from "../automations/workflow-source";
import type { AutomationContext } from "../context";
import { createUser, signInCode } from "../people/service";
import { createTenant, findTenant } from "../tenancy/service";
import { DEMO_TEMPLATE_PLACEHOLDER, seedDemoDocuments } from "./documents";
import { demoWorkflows } from "./workflows/index";
import { seedDemoEvaluation } from "./evaluation/index";

/** Known on purpose: the demo is for trying the API locally, never for production data. */
export const DEMO_KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
export const DEMO_TENANT = "demo";
/** The demo owner: no password (they sign in by the start's single-use link, or a reset link). */
export const DEMO_EMAIL = "demo@example.com";

export interface DemoResult {
  tenantId: string;
  workflows: string[];
  banner(url: string): string;
  /**
   * A new single-use sign-in link for the demo owner (10 minutes): `<base>/v1/auth/code?code=…`. The
   * code is no reusable secret: once used or expired, the address a browser keeps signs nobody in.
   */
  signInLink(base: string): Promise<{ link: string; expiresAt: string }>;
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
  const people = { people: ctx.storage.people, tenancy, clock: ctx.clock };
  if (!(await ctx.storage.people.findUser(DEMO_EMAIL))) await unlessRaced(() => createUser(people, { email: DEMO_EMAIL, name: "Demo owner", tenant: tenantId, role: "owner" }));
  return {
    signInLink: async (base) => {
      const { code, expiresAt } = await signInCode(people, { email: DEMO_EMAIL, tenant: tenantId });
      return { link: `${base.replace(/\/+$/, "")}/v1/auth/code?code=${code}`, expiresAt };
    },
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
