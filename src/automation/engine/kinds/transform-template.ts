// transform.template {templateId | templateRevisionId, data, outputFilename?, highlightNotFound?,
// notFoundText?}: fills a stored DOCX/XLSX template. The document becomes a run artifact and a
// reusable file; output {fileId, filename, size, contentType, templateId, templateRevisionId, file}.
import * as v from "valibot";
import { DomainError } from "../../../kernel/errors";
import { StepError } from "../errors";
import { defineKind } from "../kind";

const id = (prefix: string) => v.pipe(v.string(), v.regex(new RegExp(`^${prefix}_[0-9a-z]+$`), `must be a ${prefix}_ id`));

export const schema = v.pipe(
  v.strictObject({
    templateId: v.optional(id("tmpl")),
    templateRevisionId: v.optional(id("tmpr")),
    data: v.optional(v.unknown(), {}),
    outputFilename: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200), v.regex(/^[^/\\\x00-\x1f]+$/, "must be a file name without directories"))),
    highlightNotFound: v.optional(v.boolean(), true),
    notFoundText: v.optional(v.pipe(v.string(), v.maxLength(200)), "NOT FOUND"),
  }),
  v.check((c) => c.templateId !== undefined || c.templateRevisionId !== undefined, "give templateId or templateRevisionId"),
);

/** The output keeps the template's extension: `invoice` → `invoice.docx`. */
function outputName(wanted: string | undefined, template: string): string {
  const ext = /\.(docx|xlsx)$/i.exec(template)?.[0].toLowerCase() ?? "";
  if (!wanted) return template;
  return wanted.toLowerCase().endsWith(ext) ? wanted : `${wanted}${ext}`;
}

export default defineKind({
  type: "transform.template",
  configAt: "with",
  schema,
  async run(config, ctx) {
    const templates = ctx.services.templates;
    if (!templates) throw new StepError("templates are not available to this run", "templates_unavailable", { retryable: false });
    let rendered: Awaited<ReturnType<typeof templates.render>>;
    try {
      rendered = await templates.render(config, config.data, { highlightNotFound: config.highlightNotFound, notFoundText: config.notFoundText });
    } catch (err) {
      // A missing template or a tag the data cannot fill stays broken on a retry.
      if (err instanceof DomainError) throw new StepError(err.message, err.code ?? "template_error", { retryable: false });
      throw err;
    }
    const filename = outputName(config.outputFilename, rendered.filename);
    const file = await ctx.services.writeFile({ name: filename, contentType: rendered.contentType, bytes: rendered.bytes, stepName: ctx.step.name, role: "output" });
    const { fileId } = await templates.keep({ filename, contentType: rendered.contentType, bytes: rendered.bytes });
    return {
      fileId,
      filename,
      size: rendered.bytes.byteLength,
      contentType: rendered.contentType,
      templateId: rendered.templateId,
      templateRevisionId: rendered.revisionId,
      file,
    };
  },
});
