// `--demo` seeding from two starts at once (two instances on one database): both finish, on one demo
// tenant with each example workflow once; the start that loses a create takes what the other wrote.
import { expect, test } from "bun:test";
import { runDemo } from "../../../src/automation/demo/seed";
import { harness, json } from "../app/harness";

test("two concurrent demo seeds: one tenant, every demo workflow once, the known key works", async () => {
  const h = await harness();
  const [a, b] = await Promise.all([runDemo(h.ctx), runDemo(h.ctx)]);
  expect(a.tenantId).toBe(b.tenantId);
  expect(a.workflows).toEqual(b.workflows);
  const key = "eak_demo_0123456789abcdefghijklmnopqrstuv";
  const list = await json(await h.req("GET", "/v1/automations?limit=100", { key }));
  expect(list.total).toBe(a.workflows.length);
  expect(list.data.map((w: { slug: string }) => `workflows.${w.slug}`).sort()).toEqual([...a.workflows].sort());
  expect((await h.ctx.storage.tenancy.keys(a.tenantId)).length).toBe(1);
});
