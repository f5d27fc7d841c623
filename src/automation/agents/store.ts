// The only SQL of the agents feature: agent sources, and the release rows sync keeps in
// automation_versions (one per valid release tag).
import { and, eq, isNotNull } from "drizzle-orm";
import type { Db } from "../db/client";
import { automations, automationVersions, type AutomationRow, type VersionRow } from "../db/schema";
import { agentSources, type AgentSourceRow } from "./schema";

export interface AgentStore {
  insertSource(db: Db, row: AgentSourceRow): void;
  source(db: Db, tenantId: string, automationId: string): AgentSourceRow | undefined;
  sourceByRepo(db: Db, tenantId: string, repo: string): AgentSourceRow | undefined;
  recordRelease(db: Db, automationId: string, fields: Pick<AgentSourceRow, "releaseTag" | "releaseCommit" | "syncedAt">): void;
  /** Tagged version rows of an automation (the releases a sync recorded). */
  releases(db: Db, automationId: string): VersionRow[];
  deleteVersion(db: Db, id: string): void;
  /** Points the agent at its current release and reconciles its metadata. */
  setCurrent(db: Db, id: string, fields: Pick<AutomationRow, "currentVersionId" | "name" | "description" | "updatedAt">): void;
}

export const agentStore: AgentStore = {
  insertSource(db, row) {
    db.insert(agentSources).values(row).run();
  },
  source(db, tenantId, automationId) {
    return db
      .select()
      .from(agentSources)
      .where(and(eq(agentSources.tenantId, tenantId), eq(agentSources.automationId, automationId)))
      .get();
  },
  sourceByRepo(db, tenantId, repo) {
    return db
      .select()
      .from(agentSources)
      .where(and(eq(agentSources.tenantId, tenantId), eq(agentSources.repo, repo)))
      .get();
  },
  recordRelease(db, automationId, fields) {
    db.update(agentSources).set(fields).where(eq(agentSources.automationId, automationId)).run();
  },
  releases(db, automationId) {
    return db
      .select()
      .from(automationVersions)
      .where(and(eq(automationVersions.automationId, automationId), isNotNull(automationVersions.version)))
      .all();
  },
  deleteVersion(db, id) {
    db.delete(automationVersions).where(eq(automationVersions.id, id)).run();
  },
  setCurrent(db, id, fields) {
    db.update(automations).set(fields).where(eq(automations.id, id)).run();
  },
};
