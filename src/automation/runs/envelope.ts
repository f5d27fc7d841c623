// Maps stored rows to the wire shapes of the reference (`Run`, `RunListItem`, steps, events, artifacts).
import { agentSource, agentTurns } from "../agents/provenance";
import { type EventRow, type FileRow, type FinishedRun, isTerminal, type RunRow, type RunStatus, type RunStore, type StepRow } from "./store";
import type { EvaluatorStore } from "../evaluators/store";
import type { ModelCallStore } from "../models/store";
import type { ReviewStore } from "../reviews/store";
import type { Run, RunArtifact, RunEvent, RunStep } from "./model";

/** What the views read: the runs store and the model-call journal, evaluation scores and reviews of a run. */
type Stores = { runs: RunStore; models: ModelCallStore; evaluators: EvaluatorStore; reviews: ReviewStore };

export type Expand = "input" | "usage" | "execution" | "debug";

const parse = (s: string | null): unknown => (s == null ? null : JSON.parse(s));

/** Deterministic rank in [0, 1) from the run id: the first 48 bits of its SHA-256. */
/** What ran: the automation and version the run captured (from the row alone). */
export function sourceView(r: RunRow) {
  return {
    id: r.automationId,
    name: r.automationName,
    version: r.versionLabel,
    versionId: r.versionId,
    slug: r.automationSlug,
    ...(r.type === "agent" ? agentSource(r) : {}),
  };
}

export function sampleRankOf(id: string): number {
  const h = new Bun.CryptoHasher("sha256").update(id).digest();
  return h.readUIntBE(0, 6) / 2 ** 48;
}

function durationMs(r: RunRow): number | null {
  if (!r.startedAt) return null;
  const end = r.completedAt ? Date.parse(r.completedAt) : null;
  return end === null ? null : Math.max(0, end - Date.parse(r.startedAt));
}

export function errorMessage(r: RunRow): string | null {
  const e = parse(r.error) as { message?: string } | null;
  return e?.message ?? null;
}

export function artifact(f: FileRow): RunArtifact {
  return {
    name: f.name,
    role: f.role,
    path: f.path,
    ...(f.stepName ? { stepName: f.stepName } : {}),
    contentType: f.contentType,
    size: f.size,
  };
}

export function stepView(s: StepRow): RunStep {
  const end = s.completedAt ? Date.parse(s.completedAt) : null;
  return {
    name: s.name,
    path: s.path,
    type: s.type,
    status: s.status,
    startedAt: s.startedAt,
    completedAt: s.completedAt,
    durationMs: end === null ? null : Math.max(0, end - Date.parse(s.startedAt)),
    attempt: s.attempt,
    ...(s.output != null ? { output: parse(s.output) } : {}),
    ...(s.error != null ? { error: parse(s.error) } : {}),
    // Ours (the reference leaves step records free-form): what the step ran with, see engine/step-input.ts.
    ...(s.input != null ? { input: parse(s.input) } : {}),
  };
}

export function eventView(e: EventRow): RunEvent {
  return {
    type: e.type,
    timestamp: e.timestamp,
    status: e.status,
    message: e.message,
    metadata: (parse(e.metadata) as Record<string, unknown> | null) ?? {},
  };
}

export async function usageView(store: Stores, r: RunRow) {
  // The sum of the run's journaled model calls (models/metered.ts); a run without any counts zero.
  const { tokens, llmCallCount } = await store.models.totals(r.id);
  return {
    tokens,
    creditsCharged: 0,
    durationMs: durationMs(r),
    llmCallCount,
    ocrPagesProcessed: 0,
    ...(r.type === "agent" ? { agentTurns: agentTurns(await store.runs.steps(r.id)) } : {}),
  };
}

async function base(store: Stores, r: RunRow, has?: FinishedRun["has"]) {
  // Independent reads: on PostgreSQL they go out over the pool at once. `has` (from the finish) spares the review read.
  const [scored, nextStatus, review] = await Promise.all([
    r.exampleId || r.experimentId ? store.evaluators.evaluation(r.id) : undefined,
    r.nextRunId ? store.runs.status(r.nextRunId) : undefined,
    has?.review === false ? undefined : store.reviews.get(r.id),
  ]);
  return {
    id: r.id,
    type: r.type as "workflow" | "agent",
    finished: isTerminal(r.status),
    sampleRank: r.sampleRank,
    timing: {
      createdAt: r.createdAt,
      startedAt: r.startedAt,
      completedAt: r.completedAt,
      durationMs: durationMs(r),
      cancelRequestedAt: r.cancelRequestedAt,
    },
    source: sourceView(r),
    trigger: {
      type: r.triggerType,
      by: r.triggeredBy ? { id: r.triggeredBy, name: r.triggeredByName, email: r.triggeredByEmail ?? "" } : null,
      ...(r.triggerDetail ? (parse(r.triggerDetail) as Record<string, unknown>) : {}),
    },
    ...(r.exampleId || r.experimentId ? { eval: { example: r.exampleId, exampleId: r.exampleId, ...(scored ?? { score: null, passed: null }) } } : {}),
    execution: {
      status: r.status as RunStatus,
      schemaValid: null,
      batchId: r.batchId,
      retry: { number: r.retryNumber, previousRunId: r.previousRunId, nextRun: r.nextRunId && nextStatus ? { id: r.nextRunId, status: nextStatus } : null },
      review: review ? { verdict: review.verdict, status: review.status, hasNote: review.note.trim() !== "", correctionCount: review.correctionCount } : null,
    },
  };
}

