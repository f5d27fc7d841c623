// transform.json-to-xlsx: writes rows of objects to an XLSX workbook (a run artifact via
// services.writeFile). `rows` (+ `sheetName`) for one sheet or `sheets: [{name, rows, columns}]`;
// columns default to every key in order of first appearance; the first row is the header.
// Objects/arrays in cells are written as JSON text. Output {file, sheets: [{name, rowCount}]}.
import ExcelJS from "exceljs";
import * as v from "valibot";
import { StepError } from "../errors";
import { defineKind } from "../kind";

export const XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
const MAX_ROWS = 100_000;

const rows = v.pipe(v.array(v.record(v.string(), v.unknown())), v.maxLength(MAX_ROWS));
const sheetName = v.pipe(v.string(), v.minLength(1), v.maxLength(31), v.regex(/^[^\\/?*[\]:]+$/, "must not contain \\ / ? * [ ] :"));
const columns = v.array(v.pipe(v.string(), v.minLength(1)));

export const schema = v.pipe(
  v.strictObject({
    rows: v.optional(rows),
    columns: v.optional(columns),
    sheetName: v.optional(sheetName, "Sheet1"),
    sheets: v.optional(v.pipe(v.array(v.strictObject({ name: sheetName, rows, columns: v.optional(columns) })), v.minLength(1))),
    filename: v.optional(v.pipe(v.string(), v.regex(/^[^/\\]+$/, "must be a file name without directories"), v.maxLength(200)), "output.xlsx"),
  }),
  v.check((c) => (c.rows === undefined) !== (c.sheets === undefined), "give exactly one of rows or sheets"),
);

function cell(value: unknown): ExcelJS.CellValue {
  if (value === null || value === undefined) return null;
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
  return JSON.stringify(value);
}

function keysOf(data: Record<string, unknown>[]): string[] {
  const seen = new Set<string>();
  for (const row of data) for (const k of Object.keys(row)) seen.add(k);
  return [...seen];
}

export default defineKind({
  type: "transform.json-to-xlsx",
  configAt: "with",
  schema,
  async run(config, ctx) {
    const sheets = config.sheets ?? [{ name: config.sheetName, rows: config.rows ?? [], columns: config.columns }];
    if (new Set(sheets.map((s) => s.name.toLowerCase())).size !== sheets.length) throw new StepError("sheet names must be unique", "invalid_config", { retryable: false });
    const wb = new ExcelJS.Workbook();
    for (const s of sheets) {
      const ws = wb.addWorksheet(s.name);
      const cols = s.columns ?? keysOf(s.rows);
      ws.addRow(cols).font = { bold: true };
      for (const row of s.rows) ws.addRow(cols.map((c) => cell(row[c])));
    }
    const bytes = new Uint8Array(await wb.xlsx.writeBuffer());
    const filename = config.filename.toLowerCase().endsWith(".xlsx") ? config.filename : `${config.filename}.xlsx`;
    const file = await ctx.services.writeFile({ name: filename, contentType: XLSX_TYPE, bytes, stepName: ctx.step.name, role: "output" });
    return { file, sheets: sheets.map((s) => ({ name: s.name, rowCount: s.rows.length })) };
  },
});
