// Automations (workflows and agents), their versions and triggers.
import { enc } from "./files";
import type { Transport } from "./transport";
import type { Automation, AutomationSummary, AutomationVersion, Page, SchedulesResponse, Triggers, ValidationResult } from "./types";

export interface ListAutomationsQuery {
  search?: string;
  type?: "workflow" | "agent";
  limit?: number;
  offset?: number;
}

export class VersionsResource {
  constructor(private readonly http: Transport) {}

  /** `withMessage` asks for each version's message too (this server's `expand=message`). */
  list(automation: string, query: { limit?: number; offset?: number; withMessage?: boolean } = {}): Promise<Page<AutomationVersion>> {
    const { withMessage, ...page } = query;
    return this.http.json({ method: "GET", path: `/v1/automations/${enc(automation)}/versions`, query: { ...page, ...(withMessage ? { expand: "message" } : {}) } });
  }

  /** One version with its message and YAML (this server's addition). */
  get(automation: string, versionId: string): Promise<AutomationVersion & { yaml: string }> {
    return this.http.json({ method: "GET", path: `/v1/automations/${enc(automation)}/versions/${enc(versionId)}` });
  }

  /** One version's YAML source (this server's addition). */
  async yaml(automation: string, versionId: string): Promise<string> {
    return (await this.http.json<AutomationVersion & { yaml: string }>({ method: "GET", path: `/v1/automations/${enc(automation)}/versions/${enc(versionId)}` })).yaml;
  }

  /** Exactly one of `yaml` or `historyId`; `version` is a bare semver tag; `activate` defaults to true. */
  create(automation: string, body: { yaml?: string; historyId?: string; version?: string; activate?: boolean; message?: string }): Promise<AutomationVersion> {
    return this.http.json({ method: "POST", path: `/v1/automations/${enc(automation)}/versions`, json: body });
  }

  promote(automation: string, versionId: string): Promise<AutomationVersion> {
    return this.http.json({ method: "POST", path: `/v1/automations/${enc(automation)}/versions/${enc(versionId)}/promote`, json: {} });
  }

  restore(automation: string, versionId: string, body: { message?: string } = {}): Promise<AutomationVersion> {
    return this.http.json({ method: "POST", path: `/v1/automations/${enc(automation)}/versions/${enc(versionId)}/restore`, json: body });
  }
}

export class AutomationsResource {
  readonly versions: VersionsResource;
  constructor(private readonly http: Transport) {
    this.versions = new VersionsResource(http);
  }

  /** Creates a workflow from its YAML (this server's own call; hosted SDKs have none). */
  create(yaml: string): Promise<Automation> {
    return this.http.json({ method: "POST", path: "/v1/automations", json: { yaml } });
  }

  /**
   * Checks workflow YAML as creating it (no `automation`) or as a new version of `automation` would,
   * storing nothing: `{ valid, issues (with their lines), workflow }` (this server's addition).
   */
  validate(yaml: string, automation?: string, opts: { signal?: AbortSignal } = {}): Promise<ValidationResult> {
    return this.http.json({ method: "POST", path: "/v1/automations/validate", json: automation === undefined ? { yaml } : { yaml, automation }, signal: opts.signal });
  }

  /** The step kinds workflow YAML may use and their config keys (this server's addition). */
  stepKinds(): Promise<{ data: { type: string; configAt: "with" | "step"; keys: { name: string; required: boolean }[] }[] }> {
    return this.http.json({ method: "GET", path: "/v1/step-kinds" });
  }

  list(query: ListAutomationsQuery = {}): Promise<Page<AutomationSummary>> {
    return this.http.json({ method: "GET", path: "/v1/automations", query: { ...query } });
  }

  /** By id (`wf_...`) or alias (`workflows.<slug>`, `agents.<slug>`). */
  get(idOrAlias: string): Promise<Automation> {
    return this.http.json({ method: "GET", path: `/v1/automations/${enc(idOrAlias)}` });
  }

  triggers(idOrAlias: string): Promise<{ automationId: string; type: string; triggers: Triggers }> {
    return this.http.json({ method: "GET", path: `/v1/automations/${enc(idOrAlias)}/triggers` });
  }

  /** The current version's cron schedules, next fire times and last ticks (this server's addition). */
  schedules(idOrAlias: string): Promise<SchedulesResponse> {
    return this.http.json({ method: "GET", path: `/v1/automations/${enc(idOrAlias)}/schedules` });
  }

  /** Enables or disables an automation; a disabled one's schedules fire nothing (this server's addition). */
  setStatus(idOrAlias: string, status: "active" | "disabled"): Promise<Automation> {
    return this.http.json({ method: "PATCH", path: `/v1/automations/${enc(idOrAlias)}`, json: { status } });
  }
}
