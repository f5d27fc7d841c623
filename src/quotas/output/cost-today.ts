// `%cost_today` / `{cost_today}`: what each agent's logs say was spent today, as `quotas usage` (or the
// background refresh) last wrote it to usage-today.json. Read with the prompt's cheap file read.
import { cacheDir, join, type Ctx } from "../core/context";
import { readTextFast } from "../core/files";

export const costTodayPath = (ctx: Ctx) => join(cacheDir(ctx), "usage-today.json");

export const wantsCostToday = (format: string | undefined) => format !== undefined && format.includes("cost_today");

/** USD per provider (claude, codex) for today; null when nothing was written today. */
export function readCostToday(ctx: Ctx, now: number): Record<string, number> | null {
  const text = readTextFast(costTodayPath(ctx));
  if (!text) return null;
  try {
    const j = JSON.parse(text) as { valid_until?: unknown; cost_usd?: unknown };
    if (typeof j.valid_until !== "number" || now >= j.valid_until || typeof j.cost_usd !== "object" || j.cost_usd === null) return null;
    const out: Record<string, number> = {};
    for (const [k, x] of Object.entries(j.cost_usd)) if (typeof x === "number") out[k] = x;
    return out;
  } catch {
    return null;
  }
}
