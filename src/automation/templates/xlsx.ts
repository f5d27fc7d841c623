// XLSX templates through exceljs, which keeps the workbook's styles and formulas: `{field}` and
// `{customer.name}` in any cell of any sheet, `{table:items.field}` makes its row repeat per item
// (styles copied, formulas below shifted and sums over the row stretched to cover the new rows).
import ExcelJS from "exceljs";
import type { RenderOptions, TemplateIssue, Token } from "./grammar";
import { lookup, TemplateBroken } from "./grammar";

export const XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

const PATH = /^[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)*$/;
const TAG = /\{([^{}]*)\}/g;

interface Tag {
  raw: string;
  /** `table:items.field` → table "items", path "field"; `{customer.name}` → path "customer.name". */
  table: string | null;
  path: string;
}

/** Parses the tags of one cell's text, reporting unclosed braces and malformed names. */
function tagsOf(text: string, where: string, issues: TemplateIssue[]): Tag[] {
  const out: Tag[] = [];
  const open = text.lastIndexOf("{");
  if (open >= 0 && text.indexOf("}", open) < 0) {
    const tag = text.slice(open + 1, open + 41);
    issues.push({ tag, message: `broken tag {${tag} at ${where}: the tag is unclosed` });
  }
  for (const m of text.matchAll(TAG)) {
    const inner = m[1].trim();
    const table = /^table:(.+)$/.exec(inner);
    if (table) {
      const dot = table[1].indexOf(".");
      const array = dot < 0 ? table[1] : table[1].slice(0, dot);
      const field = dot < 0 ? "" : table[1].slice(dot + 1);
      if (!PATH.test(array) || !PATH.test(field)) {
        issues.push({ tag: inner, message: `broken tag {${inner}} at ${where}: a table tag is {table:<array>.<field>}` });
        continue;
      }
      out.push({ raw: m[0], table: array, path: field });
    } else if (!PATH.test(inner)) {
      issues.push({ tag: inner, message: `broken tag {${inner}} at ${where}: names are letters, digits, _ and - joined by dots` });
    } else {
      out.push({ raw: m[0], table: null, path: inner });
    }
  }
  return out;
}

function textOf(cell: ExcelJS.Cell): string | null {
  const val = cell.value;
  if (typeof val === "string") return val;
  if (val && typeof val === "object" && "richText" in val) return val.richText.map((r) => r.text).join("");
  return null;
}

interface SheetPlan {
  ws: ExcelJS.Worksheet;
  /** Row number → the array its table tags iterate. */
  tables: Map<number, string>;
}

async function load(bytes: Uint8Array): Promise<ExcelJS.Workbook> {
  const wb = new ExcelJS.Workbook();
  try {
    await wb.xlsx.load(bytes as unknown as ArrayBuffer);
  } catch {
    throw new TemplateBroken([{ tag: null, message: "the file is not a valid XLSX workbook" }]);
  }
  if (wb.worksheets.length === 0) throw new TemplateBroken([{ tag: null, message: "the workbook has no sheets" }]);
  return wb;
}

/** Finds every tag, checks them, and notes which rows are table rows. */
function plan(wb: ExcelJS.Workbook, tokens?: Map<string, Token>): SheetPlan[] {
  const issues: TemplateIssue[] = [];
  const plans: SheetPlan[] = [];
  for (const ws of wb.worksheets) {
    const tables = new Map<number, string>();
    ws.eachRow((row, r) => {
      row.eachCell((cell) => {
        const text = textOf(cell);
        if (text === null || !text.includes("{")) return;
        const where = `${ws.name}!${cell.address}`;
        const tags = tagsOf(text, where, issues);
        for (const t of tags) {
          if (t.table) {
            const other = tables.get(r);
            if (other && other !== t.table) {
              issues.push({ tag: t.raw.slice(1, -1), message: `broken tag ${t.raw} at ${where}: row ${r} already repeats over ${other}` });
              continue;
            }
            tables.set(r, t.table);
            tokens?.set(t.table, tokens.get(t.table) ?? { name: t.table, path: t.table, kind: "loop", type: "array" });
            const path = `${t.table}[].${t.path}`;
            tokens?.set(path, tokens.get(path) ?? { name: t.path, path, kind: "variable", type: text === t.raw ? "any" : "string" });
          } else {
            tokens?.set(t.path, tokens.get(t.path) ?? { name: t.path, path: t.path, kind: "variable", type: text === t.raw ? "any" : "string" });
          }
        }
      });
    });
    plans.push({ ws, tables });
  }
  if (issues.length) throw new TemplateBroken(issues);
  return plans;
}

export async function inspectXlsx(bytes: Uint8Array): Promise<Token[]> {
  const tokens = new Map<string, Token>();
  plan(await load(bytes), tokens);
  return [...tokens.values()];
}

