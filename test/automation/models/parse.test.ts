// ai.parse: documents produced here (a text PDF with pdf-lib, a DOCX zipped with pizzip, an XLSX with
// exceljs) are read locally to the right text with no model call; images and scanned PDFs go to the
// vision model.
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import ExcelJS from "exceljs";
import { PDFDocument } from "pdf-lib";
import { png } from "../../../src/automation/models/documents";
import { docx, textPdf } from "../../support/documents";
import { startFakeModels } from "../../support/fake-models";
import { aiHarness, inline } from "./support";

const fake = await startFakeModels();
afterAll(() => fake.close());
beforeEach(() => {
  fake.requests.length = 0;
});
const h = await aiHarness(fake.config());

const wf = `
name: parse
inputs: [{name: doc, type: file, required: true}]
steps:
  - name: read
    type: ai.parse
    with: {file: "{{ input.doc }}"}
output: "{{ steps.read.output }}"
`;

describe("ai.parse: local extraction", () => {
  test("a text PDF: text per page, no model call", async () => {
    const pdf = await textPdf([["Invoice INV-42", "Total 123.45 EUR"], ["Terms: 30 days"]]);
    const run = await h.run(wf, { doc: inline("invoice.pdf", "application/pdf", pdf) });
    expect(run.execution.status).toBe("completed");
    expect(run.output.pages.map((p: { page: number }) => p.page)).toEqual([1, 2]);
    expect(run.output.pages[0].text).toContain("Invoice INV-42");
    expect(run.output.pages[0].text).toContain("Total 123.45 EUR");
    expect(run.output.pages[1].text).toBe("Terms: 30 days");
    expect(run.output.text).toContain("Terms: 30 days");
    expect(fake.requests.length).toBe(0);
    expect((await h.get(`/v1/runs/${run.id}/usage`)).usage.llmCallCount).toBe(0);
  });

  test("a DOCX: paragraphs in order, explicit page breaks start pages, entities decoded", async () => {
    const bytes = docx(["Service agreement", "Between ACME & Co and <Beta>", "<pagebreak>", "Signed: Ada"]);
    const run = await h.run(wf, { doc: inline("contract.docx", "application/octet-stream", bytes) });
    expect(run.output.pages).toEqual([
      { page: 1, text: "Service agreement\nBetween ACME & Co and <Beta>" },
      { page: 2, text: "Signed: Ada" },
    ]);
    expect(fake.requests.length).toBe(0);
  });

  test("an XLSX: one page per sheet, rows tab-separated", async () => {
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet("Hours");
    ws.addRow(["name", "hours"]);
    ws.addRow(["Ada", 12]);
    const buf = new Uint8Array(await wb.xlsx.writeBuffer());
    const run = await h.run(wf, { doc: inline("hours.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", buf) });
    expect(run.output.pages).toEqual([{ page: 1, text: "# Hours\nname\thours\nAda\t12" }]);
  });

  test("an unsupported file fails the step naming the type", async () => {
    const run = await h.run(wf, { doc: inline("a.bin", "application/zip", new Uint8Array([1, 2, 3])) });
    expect(run.execution.status).toBe("failed");
    expect(run.error).toContain("cannot read application/zip files");
  });
});

describe("ai.parse: vision model", () => {
  const pixels = new Uint8Array(4 * 4 * 3).fill(200);
  const image = png(4, 4, 3, pixels);

  test("an image is transcribed by the vision default; usage counted", async () => {
    fake.script({ text: "RECEIPT\nTotal 9.99", usage: { input: 900, output: 8 } });
    const run = await h.run(wf, { doc: inline("receipt.png", "image/png", image) });
    expect(run.output).toEqual({ text: "RECEIPT\nTotal 9.99", pages: [{ page: 1, text: "RECEIPT\nTotal 9.99" }] });
    const sent = fake.requests[0].body;
    expect(sent.model).toBe("vision");
    const content = (sent.messages as { content: { type: string; image_url?: { url: string } }[] }[])[0].content;
    expect(content[1].image_url!.url).toBe(`data:image/png;base64,${Buffer.from(image).toString("base64")}`);
    expect((await h.get(`/v1/runs/${run.id}/usage`)).usage).toMatchObject({ tokens: { input: 900, output: 8 }, llmCallCount: 1 });
  });

  test("a scanned PDF (an image, no text layer): its page image goes to the vision model", async () => {
    const doc = await PDFDocument.create();
    const embedded = await doc.embedPng(image);
    doc.addPage([100, 100]).drawImage(embedded, { x: 0, y: 0, width: 100, height: 100 });
    const bytes = await doc.save();
    fake.script({ text: "scanned words" });
    const run = await h.run(wf, { doc: inline("scan.pdf", "application/pdf", bytes) });
    expect(run.output).toEqual({ text: "scanned words", pages: [{ page: 1, text: "scanned words" }] });
    const content = (fake.requests[0].body.messages as { content: { type: string; image_url?: { url: string } }[] }[])[0].content;
    expect(content[1].image_url!.url).toStartWith("data:image/png;base64,iVBOR");
  });
});
