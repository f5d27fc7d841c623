// Resolves a run target (`workflows.<slug>`, `agents.<slug>` or an automation id) and a version (tag,
// version id, `latest`) to the workflow definition a run captures. Reads the foundation's tables.
import { and, eq, or } from "drizzle-orm";
import { Forbidden, Invalid, NotFound } from "../../kernel/errors";
import { dbOf } from "../db/client";
import { automations, automationVersions } from "../db/schema";
import type { Database } from "bun:sqlite";

export interface ResolvedSource {
  automationId: string;
  type: "workflow" | "agent";
  name: string | null;
  slug: string;
  versionId: string;
  versionLabel: string | null;
  sourceRef: string | null;
  yaml: string;
}

export function resolveTarget(
  sqlite: Database,
  tenantId: string,
  target: string,
  opts: { version?: string; trigger?: string } = {},
): ResolvedSource {
  const db = dbOf(sqlite);
  const m = /^(workflows|agents)\.([a-z0-9][a-z0-9_-]*)$/.exec(target);
  const a = db
    .select()
    .from(automations)
    .where(
      and(
        eq(automations.tenantId, tenantId),
        m ? and(eq(automations.slug, m[2]), eq(automations.type, m[1] === "agents" ? "agent" : "workflow")) : eq(automations.id, target),
      ),
    )
    .get();
  if (!a) throw NotFound(`no automation ${target}`, { field: "target" });
  if (a.type === "agent") throw Invalid("agent runs are not available on this server yet", { field: "target", code: "unsupported_target" });
  const version = opts.version;
  const v =
    !version || version === "latest"
      ? a.currentVersionId
        ? db.select().from(automationVersions).where(eq(automationVersions.id, a.currentVersionId)).get()
        : undefined
      : db
          .select()
          .from(automationVersions)
          .where(
            and(
              eq(automationVersions.automationId, a.id),
              or(eq(automationVersions.version, version.replace(/^v/, "")), eq(automationVersions.id, version)),
            ),
          )
          .get();
  if (!v) throw NotFound(version && version !== "latest" ? `${target} has no version ${version}` : `${target} has no current version`, { field: "version" });
  const triggers = JSON.parse(v.triggers || "{}") as Record<string, unknown>;
  const trigger = opts.trigger ?? "api";
  if ((trigger === "api" || trigger === "cli") && triggers.api === false) {
    throw Forbidden(`${target} does not accept API runs`, { code: "api_trigger_disabled" });
  }
  return {
    automationId: a.id,
    type: a.type,
    name: v.name ?? a.name,
    slug: a.slug,
    versionId: v.id,
    versionLabel: v.version,
    sourceRef: v.sourceRef,
    yaml: v.yaml,
  };
}
