// Agents: Git repositories registered by the operator whose release tags are the versions. `add`
// registers (and syncs when there are releases); `sync` reconciles the version list, metadata and
// triggers from the latest release — idempotent: an unchanged repository changes nothing.
import { existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { Clock } from "../../kernel/clock";
import { Conflict, DomainError, Invalid, NotFound } from "../../kernel/errors";
import { newId } from "../../kernel/ids";
import { findAutomation, getAutomation } from "../automations/service";
import type { AutomationDetail } from "../automations/model";
import type { AutomationContext } from "../context";
import type { AutomationStore, VersionRow } from "../automations/store";
import type { AgentSource, AgentStore, PlanReleases } from "./store";
import type { WorkflowTool } from "../engine/contract";
import { SLUG } from "../workflow/schema";
import { checkLocalRepo, cloneMirror, fetchMirror, isRemote, normalizeRepo } from "./git";
import { agentWorkflow, type Manifest } from "./manifest";
import { parseReleaseRef, readReleases, releaseRef, type ReadRelease } from "./releases";

export interface AgentDeps {
  automations: AutomationStore;
  agents: AgentStore;
  clock: Clock;
  /** Where mirrors of remote repositories live (`<data dir>/agents`). */
  mirrorsDir: string;
}

/** Mirrors go under the data dir; an in-memory context (tests) keeps them in the temp dir. */
export function agentDeps(ctx: AutomationContext): AgentDeps {
  const root = ctx.config.dataDir === ":memory:" ? tmpdir() : ctx.config.dataDir;
  return { automations: ctx.storage.automations, agents: ctx.storage.agents, clock: ctx.clock, mirrorsDir: join(root, "agents") };
}

export interface SyncResult {
  automation: { id: string; type: "agent"; slug: string; status: string; updatedAt: string };
  release: { version: string; tag: string; commit: string };
  warnings: string[];
}

/** The loop's output, as the automation detail's outputSchema shows it. */
const OUTPUT_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: { answer: { type: "string" }, turns: { type: "integer" }, toolCalls: { type: "integer" }, model: { type: "string" } },
  required: ["answer", "turns", "toolCalls", "model"],
};

/** A slug from the repository's last path segment (`…/invoice-agent.git` → `invoice-agent`). */
export function slugFromRepo(repo: string): string {
  const last = basename(repo.replace(/[/\\]+$/, "").replace(/^.*:/, "")).replace(/\.git$/, "");
  return last.toLowerCase().replace(/[^a-z0-9_-]+/g, "-").replace(/^[-_]+|-+$/g, "").slice(0, 100);
}

function releaseRow(tenantId: string, automationId: string, slug: string, r: ReadRelease & { manifest: Manifest }, at: string): VersionRow {
  const { yaml, inputSchema } = agentWorkflow(slug, r.manifest);
  return {
    id: newId("wfh"),
    tenantId,
    automationId,
    version: r.version,
    yaml,
    sourceRef: releaseRef(r),
    message: `release ${r.tag}`,
    name: r.manifest.name,
    description: r.manifest.description,
    triggers: JSON.stringify(r.manifest.triggers),
    inputSchema: JSON.stringify(inputSchema),
    outputSchema: JSON.stringify(OUTPUT_SCHEMA),
    createdAt: at,
  };
}

/** Tools the latest release names that the tenant has no workflow for (yet): a warning, not a refusal. */
async function toolWarnings(automations: AutomationStore, tenantId: string, m: Manifest | undefined): Promise<string[]> {
  if (!m) return [];
  const warnings: string[] = [];
  for (const t of m.tools) {
    if (!(await automations.bySlug(tenantId, "workflow", t.slice("workflows.".length)))) warnings.push(`tool ${t} is not a workflow of this tenant; runs fail until it exists`);
  }
  return warnings;
}

/**
 * The plan making the version rows match the releases (new tags added, re-pointed tags replaced,
 * deleted or now-invalid tags removed) and the agent's current version and metadata match the latest
 * release. Plans no write when nothing changed, so a second sync leaves the same state.
 */
