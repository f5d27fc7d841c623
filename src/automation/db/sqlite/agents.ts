// Agents on SQLite: their sources (db/automation/0350_agents.sql), and the automation and version
// rows a registration or a sync writes, in one IMMEDIATE transaction each.
import type { Database } from "bun:sqlite";
import type { AutomationRow, VersionRow } from "../tables/foundation";
import type { AgentSource, AgentStore, PlanReleases, ReleasePlan } from "../../agents/store";

const SOURCE_COLUMNS =
  "automation_id AS automationId, tenant_id AS tenantId, repo, mirror, release_tag AS releaseTag, release_commit AS releaseCommit, synced_at AS syncedAt, created_at AS createdAt";
const AUTOMATION_COLUMNS =
  "id, tenant_id AS tenantId, type, slug, name, description, status, current_version_id AS currentVersionId, created_at AS createdAt, updated_at AS updatedAt";
const VERSION_COLUMNS =
  "id, tenant_id AS tenantId, automation_id AS automationId, version, yaml, source_ref AS sourceRef, message, name, description, triggers, input_schema AS inputSchema, output_schema AS outputSchema, created_at AS createdAt";

export class SqliteAgentStore implements AgentStore {
  constructor(readonly sqlite: Database) {}

  private automation(tenantId: string, id: string): AutomationRow | undefined {
    return this.sqlite.query<AutomationRow, [string, string]>(`SELECT ${AUTOMATION_COLUMNS} FROM automations WHERE tenant_id = ? AND id = ?`).get(tenantId, id) ?? undefined;
  }

  private releasesSync(automationId: string): VersionRow[] {
    return this.sqlite.query<VersionRow, [string]>(`SELECT ${VERSION_COLUMNS} FROM automation_versions WHERE automation_id = ? AND version IS NOT NULL`).all(automationId);
  }

  private apply(p: ReleasePlan, automationId: string): void {
    for (const id of p.remove) this.sqlite.query("DELETE FROM automation_versions WHERE id = ?").run(id);
    const ins = this.sqlite.query(
      `INSERT INTO automation_versions (id, tenant_id, automation_id, version, yaml, source_ref, message, name, description, triggers, input_schema, output_schema, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const v of p.insert) ins.run(v.id, v.tenantId, v.automationId, v.version, v.yaml, v.sourceRef, v.message, v.name, v.description, v.triggers, v.inputSchema, v.outputSchema, v.createdAt);
    if (p.set) {
      this.sqlite
        .query("UPDATE automations SET current_version_id = ?, name = ?, description = ?, updated_at = ? WHERE id = ?")
        .run(p.set.currentVersionId, p.set.name, p.set.description, p.set.updatedAt, automationId);
    }
  }

  async source(tenantId: string, automationId: string): Promise<AgentSource | undefined> {
    return this.sqlite.query<AgentSource, [string, string]>(`SELECT ${SOURCE_COLUMNS} FROM agent_sources WHERE tenant_id = ? AND automation_id = ?`).get(tenantId, automationId) ?? undefined;
  }

  async sourceByRepo(tenantId: string, repo: string): Promise<AgentSource | undefined> {
    return this.sqlite.query<AgentSource, [string, string]>(`SELECT ${SOURCE_COLUMNS} FROM agent_sources WHERE tenant_id = ? AND repo = ?`).get(tenantId, repo) ?? undefined;
  }

  async releases(automationId: string): Promise<VersionRow[]> {
    return this.releasesSync(automationId);
  }

  async register(a: AutomationRow, s: AgentSource, plan?: PlanReleases): Promise<"ok" | "slug_taken"> {
    return this.sqlite.transaction(() => {
      if (this.sqlite.query("SELECT 1 FROM automations WHERE tenant_id = ? AND type = ? AND slug = ?").get(a.tenantId, a.type, a.slug)) return "slug_taken" as const;
      this.sqlite
        .query("INSERT INTO automations (id, tenant_id, type, slug, name, description, status, current_version_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .run(a.id, a.tenantId, a.type, a.slug, a.name, a.description, a.status, a.currentVersionId, a.createdAt, a.updatedAt);
      this.sqlite
        .query("INSERT INTO agent_sources (automation_id, tenant_id, repo, mirror, release_tag, release_commit, synced_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        .run(s.automationId, s.tenantId, s.repo, s.mirror, s.releaseTag, s.releaseCommit, s.syncedAt, s.createdAt);
      if (plan) this.apply(plan(a, []), a.id);
      return "ok" as const;
    }).immediate();
  }

  async sync(
    tenantId: string,
    automationId: string,
    plan: PlanReleases,
    release: Pick<AgentSource, "releaseTag" | "releaseCommit" | "syncedAt">,
  ): Promise<{ agent: AutomationRow; current: VersionRow }> {
    return this.sqlite.transaction(() => {
      const p = plan(this.automation(tenantId, automationId)!, this.releasesSync(automationId));
      this.apply(p, automationId);
      this.sqlite
        .query("UPDATE agent_sources SET release_tag = ?, release_commit = ?, synced_at = ? WHERE automation_id = ?")
        .run(release.releaseTag, release.releaseCommit, release.syncedAt, automationId);
      return { agent: this.automation(tenantId, automationId)!, current: p.current };
    }).immediate();
  }
}