/**
 * A row of `GET /v1/runs`. `sampleRank` only with `expand=sampleRank`: the SDKs' public key set for
 * list rows leaves it out (`sample_rate` filters on it server-side either way).
 */
export async function listItem(store: Stores, r: RunRow, withSampleRank = false): Promise<Run> {
  const { sampleRank, ...row } = await base(store, r);
  return { ...row, error: errorMessage(r), ...(withSampleRank ? { sampleRank } : {}) };
}

/**
 * `GET /v1/runs/{id}`: terminal runs always carry output, files and error; `expand` adds blocks. `has`:
 * what the run's finish knew (no output files, no review), so those reads are skipped.
 */
export async function runView(store: Stores, r: RunRow, expand: ReadonlySet<Expand> = new Set(), has?: FinishedRun["has"]): Promise<Run> {
  const outputFiles = !isTerminal(r.status) ? undefined : has?.outputFiles === false ? [] : store.runs.files(r.id, "output");
  const [out, files] = await Promise.all([base(store, r, has) as Promise<Run>, outputFiles]);
  if (files) {
    out.output = r.status === "completed" ? parse(r.output) : null;
    out.files = files.map(artifact);
    out.error = errorMessage(r);
  }
  if (expand.has("input")) {
    out.input = {
      args: parse(r.input),
      // The reference's RunFile names only `name`; paths, types and sizes are in GET /runs/{id}/artifacts.
      files: (await store.runs.files(r.id, "input")).map((f) => ({ name: f.name })),
      metadata: parse(r.metadata),
    };
  }
  if (expand.has("usage")) out.usage = await usageView(store, r);
  if (expand.has("execution")) {
    out.execution = {
      ...out.execution!,
      steps: (await store.runs.steps(r.id)).map(stepView),
      definitionSnapshot: r.definition,
    };
  }
  if (expand.has("debug")) {
    const err = parse(r.error);
    out.debug = {
      observability: { phases: (await store.runs.events(r.id)).map(eventView), failure: err, attempts: r.attempts, llmCalls: await llmCalls(store, r, true) },
      traceId: r.id,
    };
  }
  return out;
}

/** `/trace`: one entry per run phase and per step execution, in time order. */
export async function traceView(store: Stores, r: RunRow) {
  const phases = (await store.runs.events(r.id))
    .filter((e) => !e.type.startsWith("step_"))
    .map((e) => ({ type: e.type, phase: e.type, status: e.status ?? undefined, startedAt: e.timestamp, completedAt: e.timestamp, message: e.message }));
  const steps = (await store.runs.steps(r.id)).map((s) => ({
    type: "step",
    stepName: s.name,
    path: s.path,
    stepType: s.type,
    status: s.status,
    startedAt: s.startedAt,
    completedAt: s.completedAt,
    message: s.error ? (parse(s.error) as { message?: string }).message ?? null : null,
    attempt: s.attempt,
  }));
  return [...phases, ...steps, ...(await llmCalls(store, r, false))].sort((a, b) => (a.startedAt ?? "").localeCompare(b.startedAt ?? ""));
}

/** Model calls as trace entries: model, latency, tokens; the prompt only for expand=debug. */
async function llmCalls(store: Stores, r: RunRow, withPrompt: boolean) {
  return (await store.models.calls(r.id)).map((c) => ({
    type: "llm_call",
    ...(c.stepPath ? { stepName: c.stepPath.split(".").pop()!.replace(/\[\d+\]$/, ""), path: c.stepPath } : {}),
    status: c.status,
    startedAt: c.startedAt,
    completedAt: new Date(Date.parse(c.startedAt) + c.durationMs).toISOString(),
    message: c.error,
    model: c.model,
    provider: c.provider,
    latencyMs: c.durationMs,
    tokens: { input: c.inputTokens, output: c.outputTokens, cacheRead: c.cacheReadTokens, cacheWrite: c.cacheWriteTokens },
    ...(withPrompt && c.request ? { prompt: JSON.parse(c.request) as unknown } : {}),
  }));
}
