// The TUI's usage view and other one-glance figures: today, this ISO week, per model, last 30 days.
import type { Ctx } from "../core/context";
import type { UsageSummary } from "../model/types";
import { loadPricing } from "./command";
import { periods, prepare } from "./report";
import { updateIndex } from "./store";
import { isoDay, systemZone, Zone, checkZone } from "./tz";

export async function usageSummary(ctx: Ctx): Promise<UsageSummary> {
  const name = ctx.env.TZ && checkZone(ctx.env.TZ) ? ctx.env.TZ : systemZone();
  const zone = new Zone(name);
  const ix = await updateIndex(ctx);
  const table = loadPricing(ctx);
  const today = zone.day(ctx.clock.now().getTime());
  const monday = today - ((today + 3) % 7);
  const from = Math.min(monday, today - 29);
  const days = periods(ix, prepare(ix, table, zone, { since: from, until: today }), zone, "daily");
  const byDay = new Map(days.groups.map((g) => [g.key, g]));
  const sum = (a: number, b: number) => {
    let cost = 0;
    let tokens = 0;
    for (let d = a; d <= b; d++) {
      const g = byDay.get(isoDay(d));
      if (g) {
        cost += g.sum.cost;
        tokens += g.sum.total;
      }
    }
    return { cost, tokens };
  };
  const week = periods(ix, prepare(ix, table, zone, { since: monday, until: today }), zone, "weekly");
  const models = (week.groups[0]?.models ?? []).map((m) => ({ agent: m.agent, model: m.model, cost: m.cost, tokens: m.total }));
  const daily: UsageSummary["daily"] = [];
  for (let d = today - 29; d <= today; d++) daily.push({ day: isoDay(d), cost: byDay.get(isoDay(d))?.sum.cost ?? 0 });
  return { timezone: name, today: sum(today, today), week: sum(monday, today), models, daily };
}
