// The CPU-heavy half of templates — reading a DOCX/XLSX to check it and list its tokens, and filling it
// with data — as functions of structured-clonable values that a worker thread of offthread/ runs.
// A broken template comes back as its issues (a value), since only plain data crosses threads.
import { inspectDocx, renderDocx } from "./docx";
import { type RenderOptions, TemplateBroken, type TemplateFormat, type TemplateIssue, type Token } from "./grammar";
import { inspectXlsx, renderXlsx } from "./xlsx";

export type Outcome<T> = { ok: true; value: T } | { ok: false; issues: TemplateIssue[] };

async function outcome<T>(work: () => T | Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (err) {
    if (err instanceof TemplateBroken) return { ok: false, issues: err.issues };
    throw err;
  }
}

/** Checks a template file and lists its tokens. */
export function inspectTemplate(job: { format: TemplateFormat; bytes: Uint8Array }): Promise<Outcome<Token[]>> {
  return outcome(() => (job.format === "docx" ? inspectDocx(job.bytes) : inspectXlsx(job.bytes)));
}

/** Fills a template file with `data`. */
export function renderTemplate(job: { format: TemplateFormat; bytes: Uint8Array; data: unknown; opts: RenderOptions }): Promise<Outcome<Uint8Array>> {
  return outcome(() => (job.format === "docx" ? renderDocx(job.bytes, job.data, job.opts) : renderXlsx(job.bytes, job.data, job.opts)));
}