function planReleases(clock: Clock, releases: ReadRelease[], latest: ReadRelease): PlanReleases {
  const at = clock.now().toISOString();
  return (a, rows) => {
    const existing = new Map(rows.map((v) => [v.version!, v]));
    const wanted = new Map(releases.map((r) => [r.version, r]));
    const remove: string[] = [];
    for (const [version, row] of existing) {
      if (wanted.get(version)?.commit !== parseReleaseRef(row.sourceRef).commit) {
        remove.push(row.id);
        existing.delete(version);
      }
    }
    const insert: VersionRow[] = [];
    for (const r of releases) {
      if (existing.has(r.version) || !r.manifest) continue;
      const row = releaseRow(a.tenantId, a.id, a.slug, r as ReadRelease & { manifest: Manifest }, at);
      insert.push(row);
      existing.set(r.version, row);
    }
    const current = existing.get(latest.version)!;
    const changed = a.currentVersionId !== current.id || a.name !== current.name || a.description !== current.description;
    return { remove, insert, current, ...(changed ? { set: { currentVersionId: current.id, name: current.name, description: current.description, updatedAt: at } } : {}) };
  };
}

/** Refreshes of a mirror in flight in this process: git refuses two fetches (or clones) into one repository at once. */
const refreshing = new Map<string, Promise<unknown>>();

/** Runs `fn` after every earlier refresh of `mirror` in this process has settled. */
function oneAtATime<T>(mirror: string, fn: () => Promise<T>): Promise<T> {
  const next = (refreshing.get(mirror) ?? Promise.resolve()).catch(() => {}).then(fn);
  refreshing.set(mirror, next);
  next.finally(() => refreshing.get(mirror) === next && refreshing.delete(mirror)).catch(() => {});
  return next;
}

/** Where the repository's refs are read: the local path itself, or the (refreshed) mirror. */
async function refresh(source: Pick<AgentSource, "repo" | "mirror">, registered = true): Promise<string> {
  if (!source.mirror) {
    // Checked in full at registration; later a vanished path is a 404 and a broken repository fails its tag listing.
    if (!registered) await checkLocalRepo(source.repo);
    else if (!existsSync(source.repo)) throw NotFound(`repository ${source.repo} does not exist any more`, { code: "repo_not_found" });
    return source.repo;
  }
  const mirror = source.mirror;
  await oneAtATime(mirror, () => (existsSync(mirror) ? fetchMirror(mirror) : cloneMirror(source.repo, mirror)));
  return mirror;
}

/**
 * POST /automations/{id}/sync. A target with a version (`agents.x@1.2.0`, a `wfh_` id) → 400; no such
 * automation, no Git source, no release or no manifest → 404; an invalid latest manifest → 400.
 */
export async function syncAgent(deps: AgentDeps, tenantId: string, ref: string): Promise<SyncResult> {
  if (ref.includes("@") || ref.startsWith("wfh_")) {
    throw Invalid("sync always reads the latest Git release; pass the automation without a version", { field: "id", code: "versioned_target" });
  }
  const a = await findAutomation(deps.automations, tenantId, ref);
  const source = await deps.agents.source(tenantId, a.id);
  if (a.type !== "agent" || !source) throw NotFound(`automation "${ref}" has no Git source; only agents sync from Git`, { field: "id", code: "no_source" });
  // A mirror is this instance's cache of the remote, under its own data dir: the path another instance
  // registered it under may be on another machine.
  const dir = await refresh(source.mirror ? { repo: source.repo, mirror: join(deps.mirrorsDir, `${a.id}.git`) } : source);
  const known = new Map((await deps.agents.releases(a.id)).map((v) => [v.version!, parseReleaseRef(v.sourceRef).commit ?? ""]));
  const set = await readReleases(dir, known);
  const { agent: after, current } = await deps.agents.sync(tenantId, a.id, planReleases(deps.clock, set.valid, set.latest), {
    releaseTag: set.latest.tag,
    releaseCommit: set.latest.commit,
    syncedAt: deps.clock.now().toISOString(),
  });
  return {
    automation: { id: after.id, type: "agent", slug: after.slug, status: after.status, updatedAt: after.updatedAt },
    release: { version: current.version!, tag: set.latest.tag, commit: set.latest.commit },
    warnings: [...set.warnings, ...(await toolWarnings(deps.automations, tenantId, set.latest.manifest))],
  };
}

