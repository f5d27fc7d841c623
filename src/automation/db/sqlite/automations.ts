// Automations and their versions on SQLite (db/automation/0000_foundation.sql). Lookups on the path of
// every request use `query` (compiled once per connection and cached); writes that decide run in
// IMMEDIATE transactions, so a check and its write see the same automation row.
import type { Database } from "bun:sqlite";
import { RememberedLookups, resolveRef } from "../ref";
import { likeEscape } from "../sql-shared";
import type { AutomationRow, VersionRow } from "../tables/foundation";
import type { AutomationStore, AutomationWithCurrent, FoundationStats, ListAutomations, VersionRefusal } from "../../automations/store";

const A = "id, tenant_id AS tenantId, type, slug, name, description, status, current_version_id AS currentVersionId, created_at AS createdAt, updated_at AS updatedAt";
const V =
  "id, tenant_id AS tenantId, automation_id AS automationId, version, yaml, source_ref AS sourceRef, message, name, description, triggers, input_schema AS inputSchema, output_schema AS outputSchema, created_at AS createdAt";
/** The current version's columns in a list row, prefixed so they do not clash with the automation's. */
const V_JOINED = V.split(", ")
  .map((c) => {
    const [col, alias] = c.split(" AS ");
    return `v.${col} AS v_${alias ?? col}`;
  })
  .join(", ");
const LIST_WHERE = `a.tenant_id = ?1 AND (?2 IS NULL OR a.type = ?2)
  AND (?3 IS NULL OR a.slug LIKE ?3 ESCAPE '\\' OR a.name LIKE ?3 ESCAPE '\\' OR a.description LIKE ?3 ESCAPE '\\')`;
/** Tagged rows plus the current untagged one when ?2 names it (`id = NULL` matches nothing). */
const VERSIONS_WHERE = "automation_id = ?1 AND (version IS NOT NULL OR id = ?2)";

type Joined = AutomationRow & Record<string, unknown>;

function split(r: Joined): AutomationWithCurrent {
  const automation = {} as Record<string, unknown>;
  const current = {} as Record<string, unknown>;
  for (const [k, v] of Object.entries(r)) {
    if (k.startsWith("v_")) current[k.slice(2)] = v;
    else automation[k] = v;
  }
  return { automation: automation as AutomationRow, current: current.id == null ? undefined : (current as unknown as VersionRow) };
}

export class SqliteAutomationStore implements AutomationStore {
  constructor(readonly sqlite: Database) {}

  private byIdSync(tenantId: string, id: string): AutomationRow | undefined {
    return this.sqlite.query<AutomationRow, [string, string]>(`SELECT ${A} FROM automations WHERE tenant_id = ? AND id = ?`).get(tenantId, id) ?? undefined;
  }

  private bySlugSync(tenantId: string, type: string, slug: string): AutomationRow | undefined {
    return this.sqlite.query<AutomationRow, [string, string, string]>(`SELECT ${A} FROM automations WHERE tenant_id = ? AND type = ? AND slug = ?`).get(tenantId, type, slug) ?? undefined;
  }

  private versionSync(automationId: string, id: string): VersionRow | undefined {
    return this.sqlite.query<VersionRow, [string, string]>(`SELECT ${V} FROM automation_versions WHERE automation_id = ? AND id = ?`).get(automationId, id) ?? undefined;
  }

