// Seeds many finished runs with reviews straight into the database (the runs API would take minutes
// for 10,000), with a deterministic mix of verdicts, so health numbers can be recomputed independently.
import type { Database } from "bun:sqlite";
import type { SQL } from "bun";

export interface SeededRun {
  id: string;
  automationId: string;
  createdAt: string;
  verdict: "correct" | "incorrect" | null | undefined; // undefined = no review
  experiment: boolean;
}

/** mulberry32: a tiny deterministic PRNG. */
function rng(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Where to seed: an SQLite connection, or a PostgreSQL pool (a test context's `ctx.db`). */
export interface SeedTarget {
  sqlite?: Database;
  pg?: SQL;
}

const RUN_COLUMNS = "id, tenant_id, type, automation_id, automation_name, automation_slug, definition, status, trigger_type, input, output, sample_rank, created_at, started_at, completed_at, experiment_id, evaluation";
const REVIEW_COLUMNS = "run_id, id, tenant_id, automation_id, verdict, status, note, reviewed_at, created_at, updated_at";

/** `count` runs of `automationId`, created every `spacingMs` backwards from `end`. */
export async function seedRuns(db: SeedTarget, o: { tenantId: string; automationId: string; count: number; end: number; spacingMs: number; seed: number; prefix: string }): Promise<SeededRun[]> {
  const rand = rng(o.seed);
  const out: SeededRun[] = [];
  const runRows: unknown[][] = [];
  const reviewRows: unknown[][] = [];
  for (let i = 0; i < o.count; i++) {
    const createdAt = new Date(o.end - i * o.spacingMs).toISOString();
    const id = `exec_${o.prefix}${String(i).padStart(6, "0")}`;
    const x = rand();
    const verdict = x < 0.4 ? "correct" : x < 0.5 ? "incorrect" : x < 0.55 ? null : undefined;
    const experiment = rand() < 0.05;
    runRows.push([id, o.tenantId, "workflow", o.automationId, "seeded", "seeded", "name: seeded", "completed", "api", "{}", "{}", 0.5, createdAt, createdAt, createdAt, experiment ? "exp_seeded" : null, db.pg ? false : 0]);
    if (verdict !== undefined) reviewRows.push([id, `rvw_${o.prefix}${i}`, o.tenantId, o.automationId, verdict, "open", "", createdAt, createdAt, createdAt]);
    out.push({ id, automationId: o.automationId, createdAt, verdict, experiment });
  }
  if (db.sqlite) {
    const sqlite = db.sqlite;
    const run = sqlite.query(`INSERT INTO runs (${RUN_COLUMNS}) VALUES (${RUN_COLUMNS.split(",").map(() => "?").join(", ")})`);
    const review = sqlite.query(`INSERT INTO run_reviews (${REVIEW_COLUMNS}) VALUES (${REVIEW_COLUMNS.split(",").map(() => "?").join(", ")})`);
    sqlite.transaction(() => {
      for (const r of runRows) run.run(...(r as never[]));
      for (const r of reviewRows) review.run(...(r as never[]));
    })();
    return out;
  }
  // PostgreSQL: multi-row inserts of 500 rows, in one transaction.
  await db.pg!.begin(async (tx) => {
    for (const [table, columns, rows] of [["runs", RUN_COLUMNS, runRows], ["run_reviews", REVIEW_COLUMNS, reviewRows]] as const) {
      const width = columns.split(",").length;
      for (let i = 0; i < rows.length; i += 500) {
        const chunk = rows.slice(i, i + 500);
        const values = chunk.map((_, r) => `(${Array.from({ length: width }, (_, c) => `$${r * width + c + 1}`).join(", ")})`).join(", ");
        await tx.unsafe(`INSERT INTO ${table} (${columns}) VALUES ${values}`, chunk.flat());
      }
    }
  });
  return out;
}
