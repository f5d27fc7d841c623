// Automations and their versions: create from YAML, list/get by id or alias, triggers, and the
// version rules (create from yaml or a copy, promote tagged rows, restore as an untagged snapshot).
import type { Database } from "bun:sqlite";
import type { Clock } from "../../kernel/clock";
import { Conflict, Invalid, NotFound } from "../../kernel/errors";
import { newId } from "../../kernel/ids";
import { dbOf } from "../db/client";
import type { AutomationRow, VersionRow } from "../db/schema";
import type {
  AutomationDetail,
  AutomationSummary,
  AutomationVersion,
  CreateVersionInput,
  Page,
  Triggers,
} from "./model";
import { SEMVER } from "./model";
import { resolveRef } from "./ref";
import { automationStore, versionStore } from "./store";
import { parseSource, type ParsedSource } from "./workflow-source";

const NO_TRIGGERS: Triggers = { api: false, email: false, manual: false, cron: false };

function triggersOf(v: VersionRow | undefined): Triggers {
  return v ? { ...NO_TRIGGERS, ...(JSON.parse(v.triggers) as Partial<Triggers>) } : { ...NO_TRIGGERS };
}

export type AutomationExpand = "implementationAvailable";

function summary(a: AutomationRow, current: VersionRow | undefined, expand: readonly AutomationExpand[] = []): AutomationSummary {
  return {
    id: a.id,
    type: a.type,
    slug: a.slug,
    name: a.name,
    description: a.description,
    status: a.status,
    version: current?.version ?? null,
    triggers: triggersOf(current),
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
    ...(expand.includes("implementationAvailable") ? { implementationAvailable: current !== undefined } : {}),
  };
}

function versionView(a: AutomationRow, v: VersionRow): AutomationVersion {
  return {
    id: v.id,
    automationId: a.id,
    version: v.version,
    sourceRef: v.sourceRef,
    isCurrent: a.currentVersionId === v.id,
    createdAt: v.createdAt,
  };
}

const notFound = (ref: string) => NotFound(`automation "${ref}" not found`, { field: "id" });

/** By id (`wf_...`, `agt_...`) or typed target `workflows.<slug or id>` / `agents.<slug or id>`, within the tenant only. */
export function findAutomation(sqlite: Database, tenantId: string, ref: string): AutomationRow {
  const db = dbOf(sqlite);
  const row = resolveRef(
    ref,
    (type, slug) => automationStore.bySlug(db, tenantId, type, slug),
    (id) => automationStore.byId(db, tenantId, id),
  );
  if (!row) throw notFound(ref);
  return row;
}

function currentOf(sqlite: Database, a: AutomationRow): VersionRow | undefined {
  return a.currentVersionId ? versionStore.byId(dbOf(sqlite), a.id, a.currentVersionId) : undefined;
}

function versionRow(
  tenantId: string,
  automationId: string,
  source: ParsedSource,
  fields: { yaml: string; version: string | null; sourceRef: string | null; message?: string | null; at: string },
): VersionRow {
  return {
    id: newId("wfh"),
    tenantId,
    automationId,
    version: fields.version,
    yaml: fields.yaml,
    sourceRef: fields.sourceRef,
    message: fields.message ?? null,
    name: source.name,
    description: source.description,
    triggers: JSON.stringify(source.triggers),
    inputSchema: source.inputSchema ? JSON.stringify(source.inputSchema) : null,
    outputSchema: source.outputSchema ? JSON.stringify(source.outputSchema) : null,
    createdAt: fields.at,
  };
}

/** The YAML's own `version:` becomes the first tag when it is bare semver. */
function tagFromSource(source: ParsedSource): string | null {
  if (source.version === undefined) return null;
  if (!SEMVER.test(source.version)) {
    throw Invalid(`version "${source.version}" is not a bare semver tag such as 1.2.0`, { field: "yaml.version", code: "invalid_version" });
  }
  return source.version;
}

/** POST /automations: a new workflow whose first (current) version is this YAML. */
export function createAutomation(sqlite: Database, clock: Clock, tenantId: string, yaml: string): AutomationDetail {
  const source = parseSource(yaml);
  const tag = tagFromSource(source);
  const db = dbOf(sqlite);
  return sqlite.transaction(() => {
    if (automationStore.bySlug(db, tenantId, "workflow", source.slug)) {
      throw Conflict(`a workflow named "${source.slug}" already exists; add a version to it instead`, {
        field: "yaml.name",
        code: "already_exists",
      });
    }
    const at = clock.now().toISOString();
    const id = newId("wf");
    const v = versionRow(tenantId, id, source, { yaml, version: tag, sourceRef: null, at });
    automationStore.insert(db, {
      id,
      tenantId,
      type: "workflow",
      slug: source.slug,
      name: source.name,
      description: source.description,
      status: "active",
      currentVersionId: v.id,
      createdAt: at,
      updatedAt: at,
    });
    versionStore.insert(db, v);
    return detail(sqlite, automationStore.byId(db, tenantId, id)!);
  }).immediate();
}