  private insertVersion(v: VersionRow): void {
    this.sqlite
      .query(
        `INSERT INTO automation_versions (id, tenant_id, automation_id, version, yaml, source_ref, message, name, description, triggers, input_schema, output_schema, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(v.id, v.tenantId, v.automationId, v.version, v.yaml, v.sourceRef, v.message, v.name, v.description, v.triggers, v.inputSchema, v.outputSchema, v.createdAt);
  }

  private setCurrent(id: string, v: Pick<VersionRow, "id" | "name" | "description">, at: string): void {
    this.sqlite.query("UPDATE automations SET current_version_id = ?, name = ?, description = ?, updated_at = ? WHERE id = ?").run(v.id, v.name, v.description, at, id);
  }

  async byId(tenantId: string, id: string): Promise<AutomationRow | undefined> {
    return this.byIdSync(tenantId, id);
  }

  async bySlug(tenantId: string, type: "workflow" | "agent", slug: string): Promise<AutomationRow | undefined> {
    return this.bySlugSync(tenantId, type, slug);
  }

  async find(tenantId: string, ref: string): Promise<AutomationRow | undefined> {
    return resolveRef(
      ref,
      (type, slug) => this.bySlugSync(tenantId, type, slug),
      (id) => this.byIdSync(tenantId, id),
    );
  }

  /** Run starts may be answered from memory (as on PostgreSQL): two reads a run fewer, the run insert checks the answer. */
  private readonly remembered = new RememberedLookups();

  async findWithCurrent(tenantId: string, ref: string, opts: { mayRemember?: boolean } = {}): Promise<AutomationWithCurrent | undefined> {
    const key = `${tenantId}\u0000${ref}`;
    const known = opts.mayRemember ? this.remembered.get(key) : undefined;
    if (known) return known;
    const automation = await this.find(tenantId, ref);
    const found = automation && { automation, current: automation.currentVersionId ? this.versionSync(automation.id, automation.currentVersionId) : undefined };
    this.remembered.keep(key, found);
    return found;
  }

  async list(tenantId: string, f: ListAutomations): Promise<{ rows: AutomationWithCurrent[]; total: number }> {
    const pat = f.search ? likeEscape(f.search) : null;
    const rows = this.sqlite
      .query<Joined, [string, string | null, string | null, number, number]>(
        `SELECT ${A.split(", ").map((c) => `a.${c}`).join(", ")}, ${V_JOINED} FROM automations a LEFT JOIN automation_versions v ON v.id = a.current_version_id
         WHERE ${LIST_WHERE} ORDER BY a.created_at DESC, a.id DESC LIMIT ?4 OFFSET ?5`,
      )
      .all(tenantId, f.type ?? null, pat, f.limit, f.offset);
    const total = this.sqlite.query<{ n: number }, [string, string | null, string | null]>(`SELECT COUNT(*) AS n FROM automations a WHERE ${LIST_WHERE}`).get(tenantId, f.type ?? null, pat)?.n ?? 0;
    return { rows: rows.map(split), total };
  }

  async version(automationId: string, id: string): Promise<VersionRow | undefined> {
    return this.versionSync(automationId, id);
  }

  async versionByRef(automationId: string, ref: string): Promise<VersionRow | undefined> {
    return (
      this.sqlite
        .query<VersionRow, [string, string, string]>(`SELECT ${V} FROM automation_versions WHERE automation_id = ? AND (version = ? OR id = ?) ORDER BY created_at, id LIMIT 1`)
        .get(automationId, ref.replace(/^v/, ""), ref) ?? undefined
    );
  }

  async current(a: Pick<AutomationRow, "id" | "currentVersionId">): Promise<VersionRow | undefined> {
    return a.currentVersionId ? this.versionSync(a.id, a.currentVersionId) : undefined;
  }

  async versions(automationId: string, currentUntagged: string | null, page: { limit: number; offset: number }): Promise<{ rows: VersionRow[]; total: number }> {
    const rows = this.sqlite
      .query<VersionRow, [string, string | null, number, number]>(`SELECT ${V} FROM automation_versions WHERE ${VERSIONS_WHERE} ORDER BY created_at DESC, id DESC LIMIT ?3 OFFSET ?4`)
      .all(automationId, currentUntagged, page.limit, page.offset);
    const total = this.sqlite.query<{ n: number }, [string, string | null]>(`SELECT COUNT(*) AS n FROM automation_versions WHERE ${VERSIONS_WHERE}`).get(automationId, currentUntagged)?.n ?? 0;
    return { rows, total };
  }

  async create(a: AutomationRow, first: VersionRow): Promise<"ok" | "slug_taken"> {
    return this.sqlite.transaction(() => {
      if (this.bySlugSync(a.tenantId, a.type, a.slug)) return "slug_taken" as const;
      this.sqlite
        .query("INSERT INTO automations (id, tenant_id, type, slug, name, description, status, current_version_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .run(a.id, a.tenantId, a.type, a.slug, a.name, a.description, a.status, a.currentVersionId, a.createdAt, a.updatedAt);
      this.insertVersion(first);
      return "ok" as const;
    }).immediate();
  }

  async setStatus(tenantId: string, id: string, status: string, at: string): Promise<AutomationRow | undefined> {
    this.sqlite.query("UPDATE automations SET status = ?, updated_at = ? WHERE tenant_id = ? AND id = ? AND status <> ?").run(status, at, tenantId, id, status);
    return this.byIdSync(tenantId, id);
  }

  async addVersion(tenantId: string, v: VersionRow, activate: boolean): Promise<{ automation: AutomationRow } | { refused: VersionRefusal }> {
    return this.sqlite.transaction((): { automation: AutomationRow } | { refused: VersionRefusal } => {
      const a = this.byIdSync(tenantId, v.automationId);
      if (!a) return { refused: "not_found" };
      if (!activate && !a.currentVersionId) return { refused: "no_current_version" };
      if (v.version !== null && this.sqlite.query("SELECT 1 FROM automation_versions WHERE automation_id = ? AND version = ?").get(a.id, v.version)) {
        return { refused: "duplicate_version" };
      }
      this.insertVersion(v);
      if (activate) this.setCurrent(a.id, v, v.createdAt);
      return { automation: this.byIdSync(tenantId, a.id)! };
    }).immediate();
  }

  async promote(tenantId: string, automationId: string, versionId: string, at: string): Promise<{ automation: AutomationRow; version: VersionRow; changed: boolean } | { refused: VersionRefusal }> {
    return this.sqlite.transaction((): { automation: AutomationRow; version: VersionRow; changed: boolean } | { refused: VersionRefusal } => {
      const a = this.byIdSync(tenantId, automationId);
      const v = a && this.versionSync(a.id, versionId);
      if (!a || !v) return { refused: "not_found" };
      if (v.version === null) return { refused: "untagged" };
      const changed = a.currentVersionId !== v.id;
      if (changed) this.setCurrent(a.id, v, at);
      return { automation: this.byIdSync(tenantId, a.id)!, version: v, changed };
    }).immediate();
  }
}

export class SqliteFoundationStats implements FoundationStats {
  constructor(readonly sqlite: Database) {}

  async counts(): Promise<{ pendingRuns: number; runningRuns: number; openTasks: number }> {
    const r = this.sqlite
      .query<{ pendingRuns: number; runningRuns: number; openTasks: number }, []>(
        `SELECT (SELECT COUNT(*) FROM runs WHERE status = 'pending') AS pendingRuns, (SELECT COUNT(*) FROM runs WHERE status = 'running') AS runningRuns,
           (SELECT COUNT(*) FROM human_review_tasks WHERE status = 'pending') AS openTasks`,
      )
      .get();
    return r ?? { pendingRuns: 0, runningRuns: 0, openTasks: 0 };
  }
}
