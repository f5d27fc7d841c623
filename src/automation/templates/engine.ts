// What `transform.template` sees of templates: render a tenant's template, keep the result as a file.
import type { TemplateRenderer } from "../engine/contract";
import { createFile } from "../files/service";
import { TemplateBroken } from "./grammar";
import { renderRevision, resolveRevision, type TemplatesContext } from "./service";

export function templateRenderer(ctx: TemplatesContext, tenantId: string): TemplateRenderer {
  return {
    async render(ref, data, opts) {
      const revision = await resolveRevision(ctx, tenantId, ref);
      try {
        return await renderRevision(ctx, revision, data, opts);
      } catch (err) {
        if (err instanceof TemplateBroken) throw err.toDomain("with.data");
        throw err;
      }
    },
    async keep(file) {
      const view = await createFile(ctx, tenantId, { filename: file.filename, contentType: file.contentType }, file.bytes);
      return { fileId: view.id };
    },
  };
}
