// The client library against the compiled automation-server started with --demo in an empty
// directory: a workflow with three pushed versions, promote and restore, a 20 MiB file through an
// upload session downloaded byte-identical, and a run; a demo invoice parked for human review approved
// through the client (the run resumes), a run review put/read/deleted with a promotion, the model catalog.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AutomationClient, NotFoundError, ValidationError, type Run } from "../../src/automation/client";
import { ensureBuilt, startServer, type Server } from "./support";

let dir = "";
let server: Server | undefined;
let client: AutomationClient;

const yaml = (description: string, version?: string) =>
  [
    "name: e2e-client",
    version ? `version: ${version}` : "",
    `description: ${description}`,
    "triggerMethods: [{type: api}]",
    "inputs:",
    "  - {name: n, type: number, required: false}",
    "steps:",
    "  - name: s",
    "    type: transform.set",
    `    with: {fields: {label: "${description}"}}`,
    "output:",
    '  label: "{{ steps.s.output.label }}"',
  ]
    .filter(Boolean)
    .join("\n") + "\n";

beforeAll(async () => {
  const built = await ensureBuilt("automation-server");
  dir = mkdtempSync(join(tmpdir(), "automation-client-e2e-"));
  const bin = join(dir, "automation-server");
  copyFileSync(built, bin);
  Bun.spawnSync(["chmod", "+x", bin]);
  // No --public-url (the port is not known before the start): signed URLs use the origin the client reached.
  server = await startServer([bin, "--demo", "--host", "127.0.0.1", "--workers", "1"], {
    cwd: dir,
    // One model from the environment, as users configure it, so the catalog has an entry.
    env: { AUTOMATION_DATA_DIR: undefined, AUTOMATION_DEFAULT_MODEL: "ollama/llama3", OLLAMA_HOST: "127.0.0.1:1", OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined, ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: undefined },
  });
  const base = server.url;
  const until = Date.now() + 5000;
  let key: string | undefined;
  while (!(key = /eak_demo_\w+/.exec(server.output())?.[0]) && Date.now() < until) await Bun.sleep(20);
  if (!key) throw new Error(`no demo key printed:\n${server.output()}`);
  // Configured the way users do: environment variables.
  client = new AutomationClient({}, { AUTOMATION_BASE_URL: base, AUTOMATION_API_KEY: key });
}, 60_000);

