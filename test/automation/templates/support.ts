// Template test support: DOCX/XLSX fixtures built in the test, readers that open produced documents
// (the DOCX's XML through fflate, the workbook through exceljs), and an app with the real engine.
import ExcelJS from "exceljs";
import { strFromU8, unzipSync } from "fflate";
import { createAutomation } from "../../../src/automation/automations/service";
import { runsOf } from "../../../src/automation/runs/service";
import { buildDocx } from "../../../src/automation/templates/build-docx";
import { harness, json, type Json } from "../app/harness";
import type { BlobMode } from "../files/stores";

export { json, type Json };

export const invoiceDocx = () =>
  buildDocx([
    [{ text: "Invoice " }, { text: "{number}", bold: true }],
    "Bill to {customer.name}, {customer.city}",
    "{#items}",
    "{description}: {amount} EUR",
    "{/items}",
    "Total {total} EUR, due {dueDate}",
  ]);

/** Two sheets: a styled table row with a per-row formula and a SUM below, and a notes sheet. */
export async function invoiceXlsx(): Promise<Uint8Array> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet("Invoice");
  ws.getCell("A1").value = "Invoice {number}";
  ws.getCell("A1").font = { bold: true, size: 14 };
  ws.getCell("B2").value = "{customer.name}";
  ws.getRow(4).values = ["Item", "Qty", "Price", "Line"];
  ws.getRow(5).values = ["{table:items.name}", "{table:items.qty}", "{table:items.price}"];
  ws.getCell("C5").numFmt = "#,##0.00";
  ws.getCell("A5").font = { italic: true };
  ws.getCell("D5").value = { formula: "B5*C5" } as ExcelJS.CellFormulaValue;
  ws.getCell("C6").value = "Total";
  ws.getCell("D6").value = { formula: "SUM(D5:D5)" } as ExcelJS.CellFormulaValue;
  ws.getCell("A8").value = "{terms}";
  const notes = wb.addWorksheet("Notes");
  notes.getCell("A1").value = "Prepared for {customer.name} on {date}";
  return new Uint8Array(await wb.xlsx.writeBuffer());
}

export function docxText(bytes: Uint8Array): string {
  return strFromU8(unzipSync(bytes)["word/document.xml"]);
}

/** The visible text of each paragraph. */
export function docxParagraphs(bytes: Uint8Array): string[] {
  return [...docxText(bytes).matchAll(/<w:p>([\s\S]*?)<\/w:p>/g)].map((m) =>
    [...m[1].matchAll(/<w:t[^>]*>([^<]*)<\/w:t>/g)].map((t) => t[1]).join("").replace(/&amp;/g, "&"),
  );
}

/** Texts of the runs carrying a yellow highlight. */
export function highlighted(bytes: Uint8Array): string[] {
  return [...docxText(bytes).matchAll(/<w:r>(?:(?!<\/w:r>)[\s\S])*?<w:highlight w:val="yellow"\/>(?:(?!<\/w:r>)[\s\S])*?<w:t[^>]*>([^<]*)<\/w:t><\/w:r>/g)].map((m) => m[1]);
}

export async function readWorkbook(bytes: Uint8Array): Promise<ExcelJS.Workbook> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(bytes as unknown as ArrayBuffer);
  return wb;
}

export async function templatesHarness(blobs: BlobMode = "fs") {
  const h = await harness({ workers: 2 }, blobs);
  const t = await h.tenant(`t${Math.random().toString(36).slice(2, 8)}`);
  runsOf(h.ctx).startWorkers();
  const key = t.key;
  const upload = async (bytes: Uint8Array, filename: string, k = key) => {
    const form = new FormData();
    form.append("file", new Blob([bytes]), filename);
    return json(await h.req("POST", "/v1/files", { key: k, body: form }));
  };
  const multipart = (method: string, path: string, bytes: Uint8Array, filename: string, fields: Record<string, string> = {}, k = key) => {
    const form = new FormData();
    for (const [n, val] of Object.entries(fields)) form.append(n, val);
    form.append("file", new Blob([bytes]), filename);
    return h.req(method, path, { key: k, body: form });
  };
  const create = async (bytes: Uint8Array, filename: string, name = "tpl") => {
    const f = await upload(bytes, filename);
    const r = await h.req("POST", "/v1/templates", { key, body: { fileId: f.id, name } });
    if (r.status !== 201) throw new Error(`create template: ${r.status} ${await r.text()}`);
    return json(r);
  };
  /** Runs a workflow to completion and returns the run (with files). */
  const run = async (yaml: string, input: Record<string, unknown> = {}) => {
    const wf = await createAutomation(h.ctx.storage.automations, h.clock, t.id, yaml);
    const r = await json(await h.req("POST", "/v1/runs?wait_for_completion=30", { key, body: { target: wf.id, input } }));
    return r;
  };
  const artifact = async (runId: string, path: string) => new Uint8Array(await (await h.req("GET", `/v1/runs/${runId}/artifacts/${encodeURIComponent(path)}`, { key })).arrayBuffer());
  return { h, t, key, upload, multipart, create, run, artifact };
}
