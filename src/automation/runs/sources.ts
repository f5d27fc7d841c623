// Resolves a run target (`workflows.<slug or id>`, `agents.<slug or id>` or an automation id) and a version (tag,
// version id, `latest`) to the workflow definition a run captures, through the automations store (on
// the path of every run start: one indexed lookup for the current version, two for another one).
import { Forbidden, NotFound } from "../../kernel/errors";
import type { AutomationStore } from "../automations/store";
import type { SourceCheck } from "./store";

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
  /** Read from memory (`mayRemember`): what the run insert must find still true (RunInsertOptions.source). */
  check?: SourceCheck;
}

export async function resolveTarget(
  automations: AutomationStore,
  tenantId: string,
  target: string,
  opts: { version?: string; trigger?: string; mayRemember?: boolean } = {},
): Promise<ResolvedSource> {
  const version = opts.version;
  const latest = !version || version === "latest";
  const found = latest ? await automations.findWithCurrent(tenantId, target, { mayRemember: opts.mayRemember }) : undefined;
  const a = found?.automation ?? (latest ? undefined : await automations.find(tenantId, target));
  if (!a) throw NotFound(`no automation ${target}`, { field: "target" });
  const v = latest ? found?.current : await automations.versionByRef(a.id, version);
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
    ...(found?.remembered ? { check: { automationId: a.id, versionId: v.id, updatedAt: a.updatedAt } } : {}),
  };
}
