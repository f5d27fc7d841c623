// Automations and their versions: create from YAML, list/get by id or alias, triggers, and the
// version rules (create from yaml or a copy, promote tagged rows, restore as an untagged snapshot).
import type { Clock } from "../../kernel/clock";
import { Conflict, Invalid, NotFound, TooLarge } from "../../kernel/errors";
import { newId } from "../../kernel/ids";
import type { AutomationRow, AutomationStore, VersionRefusal, VersionRow } from "./store";
import type {
  AutomationDetail,
  AutomationSummary,
  AutomationVersion,
  CreateVersionInput,
  Page,
  Triggers,
  ValidationIssue,
  ValidationResult,
} from "./model";
import { MAX_YAML_BYTES, SEMVER } from "./model";
import { inputJsonSchema, parseWorkflow } from "../workflow/index";
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

function versionView(a: AutomationRow, v: VersionRow, withMessage = false): AutomationVersion {
  return {
    id: v.id,
    automationId: a.id,
    version: v.version,
    sourceRef: v.sourceRef,
    isCurrent: a.currentVersionId === v.id,
    createdAt: v.createdAt,
    ...(withMessage ? { message: v.message } : {}),
  };
}

const notFound = (ref: string) => NotFound(`automation "${ref}" not found`, { field: "id" });

