// Wire shapes of the audit trail: the list query of GET /v1/audit.
import * as v from "valibot";
import { isoQuery, queryInt } from "../http/validate";

const Text = (name: string) => v.pipe(v.string(`${name} must be a string`), v.minLength(1, `${name} must not be empty`), v.maxLength(200, `${name} is too long`));

export const AuditListQuery = v.object({
  /** An actor's id: a user's `usr_`, a key's `key_` id. */
  actor: v.optional(Text("actor")),
  /** An action such as `runs.create` (docs/automation/people.md, "Audit trail"). */
  action: v.optional(Text("action")),
  /** A resource's id (a path id, or the id a create answered with). */
  resource: v.optional(Text("resource")),
  /** From this time (inclusive). */
  since: v.optional(isoQuery),
  /** Before this time. */
  until: v.optional(isoQuery),
  cursor: v.optional(v.pipe(v.string(), v.maxLength(200))),
  limit: v.optional(queryInt(1, 200), "50"),
});
