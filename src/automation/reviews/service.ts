// Run reviews: a reviewer's verdict, note, corrected output, field/file corrections and corrected
// files on a finished run; promotion of a reviewed run into a dataset example; review health of an
// automation. Only terminal runs can be reviewed. Corrected files' bytes live in the blob store,
// pinned per (run, content) so renaming costs nothing and deleting one copy keeps the others.
import { Conflict, Invalid, NotFound } from "../../kernel/errors";
import { newId } from "../../kernel/ids";
import { findAutomation } from "../automations/service";
import type { AutomationContext } from "../context";
import { actorOf } from "../tenancy/actor";
import type { Auth } from "../tenancy/model";
import { contentTypeOf, createExample, type NewExampleFile } from "../datasets/service";
import type { BlobInfo } from "../blobs/blobs";
import { type Part, readText } from "../files/multipart";
import type { CorrectionRow, ExpectedFileRow, ReviewRow } from "./store";
import { openBlob, putBytes, releaseBlob } from "../files/service";
import { runsOf } from "../runs/service";
import { isTerminal, type RunRow } from "../runs/store";
import type { HealthQuery, Review, ReviewBody } from "./model";

/**
 * Who reviews: the request's principal. `reviewedBy`/`closedBy` are the person's user id (with their
 * e-mail beside it) or the key's id (no e-mail), as the reference describes them.
 */
export type Reviewer = Pick<Auth, "tenantId" | "keyId" | "keyName" | "person">;

const parse = (s: string | null): unknown => (s == null ? null : JSON.parse(s));
const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));

function reviewView(r: ReviewRow, corrections: CorrectionRow[]): Review {
  return {
    id: r.id,
    verdict: r.verdict,
    status: r.status,
    note: r.note,
    correctedOutput: parse(r.correctedOutput),
    reviewedBy: r.reviewedBy,
    reviewedByEmail: r.reviewedByEmail,
    reviewedAt: r.reviewedAt,
    closedBy: r.closedBy,
    closedByEmail: r.closedByEmail,
    closedAt: r.closedAt,
    closedNote: r.closedNote,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    corrections: corrections.map((c) => ({
      id: c.id,
      kind: c.kind,
      path: c.path,
      label: c.label,
      originalValue: parse(c.originalValue),
      correctedValue: parse(c.correctedValue),
      note: c.note,
      correctedArtifactPath: c.correctedArtifactPath,
      createdAt: c.createdAt,
      updatedAt: c.updatedAt,
    })),
  };
}

function runOf(ctx: AutomationContext, tenantId: string, runId: string): Promise<RunRow> {
  return runsOf(ctx).get(tenantId, runId);
}

async function finishedRun(ctx: AutomationContext, tenantId: string, runId: string): Promise<RunRow> {
  const run = await runOf(ctx, tenantId, runId);
  if (!isTerminal(run.status)) throw Conflict(`run ${runId} is ${run.status}; only finished runs can be reviewed`, { code: "run_not_terminal" });
  return run;
}

export async function getReview(ctx: AutomationContext, tenantId: string, runId: string) {
  const run = await runOf(ctx, tenantId, runId);
  const s = ctx.storage.reviews;
  const r = await s.get(run.id);
  return { review: r ? reviewView(r, await s.corrections(run.id)) : null };
}

/**
 * Creates or replaces the review. `verdict` and `status` are always set (status defaults from the
 * verdict: correct → closed, else open); `note`, `correctedOutput` and `corrections` keep their
 * stored value when omitted (`null` clears). Closing records who and when; reopening clears it.
 */
