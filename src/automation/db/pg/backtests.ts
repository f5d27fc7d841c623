// Backtests on PostgreSQL. Every state change of an item is one conditional UPDATE (from the state it
// must be in), so of several instances exactly one records a replay, scores it, or completes the backtest.
import { type BacktestRow, type BacktestStore, type ItemColumns, type ItemCounts, itemOf, type ItemRow, type ItemState, type RunSelection, type SideRecord } from "../../backtests/store";
import { int, type Pg, plain, plainRows } from "./rows";

const COLS = `id, tenant_id AS "tenantId", automation_id AS "automationId", base_version_id AS "baseVersionId", base_version AS "baseVersion",
  candidate_version_id AS "candidateVersionId", candidate_version AS "candidateVersion", selection, seed::float8 AS seed, run_total AS "runTotal",
  created_by AS "createdBy", created_at AS "createdAt", completed_at AS "completedAt", cancelled_at AS "cancelledAt"`;
const ITEM_COLS = `backtest_id AS "backtestId", position, original_run_id AS "originalRunId", replay_run_id AS "replayRunId", state, reason,
  expected_from AS "expectedFrom", base_score AS "baseScore", base_passed AS "basePassed", base_scores AS "baseScores",
  candidate_score AS "candidateScore", candidate_passed AS "candidatePassed", candidate_scores AS "candidateScores"`;

type Raw = ItemColumns;

export class PgBacktestStore implements BacktestStore {
  constructor(readonly pg: Pg) {}

  async select(s: RunSelection): Promise<string[]> {
    const args: unknown[] = [s.tenantId, s.automationId, s.versionId];
    const where = ["r.tenant_id = $1", "r.automation_id = $2", "r.version_id = $3", "NOT r.evaluation", "r.parent_run_id IS NULL"];
    const arg = (v: unknown) => {
      args.push(v);
      return `$${args.length}`;
    };
    if (s.from) where.push(`r.created_at >= ${arg(s.from)}::timestamptz`);
    if (s.to) where.push(`r.created_at <= ${arg(s.to)}::timestamptz`);
    if (s.statuses?.length) where.push(`r.status = ANY(${arg(s.statuses)}::text[])`);
    if (s.triggers?.length) where.push(`r.trigger_type = ANY(${arg(s.triggers)}::text[])`);
    if (s.runIds?.length) where.push(`r.id = ANY(${arg(s.runIds)}::text[])`);
    if (s.reviewVerdict === "none") where.push("NOT EXISTS (SELECT 1 FROM run_reviews v WHERE v.run_id = r.id AND v.verdict IS NOT NULL)");
    else if (s.reviewVerdict) where.push(`EXISTS (SELECT 1 FROM run_reviews v WHERE v.run_id = r.id AND v.verdict = ${arg(s.reviewVerdict)})`);
    const rows = await this.pg.unsafe(`SELECT r.id FROM runs r WHERE ${where.join(" AND ")} ORDER BY r.created_at DESC, r.id DESC LIMIT ${arg(s.limit)}`, args);
    return rows.map((r: { id: string }) => r.id);
  }

  async create(b: BacktestRow, runIds: string[]): Promise<void> {
    await this.pg.begin(async (tx) => {
      await tx`INSERT INTO backtests (id, tenant_id, automation_id, base_version_id, base_version, candidate_version_id, candidate_version, selection, seed, run_total, created_by, created_at, completed_at, cancelled_at)
        VALUES (${b.id}, ${b.tenantId}, ${b.automationId}, ${b.baseVersionId}, ${b.baseVersion}, ${b.candidateVersionId}, ${b.candidateVersion}, ${b.selection}, ${b.seed}, ${b.runTotal}, ${b.createdBy}, ${b.createdAt}, ${b.completedAt}, ${b.cancelledAt})`;
      for (let i = 0; i < runIds.length; i += 1000) {
        const chunk = runIds.slice(i, i + 1000);
        await tx.unsafe(
          "INSERT INTO backtest_items (backtest_id, position, original_run_id, state) SELECT $1, p - 1 + $3, id, 'pending' FROM unnest($2::text[]) WITH ORDINALITY AS t(id, p)",
          [b.id, chunk, i],
        );
      }
    });
  }

  private async one(where: string, args: unknown[]): Promise<BacktestRow | undefined> {
    const [r] = await this.pg.unsafe(`SELECT ${COLS} FROM backtests WHERE ${where}`, args);
    return r ? plain<BacktestRow>(r) : undefined;
  }

  byId(id: string): Promise<BacktestRow | undefined> {
    return this.one("id = $1", [id]);
  }

  get(tenantId: string, id: string): Promise<BacktestRow | undefined> {
    return this.one("tenant_id = $1 AND id = $2", [tenantId, id]);
  }

