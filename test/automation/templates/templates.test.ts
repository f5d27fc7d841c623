// Templates API: create from a file id or multipart, tokens and grammar per format, revisions,
// list/get/delete, content by revision, broken templates, tenancy and scopes.
import { createHash } from "node:crypto";
import { describe, expect, test } from "bun:test";
import { buildDocx } from "../../../src/automation/templates/build-docx";
import { invoiceDocx, invoiceXlsx, json, templatesHarness } from "./support";
import { BLOB_MODES, withS3 } from "../files/stores";

withS3();

describe.each(BLOB_MODES)("%s blobs", (mode) => {
  const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

  describe("templates API", () => {
    test("create from an uploaded file id: tokens, grammar, first revision, no storage keys", async () => {
      const { create } = await templatesHarness(mode);
      const bytes = invoiceDocx();
      const t = await create(bytes, "invoice.docx", "Invoice");
      expect(t.id).toMatch(/^tmpl_/);
      expect(t).toMatchObject({ name: "Invoice", description: null, filename: "invoice.docx", format: "docx", size: bytes.byteLength, sha256: sha(bytes) });
      expect(t.mimeType).toBe("application/vnd.openxmlformats-officedocument.wordprocessingml.document");
      expect(t.currentRevision.id).toMatch(/^tmpr_/);
      expect(t.currentRevision).toMatchObject({ number: 1, sha256: sha(bytes) });
      const paths = t.tokens.map((k: { path: string }) => k.path);
      expect(paths).toEqual(["number", "customer.name", "customer.city", "items", "items[].description", "items[].amount", "total", "dueDate"]);
      expect(t.tokens.find((k: { path: string }) => k.path === "items")).toEqual({ name: "items", path: "items", kind: "loop", type: "array" });
      expect(t.grammar.capabilities).toContain("loops");
      expect(t.grammar.syntax).toContain("{#items}");
      expect(JSON.stringify(t)).not.toMatch(/blob|storageKey|\/data\//i);
    });

    test("multipart create of an XLSX: table-row and multi-sheet tokens", async () => {
      const { multipart } = await templatesHarness(mode);
      const r = await multipart("POST", "/v1/templates", await invoiceXlsx(), "invoice.xlsx", { name: "Sheet", description: "two sheets" });
      expect(r.status).toBe(201);
      const t = await json(r);
      expect(t).toMatchObject({ format: "xlsx", name: "Sheet", description: "two sheets", filename: "invoice.xlsx" });
      const byPath = Object.fromEntries(t.tokens.map((k: { path: string; kind: string }) => [k.path, k.kind]));
      expect(byPath).toEqual({ number: "variable", "customer.name": "variable", items: "loop", "items[].name": "variable", "items[].qty": "variable", "items[].price": "variable", terms: "variable", date: "variable" });
      expect(t.grammar.capabilities).toEqual(expect.arrayContaining(["table-rows", "multi-sheet", "keeps-styles"]));
    });

    test("PUT appends a revision; content by revision_id returns each revision's bytes", async () => {
      const { h, key, create, upload } = await templatesHarness(mode);
      const first = invoiceDocx();
      const t = await create(first, "invoice.docx");
      const second = buildDocx(["Hello {who}"]);
      const f = await upload(second, "hello.docx");
      const r = await h.req("PUT", `/v1/templates/${t.id}`, { key, body: { fileId: f.id } });
      expect(r.status).toBe(200);
      const t2 = await json(r);
      expect(t2.id).toBe(t.id);
      expect(t2.currentRevision.number).toBe(2);
      expect(t2.currentRevision.id).not.toBe(t.currentRevision.id);
      expect(t2.tokens.map((k: { path: string }) => k.path)).toEqual(["who"]);
      expect(t2.filename).toBe("hello.docx");
      const cur = await h.req("GET", `/v1/templates/${t.id}/content`, { key });
      expect(cur.headers.get("content-type")).toBe(t.mimeType);
      expect(sha(new Uint8Array(await cur.arrayBuffer()))).toBe(sha(second));
      const old = await h.req("GET", `/v1/templates/${t.id}/content?revision_id=${t.currentRevision.id}`, { key });
      expect(sha(new Uint8Array(await old.arrayBuffer()))).toBe(sha(first));
      const revs = await json(await h.req("GET", `/v1/templates/${t.id}/revisions`, { key }));
      expect(revs.revisions.map((x: { number: number; current: boolean }) => [x.number, x.current])).toEqual([[2, true], [1, false]]);
      expect((await h.req("GET", `/v1/templates/${t.id}/content?revision_id=tmpr_nope`, { key })).status).toBe(404);
    });

    test("list {items, total} with limit/offset; delete answers 404 afterwards everywhere", async () => {
      const { h, key, create } = await templatesHarness(mode);
      const a = await create(invoiceDocx(), "a.docx", "a");
      await create(invoiceDocx(), "b.docx", "b");
      await create(invoiceDocx(), "c.docx", "c");
      const page = await json(await h.req("GET", "/v1/templates?limit=2&offset=0", { key }));
      expect(page.total).toBe(3);
      expect(page.items.map((i: { name: string }) => i.name)).toEqual(["c", "b"]);
      expect((await json(await h.req("GET", "/v1/templates?limit=2&offset=2", { key }))).items.map((i: { name: string }) => i.name)).toEqual(["a"]);
      expect((await h.req("GET", "/v1/templates?limit=0", { key })).status).toBe(400);
      const del = await h.req("DELETE", `/v1/templates/${a.id}`, { key });
      expect(await json(del)).toEqual({ id: a.id, deleted: true });
      for (const [m, p] of [["GET", `/v1/templates/${a.id}`], ["GET", `/v1/templates/${a.id}/content`], ["DELETE", `/v1/templates/${a.id}`]]) {
        expect((await h.req(m, p, { key })).status).toBe(404);
      }
      expect((await json(await h.req("GET", "/v1/templates", { key }))).total).toBe(2);
    });

    test("broken tags are a 400 naming the tag; non-DOCX/XLSX files are refused", async () => {
      const { h, key, upload, multipart } = await templatesHarness(mode);
      const f = await upload(buildDocx(["Dear {name", "{#rows}never closed"]), "broken.docx");
      const r = await h.req("POST", "/v1/templates", { key, body: { fileId: f.id, name: "x" } });
      expect(r.status).toBe(400);
      const body = await json(r);
      const messages = body.issues.map((i: { message: string }) => i.message).join("\n");
      expect(messages).toContain("{name}");
      expect(messages).toContain("{rows}");
      expect(body.issues[0]).toMatchObject({ field: "fileId", code: "invalid_template" });

      const xr = await multipart("POST", "/v1/templates", await brokenXlsx(), "b.xlsx", { name: "b" });
      expect(xr.status).toBe(400);
      expect((await json(xr)).issues.map((i: { message: string }) => i.message).join("\n")).toContain("{table:items}");

      const txt = await multipart("POST", "/v1/templates", new TextEncoder().encode("hello"), "notes.txt", { name: "t" });
      expect(txt.status).toBe(400);
      const fake = await multipart("POST", "/v1/templates", new TextEncoder().encode("not a zip"), "fake.docx", { name: "t" });
      expect(fake.status).toBe(400);
      expect((await json(fake)).issues[0].message).toContain("not a valid DOCX");
      const noName = await h.req("POST", "/v1/templates", { key, body: { fileId: f.id } });
      expect(noName.status).toBe(400);
      const unknownFile = await h.req("POST", "/v1/templates", { key, body: { fileId: "file_nope", name: "x" } });
      expect(unknownFile.status).toBe(400);
    });

    test("another tenant's template answers 404; read-only keys cannot write", async () => {
      const { h, key, create, t: tenant } = await templatesHarness(mode);
      const t = await create(invoiceDocx(), "invoice.docx");
      const other = await h.tenant(`o${Math.random().toString(36).slice(2, 8)}`);
      expect((await h.req("GET", `/v1/templates/${t.id}`, { key: other.key })).status).toBe(404);
      expect((await h.req("DELETE", `/v1/templates/${t.id}`, { key: other.key })).status).toBe(404);
      const reader = await h.key(tenant.slug, ["templates:read"]);
      expect((await h.req("GET", `/v1/templates/${t.id}`, { key: reader })).status).toBe(200);
      expect((await h.req("DELETE", `/v1/templates/${t.id}`, { key: reader })).status).toBe(403);
      expect((await h.req("GET", "/v1/templates")).status).toBe(401);
    });
  });

  async function brokenXlsx(): Promise<Uint8Array> {
    const ExcelJS = (await import("exceljs")).default;
    const wb = new ExcelJS.Workbook();
    wb.addWorksheet("S").getCell("A1").value = "{table:items}";
    return new Uint8Array(await wb.xlsx.writeBuffer());
  }
});