export async function putReview(ctx: AutomationContext, who: Reviewer, runId: string, b: ReviewBody) {
  const run = await finishedRun(ctx, who.tenantId, runId);
  const now = ctx.clock.now().toISOString();
  const actor = actorOf(who);
  const saved = await ctx.storage.reviews.put(run.id, (prev, stored) => {
    const verdict = b.verdict ?? null;
    const status = b.status ?? (verdict === "correct" ? "closed" : "open");
    const closing = status !== "open";
    const wasClosed = prev ? prev.status !== "open" : false;
    const note = b.note === undefined ? (prev?.note ?? "") : (b.note ?? "");
    const correctedOutput = b.correctedOutput === undefined ? (prev?.correctedOutput ?? null) : json(b.correctedOutput);
    let corrections: CorrectionRow[] | undefined;
    if (b.corrections) {
      const known = new Map(stored.map((c) => [c.id, c]));
      corrections = b.corrections.map((c, i) => {
        const old = c.id ? known.get(c.id) : undefined;
        return {
          id: old?.id ?? newId("rvc"),
          runId: run.id,
          position: i,
          kind: c.kind,
          path: c.path,
          label: c.label ?? null,
          originalValue: json(c.originalValue),
          correctedValue: json(c.correctedValue),
          note: c.note ?? "",
          correctedArtifactPath: c.correctedArtifactPath ?? null,
          createdAt: old?.createdAt ?? now,
          updatedAt: now,
        };
      });
    }
    const row: ReviewRow = {
      runId: run.id,
      id: prev?.id ?? newId("rvw"),
      tenantId: run.tenantId,
      automationId: run.automationId,
      verdict,
      status,
      note,
      correctedOutput,
      correctionCount: (corrections ?? stored).length,
      reviewedBy: actor.id,
      reviewedByEmail: actor.email,
      reviewedAt: now,
      closedBy: closing ? (wasClosed ? prev!.closedBy : actor.id) : null,
      closedByEmail: closing ? (wasClosed ? prev!.closedByEmail : actor.email) : null,
      closedAt: closing ? (wasClosed ? prev!.closedAt : now) : null,
      closedNote: closing ? (wasClosed ? prev!.closedNote : note || null) : null,
      createdAt: prev?.createdAt ?? now,
      updatedAt: now,
    };
    return { row, corrections };
  });
  return { review: reviewView(saved.row, saved.corrections) };
}

/** Removes metadata, corrections and corrected files (their bytes when nothing else holds them). */
export async function deleteReview(ctx: AutomationContext, tenantId: string, runId: string) {
  const run = await runOf(ctx, tenantId, runId);
  for (const sha of new Set(await ctx.storage.reviews.remove(run.id))) await releaseBlob(ctx, sha);
  return { review: null };
}

/** A corrected file's name: a relative, `/`-separated path without empty, `.` or `..` segments. */
export function checkExpectedName(raw: string, field = "name"): string {
  const name = raw.normalize("NFC").trim();
  const bad = (why: string) => Invalid(`file name ${JSON.stringify(raw)} ${why}`, { field, code: "invalid_filename" });
  if (name === "" || name.length > 500) throw bad("must be 1–500 characters");
  // biome-ignore lint: control characters are exactly what this refuses
  if (/[\u0000-\u001f\u007f\\]/.test(name)) throw bad("must not contain control characters or backslashes");
  if (name.split("/").some((seg) => seg === "" || seg === "." || seg === "..")) throw bad("must be a relative path without empty, . or .. segments");
  return name;
}

export async function listExpected(ctx: AutomationContext, tenantId: string, runId: string) {
  const run = await runOf(ctx, tenantId, runId);
  return { files: (await ctx.storage.reviews.files(run.id)).map((f) => ({ name: f.name })) };
}

async function addExpected(ctx: AutomationContext, run: RunRow, name: string, contentType: string, blob: { sha256: string; size: number }) {
  const replaced = await ctx.storage.reviews.putFile(run.tenantId, { runId: run.id, name, contentType, size: blob.size, sha256: blob.sha256, createdAt: ctx.clock.now().toISOString() });
  if (replaced) await releaseUnused(ctx, run.id, replaced);
  return { name };
}

async function releaseUnused(ctx: AutomationContext, runId: string, sha256: string): Promise<void> {
  if (await ctx.storage.reviews.unpinIfUnused(runId, sha256)) await releaseBlob(ctx, sha256);
}

