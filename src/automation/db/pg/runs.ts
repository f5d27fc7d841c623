// Runs on PostgreSQL: the same rows and answers as db/sqlite/runs.ts. Claims are one statement over rows
// picked with FOR UPDATE SKIP LOCKED, so claimers on any number of connections never get the same run,
// and return the claimed rows; every status move is a conditional UPDATE (or holds the run's row lock),
// so finish happens once and a cancel request and a finish never both win. Runs are inserted in parallel
// over the pool (the plain ones of one event-loop turn in one statement). The journal (step rows, their
// events, run finishes) is committed in batches: writes queued in one event-loop turn share one
// statement; batches of different runs commit in parallel, a run's own writes one batch after the
// other, so a step's start never commits after its finish. The pausing writes (`parkIn`,
// `requeueIn`, `endWaitingIn`) run inside the human-review store's transaction.
import { parseRef } from "../ref";
import { TickTaken } from "../../schedules/store";
import type { CancelResult, Claim, EventRow, FileRow, FinishedRun, FinishRequest, Lease, ListFilter, NewEvent, NewRun, ReviewFilter, RunRow, StepRecord, StepRow, StepStart } from "../../runs/store";
import { isTerminal } from "../../runs/store";
import { LostSteps } from "../runs-model";
import { likeEscape } from "../sql-shared";
import { StaleSource, type Channel, type RunInsertOptions, type RunStore, type SourceCheck } from "../../runs/store";
import { type Pg, plain, plainRows } from "./rows";
import { pgNotify } from "./notifications";

export const RUN_COLUMNS = `id, tenant_id AS "tenantId", type, automation_id AS "automationId", automation_name AS "automationName",
  automation_slug AS "automationSlug", version_id AS "versionId", version_label AS "versionLabel", source_ref AS "sourceRef",
  requested_ref AS "requestedRef", definition, status, trigger_type AS "triggerType", triggered_by AS "triggeredBy",
  triggered_by_name AS "triggeredByName", triggered_by_email AS "triggeredByEmail", batch_id AS "batchId", example_id AS "exampleId", experiment_id AS "experimentId",
  evaluation::int AS evaluation, trial, input::text AS input, metadata::text AS metadata, overrides::text AS overrides, output::text AS output,
  error::text AS error, sample_rank AS "sampleRank", retry_number AS "retryNumber", previous_run_id AS "previousRunId",
  next_run_id AS "nextRunId", parent_run_id AS "parentRunId", created_at AS "createdAt", started_at AS "startedAt",
  completed_at AS "completedAt", cancel_requested_at AS "cancelRequestedAt", claimed_by AS "claimedBy",
  lease_until::float8 AS "leaseUntil", attempts, request_id AS "requestId", dedupe_key AS "dedupeKey", trigger_detail::text AS "triggerDetail"`;
/** RUN_COLUMNS of `runs` where another relation of the statement has columns of the same names. */
const RUN_COLUMNS_OF_RUNS = RUN_COLUMNS.split(",").map((c) => `runs.${c.trim()}`).join(", ");
const STEP_COLUMNS = `run_id AS "runId", path, seq::float8 AS seq, name, type, status, output::text AS output, error::text AS error, input::text AS input, attempt,
  started_at AS "startedAt", completed_at AS "completedAt"`;
const EVENT_COLUMNS = `id::float8 AS id, run_id AS "runId", type, timestamp, status, message, metadata::text AS metadata`;
const FILE_COLUMNS = `run_id AS "runId", path, role, name, content_type AS "contentType", size::float8 AS size, sha256, step_name AS "stepName",
  file_id AS "fileId", created_at AS "createdAt"`;
const TERMINAL_SQL = "('completed', 'failed', 'cancelled', 'rejected')";

/** The advisory lock class of worker liveness: (LIVENESS_LOCK, hashtext(worker id)), held by the worker's process. */
const LIVENESS_LOCK = 72_420;

/** The channel a finish announces itself on (CHANNELS in runs/store.ts). */
const FINISHED_CHANNEL: Channel = "runs.finished";
const QUEUED_CHANNEL: Channel = "runs.queued";
const ASSIGNED_CHANNEL: Channel = "runs.assigned";
/** The run row rides along on runs.assigned up to this size (the payload stays under NOTIFY's 8000 bytes with the ids). */
const ASSIGNED_ROW_MAX = 7800;

/** Step rows sort by this: increasing within a process and across restarts (microseconds + counter). */
let lastSeq = 0;
const nextSeq = () => (lastSeq = Math.max(lastSeq + 1, Date.now() * 1000));

const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));

/** The runs columns a NewRun sets, with the SQL each value goes through (JSON as the text given). */
const INSERT_COLUMNS: [keyof NewRun, string, string?][] = [
  ["id", "id"], ["tenantId", "tenant_id"], ["type", "type"], ["automationId", "automation_id"], ["automationName", "automation_name"],
  ["automationSlug", "automation_slug"], ["versionId", "version_id"], ["versionLabel", "version_label"], ["sourceRef", "source_ref"],
  ["requestedRef", "requested_ref"], ["definition", "definition"], ["status", "status"], ["triggerType", "trigger_type"],
  ["triggeredBy", "triggered_by"], ["triggeredByName", "triggered_by_name"], ["triggeredByEmail", "triggered_by_email"], ["batchId", "batch_id"], ["exampleId", "example_id"],
  ["experimentId", "experiment_id"], ["evaluation", "evaluation", "(CAST($ AS int) <> 0)"], ["trial", "trial", "CAST($ AS int)"], ["input", "input", "CAST($ AS text)::json"],
  ["metadata", "metadata", "CAST($ AS text)::json"], ["overrides", "overrides", "CAST($ AS text)::json"], ["output", "output", "CAST($ AS text)::json"],
  ["error", "error", "CAST($ AS text)::json"], ["sampleRank", "sample_rank", "CAST($ AS float8)"], ["retryNumber", "retry_number", "CAST($ AS int)"], ["previousRunId", "previous_run_id"],
  ["nextRunId", "next_run_id"], ["parentRunId", "parent_run_id"], ["createdAt", "created_at", "CAST($ AS text)::timestamptz"],
  ["startedAt", "started_at", "CAST($ AS text)::timestamptz"], ["completedAt", "completed_at", "CAST($ AS text)::timestamptz"],
  ["cancelRequestedAt", "cancel_requested_at", "CAST($ AS text)::timestamptz"], ["claimedBy", "claimed_by"], ["leaseUntil", "lease_until", "CAST($ AS bigint)"],
  ["attempts", "attempts", "CAST($ AS int)"], ["requestId", "request_id"], ["dedupeKey", "dedupe_key"], ["triggerDetail", "trigger_detail", "CAST($ AS text)::json"],
];
const DEFAULTS: Partial<Record<keyof NewRun, unknown>> = { evaluation: 0, retryNumber: 0, attempts: 0 };
const INSERT_RUN = `INSERT INTO runs (${INSERT_COLUMNS.map(([, c]) => c).join(", ")}) VALUES (${INSERT_COLUMNS.map(([, , cast], i) => (cast ?? "$").replace("$", `$${i + 1}`)).join(", ")})`;

