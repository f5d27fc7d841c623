// `--demo`: a demo tenant with a known API key (printed at startup) and example workflows. Idempotent:
// a restart over the same data dir reuses what is there.
import type { AutomationContext } from "../context";
import { tenantStore } from "../tenancy/store";
import { dbOf } from "../db/client";
import { createTenant } from "../tenancy/service";

/** Known on purpose: the demo is for trying the API locally, never for production data. */
export const DEMO_KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
export const DEMO_TENANT = "demo";

export interface DemoResult {
  tenantId: string;
  workflows: string[];
  banner(url: string): string;
}

export function runDemo(ctx: AutomationContext): DemoResult {
  const existing = tenantStore.find(dbOf(ctx.sqlite), DEMO_TENANT);
  const tenantId = existing?.id ?? createTenant(ctx.sqlite, ctx.clock, { name: "Demo", slug: DEMO_TENANT }, { key: DEMO_KEY }).id;
  const workflows: string[] = [];
  return {
    tenantId,
    workflows,
    banner: (url) =>
      [
        "",
        "Demo tenant ready:",
        `  tenant   ${DEMO_TENANT} (${tenantId})`,
        `  API key  ${DEMO_KEY}`,
        `  try      curl -H 'Authorization: Bearer ${DEMO_KEY}' ${url}/v1/automations`,
        workflows.length ? `  workflows ${workflows.join(", ")}` : "",
        "",
      ]
        .filter((l) => l !== "")
        .join("\n") + "\n",
  };
}
