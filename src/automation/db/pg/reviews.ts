// Run reviews on PostgreSQL: the same rows and health aggregates as db/sqlite/reviews.ts. A review's
// read-decide-write and its file/pin changes hold a transaction-scoped advisory lock on the run, so
// concurrent requests (also on other instances) serialise per run even before the first review row
// exists. Health is aggregated in SQL; calendar buckets are taken in UTC, as SQLite's text dates are.
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
import { isUniqueViolation, type Pg, plain, plainRows } from "./rows";
import { likeEscape, Z95 } from "../sql-shared";

const REVIEW_COLUMNS = `run_id AS "runId", id, tenant_id AS "tenantId", automation_id AS "automationId", verdict, status, note,
  corrected_output::text AS "correctedOutput", correction_count AS "correctionCount", reviewed_by AS "reviewedBy",
  reviewed_by_email AS "reviewedByEmail", reviewed_at AS "reviewedAt", closed_by AS "closedBy", closed_by_email AS "closedByEmail",
  closed_at AS "closedAt", closed_note AS "closedNote", created_at AS "createdAt", updated_at AS "updatedAt"`;
const CORRECTION_COLUMNS = `id, run_id AS "runId", position, kind, path, label, original_value::text AS "originalValue",
  corrected_value::text AS "correctedValue", note, corrected_artifact_path AS "correctedArtifactPath", created_at AS "createdAt", updated_at AS "updatedAt"`;
const FILE_COLUMNS = `run_id AS "runId", name, content_type AS "contentType", size::float8 AS size, sha256, created_at AS "createdAt"`;


/** The Wilson score interval of `c` successes in `n` trials (NULL when n = 0), as double precision. */
function wilson(c: string, n: string, bound: "-" | "+"): string {
  const z2 = Z95 * Z95;
  const p = `(${c}::float8 / ${n}::float8)`;
  return `CASE WHEN ${n} > 0 THEN LEAST(1.0::float8, GREATEST(0.0::float8,
    (${p} + ${z2} / (2.0 * ${n}) ${bound} ${Z95} * sqrt(${p} * (1.0 - ${p}) / ${n} + ${z2} / (4.0 * ${n} * ${n})))
    / (1.0 + ${z2} / ${n}))) END`;
}

const UTC = "(r.created_at AT TIME ZONE 'UTC')";
const BUCKET = {
  day: `to_char(${UTC}, 'YYYY-MM-DD')`,
  week: `to_char(date_trunc('week', ${UTC}), 'YYYY-MM-DD')`,
  month: `to_char(${UTC}, 'YYYY-MM') || '-01'`,
} as const;

const pinPrefix = (runId: string) => reviewPin(runId, "");

export class PgReviewStore implements ReviewStore {
  constructor(readonly pg: Pg) {}