/** By id (`wf_...`, `agt_...`) or typed target `workflows.<slug or id>` / `agents.<slug or id>`, within the tenant only. */
export async function findAutomation(store: AutomationStore, tenantId: string, ref: string): Promise<AutomationRow> {
  const row = await store.find(tenantId, ref);
  if (!row) throw notFound(ref);
  return row;
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
export async function createAutomation(store: AutomationStore, clock: Clock, tenantId: string, yaml: string): Promise<AutomationDetail> {
  const source = parseSource(yaml);
  const tag = tagFromSource(source);
  const at = clock.now().toISOString();
  const id = newId("wf");
  const v = versionRow(tenantId, id, source, { yaml, version: tag, sourceRef: null, at });
  const a: AutomationRow = {
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
  };
  if ((await store.create(a, v)) === "slug_taken") {
    throw Conflict(`a workflow named "${source.slug}" already exists; add a version to it instead`, { field: "yaml.name", code: "already_exists" });
  }
  return detailOf(a, v);
}

export async function listAutomations(
  store: AutomationStore,
  tenantId: string,
  q: { search?: string; type?: "workflow" | "agent"; limit: number; offset: number; expand?: AutomationExpand[] },
): Promise<Page<AutomationSummary>> {
  const { rows, total } = await store.list(tenantId, q);
  return { data: rows.map((r) => summary(r.automation, r.current, q.expand)), total, limit: q.limit, offset: q.offset };
}

function detailOf(a: AutomationRow, current: VersionRow | undefined, expand: readonly AutomationExpand[] = []): AutomationDetail {
  return {
    ...summary(a, current, expand),
    inputSchema: current?.inputSchema ? (JSON.parse(current.inputSchema) as Record<string, unknown>) : null,
    outputSchema: current?.outputSchema ? (JSON.parse(current.outputSchema) as Record<string, unknown>) : null,
  };
}

async function detail(store: AutomationStore, a: AutomationRow, expand: readonly AutomationExpand[] = []): Promise<AutomationDetail> {
  return detailOf(a, await store.current(a), expand);
}

export async function getAutomation(store: AutomationStore, tenantId: string, ref: string, expand: readonly AutomationExpand[] = []): Promise<AutomationDetail> {
  return detail(store, await findAutomation(store, tenantId, ref), expand);
}

/** The YAML of the automation's active version; undefined without one. */
export async function currentYaml(store: AutomationStore, tenantId: string, ref: string): Promise<string | undefined> {
  return (await store.current(await findAutomation(store, tenantId, ref)))?.yaml;
}

/**
 * Enables or disables an automation. `updatedAt` moves only on a change: schedules count their ticks
 * from it, so ticks that fell while it was disabled are never caught up.
 */
export async function setStatus(store: AutomationStore, clock: Clock, tenantId: string, ref: string, status: "active" | "disabled"): Promise<AutomationDetail> {
  const a = await findAutomation(store, tenantId, ref);
  const after = await store.setStatus(tenantId, a.id, status, clock.now().toISOString());
  if (!after) throw notFound(ref);
  return detail(store, after);
}

export async function getTriggers(store: AutomationStore, tenantId: string, ref: string) {
  const a = await findAutomation(store, tenantId, ref);
  return { automationId: a.id, type: a.type, triggers: triggersOf(await store.current(a)) };
}

export async function listVersions(
  store: AutomationStore,
  tenantId: string,
  ref: string,
  page: { limit: number; offset: number; expand?: readonly "message"[] },
): Promise<Page<AutomationVersion>> {
  const a = await findAutomation(store, tenantId, ref);
  const current = await store.current(a);
  const untaggedHead = current && current.version === null ? current.id : null;
  const { rows, total } = await store.versions(a.id, untaggedHead, { limit: page.limit, offset: page.offset });
  const withMessage = page.expand?.includes("message") ?? false;
  return { data: rows.map((v) => versionView(a, v, withMessage)), total, limit: page.limit, offset: page.offset };
}

/** One version with its YAML source (our addition: the console shows what each version ran). */
export async function getVersion(store: AutomationStore, tenantId: string, ref: string, versionId: string): Promise<AutomationVersion & { yaml: string }> {
  const a = await findAutomation(store, tenantId, ref);
  const v = await store.version(a.id, versionId);
  if (!v) throw NotFound(`version "${versionId}" not found`, { field: "versionId" });
  return { ...versionView(a, v, true), yaml: v.yaml };
}

function requireWorkflow(a: AutomationRow, what: string): void {
  if (a.type !== "workflow") {
    throw Invalid(`${what} applies to YAML workflows; agents are versioned through their Git release tags`, {
      code: "agent_not_supported",
    });
  }
}

/** The domain error for a version write the store refused. */
function refusal(r: VersionRefusal, ref: string, versionId: string, tag?: string | null): Error {
  switch (r) {
    case "not_found":
      return versionId ? NotFound(`version "${versionId}" not found`, { field: "versionId" }) : notFound(ref);
    case "duplicate_version":
      return Conflict(`version ${tag} already exists`, { field: "version", code: "duplicate_version" });
    case "no_current_version":
      return Invalid("activate: false needs an existing current version to keep serving traffic", { field: "activate", code: "no_current_version" });
    case "untagged":
      return NotFound(`version "${versionId}" is an untagged snapshot; create a tagged copy (historyId) to promote it`, { field: "versionId" });
  }
}

/**
 * POST .../versions: exactly one of `yaml` or `historyId`, a tag (from the body, else the YAML's own
 * `version:`), `activate` (default true). A copy keeps the source row's tag as it was.
 */
export async function createVersion(store: AutomationStore, clock: Clock, tenantId: string, ref: string, input: CreateVersionInput): Promise<AutomationVersion> {
  const a = await findAutomation(store, tenantId, ref);
  requireWorkflow(a, "creating versions");
  if ((input.yaml === undefined) === (input.historyId === undefined)) {
    throw Invalid("send exactly one of yaml or historyId", { field: input.yaml === undefined ? "<root>" : "historyId", code: "invalid_value" });
  }
  let yaml: string;
  let sourceRef: string | null = null;
  if (input.historyId !== undefined) {
    const src = await store.version(a.id, input.historyId);
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
  const row = versionRow(tenantId, a.id, source, { yaml, version: tag, sourceRef, message: input.message, at: clock.now().toISOString() });
  const r = await store.addVersion(tenantId, row, input.activate ?? true);
  if ("refused" in r) throw refusal(r.refused, ref, "", tag);
  return versionView(r.automation, row);
}

/** A tagged version becomes current without a new row. Untagged or unknown → 404. */
export async function promoteVersion(store: AutomationStore, clock: Clock, tenantId: string, ref: string, versionId: string): Promise<AutomationVersion> {
  const a = await findAutomation(store, tenantId, ref);
  requireWorkflow(a, "promoting versions");
  const r = await store.promote(tenantId, a.id, versionId, clock.now().toISOString());
  if ("refused" in r) throw refusal(r.refused, ref, versionId);
  return versionView(r.automation, r.version);
}

/** A new untagged current row copied from the snapshot `versionId`. */
export async function restoreVersion(store: AutomationStore, clock: Clock, tenantId: string, ref: string, versionId: string, message?: string): Promise<AutomationVersion> {
  const a = await findAutomation(store, tenantId, ref);
  requireWorkflow(a, "restoring versions");
  const src = await store.version(a.id, versionId);
  if (!src) throw NotFound(`version "${versionId}" not found`, { field: "versionId" });
  const row: VersionRow = { ...src, id: newId("wfh"), version: null, sourceRef: src.id, message: message ?? null, createdAt: clock.now().toISOString() };
  const r = await store.addVersion(tenantId, row, true);
  if ("refused" in r) throw refusal(r.refused, ref, versionId);
  return versionView(r.automation, row);
}

/** The 1-based line of a top-level key (`name:`, `version:`), for issues about what it says. */
function topLevelLine(yaml: string, key: string): number | undefined {
  const i = yaml.split("\n").findIndex((l) => l.startsWith(`${key}:`) || l.startsWith(`"${key}":`));
  return i === -1 ? undefined : i + 1;
}

/**
 * What creating this workflow (no `ref`) or a version of `ref` would say of the YAML, without storing
 * anything: the parser's issues with their lines, a bad `version:` tag, and the name rules (a new
 * workflow's name is free; a version names its own workflow). Too large is a 413, as on create.
 */
export async function validateWorkflow(store: AutomationStore, tenantId: string, yaml: string, ref?: string): Promise<ValidationResult> {
  if (Buffer.byteLength(yaml, "utf8") > MAX_YAML_BYTES) {
    throw TooLarge(`yaml is larger than ${MAX_YAML_BYTES} bytes (1 MiB)`, { field: "yaml", code: "yaml_too_large" });
  }
  const a = ref === undefined ? undefined : await findAutomation(store, tenantId, ref);
  if (a) requireWorkflow(a, "validating versions");
  const r = parseWorkflow(yaml);
  if (!r.ok) {
    const issues = r.issues.map((i): ValidationIssue => ({ field: i.field === "<root>" ? "yaml" : `yaml.${i.field}`, message: i.message, code: i.code, ...(i.line ? { line: i.line } : {}) }));
    return { valid: false, issues, workflow: null };
  }
  const w = r.workflow;
  const issues: ValidationIssue[] = [];
  const at = (key: string) => {
    const line = topLevelLine(yaml, key);
    return line ? { line } : {};
  };
  if (w.version !== undefined && !SEMVER.test(w.version)) {
    issues.push({ field: "yaml.version", message: `version "${w.version}" is not a bare semver tag such as 1.2.0`, code: "invalid_version", ...at("version") });
  }
  if (a && w.name !== a.slug) {
    issues.push({ field: "yaml.name", message: `the YAML names workflow "${w.name}" but this is "${a.slug}"`, code: "name_mismatch", ...at("name") });
  }
  if (!a && (await store.bySlug(tenantId, "workflow", w.name))) {
    issues.push({ field: "yaml.name", message: `a workflow named "${w.name}" already exists; add a version to it instead`, code: "already_exists", ...at("name") });
  }
  const types = new Set(w.triggerMethods.map((t) => t.type));
  return {
    valid: issues.length === 0,
    issues,
    workflow: {
      name: w.name,
      version: w.version ?? null,
      description: w.description ?? null,
      triggers: { api: types.has("api"), email: types.has("email"), manual: types.has("manual"), cron: types.has("cron") },
      inputSchema: inputJsonSchema(w),
    },
  };
}

/** Whether the tenant has a workflow of that slug. */
export async function hasWorkflow(store: AutomationStore, tenantId: string, slug: string): Promise<boolean> {
  return (await store.bySlug(tenantId, "workflow", slug)) !== undefined;
}

export type PushResult =
  | { created: true; automation: AutomationDetail }
  | { created: false; automation: AutomationRow; version: AutomationVersion };

/**
 * `workflows push`: creates the workflow, or adds a version (tagged `opts.version`, else the YAML's
 * own `version:`) when the tenant already has a workflow of that name.
 */
export async function pushWorkflow(
  store: AutomationStore,
  clock: Clock,
  tenantId: string,
  yaml: string,
  opts: { version?: string; activate?: boolean } = {},
): Promise<PushResult> {
  const slug = parseSource(yaml).slug;
  const existing = await store.bySlug(tenantId, "workflow", slug);
  if (!existing) return { created: true, automation: await createAutomation(store, clock, tenantId, yaml) };
  const version = await createVersion(store, clock, tenantId, existing.id, { yaml, version: opts.version, activate: opts.activate ?? true });
  return { created: false, automation: existing, version };
}
