// The compiled automation-server --demo (alone in an empty dir) against requests shaped like the
// official SDKs' (typed targets built from `{type, id}`, snake_case query, `X-Eigenpal-Sdk`, encoded
// artifact paths) and through the project's own client: typed targets naming an id, the public key
// sets, input files as artifacts, and `exec_` run ids with legacy `run_` ids still served after a
// restart on a database that has them.
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { unzipSync } from "fflate";
import { AutomationClient } from "../../src/automation/client";
import { DEMO_KEY, demoServer, type DemoServer } from "./automation-demo";
import type { Proc } from "./support";

let s: DemoServer;
let proc: Proc;
let client: AutomationClient;
let helloId = "";
let invoiceId = "";
const sdkHeaders = { authorization: `Bearer ${DEMO_KEY}`, "x-eigenpal-sdk": "typescript", accept: "*/*" };
const raw = (path: string, init: RequestInit = {}) => fetch(`${s.base}${path}`, { ...init, headers: { ...sdkHeaders, ...(init.headers as Record<string, string>) } });
const rawJson = async (path: string, init: RequestInit = {}) => {
  const r = await raw(path, init);
  return { status: r.status, body: (await r.json()) as Record<string, any> };
};
const postJson = (path: string, body: unknown) => rawJson(path, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
const invoice = { lines: [{ amount: 700 }, { amount: 800 }] };

beforeAll(async () => {
  s = await demoServer({ prefix: "automation-compat-e2e-", workers: 2 });
  proc = await s.boot();
  client = new AutomationClient({ baseUrl: s.base, apiKey: DEMO_KEY, maxRetries: 0 });
  helloId = (await client.automations.get("workflows.hello")).id;
  invoiceId = (await client.automations.get("workflows.invoice-summary")).id;
}, 120_000);

afterAll(async () => {
  await s?.close();
});

describe("1. typed target workflows.<wf_ id>", () => {
  test("raw: JSON and multipart run starts with version in the query, every /automations/{id} route", async () => {
    const json = await postJson(`/v1/runs?wait_for_completion=30&version=1.0.0`, { target: `workflows.${helloId}`, input: { name: "Ada" } });
    expect(json.status).toBe(200);
    expect(json.body.output).toEqual({ greeting: "Hello, Ada!" });
    expect(json.body.source.id).toBe(helloId);
    const form = new FormData();
    form.set("target", `workflows.${invoiceId}`);
    form.set("input", JSON.stringify({ invoice }));
    form.set("files.attachment", new File(["%PDF-1.4"], "scan.pdf", { type: "application/pdf" }));
    const multi = await rawJson("/v1/runs?wait_for_completion=30", { method: "POST", body: form });
    expect(multi.status).toBe(200);
    expect(multi.body.output).toEqual({ total: 1500 });
    const detail = await rawJson(`/v1/automations/workflows.${helloId}`);
    expect(detail.body.id).toBe(helloId);
    expect((await rawJson(`/v1/automations/workflows.${helloId}/triggers`)).body.automationId).toBe(helloId);
    expect((await rawJson(`/v1/automations/workflows.${helloId}/versions?limit=5`)).body.data[0].automationId).toBe(helloId);
    const runs = await rawJson(`/v1/runs?type=workflow&source=workflows.${helloId}&limit=3`);
    expect(runs.body.runs.length).toBeGreaterThan(0);
    expect(runs.body.runs.every((r: { source: { id: string } }) => r.source.id === helloId)).toBe(true);
    expect((await postJson("/v1/runs", { target: `agents.${helloId}` })).status).toBe(404);
  });

  test("own client: object targets by id and slug, typed-id strings, target@version", async () => {
    const byId = await client.run({ type: "workflow", id: helloId, version: "latest" }, { name: "B" }, { waitForCompletion: 30 });
    const typed = await client.run(`workflows.${helloId}`, { name: "C" }, { waitForCompletion: 30 });
    const pinned = await client.run("workflows.hello@1.0.0", { name: "D" }, { waitForCompletion: 30 });
    expect([byId, typed, pinned].map((r) => r.output)).toEqual([{ greeting: "Hello, B!" }, { greeting: "Hello, C!" }, { greeting: "Hello, D!" }]);
    expect((pinned.source as { version?: string } | undefined)?.version).toBe("1.0.0");
    expect((await client.automations.get(`workflows.${helloId}`)).id).toBe(helloId);
    expect((await client.automations.triggers(`workflows.${helloId}`)).automationId).toBe(helloId);
  });
});

describe("2. public key sets", () => {
  const AUTOMATION = ["createdAt", "description", "id", "name", "slug", "status", "triggers", "type", "updatedAt", "version"];
  const RUN_ROW = ["error", "eval", "execution", "finished", "id", "source", "timing", "trigger", "type"];
  test("list, detail, versions and run rows carry exactly the SDK's public keys; additions only with expand", async () => {
    const list = await rawJson("/v1/automations?type=workflow&limit=10");
    for (const a of list.body.data) expect(Object.keys(a).sort()).toEqual(AUTOMATION);
    const detail = await client.automations.get(helloId);
    expect(Object.keys(detail).sort()).toEqual([...AUTOMATION, "inputSchema", "outputSchema"].sort());
    const versions = await rawJson(`/v1/automations/${helloId}/versions`);
    expect(Object.keys(versions.body.data[0]).sort()).toEqual(["automationId", "createdAt", "id", "isCurrent", "sourceRef", "version"]);
    const runs = await rawJson(`/v1/runs?type=workflow&source=${helloId}&limit=3`);
    for (const r of runs.body.runs) for (const k of Object.keys(r)) expect(RUN_ROW).toContain(k);
    expect((await rawJson("/v1/automations?expand=implementationAvailable")).body.data[0].implementationAvailable).toBe(true);
    expect(typeof (await rawJson("/v1/runs?limit=1&expand=sampleRank")).body.runs[0].sampleRank).toBe("number");
  });
});

describe("3. input files are artifacts", () => {
  test("raw: upload, run with $fileId, list (role input), download the encoded path; ZIP output-only", async () => {
    const form = new FormData();
    form.set("file", new File(["%PDF-1.4 contract"], "contract.pdf", { type: "application/pdf" }));
    const uploaded = await rawJson("/v1/files", { method: "POST", body: form });
    const started = await postJson("/v1/runs?wait_for_completion=30", { target: "workflows.invoice-summary", input: { invoice, attachment: { $fileId: uploaded.body.id } } });
    expect(started.status).toBe(200);
    const { artifacts } = (await rawJson(`/v1/runs/${started.body.id}/artifacts`)).body;
    expect(artifacts).toEqual([{ name: "contract.pdf", role: "input", path: "input/attachment/contract.pdf", contentType: "application/pdf", size: 17 }]);
    const dl = await raw(`/v1/runs/${started.body.id}/artifacts/${encodeURIComponent(artifacts[0].path)}`);
    expect(dl.status).toBe(200);
    expect(dl.headers.get("content-type")).toBe("application/octet-stream");
    expect(await dl.text()).toBe("%PDF-1.4 contract");
    const zip = await raw(`/v1/runs/${started.body.id}/artifacts?zip=1`);
    expect(Object.keys(unzipSync(new Uint8Array(await zip.arrayBuffer())))).toEqual([]);
  });

  test("own client: inputs and outputs listed with roles, each downloadable", async () => {
    const withInput = await client.run("workflows.invoice-summary", { invoice, attachment: new File(["scan"], "scan.pdf", { type: "application/pdf" }) }, { waitForCompletion: 30 });
    const listed = await client.runs.artifacts(withInput.id);
    expect(listed.map((a) => [a.role, a.path])).toEqual([["input", "input/attachment/scan.pdf"]]);
    const bytes = await client.runs.artifact(withInput.id, listed[0].path);
    expect(bytes.headers.get("content-type")).toBe("application/pdf");
    expect(await bytes.text()).toBe("scan");
    const sheet = await client.run("workflows.spreadsheet-report", {}, { waitForCompletion: 30 });
    expect((await client.runs.artifacts(sheet.id)).map((a) => [a.role, a.path])).toEqual([["output", "hours.xlsx"]]);
  });
});

describe("4. run ids", () => {
  test("new runs are exec_…; a database holding a legacy run_… id still serves it after a restart", async () => {
    const fresh = await client.run("workflows.hello", { name: "Old" }, { waitForCompletion: 30 });
    expect(fresh.id).toStartWith("exec_");
    const accepted = await postJson("/v1/runs", { target: "workflows.hello" });
    expect(accepted.status).toBe(201);
    expect(accepted.body.id).toStartWith("exec_");
    // What an older server left behind: the same run under a run_ id. Rewritten while stopped.
    await proc.kill("SIGTERM");
    const legacy = `run_${fresh.id.slice("exec_".length)}`;
    if (s.pgUrl) {
      // PostgreSQL checks foreign keys per statement: the rewrite runs with them off (replica role).
      const pg = new SQL({ url: s.pgUrl, max: 1 });
      await pg.begin(async (tx) => {
        await tx`SET LOCAL session_replication_role = replica`;
        for (const t of ["run_steps", "run_events", "run_files"]) await tx.unsafe(`UPDATE ${t} SET run_id = $1 WHERE run_id = $2`, [legacy, fresh.id]);
        await tx`UPDATE runs SET id = ${legacy} WHERE id = ${fresh.id}`;
      });
      await pg.close();
    } else {
      const db = new Database(s.dbPath);
      db.run("PRAGMA foreign_keys = OFF");
      for (const t of ["run_steps", "run_events", "run_files"]) db.run(`UPDATE ${t} SET run_id = ? WHERE run_id = ?`, [legacy, fresh.id]);
      db.run("UPDATE runs SET id = ? WHERE id = ?", [legacy, fresh.id]);
      db.close();
    }
    proc = await s.boot();
    // A new port after the restart: a client for it.
    client = new AutomationClient({ baseUrl: s.base, apiKey: DEMO_KEY, maxRetries: 0 });
    const got = await rawJson(`/v1/runs/${legacy}`);
    expect(got.status).toBe(200);
    expect(got.body.output).toEqual({ greeting: "Hello, Old!" });
    expect((await rawJson(`/v1/runs?ids=${legacy}`)).body.runs.map((r: { id: string }) => r.id)).toEqual([legacy]);
    const rerun = await client.rerun(legacy, { waitForCompletion: 30 });
    expect(rerun.id).toStartWith("exec_");
    expect(rerun.execution?.retry).toMatchObject({ previousRunId: legacy });
    expect((await raw(`/v1/runs/${fresh.id}`)).status).toBe(404);
  });
});
