// The `{type: email, whitelist: {domains, emails}}` trigger: its schema, who it lets in, and the rules
// a workflow declaring one must follow so that every message it accepts can become a run.
import * as v from "valibot";
import type { Workflow, WorkflowInput } from "../engine/workflow-types";

const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$/;
const LOCAL = /^[a-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}$/;

const lower = v.pipe(v.string("must be a string"), v.trim(), v.toLowerCase());
const domain = v.pipe(lower, v.regex(DOMAIN, "must be a domain such as example.com"));
const address = v.pipe(
  lower,
  v.check((s) => {
    const at = s.lastIndexOf("@");
    return at > 0 && LOCAL.test(s.slice(0, at)) && DOMAIN.test(s.slice(at + 1));
  }, "must be an e-mail address such as ap@example.com"),
);

export const emailTriggerSchema = v.strictObject({
  type: v.literal("email"),
  whitelist: v.pipe(
    v.strictObject(
      {
        domains: v.optional(v.array(domain, "must be a list of domains"), []),
        emails: v.optional(v.array(address, "must be a list of e-mail addresses"), []),
      },
      "must be {domains: [...], emails: [...]}",
    ),
    v.check((w) => w.domains.length + w.emails.length > 0, "must name at least one domain or e-mail address"),
  ),
});

export type EmailTrigger = v.InferOutput<typeof emailTriggerSchema>;

/** The input that receives the message (from, to, subject, text, html, headers). */
export const EMAIL_INPUT = "email";

/**
 * The workflow's e-mail trigger, normalised (lowercase, trimmed); undefined when it declares none or
 * its entry is malformed (a stored version the parser did not check: it then receives nothing).
 */
export function emailTriggerOf(w: Workflow): EmailTrigger | undefined {
  const entry = w.triggerMethods.find((t) => t.type === "email");
  if (!entry) return undefined;
  const r = v.safeParse(emailTriggerSchema, entry);
  return r.success ? r.output : undefined;
}

/** Whether `sender` is on the whitelist: the exact address, or exactly its domain (no subdomains). */
export function whitelisted(trigger: EmailTrigger, sender: string): boolean {
  const s = sender.trim().toLowerCase();
  const at = s.lastIndexOf("@");
  if (at <= 0) return false;
  return trigger.whitelist.emails.includes(s) || trigger.whitelist.domains.includes(s.slice(at + 1));
}

interface Issues {
  readonly internal: boolean;
  add(field: string, message: string, code: string): void;
  valibot(prefix: string, issues: v.BaseIssue<unknown>[]): void;
}

/**
 * Checks the e-mail trigger entries of `triggerMethods` at version create: the entry's shape, one per
 * workflow (one address), an `email` object input to receive the message, and no required input an
 * e-mail cannot fill (file inputs are filled from attachments; a message lacking one is refused).
 */
export function checkEmailTriggers(raw: unknown, inputs: WorkflowInput[], out: Issues): void {
  if (out.internal || !Array.isArray(raw)) return;
  let first: number | undefined;
  raw.forEach((item, i) => {
    if ((item as { type?: unknown } | null)?.type !== "email") return;
    const field = `triggerMethods.${i}`;
    if (first !== undefined) return out.add(field, `a workflow has one e-mail trigger (one address); merge this whitelist into triggerMethods.${first}`, "duplicate_trigger");
    first = i;
    const r = v.safeParse(emailTriggerSchema, item);
    if (!r.success) out.valibot(field, r.issues);
    const email = inputs.find((d) => d.name === EMAIL_INPUT);
    if (email?.type !== "object") {
      out.add(field, `an e-mail trigger passes the message as input.${EMAIL_INPUT}: declare the input {name: ${EMAIL_INPUT}, type: object}`, "email_input_missing");
    }
    inputs.forEach((d, j) => {
      if (d.name === EMAIL_INPUT || d.type === "file" || !d.required || d.default !== undefined) return;
      out.add(`inputs.${j}`, `required input "${d.name}" cannot come from an e-mail (${field}): give it a default or make it optional`, "required");
    });
  });
}
