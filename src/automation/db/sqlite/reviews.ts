// Run reviews on SQLite (tables in db/automation/0200_reviews.sql): the review row, its corrections,
// its corrected files and their blob pins, the run-list filter and summary, and review health, which
// is aggregated in SQL (counts, calendar buckets, rolling windows and the Wilson interval) so a
// dashboard over many thousands of runs never loads them.
import type { Database } from "bun:sqlite";
import { sql, type SQL } from "drizzle-orm";
import type { ReviewFilter } from "../../runs/store";
import { runs } from "../tables/runs";
import {
  type BucketCounts,
  type CorrectionRow,
  type Counts,
  type ExpectedFileRow,
  type HealthBucket,
  type HealthScope,
  type ReviewDecision,
  type ReviewRow,
  type ReviewStore,
  type RollingPoint,
  reviewPin,
} from "../../reviews/store";
import { likeEscape, Z95 } from "../sql-shared";

const REVIEW_COLUMNS = `run_id AS runId, id, tenant_id AS tenantId, automation_id AS automationId, verdict, status, note,
  corrected_output AS correctedOutput, correction_count AS correctionCount, reviewed_by AS reviewedBy,
  reviewed_by_email AS reviewedByEmail, reviewed_at AS reviewedAt, closed_by AS closedBy, closed_by_email AS closedByEmail,
  closed_at AS closedAt, closed_note AS closedNote, created_at AS createdAt, updated_at AS updatedAt`;
const CORRECTION_COLUMNS = `id, run_id AS runId, position, kind, path, label, original_value AS originalValue,
  corrected_value AS correctedValue, note, corrected_artifact_path AS correctedArtifactPath, created_at AS createdAt, updated_at AS updatedAt`;
const FILE_COLUMNS = "run_id AS runId, name, content_type AS contentType, size, sha256, created_at AS createdAt";

/** Corrections, a corrected output or corrected files (which may exist before any review metadata). */
const corrected = sql`(EXISTS (SELECT 1 FROM run_reviews c WHERE c.run_id = ${runs.id} AND (c.correction_count > 0 OR c.corrected_output IS NOT NULL))
  OR EXISTS (SELECT 1 FROM run_review_files f WHERE f.run_id = ${runs.id}))`;

/** WHERE conditions on `runs` for the review filters; empty when none is given. */
export function reviewConditions(f: ReviewFilter): SQL[] {
  const on: SQL[] = [];
  if (f.reviewStatus) on.push(sql`rr.status = ${f.reviewStatus}`);
  if (f.reviewVerdict) on.push(f.reviewVerdict === "null" ? sql`rr.verdict IS NULL` : sql`rr.verdict = ${f.reviewVerdict}`);
  if (f.reviewNoteContains) on.push(sql`rr.note LIKE ${likeEscape(f.reviewNoteContains)} ESCAPE '\\'`);
  if (f.reviewCreatedAfter) on.push(sql`rr.created_at > ${f.reviewCreatedAfter}`);
  if (f.reviewCreatedBefore) on.push(sql`rr.created_at < ${f.reviewCreatedBefore}`);
  if (f.reviewUpdatedAfter) on.push(sql`rr.updated_at > ${f.reviewUpdatedAfter}`);
  if (f.reviewUpdatedBefore) on.push(sql`rr.updated_at < ${f.reviewUpdatedBefore}`);
  if (f.reviewClosedAfter) on.push(sql`rr.closed_at > ${f.reviewClosedAfter}`);
  if (f.reviewClosedBefore) on.push(sql`rr.closed_at < ${f.reviewClosedBefore}`);
  const where: SQL[] = [];
  const exists = (conds: SQL[]) => sql`EXISTS (SELECT 1 FROM run_reviews rr WHERE rr.run_id = ${runs.id}${sql.join(conds.map((c) => sql` AND ${c}`))})`;
  if (on.length || f.hasReview === true || f.noReview === false) where.push(exists(on));
  if (f.hasReview === false || f.noReview === true) where.push(sql`NOT ${exists([])}`);
  if (f.hasCorrections !== undefined) where.push(f.hasCorrections ? corrected : sql`NOT ${corrected}`);
  // Runs since the latest closed review of the same automation: what nobody has looked at yet.
  if (f.sinceLastClosed) {
    where.push(
      sql`${runs.createdAt} > COALESCE((SELECT MAX(c.closed_at) FROM run_reviews c WHERE c.tenant_id = ${runs.tenantId} AND c.automation_id = ${runs.automationId}), '')`,
    );
  }
  return where;
}


