// transform.xlsx-to-json: reads an XLSX file (an input file or an earlier step's output file).
// With `header` (default) each row becomes an object keyed by the first row's cells; otherwise an
// array of cell values. Formulas give their cached result, dates ISO strings, rich text its text.
// Output {rows (of `sheet` or the first sheet), sheets: [{name, rows}]}.
import ExcelJS from "exceljs";
import * as v from "valibot";
import { StepError } from "../errors";
import { defineKind } from "../kind";

const MAX_BYTES = 50 * 1024 * 1024;

export const schema = v.strictObject({
  file: v.looseObject({ $file: v.pipe(v.string(), v.minLength(1)), filename: v.optional(v.string()), contentType: v.optional(v.string()), size: v.optional(v.number()) }),
  sheet: v.optional(v.pipe(v.string(), v.minLength(1))),
  header: v.optional(v.boolean(), true),
});

type Json = string | number | boolean | null;

function plain(value: ExcelJS.CellValue): Json {
  if (value === null || value === undefined) return null;
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
  if (value instanceof Date) return value.toISOString();
  if ("richText" in value) return value.richText.map((r) => r.text).join("");
  if ("formula" in value || "sharedFormula" in value) return plain((value as ExcelJS.CellFormulaValue).result as ExcelJS.CellValue);
  if ("text" in value) return typeof value.text === "string" ? value.text : plain(value.text as ExcelJS.CellValue);
  if ("error" in value) return null;
  return String(value);
}

function sheetRows(ws: ExcelJS.Worksheet, header: boolean): unknown[] {
  const raw: Json[][] = [];
  ws.eachRow({ includeEmpty: true }, (row, n) => {
    const cells: Json[] = [];
    for (let c = 1; c <= ws.columnCount; c++) cells.push(plain(row.getCell(c).value));
    raw[n - 1] = cells;
  });
  const dense = Array.from(raw, (r) => r ?? []).filter((r) => r.some((c) => c !== null));
  if (!header) return dense;
  const [head = [], ...body] = dense;
  const keys = head.map((h, i) => (h === null || h === "" ? `column${i + 1}` : String(h)));
  return body.map((r) => Object.fromEntries(keys.map((k, i) => [k, r[i] ?? null])));
}

export default defineKind({
  type: "transform.xlsx-to-json",
  configAt: "with",
  schema,
  async run(config, ctx) {
    const bytes = await ctx.services.readFile({ $file: config.file.$file, filename: config.file.filename ?? "", contentType: config.file.contentType ?? "", size: config.file.size ?? 0 });
    if (bytes.byteLength > MAX_BYTES) throw new StepError(`file is larger than ${MAX_BYTES} bytes`, "file_too_large", { retryable: false });
    const wb = new ExcelJS.Workbook();
    try {
      await wb.xlsx.load(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
    } catch (e) {
      throw new StepError(`not a readable XLSX file: ${(e as Error).message}`, "invalid_file", { retryable: false });
    }
    const sheets = wb.worksheets.map((ws) => ({ name: ws.name, rows: sheetRows(ws, config.header) }));
    const chosen = config.sheet === undefined ? sheets[0] : sheets.find((s) => s.name === config.sheet);
    if (!chosen) throw new StepError(`no sheet named ${JSON.stringify(config.sheet)}; sheets: ${sheets.map((s) => s.name).join(", ")}`, "invalid_config", { retryable: false });
    return { rows: chosen.rows, sheets };
  },
});