export interface AddResult {
  agent: AutomationDetail;
  /** Null when the repository has no release yet (sync once it has). */
  release: SyncResult["release"] | null;
  warnings: string[];
}

/**
 * `agents add`: registers a repository as an agent of the tenant and reads its releases. An
 * unreachable repository or an invalid latest manifest registers nothing; a repository without
 * releases registers an agent with no version yet.
 */
export async function addAgent(deps: AgentDeps, tenantId: string, opts: { repo: string; slug?: string }): Promise<AddResult> {
  const repo = normalizeRepo(opts.repo);
  const slug = opts.slug ?? slugFromRepo(repo);
  if (!SLUG.test(slug)) {
    throw Invalid(`"${slug}" is not a valid agent slug (lowercase letters, digits, - and _); pass --slug`, { field: "slug", code: "invalid_slug" });
  }
  if (await deps.automations.bySlug(tenantId, "agent", slug)) throw Conflict(`agent "${slug}" already exists`, { field: "slug", code: "already_exists" });
  const same = await deps.agents.sourceByRepo(tenantId, repo);
  if (same) throw Conflict(`${repo} is already registered (${same.automationId})`, { field: "repo", code: "already_exists" });
  const id = newId("agt");
  const mirror = isRemote(repo) ? join(deps.mirrorsDir, `${id}.git`) : null;
  try {
    const dir = await refresh({ repo, mirror }, false);
    let set: Awaited<ReturnType<typeof readReleases>> | undefined;
    const warnings: string[] = [];
    try {
      set = await readReleases(dir, new Map());
    } catch (err) {
      if (!(err instanceof DomainError && err.code === "no_release")) throw err;
      warnings.push(`${err.message}; tag a release with an ${"agent.yaml"} and run sync`);
    }
    const at = deps.clock.now().toISOString();
    const registered = await deps.agents.register(
      { id, tenantId, type: "agent", slug, name: slug, description: null, status: "active", currentVersionId: null, createdAt: at, updatedAt: at },
      { automationId: id, tenantId, repo, mirror, releaseTag: set?.latest.tag ?? null, releaseCommit: set?.latest.commit ?? null, syncedAt: set ? at : null, createdAt: at },
      set && planReleases(deps.clock, set.valid, set.latest),
    );
    if (registered === "slug_taken") throw Conflict(`agent "${slug}" already exists`, { field: "slug", code: "already_exists" });
    if (set) warnings.push(...set.warnings, ...(await toolWarnings(deps.automations, tenantId, set.latest.manifest)));
    return {
      agent: await getAutomation(deps.automations, tenantId, id),
      release: set ? { version: set.latest.version, tag: set.latest.tag, commit: set.latest.commit } : null,
      warnings,
    };
  } catch (err) {
    if (mirror && !(await deps.automations.byId(tenantId, id))) rmSync(mirror, { recursive: true, force: true });
    throw err;
  }
}

/** A workflow of the tenant as an agent's tool sees it; undefined for anything else. */
export async function describeWorkflow(automations: AutomationStore, tenantId: string, target: string): Promise<WorkflowTool | undefined> {
  const m = /^workflows\.([a-z0-9][a-z0-9_-]*)$/.exec(target);
  const a = m ? await automations.bySlug(tenantId, "workflow", m[1]) : undefined;
  const v = a ? await automations.current(a) : undefined;
  if (!a || !v) return undefined;
  return { slug: a.slug, description: v.description ?? a.description, inputSchema: v.inputSchema ? (JSON.parse(v.inputSchema) as Record<string, unknown>) : null };
}
