// DOCX templates through docxtemplater + pizzip: `{field}`, `{customer.name}`, `{#items}…{/items}`
// (also `{^x}` inverted sections). Missing values render as a highlighted `NOT FOUND` (configurable).
import Docxtemplater from "docxtemplater";
import PizZip from "pizzip";
import type { RenderOptions, TemplateIssue, Token } from "./grammar";
import { lookup, TemplateBroken } from "./grammar";

export const DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

// Private-use characters around a missing value: valid XML, never in real data, found after rendering.
const MISSING_START = "\uE000";
const MISSING_END = "\uE001";

interface Part {
  type: string;
  value: string;
  module?: string;
  inverted?: boolean;
  subparsed?: Part[];
}

interface DocxError {
  properties?: { id?: string; xtag?: string; explanation?: string; errors?: DocxError[] };
  message?: string;
}

function zipOf(bytes: Uint8Array): PizZip {
  try {
    const zip = new PizZip(bytes);
    if (!zip.file("word/document.xml")) throw new Error("no word/document.xml");
    return zip;
  } catch {
    throw new TemplateBroken([{ tag: null, message: "the file is not a valid DOCX document (a ZIP with word/document.xml)" }]);
  }
}

/** docxtemplater's compile errors → one issue per broken tag. */
function issuesOf(err: unknown): TemplateIssue[] {
  const e = err as DocxError;
  const list = e.properties?.errors?.length ? e.properties.errors : [e];
  return list.map((x) => {
    const tag = x.properties?.xtag ?? null;
    const why = x.properties?.explanation ?? x.message ?? "invalid template";
    return { tag, message: tag ? `broken tag {${tag}}: ${why}` : why };
  });
}

function compile(zip: PizZip, opts: { nullGetter?: (part: Part) => unknown; modules?: object[] } = {}): Docxtemplater {
  try {
    return new Docxtemplater(zip, {
      paragraphLoop: true,
      linebreaks: true,
      // Errors reach the caller as issues; docxtemplater would also print them to the console.
      errorLogging: false,
      // Dotted tags walk into objects (`{customer.name}`); `{.}` is the current loop item.
      parser: (tag: string) => ({ get: (scope: unknown) => (tag.trim() === "." ? scope : lookup(scope, tag.trim())) }),
      modules: opts.modules,
      nullGetter: opts.nullGetter as never,
    });
  } catch (err) {
    if ((err as DocxError).properties) throw new TemplateBroken(issuesOf(err));
    throw err;
  }
}

/** Walks docxtemplater's structured tags into our token list (loops give `items[].field` paths). */
function collect(parts: Part[], prefix: string, out: Map<string, Token>): void {
  for (const p of parts) {
    if (p.type !== "placeholder") continue;
    const path = prefix ? `${prefix}.${p.value}` : p.value;
    if (p.module === "loop") {
      if (!out.has(path)) out.set(path, { name: p.value, path, kind: "loop", type: p.inverted ? "boolean" : "array" });
      collect(p.subparsed ?? [], p.inverted ? prefix : `${path}[]`, out);
    } else if (!out.has(path)) {
      out.set(path, { name: p.value, path, kind: "variable", type: "string" });
    }
  }
}

/**
 * A docxtemplater module that keeps each templated part's parsed tags (docxtemplater's own
 * InspectModule needs lodash, which a compiled binary should not carry for this).
 */
class TagCollector {
  readonly name = "TagCollector";
  readonly parsed: Part[][] = [];
  set(obj: { inspect?: { postparsed?: Part[] } }): void {
    if (obj.inspect?.postparsed) this.parsed.push(obj.inspect.postparsed);
  }
}

/** Checks the template compiles and lists its tokens. */
export function inspectDocx(bytes: Uint8Array): Token[] {
  const tags = new TagCollector();
  compile(zipOf(bytes), { modules: [tags] });
  const out = new Map<string, Token>();
  for (const parts of tags.parsed) collect(parts, "", out);
  return [...out.values()];
}

/**
 * Splits every run holding a marked missing value into three runs so only the value itself gets a
 * yellow highlight, keeping the run's own formatting (its `<w:rPr>`).
 */
export function highlightMissing(xml: string): string {
  if (!xml.includes(MISSING_START)) return xml;
  return xml.replace(/<w:r(?:\s[^>]*)?>[\s\S]*?<\/w:r>/g, (run) => {
    if (!run.includes(MISSING_START)) return run;
    const open = /^<w:r(?:\s[^>]*)?>/.exec(run)![0];
    const rPr = /<w:rPr>([\s\S]*?)<\/w:rPr>/.exec(run);
    const props = rPr ? rPr[1].replace(/<w:highlight\b[^>]*\/>/g, "") : "";
    const marked = `<w:rPr>${props}<w:highlight w:val="yellow"/></w:rPr>`;
    const plain = rPr ? rPr[0] : "";
    return run.replace(
      new RegExp(`${MISSING_START}([^${MISSING_END}]*)${MISSING_END}`, "g"),
      (_, text: string) => `</w:t></w:r>${open}${marked}<w:t xml:space="preserve">${text}</w:t></w:r>${open}${plain}<w:t xml:space="preserve">`,
    );
  });
}

/** Fills the template with `data`. */
export function renderDocx(bytes: Uint8Array, data: unknown, opts: RenderOptions): Uint8Array {
  const zip = zipOf(bytes);
  // docxtemplater XML-escapes the value itself.
  const missing = opts.highlightNotFound ? `${MISSING_START}${opts.notFoundText}${MISSING_END}` : "";
  const doc = compile(zip, {
    // A missing loop renders no rows; a missing value renders the marker (highlighted below) or nothing.
    nullGetter: (part) => (part.module ? "" : missing),
  });
  try {
    doc.render(data ?? {});
  } catch (err) {
    if ((err as DocxError).properties) throw new TemplateBroken(issuesOf(err));
    throw err;
  }
  const out = doc.getZip();
  if (opts.highlightNotFound) {
    for (const name of Object.keys(out.files)) {
      if (!/^word\/(document|header\d*|footer\d*|footnotes|endnotes)\.xml$/.test(name)) continue;
      const xml = out.file(name)!.asText();
      if (xml.includes(MISSING_START)) out.file(name, highlightMissing(xml));
    }
  }
  return out.generate({ type: "uint8array", compression: "DEFLATE" });
}