/** The Wilson score interval of `c` successes in `n` trials, as SQL (NULL when n = 0). */
function wilson(c: string, n: string, bound: "-" | "+"): string {
  const z2 = Z95 * Z95;
  return `CASE WHEN ${n} > 0 THEN MIN(1.0, MAX(0.0,
    ((1.0 * ${c} / ${n}) + ${z2} / (2.0 * ${n}) ${bound} ${Z95} * sqrt((1.0 * ${c} / ${n}) * (1.0 - 1.0 * ${c} / ${n}) / ${n} + ${z2} / (4.0 * ${n} * ${n})))
    / (1.0 + ${z2} / ${n}))) END`;
}

/** Calendar bucket key of a `created_at` (ISO text): day, ISO week (its Monday) or month. */
const BUCKET = {
  day: "substr(r.created_at, 1, 10)",
  week: "date(substr(r.created_at, 1, 10), '-6 days', 'weekday 1')",
  month: "substr(r.created_at, 1, 7) || '-01'",
} as const;

const pinPrefix = (runId: string) => reviewPin(runId, "");

export class SqliteReviewStore implements ReviewStore {
  constructor(readonly sqlite: Database) {}

  private getSync(runId: string): ReviewRow | undefined {
    return this.sqlite.query<ReviewRow, [string]>(`SELECT ${REVIEW_COLUMNS} FROM run_reviews WHERE run_id = ?`).get(runId) ?? undefined;
  }

  private correctionsSync(runId: string): CorrectionRow[] {
    return this.sqlite.query<CorrectionRow, [string]>(`SELECT ${CORRECTION_COLUMNS} FROM run_review_corrections WHERE run_id = ? ORDER BY position`).all(runId);
  }

  private fileSync(runId: string, name: string): ExpectedFileRow | undefined {
    return this.sqlite.query<ExpectedFileRow, [string, string]>(`SELECT ${FILE_COLUMNS} FROM run_review_files WHERE run_id = ? AND name = ?`).get(runId, name) ?? undefined;
  }

  async get(runId: string): Promise<ReviewRow | undefined> {
    return this.getSync(runId);
  }

  async corrections(runId: string): Promise<CorrectionRow[]> {
    return this.correctionsSync(runId);
  }