/** Where the run id is among INSERT_COLUMNS' values. */
const RUN_ID_AT = INSERT_COLUMNS.findIndex(([k]) => k === "id");
const STATUS_AT = INSERT_COLUMNS.findIndex(([k]) => k === "status");

/** Multi-row INSERT of events: `(runId, at, event)` each. */
async function addEvents(db: Pg, events: [string, string, NewEvent][]): Promise<void> {
  if (events.length === 0) return;
  const args: unknown[] = [];
  await db.unsafe(eventsInsert(events, args), args);
}

/** The INSERT of `events`, its parameters appended to `args` (numbered after what `args` holds). */
function eventsInsert(events: [string, string, NewEvent][], args: unknown[]): string {
  const rows = events.map(([runId, at, e]) => {
    const b = args.length;
    args.push(runId, e.type, at, e.status ?? null, e.message ?? null, e.metadata ? JSON.stringify(e.metadata) : null);
    return `($${b + 1}, $${b + 2}, CAST($${b + 3} AS text)::timestamptz, $${b + 4}, $${b + 5}, CAST($${b + 6} AS text)::json)`;
  });
  return `INSERT INTO run_events (run_id, type, timestamp, status, message, metadata) VALUES ${rows.join(", ")}`;
}

const addEvent = (db: Pg, runId: string, at: string, e: NewEvent) => addEvents(db, [[runId, at, e]]);

/**
 * Parks run `runId` on step `path` (step and run `waiting`, no worker or lease), inside the caller's
 * transaction; locks the run row. False when a cancel was requested or the run is not running/waiting.
 */
export async function parkIn(tx: Pg, runId: string, at: string, path: string, event: NewEvent): Promise<boolean> {
  const [run] = await tx`SELECT status, cancel_requested_at AS c FROM runs WHERE id = ${runId} FOR UPDATE`;
  if (!run || run.c || (run.status !== "running" && run.status !== "waiting")) return false;
  await tx`UPDATE run_steps SET status = 'waiting' WHERE run_id = ${runId} AND path = ${path}`;
  await tx`UPDATE runs SET status = 'waiting', claimed_by = NULL, lease_until = NULL WHERE id = ${runId}`;
  await addEvent(tx, runId, at, event);
  return true;
}

/** A waiting run back to the queue with its parked step completed as `output` (see SqliteRunStore.requeueIn). */
export async function requeueIn(tx: Pg, runId: string, at: string, path: string, output: unknown, event: NewEvent): Promise<boolean> {
  const moved = await tx`UPDATE runs SET status = 'pending', attempts = 0 WHERE id = ${runId} AND status = 'waiting' RETURNING id`;
  if (moved.length !== 1) return false;
  await tx.unsafe("UPDATE run_steps SET status = 'completed', output = CAST($1 AS text)::json, error = NULL, completed_at = $2 WHERE run_id = $3 AND path = $4", [
    JSON.stringify(output ?? null), at, runId, path,
  ]);
  await addEvent(tx, runId, at, event);
  return true;
}

/** A waiting run ends with `status` and `error`; its parked step fails. False when it was not waiting. */
export async function endWaitingIn(tx: Pg, runId: string, at: string, path: string, status: "rejected" | "failed", error: { message: string; code: string }): Promise<boolean> {
  const err = JSON.stringify(error);
  const moved = await tx.unsafe(
    "UPDATE runs SET status = $1, error = CAST($2 AS text)::json, completed_at = $3, claimed_by = NULL, lease_until = NULL WHERE id = $4 AND status = 'waiting' RETURNING id",
    [status, err, at, runId],
  );
  if (moved.length !== 1) return false;
  await tx.unsafe("UPDATE run_steps SET status = 'failed', error = CAST($1 AS text)::json, completed_at = $2 WHERE run_id = $3 AND path = $4", [err, at, runId, path]);
  await addEvent(tx, runId, at, { type: status, status, message: error.message });
  return true;
}

/** A step row as the journal writes it (a start has no output, error or completion yet). */
interface StepWrite {
  runId: string;
  path: string;
  seq: number;
  name: string;
  type: string;
  status: string;
  output: string | null;
  error: string | null;
  /** JSON of the values the step ran with (engine/step-input.ts); null on a start. */
  input: string | null;
  attempt: number;
  startedAt: string;
  completedAt: string | null;
  /** The lease the write is fenced by (none: unfenced). */
  lease?: Lease;
}

/** Rows of `alias` (with columns run_id, lw, la) whose run is still held under their lease (lw null: unfenced). */
const heldBy = (alias: string) =>
  `(${alias}.lw IS NULL OR EXISTS (SELECT 1 FROM runs h WHERE h.id = ${alias}.run_id AND h.claimed_by = ${alias}.lw AND h.attempts = ${alias}.la))`;

/** Whether `it` records a finished step (whose loss keeps its run from finishing). */
const finishedStep = (it: Item): it is Extract<Item, { kind: "step" }> => it.kind === "step" && it.w.completedAt !== null;

/** One queued journal write: a step row with its event, or a run's finish. */
type Item =
  | { kind: "step"; w: StepWrite; event: NewEvent; at: string }
  | { kind: "finish"; runId: string; at: string; r: FinishRequest; lease?: Lease };

interface Waiter {
  resolve(v: unknown): void;
  reject(err: unknown): void;
}

/** Rows per multi-row statement (PostgreSQL takes at most 65,535 parameters). */
const CHUNK = 1000;
const chunks = <T>(xs: T[], size = CHUNK) => Array.from({ length: Math.ceil(xs.length / size) }, (_, i) => xs.slice(i * size, (i + 1) * size));

/** The step rows of a batch (a step started and finished in it is one row, keeping its start's seq) and their events. */
function stepRows(items: Item[]): { steps: StepWrite[]; stepEvents: [string, string, NewEvent, Lease | undefined][] } {
  const steps = new Map<string, StepWrite>();
  const stepEvents: [string, string, NewEvent, Lease | undefined][] = [];
  for (const it of items) {
    if (it.kind !== "step") continue;
    const key = `${it.w.runId}\u0000${it.w.path}`;
    const prev = steps.get(key);
    steps.set(key, prev ? { ...it.w, seq: prev.seq } : it.w);
    stepEvents.push([it.w.runId, it.at, it.event, it.w.lease]);
  }
  return { steps: [...steps.values()], stepEvents };
}

/** The upsert of step rows, its parameters appended to `args`. */
function stepsUpsert(rows: StepWrite[], args: unknown[]): string {
  const values = rows.map((w) => {
    const b = args.length;
    args.push(w.runId, w.path, w.seq, w.name, w.type, w.status, w.output, w.error, w.attempt, w.startedAt, w.completedAt, w.lease?.worker ?? null, w.lease?.attempt ?? null, w.input);
    const n = (k: number) => `$${b + k}`;
    return `(CAST(${n(1)} AS text), CAST(${n(2)} AS text), CAST(${n(3)} AS bigint), CAST(${n(4)} AS text), CAST(${n(5)} AS text), CAST(${n(6)} AS text),
      CAST(${n(7)} AS text)::json, CAST(${n(8)} AS text)::json, CAST(${n(9)} AS int), CAST(${n(10)} AS text)::timestamptz, CAST(${n(11)} AS text)::timestamptz,
      CAST(${n(12)} AS text), CAST(${n(13)} AS int), CAST(${n(14)} AS text)::json)`;
  });
  return `INSERT INTO run_steps (run_id, path, seq, name, type, status, output, error, attempt, started_at, completed_at, input)
     SELECT run_id, path, seq, name, type, status, output, error, attempt, started_at, completed_at, input
     FROM (VALUES ${values.join(", ")}) v(run_id, path, seq, name, type, status, output, error, attempt, started_at, completed_at, lw, la, input)
     WHERE ${heldBy("v")}
     ON CONFLICT (run_id, path) DO UPDATE SET status = excluded.status, output = excluded.output, error = excluded.error,
       attempt = excluded.attempt, started_at = excluded.started_at, completed_at = excluded.completed_at, input = excluded.input`;
}