/** The upload form's parts (`file`, optional `name`) → a corrected file (the same name replaces it). */
export async function uploadExpected(ctx: AutomationContext, who: Reviewer, runId: string, parts: AsyncIterable<Part>) {
  const run = await finishedRun(ctx, who.tenantId, runId);
  let file: { filename: string; contentType: string | null; blob: BlobInfo } | null = null;
  let name: string | null = null;
  try {
    for await (const part of parts) {
      if (part.name === "name") name = (await readText(part, 1000)).trim();
      else if (part.name === "file") {
        if (file) throw Invalid("send exactly one `file` part", { field: "file" });
        if (part.filename === null) throw Invalid("the `file` part must be a file (with a filename)", { field: "file" });
        file = { filename: part.filename, contentType: part.contentType, blob: await putBytes(ctx, part.body) };
      } else throw Invalid(`unknown field "${part.name}" (expected file, name)`, { field: part.name, code: "unrecognized_keys" });
    }
    if (!file) throw Invalid("the `file` part is required", { field: "file", code: "required" });
    const stored = checkExpectedName(name || file.filename, name ? "name" : "file");
    return await addExpected(ctx, run, stored, file.contentType?.split(";")[0] || contentTypeOf(stored), file.blob);
  } catch (err) {
    if (file) await releaseBlob(ctx, file.blob.sha256);
    throw err;
  }
}

/** Copies one of the run's output files (by path or name) into the corrected files. */
export async function copyExpected(ctx: AutomationContext, who: Reviewer, runId: string, b: { outputFileName: string; expectedName?: string }) {
  const run = await finishedRun(ctx, who.tenantId, runId);
  const outputs = await ctx.storage.runs.files(run.id, "output");
  const src = outputs.find((f) => f.path === b.outputFileName) ?? outputs.find((f) => f.name === b.outputFileName);
  if (!src) throw NotFound(`run ${runId} has no output file ${b.outputFileName}`, { field: "outputFileName", code: "not_found" });
  const name = checkExpectedName(b.expectedName ?? src.path, b.expectedName ? "expectedName" : "outputFileName");
  return addExpected(ctx, run, name, src.contentType, src);
}

async function expectedFile(ctx: AutomationContext, tenantId: string, runId: string, name: string): Promise<ExpectedFileRow> {
  const run = await runOf(ctx, tenantId, runId);
  const f = await ctx.storage.reviews.file(run.id, name);
  if (!f) throw NotFound(`run ${runId} has no corrected file ${name}`, { field: "filename" });
  return f;
}

export async function expectedBytes(ctx: AutomationContext, tenantId: string, runId: string, name: string): Promise<{ file: ExpectedFileRow; blob: Blob }> {
  const file = await expectedFile(ctx, tenantId, runId, name);
  const blob = await openBlob(ctx, file.sha256);
  if (!blob) throw NotFound(`the bytes of corrected file ${name} are missing`, { field: "filename" });
  return { file, blob };
}

export async function renameExpected(ctx: AutomationContext, tenantId: string, runId: string, name: string, to: string) {
  const f = await expectedFile(ctx, tenantId, runId, name);
  const target = checkExpectedName(to);
  if (target === f.name) return { name: target };
  if ((await ctx.storage.reviews.renameFile(f.runId, f.name, target)) === "exists") {
    throw Conflict(`a corrected file named ${target} already exists`, { field: "name", code: "already_exists" });
  }
  return { name: target };
}

export async function deleteExpected(ctx: AutomationContext, tenantId: string, runId: string, name: string): Promise<void> {
  const f = await expectedFile(ctx, tenantId, runId, name);
  await ctx.storage.reviews.removeFile(f.runId, f.name);
  await releaseUnused(ctx, f.runId, f.sha256);
}

/**
 * A new dataset example of the run's automation: the run's input (its input files copied by content
 * address) and, with `useCorrections`, the corrected output and corrected files when the review has
 * them, else the run's own output and output files.
 */
export async function promote(ctx: AutomationContext, who: Reviewer, runId: string, b: { name?: string; useCorrections: boolean }) {
  const run = await finishedRun(ctx, who.tenantId, runId);
  const runs = ctx.storage.runs;
  const review = await ctx.storage.reviews.get(run.id);
  const correctedFiles = b.useCorrections ? await ctx.storage.reviews.files(run.id) : [];
  const expected = b.useCorrections && review?.correctedOutput != null ? parse(review.correctedOutput) : parse(run.output);
  const files: NewExampleFile[] = (await runs.files(run.id, "input"))
    .filter((f) => f.path.startsWith("input/"))
    .map((f) => ({ folder: "input" as const, path: f.path.slice("input/".length), contentType: f.contentType, sha256: f.sha256, size: f.size }));
  const outputs = correctedFiles.length
    ? correctedFiles.map((f) => ({ folder: "expected" as const, path: f.name, contentType: f.contentType, sha256: f.sha256, size: f.size }))
    : (await runs.files(run.id, "output")).map((f) => ({ folder: "expected" as const, path: f.path, contentType: f.contentType, sha256: f.sha256, size: f.size }));
  const ex = await createExample(
    ctx,
    who.tenantId,
    run.automationId,
    { name: b.name, input: parse(run.input) as Record<string, unknown>, expected, metadata: { promotedFromRun: run.id, ...(review ? { reviewId: review.id } : {}) } },
    [...files, ...outputs],
  );
  const automation = await findAutomation(ctx.storage.automations, who.tenantId, run.automationId);
  return { automationId: run.automationId, automationType: automation.type, exampleId: ex.id, name: ex.name };
}

