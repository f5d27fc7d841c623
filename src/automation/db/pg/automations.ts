// Automations and their versions on PostgreSQL. Every write that moves an automation's current
// version holds its row (`FOR UPDATE`), so activations from many requests (or instances) apply one
// after the other; a taken slug or tag is the unique index's answer (automations_tenant_type_slug,
// automation_versions_tag), so two creates at once give one winner and one conflict.
import { copyFound, RememberedLookups, resolveRef } from "../ref";
import { likeEscape } from "../sql-shared";
import type { AutomationRow, VersionRow } from "../tables/foundation";
import type { AutomationStore, AutomationWithCurrent, FoundationStats, ListAutomations, VersionRefusal } from "../../automations/store";
import { int, isUniqueViolation, type Pg, plain, plainRows, sharedPerTurn } from "./rows";

const A_COLS: [string, string][] = [
  ["id", "id"], ["tenant_id", "tenantId"], ["type", "type"], ["slug", "slug"], ["name", "name"], ["description", "description"], ["status", "status"],
  ["current_version_id", "currentVersionId"], ["created_at", "createdAt"], ["updated_at", "updatedAt"],
];
const V_COLS: [string, string][] = [
  ["id", "id"], ["tenant_id", "tenantId"], ["automation_id", "automationId"], ["version", "version"], ["yaml", "yaml"], ["source_ref", "sourceRef"],
  ["message", "message"], ["name", "name"], ["description", "description"], ["triggers::text", "triggers"], ["input_schema::text", "inputSchema"],
  ["output_schema::text", "outputSchema"], ["created_at", "createdAt"],
];
const cols = (c: [string, string][], table = "", prefix = "") => c.map(([col, alias]) => `${table}${col} AS "${prefix}${alias}"`).join(", ");
const A = cols(A_COLS);
const V = cols(V_COLS);
const LIST_WHERE = `a.tenant_id = $1 AND ($2::text IS NULL OR a.type = $2)
  AND ($3::text IS NULL OR a.slug ILIKE $3 ESCAPE '\\' OR a.name ILIKE $3 ESCAPE '\\' OR a.description ILIKE $3 ESCAPE '\\')`;
const VERSIONS_WHERE = "automation_id = $1 AND (version IS NOT NULL OR id = $2)";

function split(r: Record<string, unknown>): AutomationWithCurrent {
  const automation: Record<string, unknown> = {};
  const current: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(plain<Record<string, unknown>>(r))) {
    if (k.startsWith("v_")) current[k.slice(2)] = v;
    else automation[k] = v;
  }
  return { automation: automation as unknown as AutomationRow, current: current.id == null ? undefined : (current as unknown as VersionRow) };
}

export class PgAutomationStore implements AutomationStore {
  constructor(readonly pg: Pg) {}

  private async automation(db: Pg, tenantId: string, id: string, lock = false): Promise<AutomationRow | undefined> {
    const [r] = await db.unsafe(`SELECT ${A} FROM automations WHERE tenant_id = $1 AND id = $2${lock ? " FOR UPDATE" : ""}`, [tenantId, id]);
    return r ? plain<AutomationRow>(r) : undefined;
  }

  private async versionOn(db: Pg, automationId: string, id: string): Promise<VersionRow | undefined> {
    const [r] = await db.unsafe(`SELECT ${V} FROM automation_versions WHERE automation_id = $1 AND id = $2`, [automationId, id]);
    return r ? plain<VersionRow>(r) : undefined;
  }

  private async insertVersion(tx: Pg, v: VersionRow): Promise<void> {
    await tx`INSERT INTO automation_versions (id, tenant_id, automation_id, version, yaml, source_ref, message, name, description, triggers, input_schema, output_schema, created_at)
      VALUES (${v.id}, ${v.tenantId}, ${v.automationId}, ${v.version}, ${v.yaml}, ${v.sourceRef}, ${v.message}, ${v.name}, ${v.description},
        CAST(${v.triggers} AS text)::json, CAST(${v.inputSchema} AS text)::json, CAST(${v.outputSchema} AS text)::json, ${v.createdAt})`;
  }

  private async setCurrent(tx: Pg, id: string, v: Pick<VersionRow, "id" | "name" | "description">, at: string): Promise<void> {
    await tx`UPDATE automations SET current_version_id = ${v.id}, name = ${v.name}, description = ${v.description}, updated_at = ${at} WHERE id = ${id}`;
  }

