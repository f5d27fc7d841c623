// Agents on PostgreSQL: their sources and the automation and version rows a registration or a sync
// writes, each in one transaction. A slug taken is the unique index's answer; a sync locks the agent's
// automation row first, so two syncs at once (also on two instances) apply one after the other.
import type { AutomationRow, VersionRow } from "../tables/foundation";
import type { AgentSource, AgentStore, PlanReleases, ReleasePlan } from "../../agents/store";
import { isUniqueViolation, type Pg, plain, plainRows } from "./rows";

const SOURCE_COLUMNS = `automation_id AS "automationId", tenant_id AS "tenantId", repo, mirror, release_tag AS "releaseTag", release_commit AS "releaseCommit",
  synced_at AS "syncedAt", created_at AS "createdAt"`;
const AUTOMATION_COLUMNS = `id, tenant_id AS "tenantId", type, slug, name, description, status, current_version_id AS "currentVersionId", created_at AS "createdAt", updated_at AS "updatedAt"`;
const VERSION_COLUMNS = `id, tenant_id AS "tenantId", automation_id AS "automationId", version, yaml, source_ref AS "sourceRef", message, name, description,
  triggers::text AS triggers, input_schema::text AS "inputSchema", output_schema::text AS "outputSchema", created_at AS "createdAt"`;

export class PgAgentStore implements AgentStore {
  constructor(readonly pg: Pg) {}

  private async automation(db: Pg, tenantId: string, id: string, lock = false): Promise<AutomationRow | undefined> {
    const [r] = await db.unsafe(`SELECT ${AUTOMATION_COLUMNS} FROM automations WHERE tenant_id = $1 AND id = $2${lock ? " FOR UPDATE" : ""}`, [tenantId, id]);
    return r ? plain<AutomationRow>(r) : undefined;
  }

  private async releasesOn(db: Pg, automationId: string): Promise<VersionRow[]> {
    return plainRows<VersionRow>(await db.unsafe(`SELECT ${VERSION_COLUMNS} FROM automation_versions WHERE automation_id = $1 AND version IS NOT NULL ORDER BY created_at, id`, [automationId]));
  }

  private async apply(tx: Pg, p: ReleasePlan, automationId: string): Promise<void> {
    for (const id of p.remove) await tx`DELETE FROM automation_versions WHERE id = ${id}`;
    for (const v of p.insert) {
      await tx`INSERT INTO automation_versions (id, tenant_id, automation_id, version, yaml, source_ref, message, name, description, triggers, input_schema, output_schema, created_at)
        VALUES (${v.id}, ${v.tenantId}, ${v.automationId}, ${v.version}, ${v.yaml}, ${v.sourceRef}, ${v.message}, ${v.name}, ${v.description},
          CAST(${v.triggers} AS text)::json, CAST(${v.inputSchema} AS text)::json, CAST(${v.outputSchema} AS text)::json, ${v.createdAt})`;
    }
    if (p.set) {
      await tx`UPDATE automations SET current_version_id = ${p.set.currentVersionId}, name = ${p.set.name}, description = ${p.set.description}, updated_at = ${p.set.updatedAt}
        WHERE id = ${automationId}`;
    }
  }

  async source(tenantId: string, automationId: string): Promise<AgentSource | undefined> {
    const [r] = await this.pg.unsafe(`SELECT ${SOURCE_COLUMNS} FROM agent_sources WHERE tenant_id = $1 AND automation_id = $2`, [tenantId, automationId]);
    return r ? plain<AgentSource>(r) : undefined;
  }

  async sourceByRepo(tenantId: string, repo: string): Promise<AgentSource | undefined> {
    const [r] = await this.pg.unsafe(`SELECT ${SOURCE_COLUMNS} FROM agent_sources WHERE tenant_id = $1 AND repo = $2`, [tenantId, repo]);
    return r ? plain<AgentSource>(r) : undefined;
  }

  releases(automationId: string): Promise<VersionRow[]> {
    return this.releasesOn(this.pg, automationId);
  }

  async register(a: AutomationRow, s: AgentSource, plan?: PlanReleases): Promise<"ok" | "slug_taken"> {
    try {
      return await this.pg.begin(async (tx) => {
        await tx`INSERT INTO automations (id, tenant_id, type, slug, name, description, status, current_version_id, created_at, updated_at)
          VALUES (${a.id}, ${a.tenantId}, ${a.type}, ${a.slug}, ${a.name}, ${a.description}, ${a.status}, ${a.currentVersionId}, ${a.createdAt}, ${a.updatedAt})`;
        await tx`INSERT INTO agent_sources (automation_id, tenant_id, repo, mirror, release_tag, release_commit, synced_at, created_at)
          VALUES (${s.automationId}, ${s.tenantId}, ${s.repo}, ${s.mirror}, ${s.releaseTag}, ${s.releaseCommit}, ${s.syncedAt}, ${s.createdAt})`;
        if (plan) await this.apply(tx, plan(a, []), a.id);
        return "ok" as const;
      });
    } catch (err) {
      if (isUniqueViolation(err, "automations_tenant_type_slug")) return "slug_taken";
      throw err;
    }
  }

  async sync(
    tenantId: string,
    automationId: string,
    plan: PlanReleases,
    release: Pick<AgentSource, "releaseTag" | "releaseCommit" | "syncedAt">,
  ): Promise<{ agent: AutomationRow; current: VersionRow }> {
    return this.pg.begin(async (tx) => {
      const p = plan((await this.automation(tx, tenantId, automationId, true))!, await this.releasesOn(tx, automationId));
      await this.apply(tx, p, automationId);
      await tx`UPDATE agent_sources SET release_tag = ${release.releaseTag}, release_commit = ${release.releaseCommit}, synced_at = ${release.syncedAt} WHERE automation_id = ${automationId}`;
      return { agent: (await this.automation(tx, tenantId, automationId))!, current: p.current };
    });
  }
}