/**
 * A batch of step writes and run finishes (the common batches: a worker's steps, a run's last steps
 * and its finish) as ONE statement, atomic on its own, so it commits in one round trip instead of
 * BEGIN, four statements and COMMIT: the step upsert and the conditional finish UPDATE in
 * data-modifying CTEs, and every event in one INSERT whose ORDER BY keeps the batch's order (a run's
 * step events before its finish event). Of several finishes of one run the first counts.
 */
async function writeJournal(db: Pg, items: Item[]): Promise<unknown[]> {
  const out: unknown[] = items.map(() => undefined);
  const { steps, stepEvents } = stepRows(items);
  const first = new Map<string, number>();
  items.forEach((it, i) => {
    if (it.kind === "finish" && !first.has(it.runId)) first.set(it.runId, i);
  });
  const args: unknown[] = [];
  const ctes: string[] = [];
  const events: string[] = [];
  if (steps.length) ctes.push(`s AS (${stepsUpsert(steps, args)} RETURNING 1)`);
  if (stepEvents.length) {
    const rows = stepEvents.map(([runId, at, e, lease], n) => {
      const b = args.length;
      args.push(runId, e.type, at, e.status ?? null, e.message ?? null, e.metadata ? JSON.stringify(e.metadata) : null, n, lease?.worker ?? null, lease?.attempt ?? null);
      return `(CAST($${b + 1} AS text), CAST($${b + 2} AS text), CAST($${b + 3} AS text), CAST($${b + 4} AS text), CAST($${b + 5} AS text), CAST($${b + 6} AS text), CAST($${b + 7} AS int),
        CAST($${b + 8} AS text), CAST($${b + 9} AS int))`;
    });
    ctes.push(`se(run_id, type, at, status, message, metadata, n, lw, la) AS (VALUES ${rows.join(", ")})`);
    events.push(`SELECT run_id, type, at, status, message, metadata, 0 AS grp, n FROM se WHERE ${heldBy("se")}`);
  }
  if (first.size) {
    const values = [...first.values()].map((i, n) => {
      const it = items[i] as Extract<Item, { kind: "finish" }>;
      const b = args.length;
      args.push(it.runId, it.r.status, json(it.r.output), it.r.error ? JSON.stringify(it.r.error) : null, it.at, it.r.message ?? null, n, it.lease?.worker ?? null, it.lease?.attempt ?? null);
      return `(CAST($${b + 1} AS text), CAST($${b + 2} AS text), CAST($${b + 3} AS text), CAST($${b + 4} AS text), CAST($${b + 5} AS text), CAST($${b + 6} AS text), CAST($${b + 7} AS int),
        CAST($${b + 8} AS text), CAST($${b + 9} AS int))`;
    });
    ctes.push(`v(id, status, output, error, at, message, n, lw, la) AS (VALUES ${values.join(", ")})`);
    ctes.push(`f AS (UPDATE runs SET status = v.status, output = CAST(v.output AS text)::json, error = CAST(v.error AS text)::json,
                 completed_at = CAST(v.at AS text)::timestamptz, claimed_by = NULL, lease_until = NULL
               FROM v WHERE runs.id = v.id AND runs.status NOT IN ${TERMINAL_SQL} AND (v.lw IS NULL OR (runs.claimed_by = v.lw AND runs.attempts = v.la))
               RETURNING ${RUN_COLUMNS_OF_RUNS}, v.at AS f_at, v.message AS f_message, v.n AS f_n)`);
    events.push("SELECT id, status, f_at, status, f_message, NULL, 1 AS grp, f_n FROM f");
  }
  ctes.push(`e AS (INSERT INTO run_events (run_id, type, timestamp, status, message, metadata)
                   SELECT run_id, type, CAST(at AS timestamptz), status, message, CAST(metadata AS json)
                   FROM (${events.join(" UNION ALL ")}) x(run_id, type, at, status, message, metadata, grp, n) ORDER BY grp, n)`);
  // Each run finished tells the other processes (runs.finished, delivered on commit): no statement of its own.
  // The finished rows come back as they are now, with whether they have output files and a review (in
  // this statement's snapshot: files a step wrote were committed before): the finisher's waiters read nothing.
  const won = await db.unsafe(
    `WITH ${ctes.join(",\n")} SELECT ${
      first.size
        ? `f.*, EXISTS (SELECT 1 FROM run_files rf WHERE rf.run_id = f.id AND rf.role = 'output') AS f_files,
             EXISTS (SELECT 1 FROM run_reviews rr WHERE rr.run_id = f.id) AS f_review, pg_notify('${FINISHED_CHANNEL}', id) AS f_notified FROM f`
        : "NULL AS id WHERE false"
    }`,
    args,
  );
  const rows = new Map<string, FinishedRun>();
  for (const { f_at: _a, f_message: _m, f_n: _n, f_notified: _x, f_files, f_review, ...run } of won as Record<string, unknown>[]) {
    rows.set(run.id as string, { run: plain<RunRow>(run), has: { outputFiles: f_files === true, review: f_review === true } });
  }
  for (const [runId, i] of first) out[i] = rows.get(runId);
  return out;
}

/** Automation `a` still has current version `v` and last change `u` (RunInsertOptions.source). */
const SOURCE_HOLDS = (id: string, v: string, u: string) => `a.id = ${id} AND a.current_version_id = ${v} AND a.updated_at = CAST(${u} AS text)::timestamptz`;

/** A plain run insert waiting for its turn's statement: the row's INSERT_COLUMNS values and its first events. */
interface PlainInsert {
  values: unknown[];
  events: NewEvent[];
  source?: SourceCheck;
  resolve(row: RunRow): void;
  reject(err: unknown): void;
}

/** Runs per insert statement (about 45 parameters each; PostgreSQL takes at most 65,535). */
const INSERT_CHUNK = 500;

/** Statement texts by batch shape (direct dispatch or not, events per run): built once each (45 columns a run made them cost ~10 µs a request). */
const insertTexts = new Map<string, string>();

