// Backtests on SQLite. Every state change of an item is one conditional UPDATE (from the state it must
// be in), so a replay is recorded once and scored once whichever process gets there first.
import type { Database, SQLQueryBindings } from "bun:sqlite";
import { type BacktestRow, type BacktestStore, type ItemColumns, type ItemCounts, itemOf, type ItemRow, type ItemState, type RunSelection, type SideRecord } from "../../backtests/store";

const COLS =
  "id, tenant_id AS tenantId, automation_id AS automationId, base_version_id AS baseVersionId, base_version AS baseVersion, candidate_version_id AS candidateVersionId, candidate_version AS candidateVersion, selection, seed, run_total AS runTotal, created_by AS createdBy, created_at AS createdAt, completed_at AS completedAt, cancelled_at AS cancelledAt";
const ITEM_COLS =
  "backtest_id AS backtestId, position, original_run_id AS originalRunId, replay_run_id AS replayRunId, state, reason, expected_from AS expectedFrom, base_score AS baseScore, base_passed AS basePassed, base_scores AS baseScores, candidate_score AS candidateScore, candidate_passed AS candidatePassed, candidate_scores AS candidateScores";

type RawItem = ItemColumns;

export class SqliteBacktestStore implements BacktestStore {
  constructor(readonly sqlite: Database) {}

  async select(s: RunSelection): Promise<string[]> {
    const where = ["r.tenant_id = ?", "r.automation_id = ?", "r.version_id = ?", "r.evaluation = 0", "r.parent_run_id IS NULL"];
    const args: SQLQueryBindings[] = [s.tenantId, s.automationId, s.versionId];
    if (s.from) where.push("r.created_at >= ?"), args.push(s.from);
    if (s.to) where.push("r.created_at <= ?"), args.push(s.to);
    if (s.statuses?.length) where.push(`r.status IN (${s.statuses.map(() => "?").join(", ")})`), args.push(...s.statuses);
    if (s.triggers?.length) where.push(`r.trigger_type IN (${s.triggers.map(() => "?").join(", ")})`), args.push(...s.triggers);
    if (s.runIds?.length) where.push(`r.id IN (${s.runIds.map(() => "?").join(", ")})`), args.push(...s.runIds);
    if (s.reviewVerdict === "none") where.push("NOT EXISTS (SELECT 1 FROM run_reviews v WHERE v.run_id = r.id AND v.verdict IS NOT NULL)");
    else if (s.reviewVerdict) where.push("EXISTS (SELECT 1 FROM run_reviews v WHERE v.run_id = r.id AND v.verdict = ?)"), args.push(s.reviewVerdict);
    return this.sqlite
      .query<{ id: string }, SQLQueryBindings[]>(`SELECT r.id FROM runs r WHERE ${where.join(" AND ")} ORDER BY r.created_at DESC, r.id DESC LIMIT ?`)
      .all(...args, s.limit)
      .map((r) => r.id);
  }

