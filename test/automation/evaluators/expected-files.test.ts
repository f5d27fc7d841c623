// exact-diff compares an example's expected files (its `expected/` folder) with the run's output
// files: byte equality by relative path; a missing or an extra file is a difference with its reason.
import { beforeAll, expect, test } from "bun:test";
import { json, runsHarness, type Json, type RunsHarness } from "../runs/support";

let h: RunsHarness;
let wf: { id: string };

const writer = `
name: file-writer
version: 1.0.0
inputs: [{name: who, type: string, required: true}]
steps:
  - name: report
    type: transform.set
    with: {fields: {fileName: report.txt, fileText: hello}}
`;

async function example(name: string, files: Record<string, string>, expected?: unknown): Promise<string> {
  const ex = await json(await h.post(`/v1/automations/${wf.id}/examples`, { name, input: { who: name }, ...(expected === undefined ? {} : { expected }) }));
  for (const [path, text] of Object.entries(files)) {
    const fd = new FormData();
    fd.append("file", new File([text], path));
    expect((await h.req("POST", `/v1/automations/${wf.id}/examples/${ex.id}/expected`, { key: h.t.key, body: fd })).status).toBeLessThan(300);
  }
  return ex.id;
}

async function scored(exampleId: string): Promise<Json> {
  const run = await json(await h.post(`/v1/automations/${wf.id}/examples/${exampleId}/run`));
  for (let i = 0; i < 500; i++) {
    const s = (await json(await h.get(`/v1/runs/${run.id}/scores`))).scores;
    if (s.length) return s[0];
    await Bun.sleep(10);
  }
  throw new Error("never scored");
}

beforeAll(async () => {
  h = await runsHarness();
  wf = await h.deploy(writer);
  h.startWorkers();
});

test("the same bytes at the same path match; different bytes do not, with the reason", async () => {
  const same = await scored(await example("same", { "report.txt": "hello" }));
  expect(same).toMatchObject({ evaluatorType: "exact-diff", score: 1, passed: true, error: null });
  expect(same.details).toMatchObject({ compared: 1, matched: 1, mismatches: [] });
  const differs = await scored(await example("differs", { "report.txt": "hellO" }));
  expect(differs).toMatchObject({ score: 0, passed: false });
  expect(differs.details.mismatches).toEqual([expect.objectContaining({ path: "files/report.txt", reason: "the run's file report.txt differs from the expected one" })]);
});

test("a missing and an extra file each fail with their reason; JSON and files are scored together", async () => {
  const s = await scored(await example("renamed", { "summary.txt": "hello" }));
  expect(s).toMatchObject({ score: 0, passed: false });
  expect(s.details.mismatches.map((m: { path: string; reason: string }) => [m.path, m.reason])).toEqual([
    ["files/summary.txt", "the run wrote no file summary.txt"],
    ["files/report.txt", "the run wrote report.txt, which is not an expected file"],
  ]);
  // The JSON output matches (1 leaf), the file does not (1 leaf): half.
  const mixed = await scored(await example("mixed", { "report.txt": "bye" }, { report: { file: { filename: "report.txt" } } }));
  expect(mixed.details).toMatchObject({ compared: 2, matched: 1 });
  expect(mixed.score).toBe(0.5);
});

test("an example with neither expected JSON nor files still records the error", async () => {
  const s = await scored(await example("nothing", {}));
  expect(s).toMatchObject({ score: null, error: "the example has no expected output" });
});
