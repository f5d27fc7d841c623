// What automations need from storage: automations (workflows and agents), their immutable versions,
// and the row counts the metrics gauges read. One async interface each; db/sqlite/automations.ts and
// db/pg/automations.ts implement them. This module imports no implementation.
// Automations and versions are drizzle-inferred rows (db/tables/foundation.ts); callers take them from here.
import type { AutomationRow, VersionRow } from "../db/tables/foundation";

export type { AutomationRow, VersionRow };

/** An automation with its current version row (undefined when it has none). */
export interface AutomationWithCurrent {
  automation: AutomationRow;
  current: VersionRow | undefined;
  /** Answered from this process's memory (findWithCurrent's `mayRemember`): the run insert checks it (RunInsertOptions.source). */
  remembered?: true;
}

export interface ListAutomations {
  /** Substring of slug, name or description (LIKE wildcards taken literally). */
  search?: string;
  type?: "workflow" | "agent";
  limit: number;
  offset: number;
}

/** Why `AutomationStore.addVersion`/`promote` wrote nothing. */
export type VersionRefusal = "not_found" | "duplicate_version" | "no_current_version" | "untagged";

/**
 * Automations (workflows and agents) and their immutable version rows. Which version is current is the
 * automation row's pointer; every write that moves it holds the automation row (PostgreSQL: `FOR
 * UPDATE`; SQLite: an IMMEDIATE transaction), so activations apply one after the other.
 */
export interface AutomationStore {
  byId(tenantId: string, id: string): Promise<AutomationRow | undefined>;
  bySlug(tenantId: string, type: "workflow" | "agent", slug: string): Promise<AutomationRow | undefined>;
  /** By id or typed target (`workflows.<slug or id>`, `agents.<slug or id>`), within the tenant (db/ref.ts). */
  find(tenantId: string, ref: string): Promise<AutomationRow | undefined>;
  /**
   * `find` with the automation's current version, read together (the path of every run start).
   * `mayRemember`: an answer this process read before may do (PostgreSQL: no round trip), marked
   * `remembered`; only for a run start, whose insert then checks it still holds (RunInsertOptions.source).
   */
  findWithCurrent(tenantId: string, ref: string, opts?: { mayRemember?: boolean }): Promise<AutomationWithCurrent | undefined>;
  /** A page of automations with their current version, newest first (created_at, then id), and the total. */
  list(tenantId: string, f: ListAutomations): Promise<{ rows: AutomationWithCurrent[]; total: number }>;
  /** A version row of the automation. */
  version(automationId: string, id: string): Promise<VersionRow | undefined>;
  /** A version of the automation by tag (a leading `v` ignored) or by id. */
  versionByRef(automationId: string, ref: string): Promise<VersionRow | undefined>;
  /** The automation's current version row. */
  current(a: Pick<AutomationRow, "id" | "currentVersionId">): Promise<VersionRow | undefined>;
  /** Tagged rows plus (when given) the current untagged row, newest first, and the total. */
  versions(automationId: string, currentUntagged: string | null, page: { limit: number; offset: number }): Promise<{ rows: VersionRow[]; total: number }>;
  /** A new automation with its first (current) version; "slug_taken" (nothing written) when the tenant has one of that type and slug. */
  create(a: AutomationRow, first: VersionRow): Promise<"ok" | "slug_taken">;
  /** Sets the status when it differs (`updatedAt` moves only then); the row afterwards, undefined when unknown. */
  setStatus(tenantId: string, id: string, status: string, at: string): Promise<AutomationRow | undefined>;
  /**
   * Adds version `v` (its tag unique within the automation) and, with `activate`, makes it current
   * (name and description follow it). Without `activate` the automation must already have a current
   * version. Returns the automation as written, or why nothing was.
   */
  addVersion(tenantId: string, v: VersionRow, activate: boolean): Promise<{ automation: AutomationRow } | { refused: VersionRefusal }>;
  /**
   * Makes a tagged version current; no write (`changed` false, `updatedAt` kept) when it already is, decided
   * on the locked row, so of racing promotes of one version exactly one changes it. "not_found" / "untagged" refuse.
   */
  promote(tenantId: string, automationId: string, versionId: string, at: string): Promise<{ automation: AutomationRow; version: VersionRow; changed: boolean } | { refused: VersionRefusal }>;
}

/** Row counts the metrics gauges read at scrape time. */
export interface FoundationStats {
  /** Runs by status (pending = queue depth, running) and pending human-review tasks. */
  counts(): Promise<{ pendingRuns: number; runningRuns: number; openTasks: number }>;
}
