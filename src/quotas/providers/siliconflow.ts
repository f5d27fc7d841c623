// SiliconFlow: the account's balance from `user/info`.
import * as v from "valibot";
import { ident } from "../model/names";
import { balance, num, replyProblem, shape, type Outcome, type ProviderDef } from "./provider";

const Body = v.looseObject({
  code: v.nullish(num),
  message: v.nullish(v.string()),
  data: v.nullish(v.looseObject({ totalBalance: v.nullish(num), chargeBalance: v.nullish(num), balance: v.nullish(num) })),
});

/** `data.totalBalance` (CNY, a decimal string) → `balance`. */
export function parse(json: unknown): Outcome {
  const r = shape(Body, json);
  if (!r.ok) return r.outcome;
  const d = r.value.data;
  if ((r.value.code != null && r.value.code !== 20000 && r.value.code !== 0) || !d || d.totalBalance == null) {
    return { status: "unavailable", message: `SiliconFlow error ${r.value.code ?? ""}: ${r.value.message ?? "no balance in response"}`.trim() };
  }
  return { status: "available", plan: null, windows: [balance("balance", d.totalBalance, "cny")] };
}

export const siliconflow: ProviderDef = {
  ...ident("siliconflow"),
  consoleUrl: "https://cloud.siliconflow.cn/account/ak",
  hint: "set SILICONFLOW_API_KEY or put your key in ~/.siliconflow",
  baseUrl: "https://api.siliconflow.cn",
  sources: [
    { kind: "env", names: ["SILICONFLOW_API_KEY"] },
    { kind: "keyfile", path: ".siliconflow" },
  ],
  async fetch(cred, http) {
    const r = await http.get("/v1/user/info", { Authorization: `Bearer ${cred.token}`, Accept: "application/json" });
    return replyProblem(r, siliconflow) ?? { ...parse(r.json), raw: r.json };
  },
};
