// What agents need from storage: their Git sources and the tagged version rows a sync keeps in line with
// the releases. One async interface; db/sqlite/agents.ts and db/pg/agents.ts implement it. This module imports no implementation.
import type { AutomationRow, VersionRow } from "../automations/store";

/** Where an agent's releases come from. */
export interface AgentSource {
  automationId: string;
  tenantId: string;
  /** As registered: an absolute local path, or a URL. */
  repo: string;
  /** Bare mirror under the data dir for a URL; null for a local path (read in place). */
  mirror: string | null;
  /** The latest release the last sync read. */
  releaseTag: string | null;
  releaseCommit: string | null;
  syncedAt: string | null;
  createdAt: string;
}

/** How an agent's version rows become its releases: rows to drop and add, and its current version. */
export interface ReleasePlan {
  remove: string[];
  insert: VersionRow[];
  current: VersionRow;
  /** The agent's new current version and metadata; absent when they already match. */
  set?: Pick<AutomationRow, "currentVersionId" | "name" | "description" | "updatedAt">;
}

/** Decides the release plan from the agent and its tagged version rows, as they are inside the transaction. */
export type PlanReleases = (agent: AutomationRow, releases: VersionRow[]) => ReleasePlan;

/** Agents: their Git sources, and the tagged version rows a sync keeps in line with the releases. */
export interface AgentStore {
  source(tenantId: string, automationId: string): Promise<AgentSource | undefined>;
  sourceByRepo(tenantId: string, repo: string): Promise<AgentSource | undefined>;
  /** Tagged version rows of an automation (the releases a sync recorded). */
  releases(automationId: string): Promise<VersionRow[]>;
  /**
   * Registers an agent (its automation row and source) and, with `plan`, its releases, all or nothing;
   * "slug_taken" (nothing written) when the tenant already has an agent with the slug.
   */
  register(agent: AutomationRow, source: AgentSource, plan?: PlanReleases): Promise<"ok" | "slug_taken">;
  /**
   * Applies `plan` to the agent's current rows and records the release read, in one transaction (two
   * syncs at once apply one after the other). Returns the agent after it and its current version.
   */
  sync(tenantId: string, automationId: string, plan: PlanReleases, release: Pick<AgentSource, "releaseTag" | "releaseCommit" | "syncedAt">): Promise<{ agent: AutomationRow; current: VersionRow }>;
}