/** The statement of insertRuns for a batch of this shape (numbering its parameters as insertRuns fills them). */
function insertText(eventCounts: number[], assign: boolean): string {
  let at = assign ? 1 : 0;
  // Direct dispatch (one pending run): the offer `o` it takes, if any, decides the claim columns.
  const now = assign ? "CAST($1 AS bigint)" : "";
  const claimed: Record<string, string> = {
    status: "CASE WHEN o.worker IS NULL THEN v.status ELSE 'running' END",
    claimed_by: "COALESCE(o.worker, v.claimed_by)",
    lease_until: `CASE WHEN o.worker IS NULL THEN v.lease_until ELSE ${now} + o.lease_ms END`,
    attempts: "CASE WHEN o.worker IS NULL THEN v.attempts ELSE 1 END",
    started_at: "CASE WHEN o.worker IS NULL THEN v.started_at ELSE v.created_at END",
  };
  const runRows = eventCounts.map(() => {
    const b = at;
    at += INSERT_COLUMNS.length + 3;
    const g = b + INSERT_COLUMNS.length;
    return `(${INSERT_COLUMNS.map(([, , cast], i) => (cast ?? "CAST($ AS text)").replace("$", `$${b + i + 1}`)).join(", ")}, CAST($${g + 1} AS text), CAST($${g + 2} AS text), CAST($${g + 3} AS text))`;
  });
  const eventRows: string[] = [];
  for (const count of eventCounts) {
    for (let e = 0; e < count; e++) {
      const b = at;
      at += 6;
      eventRows.push(`(CAST($${b + 1} AS text), CAST($${b + 2} AS text), CAST($${b + 3} AS text), CAST($${b + 4} AS text), CAST($${b + 5} AS text), CAST($${b + 6} AS int))`);
    }
  }
  const columns = INSERT_COLUMNS.map(([, c]) => c).join(", ");
  const select = assign ? INSERT_COLUMNS.map(([, c]) => claimed[c] ?? `v.${c}`).join(", ") : columns;
  const insert = `INSERT INTO runs (${columns}) SELECT ${select} FROM (VALUES ${runRows.join(", ")}) v(${columns}, g_a, g_v, g_u)${assign ? " LEFT JOIN o ON true" : ""}
    WHERE v.g_a IS NULL OR EXISTS (SELECT 1 FROM automations a WHERE ${SOURCE_HOLDS("v.g_a", "v.g_v", "v.g_u")}) RETURNING ${RUN_COLUMNS}`;
  const given = eventRows.length
    ? [`SELECT r.id, ev.type, CAST(r."createdAt" AS timestamptz) AS at, ev.status, ev.message, CAST(ev.metadata AS json) AS metadata, ev.n
        FROM (VALUES ${eventRows.join(", ")}) ev(run_id, type, status, message, metadata, n) JOIN r ON r.id = ev.run_id`]
    : [];
  // An assigned run also gets the `started` event a claim would have written.
  const events = assign ? [...given, `SELECT r.id, 'started', CAST(r."createdAt" AS timestamptz), 'running', NULL, NULL, ${eventRows.length} FROM r WHERE r.status = 'running'`] : given;
  const offer = `o AS (SELECT worker, token, lease_ms FROM run_offers WHERE token IS NOT NULL AND NOT EXISTS (SELECT 1 FROM runs WHERE status = 'pending')
                       LIMIT 1 FOR UPDATE SKIP LOCKED), `;
  return `WITH ${assign ? offer : ""}r AS (${insert})${
      events.length
        ? `, e AS (INSERT INTO run_events (run_id, type, timestamp, status, message, metadata)
                   SELECT id, type, at, status, message, metadata FROM (${events.join(" UNION ALL ")}) x ORDER BY n)`
        : ""
    }${assign ? ", t AS (UPDATE run_offers SET token = NULL FROM o WHERE run_offers.worker = o.worker AND EXISTS (SELECT 1 FROM r WHERE r.status = 'running'))" : ""}
     SELECT r.*, CASE WHEN r.status = 'pending' THEN pg_notify('${QUEUED_CHANNEL}', r.id)${
       assign
         ? ` WHEN o.worker IS NOT NULL THEN pg_notify('${ASSIGNED_CHANNEL}', concat_ws(' ', o.worker, o.token, r.id, CASE WHEN octet_length(j.row) < ${ASSIGNED_ROW_MAX} THEN j.row END))`
         : ""
     } END AS queued FROM r${assign ? " LEFT JOIN o ON true LEFT JOIN LATERAL (SELECT row_to_json(r)::text AS row) j ON true" : ""}`;
}

/**
 * Runs with their first events in ONE statement: a multi-row INSERT … SELECT (each value typed by its
 * column) and the events' INSERT in a data-modifying CTE, in the order given (a run's events by their
 * order). A run with a source check (RunInsertOptions.source) is inserted only while it holds; it comes
 * back undefined otherwise. A pending run announces itself on runs.queued, delivered on commit.
 * Resolves with the inserted rows in the order of `batch`.
 */
async function insertRuns(db: Pg, batch: Pick<PlainInsert, "values" | "events" | "source">[], assign = false): Promise<(RunRow | undefined)[]> {
  // The arguments in the order the statement numbers them: the offer's clock, each run's values and
  // source check, then each event. The statement's text depends only on the batch's shape.
  const args: unknown[] = assign ? [Date.now()] : [];
  for (const { values, source } of batch) args.push(...values, source?.automationId ?? null, source?.versionId ?? null, source?.updatedAt ?? null);
  let n = 0;
  for (const { values, events } of batch) {
    for (const e of events) args.push(values[RUN_ID_AT], e.type, e.status ?? null, e.message ?? null, e.metadata ? JSON.stringify(e.metadata) : null, n++);
  }
  const counts = batch.map((b) => b.events.length);
  const shape = `${assign ? "a" : "p"}${counts.join(",")}`;
  let text = insertTexts.get(shape);
  if (text === undefined) {
    text = insertText(counts, assign);
    if (insertTexts.size >= 256) insertTexts.clear();
    insertTexts.set(shape, text);
  }
  const rows = await db.unsafe(text, args);
  const byId = new Map<string, RunRow>();
  for (const { queued: _q, ...row } of rows as Record<string, unknown>[]) byId.set(row.id as string, plain<RunRow>(row));
  return batch.map(({ values }) => byId.get(values[RUN_ID_AT] as string));
}

/**
 * A step's start waits this long for a statement to share (its finish, the run's next writes, any
 * run's writes in the next batch) before it commits alone. So the start of a step with an effect (an
 * HTTP call) is not committed in the moments the effect leaves, and a shorter step is one write. A
 * start is only shown while its step runs (crash recovery reads finished steps), and whatever must
 * follow it (a cancel, a human-review park) flushes the journal first.
 */
const START_DELAY_MS = 10;

/** Journal batches committing at once per process (each on a pool connection of its own). */
const JOURNAL_BATCHES = 4;

const itemRun = (it: Item) => (it.kind === "step" ? it.w.runId : it.runId);

export class PgRunStore implements RunStore {
  constructor(readonly pg: Pg) {}

  // ---- the journal: writes queued in one turn share a statement; batches of other runs commit in parallel ----
  private items: Item[] = [];
  private readonly lost = new LostSteps();
  private waiters: Waiter[] = [];
  private scheduled = false;
  /** A dispatch for queued step starts alone (START_DELAY_MS). */
  private lazyTimer: ReturnType<typeof setTimeout> | undefined;
  /** Runs with a batch committing: their later writes wait for it (a step's start never commits after its finish). */
  private committingRuns = new Set<string>();
  private batchesInFlight = 0;
  /** Every write queued or committing, settled once committed (or refused): what flush() waits for. */
  private open = new Set<Promise<unknown>>();