  private async lockRun(tx: Pg, runId: string): Promise<void> {
    await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`review:${runId}`}, 0))`;
  }

  private async getOn(db: Pg, runId: string): Promise<ReviewRow | undefined> {
    const [r] = await db.unsafe(`SELECT ${REVIEW_COLUMNS} FROM run_reviews WHERE run_id = $1`, [runId]);
    return r ? plain<ReviewRow>(r) : undefined;
  }

  private async correctionsOn(db: Pg, runId: string): Promise<CorrectionRow[]> {
    return plainRows<CorrectionRow>(await db.unsafe(`SELECT ${CORRECTION_COLUMNS} FROM run_review_corrections WHERE run_id = $1 ORDER BY position`, [runId]));
  }

  private async fileOn(db: Pg, runId: string, name: string): Promise<ExpectedFileRow | undefined> {
    const [r] = await db.unsafe(`SELECT ${FILE_COLUMNS} FROM run_review_files WHERE run_id = $1 AND name = $2`, [runId, name]);
    return r ? plain<ExpectedFileRow>(r) : undefined;
  }

  get(runId: string): Promise<ReviewRow | undefined> {
    return this.getOn(this.pg, runId);
  }

  corrections(runId: string): Promise<CorrectionRow[]> {
    return this.correctionsOn(this.pg, runId);
  }

  async put(runId: string, decide: ReviewDecision): Promise<{ row: ReviewRow; corrections: CorrectionRow[] }> {
    return this.pg.begin(async (tx) => {
      await this.lockRun(tx, runId);
      const stored = await this.correctionsOn(tx, runId);
      const { row: r, corrections } = decide(await this.getOn(tx, runId), stored);
      if (corrections) {
        await tx`DELETE FROM run_review_corrections WHERE run_id = ${runId}`;
        for (const c of corrections) {
          await tx`INSERT INTO run_review_corrections (id, run_id, position, kind, path, label, original_value, corrected_value, note, corrected_artifact_path, created_at, updated_at)
            VALUES (${c.id}, ${runId}, ${c.position}, ${c.kind}, ${c.path}, ${c.label}, CAST(${c.originalValue} AS text)::json, CAST(${c.correctedValue} AS text)::json,
              ${c.note}, ${c.correctedArtifactPath}, ${c.createdAt}, ${c.updatedAt})`;
        }
      }
      await tx`INSERT INTO run_reviews (run_id, id, tenant_id, automation_id, verdict, status, note, corrected_output, correction_count,
          reviewed_by, reviewed_by_email, reviewed_at, closed_by, closed_by_email, closed_at, closed_note, created_at, updated_at)
        VALUES (${r.runId}, ${r.id}, ${r.tenantId}, ${r.automationId}, ${r.verdict}, ${r.status}, ${r.note}, CAST(${r.correctedOutput} AS text)::json, ${r.correctionCount},
          ${r.reviewedBy}, ${r.reviewedByEmail}, ${r.reviewedAt}, ${r.closedBy}, ${r.closedByEmail}, ${r.closedAt}, ${r.closedNote}, ${r.createdAt}, ${r.updatedAt})
        ON CONFLICT (run_id) DO UPDATE SET verdict = excluded.verdict, status = excluded.status, note = excluded.note,
          corrected_output = excluded.corrected_output, correction_count = excluded.correction_count,
          reviewed_by = excluded.reviewed_by, reviewed_by_email = excluded.reviewed_by_email, reviewed_at = excluded.reviewed_at,
          closed_by = excluded.closed_by, closed_by_email = excluded.closed_by_email, closed_at = excluded.closed_at,
          closed_note = excluded.closed_note, updated_at = excluded.updated_at`;
      return { row: r, corrections: corrections ?? stored };
    });
  }

  async remove(runId: string): Promise<string[]> {
    return this.pg.begin(async (tx) => {
      await this.lockRun(tx, runId);
      await tx`DELETE FROM run_review_corrections WHERE run_id = ${runId}`;
      await tx`DELETE FROM run_review_files WHERE run_id = ${runId}`;
      await tx`DELETE FROM run_reviews WHERE run_id = ${runId}`;
      const prefix = pinPrefix(runId);
      const rows = await tx`DELETE FROM blob_refs WHERE owner >= ${prefix} AND owner < ${`${prefix.slice(0, -1)};`} RETURNING sha256`;
      return rows.map((r: { sha256: string }) => r.sha256);
    });
  }

  async files(runId: string): Promise<ExpectedFileRow[]> {
    return plainRows<ExpectedFileRow>(await this.pg.unsafe(`SELECT ${FILE_COLUMNS} FROM run_review_files WHERE run_id = $1 ORDER BY name`, [runId]));
  }

  file(runId: string, name: string): Promise<ExpectedFileRow | undefined> {
    return this.fileOn(this.pg, runId, name);
  }

  async putFile(tenantId: string, f: ExpectedFileRow): Promise<string | undefined> {
    return this.pg.begin(async (tx) => {
      await this.lockRun(tx, f.runId);
      const prev = await this.fileOn(tx, f.runId, f.name);
      await tx`INSERT INTO blob_refs (sha256, owner, tenant_id, created_at) VALUES (${f.sha256}, ${reviewPin(f.runId, f.sha256)}, ${tenantId}, ${f.createdAt}) ON CONFLICT DO NOTHING`;
      await tx`INSERT INTO run_review_files (run_id, name, content_type, size, sha256, created_at) VALUES (${f.runId}, ${f.name}, ${f.contentType}, ${f.size}, ${f.sha256}, ${f.createdAt})
        ON CONFLICT (run_id, name) DO UPDATE SET content_type = excluded.content_type, size = excluded.size, sha256 = excluded.sha256, created_at = excluded.created_at`;
      return prev && prev.sha256 !== f.sha256 ? prev.sha256 : undefined;
    });
  }

  async renameFile(runId: string, from: string, to: string): Promise<"ok" | "exists"> {
    try {
      await this.pg`UPDATE run_review_files SET name = ${to} WHERE run_id = ${runId} AND name = ${from}`;
      return "ok";
    } catch (err) {
      if (isUniqueViolation(err)) return "exists";
      throw err;
    }
  }

  async removeFile(runId: string, name: string): Promise<void> {
    await this.pg`DELETE FROM run_review_files WHERE run_id = ${runId} AND name = ${name}`;
  }

  async unpinIfUnused(runId: string, sha256: string): Promise<boolean> {
    return this.pg.begin(async (tx) => {
      await this.lockRun(tx, runId);
      if ((await tx`SELECT 1 FROM run_review_files WHERE run_id = ${runId} AND sha256 = ${sha256} LIMIT 1`).length) return false;
      await tx`DELETE FROM blob_refs WHERE owner = ${reviewPin(runId, sha256)} AND sha256 = ${sha256}`;
      return true;
    });
  }

  private scope(s: HealthScope): { where: string; args: unknown[] } {
    const args: unknown[] = [];
    const p = (v: unknown) => (args.push(v), `$${args.length}`);
    const where = [`r.tenant_id = ${p(s.tenantId)}`, `r.automation_id = ${p(s.automationId)}`, `r.created_at >= ${p(s.from)}::timestamptz`, `r.created_at <= ${p(s.to)}::timestamptz`];
    const inList = (col: string, vals?: string[]) => vals?.length && where.push(`${col} IN (${vals.map((v) => p(v)).join(", ")})`);
    inList("r.status", s.statuses);
    inList("r.trigger_type", s.triggers);
    inList("r.type", s.types);
    inList("r.triggered_by", s.triggeredBy);
    if (s.batchId !== undefined) where.push(`r.batch_id = ${p(s.batchId)}`);
    if (s.exampleId !== undefined) where.push(`r.example_id = ${p(s.exampleId)}`);
    if (s.sourceRef) {
      const ref = p(s.sourceRef);
      where.push(`(r.source_ref = ${ref} OR r.version_id = ${ref} OR r.version_label = ${ref})`);
    }
    if (s.exampleIdContains) where.push(`r.example_id ILIKE ${p(likeEscape(s.exampleIdContains))} ESCAPE '\\'`);
    if (s.completedAfter) where.push(`r.completed_at > ${p(s.completedAfter)}::timestamptz`);
    if (s.completedBefore) where.push(`r.completed_at < ${p(s.completedBefore)}::timestamptz`);
    if (s.excludeExperiments) where.push("r.experiment_id IS NULL AND NOT r.evaluation");
    return { where: where.join(" AND "), args };
  }

  async healthSummary(s: HealthScope): Promise<Counts> {
    const { where, args } = this.scope(s);
    const [r] = await this.pg.unsafe(
      `WITH c AS (
         SELECT COUNT(*)::int AS total, COUNT(*) FILTER (WHERE rr.verdict = 'correct')::int AS correct, COUNT(*) FILTER (WHERE rr.verdict = 'incorrect')::int AS incorrect,
           COUNT(*) FILTER (WHERE rr.run_id IS NOT NULL AND rr.verdict IS NULL)::int AS nit
         FROM runs r LEFT JOIN run_reviews rr ON rr.run_id = r.id WHERE ${where})
       SELECT total AS "totalRuns", correct + incorrect AS "reviewedRuns", correct AS "correctReviews", incorrect AS "incorrectReviews",
         nit AS "nitReviews", ${wilson("correct", "(correct + incorrect)", "-")} AS lower, ${wilson("correct", "(correct + incorrect)", "+")} AS upper
       FROM c`,
      args,
    );
    return r as Counts;
  }

  async healthBuckets(s: HealthScope, bucket: HealthBucket): Promise<BucketCounts[]> {
    const { where, args } = this.scope(s);
    return (await this.pg.unsafe(
      `SELECT ${BUCKET[bucket]} AS bucket, COUNT(*)::int AS "totalRuns", COUNT(rr.verdict)::int AS "reviewedRuns",
         COUNT(*) FILTER (WHERE rr.verdict = 'correct')::int AS "correctReviews", COUNT(*) FILTER (WHERE rr.verdict = 'incorrect')::int AS "incorrectReviews",
         COUNT(*) FILTER (WHERE rr.run_id IS NOT NULL AND rr.verdict IS NULL)::int AS "nitReviews", NULL::float8 AS lower, NULL::float8 AS upper
       FROM runs r LEFT JOIN run_reviews rr ON rr.run_id = r.id WHERE ${where} GROUP BY 1 ORDER BY 1`,
      args,
    )) as BucketCounts[];
  }

  async healthRolling(s: HealthScope, bucket: HealthBucket, window: number, minReviews: number): Promise<RollingPoint[]> {
    const { where, args } = this.scope(s);
    const w = Math.trunc(window) - 1;
    const rows = await this.pg.unsafe(
      `WITH scoped AS (
         SELECT r.id, r.created_at, ${BUCKET[bucket]} AS bucket, rr.verdict,
           COUNT(*) OVER all_w AS total_w, COUNT(rr.verdict) OVER all_w AS reviewed_w
         FROM runs r LEFT JOIN run_reviews rr ON rr.run_id = r.id WHERE ${where}
         WINDOW all_w AS (ORDER BY r.created_at, r.id ROWS BETWEEN ${w} PRECEDING AND CURRENT ROW)),
       reviewed AS (
         SELECT bucket, created_at, total_w, reviewed_w,
           COUNT(*) OVER rw AS n, COUNT(*) FILTER (WHERE verdict = 'correct') OVER rw AS c,
           ROW_NUMBER() OVER (PARTITION BY bucket ORDER BY created_at DESC, id DESC) AS last
         FROM scoped WHERE verdict IS NOT NULL
         WINDOW rw AS (ORDER BY created_at, id ROWS BETWEEN ${w} PRECEDING AND CURRENT ROW))
       SELECT bucket, created_at AS at, n::int AS "reviewedRuns", c::int AS "correctReviews", ${wilson("c", "n", "-")} AS lower, ${wilson("c", "n", "+")} AS upper,
         total_w::int AS "totalRunsInWindow", reviewed_w::int AS "reviewedInWindow"
       FROM reviewed WHERE last = 1 AND n >= $${args.length + 1} ORDER BY bucket`,
      [...args, minReviews],
    );
    return plainRows<RollingPoint>(rows);
  }
}
