// transform.template through the real engine: the produced DOCX/XLSX are opened and read back.
import { describe, expect, test } from "bun:test";
import { createAutomation } from "../../../src/automation/automations/service";
import { buildDocx } from "../../../src/automation/templates/build-docx";
import { docxParagraphs, highlighted, invoiceDocx, invoiceXlsx, json, readWorkbook, templatesHarness } from "./support";
import { BLOB_MODES, withS3 } from "../files/stores";

const invoiceData = {
  number: "INV-7",
  customer: { name: "Müller & Söhne", city: "Köln" },
  items: [
    { description: "Consulting", amount: 1200 },
    { description: "Travel" },
  ],
  total: 1450,
};

const fillWorkflow = (ref: string, extra = "") => `
name: fill-${Math.random().toString(36).slice(2, 8)}
inputs:
  - {name: data, type: object, required: true}
steps:
  - name: fill
    type: transform.template
    with:
      ${ref}
      data: "{{ input.data }}"
${extra}
`;

withS3();

describe.each(BLOB_MODES)("%s blobs", (mode) => {
  describe("transform.template", () => {
    test("DOCX: values, nested paths, loop rows, NOT FOUND highlighted; artifact and reusable file", async () => {
      const { h, key, create, run, artifact } = await templatesHarness(mode);
      const t = await create(invoiceDocx(), "invoice.docx");
      const r = await run(fillWorkflow(`templateId: ${t.id}\n      outputFilename: invoice-7`), { data: invoiceData });
      expect(r.execution.status).toBe("completed");
      const out = r.output.fill;
      expect(out).toMatchObject({ filename: "invoice-7.docx", templateId: t.id, templateRevisionId: t.currentRevision.id });
      expect(out.fileId).toMatch(/^file_/);
      expect(r.files.map((f: { path: string }) => f.path)).toEqual(["invoice-7.docx"]);
      const bytes = await artifact(r.id, "invoice-7.docx");
      expect(bytes.byteLength).toBe(out.size);
      expect(docxParagraphs(bytes)).toEqual([
        "Invoice INV-7",
        "Bill to Müller & Söhne, Köln",
        "Consulting: 1200 EUR",
        "Travel: NOT FOUND EUR",
        "Total 1450 EUR, due NOT FOUND",
      ]);
      expect(highlighted(bytes)).toEqual(["NOT FOUND", "NOT FOUND"]);
      // The same document is a reusable file of the tenant.
      const file = await h.req("GET", `/v1/files/${out.fileId}/content`, { key });
      expect(new Uint8Array(await file.arrayBuffer())).toEqual(bytes);
    });

    test("DOCX without highlighting, custom notFoundText", async () => {
      const { create, run, artifact } = await templatesHarness(mode);
      const t = await create(buildDocx(["A {a} B {b}"]), "ab.docx");
      const plain = await run(fillWorkflow(`templateId: ${t.id}\n      highlightNotFound: false`), { data: { a: 1 } });
      const bytes = await artifact(plain.id, "ab.docx");
      expect(docxParagraphs(bytes)).toEqual(["A 1 B "]);
      expect(highlighted(bytes)).toEqual([]);
      const custom = await run(fillWorkflow(`templateId: ${t.id}\n      notFoundText: "<missing>"`), { data: { b: 2 } });
      const c = await artifact(custom.id, "ab.docx");
      expect(docxParagraphs(c)).toEqual(["A &lt;missing&gt; B 2"]);
      expect(highlighted(c)).toEqual(["&lt;missing&gt;"]);
    });

    test("XLSX: table rows expand with styles, formulas follow, variables on every sheet", async () => {
      const { create, run, artifact } = await templatesHarness(mode);
      const t = await create(await invoiceXlsx(), "invoice.xlsx");
      const data = {
        number: 42,
        customer: { name: "Acme" },
        date: "2026-11-23",
        items: [
          { name: "Bolts", qty: 10, price: 0.5 },
          { name: "Nuts", qty: 20, price: 0.25 },
          { name: "Gears", qty: 2, price: 12 },
        ],
      };
      const r = await run(fillWorkflow(`templateId: ${t.id}`), { data });
      expect(r.execution.status).toBe("completed");
      const wb = await readWorkbook(await artifact(r.id, "invoice.xlsx"));
      const ws = wb.getWorksheet("Invoice")!;
      expect(ws.getCell("A1").value).toBe("Invoice 42");
      expect(ws.getCell("A1").font?.bold).toBe(true);
      expect(ws.getCell("B2").value).toBe("Acme");
      const rows = [5, 6, 7].map((n) => [ws.getCell(`A${n}`).value, ws.getCell(`B${n}`).value, ws.getCell(`C${n}`).value]);
      expect(rows).toEqual([["Bolts", 10, 0.5], ["Nuts", 20, 0.25], ["Gears", 2, 12]]);
      for (const n of [5, 6, 7]) {
        expect(ws.getCell(`C${n}`).numFmt).toBe("#,##0.00");
        expect(ws.getCell(`A${n}`).font?.italic).toBe(true);
        expect((ws.getCell(`D${n}`).value as { formula: string }).formula).toBe(`B${n}*C${n}`);
      }
      expect(ws.getCell("C8").value).toBe("Total");
      expect((ws.getCell("D8").value as { formula: string }).formula).toBe("SUM(D5:D7)");
      // {terms} is missing: NOT FOUND on a yellow fill.
      expect(ws.getCell("A10").value).toBe("NOT FOUND");
      expect((ws.getCell("A10").fill as { fgColor?: { argb?: string } }).fgColor?.argb).toBe("FFFFFF00");
      expect(wb.getWorksheet("Notes")!.getCell("A1").value).toBe("Prepared for Acme on 2026-11-23");
    });

    test("XLSX: an empty list removes the table row and the sum below moves up", async () => {
      const { create, run, artifact } = await templatesHarness(mode);
      const t = await create(await invoiceXlsx(), "invoice.xlsx");
      const r = await run(fillWorkflow(`templateId: ${t.id}`), { data: { number: 1, items: [], terms: "net 30" } });
      const ws = (await readWorkbook(await artifact(r.id, "invoice.xlsx"))).getWorksheet("Invoice")!;
      expect(ws.getCell("C5").value).toBe("Total");
      expect(ws.getCell("A7").value).toBe("net 30");
    });

    test("a pinned revision renders after the template was replaced and deleted; a deleted template id fails the step", async () => {
      const { h, key, create, upload, run, artifact } = await templatesHarness(mode);
      const t = await create(buildDocx(["version one {x}"]), "v.docx");
      const f = await upload(buildDocx(["version two {x}"]), "v.docx");
      await h.req("PUT", `/v1/templates/${t.id}`, { key, body: { fileId: f.id } });
      const current = await run(fillWorkflow(`templateId: ${t.id}`), { data: { x: 1 } });
      expect(docxParagraphs(await artifact(current.id, "v.docx"))).toEqual(["version two 1"]);
      expect((await h.req("DELETE", `/v1/templates/${t.id}`, { key })).status).toBe(200);
      const pinned = await run(fillWorkflow(`templateRevisionId: ${t.currentRevision.id}`), { data: { x: 2 } });
      expect(pinned.execution.status).toBe("completed");
      expect(docxParagraphs(await artifact(pinned.id, "v.docx"))).toEqual(["version one 2"]);
      const gone = await run(fillWorkflow(`templateId: ${t.id}`), { data: { x: 3 } });
      expect(gone.execution.status).toBe("failed");
      expect(gone.error).toContain(`template ${t.id} not found`);
    });

    test("another tenant's revision id is not found; the step config is validated at push", async () => {
      const { h, key, create } = await templatesHarness(mode);
      const t = await create(buildDocx(["{x}"]), "x.docx");
      const other = await h.tenant(`o${Math.random().toString(36).slice(2, 8)}`);
      const wf = await createAutomation(h.ctx.storage.automations, h.clock, other.id, fillWorkflow(`templateRevisionId: ${t.currentRevision.id}`));
      const r = await json(await h.req("POST", "/v1/runs?wait_for_completion=30", { key: other.key, body: { target: wf.id, input: { data: {} } } }));
      expect(r.execution.status).toBe("failed");
      expect(r.error).toContain(`template revision ${t.currentRevision.id} not found`);
      const bad = await h.req("POST", "/v1/automations", { key, body: { yaml: fillWorkflow("outputFilename: x") } });
      expect(bad.status).toBe(400);
      expect(JSON.stringify(await json(bad))).toContain("templateId or templateRevisionId");
    });
  });
});
