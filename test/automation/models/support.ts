// AI step tests: the HTTP app over an in-memory database with the real engine and worker pool, models
// pointing at the loopback fake. `run` deploys a workflow and runs it to completion through /v1/runs.
import { createAutomation } from "../../../src/automation/automations/service";
import type { AutomationConfig } from "../../../src/automation/config";
import type { ModelsConfig } from "../../../src/automation/models/config";
import { runsOf } from "../../../src/automation/runs/service";
import { harness, json, type Harness, type Json } from "../app/harness";

export { json, type Json };

export interface AiHarness extends Harness {
  t: { id: string; slug: string; key: string };
  get(path: string): Promise<Json>;
  /** Deploys `yaml` (once per name) and runs it with `input`, waiting for the end. */
  run(yaml: string, input?: Record<string, unknown>): Promise<Json>;
}

export async function aiHarness(models?: ModelsConfig, over: Partial<AutomationConfig> = {}): Promise<AiHarness> {
  const h = await harness({ workers: 2, ...(models ? { models } : {}), ...over });
  runsOf(h.ctx).startWorkers();
  const t = await h.tenant(`t${Math.random().toString(36).slice(2, 8)}`);
  const deployed = new Set<string>();
  return {
    ...h,
    t,
    get: async (path) => json(await h.req("GET", path, { key: t.key })),
    async run(yaml, input = {}) {
      const name = /^name:\s*(\S+)/m.exec(yaml)![1];
      if (!deployed.has(name)) {
        await createAutomation(h.ctx.storage.automations, h.clock, t.id, yaml);
        deployed.add(name);
      }
      const res = await h.req("POST", "/v1/runs?wait_for_completion=60", { key: t.key, body: { target: `workflows.${name}`, input } });
      const body = await json(res);
      if (res.status !== 200) throw new Error(`run did not finish: ${res.status} ${JSON.stringify(body)}`);
      return body;
    },
  };
}

export const inline = (filename: string, mimeType: string, bytes: Uint8Array) => ({ $inline: { filename, mimeType, base64: Buffer.from(bytes).toString("base64") } });