afterAll(async () => {
  if (server && server.proc.exitCode === null) await server.kill("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

describe("client library ↔ compiled automation-server --demo", () => {
  let automationId = "";
  const versionIds: Record<string, string> = {};

  test("auth check with the demo key", async () => {
    expect(await client.authCheck()).toMatchObject({ ok: true, tenantSlug: "demo", wildcardGranted: true });
  });

  test("create a workflow, push three versions, promote one, restore another", async () => {
    const wf = await client.automations.create(yaml("v1", "1.0.0"));
    automationId = wf.id;
    expect(wf).toMatchObject({ type: "workflow", slug: "e2e-client", version: "1.0.0" });
    expect(wf.id).toMatch(/^wf_/);

    for (const [tag, activate] of [["1.1.0", true], ["1.2.0", true], ["1.3.0", false]] as const) {
      const v = await client.automations.versions.create(automationId, { yaml: yaml(`v${tag}`), version: tag, activate });
      expect(v).toMatchObject({ automationId, version: tag, isCurrent: activate });
      versionIds[tag] = v.id;
    }
    expect((await client.automations.get("workflows.e2e-client")).version).toBe("1.2.0");
    const listed = await client.automations.versions.list(automationId);
    expect(listed.data.map((v) => v.version).sort()).toEqual(["1.0.0", "1.1.0", "1.2.0", "1.3.0"]);

    const promoted = await client.automations.versions.promote(automationId, versionIds["1.3.0"]);
    expect(promoted).toMatchObject({ id: versionIds["1.3.0"], isCurrent: true });
    const afterPromote = await client.automations.get(automationId);
    expect(afterPromote).toMatchObject({ version: "1.3.0", description: "v1.3.0" });

    const restored = await client.automations.versions.restore(automationId, versionIds["1.1.0"], { message: "back to 1.1" });
    expect(restored).toMatchObject({ automationId, version: null, isCurrent: true });
    expect(restored.id).not.toBe(versionIds["1.1.0"]);
    expect((await client.automations.get(automationId)).description).toBe("v1.1.0");
    // The untagged restored snapshot cannot be promoted.
    await expect(client.automations.versions.promote(automationId, restored.id)).rejects.toBeInstanceOf(NotFoundError);
    // A duplicate tag is a conflict, invalid YAML a validation error.
    await expect(client.automations.versions.create(automationId, { yaml: yaml("dup"), version: "1.1.0" })).rejects.toMatchObject({ status: 409 });
    await expect(client.automations.versions.create(automationId, { yaml: "name: [", version: "9.9.9" })).rejects.toBeInstanceOf(ValidationError);
    expect((await client.automations.triggers(automationId)).triggers.api).toBe(true);
  });

  test("a 20 MiB file goes through an upload session and downloads byte-identical", async () => {
    const size = 20 * 1024 * 1024;
    const data = new Uint8Array(size);
    for (let off = 0; off < size; off += 65536) crypto.getRandomValues(data.subarray(off, Math.min(size, off + 65536)));
    const path = join(dir, "twenty.bin");
    writeFileSync(path, data);
    const want = new Bun.CryptoHasher("sha256").update(data).digest("hex");

    const negotiation = await client.files.createUpload({ filename: "probe.bin", size });
    expect(negotiation.transport).toBe("presigned-put");

    const file = await client.files.upload({ path });
    expect(file).toMatchObject({ filename: "twenty.bin", size, contentType: "application/octet-stream" });
    const blob = await client.files.download(file.id);
    expect(blob.size).toBe(size);
    expect(new Bun.CryptoHasher("sha256").update(new Uint8Array(await blob.arrayBuffer())).digest("hex")).toBe(want);
    // One blob on disk for it, no temp leftovers.
    expect(readdirSync(join(dir, "data/automation/blobs/tmp"))).toEqual([]);

    expect(await client.files.delete(file.id)).toEqual({ deleted: true });
    await expect(client.files.get(file.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  test("run the workflow and wait for it", async () => {
    const run = await client.run("workflows.e2e-client", { n: 1 }, { waitForCompletion: 30 });
    expect(run.id).toMatch(/^exec_/);
    const done = run.finished ? run : await client.runAndWait("workflows.e2e-client", { n: 1 }, { pollIntervalMs: 100 });
    expect(done.execution?.status).toBe("completed");
    expect(done.output).toEqual({ label: "v1.1.0" });
  });

  test("runs: list/iterate, events, steps, artifacts, cancel of a finished run, rerun", async () => {
    await client.run("workflows.e2e-client", { n: 2 }, { waitForCompletion: 30 });
    const page = await client.runs.list({ limit: 1, source: "e2e-client" });
    expect(page.runs).toHaveLength(1);
    const all: string[] = [];
    for await (const r of client.runs.iterate({ limit: 1 })) all.push(r.id);
    expect(new Set(all).size).toBe(all.length);
    expect(all.length).toBeGreaterThanOrEqual(2);
    const id = all[0];
    const types = (await client.runs.events(id)).map((e) => e.type);
    expect(types[0]).toBe("created");
    expect(types).toContain("completed");
    const steps = await client.runs.steps(id);
    expect(steps[0]).toMatchObject({ name: "s", type: "transform.set", status: "completed" });
    expect(await client.runs.artifacts(id)).toEqual([]);
    const cancel = await client.runs.cancel(id);
    expect(cancel.cancellation.state).toBe("already_terminal");
    const again = await client.rerun(id, { waitForCompletion: 30 });
    expect(again.id).not.toBe(id);
    expect(again.execution?.status).toBe("completed");
  });

  test("run with file inputs: a small one rides in the multipart request, a 6 MiB one is uploaded first", async () => {
    await client.automations.create(
      [
        "name: e2e-files",
        "version: 1.0.0",
        "triggerMethods: [{type: api}]",
        "inputs:",
        "  - {name: small, type: file, required: true}",
        "  - {name: big, type: file, required: true}",
        "steps:",
        "  - name: s",
        "    type: transform.set",
        "    with: {fields: {ok: true}}",
        "output:",
        '  ok: "{{ steps.s.output.ok }}"',
      ].join("\n") + "\n",
    );
    const big = new Uint8Array(6 * 1024 * 1024);
    big.fill(7);
    const run = await client.run(
      "workflows.e2e-files",
      { small: new File(["tiny"], "tiny.txt", { type: "text/plain" }), big: { content: big, filename: "big.bin", mimeType: "application/octet-stream" } },
      { waitForCompletion: 30 },
    );
    expect(run.finished).toBe(true);
    expect(run.execution?.status).toBe("completed");
    const withInput = await client.runs.get(run.id, { expand: ["input"] });
    expect((withInput.input as { files: { name: string }[] }).files.map((f) => f.name).sort()).toEqual(["big.bin", "tiny.txt"]);
    const inputs = (await client.runs.artifacts(run.id)).filter((a) => a.role === "input");
    expect(inputs.map((f) => [f.path, f.size]).sort()).toEqual([["input/big/big.bin", big.byteLength], ["input/small/tiny.txt", 4]]);
  });

  test("a run keeps its snapshot of an uploaded file after the file is deleted", async () => {
    const doc = await client.files.upload(new File(["contract text"], "contract.txt", { type: "text/plain" }));
    const other = await client.files.upload(new File(["more"], "more.txt", { type: "text/plain" }));
    const run = await client.run("workflows.e2e-files", { small: { $fileId: doc.id }, big: { $fileId: other.id } }, { waitForCompletion: 30 });
    expect(run.execution?.status).toBe("completed");
    expect(await client.files.delete(doc.id)).toEqual({ deleted: true });
    await expect(client.files.download(doc.id)).rejects.toBeInstanceOf(NotFoundError);
    const bytes = await client.runs.artifact(run.id, "input/small/contract.txt");
    expect(await bytes.text()).toBe("contract text");
  });
  test("a demo invoice parked for human review, approved through the client: the run resumes", async () => {
    const started = await client.run("workflows.invoice-approval", { vendor: "Initech", total: 5000 });
    const status = async (want: string[]): Promise<Run> => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const run = await client.runs.get(started.id);
        if (want.includes(run.execution?.status ?? "")) return run;
        if (Date.now() > deadline) throw new Error(`run is ${run.execution?.status}`);
        await Bun.sleep(50);
      }
    };
    await status(["waiting"]);
    const summary = (await client.humanReviews.list()).tasks.find((t) => t.executionId === started.id)!;
    const task = await client.humanReviews.get(summary.id);
    expect(task.decisions.map((d) => d.path)).toEqual(["/total"]);
    const set = await client.humanReviews.setField(task.id, { path: "/total", value: 4999, expectedVersion: task.version, idempotencyKey: "fix-total" });
    expect((await client.humanReviews.approve(task.id, { expectedVersion: set.version })).status).toBe("approved");
    const done = await status(["completed", "failed", "rejected", "cancelled"]);
    expect(done.execution?.status).toBe("completed");
    expect(done.output).toEqual({ vendor: "Initech", total: 4999, review: "completed" });
  });

  test("a run review: put, get, a corrected file, promote, delete", async () => {
    const run = await client.run("workflows.invoice-approval", { vendor: "Hooli", total: 200 }, { waitForCompletion: 30 });
    expect(run.execution?.status).toBe("completed");
    const review = await client.reviews.put(run.id, { verdict: "incorrect", correctedOutput: { vendor: "Hooli Inc", total: 200, review: "skipped" } });
    expect(await client.reviews.get(run.id)).toEqual(review);
    await client.reviews.uploadExpected(run.id, new File(["fixed"], "fixed.txt", { type: "text/plain" }));
    expect(await (await client.reviews.downloadExpected(run.id, "fixed.txt")).text()).toBe("fixed");
    const promoted = await client.reviews.promote(run.id);
    expect((await client.examples.get("workflows.invoice-approval", promoted.exampleId)).expected).toEqual({ vendor: "Hooli Inc", total: 200, review: "skipped" });
    await client.reviews.delete(run.id);
    expect(await client.reviews.get(run.id)).toBeNull();
  });

  test("the model catalog configured from the environment", async () => {
    const [model, ...rest] = await client.models.list();
    expect(rest).toEqual([]);
    expect(model).toMatchObject({ id: "ollama/llama3", provider: "ollama", health: "configured" });
    expect(model!.defaultFor).toContain("text");
  });
});
