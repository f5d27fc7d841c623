// Resolves a run target (`workflows.<slug or id>`, `agents.<slug or id>` or an automation id) and a version (tag,
// version id, `latest`) to the workflow definition a run captures. Reads the foundation's tables with
// prepared statements (this is on the path of every run start).
import type { Database } from "bun:sqlite";
import { and, eq, or, sql } from "drizzle-orm";
import { Forbidden, NotFound } from "../../kernel/errors";
import { resolveRef } from "../automations/ref";
import { dbOf } from "../db/client";
import { automations, automationVersions } from "../db/schema";

export interface ResolvedSource {
  automationId: string;
  type: "workflow" | "agent";
  name: string | null;
  slug: string;
  versionId: string;
  versionLabel: string | null;
  sourceRef: string | null;
  /** The version the caller asked for, as given; null when none was (the current version ran). */
  requestedRef: string | null;
  yaml: string;
}

function prepare(sqlite: Database) {
  const db = dbOf(sqlite);
  const tenantId = sql.placeholder("tenantId");
  return {
    bySlug: db
      .select()
      .from(automations)
      .where(and(eq(automations.tenantId, tenantId), eq(automations.slug, sql.placeholder("slug")), eq(automations.type, sql.placeholder("type"))))
      .prepare(),
    byId: db.select().from(automations).where(and(eq(automations.tenantId, tenantId), eq(automations.id, sql.placeholder("id")))).prepare(),
    version: db.select().from(automationVersions).where(eq(automationVersions.id, sql.placeholder("id"))).prepare(),
    versionByRef: db
      .select()
      .from(automationVersions)
      .where(
        and(
          eq(automationVersions.automationId, sql.placeholder("automationId")),
          or(eq(automationVersions.version, sql.placeholder("tag")), eq(automationVersions.id, sql.placeholder("ref"))),
        ),
      )
      .prepare(),
  };
}
const statements = new WeakMap<Database, ReturnType<typeof prepare>>();

export function resolveTarget(
  sqlite: Database,
  tenantId: string,
  target: string,
  opts: { version?: string; trigger?: string } = {},
): ResolvedSource {
  let q = statements.get(sqlite);
  if (!q) statements.set(sqlite, (q = prepare(sqlite)));
  const a = resolveRef(
    target,
    (type, slug) => q.bySlug.get({ tenantId, slug, type }),
    (id) => q.byId.get({ tenantId, id }),
  );
  if (!a) throw NotFound(`no automation ${target}`, { field: "target" });
  const version = opts.version;
  const v =
    !version || version === "latest"
      ? a.currentVersionId
        ? q.version.get({ id: a.currentVersionId })
        : undefined
      : q.versionByRef.get({ automationId: a.id, tag: version.replace(/^v/, ""), ref: version });
  if (!v) throw NotFound(version && version !== "latest" ? `${target} has no version ${version}` : `${target} has no current version`, { field: "version" });
  const triggers = JSON.parse(v.triggers || "{}") as Record<string, unknown>;
  const trigger = opts.trigger ?? "api";
  if ((trigger === "api" || trigger === "cli") && triggers.api === false) {
    throw Forbidden(`${target} does not accept API runs`, { code: "api_trigger_disabled" });
  }
  if (trigger === "manual" && triggers.manual === false) {
    throw Forbidden(`${target} does not accept manual runs`, { code: "manual_trigger_disabled" });
  }
  if (trigger === "email" && triggers.email !== true) {
    throw Forbidden(`${target} does not accept e-mail runs`, { code: "email_trigger_disabled" });
  }
  if (trigger === "email" && a.status !== "active") throw Forbidden(`${target} is disabled`, { code: "automation_disabled" });
  return {
    automationId: a.id,
    type: a.type,
    name: v.name ?? a.name,
    slug: a.slug,
    versionId: v.id,
    versionLabel: v.version,
    sourceRef: v.sourceRef,
    requestedRef: version ?? null,
    yaml: v.yaml,
  };
}