  async put(runId: string, decide: ReviewDecision): Promise<{ row: ReviewRow; corrections: CorrectionRow[] }> {
    return this.sqlite.transaction(() => {
      const stored = this.correctionsSync(runId);
      const { row: r, corrections } = decide(this.getSync(runId), stored);
      if (corrections) {
        this.sqlite.query("DELETE FROM run_review_corrections WHERE run_id = ?").run(runId);
        const ins = this.sqlite.query(
          `INSERT INTO run_review_corrections (id, run_id, position, kind, path, label, original_value, corrected_value, note, corrected_artifact_path, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        );
        for (const c of corrections) ins.run(c.id, runId, c.position, c.kind, c.path, c.label, c.originalValue, c.correctedValue, c.note, c.correctedArtifactPath, c.createdAt, c.updatedAt);
      }
      this.sqlite
        .query(
          `INSERT INTO run_reviews (run_id, id, tenant_id, automation_id, verdict, status, note, corrected_output, correction_count,
             reviewed_by, reviewed_by_email, reviewed_at, closed_by, closed_by_email, closed_at, closed_note, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (run_id) DO UPDATE SET verdict = excluded.verdict, status = excluded.status, note = excluded.note,
             corrected_output = excluded.corrected_output, correction_count = excluded.correction_count,
             reviewed_by = excluded.reviewed_by, reviewed_by_email = excluded.reviewed_by_email, reviewed_at = excluded.reviewed_at,
             closed_by = excluded.closed_by, closed_by_email = excluded.closed_by_email, closed_at = excluded.closed_at,
             closed_note = excluded.closed_note, updated_at = excluded.updated_at`,
        )
        .run(
          r.runId, r.id, r.tenantId, r.automationId, r.verdict, r.status, r.note, r.correctedOutput, r.correctionCount,
          r.reviewedBy, r.reviewedByEmail, r.reviewedAt, r.closedBy, r.closedByEmail, r.closedAt, r.closedNote, r.createdAt, r.updatedAt,
        );
      return { row: r, corrections: corrections ?? stored };
    }).immediate();
  }

  async remove(runId: string): Promise<string[]> {
    return this.sqlite.transaction(() => {
      this.sqlite.query("DELETE FROM run_review_corrections WHERE run_id = ?").run(runId);
      this.sqlite.query("DELETE FROM run_review_files WHERE run_id = ?").run(runId);
      this.sqlite.query("DELETE FROM run_reviews WHERE run_id = ?").run(runId);
      // Every pin owned by `review:<run>:…`: the range [prefix, prefix with its last ':' bumped to ';') uses the owner index.
      const prefix = pinPrefix(runId);
      return this.sqlite
        .query<{ sha256: string }, [string, string]>("DELETE FROM blob_refs WHERE owner >= ? AND owner < ? RETURNING sha256")
        .all(prefix, `${prefix.slice(0, -1)};`)
        .map((r) => r.sha256);
    }).immediate();
  }

  async files(runId: string): Promise<ExpectedFileRow[]> {
    return this.sqlite.query<ExpectedFileRow, [string]>(`SELECT ${FILE_COLUMNS} FROM run_review_files WHERE run_id = ? ORDER BY name`).all(runId);
  }

  async file(runId: string, name: string): Promise<ExpectedFileRow | undefined> {
    return this.fileSync(runId, name);
  }

  async putFile(tenantId: string, f: ExpectedFileRow): Promise<string | undefined> {
    return this.sqlite.transaction(() => {
      const prev = this.fileSync(f.runId, f.name);
      this.sqlite.query("INSERT OR IGNORE INTO blob_refs (sha256, owner, tenant_id, created_at) VALUES (?, ?, ?, ?)").run(f.sha256, reviewPin(f.runId, f.sha256), tenantId, f.createdAt);
      this.sqlite
        .query(
          `INSERT INTO run_review_files (run_id, name, content_type, size, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (run_id, name) DO UPDATE SET content_type = excluded.content_type, size = excluded.size, sha256 = excluded.sha256, created_at = excluded.created_at`,
        )
        .run(f.runId, f.name, f.contentType, f.size, f.sha256, f.createdAt);
      return prev && prev.sha256 !== f.sha256 ? prev.sha256 : undefined;
    }).immediate();
  }

  async renameFile(runId: string, from: string, to: string): Promise<"ok" | "exists"> {
    return this.sqlite.transaction(() => {
      if (this.fileSync(runId, to)) return "exists" as const;
      this.sqlite.query("UPDATE run_review_files SET name = ? WHERE run_id = ? AND name = ?").run(to, runId, from);
      return "ok" as const;
    }).immediate();
  }

  async removeFile(runId: string, name: string): Promise<void> {
    this.sqlite.query("DELETE FROM run_review_files WHERE run_id = ? AND name = ?").run(runId, name);
  }

  async unpinIfUnused(runId: string, sha256: string): Promise<boolean> {
    return this.sqlite.transaction(() => {
      if (this.sqlite.query("SELECT 1 FROM run_review_files WHERE run_id = ? AND sha256 = ? LIMIT 1").get(runId, sha256)) return false;
      this.sqlite.query("DELETE FROM blob_refs WHERE owner = ? AND sha256 = ?").run(reviewPin(runId, sha256), sha256);
      return true;
    }).immediate();
  }

  private scope(s: HealthScope): { where: string; args: (string | number)[] } {
    const where = ["r.tenant_id = ?", "r.automation_id = ?", "r.created_at >= ?", "r.created_at <= ?"];
    const args: (string | number)[] = [s.tenantId, s.automationId, s.from, s.to];
    const inList = (col: string, vals?: string[]) => {
      if (!vals?.length) return;
      where.push(`${col} IN (${vals.map(() => "?").join(", ")})`);
      args.push(...vals);
    };
    inList("r.status", s.statuses);
    inList("r.trigger_type", s.triggers);
    inList("r.type", s.types);
    inList("r.triggered_by", s.triggeredBy);
    const eq = (col: string, val?: string) => val !== undefined && (where.push(`${col} = ?`), args.push(val));
    eq("r.batch_id", s.batchId);
    eq("r.example_id", s.exampleId);
    if (s.sourceRef) (where.push("(r.source_ref = ? OR r.version_id = ? OR r.version_label = ?)"), args.push(s.sourceRef, s.sourceRef, s.sourceRef));
    if (s.exampleIdContains) (where.push("r.example_id LIKE ? ESCAPE '\\'"), args.push(likeEscape(s.exampleIdContains)));
    if (s.completedAfter) (where.push("r.completed_at > ?"), args.push(s.completedAfter));
    if (s.completedBefore) (where.push("r.completed_at < ?"), args.push(s.completedBefore));
    if (s.excludeExperiments) where.push("r.experiment_id IS NULL AND r.evaluation = 0");
    return { where: where.join(" AND "), args };
  }

  /** Summary counts and the Wilson interval of reviewed correctness over the scope. */
  async healthSummary(s: HealthScope): Promise<Counts> {
    const { where, args } = this.scope(s);
    return this.sqlite
      .query<Counts, (string | number)[]>(
        `WITH c AS (
           SELECT COUNT(*) AS total, COALESCE(SUM(rr.verdict = 'correct'), 0) AS correct, COALESCE(SUM(rr.verdict = 'incorrect'), 0) AS incorrect,
             COALESCE(SUM(rr.run_id IS NOT NULL AND rr.verdict IS NULL), 0) AS nit
           FROM runs r LEFT JOIN run_reviews rr ON rr.run_id = r.id WHERE ${where})
         SELECT total AS totalRuns, correct + incorrect AS reviewedRuns, correct AS correctReviews, incorrect AS incorrectReviews,
           nit AS nitReviews, ${wilson("correct", "(correct + incorrect)", "-")} AS lower, ${wilson("correct", "(correct + incorrect)", "+")} AS upper
         FROM c`,
      )
      .get(...args)!;
  }

  /** Counts per calendar bucket (only buckets with runs). */
  async healthBuckets(s: HealthScope, bucket: HealthBucket): Promise<BucketCounts[]> {
    const { where, args } = this.scope(s);
    return this.sqlite
      .query<BucketCounts, (string | number)[]>(
        `SELECT ${BUCKET[bucket]} AS bucket, COUNT(*) AS totalRuns, COALESCE(SUM(rr.verdict IS NOT NULL), 0) AS reviewedRuns,
           COALESCE(SUM(rr.verdict = 'correct'), 0) AS correctReviews, COALESCE(SUM(rr.verdict = 'incorrect'), 0) AS incorrectReviews,
           COALESCE(SUM(rr.run_id IS NOT NULL AND rr.verdict IS NULL), 0) AS nitReviews, NULL AS lower, NULL AS upper
         FROM runs r LEFT JOIN run_reviews rr ON rr.run_id = r.id WHERE ${where} GROUP BY 1 ORDER BY 1`,
      )
      .all(...args);
  }

  /**
   * One rolling point per bucket, at its last reviewed run: correctness over the last `window`
   * reviewed runs up to there (with its Wilson interval), and review coverage over the last `window`
   * runs of any kind up to there. `window` is a validated integer (1–1000), inlined as SQL frames must be.
   */
  async healthRolling(s: HealthScope, bucket: HealthBucket, window: number, minReviews: number): Promise<RollingPoint[]> {
    const { where, args } = this.scope(s);
    const w = Math.trunc(window) - 1;
    return this.sqlite
      .query<RollingPoint, (string | number)[]>(
        `WITH scoped AS (
           SELECT r.id, r.created_at, ${BUCKET[bucket]} AS bucket, rr.verdict,
             COUNT(*) OVER all_w AS total_w, SUM(rr.verdict IS NOT NULL) OVER all_w AS reviewed_w
           FROM runs r LEFT JOIN run_reviews rr ON rr.run_id = r.id WHERE ${where}
           WINDOW all_w AS (ORDER BY r.created_at, r.id ROWS BETWEEN ${w} PRECEDING AND CURRENT ROW)),
         reviewed AS (
           SELECT bucket, created_at, total_w, reviewed_w,
             COUNT(*) OVER rw AS n, SUM(verdict = 'correct') OVER rw AS c,
             ROW_NUMBER() OVER (PARTITION BY bucket ORDER BY created_at DESC, id DESC) AS last
           FROM scoped WHERE verdict IS NOT NULL
           WINDOW rw AS (ORDER BY created_at, id ROWS BETWEEN ${w} PRECEDING AND CURRENT ROW))
         SELECT bucket, created_at AS at, n AS reviewedRuns, c AS correctReviews, ${wilson("c", "n", "-")} AS lower, ${wilson("c", "n", "+")} AS upper,
           total_w AS totalRunsInWindow, reviewed_w AS reviewedInWindow
         FROM reviewed WHERE last = 1 AND n >= ? ORDER BY bucket`,
      )
      .all(...args, minReviews);
  }
}