  async create(b: BacktestRow, runIds: string[]): Promise<void> {
    const item = this.sqlite.query("INSERT INTO backtest_items (backtest_id, position, original_run_id, state) VALUES (?, ?, ?, 'pending')");
    this.sqlite.transaction(() => {
      this.sqlite
        .query(
          "INSERT INTO backtests (id, tenant_id, automation_id, base_version_id, base_version, candidate_version_id, candidate_version, selection, seed, run_total, created_by, created_at, completed_at, cancelled_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .run(b.id, b.tenantId, b.automationId, b.baseVersionId, b.baseVersion, b.candidateVersionId, b.candidateVersion, b.selection, b.seed, b.runTotal, b.createdBy, b.createdAt, b.completedAt, b.cancelledAt);
      for (const [i, id] of runIds.entries()) item.run(b.id, i, id);
    })();
  }

  async byId(id: string): Promise<BacktestRow | undefined> {
    return this.sqlite.query<BacktestRow, [string]>(`SELECT ${COLS} FROM backtests WHERE id = ?`).get(id) ?? undefined;
  }

  async get(tenantId: string, id: string): Promise<BacktestRow | undefined> {
    return this.sqlite.query<BacktestRow, [string, string]>(`SELECT ${COLS} FROM backtests WHERE tenant_id = ? AND id = ?`).get(tenantId, id) ?? undefined;
  }

  async list(tenantId: string, automationId: string, page: { limit: number; offset: number }): Promise<{ rows: BacktestRow[]; total: number }> {
    const rows = this.sqlite
      .query<BacktestRow, [string, string, number, number]>(`SELECT ${COLS} FROM backtests WHERE tenant_id = ? AND automation_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`)
      .all(tenantId, automationId, page.limit, page.offset);
    const total = this.sqlite.query<{ n: number }, [string, string]>("SELECT COUNT(*) AS n FROM backtests WHERE tenant_id = ? AND automation_id = ?").get(tenantId, automationId)!.n;
    return { rows, total };
  }

  async counts(id: string): Promise<ItemCounts> {
    const out: ItemCounts = { pending: 0, started: 0, scored: 0, skipped: 0, cancelled: 0 };
    for (const r of this.sqlite.query<{ state: ItemState; n: number }, [string]>("SELECT state, COUNT(*) AS n FROM backtest_items WHERE backtest_id = ? GROUP BY state").all(id)) out[r.state] = r.n;
    return out;
  }

  async items(id: string): Promise<ItemRow[]> {
    return this.sqlite.query<RawItem, [string]>(`SELECT ${ITEM_COLS} FROM backtest_items WHERE backtest_id = ? ORDER BY position`).all(id).map(itemOf);
  }

  async pending(id: string, n: number): Promise<ItemRow[]> {
    return this.sqlite
      .query<RawItem, [string, number]>(`SELECT ${ITEM_COLS} FROM backtest_items WHERE backtest_id = ? AND state = 'pending' ORDER BY position LIMIT ?`)
      .all(id, n)
      .map(itemOf);
  }

  async started(id: string): Promise<ItemRow[]> {
    return this.sqlite.query<RawItem, [string]>(`SELECT ${ITEM_COLS} FROM backtest_items WHERE backtest_id = ? AND state = 'started' ORDER BY position`).all(id).map(itemOf);
  }

  async itemByReplay(replayRunId: string): Promise<ItemRow | undefined> {
    const r = this.sqlite.query<RawItem, [string]>(`SELECT ${ITEM_COLS} FROM backtest_items WHERE replay_run_id = ?`).get(replayRunId);
    return r ? itemOf(r) : undefined;
  }

  async runByDedupeKey(key: string): Promise<string | undefined> {
    return this.sqlite.query<{ id: string }, [string]>("SELECT id FROM runs WHERE dedupe_key = ?").get(key)?.id;
  }

  async markStarted(id: string, originalRunId: string, replayRunId: string, at: string): Promise<boolean> {
    return (
      this.sqlite
        .query("UPDATE backtest_items SET state = 'started', replay_run_id = ?, updated_at = ? WHERE backtest_id = ? AND original_run_id = ? AND state = 'pending'")
        .run(replayRunId, at, id, originalRunId).changes === 1
    );
  }

  async markSkipped(id: string, originalRunId: string, reason: string, at: string): Promise<boolean> {
    return (
      this.sqlite
        .query("UPDATE backtest_items SET state = 'skipped', reason = ?, updated_at = ? WHERE backtest_id = ? AND original_run_id = ? AND state = 'pending'")
        .run(reason, at, id, originalRunId).changes === 1
    );
  }

  async markScored(id: string, originalRunId: string, r: { expectedFrom: "output" | "correction"; base: SideRecord; candidate: SideRecord }, at: string): Promise<boolean> {
    return (
      this.sqlite
        .query(
          `UPDATE backtest_items SET state = 'scored', expected_from = ?, base_score = ?, base_passed = ?, base_scores = ?, candidate_score = ?, candidate_passed = ?, candidate_scores = ?, updated_at = ?
           WHERE backtest_id = ? AND original_run_id = ? AND state = 'started'`,
        )
        .run(
          r.expectedFrom,
          r.base.score,
          r.base.passed ? 1 : 0,
          JSON.stringify(r.base.scores),
          r.candidate.score,
          r.candidate.passed ? 1 : 0,
          JSON.stringify(r.candidate.scores),
          at,
          id,
          originalRunId,
        ).changes === 1
    );
  }

  async markReplayCancelled(id: string, originalRunId: string, at: string): Promise<boolean> {
    return (
      this.sqlite
        .query("UPDATE backtest_items SET state = 'cancelled', reason = 'the replay was cancelled', updated_at = ? WHERE backtest_id = ? AND original_run_id = ? AND state = 'started'")
        .run(at, id, originalRunId).changes === 1
    );
  }

  async cancel(id: string, at: string): Promise<void> {
    this.sqlite.transaction(() => {
      this.sqlite.query("UPDATE backtests SET cancelled_at = COALESCE(cancelled_at, ?) WHERE id = ?").run(at, id);
      this.sqlite.query("UPDATE backtest_items SET state = 'cancelled', reason = 'the backtest was cancelled', updated_at = ? WHERE backtest_id = ? AND state = 'pending'").run(at, id);
    })();
  }

  async completeIfDone(id: string, at: string): Promise<boolean> {
    // Asked after every scored run: a read answers the common "not yet" without taking the write lock.
    if (this.sqlite.query("SELECT 1 FROM backtest_items WHERE backtest_id = ? AND state IN ('pending', 'started') LIMIT 1").get(id)) return false;
    return (
      this.sqlite
        .query(
          "UPDATE backtests SET completed_at = ? WHERE id = ? AND completed_at IS NULL AND NOT EXISTS (SELECT 1 FROM backtest_items WHERE backtest_id = ? AND state IN ('pending', 'started'))",
        )
        .run(at, id, id).changes === 1
    );
  }

  async unfinished(): Promise<BacktestRow[]> {
    return this.sqlite.query<BacktestRow, []>(`SELECT ${COLS} FROM backtests WHERE completed_at IS NULL ORDER BY created_at`).all();
  }
}
