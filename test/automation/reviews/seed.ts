// Seeds many finished runs with reviews straight into the database (the runs API would take minutes
// for 10,000), with a deterministic mix of verdicts, so health numbers can be recomputed independently.
import type { Database } from "bun:sqlite";

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

/** `count` runs of `automationId`, created every `spacingMs` backwards from `end`. */
export function seedRuns(sqlite: Database, o: { tenantId: string; automationId: string; count: number; end: number; spacingMs: number; seed: number; prefix: string }): SeededRun[] {
  const rand = rng(o.seed);
  const out: SeededRun[] = [];
  const run = sqlite.query(
    `INSERT INTO runs (id, tenant_id, type, automation_id, automation_name, automation_slug, definition, status, trigger_type, input, output, sample_rank, created_at, started_at, completed_at, experiment_id, evaluation)
     VALUES (?, ?, 'workflow', ?, 'seeded', 'seeded', 'name: seeded', 'completed', 'api', '{}', '{}', 0.5, ?, ?, ?, ?, 0)`,
  );
  const review = sqlite.query(
    `INSERT INTO run_reviews (run_id, id, tenant_id, automation_id, verdict, status, note, reviewed_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 'open', '', ?, ?, ?)`,
  );
  sqlite.transaction(() => {
    for (let i = 0; i < o.count; i++) {
      const createdAt = new Date(o.end - i * o.spacingMs).toISOString();
      const id = `exec_${o.prefix}${String(i).padStart(6, "0")}`;
      const x = rand();
      const verdict = x < 0.4 ? "correct" : x < 0.5 ? "incorrect" : x < 0.55 ? null : undefined;
      const experiment = rand() < 0.05;
      run.run(id, o.tenantId, o.automationId, createdAt, createdAt, createdAt, experiment ? "exp_seeded" : null);
      if (verdict !== undefined) review.run(id, `rvw_${o.prefix}${i}`, o.tenantId, o.automationId, verdict, createdAt, createdAt, createdAt);
      out.push({ id, automationId: o.automationId, createdAt, verdict, experiment });
    }
  })();
  return out;
}
