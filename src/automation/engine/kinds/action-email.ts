// action.email {server, to, cc?, bcc?, replyTo?, subject, text, attachments?}: one message through a
// tenant's e-mail server. Attachments: `file_...` ids, run file paths, or file refs from earlier steps
// (`{fileId}`, `{path}`, `{$file}`), each with an optional `filename`. Output {serverId, messageId,
// provider, to, cc, bcc, attachmentCount, totalBytes}. A side effect: skipped on evaluation runs, and
// never retried automatically (a second attempt could send a second copy).
import * as v from "valibot";
import { DomainError } from "../../../kernel/errors";
import type { NamedBytes } from "../contract";
import { StepError } from "../errors";
import { defineKind, type StepContext } from "../kind";

const address = v.pipe(v.string(), v.trim(), v.maxLength(254), v.regex(/^[^\s@<>(),;:"\\]+@[^\s@<>(),;:"\\]+\.[^\s@<>(),;:"\\]+$/, "must be an e-mail address"));
const addresses = v.pipe(
  v.union([address, v.array(address)]),
  v.transform((x) => (Array.isArray(x) ? x : [x])),
);
const filename = v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200), v.regex(/^[^/\\\x00-\x1f]+$/, "must be a file name")));
const attachment = v.union([
  v.pipe(v.string(), v.minLength(1)),
  v.object({ fileId: v.pipe(v.string(), v.regex(/^file_[0-9a-z]+$/)), filename }),
  v.object({ path: v.pipe(v.string(), v.minLength(1)), filename }),
  v.object({ $file: v.pipe(v.string(), v.minLength(1)), filename }),
]);

export const schema = v.strictObject({
  server: v.pipe(v.string(), v.minLength(1)),
  to: addresses,
  cc: v.optional(addresses, []),
  bcc: v.optional(addresses, []),
  replyTo: v.optional(address),
  subject: v.pipe(v.string(), v.minLength(1), v.maxLength(998), v.regex(/^[^\r\n]*$/, "must be one line")),
  text: v.string(),
  attachments: v.optional(v.pipe(v.array(attachment), v.maxLength(10, "at most 10 attachments")), []),
});

type Attachment = v.InferOutput<typeof attachment>;

const fail = (err: unknown) => new StepError((err as Error).message, err instanceof DomainError ? (err.code ?? "email_failed") : "email_failed", { retryable: false });

async function load(a: Attachment, ctx: StepContext): Promise<NamedBytes> {
  const email = ctx.services.email!;
  const fileId = typeof a === "string" ? (/^file_[0-9a-z]+$/.test(a) ? a : null) : "fileId" in a ? a.fileId : null;
  if (fileId) {
    const f = await email.attachment(fileId);
    return typeof a === "object" && a.filename ? { ...f, filename: a.filename } : f;
  }
  const path = typeof a === "string" ? a : "path" in a ? a.path : "$file" in a ? a.$file : "";
  const bytes = await ctx.services.readFile({ $file: path, filename: path, contentType: "", size: 0 });
  const name = (typeof a === "object" && a.filename) || path.split("/").pop() || "attachment";
  return { filename: name, contentType: contentTypeOf(name), bytes };
}

const TYPES: Record<string, string> = {
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  pdf: "application/pdf",
  txt: "text/plain",
  csv: "text/csv",
  json: "application/json",
};
const contentTypeOf = (name: string) => TYPES[/\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase() ?? ""] ?? "application/octet-stream";

export default defineKind({
  type: "action.email",
  configAt: "with",
  schema,
  sideEffect: true,
  async run(config, ctx) {
    const email = ctx.services.email;
    if (!email) throw new StepError("e-mail is not available to this run", "email_unavailable", { retryable: false });
    try {
      const attachments: NamedBytes[] = [];
      for (const a of config.attachments) attachments.push(await load(a, ctx));
      return await email.send({ ...config, attachments }, ctx.path);
    } catch (err) {
      if (err instanceof StepError) throw new StepError(err.message, err.code, { retryable: false });
      throw fail(err);
    }
  },
});
