// The run's journal of model calls: a resumed execution (a new gateway for the same run, as after a
// crash) gets a journaled answer back instead of calling the provider again; within one execution,
// the same question asked twice is two calls.
import { afterAll, expect, test } from "bun:test";
import { meteredGateway } from "../../../src/automation/models/metered";
import { startFakeModels } from "../../support/fake-models";
import { aiHarness } from "./support";

const fake = await startFakeModels();
afterAll(() => fake.close());

test("a resumed execution replays journaled calls once each, then calls the provider", async () => {
  const h = await aiHarness(fake.config());
  // Any run gives the journal a run to belong to.
  const run = await h.run("name: hello\nsteps:\n  - {name: a, type: transform.set, with: {fields: {x: 1}}}\n");
  const store = h.ctx.storage.models;
  const req = { step: "extract", messages: [{ role: "user" as const, content: "read this" }] };

  fake.script({ text: "first", usage: { input: 10, output: 1 } }, { text: "second", usage: { input: 10, output: 1 } });
  const before = meteredGateway(h.ctx.models!, store, run.id, h.clock);
  expect((await before.complete(req)).text).toBe("first");
  expect((await before.complete(req)).text).toBe("second");
  expect(fake.requests.length).toBe(2);

  // "After the crash": a fresh gateway for the same run answers from the journal, in order.
  const after = meteredGateway(h.ctx.models!, store, run.id, h.clock);
  expect((await after.complete(req)).text).toBe("first");
  expect((await after.complete(req)).text).toBe("second");
  expect(fake.requests.length).toBe(2);
  // A different question (another step) is a new call; so is a third ask of the same one.
  fake.script({ text: "third" }, { text: "other" });
  expect((await after.complete(req)).text).toBe("third");
  expect((await after.complete({ ...req, step: "classify" })).text).toBe("other");
  expect(fake.requests.length).toBe(4);
  // Replays are not billed twice.
  expect((await h.get(`/v1/runs/${run.id}/usage`)).usage.llmCallCount).toBe(4);
});