  byId(tenantId: string, id: string): Promise<AutomationRow | undefined> {
    return this.automation(this.pg, tenantId, id);
  }

  async bySlug(tenantId: string, type: "workflow" | "agent", slug: string): Promise<AutomationRow | undefined> {
    const [r] = await this.pg.unsafe(`SELECT ${A} FROM automations WHERE tenant_id = $1 AND type = $2 AND slug = $3`, [tenantId, type, slug]);
    return r ? plain<AutomationRow>(r) : undefined;
  }

  async find(tenantId: string, ref: string): Promise<AutomationRow | undefined> {
    return (await this.findWithCurrent(tenantId, ref))?.automation;
  }

  /** Run starts name their automation on every request: the lookups of one turn share a query. */
  private readonly lookup = sharedPerTurn(
    (key: string) => this.lookUp(key.slice(0, key.indexOf("\u0000")), key.slice(key.indexOf("\u0000") + 1)),
    copyFound,
  );

  private readonly remembered = new RememberedLookups();

  async findWithCurrent(tenantId: string, ref: string, opts: { mayRemember?: boolean } = {}): Promise<AutomationWithCurrent | undefined> {
    const key = `${tenantId}\u0000${ref}`;
    const known = opts.mayRemember ? this.remembered.get(key) : undefined;
    if (known) return known;
    const found = await this.lookup(key);
    this.remembered.keep(key, found);
    return found;
  }

  private async lookUp(tenantId: string, ref: string): Promise<AutomationWithCurrent | undefined> {
    // resolveRef takes synchronous lookups: both candidates are read first (one query, with their
    // current versions), then it picks.
    const bySlug = new Map<string, AutomationWithCurrent>();
    const byId = new Map<string, AutomationWithCurrent>();
    const m = /^(workflows|agents)\.(.+)$/.exec(ref);
    const name = m ? m[2] : ref;
    const rows = await this.pg.unsafe(
      `SELECT ${cols(A_COLS, "a.")}, ${cols(V_COLS, "v.", "v_")} FROM automations a LEFT JOIN automation_versions v ON v.id = a.current_version_id
       WHERE a.tenant_id = $1 AND (a.id = $2 OR a.slug = $2)`,
      [tenantId, name],
    );
    for (const r of rows.map(split)) {
      if (r.automation.id === name) byId.set(r.automation.id, r);
      if (r.automation.slug === name) bySlug.set(`${r.automation.type}:${r.automation.slug}`, r);
    }
    const picked = resolveRef(
      ref,
      (type, slug) => bySlug.get(`${type}:${slug}`)?.automation,
      (id) => byId.get(id)?.automation,
    );
    return picked && (byId.get(picked.id) ?? bySlug.get(`${picked.type}:${picked.slug}`));
  }

  async list(tenantId: string, f: ListAutomations): Promise<{ rows: AutomationWithCurrent[]; total: number }> {
    const args = [tenantId, f.type ?? null, f.search ? likeEscape(f.search) : null];
    const rows = await this.pg.unsafe(
      `SELECT ${cols(A_COLS, "a.")}, ${cols(V_COLS, "v.", "v_")} FROM automations a LEFT JOIN automation_versions v ON v.id = a.current_version_id
       WHERE ${LIST_WHERE} ORDER BY a.created_at DESC, a.id DESC LIMIT $4 OFFSET $5`,
      [...args, f.limit, f.offset],
    );
    const [{ n }] = await this.pg.unsafe(`SELECT COUNT(*) AS n FROM automations a WHERE ${LIST_WHERE}`, args);
    return { rows: rows.map(split), total: int(n) };
  }

  version(automationId: string, id: string): Promise<VersionRow | undefined> {
    return this.versionOn(this.pg, automationId, id);
  }

  async versionByRef(automationId: string, ref: string): Promise<VersionRow | undefined> {
    const [r] = await this.pg.unsafe(`SELECT ${V} FROM automation_versions WHERE automation_id = $1 AND (version = $2 OR id = $3) ORDER BY created_at, id LIMIT 1`, [
      automationId,
      ref.replace(/^v/, ""),
      ref,
    ]);
    return r ? plain<VersionRow>(r) : undefined;
  }

