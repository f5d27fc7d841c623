// Human-review test support: the HTTP harness with the real engine and workers, a workflow whose
// middle step is a human review, and helpers to wait for a run to park and to act on its task.
import { createAutomation } from "../../../src/automation/automations/service";
import type { AutomationConfig } from "../../../src/automation/config";
import { runsOf } from "../../../src/automation/runs/service";
import { harness, json, type Json } from "../app/harness";

export { json, type Json };

export const INVOICE_CHECK = `
name: invoice-check
version: 1.0.0
inputs:
  - {name: vendor, type: string, required: true}
  - {name: total, type: number, required: true}
  - {name: scan, type: file, required: false}
steps:
  - name: extract
    type: transform.set
    with: {fields: {vendor: "{{ input.vendor }}", total: "{{ input.total }}", lines: [{sku: A-1, qty: 2}]}}
  - name: check
    type: control.human_review
    with:
      data: "{{ steps.extract.output }}"
      fieldMetadata:
        /vendor: {confidence: 0.95, label: Vendor}
        /total: {confidence: 0.4, label: Total}
        /lines/0/sku: {review: never}
        /lines/0/qty: {confidence: high}
      selection: {mode: confidence, threshold: 0.8}
      instructions: Compare the total with the scan.
  - name: after
    type: transform.set
    with: {fields: {approvedTotal: "{{ steps.check.output.total }}"}}
output:
  total: "{{ steps.after.output.approvedTotal }}"
  vendor: "{{ steps.check.output.vendor }}"
  qty: "{{ steps.check.output.lines[0].qty }}"
`;

export async function reviewHarness(workers = 2, over: Partial<AutomationConfig> = {}) {
  const h = await harness({ workers, ...over });
  const t = await h.tenant(`h${Math.random().toString(36).slice(2, 8)}`);
  runsOf(h.ctx).startWorkers();
  const key = t.key;
  const post = (path: string, body?: unknown, k = key) => h.req("POST", path, { key: k, body });
  const put = (path: string, body?: unknown, k = key) => h.req("PUT", path, { key: k, body });
  const get = (path: string, k = key) => h.req("GET", path, { key: k });
  const deploy = (yaml: string) => createAutomation(h.ctx.storage.automations, h.clock, t.id, yaml);
  /** Polls the run until its status is one of `statuses`. */
  const until = async (runId: string, statuses: string[]): Promise<Json> => {
    for (let i = 0; i < 4000; i++) {
      const r = await json(await get(`/v1/runs/${runId}`));
      if (statuses.includes(r.execution.status)) return r;
      await Bun.sleep(5);
    }
    throw new Error(`run ${runId} never reached ${statuses.join("/")}`);
  };
  /** Starts a run and waits until it parks; returns the run id and its task (detail). */
  const parked = async (target: string, input: Json, k = key): Promise<{ runId: string; task: Json }> => {
    const started = await json(await post("/v1/runs", { target, input }, k));
    await until(started.id, ["waiting"]);
    const tasks = await json(await get(`/v1/human-reviews?limit=100`, k));
    const mine = tasks.tasks.find((x: Json) => x.executionId === started.id);
    return { runId: started.id, task: await json(await get(`/v1/human-reviews/${mine.id}`, k)) };
  };
  return { h, t, key, post, put, get, deploy, until, parked };
}
