// Benchmark: template renders per second and RSS while rendering, in process.
//  - XLSX: a 1,000-row `{table:items.*}` template (styled row, per-row formula, SUM below) filled by
//    renderXlsx, against exceljs writing the same 1,000 rows into a fresh workbook (no template).
//  - DOCX: a 200-item `{#items}` loop with a NOT FOUND value filled by renderDocx, against
//    docxtemplater alone (its default parser, no highlighting) on the same template and data, and
//    pizzip opening and re-zipping the template untouched (the floor any DOCX fill pays).
// Reference and subject run in the same process, one after the other.
//
//   bun test/bench/automation-templates.ts [seconds=5]
import ExcelJS from "exceljs";
import Docxtemplater from "docxtemplater";
import PizZip from "pizzip";
import { buildDocx } from "../../src/automation/templates/build-docx";
import { renderDocx } from "../../src/automation/templates/docx";
import { DEFAULT_RENDER } from "../../src/automation/templates/grammar";
import { renderXlsx } from "../../src/automation/templates/xlsx";

const seconds = Number(process.argv[2] ?? 5);
const rssMiB = () => process.memoryUsage.rss() / (1024 * 1024);

async function rate(label: string, fn: () => Promise<unknown> | unknown): Promise<{ perSec: number; peakMiB: number }> {
  await fn(); // warm-up
  Bun.gc(true);
  const base = rssMiB();
  let peak = base;
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) {
    await fn();
    n++;
    peak = Math.max(peak, rssMiB());
  }
  const perSec = n / ((performance.now() - t0) / 1000);
  console.log(`${label.padEnd(48)} ${perSec.toFixed(2).padStart(8)} /s   RSS ${base.toFixed(0)} → peak ${peak.toFixed(0)} MiB`);
  return { perSec, peakMiB: peak };
}

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `Item ${i}`, qty: (i % 7) + 1, price: (i % 13) + 0.5, description: `Line ${i}`, amount: i * 3 }));

async function xlsxTemplate(): Promise<Uint8Array> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet("Invoice");
  ws.getCell("A1").value = "Invoice {number} for {customer.name}";
  ws.getRow(3).values = ["Item", "Qty", "Price", "Line"];
  ws.getRow(4).values = ["{table:items.name}", "{table:items.qty}", "{table:items.price}"];
  ws.getCell("C4").numFmt = "#,##0.00";
  ws.getCell("D4").value = { formula: "B4*C4" } as ExcelJS.CellFormulaValue;
  ws.getCell("D5").value = { formula: "SUM(D4:D4)" } as ExcelJS.CellFormulaValue;
  return new Uint8Array(await wb.xlsx.writeBuffer());
}

async function xlsxFromScratch(rows: ReturnType<typeof items>): Promise<Uint8Array> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet("Invoice");
  ws.addRow(["Item", "Qty", "Price", "Line"]);
  for (const r of rows) ws.addRow([r.name, r.qty, r.price, r.qty * r.price]);
  return new Uint8Array(await wb.xlsx.writeBuffer());
}

const xlsxData = { number: 1, customer: { name: "Acme" }, items: items(1000) };
const docxData = { number: 1, customer: { name: "Acme" }, items: items(200) };
const docx = buildDocx(["Invoice {number} for {customer.name}", "{#items}", "{description}: {qty} × {price} = {amount} ({missing})", "{/items}", "Total {total}"]);
const xlsx = await xlsxTemplate();

console.log(`template renders, ${seconds} s each (Bun ${Bun.version})`);
const xRef = await rate("exceljs: write 1,000 rows from scratch (ref)", () => xlsxFromScratch(xlsxData.items));
const xSub = await rate("renderXlsx: 1,000-row table template", () => renderXlsx(xlsx, xlsxData, DEFAULT_RENDER));
const dRef = await rate("pizzip: open + re-zip the DOCX (ref)", () => new PizZip(docx).generate({ type: "uint8array", compression: "DEFLATE" }));
const dLib = await rate("docxtemplater alone, same loop (ref)", () => {
  const d = new Docxtemplater(new PizZip(docx), { paragraphLoop: true, linebreaks: true });
  d.render(docxData);
  return d.getZip().generate({ type: "uint8array", compression: "DEFLATE" });
});
const dSub = await rate("renderDocx: 200-item loop + NOT FOUND", () => renderDocx(docx, docxData, DEFAULT_RENDER));
console.log("");
console.log(`XLSX 1,000 rows: ${xSub.perSec.toFixed(2)} renders/s = ${(xSub.perSec / xRef.perSec).toFixed(2)}× exceljs from scratch; peak RSS ${xSub.peakMiB.toFixed(0)} MiB`);
console.log(`DOCX 200 items: ${dSub.perSec.toFixed(2)} renders/s = ${(dSub.perSec / dLib.perSec).toFixed(2)}× docxtemplater alone, ${(dSub.perSec / dRef.perSec).toFixed(3)}× the zip floor; peak RSS ${dSub.peakMiB.toFixed(0)} MiB`);
