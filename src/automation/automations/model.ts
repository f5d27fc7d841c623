// Wire shapes of automations and versions, and the valibot schemas of their inputs.
import * as v from "valibot";
import { expandQuery, pageQuery } from "../http/validate";

/** YAML bodies are capped at 1 MiB (bytes of UTF-8). */
export const MAX_YAML_BYTES = 1024 * 1024;

// semver.org's regular expression: bare tags only (`1.2.0`, `2.0.0-rc.1`), no leading `v`.
export const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

export const VersionTag = v.pipe(
  v.string("version must be a string"),
  v.maxLength(100, "version is too long"),
  v.regex(SEMVER, "version must be a bare semver tag such as 1.2.0 (no leading v)"),
);

export const CreateAutomationBody = v.strictObject({ yaml: v.string("yaml must be a string") });

export const CreateVersionBody = v.strictObject({
  yaml: v.optional(v.string("yaml must be a string")),
  historyId: v.optional(v.pipe(v.string("historyId must be a string"), v.maxLength(100))),
  version: v.optional(VersionTag),
  activate: v.optional(v.boolean("activate must be true or false"), true),
  message: v.optional(v.pipe(v.string(), v.maxLength(2000))),
});
export type CreateVersionInput = v.InferOutput<typeof CreateVersionBody>;

/** PATCH /automations/{id} (ours): a disabled automation keeps its versions but its schedules fire nothing. */
export const AUTOMATION_STATUSES = ["active", "disabled"] as const;
export const UpdateAutomationBody = v.strictObject({ status: v.picklist(AUTOMATION_STATUSES, "status must be active or disabled") });

export const RestoreBody = v.strictObject({ message: v.optional(v.pipe(v.string(), v.maxLength(2000))) });

/** `implementationAvailable` is opt-in: the SDKs' public key set for automations does not include it. */
export const AutomationExpand = expandQuery(["implementationAvailable"]);
/** The detail also takes `inboundEmail`: the address and whitelist of an e-mail-triggered automation (ours). */
export const GetAutomationQuery = v.object({ expand: expandQuery(["implementationAvailable", "inboundEmail"]) });

export const ListAutomationsQuery = v.object({
  expand: AutomationExpand,
  search: v.optional(v.pipe(v.string(), v.maxLength(200, "search is at most 200 characters"))),
  type: v.optional(v.picklist(["workflow", "agent"], "type must be workflow or agent")),
  ...pageQuery,
});

/** `expand=message` adds each version's message (ours: the SDKs' version shape has none). */
export const ListVersionsQuery = v.object({ expand: expandQuery(["message"]), ...pageQuery });

/**
 * POST /automations/validate (ours): the YAML checked as a create (no `automation`) or as a new version
 * of `automation` would check it, nothing stored.
 */
export const ValidateBody = v.strictObject({
  yaml: v.string("yaml must be a string"),
  automation: v.optional(v.pipe(v.string("automation must be a string"), v.minLength(1, "automation must not be empty"), v.maxLength(200, "automation is too long"))),
});

export interface ValidationIssue {
  /** `yaml.<dotted path>` into the document, or `yaml` for the whole of it. */
  field: string;
  message: string;
  code: string;
  /** 1-based line of the document the issue sits on, when it sits on one. */
  line?: number;
}

export interface ValidationResult {
  valid: boolean;
  issues: ValidationIssue[];
  /** What the YAML declares, when it is valid. */
  workflow: { name: string; version: string | null; description: string | null; triggers: Triggers; inputSchema: Record<string, unknown> | null } | null;
}

export interface Triggers {
  api: boolean;
  email: boolean;
  manual: boolean;
  cron: boolean;
}

export interface AutomationSummary {
  id: string;
  type: "workflow" | "agent";
  slug: string;
  name: string | null;
  description: string | null;
  status: string;
  version: string | null;
  triggers: Triggers;
  /**
   * With `expand=implementationAvailable` only: the reference's flag for a registry row whose
   * implementation is missing (here, no current version).
   */
  implementationAvailable?: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface AutomationDetail extends AutomationSummary {
  inputSchema: Record<string, unknown> | null;
  outputSchema: Record<string, unknown> | null;
  /**
   * With `expand=inboundEmail` only (not in the reference): where to send mail that starts a run and
   * who may; null when the active version has no e-mail trigger, `address` null without --mail-domain.
   */
  inboundEmail?: { address: string | null; whitelist: { domains: string[]; emails: string[] } } | null;
}

export interface AutomationVersion {
  id: string;
  automationId: string;
  version: string | null;
  sourceRef: string | null;
  isCurrent: boolean;
  createdAt: string;
  /** With `expand=message` on the list, and always on one version's detail (ours). */
  message?: string | null;
}

export interface Page<T> {
  data: T[];
  total: number;
  limit: number;
  offset: number;
}