export function listAutomations(
  sqlite: Database,
  tenantId: string,
  q: { search?: string; type?: "workflow" | "agent"; limit: number; offset: number; expand?: AutomationExpand[] },
): Page<AutomationSummary> {
  const { rows, total } = automationStore.list(dbOf(sqlite), tenantId, q);
  return { data: rows.map((r) => summary(r.automation, r.current, q.expand)), total, limit: q.limit, offset: q.offset };
}

function detail(sqlite: Database, a: AutomationRow, expand: readonly AutomationExpand[] = []): AutomationDetail {
  const current = currentOf(sqlite, a);
  return {
    ...summary(a, current, expand),
    inputSchema: current?.inputSchema ? (JSON.parse(current.inputSchema) as Record<string, unknown>) : null,
    outputSchema: current?.outputSchema ? (JSON.parse(current.outputSchema) as Record<string, unknown>) : null,
  };
}

export function getAutomation(sqlite: Database, tenantId: string, ref: string, expand: readonly AutomationExpand[] = []): AutomationDetail {
  return detail(sqlite, findAutomation(sqlite, tenantId, ref), expand);
}

/** The YAML of the automation's active version; undefined without one. */
export function currentYaml(sqlite: Database, tenantId: string, ref: string): string | undefined {
  return currentOf(sqlite, findAutomation(sqlite, tenantId, ref))?.yaml;
}

/**
 * Enables or disables an automation. `updatedAt` moves only on a change: schedules count their ticks
 * from it, so ticks that fell while it was disabled are never caught up.
 */
export function setStatus(sqlite: Database, clock: Clock, tenantId: string, ref: string, status: "active" | "disabled"): AutomationDetail {
  const db = dbOf(sqlite);
  return sqlite.transaction(() => {
    const a = findAutomation(sqlite, tenantId, ref);
    if (a.status !== status) automationStore.setStatus(db, a.id, status, clock.now().toISOString());
    return detail(sqlite, automationStore.byId(db, tenantId, a.id)!);
  }).immediate();
}

export function getTriggers(sqlite: Database, tenantId: string, ref: string) {
  const a = findAutomation(sqlite, tenantId, ref);
  return { automationId: a.id, type: a.type, triggers: triggersOf(currentOf(sqlite, a)) };
}

export function listVersions(
  sqlite: Database,
  tenantId: string,
  ref: string,
  page: { limit: number; offset: number },
): Page<AutomationVersion> {
  const a = findAutomation(sqlite, tenantId, ref);
  const current = currentOf(sqlite, a);
  const untaggedHead = current && current.version === null ? current.id : null;
  const { rows, total } = versionStore.list(dbOf(sqlite), a.id, untaggedHead, page);
  return { data: rows.map((v) => versionView(a, v)), total, limit: page.limit, offset: page.offset };
}

/** One version with its YAML source (our addition: the console shows what each version ran). */
export function getVersion(sqlite: Database, tenantId: string, ref: string, versionId: string): AutomationVersion & { yaml: string } {
  const a = findAutomation(sqlite, tenantId, ref);
  const v = versionStore.byId(dbOf(sqlite), a.id, versionId);
  if (!v) throw NotFound(`version "${versionId}" not found`, { field: "versionId" });
  return { ...versionView(a, v), yaml: v.yaml };
}

function requireWorkflow(a: AutomationRow, what: string): void {
  if (a.type !== "workflow") {
    throw Invalid(`${what} applies to YAML workflows; agents are versioned through their Git release tags`, {
      code: "agent_not_supported",
    });
  }
}

/**
 * POST .../versions: exactly one of `yaml` or `historyId`, a tag (from the body, else the YAML's own
 * `version:`), `activate` (default true). A copy keeps the source row's tag as it was.
 */
