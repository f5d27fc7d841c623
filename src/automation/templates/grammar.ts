// What both template formats share: discovered tokens, the grammar each format documents, render
// options, and the error a broken template raises (400 naming the tag).
import { Invalid } from "../../kernel/errors";

export type TemplateFormat = "docx" | "xlsx";

export interface Token {
  /** The tag as written (`customer.name`, `items`). */
  name: string;
  /** Where the value comes from in `data`; loop items are `items[].field`. */
  path: string;
  kind: "variable" | "loop";
  /** `string` (inserted into text), `any` (a whole XLSX cell keeps the JSON type), `array` (loop), `boolean` (`{^x}`). */
  type: string;
}

export interface RenderOptions {
  highlightNotFound: boolean;
  notFoundText: string;
}

export const DEFAULT_RENDER: RenderOptions = { highlightNotFound: true, notFoundText: "NOT FOUND" };

export interface Grammar {
  syntax: string;
  tokenDiscovery: string;
  capabilities: string[];
}

export const GRAMMARS: Record<TemplateFormat, Grammar> = {
  docx: {
    syntax: "docxtemplater: {field}, {customer.name}, {#items}…{/items}, {^items}…{/items}",
    tokenDiscovery: "static",
    capabilities: ["variables", "nested-paths", "loops", "conditional-sections", "not-found-highlighting"],
  },
  xlsx: {
    syntax: "{field}, {customer.name}, {table:items.field} (the row repeats per item)",
    tokenDiscovery: "static",
    capabilities: ["variables", "nested-paths", "table-rows", "multi-sheet", "keeps-styles", "keeps-formulas", "not-found-highlighting"],
  },
};

export interface TemplateIssue {
  tag: string | null;
  message: string;
}

/** A template that does not compile; `toDomain` turns it into the 400 the API answers. */
export class TemplateBroken extends Error {
  constructor(readonly issues: TemplateIssue[]) {
    super(issues[0]?.message ?? "invalid template");
    this.name = "TemplateBroken";
  }

  toDomain(field: string) {
    return Invalid(this.message, {
      field,
      code: "invalid_template",
      issues: this.issues.slice(0, 50).map((i) => ({ field, message: i.message, code: "invalid_template" })),
    });
  }
}

/** Reads `a.b.c` from data; undefined when any step is missing. */
export function lookup(data: unknown, path: string): unknown {
  let cur: unknown = data;
  for (const seg of path.split(".")) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}
