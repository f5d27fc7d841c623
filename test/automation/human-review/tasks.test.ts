// control.human_review through the HTTP API and the real engine: the run parks (`waiting`, no worker
// held), fields are selected by confidence, edited with optimistic versions and idempotency keys,
// approve resumes the run once with the reviewed data, reject ends it `rejected`, cancel ends the task.
import { describe, expect, test } from "bun:test";
import { INVOICE_CHECK, json, type Json, reviewHarness } from "./support";

describe("human-review tasks", () => {
  test("the step parks the run and creates a task with the low-confidence fields required", async () => {
    const r = await reviewHarness();
    await r.deploy(INVOICE_CHECK);
    const { runId, task } = await r.parked("workflows.invoice-check", { vendor: "ACME", total: 99.5 });
    const run = await json(await r.get(`/v1/runs/${runId}`));
    expect(run.execution.status).toBe("waiting");
    expect(run.finished).toBe(false);
    const events = (await json(await r.get(`/v1/runs/${runId}/events`))).events.map((e: Json) => e.type);
    expect(events).toContain("waiting");
    const steps = (await json(await r.get(`/v1/runs/${runId}/steps`))).steps;
    expect(steps.find((s: Json) => s.name === "check").status).toBe("waiting");
    expect(steps.find((s: Json) => s.name === "after")).toBeUndefined();

    expect(task.id).toMatch(/^hrt_/);
    expect(task).toMatchObject({ executionId: runId, sourceKind: "workflow_step", sourceLabel: "check", status: "pending", version: 1, automationName: "invoice-check" });
    // /total 0.4 < 0.8 and /lines/0/qty "high" (0.75) < 0.8; /vendor 0.95 is trusted, /lines/0/sku is review: never.
    expect(task.decisions.map((d: Json) => d.path).sort()).toEqual(["/lines/0/qty", "/total"]);
    expect(task.requiredCount).toBe(2);
    expect(task.confirmedCount).toBe(0);
    expect(task.data).toEqual({ vendor: "ACME", total: 99.5, lines: [{ sku: "A-1", qty: 2 }] });
    expect(task.instructions).toBe("Compare the total with the scan.");
    expect(task.fieldMetadata["/total"].label).toBe("Total");
  });

  test("fields, versions, approval: the run resumes once with the reviewed data", async () => {
    const r = await reviewHarness();
    await r.deploy(INVOICE_CHECK);
    const { runId, task } = await r.parked("workflows.invoice-check", { vendor: "ACME", total: 99.5 });
    const base = `/v1/human-reviews/${task.id}`;

    const early = await r.post(`${base}/approve`, { expectedVersion: 1 });
    expect(early.status).toBe(409);
    const earlyBody = await json(early);
    expect(earlyBody).toMatchObject({ error: "unconfirmed_fields", currentVersion: 1, status: "pending" });
    expect(earlyBody.issues.map((i: Json) => i.field).sort()).toEqual(["/lines/0/qty", "/total"]);

    const set = await r.put(`${base}/fields`, { path: "/total", value: 120, expectedVersion: 1, idempotencyKey: "k-total" });
    expect(set.status).toBe(200);
    const afterSet = await json(set);
    expect(afterSet.version).toBe(2);
    expect(afterSet.confirmedCount).toBe(1);
    expect(afterSet.data.total).toBe(120);
    expect(afterSet.decisions.find((d: Json) => d.path === "/total")).toMatchObject({ originalValue: 99.5, currentValue: 120, confirmed: true, version: 2 });

    const stale = await r.put(`${base}/fields`, { path: "/lines/0/qty", value: 2, expectedVersion: 1, idempotencyKey: "k-qty" });
    expect(stale.status).toBe(409);
    const conflict = await json(stale);
    expect(conflict).toMatchObject({ error: "version_conflict", currentVersion: 2, status: "pending" });
    // The conflict names the request it answers, as every envelope does.
    expect(conflict.requestId).toMatch(/^req_/);
    expect(conflict.requestId).toBe(stale.headers.get("x-request-id"));

    // The replayed key answers as the first time (version 2), not with a conflict.
    const replay = await r.put(`${base}/fields`, { path: "/total", value: 120, expectedVersion: 1, idempotencyKey: "k-total" });
    expect(replay.status).toBe(200);
    expect((await json(replay)).version).toBe(2);

    const qty = await json(await r.put(`${base}/fields`, { path: "/lines/0/qty", value: 3, expectedVersion: 2, idempotencyKey: "k-qty" }));
    expect(qty.confirmedCount).toBe(2);
    const ok = await r.post(`${base}/approve`, { expectedVersion: 3 });
    expect(ok.status).toBe(200);
    expect((await json(ok)).status).toBe("approved");

    const done = await r.until(runId, ["completed", "failed"]);
    expect(done.execution.status).toBe("completed");
    expect(done.output).toEqual({ total: 120, vendor: "ACME", qty: 3 });
    const events = (await json(await r.get(`/v1/runs/${runId}/events`))).events.map((e: Json) => e.type);
    expect(events.filter((e: string) => e === "resumed")).toHaveLength(1);
    expect(events.filter((e: string) => e === "completed")).toHaveLength(1);
    const steps = (await json(await r.get(`/v1/runs/${runId}/steps`))).steps;
    expect(steps.find((s: Json) => s.name === "check")).toMatchObject({ status: "completed", output: { vendor: "ACME", total: 120, lines: [{ sku: "A-1", qty: 3 }] } });
    // The approved task is no longer listed (the list holds pending tasks only) and cannot be approved again.
    expect((await json(await r.get("/v1/human-reviews"))).tasks).toHaveLength(0);
    const again = await r.post(`${base}/approve`, { expectedVersion: 4 });
    expect(again.status).toBe(409);
    expect((await json(again)).error).toBe("task_not_pending");
  });

  test("bad input: unknown pointer, non-scalar value, missing fields, bad key", async () => {
    const r = await reviewHarness();
    await r.deploy(INVOICE_CHECK);
    const { task } = await r.parked("workflows.invoice-check", { vendor: "ACME", total: 1 });
    const base = `/v1/human-reviews/${task.id}`;
    const unknown = await r.put(`${base}/fields`, { path: "/nope", value: 1, expectedVersion: 1, idempotencyKey: "a" });
    expect(unknown.status).toBe(400);
    expect((await json(unknown)).issues[0]).toMatchObject({ field: "path", code: "unknown_pointer" });
    const nonScalar = await r.put(`${base}/fields`, { path: "/total", value: { a: 1 }, expectedVersion: 1, idempotencyKey: "b" });
    expect(nonScalar.status).toBe(400);
    expect((await json(nonScalar)).issues[0].field).toBe("value");
    const objectField = await r.put(`${base}/fields`, { path: "/lines", value: 1, expectedVersion: 1, idempotencyKey: "c" });
    expect(objectField.status).toBe(400);
    const noKey = await r.put(`${base}/fields`, { path: "/total", value: 1, expectedVersion: 1 });
    expect(noKey.status).toBe(400);
    const longKey = await r.put(`${base}/fields`, { path: "/total", value: 1, expectedVersion: 1, idempotencyKey: "x".repeat(201) });
    expect(longKey.status).toBe(400);
    const noReason = await r.post(`${base}/reject`, { reason: "", expectedVersion: 1, idempotencyKey: "r" });
    expect(noReason.status).toBe(400);
    const unknownField = await r.post(`${base}/approve`, { expectedVersion: 1, extra: true });
    expect(unknownField.status).toBe(400);
    const malformed = await r.h.req("POST", `${base}/approve`, { key: r.key, body: "{nope", headers: { "content-type": "application/json" } });
    expect(malformed.status).toBe(400);
    // Nothing above changed the task.
    expect((await json(await r.get(base))).version).toBe(1);
  });

  test("two concurrent approvals: one 200, one 409; the run resumes once", async () => {
    const r = await reviewHarness();
    await r.deploy(INVOICE_CHECK.replace("selection: {mode: confidence, threshold: 0.8}", "selection: {mode: explicit}"));
    const { runId, task } = await r.parked("workflows.invoice-check", { vendor: "ACME", total: 5 });
    expect(task.requiredCount).toBe(0);
    const answers = await Promise.all([
      r.post(`/v1/human-reviews/${task.id}/approve`, { expectedVersion: 1 }),
      r.post(`/v1/human-reviews/${task.id}/approve`, { expectedVersion: 1 }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const done = await r.until(runId, ["completed", "failed"]);
    expect(done.output.total).toBe(5);
    const events = (await json(await r.get(`/v1/runs/${runId}/events`))).events.map((e: Json) => e.type);
    expect(events.filter((e: string) => e === "step_started" )).toHaveLength(3);
  });

  test("approve replays its idempotency key", async () => {
    const r = await reviewHarness();
    await r.deploy(INVOICE_CHECK.replace("selection: {mode: confidence, threshold: 0.8}", "selection: {mode: explicit}"));
    const { runId, task } = await r.parked("workflows.invoice-check", { vendor: "ACME", total: 5 });
    const first = await r.post(`/v1/human-reviews/${task.id}/approve`, { expectedVersion: 1, idempotencyKey: "once" });
    const second = await r.post(`/v1/human-reviews/${task.id}/approve`, { expectedVersion: 1, idempotencyKey: "once" });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(await json(second)).toEqual(await json(first));
    await r.until(runId, ["completed"]);
  });

  test("an idempotency key replayed with another request is refused (409 idempotency_key_reused), never answered with the first result", async () => {
    const r = await reviewHarness();
    await r.deploy(INVOICE_CHECK);
    const { runId, task } = await r.parked("workflows.invoice-check", { vendor: "ACME", total: 99.5 });
    const base = `/v1/human-reviews/${task.id}`;
    const first = await r.put(`${base}/fields`, { path: "/total", value: 120, expectedVersion: 1, idempotencyKey: "k1" });
    expect(first.status).toBe(200);
    // A stale page sends another value under the same key: refused, and the value is not applied.
    const otherValue = await r.put(`${base}/fields`, { path: "/total", value: 119, expectedVersion: 1, idempotencyKey: "k1" });
    expect(otherValue.status).toBe(409);
    expect(await json(otherValue)).toMatchObject({ error: "idempotency_key_reused", currentVersion: 2, status: "pending" });
    const otherField = await r.put(`${base}/fields`, { path: "/lines/0/qty", value: 3, expectedVersion: 1, idempotencyKey: "k1" });
    expect(otherField.status).toBe(409);
    // Another action under the same key, and the same request from another caller, are other requests too.
    const otherAction = await r.post(`${base}/reject`, { reason: "no", expectedVersion: 1, idempotencyKey: "k1" });
    expect(otherAction.status).toBe(409);
    expect((await json(otherAction)).error).toBe("idempotency_key_reused");
    const second = await r.h.key(r.t.slug, ["*"]);
    const otherCaller = await r.put(`${base}/fields`, { path: "/total", value: 120, expectedVersion: 1, idempotencyKey: "k1" }, second);
    expect(otherCaller.status).toBe(409);
    // The same request again (a retry) still replays its answer.
    const retry = await r.put(`${base}/fields`, { path: "/total", value: 120, expectedVersion: 1, idempotencyKey: "k1" });
    expect(retry.status).toBe(200);
    expect((await json(retry)).version).toBe(2);
    const now = await json(await r.get(base));
    expect(now.version).toBe(2);
    expect(now.data.total).toBe(120);
    expect(now.status).toBe("pending");
    await r.put(`${base}/fields`, { path: "/lines/0/qty", value: 3, expectedVersion: 2, idempotencyKey: "k2" });
    // Approve with a key, then a stale approve under that key after a field edit would be another body.
    const ok = await r.post(`${base}/approve`, { expectedVersion: 3, idempotencyKey: "a1" });
    expect(ok.status).toBe(200);
    const staleApprove = await r.post(`${base}/approve`, { expectedVersion: 2, idempotencyKey: "a1" });
    expect(staleApprove.status).toBe(409);
    expect((await json(staleApprove)).error).toBe("idempotency_key_reused");
    const done = await r.until(runId, ["completed", "failed"]);
    expect(done.output.total).toBe(120);
  });

  test("reject ends the run rejected with the reason; the replayed key answers the same", async () => {
    const r = await reviewHarness();
    await r.deploy(INVOICE_CHECK);
    const { runId, task } = await r.parked("workflows.invoice-check", { vendor: "ACME", total: 5 });
    const body = { reason: "the scan shows another vendor", expectedVersion: 1, idempotencyKey: "rej-1" };
    const first = await r.post(`/v1/human-reviews/${task.id}/reject`, body);
    expect(first.status).toBe(200);
    const firstBody = await json(first);
    expect(firstBody.status).toBe("rejected");
    expect(firstBody.decision.reason).toBe("the scan shows another vendor");
    const replay = await r.post(`/v1/human-reviews/${task.id}/reject`, body);
    expect(await json(replay)).toEqual(firstBody);
    const run = await json(await r.get(`/v1/runs/${runId}`));
    expect(run.execution.status).toBe("rejected");
    expect(run.finished).toBe(true);
    expect(run.error).toBe("the scan shows another vendor");
    const steps = (await json(await r.get(`/v1/runs/${runId}/steps`))).steps;
    expect(steps.find((s: Json) => s.name === "check").status).toBe("failed");
    expect(steps.find((s: Json) => s.name === "after")).toBeUndefined();
  });

  test("cancelling the waiting run cancels its task", async () => {
    const r = await reviewHarness();
    await r.deploy(INVOICE_CHECK);
    const { runId, task } = await r.parked("workflows.invoice-check", { vendor: "ACME", total: 5 });
    const c = await json(await r.post(`/v1/runs/${runId}/cancel`));
    expect(c.cancellation).toEqual({ state: "cancelled", wasStatus: "waiting" });
    const t = await json(await r.get(`/v1/human-reviews/${task.id}`));
    expect(t.status).toBe("cancelled");
    expect(t.version).toBe(2);
    const late = await r.post(`/v1/human-reviews/${task.id}/approve`, { expectedVersion: 2 });
    expect(late.status).toBe(409);
    expect(await json(late)).toMatchObject({ error: "task_not_pending", status: "cancelled" });
    expect((await json(await r.get(`/v1/runs/${runId}`))).execution.status).toBe("cancelled");
  });

  test("a waiting run holds no worker: with one worker, other runs still flow", async () => {
    const r = await reviewHarness(1);
    await r.deploy(INVOICE_CHECK);
    await r.deploy("name: quick\nsteps:\n  - {name: a, type: transform.set, with: {fields: {ok: true}}}\n");
    const first = await r.parked("workflows.invoice-check", { vendor: "A", total: 1 });
    const second = await r.parked("workflows.invoice-check", { vendor: "B", total: 2 });
    const quick = await json(await r.post("/v1/runs?wait_for_completion=30", { target: "workflows.quick", input: {} }));
    expect(quick.execution.status).toBe("completed");
    expect(first.task.id).not.toBe(second.task.id);
  });

  test("tasks list: pending only, oldest first, cursor, automation and waiting_before filters", async () => {
    const r = await reviewHarness();
    const wf = await r.deploy(INVOICE_CHECK);
    await r.deploy(INVOICE_CHECK.replace("name: invoice-check", "name: other-check"));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      r.h.clock.advance(1000);
      ids.push((await r.parked("workflows.invoice-check", { vendor: `V${i}`, total: i })).task.id);
    }
    r.h.clock.advance(1000);
    const other = await r.parked("workflows.other-check", { vendor: "O", total: 9 });
    const p1 = await json(await r.get(`/v1/human-reviews?limit=2`));
    expect(p1.tasks.map((t: Json) => t.id)).toEqual(ids.slice(0, 2));
    const p2 = await json(await r.get(`/v1/human-reviews?limit=2&cursor=${p1.nextCursor}`));
    expect(p2.tasks.map((t: Json) => t.id)).toEqual([ids[2], other.task.id]);
    expect(p2.nextCursor).toBeNull();
    const byWf = await json(await r.get(`/v1/human-reviews?automation_id=${wf.id}`));
    expect(byWf.tasks.map((t: Json) => t.id)).toEqual(ids);
    const before = await json(await r.get(`/v1/human-reviews?waitingBefore=${encodeURIComponent(other.task.createdAt)}`));
    expect(before.tasks).toHaveLength(3);
    expect((await r.get(`/v1/human-reviews?limit=101`)).status).toBe(400);
    expect((await r.get(`/v1/human-reviews?cursor=zzz`)).status).toBe(400);
  });

  test("tenant isolation: another tenant's task is as missing as an unknown one", async () => {
    const r = await reviewHarness();
    await r.deploy(INVOICE_CHECK);
    const { task } = await r.parked("workflows.invoice-check", { vendor: "ACME", total: 5 });
    const other = (await r.h.tenant(`o${Math.random().toString(36).slice(2, 8)}`)).key;
    expect((await r.get(`/v1/human-reviews/${task.id}`, other)).status).toBe(404);
    expect((await json(await r.get(`/v1/human-reviews`, other))).tasks).toHaveLength(0);
    expect((await r.post(`/v1/human-reviews/${task.id}/approve`, { expectedVersion: 1 }, other)).status).toBe(404);
    expect((await r.put(`/v1/human-reviews/${task.id}/fields`, { path: "/total", value: 1, expectedVersion: 1, idempotencyKey: "x" }, other)).status).toBe(404);
    const readOnly = await r.h.key(r.t.slug, ["runs:read"]);
    expect((await r.get(`/v1/human-reviews/${task.id}`, readOnly)).status).toBe(403);
    const reader = await r.h.key(r.t.slug, ["reviews:read"]);
    expect((await r.get(`/v1/human-reviews/${task.id}`, reader)).status).toBe(200);
    expect((await r.post(`/v1/human-reviews/${task.id}/approve`, { expectedVersion: 1 }, reader)).status).toBe(403);
    expect((await r.get(`/v1/human-reviews`, "")).status).toBe(401);
  });

  test("run input files are shown on the task and downloadable", async () => {
    const r = await reviewHarness();
    await r.deploy(INVOICE_CHECK);
    const started = await json(
      await r.post("/v1/runs", {
        target: "workflows.invoice-check",
        input: { vendor: "ACME", total: 3, scan: { $inline: { filename: "scan.txt", mimeType: "text/plain", base64: Buffer.from("scanned bytes").toString("base64") } } },
      }),
    );
    await r.until(started.id, ["waiting"]);
    const listed = (await json(await r.get("/v1/human-reviews"))).tasks[0];
    const task = await json(await r.get(`/v1/human-reviews/${listed.id}`));
    expect(task.files).toHaveLength(1);
    expect(task.files[0]).toMatchObject({ filename: "scan.txt", mimeType: "text/plain", size: 13, fieldName: "scan", artifactPath: "input/scan/scan.txt", role: "input" });
    const bytes = await r.get(`/v1/human-reviews/${task.id}/files/${task.files[0].fileId}/content`);
    expect(bytes.status).toBe(200);
    expect(bytes.headers.get("content-type")).toBe("text/plain");
    expect(await bytes.text()).toBe("scanned bytes");
    expect((await r.get(`/v1/human-reviews/${task.id}/files/file_nope/content`)).status).toBe(404);
  });

  test("selection modes: all, explicit include, exclude, label thresholds, missing confidence skip", async () => {
    const r = await reviewHarness();
    const wf = (name: string, selection: string, meta = "") => `
name: ${name}
steps:
  - name: review
    type: control.human_review
    with:
      data: {a: 1, b: {c: "x", d: [true, null]}, e: 0.5}
${meta}
      selection: ${selection}
`;
    await r.deploy(wf("all-fields", "{mode: all, exclude: [/e]}"));
    await r.deploy(wf("explicit-fields", "{mode: explicit, include: [/b/c]}", "      fieldMetadata: {/a: {review: always}}"));
    await r.deploy(wf("by-label", "{mode: confidence, threshold: medium, missingConfidence: skip}", "      fieldMetadata: {/a: {confidence: low}, /e: {confidence: high}, /b/c: {confidence: 0.3}}"));
    const paths = async (name: string) => (await r.parked(`workflows.${name}`, {})).task.decisions.map((d: Json) => d.path).sort();
    expect(await paths("all-fields")).toEqual(["/a", "/b/c", "/b/d/0", "/b/d/1"]);
    expect(await paths("explicit-fields")).toEqual(["/a", "/b/c"]);
    expect(await paths("by-label")).toEqual(["/a", "/b/c"]);
  });

  test("invalid step config is refused when the workflow is created", async () => {
    const r = await reviewHarness();
    const res = await r.post("/v1/automations", {
      yaml: `name: bad-review\nsteps:\n  - name: r\n    type: control.human_review\n    with: {data: {a: 1}, selection: {mode: sometimes}}\n`,
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await json(res))).toContain("selection");
    const long = await r.post("/v1/automations", {
      yaml: `name: long-review\nsteps:\n  - name: r\n    type: control.human_review\n    with: {data: {a: 1}, instructions: "${"x".repeat(10_001)}"}\n`,
    });
    expect(long.status).toBe(400);
  });
});
