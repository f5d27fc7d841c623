// Fuzzing the automation API in-process (app.handle): requests for every operation of its own OpenAPI
// document (/openapi/json), valid and hostile, with tenant A's key, garbage or none; tenant B's ids are
// among the path parameters tried.
// Properties: never a 5xx, every error in the issues envelope, nothing of tenant B in any answer to
// someone else, and afterwards B's data unchanged and A's still readable. Seed printed; FUZZ_SEED
// replays, FUZZ_RUNS sets the count (test/bench/fuzz.ts runs long).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import fc from "fast-check";
import { harness, json } from "../automation/app/harness";
import { fuzzParams, operationsOf, requestArb, type FuzzRequest } from "./requests";
import { hostileZips, isIssuesEnvelope } from "./support";

setDefaultTimeout(120_000);

const MARK = "secretb7q";

/** The body, or its first second of a stream that stays open (experiment progress streams do). */
async function bodyText(res: Response): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let text = "";
  const until = Date.now() + 1000;
  for (;;) {
    const next = await Promise.race([reader.read(), Bun.sleep(Math.max(0, until - Date.now())).then(() => null)]);
    if (!next || next.done) break;
    text += dec.decode(next.value, { stream: true });
  }
  await reader.cancel().catch(() => {});
  return text;
}

export async function automationTarget() {
  const h = await harness();
  const a = h.tenant("fuzz-a");
  const b = h.tenant("fuzz-b");
  const yaml = (name: string) => `name: ${name}\ninputs: [{name: n, type: string}]\nsteps: [{name: s, type: transform.set, with: {fields: {x: "{{ input.n }}"}}}]\n`;
  const ids: string[] = [];
  const bIds: string[] = [];
  for (const [t, name] of [[a, "fuzz-a-flow"], [b, `${MARK}-flow`]] as const) {
    const wf = await json(await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: yaml(name) } }));
    const form = new FormData();
    form.set("file", new File([`${t === b ? MARK : "a"}-content`], `${t === b ? MARK : "a"}-file.txt`, { type: "text/plain" }));
    const file = await json(await h.req("POST", "/v1/files", { key: t.key, body: form }));
    const run = await json(await h.req("POST", "/v1/runs", { key: t.key, body: { target: `workflows.${wf.id}`, input: { n: t === b ? MARK : "a" } } }));
    ids.push(wf.id, file.id, run.id, `workflows.${wf.id}`);
    if (t === b) bIds.push(`/v1/automations/${wf.id}`, `/v1/files/${file.id}`, `/v1/files/${file.id}/content`, `/v1/runs/${run.id}`);
  }
  const doc = await json(await h.req("GET", "/openapi/json"));
  const send = async (r: FuzzRequest) => {
    const res = await h.app.handle(new Request(`http://localhost${r.url}`, { method: r.method, headers: r.headers, body: r.body }));
    return { status: res.status, text: await bodyText(res) };
  };
  const bState = async () => {
    const out: unknown[] = [await json(await h.req("GET", "/v1/automations", { key: b.key }))];
    for (const path of bIds) out.push(await (await h.req("GET", path, { key: b.key })).text());
    return JSON.stringify(out);
  };
  return { h, a, b, ids, ops: operationsOf(doc as Parameters<typeof operationsOf>[0]), send, bState };
}

describe("fuzz: automation API in-process", () => {
  test("every operation, hostile input: no 5xx, the envelope, no other tenant's data", async () => {
    const t = await automationTarget();
    expect(t.ops.length).toBeGreaterThan(100);
    const before = await t.bState();
    const ctx = { ids: t.ids, auth: [`Bearer ${t.a.key}`, `Bearer ${t.a.key}`, `Bearer ${t.a.key}`, "Bearer eak_nope", "Basic Zm9vOmJhcg==", undefined], zips: hostileZips() };
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requestArb(t.ops, ctx), async (req) => {
        const r = await Promise.race([t.send(req), Bun.sleep(10_000).then(() => ({ status: 0, text: "" }))]);
        if (r.status === 0) throw new Error(`no answer within 10 s to ${req.describe}`);
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status >= 500) throw new Error(`${r.status} for ${req.describe}: ${r.text.slice(0, 300)}`);
        if (r.status >= 400 && !isIssuesEnvelope(r.text)) throw new Error(`no envelope (${r.status}) for ${req.describe}: ${r.text.slice(0, 300)}`);
        if (r.text.includes(MARK)) throw new Error(`tenant B's data in the answer to ${req.describe}`);
      }),
      fuzzParams("automation in-process", 2000),
    );
    console.log(`[fuzz] automation statuses: ${JSON.stringify(Object.fromEntries(statuses))}`);
    // B's data is as it was; A's lists still answer.
    expect(await t.bState()).toBe(before);
    expect((await t.h.req("GET", "/v1/runs", { key: t.a.key })).status).toBe(200);
  });
});