const REF = /(?<![A-Za-z0-9_.!$'])(\$?[A-Z]{1,3})(\$?)(\d+)(?::(\$?[A-Z]{1,3})(\$?)(\d+))?(?![A-Za-z0-9_(])/g;

/**
 * Moves this sheet's A1 references for `delta` rows inserted (or removed, negative) after row `at`,
 * as Excel does: rows below move, a range ending on `at` grows. Text in quotes and other sheets'
 * references (`Sheet2!A5`) are left alone.
 */
export function shiftFormula(formula: string, at: number, delta: number): string {
  return formula
    .split(/("[^"]*")/)
    .map((chunk, i) =>
      i % 2 === 1
        ? chunk
        : chunk.replace(REF, (whole, c1: string, d1: string, r1: string, c2?: string, d2?: string, r2?: string) => {
            const a = Number(r1);
            if (c2 === undefined) return a > at ? `${c1}${d1}${a + delta}` : whole;
            const b = Number(r2);
            return `${c1}${d1}${a > at ? a + delta : a}:${c2}${d2}${b >= at ? b + delta : b}`;
          }),
    )
    .join("");
}

/** The i-th copy of a table row: its own relative row references point at the copy. */
function retarget(formula: string, row: number, copy: number): string {
  return formula
    .split(/("[^"]*")/)
    .map((chunk, i) =>
      i % 2 === 1
        ? chunk
        : chunk.replace(REF, (whole, c1: string, d1: string, r1: string, c2?: string) => (c2 === undefined && d1 === "" && Number(r1) === row ? `${c1}${row + copy}` : whole)),
    )
    .join("");
}

function rowFormulas(row: ExcelJS.Row, edit: (f: string) => string): void {
  row.eachCell((cell) => {
    const val = cell.value;
    if (val && typeof val === "object" && "formula" in val && typeof val.formula === "string") {
      const formula = edit(val.formula);
      if (formula !== val.formula) cell.value = { formula, result: undefined } as ExcelJS.CellFormulaValue;
    }
  });
}

function eachFormula(ws: ExcelJS.Worksheet, skip: (r: number) => boolean, edit: (f: string) => string): void {
  ws.eachRow((row, r) => {
    if (!skip(r)) rowFormulas(row, edit);
  });
}

const YELLOW: ExcelJS.Fill = { type: "pattern", pattern: "solid", fgColor: { argb: "FFFFFF00" } };

function cellValue(v: unknown): ExcelJS.CellValue {
  if (v === null || v === undefined) return null;
  if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return v;
  return JSON.stringify(v);
}

/** Replaces the tags of one cell; `item` is the table row's element. */
function fill(cell: ExcelJS.Cell, data: unknown, item: unknown, opts: RenderOptions): void {
  const text = textOf(cell);
  if (text === null || !text.includes("{")) return;
  let missing = false;
  const valueOf = (t: Tag) => {
    const v = t.table ? lookup(item, t.path) : lookup(data, t.path);
    if (v === undefined || v === null) missing = true;
    return v;
  };
  const tags = tagsOf(text, cell.address, []);
  if (tags.length === 1 && tags[0].raw === text) {
    const v = valueOf(tags[0]);
    cell.value = missing ? (opts.highlightNotFound ? opts.notFoundText : null) : cellValue(v);
  } else {
    let out = text;
    for (const t of tags) {
      const v = valueOf(t);
      const s = v === undefined || v === null ? (opts.highlightNotFound ? opts.notFoundText : "") : typeof v === "object" ? JSON.stringify(v) : String(v);
      out = out.replace(t.raw, () => s);
    }
    cell.value = out;
  }
  // Styles can be shared between cells: give this one its own copy before changing the fill.
  if (missing && opts.highlightNotFound) cell.style = { ...cell.style, fill: YELLOW };
}

export async function renderXlsx(bytes: Uint8Array, data: unknown, opts: RenderOptions): Promise<Uint8Array> {
  const wb = await load(bytes);
  for (const { ws, tables } of plan(wb)) {
    // Bottom-up, so expanding one table never moves a table row still to be processed; the regions
    // already expanded below move with the inserted rows.
    const rows = [...tables.keys()].sort((a, b) => b - a);
    const regions: { start: number; items: unknown[] }[] = [];
    for (const r of rows) {
      const list = lookup(data, tables.get(r)!);
      const items = Array.isArray(list) ? list : [];
      const delta = items.length === 0 ? -1 : items.length - 1;
      if (items.length === 0) {
        ws.spliceRows(r, 1);
        eachFormula(ws, () => false, (f) => shiftFormula(f, r, -1));
      } else if (items.length > 1) {
        ws.duplicateRow(r, items.length - 1, true);
        eachFormula(ws, (x) => x >= r && x < r + items.length, (f) => shiftFormula(f, r, delta));
        for (let i = 1; i < items.length; i++) rowFormulas(ws.getRow(r + i), (f) => retarget(f, r, i));
      }
      for (const region of regions) if (region.start > r) region.start += delta;
      if (items.length > 0) regions.push({ start: r, items });
    }
    const itemAt = new Map<number, unknown>();
    for (const { start, items } of regions) items.forEach((item, i) => itemAt.set(start + i, item));
    ws.eachRow((row, r) => {
      row.eachCell((cell) => fill(cell, data, itemAt.get(r), opts));
    });
  }
  return new Uint8Array(await wb.xlsx.writeBuffer());
}