  async list(tenantId: string, automationId: string, page: { limit: number; offset: number }): Promise<{ rows: BacktestRow[]; total: number }> {
    const rows = await this.pg.unsafe(`SELECT ${COLS} FROM backtests WHERE tenant_id = $1 AND automation_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`, [
      tenantId,
      automationId,
      page.limit,
      page.offset,
    ]);
    const [{ n }] = await this.pg`SELECT COUNT(*)::int AS n FROM backtests WHERE tenant_id = ${tenantId} AND automation_id = ${automationId}`;
    return { rows: plainRows<BacktestRow>(rows), total: n };
  }

  async counts(id: string): Promise<ItemCounts> {
    const out: ItemCounts = { pending: 0, started: 0, scored: 0, skipped: 0, cancelled: 0 };
    for (const r of await this.pg`SELECT state, COUNT(*)::int AS n FROM backtest_items WHERE backtest_id = ${id} GROUP BY state`) out[r.state as ItemState] = int(r.n);
    return out;
  }

  private async itemRows(where: string, args: unknown[]): Promise<ItemRow[]> {
    return (await this.pg.unsafe(`SELECT ${ITEM_COLS} FROM backtest_items WHERE ${where}`, args)).map((r: Raw) => itemOf(r));
  }

  items(id: string): Promise<ItemRow[]> {
    return this.itemRows("backtest_id = $1 ORDER BY position", [id]);
  }

  pending(id: string, n: number): Promise<ItemRow[]> {
    return this.itemRows("backtest_id = $1 AND state = 'pending' ORDER BY position LIMIT $2", [id, n]);
  }

  started(id: string): Promise<ItemRow[]> {
    return this.itemRows("backtest_id = $1 AND state = 'started' ORDER BY position", [id]);
  }

  async itemByReplay(replayRunId: string): Promise<ItemRow | undefined> {
    return (await this.itemRows("replay_run_id = $1", [replayRunId]))[0];
  }

  async runByDedupeKey(key: string): Promise<string | undefined> {
    const [r] = await this.pg`SELECT id FROM runs WHERE dedupe_key = ${key}`;
    return r?.id;
  }

  async markStarted(id: string, originalRunId: string, replayRunId: string, at: string): Promise<boolean> {
    const r = await this.pg`UPDATE backtest_items SET state = 'started', replay_run_id = ${replayRunId}, updated_at = ${at}
      WHERE backtest_id = ${id} AND original_run_id = ${originalRunId} AND state = 'pending'`;
    return r.count === 1;
  }

  async markSkipped(id: string, originalRunId: string, reason: string, at: string): Promise<boolean> {
    const r = await this.pg`UPDATE backtest_items SET state = 'skipped', reason = ${reason}, updated_at = ${at}
      WHERE backtest_id = ${id} AND original_run_id = ${originalRunId} AND state = 'pending'`;
    return r.count === 1;
  }

  async markScored(id: string, originalRunId: string, s: { expectedFrom: "output" | "correction"; base: SideRecord; candidate: SideRecord }, at: string): Promise<boolean> {
    const r = await this.pg`UPDATE backtest_items SET state = 'scored', expected_from = ${s.expectedFrom},
        base_score = ${s.base.score}, base_passed = ${s.base.passed}, base_scores = ${JSON.stringify(s.base.scores)},
        candidate_score = ${s.candidate.score}, candidate_passed = ${s.candidate.passed}, candidate_scores = ${JSON.stringify(s.candidate.scores)}, updated_at = ${at}
      WHERE backtest_id = ${id} AND original_run_id = ${originalRunId} AND state = 'started'`;
    return r.count === 1;
  }

  async markReplayCancelled(id: string, originalRunId: string, at: string): Promise<boolean> {
    const r = await this.pg`UPDATE backtest_items SET state = 'cancelled', reason = 'the replay was cancelled', updated_at = ${at}
      WHERE backtest_id = ${id} AND original_run_id = ${originalRunId} AND state = 'started'`;
    return r.count === 1;
  }

  async cancel(id: string, at: string): Promise<void> {
    await this.pg.begin(async (tx) => {
      await tx`UPDATE backtests SET cancelled_at = COALESCE(cancelled_at, ${at}) WHERE id = ${id}`;
      await tx`UPDATE backtest_items SET state = 'cancelled', reason = 'the backtest was cancelled', updated_at = ${at} WHERE backtest_id = ${id} AND state = 'pending'`;
    });
  }

  async completeIfDone(id: string, at: string): Promise<boolean> {
    // Asked after every scored run: a read answers the common "not yet" without locking the row.
    if ((await this.pg`SELECT 1 FROM backtest_items WHERE backtest_id = ${id} AND state IN ('pending', 'started') LIMIT 1`).length) return false;
    const r = await this.pg`UPDATE backtests SET completed_at = ${at} WHERE id = ${id} AND completed_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM backtest_items WHERE backtest_id = ${id} AND state IN ('pending', 'started'))`;
    return r.count === 1;
  }

  async unfinished(): Promise<BacktestRow[]> {
    return plainRows<BacktestRow>(await this.pg.unsafe(`SELECT ${COLS} FROM backtests WHERE completed_at IS NULL ORDER BY created_at`));
  }
}