  async current(a: Pick<AutomationRow, "id" | "currentVersionId">): Promise<VersionRow | undefined> {
    return a.currentVersionId ? this.versionOn(this.pg, a.id, a.currentVersionId) : undefined;
  }

  async versions(automationId: string, currentUntagged: string | null, page: { limit: number; offset: number }): Promise<{ rows: VersionRow[]; total: number }> {
    const rows = await this.pg.unsafe(`SELECT ${V} FROM automation_versions WHERE ${VERSIONS_WHERE} ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`, [
      automationId,
      currentUntagged,
      page.limit,
      page.offset,
    ]);
    const [{ n }] = await this.pg.unsafe(`SELECT COUNT(*) AS n FROM automation_versions WHERE ${VERSIONS_WHERE}`, [automationId, currentUntagged]);
    return { rows: plainRows<VersionRow>(rows), total: int(n) };
  }

  async create(a: AutomationRow, first: VersionRow): Promise<"ok" | "slug_taken"> {
    try {
      return await this.pg.begin(async (tx) => {
        await tx`INSERT INTO automations (id, tenant_id, type, slug, name, description, status, current_version_id, created_at, updated_at)
          VALUES (${a.id}, ${a.tenantId}, ${a.type}, ${a.slug}, ${a.name}, ${a.description}, ${a.status}, ${a.currentVersionId}, ${a.createdAt}, ${a.updatedAt})`;
        await this.insertVersion(tx, first);
        return "ok" as const;
      });
    } catch (err) {
      if (isUniqueViolation(err, "automations_tenant_type_slug")) return "slug_taken";
      throw err;
    }
  }

  async setStatus(tenantId: string, id: string, status: string, at: string): Promise<AutomationRow | undefined> {
    await this.pg`UPDATE automations SET status = ${status}, updated_at = ${at} WHERE tenant_id = ${tenantId} AND id = ${id} AND status <> ${status}`;
    return this.automation(this.pg, tenantId, id);
  }

  async addVersion(tenantId: string, v: VersionRow, activate: boolean): Promise<{ automation: AutomationRow } | { refused: VersionRefusal }> {
    try {
      return await this.pg.begin(async (tx): Promise<{ automation: AutomationRow } | { refused: VersionRefusal }> => {
        const a = await this.automation(tx, tenantId, v.automationId, true);
        if (!a) return { refused: "not_found" };
        if (!activate && !a.currentVersionId) return { refused: "no_current_version" };
        await this.insertVersion(tx, v);
        if (activate) await this.setCurrent(tx, a.id, v, v.createdAt);
        return { automation: (await this.automation(tx, tenantId, a.id))! };
      });
    } catch (err) {
      if (isUniqueViolation(err, "automation_versions_tag")) return { refused: "duplicate_version" };
      throw err;
    }
  }

  async promote(tenantId: string, automationId: string, versionId: string, at: string): Promise<{ automation: AutomationRow; version: VersionRow; changed: boolean } | { refused: VersionRefusal }> {
    return this.pg.begin(async (tx): Promise<{ automation: AutomationRow; version: VersionRow; changed: boolean } | { refused: VersionRefusal }> => {
      const a = await this.automation(tx, tenantId, automationId, true);
      const v = a && (await this.versionOn(tx, a.id, versionId));
      if (!a || !v) return { refused: "not_found" };
      if (v.version === null) return { refused: "untagged" };
      const changed = a.currentVersionId !== v.id;
      if (changed) await this.setCurrent(tx, a.id, v, at);
      return { automation: (await this.automation(tx, tenantId, a.id))!, version: v, changed };
    });
  }
}

export class PgFoundationStats implements FoundationStats {
  constructor(readonly pg: Pg) {}

  async counts(): Promise<{ pendingRuns: number; runningRuns: number; openTasks: number }> {
    const [r] = await this.pg`SELECT (SELECT COUNT(*) FROM runs WHERE status = 'pending') AS p, (SELECT COUNT(*) FROM runs WHERE status = 'running') AS r,
      (SELECT COUNT(*) FROM human_review_tasks WHERE status = 'pending') AS t`;
    return { pendingRuns: int(r.p), runningRuns: int(r.r), openTasks: int(r.t) };
  }
}
