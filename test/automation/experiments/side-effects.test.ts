// Evaluation runs never touch the outside world: with the real engine, an example run skips
// action.email and a POST action.http (a loopback server counts what arrives), and is still scored.
import { afterAll, expect, test } from "bun:test";
import { createAutomation } from "../../../src/automation/automations/service";
import { runsOf } from "../../../src/automation/runs/service";
import { harness, json } from "../app/harness";

let hits = 0;
const sink = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => (hits++, Response.json({ ok: true })) });
afterAll(() => sink.stop(true));

test("an example run records skipped e-mail and HTTP side effects, and is scored", async () => {
  const h = await harness({ workers: 1, httpAllowHosts: [`127.0.0.1:${sink.port}`] });
  const t = await h.tenant("side-effects");
  const wf = await createAutomation(h.ctx.storage.automations, h.clock, t.id, `
name: notify
version: 1.0.0
inputs: [{name: who, type: string, required: true}]
steps:
  - {name: mail, type: action.email, with: {server: ems_none, to: "someone@example.com", subject: "hi", text: "hello {{ input.who }}"}}
  - {name: hook, type: action.http, with: {url: "http://127.0.0.1:${sink.port}/hook", method: POST, body: {who: "{{ input.who }}"}}}
output: {who: "{{ input.who }}"}
`);
  runsOf(h.ctx).startWorkers();
  const ex = await json(await h.req("POST", `/v1/automations/${wf.id}/examples`, { key: t.key, body: { name: "one", input: { who: "ann" }, expected: { who: "ann" } } }));
  const run = await json(await h.req("POST", `/v1/automations/${wf.id}/examples/${ex.id}/run`, { key: t.key }));
  let scores: { score: number }[] = [];
  for (let i = 0; i < 500 && scores.length === 0; i++) {
    await Bun.sleep(10);
    scores = (await json(await h.req("GET", `/v1/runs/${run.id}/scores`, { key: t.key }))).scores;
  }
  const steps = (await json(await h.req("GET", `/v1/runs/${run.id}/steps`, { key: t.key }))).steps;
  expect(steps.map((s: { name: string; output: { skipped?: boolean } }) => [s.name, s.output?.skipped])).toEqual([["mail", true], ["hook", true]]);
  expect(hits).toBe(0);
  expect(scores[0].score).toBe(1);
  await runsOf(h.ctx).stopWorkers(1000);
});
