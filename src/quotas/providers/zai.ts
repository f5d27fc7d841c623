// Z.ai (Zhipu GLM coding plan): the monitor endpoint of the coding plan.
import * as v from "valibot";
import { ident } from "../model/names";
import type { QuotaWindow } from "../model/types";
import { HOUR, WEEK, counted, iso, num, optNum, percent, replyProblem, shape, type Outcome, type ProviderDef } from "./provider";

const Limit = v.looseObject({
  type: v.string(),
  unit: optNum,
  usage: optNum,
  currentValue: optNum,
  remaining: optNum,
  percentage: optNum,
  nextResetTime: optNum,
});
const Body = v.looseObject({
  code: num,
  msg: v.nullish(v.string()),
  data: v.nullish(v.looseObject({ level: v.nullish(v.string()), limits: v.nullish(v.array(Limit)) })),
});

/** OK when `code == 200`. `usage` is the LIMIT and `currentValue` the used amount. */
export function parse(json: unknown): Outcome {
  const r = shape(Body, json);
  if (!r.ok) return r.outcome;
  if (r.value.code !== 200) return { status: "unavailable", message: `Z.ai error ${r.value.code}: ${r.value.msg ?? "unknown"}` };
  const windows: QuotaWindow[] = [];
  for (const l of r.value.data?.limits ?? []) {
    let name: string;
    let period: number | null = null;
    let unit = "tokens";
    if (l.type === "TOKENS_LIMIT" && l.unit === 3) [name, period] = ["5h", 5 * HOUR];
    else if (l.type === "TOKENS_LIMIT" && l.unit === 6) [name, period] = ["weekly", WEEK];
    else if (l.type === "TIME_LIMIT") [name, unit] = ["monthly_mcp", "requests"];
    else continue;
    const reset = l.nextResetTime != null ? iso(l.nextResetTime) : null;
    if (l.usage != null && l.usage > 0 && (l.currentValue != null || l.remaining != null)) {
      const used = l.currentValue ?? l.usage - (l.remaining ?? 0);
      windows.push(counted(name, used, l.usage, unit, reset, period));
    } else if (l.percentage != null) {
      windows.push(percent(name, l.percentage, reset, period));
    }
  }
  return { status: "available", plan: r.value.data?.level ?? null, windows };
}

export const zai: ProviderDef = {
  ...ident("zai"),
  consoleUrl: "https://z.ai/manage-apikey/subscription",
  hint: "set ZAI_API_KEY or put your key in ~/.api-zai",
  baseUrl: "https://api.z.ai",
  sources: [
    { kind: "opencode", slot: "zai-coding-plan" },
    { kind: "env", names: ["ZAI_API_KEY", "ZHIPU_API_KEY"] },
    { kind: "keyfile", path: ".api-zai" },
  ],
  async fetch(cred, http) {
    const r = await http.get("/api/monitor/usage/quota/limit", { Authorization: `Bearer ${cred.token}`, Accept: "application/json" });
    return replyProblem(r, zai) ?? { ...parse(r.json), raw: r.json };
  },
};
