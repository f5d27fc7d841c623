// `--demo` evaluation data: a small dataset and an evaluator file for workflows.invoice-summary, so
// `experiments create` works out of the box. Idempotent: an automation that already has examples or
// an evaluator file keeps them.
import { newId } from "../../../kernel/ids";
import type { AutomationContext } from "../../context";
import { findAutomation } from "../../automations/service";
import evaluatorsYaml from "./invoice-summary.evaluators.yaml" with { type: "text" };

export const DEMO_DATASET_TARGET = "workflows.invoice-summary";

const EXAMPLES = [
  { name: "small-invoice", input: { invoice: { lines: [{ amount: 10 }, { amount: 20 }] } }, expected: { total: 30 }, annotation: "two lines" },
  { name: "big-invoice", input: { invoice: { lines: [{ amount: 900 }, { amount: 600 }] } }, expected: { total: 1500 }, annotation: "over 1000: flagged for review" },
  { name: "single-line", input: { invoice: { lines: [{ amount: 42.5 }] } }, expected: { total: 42.5 }, annotation: null },
];

export async function seedDemoEvaluation(ctx: AutomationContext, tenantId: string): Promise<void> {
  const a = await findAutomation(ctx.storage.automations, tenantId, DEMO_DATASET_TARGET);
  const now = ctx.clock.now().toISOString();
  if ((await ctx.storage.datasets.count(tenantId, a.id)) === 0) {
    // All three or none ("name_taken": another start seeded them first).
    await ctx.storage.datasets.create(
      tenantId,
      EXAMPLES.map((e, i) => ({
        row: {
          id: newId("ex"), tenantId, automationId: a.id, automationType: a.type, name: e.name, input: JSON.stringify(e.input),
          expected: JSON.stringify(e.expected), metadata: JSON.stringify({ demo: true }), annotation: e.annotation, rowOrder: i, overrides: null,
          latestRunId: null, createdAt: now, updatedAt: now,
        },
        files: [],
      })),
    );
  }
  if (!(await ctx.storage.evaluators.yaml(a.id))) await ctx.storage.evaluators.put(tenantId, a.id, evaluatorsYaml, now);
}