  /** Queues a journal write for the next dispatch (this turn's end; `lazy`: within START_DELAY_MS). */
  private enqueue<T = void>(item: Item, lazy = false): Promise<T> {
    this.items.push(item);
    const done = new Promise<T>((resolve, reject) => this.waiters.push({ resolve: resolve as (v: unknown) => void, reject }));
    const settled: Promise<unknown> = done.then(
      () => this.open.delete(settled),
      () => this.open.delete(settled),
    );
    this.open.add(settled);
    if (lazy) {
      this.lazyTimer ??= setTimeout(() => {
        this.lazyTimer = undefined;
        this.dispatch();
      }, START_DELAY_MS);
    } else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.dispatch());
    }
    return done;
  }

  /** Commits every journal write queued so far; resolves once they all are (committed or refused). */
  async flush(): Promise<void> {
    this.dispatch();
    await Promise.all([...this.open]);
  }

  /**
   * Sends the queued writes of runs with no batch committing as one batch, while fewer than
   * JOURNAL_BATCHES are in flight; a run's later writes wait in the queue, in order, until its batch
   * committed. Batches of disjoint runs touch disjoint rows, so they never wait on each other.
   */
  private dispatch(): void {
    this.scheduled = false;
    if (this.batchesInFlight >= JOURNAL_BATCHES || this.items.length === 0) return;
    const items: Item[] = [];
    const waiters: Waiter[] = [];
    const keptItems: Item[] = [];
    const keptWaiters: Waiter[] = [];
    this.items.forEach((it, i) => {
      const busy = this.committingRuns.has(itemRun(it));
      (busy ? keptItems : items).push(it);
      (busy ? keptWaiters : waiters).push(this.waiters[i]);
    });
    if (items.length === 0) return;
    this.items = keptItems;
    this.waiters = keptWaiters;
    const runs = new Set(items.map(itemRun));
    for (const r of runs) this.committingRuns.add(r);
    this.batchesInFlight++;
    void this.commit(items, waiters).finally(() => {
      for (const r of runs) this.committingRuns.delete(r);
      this.batchesInFlight--;
      this.dispatch();
    });
  }

  private async commit(items: Item[], waiters: Waiter[]): Promise<void> {
    // A run with a finished step's record lost in an earlier batch does not finish (see RunStore.finish).
    if (!this.lost.empty) [items, waiters] = this.refuseLostFinishes(items, waiters);
    if (items.length === 0) return;
    let out: unknown[];
    try {
      // One statement per CHUNK items (each is one round trip, atomic on its own).
      out = [];
      for (const part of chunks(items)) out.push(...(await writeJournal(this.pg, part)));
    } catch {
      // One bad write must not fail its neighbours: one statement each. A finished step whose record
      // still fails is remembered, and its run's finish (later in this batch or after) is refused.
      for (let i = 0; i < items.length; i++) {
        const it = items[i];
        const refused = it.kind === "finish" ? this.lost.take(it.runId) : undefined;
        if (refused) {
          waiters[i].reject(refused);
          continue;
        }
        try {
          const [v] = await writeJournal(this.pg, [it]);
          if (finishedStep(it)) this.lost.unmark(it.w.runId, it.w.path);
          waiters[i].resolve(v);
        } catch (err) {
          if (finishedStep(it)) this.lost.mark(it.w.runId, it.w.path);
          waiters[i].reject(err);
        }
      }
      return;
    }
    if (!this.lost.empty) for (const it of items) if (finishedStep(it)) this.lost.unmark(it.w.runId, it.w.path);
    out.forEach((v, i) => waiters[i].resolve(v));
  }

  /** Rejects the finishes of runs with a lost step record; the other items go on. */
  private refuseLostFinishes(items: Item[], waiters: Waiter[]): [Item[], Waiter[]] {
    const keptItems: Item[] = [];
    const keptWaiters: Waiter[] = [];
    items.forEach((it, i) => {
      const refused = it.kind === "finish" ? this.lost.take(it.runId) : undefined;
      if (refused) return waiters[i].reject(refused);
      keptItems.push(it);
      keptWaiters.push(waiters[i]);
    });
    return [keptItems, keptWaiters];
  }

  // ---- plain inserts: the ones started in one event-loop turn share one statement ----
  private inserts: PlainInsert[] = [];
  private insertScheduled = false;

  /**
   * Inserts a run with its first events (and files, a schedule tick, a retry link) at once, outside the
   * journal batch. The common insert (no files, tick or retry link) joins the other plain inserts of the
   * same event-loop turn: one statement (one round trip, one commit) for all of them, sent at the end of
   * the turn, several such statements in parallel over the pool. The others are one transaction each.
   */
  async insert(run: NewRun, events: NewEvent[], files: Omit<FileRow, "runId">[] = [], opts: RunInsertOptions = {}): Promise<RunRow> {
    const values = INSERT_COLUMNS.map(([k]) => run[k] ?? DEFAULTS[k] ?? null);
    // A claimable run announces itself (runs.queued, delivered on commit): idle workers elsewhere wake
    // one round trip after the insert, with no NOTIFY statement of its own.
    const queued = run.status === "pending";
    if (!opts.tick && !opts.previousRunId && files.length === 0) {
      return new Promise<RunRow>((resolve, reject) => {
        this.inserts.push({ values, events, source: opts.source, resolve, reject });
        if (this.insertScheduled) return;
        this.insertScheduled = true;
        setImmediate(() => {
          this.insertScheduled = false;
          for (const part of chunks(this.inserts.splice(0), INSERT_CHUNK)) void this.insertBatch(part);
        });
      });
    }
    return this.pg.begin(async (tx) => {
      const s = opts.source;
      if (s && (await tx.unsafe(`SELECT 1 FROM automations a WHERE ${SOURCE_HOLDS("$1", "$2", "$3")}`, [s.automationId, s.versionId, s.updatedAt])).length === 0) {
        throw new StaleSource(s.automationId);
      }
      if (queued) await pgNotify(tx, QUEUED_CHANNEL, run.id);
      if (opts.tick) {
        const { key: t, tenantId, at } = opts.tick;
        const claimed = await tx`INSERT INTO schedule_ticks (automation_id, schedule_key, scheduled_at, tenant_id, outcome, run_id, decided_at)
          VALUES (${t.automationId}, ${t.scheduleKey}, ${t.scheduledAt}, ${tenantId}, 'started', ${run.id}, ${at}) ON CONFLICT DO NOTHING RETURNING run_id`;
        if (claimed.length !== 1) throw new TickTaken(t);
      }
      const [row] = await tx.unsafe(`${INSERT_RUN} RETURNING ${RUN_COLUMNS}`, values);
      for (const f of files) await this.putFileIn(tx, { ...f, runId: run.id });
      await addEvents(tx, events.map((e) => [run.id, run.createdAt, e]));
      if (opts.previousRunId) await tx`UPDATE runs SET next_run_id = ${run.id} WHERE id = ${opts.previousRunId}`;
      return plain<RunRow>(row);
    });
  }

  /** Plain inserts as one statement; when it fails, each on its own, so one bad row fails only its caller. */
  private async insertBatch(batch: PlainInsert[]): Promise<void> {
    const settle = (b: PlainInsert, row: RunRow | undefined) =>
      row ? b.resolve(row) : b.reject(b.source ? new StaleSource(b.source.automationId) : new Error(`run ${String(b.values[RUN_ID_AT])} was not inserted`));
    try {
      // A lone pending run may go straight to a worker that offered a slot (direct dispatch).
      const rows = await insertRuns(this.pg, batch, batch.length === 1 && batch[0].values[STATUS_AT] === "pending");
      batch.forEach((b, i) => settle(b, rows[i]));
    } catch (err) {
      if (batch.length === 1) return batch[0].reject(err);
      for (const b of batch) {
        try {
          settle(b, (await insertRuns(this.pg, [b]))[0]);
        } catch (e) {
          b.reject(e);
        }
      }
    }
  }

  async get(tenantId: string, id: string): Promise<RunRow | undefined> {
    const [r] = await this.pg.unsafe(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1 AND tenant_id = $2`, [id, tenantId]);
    return r ? plain<RunRow>(r) : undefined;
  }

  async byId(id: string): Promise<RunRow | undefined> {
    const [r] = await this.pg.unsafe(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1`, [id]);
    return r ? plain<RunRow>(r) : undefined;
  }

  async status(id: string): Promise<string | undefined> {
    const [r] = await this.pg`SELECT status FROM runs WHERE id = ${id}`;
    return r?.status;
  }

  async claimMany(n: number, worker: string, now: string, nowMs: number, leaseMs: number): Promise<Claim[]> {
    if (n <= 0) return [];
    // One statement (atomic on its own, one round trip): interrupted runs first (running, nobody holds
    // them or their lease lapsed: they must not wait behind a backlog), then pending ones; rows another claimer has locked are skipped, the UPDATE's WHERE
    // re-checks the status the row was picked in, and each claim's started/resumed event is written
    // by the same statement.
    const rows = await this.pg.unsafe(
      `WITH p AS (SELECT id, status, created_at, started_at FROM runs WHERE status = 'pending' ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED),
            r AS (SELECT id, status, created_at, started_at FROM runs WHERE status = 'running' AND (claimed_by IS NULL OR lease_until < $2)
                  ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED),
            pick AS (SELECT * FROM (SELECT id AS pid, status AS was, created_at AS pcreated, started_at AS pstarted, 1 AS k FROM p
                                    UNION ALL SELECT id, status, created_at, started_at, 0 AS k FROM r) x
                     ORDER BY k, pcreated, pid LIMIT $1),
            c AS (UPDATE runs SET status = 'running', claimed_by = $3, lease_until = $4, attempts = runs.attempts + 1,
                    started_at = COALESCE(runs.started_at, CAST($5 AS text)::timestamptz)
                  FROM pick WHERE runs.id = pick.pid AND runs.status = pick.was
                  RETURNING ${RUN_COLUMNS}, pick.was, pick.k, pick.pcreated, pick.pstarted IS NULL AS fresh),
            e AS (INSERT INTO run_events (run_id, type, timestamp, status, message, metadata)
                  SELECT id, CASE WHEN was = 'running' THEN 'resumed' ELSE 'started' END, CAST($5 AS text)::timestamptz, 'running',
                         CASE WHEN was = 'running' THEN 'resumed after a restart from the last finished step' END, NULL
                  FROM c ORDER BY k, pcreated, id)
       SELECT * FROM c`,
      [n, nowMs, worker, nowMs + leaseMs, now],
    );
    // The claimed rows come back with the claim (the worker does not read them again); a run that never
    // started has no steps to read either.
    return (rows as (Record<string, unknown> & { id: string; was: string; k: number; pcreated: Date; fresh: boolean })[])
      .sort((a, b) => a.k - b.k || a.pcreated.getTime() - b.pcreated.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map(({ was, k: _k, pcreated: _c, fresh, ...run }) => ({ id: run.id as string, resumed: was === "running", fresh, run: plain<RunRow>(run) }));
  }

  async claimRun(id: string, worker: string, now: string, nowMs: number, leaseMs: number): Promise<boolean> {
    return this.pg.begin(async (tx) => {
      const changed = await tx`UPDATE runs SET claimed_by = ${worker}, lease_until = ${nowMs + leaseMs}, attempts = attempts + 1
        WHERE id = ${id} AND status = 'running' AND (claimed_by IS NULL OR lease_until < ${nowMs}) RETURNING id`;
      if (changed.length === 1) await addEvent(tx, id, now, { type: "resumed", status: "running", message: "resumed by its parent run after a restart" });
      return changed.length === 1;
    });
  }

  async releaseHeld(experimentId: string, limit: number, at: string): Promise<number> {
    return this.pg.begin(async (tx) => {
      // Callers of one experiment (any process) take turns: count and queue under the same lock.
      await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`runs.releaseHeld:${experimentId}`}, 0))`;
      const [{ n }] = await tx`SELECT COUNT(*)::int AS n FROM runs WHERE experiment_id = ${experimentId} AND status IN ('pending', 'running', 'waiting', 'finalizing')`;
      if (n >= limit) return 0;
      const queued = await tx`UPDATE runs SET status = 'pending' WHERE id IN (
          SELECT id FROM runs WHERE experiment_id = ${experimentId} AND status = 'created' ORDER BY created_at, id LIMIT ${limit - n}
        ) AND status = 'created' RETURNING id, created_at`;
      const ids = (queued as { id: string; created_at: Date }[])
        .sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : 1))
        .map((r) => r.id);
      await addEvents(tx, ids.map((id) => [id, at, { type: "queued", status: "pending" }]));
      return ids.length;
    });
  }

  async openChildren(parentId: string): Promise<string[]> {
    const rows = await this.pg.unsafe(`SELECT id FROM runs WHERE parent_run_id = $1 AND status NOT IN ${TERMINAL_SQL} ORDER BY created_at, id`, [parentId]);
    return rows.map((r: { id: string }) => r.id);
  }

  async childAt(parentId: string, step: string): Promise<{ id: string; status: string } | undefined> {
    const [r] = await this.pg`SELECT id, status FROM runs WHERE parent_run_id = ${parentId} AND metadata::jsonb #>> '{invokedBy,step}' = ${step}
      ORDER BY created_at DESC, id DESC LIMIT 1`;
    return r ? { id: r.id, status: r.status } : undefined;
  }

  /** The connection holding this process's liveness lock (attach), per worker. */
  private alive = new Map<string, Awaited<ReturnType<Pg["reserve"]>>>();

  async attach(worker: string): Promise<void> {
    if (this.alive.has(worker)) return;
    const conn = await this.pg.reserve();
    try {
      await conn`SELECT pg_advisory_lock(${LIVENESS_LOCK}, hashtext(${worker}))`;
    } catch (err) {
      conn.release();
      throw err;
    }
    this.alive.set(worker, conn);
  }

  async detach(worker: string): Promise<void> {
    const conn = this.alive.get(worker);
    if (!conn) return;
    this.alive.delete(worker);
    await this.pg`DELETE FROM run_offers WHERE worker = ${worker}`.catch(() => {});
    await conn`SELECT pg_advisory_unlock(${LIVENESS_LOCK}, hashtext(${worker}))`.catch(() => {});
    conn.release();
  }

  async releaseOrphans(worker: string): Promise<number> {
    // A holder is gone when its liveness lock is free: taking it for this transaction succeeds (a
    // live holder's session keeps it). Runs nobody holds are claimable already.
    const rows = await this.pg`WITH gone AS (DELETE FROM run_offers WHERE worker <> ${worker} AND pg_try_advisory_xact_lock(${LIVENESS_LOCK}, hashtext(worker)))
      UPDATE runs SET claimed_by = NULL, lease_until = NULL
      WHERE status = 'running' AND claimed_by IS NOT NULL AND claimed_by <> ${worker}
        AND pg_try_advisory_xact_lock(${LIVENESS_LOCK}, hashtext(claimed_by)) RETURNING id`;
    return rows.length;
  }

  async offer(worker: string, token: string, leaseMs: number): Promise<boolean> {
    await this.pg`INSERT INTO run_offers (worker, token, lease_ms) VALUES (${worker}, ${token}, ${leaseMs})
      ON CONFLICT (worker) DO UPDATE SET token = EXCLUDED.token, lease_ms = EXCLUDED.lease_ms`;
    return true;
  }

  async retract(worker: string, token: string): Promise<boolean> {
    // The offer's row lock orders this against an insert taking it: one of the two wins.
    const rows = await this.pg`UPDATE run_offers SET token = NULL WHERE worker = ${worker} AND token = ${token} RETURNING worker`;
    return rows.length === 1;
  }

  async renewLeases(worker: string, until: number): Promise<string[]> {
    // Row locks taken in id order: a renewal and another process's statement never wait on each other in a circle.
    const rows = await this.pg`UPDATE runs SET lease_until = ${until} WHERE id IN (
        SELECT id FROM runs WHERE claimed_by = ${worker} AND status = 'running' ORDER BY id FOR UPDATE
      ) AND claimed_by = ${worker} AND status = 'running' RETURNING id`;
    return rows.map((r: { id: string }) => r.id);
  }

  async handBack(worker: string): Promise<string[]> {
    const rows = await this.pg`UPDATE runs SET claimed_by = NULL, lease_until = NULL WHERE claimed_by = ${worker} AND status = 'running' RETURNING id`;
    return rows.map((r: { id: string }) => r.id);
  }

  async completedSteps(runId: string): Promise<StepRow[]> {
    return plainRows<StepRow>(await this.pg.unsafe(`SELECT ${STEP_COLUMNS} FROM run_steps WHERE run_id = $1 AND status IN ('completed', 'skipped')`, [runId]));
  }

  stepStarted(runId: string, s: StepStart, lease?: Lease): void {
    const w: StepWrite = { runId, path: s.path, seq: nextSeq(), name: s.name, type: s.type, status: "running", output: null, error: null, input: null, attempt: s.attempt, startedAt: s.startedAt, completedAt: null, lease };
    const event = { type: "step_started", status: "running", message: s.name, metadata: { path: s.path, type: s.type, attempt: s.attempt } };
    this.enqueue({ kind: "step", w, event, at: s.startedAt }, true).catch(() => {});
  }

  stepFinished(runId: string, s: StepRecord, lease?: Lease): Promise<void> {
    const w: StepWrite = {
      runId, path: s.path, seq: nextSeq(), name: s.name, type: s.type, status: s.status, output: json(s.output), error: s.error ? JSON.stringify(s.error) : null, input: json(s.input),
      attempt: s.attempt, startedAt: s.startedAt, completedAt: s.completedAt, lease,
    };
    const type = s.status === "failed" ? "step_failed" : s.status === "skipped" ? "step_skipped" : "step_completed";
    const event = { type, status: s.status, message: s.error?.message ?? s.name, metadata: { path: s.path, type: s.type, attempt: s.attempt } };
    return this.enqueue({ kind: "step", w, event, at: s.completedAt });
  }

  /** Joins the journal batch, after the run's steps queued before it; resolves with the run as finished, or undefined when it did not finish it. */
  finish(runId: string, at: string, r: FinishRequest, lease?: Lease): Promise<FinishedRun | undefined> {
    return this.enqueue<FinishedRun | undefined>({ kind: "finish", runId, at, r, lease });
  }

  async requestCancel(runId: string, at: string): Promise<CancelResult> {
    await this.flush(); // a step start still queued must precede cancel_requested
    return this.pg.begin(async (tx): Promise<CancelResult> => {
      // The row lock orders this against a finish: whichever commits second sees the other's status.
      const [row] = await tx`SELECT status FROM runs WHERE id = ${runId} FOR UPDATE`;
      const was = row.status as string;
      if (isTerminal(was)) return { wasStatus: was, state: "already_terminal" };
      await tx`UPDATE runs SET cancel_requested_at = COALESCE(cancel_requested_at, ${at}) WHERE id = ${runId}`;
      await addEvent(tx, runId, at, { type: "cancel_requested", status: was });
      if (was === "pending" || was === "created" || was === "waiting") {
        await tx`UPDATE runs SET status = 'cancelled', completed_at = ${at}, claimed_by = NULL WHERE id = ${runId}`;
        await addEvent(tx, runId, at, { type: "cancelled", status: "cancelled", message: "cancelled before it started" });
        return { wasStatus: was, state: "cancelled" };
      }
      return { wasStatus: was, state: "requested" };
    });
  }

  async events(runId: string): Promise<EventRow[]> {
    return plainRows<EventRow>(await this.pg.unsafe(`SELECT ${EVENT_COLUMNS} FROM run_events WHERE run_id = $1 ORDER BY id`, [runId]));
  }

  async steps(runId: string): Promise<StepRow[]> {
    return plainRows<StepRow>(await this.pg.unsafe(`SELECT ${STEP_COLUMNS} FROM run_steps WHERE run_id = $1 ORDER BY seq`, [runId]));
  }

  async files(runId: string, role?: string): Promise<FileRow[]> {
    const rows = role
      ? await this.pg.unsafe(`SELECT ${FILE_COLUMNS} FROM run_files WHERE run_id = $1 AND role = $2 ORDER BY created_at, path`, [runId, role])
      : await this.pg.unsafe(`SELECT ${FILE_COLUMNS} FROM run_files WHERE run_id = $1 ORDER BY created_at, path`, [runId]);
    return plainRows<FileRow>(rows);
  }

  async file(runId: string, pathOrFileId: string): Promise<FileRow | undefined> {
    // As SQLite without ORDER BY: the row by path wins over one whose pool id happens to match.
    const [r] = await this.pg.unsafe(`SELECT ${FILE_COLUMNS} FROM run_files WHERE run_id = $1 AND (path = $2 OR file_id = $2) ORDER BY (path = $2) DESC, path LIMIT 1`, [
      runId, pathOrFileId,
    ]);
    return r ? plain<FileRow>(r) : undefined;
  }

  async putFile(f: FileRow): Promise<void> {
    await this.putFileIn(this.pg, f);
  }

  private async putFileIn(db: Pg, f: FileRow): Promise<void> {
    await db`INSERT INTO run_files (run_id, path, role, name, content_type, size, sha256, step_name, file_id, created_at)
      VALUES (${f.runId}, ${f.path}, ${f.role}, ${f.name}, ${f.contentType}, ${f.size}, ${f.sha256}, ${f.stepName ?? null}, ${f.fileId ?? null}, ${f.createdAt})
      ON CONFLICT (run_id, path) DO UPDATE SET content_type = excluded.content_type, size = excluded.size, sha256 = excluded.sha256,
        step_name = excluded.step_name, name = excluded.name, role = excluded.role`;
  }

  async list(f: ListFilter): Promise<RunRow[]> {
    const args: unknown[] = [];
    const p = (v: unknown) => (args.push(v), `$${args.length}`);
    const ts = (v: string) => `CAST(${p(v)} AS text)::timestamptz`;
    const where = [`r.tenant_id = ${p(f.tenantId)}`];
    const inList = (col: string, vals: string[]) => `${col} IN (${vals.map((v) => p(v)).join(", ")})`;
    if (f.type) where.push(`r.type = ${p(f.type)}`);
    if (f.source) {
      const ref = parseRef(f.source);
      if (ref.kind === "typed") {
        const n = p(ref.name);
        where.push(`((r.automation_slug = ${n} OR r.automation_id = ${n}) AND r.type = ${p(ref.type)})`);
      } else {
        const s = p(f.source);
        where.push(`(r.automation_id = ${s} OR r.automation_slug = ${s})`);
      }
    }
    if (f.statuses?.length) where.push(inList("r.status", f.statuses));
    if (f.trigger) where.push(`r.trigger_type = ${p(f.trigger)}`);
    if (f.triggeredBy) {
      const b = p(f.triggeredBy);
      where.push(`(r.triggered_by = ${b} OR r.triggered_by_name = ${b})`);
    }
    if (f.sourceRef) {
      const s = p(f.sourceRef);
      where.push(`(r.source_ref = ${s} OR r.version_id = ${s} OR r.version_label = ${s})`);
    }
    if (f.batchId) where.push(`r.batch_id = ${p(f.batchId)}`);
    if (f.exampleId) where.push(`r.example_id = ${p(f.exampleId)}`);
    if (f.exampleIdContains) where.push(`r.example_id ILIKE ${p(likeEscape(f.exampleIdContains))} ESCAPE '\\'`);
    if (f.createdFrom) where.push(`r.created_at >= ${ts(f.createdFrom)}`);
    if (f.createdTo) where.push(`r.created_at <= ${ts(f.createdTo)}`);
    if (f.createdAfter) where.push(`r.created_at > ${ts(f.createdAfter)}`);
    if (f.createdBefore) where.push(`r.created_at < ${ts(f.createdBefore)}`);
    if (f.completedAfter) where.push(`r.completed_at > ${ts(f.completedAfter)}`);
    if (f.completedBefore) where.push(`r.completed_at < ${ts(f.completedBefore)}`);
    if (f.ids?.length) where.push(inList("r.id", f.ids));
    if (f.experiments) {
      if ("ids" in f.experiments) where.push(f.experiments.ids.length ? inList("r.experiment_id", f.experiments.ids) : "false");
      else if (f.experiments.mode === "exclude") where.push("r.experiment_id IS NULL AND NOT r.evaluation");
      else if (f.experiments.mode === "only") where.push("r.experiment_id IS NOT NULL");
    }
    if (f.sampleRate !== undefined) where.push(`r.sample_rank < ${p(f.sampleRate)}`);
    if (f.review) where.push(...reviewConditions(f.review, p));
    // As on SQLite, where a nullable sort key sorts as '' when null: nulls come first ascending and last
    // descending, then the id breaks ties, so the (key, id) cursor stays total (the cursor's key is '' for
    // a null). Plain column order, so runs_tenant_created/_completed/_started serve the page.
    const col = f.sort === "createdAt" ? "r.created_at" : f.sort === "completedAt" ? "r.completed_at" : "r.started_at";
    if (f.after) {
      const id = p(f.after.id);
      if (f.after.key === "") {
        // After a null key: ascending, the remaining nulls and then every non-null; descending, the remaining nulls.
        where.push(f.order === "desc" ? `(${col} IS NULL AND r.id < ${id})` : `(${col} IS NOT NULL OR r.id > ${id})`);
      } else {
        const k = ts(f.after.key);
        where.push(
          f.order === "desc"
            ? `(${col} < ${k} OR ${col} IS NULL OR (${col} = ${k} AND r.id < ${id}))`
            : `(${col} > ${k} OR (${col} = ${k} AND r.id > ${id}))`,
        );
      }
    }
    const dir = f.order === "desc" ? "DESC NULLS LAST" : "ASC NULLS FIRST";
    let q = `SELECT ${RUN_COLUMNS} FROM runs r WHERE ${where.join(" AND ")} ORDER BY ${col} ${dir}, r.id ${f.order === "desc" ? "DESC" : "ASC"} LIMIT ${p(f.limit)}`;
    if (f.offset && !f.after) q += ` OFFSET ${p(f.offset)}`;
    return plainRows<RunRow>(await this.pg.unsafe(q, args));
  }
}

/** The review filters as conditions on `runs r` (db/sqlite/reviews.ts has SQLite's). */
function reviewConditions(f: ReviewFilter, p: (v: unknown) => string): string[] {
  const on: string[] = [];
  const ts = (v: string) => `CAST(${p(v)} AS text)::timestamptz`;
  if (f.reviewStatus) on.push(`rr.status = ${p(f.reviewStatus)}`);
  if (f.reviewVerdict) on.push(f.reviewVerdict === "null" ? "rr.verdict IS NULL" : `rr.verdict = ${p(f.reviewVerdict)}`);
  if (f.reviewNoteContains) on.push(`rr.note ILIKE ${p(likeEscape(f.reviewNoteContains))} ESCAPE '\\'`);
  if (f.reviewCreatedAfter) on.push(`rr.created_at > ${ts(f.reviewCreatedAfter)}`);
  if (f.reviewCreatedBefore) on.push(`rr.created_at < ${ts(f.reviewCreatedBefore)}`);
  if (f.reviewUpdatedAfter) on.push(`rr.updated_at > ${ts(f.reviewUpdatedAfter)}`);
  if (f.reviewUpdatedBefore) on.push(`rr.updated_at < ${ts(f.reviewUpdatedBefore)}`);
  if (f.reviewClosedAfter) on.push(`rr.closed_at > ${ts(f.reviewClosedAfter)}`);
  if (f.reviewClosedBefore) on.push(`rr.closed_at < ${ts(f.reviewClosedBefore)}`);
  const where: string[] = [];
  const exists = (conds: string[]) => `EXISTS (SELECT 1 FROM run_reviews rr WHERE rr.run_id = r.id${conds.map((c) => ` AND ${c}`).join("")})`;
  const corrected = `(EXISTS (SELECT 1 FROM run_reviews c WHERE c.run_id = r.id AND (c.correction_count > 0 OR c.corrected_output IS NOT NULL))
    OR EXISTS (SELECT 1 FROM run_review_files rf WHERE rf.run_id = r.id))`;
  if (on.length || f.hasReview === true || f.noReview === false) where.push(exists(on));
  if (f.hasReview === false || f.noReview === true) where.push(`NOT ${exists([])}`);
  if (f.hasCorrections !== undefined) where.push(f.hasCorrections ? corrected : `NOT ${corrected}`);
  if (f.sinceLastClosed) {
    where.push(`r.created_at > COALESCE((SELECT MAX(c.closed_at) FROM run_reviews c WHERE c.tenant_id = r.tenant_id AND c.automation_id = r.automation_id), '-infinity'::timestamptz)`);
  }
  return where;
}
