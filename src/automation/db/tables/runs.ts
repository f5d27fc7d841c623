// Runs tables (migration db/automation/0100_runs.sql). A run row is also its queue entry: workers claim
// `pending` rows (and `running` rows whose lease lapsed, i.e. after a crash) with one conditional UPDATE.
import { index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const runs = sqliteTable(
  "runs",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    type: text("type").notNull(), // workflow | agent
    automationId: text("automation_id").notNull(),
    automationName: text("automation_name"),
    automationSlug: text("automation_slug"),
    versionId: text("version_id"),
    versionLabel: text("version_label"),
    sourceRef: text("source_ref"),
    /** The version the caller asked for, as given (`v1.2.0`, `latest`); null when none was asked. */
    requestedRef: text("requested_ref"),
    /** The workflow YAML as it was when the run was created: resumes and `version=original` use it. */
    definition: text("definition").notNull(),
    status: text("status").notNull(),
    triggerType: text("trigger_type"),
    triggeredBy: text("triggered_by"),
    triggeredByName: text("triggered_by_name"),
    /** The e-mail of the person who started the run (0104); null for keys, schedules and e-mail. */
    triggeredByEmail: text("triggered_by_email"),
    batchId: text("batch_id"),
    exampleId: text("example_id"),
    experimentId: text("experiment_id"),
    evaluation: integer("evaluation").notNull().default(0),
    /** Which trial (1-based) of an experiment with `trials` > 1 the run is; null otherwise (0161). */
    trial: integer("trial"),
    input: text("input").notNull(), // JSON
    metadata: text("metadata"), // JSON
    overrides: text("overrides"), // JSON
    output: text("output"), // JSON
    error: text("error"), // JSON {message, code?, statusCode?, step?}
    sampleRank: real("sample_rank").notNull(),
    retryNumber: integer("retry_number").notNull().default(0),
    previousRunId: text("previous_run_id"),
    nextRunId: text("next_run_id"),
    parentRunId: text("parent_run_id"),
    createdAt: text("created_at").notNull(),
    startedAt: text("started_at"),
    completedAt: text("completed_at"),
    cancelRequestedAt: text("cancel_requested_at"),
    claimedBy: text("claimed_by"),
    leaseUntil: integer("lease_until"),
    /** How many times a worker picked the run up (1 normally, more after crashes). */
    attempts: integer("attempts").notNull().default(0),
    /** The x-request-id of the API request that started the run (a child run: its parent's). */
    requestId: text("request_id"),
    /** Unique when set: a second start with the same key fails (an inbound message's Message-ID, 0410). */
    dedupeKey: text("dedupe_key"),
    /** JSON merged into the run's `trigger` (`{"email": {...}}` for inbound e-mail). */
    triggerDetail: text("trigger_detail"),
  },
  (t) => [
    index("runs_tenant_created").on(t.tenantId, t.createdAt, t.id),
    index("runs_tenant_completed").on(t.tenantId, t.completedAt, t.id),
    index("runs_tenant_started").on(t.tenantId, t.startedAt, t.id), // 0102
    index("runs_queue").on(t.status, t.createdAt, t.id),
    index("runs_tenant_automation").on(t.tenantId, t.automationId),
  ],
);

export const runSteps = sqliteTable(
  "run_steps",
  {
    runId: text("run_id").notNull().references(() => runs.id, { onDelete: "cascade" }),
    path: text("path").notNull(),
    seq: integer("seq").notNull(),
    name: text("name").notNull(),
    type: text("type").notNull(),
    status: text("status").notNull(), // running | completed | failed | skipped
    output: text("output"), // JSON
    error: text("error"), // JSON
    /** JSON: the values the step ran with, secrets redacted, size bounded (engine/step-input.ts; 0105). */
    input: text("input"),
    attempt: integer("attempt").notNull(),
    startedAt: text("started_at").notNull(),
    completedAt: text("completed_at"),
  },
  (t) => [primaryKey({ columns: [t.runId, t.path] })],
);

export const runEvents = sqliteTable(
  "run_events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    runId: text("run_id").notNull().references(() => runs.id, { onDelete: "cascade" }),
    type: text("type").notNull(),
    timestamp: text("timestamp").notNull(),
    status: text("status"),
    message: text("message"),
    metadata: text("metadata"), // JSON
  },
  (t) => [index("run_events_run").on(t.runId, t.id)],
);

/** Input snapshots and output artifacts of a run; bytes live in the blob store under `sha256`. */
export const runFiles = sqliteTable(
  "run_files",
  {
    runId: text("run_id").notNull().references(() => runs.id, { onDelete: "cascade" }),
    path: text("path").notNull(),
    role: text("role").notNull(), // input | output
    name: text("name").notNull(),
    contentType: text("content_type").notNull(),
    size: integer("size").notNull(),
    sha256: text("sha256").notNull(),
    stepName: text("step_name"),
    fileId: text("file_id"), // the file-pool id an input came from
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.path] })],
);

export type RunRow = typeof runs.$inferSelect;
export type NewRun = typeof runs.$inferInsert;
export type StepRow = typeof runSteps.$inferSelect;
export type EventRow = typeof runEvents.$inferSelect;
export type FileRow = typeof runFiles.$inferSelect;