export function createVersion(
  sqlite: Database,
  clock: Clock,
  tenantId: string,
  ref: string,
  input: CreateVersionInput,
): AutomationVersion {
  const a = findAutomation(sqlite, tenantId, ref);
  requireWorkflow(a, "creating versions");
  if ((input.yaml === undefined) === (input.historyId === undefined)) {
    throw Invalid("send exactly one of yaml or historyId", { field: input.yaml === undefined ? "<root>" : "historyId", code: "invalid_value" });
  }
  const db = dbOf(sqlite);
  let yaml: string;
  let sourceRef: string | null = null;
  if (input.historyId !== undefined) {
    const src = versionStore.byId(db, a.id, input.historyId);
    if (!src) throw NotFound(`version "${input.historyId}" not found`, { field: "historyId" });
    yaml = src.yaml;
    sourceRef = src.id;
  } else {
    yaml = input.yaml!;
  }
  const source = parseSource(yaml);
  if (source.slug !== a.slug) {
    throw Invalid(`the YAML names workflow "${source.slug}" but this is "${a.slug}"`, { field: "yaml.name", code: "name_mismatch" });
  }
  const tag = input.version ?? (input.historyId === undefined ? tagFromSource(source) : null);
  if (!tag) {
    throw Invalid("version is required (a bare semver tag such as 1.2.0)", { field: "version", code: "required" });
  }
  return sqlite.transaction(() => {
    const fresh = automationStore.byId(db, tenantId, a.id)!;
    if (!input.activate && !fresh.currentVersionId) {
      throw Invalid("activate: false needs an existing current version to keep serving traffic", { field: "activate", code: "no_current_version" });
    }
    if (versionStore.byTag(db, a.id, tag)) throw Conflict(`version ${tag} already exists`, { field: "version", code: "duplicate_version" });
    const at = clock.now().toISOString();
    const row = versionRow(tenantId, a.id, source, { yaml, version: tag, sourceRef, message: input.message, at });
    versionStore.insert(db, row);
    if (input.activate) automationStore.setCurrent(db, a.id, row.id, { name: source.name, description: source.description, updatedAt: at });
    return versionView(automationStore.byId(db, tenantId, a.id)!, row);
  }).immediate();
}

/** A tagged version becomes current without a new row. Untagged or unknown → 404. */
export function promoteVersion(sqlite: Database, clock: Clock, tenantId: string, ref: string, versionId: string): AutomationVersion {
  const a = findAutomation(sqlite, tenantId, ref);
  requireWorkflow(a, "promoting versions");
  const db = dbOf(sqlite);
  return sqlite.transaction(() => {
    const v = versionStore.byId(db, a.id, versionId);
    if (!v || v.version === null) {
      throw NotFound(
        v ? `version "${versionId}" is an untagged snapshot; create a tagged copy (historyId) to promote it` : `version "${versionId}" not found`,
        { field: "versionId" },
      );
    }
    if (a.currentVersionId !== v.id) {
      automationStore.setCurrent(db, a.id, v.id, { name: v.name, description: v.description, updatedAt: clock.now().toISOString() });
    }
    return versionView(automationStore.byId(db, tenantId, a.id)!, v);
  }).immediate();
}

/** A new untagged current row copied from the snapshot `versionId`. */
export function restoreVersion(
  sqlite: Database,
  clock: Clock,
  tenantId: string,
  ref: string,
  versionId: string,
  message?: string,
): AutomationVersion {
  const a = findAutomation(sqlite, tenantId, ref);
  requireWorkflow(a, "restoring versions");
  const db = dbOf(sqlite);
  return sqlite.transaction(() => {
    const src = versionStore.byId(db, a.id, versionId);
    if (!src) throw NotFound(`version "${versionId}" not found`, { field: "versionId" });
    const at = clock.now().toISOString();
    const row: VersionRow = { ...src, id: newId("wfh"), version: null, sourceRef: src.id, message: message ?? null, createdAt: at };
    versionStore.insert(db, row);
    automationStore.setCurrent(db, a.id, row.id, { name: row.name, description: row.description, updatedAt: at });
    return versionView(automationStore.byId(db, tenantId, a.id)!, row);
  }).immediate();
}

/** Whether the tenant has a workflow of that slug. */
export function hasWorkflow(sqlite: Database, tenantId: string, slug: string): boolean {
  return automationStore.bySlug(dbOf(sqlite), tenantId, "workflow", slug) !== undefined;
}

export type PushResult =
  | { created: true; automation: AutomationDetail }
  | { created: false; automation: AutomationRow; version: AutomationVersion };

/**
 * `workflows push`: creates the workflow, or adds a version (tagged `opts.version`, else the YAML's
 * own `version:`) when the tenant already has a workflow of that name.
 */
export function pushWorkflow(
  sqlite: Database,
  clock: Clock,
  tenantId: string,
  yaml: string,
  opts: { version?: string; activate?: boolean } = {},
): PushResult {
  const slug = parseSource(yaml).slug;
  const existing = automationStore.bySlug(dbOf(sqlite), tenantId, "workflow", slug);
  if (!existing) return { created: true, automation: createAutomation(sqlite, clock, tenantId, yaml) };
  const version = createVersion(sqlite, clock, tenantId, existing.id, { yaml, version: opts.version, activate: opts.activate ?? true });
  return { created: false, automation: existing, version };
}
