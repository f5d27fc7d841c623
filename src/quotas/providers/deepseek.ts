// DeepSeek: the API account balance.
import * as v from "valibot";
import { ident } from "../model/names";
import type { QuotaWindow } from "../model/types";
import { balance, num, replyProblem, shape, type Outcome, type ProviderDef } from "./provider";

const Body = v.looseObject({
  is_available: v.boolean(),
  balance_infos: v.array(v.looseObject({ currency: v.string(), total_balance: num, granted_balance: v.nullish(num), topped_up_balance: v.nullish(num) })),
});

/** One `balance` window per currency (the first plain, others `balance_<cur>`); decimal strings → numbers. */
export function parse(json: unknown): Outcome {
  const r = shape(Body, json);
  if (!r.ok) return r.outcome;
  if (!r.value.is_available) return { status: "unavailable", message: "DeepSeek reports the account unavailable (insufficient balance)" };
  const windows: QuotaWindow[] = r.value.balance_infos.map((b, i) => {
    const cur = b.currency.toLowerCase();
    return balance(i === 0 ? "balance" : `balance_${cur}`, b.total_balance, cur);
  });
  return { status: "available", plan: null, windows };
}

export const deepseek: ProviderDef = {
  ...ident("deepseek"),
  consoleUrl: "https://platform.deepseek.com/usage",
  hint: "set DEEPSEEK_API_KEY or put your key in ~/.deepseek",
  baseUrl: "https://api.deepseek.com",
  sources: [
    { kind: "env", names: ["DEEPSEEK_API_KEY"] },
    { kind: "keyfile", path: ".deepseek" },
  ],
  async fetch(cred, http) {
    const r = await http.get("/user/balance", { Authorization: `Bearer ${cred.token}`, Accept: "application/json" });
    return replyProblem(r, deepseek) ?? { ...parse(r.json), raw: r.json };
  },
};