const DAY = 86_400_000;

function bucketEnd(start: string, bucket: HealthQuery["bucket"]): string {
  const d = new Date(`${start}T00:00:00.000Z`);
  if (bucket === "day") return new Date(d.getTime() + DAY).toISOString();
  if (bucket === "week") return new Date(d.getTime() + 7 * DAY).toISOString();
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString();
}

const ratio = (a: number, b: number) => (b > 0 ? a / b : null);

/** Review health of one automation over `from`–`to` (default the last 30 days), aggregated in SQL. */
export async function health(ctx: AutomationContext, tenantId: string, automationRef: string, q: HealthQuery) {
  const a = await findAutomation(ctx.storage.automations, tenantId, automationRef);
  const now = ctx.clock.now();
  const to = q.to ?? now.toISOString();
  const from = q.from ?? new Date(now.getTime() - 30 * DAY).toISOString();
  if (from > to) throw Invalid("from must not be after to", { field: "from" });
  const exp = q.experiments?.trim().toLowerCase();
  const scope = {
    tenantId,
    automationId: a.id,
    from,
    to,
    statuses: q.status,
    triggers: q.trigger,
    types: q.type,
    triggeredBy: q.triggeredBy,
    sourceRef: q.sourceRef,
    batchId: q.batchId,
    exampleId: q.exampleId,
    exampleIdContains: q.exampleIdContains,
    completedAfter: q.completedAfter,
    completedBefore: q.completedBefore,
    excludeExperiments: exp === "false" || exp === "exclude" || exp === "0",
  };
  const s = ctx.storage.reviews;
  const sum = await s.healthSummary(scope);
  const buckets = (await s.healthBuckets(scope, q.bucket)).map((b) => ({
    start: new Date(`${b.bucket}T00:00:00.000Z`).toISOString(),
    end: bucketEnd(b.bucket, q.bucket),
    totalRuns: b.totalRuns,
    reviewedRuns: b.reviewedRuns,
    reviewCoverage: ratio(b.reviewedRuns, b.totalRuns),
    correctReviews: b.correctReviews,
    incorrectReviews: b.incorrectReviews,
    nitReviews: b.nitReviews,
    reviewedCorrectness: ratio(b.correctReviews, b.reviewedRuns),
  }));
  const rolling = (await s.healthRolling(scope, q.bucket, q.rollingWindow, q.minRollingReviews)).map((p) => ({
    at: p.at,
    reviewedRuns: p.reviewedRuns,
    correctReviews: p.correctReviews,
    reviewedCorrectness: p.correctReviews / p.reviewedRuns,
    confidenceLower: p.lower,
    confidenceUpper: p.upper,
    totalRunsInWindow: p.totalRunsInWindow,
    reviewCoverage: p.reviewedInWindow / p.totalRunsInWindow,
  }));
  return {
    timeRange: { from, to },
    granularity: { bucket: q.bucket, rollingWindow: q.rollingWindow, minRollingReviews: q.minRollingReviews },
    summary: {
      totalRuns: sum.totalRuns,
      reviewedRuns: sum.reviewedRuns,
      reviewCoverage: ratio(sum.reviewedRuns, sum.totalRuns),
      correctReviews: sum.correctReviews,
      incorrectReviews: sum.incorrectReviews,
      nitReviews: sum.nitReviews,
      reviewedCorrectness: ratio(sum.correctReviews, sum.reviewedRuns),
      confidence: { lower: sum.lower, upper: sum.upper, method: "wilson" as const },
    },
    buckets,
    rolling,
  };
}
