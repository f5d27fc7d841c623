import { describe, expect, test } from "bun:test";
import { strToU8, unzipSync, zipSync } from "fflate";
import { parseWorkflow } from "../../../src/automation/workflow";
import { oneStep, run, testServices } from "./support";

function issuesOf(yaml: string) {
  const r = parseWorkflow(yaml);
  if (r.ok) throw new Error("expected parse issues");
  return r.issues;
}

async function out(type: string, withYaml: string, input: Record<string, unknown> = {}) {
  const r = await run(oneStep(type, withYaml), input);
  if (r.status !== "completed") throw new Error(`step failed: ${JSON.stringify(r.error)}`);
  return (r.output as { s: unknown }).s;
}

async function failure(type: string, withYaml: string, input: Record<string, unknown> = {}) {
  const r = await run(oneStep(type, withYaml), input);
  expect(r.status).toBe("failed");
  return r.error!;
}

describe("transform.set", () => {
  test("builds fields, dotted keys nest, on top of an optional input object", async () => {
    expect(await out("transform.set", '{fields: {a: 1, "b.c": "{{ input.x }}", "b.d": [1]}}', { x: "y" })).toEqual({ a: 1, b: { c: "y", d: [1] } });
    expect(await out("transform.set", '{input: "{{ input.base }}", fields: {"k.z": 2, n: null}}', { base: { k: { y: 1 }, keep: true } })).toEqual({ k: { y: 1, z: 2 }, keep: true, n: null });
  });
  test("the input object is not modified", async () => {
    const base = { a: { b: 1 } };
    await out("transform.set", '{input: "{{ input.base }}", fields: {"a.b": 2}}', { base });
    expect(base).toEqual({ a: { b: 1 } });
  });
});

describe("transform.remove", () => {
  test("removes top-level and dotted fields and array elements", async () => {
    expect(await out("transform.remove", '{input: "{{ input.o }}", fields: [secret, "nested.token", "list.0", missing.path]}', { o: { secret: 1, keep: 2, nested: { token: "t", id: 3 }, list: ["x", "y"] } })).toEqual({ keep: 2, nested: { id: 3 }, list: ["y"] });
  });
  test("fields must be a non-empty list", async () => {
    expect(issuesOf(oneStep("transform.remove", "{input: {a: 1}, fields: []}"))[0].field).toBe("steps.0.with.fields");
    expect((await failure("transform.remove", '{input: {a: 1}, fields: "{{ input.f }}"}', { f: [] })).code).toBe("invalid_config");
  });
});

describe("transform.combine", () => {
  const inputs = { a: { x: 1, deep: { p: 1, arr: [1] } }, b: { y: 2, deep: { q: 2, arr: [2] } } };
  test("merge is shallow, later wins", async () => {
    expect(await out("transform.combine", '{inputs: ["{{ input.a }}", "{{ input.b }}"], mode: merge}', inputs)).toEqual({ x: 1, y: 2, deep: { q: 2, arr: [2] } });
  });
  test("deep merges nested objects, arrays replaced", async () => {
    expect(await out("transform.combine", '{inputs: ["{{ input.a }}", "{{ input.b }}"], mode: deep}', inputs)).toEqual({ x: 1, y: 2, deep: { p: 1, q: 2, arr: [2] } });
  });
  test("concat joins arrays and appends other values", async () => {
    expect(await out("transform.combine", '{inputs: [[1, 2], [3], 4, null], mode: concat}')).toEqual([1, 2, 3, 4]);
  });
  test("merge of a non-object fails naming the input", async () => {
    const e = await failure("transform.combine", "{inputs: [{a: 1}, [1]]}");
    expect(e.message).toContain("inputs.1");
  });
});

describe("transform.split", () => {
  test("strings split at a separator (default newline), with trim and removeEmpty", async () => {
    expect(await out("transform.split", '{input: "a\\nb\\n"}')).toEqual({ items: ["a", "b", ""], count: 3 });
    expect(await out("transform.split", '{input: " a, b ,, c", separator: ",", trim: true, removeEmpty: true}')).toEqual({ items: ["a", "b", "c"], count: 3 });
  });
  test("arrays split into chunks of size", async () => {
    expect(await out("transform.split", '{input: [1, 2, 3, 4, 5], size: 2}')).toEqual({ items: [[1, 2], [3, 4], [5]], count: 3 });
  });
});

describe("transform.regex-extract", () => {
  test("all matches with captures, named groups and index; first", async () => {
    const r = (await out("transform.regex-extract", '{input: "INV-12 and INV-345", pattern: "INV-(?<num>\\\\d+)"}')) as Record<string, unknown>;
    expect(r.count).toBe(2);
    expect(r.matches).toEqual([
      { match: "INV-12", index: 0, captures: ["12"], groups: { num: "12" } },
      { match: "INV-345", index: 11, captures: ["345"], groups: { num: "345" } },
    ]);
    expect(r.first).toEqual({ match: "INV-12", index: 0, captures: ["12"], groups: { num: "12" } });
  });
  test("all: false stops at the first; flags apply; no match gives first null", async () => {
    expect(((await out("transform.regex-extract", '{input: "a A a", pattern: "a", flags: i, all: false}')) as { count: number }).count).toBe(1);
    expect(((await out("transform.regex-extract", '{input: "a A a", pattern: "a", flags: i}')) as { count: number }).count).toBe(3);
    expect(await out("transform.regex-extract", '{input: "abc", pattern: "z"}')).toEqual({ matches: [], count: 0, first: null });
  });
  test("a catastrophically backtracking pattern is stopped at its time limit", async () => {
    const e = await failure("transform.regex-extract", '{input: "{{ input.s }}", pattern: "^(a+)+$", timeoutMs: 300}', { s: `${"a".repeat(40)}!` });
    expect(e.code).toBe("regex_timeout");
  });

  test("the unicode flag works; duplicate flags are refused", async () => {
    expect(((await out("transform.regex-extract", '{input: "día 😀", pattern: "\\\\p{Emoji_Presentation}", flags: u}')) as { first: { match: string } }).first.match).toBe("😀");
    expect(issuesOf(oneStep("transform.regex-extract", '{input: "a", pattern: "a", flags: ii}'))[0].field).toBe("steps.0.with.flags");
  });

  test("an invalid pattern fails the step", async () => {
    expect((await failure("transform.regex-extract", '{input: "a", pattern: "(("}')).message).toContain("invalid pattern");
  });
});

describe("transform.text-chunker", () => {
  test("chunks of at most chunkSize, cut at whitespace, with overlap; chunks cover the text", async () => {
    const text = "alpha beta gamma delta epsilon zeta eta theta";
    const r = (await out("transform.text-chunker", "{text: '{{ input.t }}', chunkSize: 12, overlap: 0}", { t: text })) as { chunks: { text: string; start: number; end: number; index: number }[]; count: number };
    // "epsilon zeta" fills 12 exactly with no break in its last 20 %, so it is cut hard there.
    expect(r.chunks.map((c) => c.text)).toEqual(["alpha beta ", "gamma delta ", "epsilon zeta", " eta theta"]);
    expect(r.chunks.map((c) => c.text).join("")).toBe(text);
    expect(r.count).toBe(4);
    const o = (await out("transform.text-chunker", "{text: '{{ input.t }}', chunkSize: 12, overlap: 4}", { t: text })) as typeof r;
    for (let i = 1; i < o.chunks.length; i++) expect(o.chunks[i].start).toBe(o.chunks[i - 1].end - 4);
    expect(o.chunks.every((c) => c.text.length <= 12)).toBe(true);
  });
  test("prefers paragraph breaks; hard cuts text without breaks", async () => {
    const r = (await out("transform.text-chunker", "{text: '{{ input.t }}', chunkSize: 10}", { t: "aaaaaaaaaaaaaaaaaaaaaaaaa" })) as { chunks: { text: string }[] };
    expect(r.chunks.map((c) => c.text)).toEqual(["aaaaaaaaaa", "aaaaaaaaaa", "aaaaa"]);
    const p = (await out("transform.text-chunker", "{text: '{{ input.t }}', chunkSize: 20}", { t: "aaaaaaaaaaaaaaaa\n\nb c d e f" })) as { chunks: { text: string }[] };
    expect(p.chunks[0].text).toBe("aaaaaaaaaaaaaaaa\n\n");
  });
  test("overlap must be smaller than chunkSize", async () => {
    expect(issuesOf(oneStep("transform.text-chunker", "{text: abc, chunkSize: 5, overlap: 5}"))[0].message).toContain("overlap must be smaller");
    expect((await failure("transform.text-chunker", "{text: abc, chunkSize: 5, overlap: '{{ input.o }}'}", { o: 5 })).code).toBe("invalid_config");
  });
});

// A workbook written by hand (not by the code under test): shared strings, inline string, number,
// boolean, a formula with a cached result, an empty cell, and a second sheet.
function handMadeXlsx(): Uint8Array {
  const files: Record<string, string> = {
    "[Content_Types].xml": `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/worksheets/sheet2.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>`,
    "_rels/.rels": `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    "xl/workbook.xml": `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Orders" sheetId="1" r:id="rId1"/><sheet name="Notes" sheetId="2" r:id="rId2"/></sheets></workbook>`,
    "xl/_rels/workbook.xml.rels": `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet2.xml"/><Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
    "xl/sharedStrings.xml": `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="4" uniqueCount="4"><si><t>item</t></si><si><t>qty</t></si><si><t>paid</t></si><si><t>Widget</t></si></sst>`,
    "xl/worksheets/sheet1.xml": `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c></row><row r="2"><c r="A2" t="s"><v>3</v></c><c r="B2"><v>3</v></c><c r="C2" t="b"><v>1</v></c></row><row r="3"><c r="A3" t="inlineStr"><is><t>Gadget</t></is></c><c r="B3"><f>B2*2</f><v>6</v></c></row></sheetData></worksheet>`,
    "xl/worksheets/sheet2.xml": `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>hello</t></is></c></row></sheetData></worksheet>`,
  };
  return zipSync(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, strToU8(v)])));
}

describe("XLSX", () => {
  test("xlsx-to-json reads a hand-made workbook: header rows, types, formulas' results, sheets", async () => {
    const services = testServices();
    services.files.stored.set("file_in", handMadeXlsx());
    const r = await run(
      `name: t
inputs: [{name: sheet, type: file}]
steps:
  - {name: read, type: transform.xlsx-to-json, with: {file: "{{ input.sheet }}"}}
  - {name: raw, type: transform.xlsx-to-json, with: {file: "{{ input.sheet }}", sheet: Notes, header: false}}
`,
      { sheet: { $file: "file_in", filename: "in.xlsx", contentType: "application/octet-stream", size: 1 } },
      { services },
    );
    expect(r.status).toBe("completed");
    const out = r.output as { read: { rows: unknown[]; sheets: { name: string }[] }; raw: { rows: unknown[] } };
    expect(out.read.rows).toEqual([
      { item: "Widget", qty: 3, paid: true },
      { item: "Gadget", qty: 6, paid: null },
    ]);
    expect(out.read.sheets.map((s) => s.name)).toEqual(["Orders", "Notes"]);
    expect(out.raw.rows).toEqual([["hello"]]);
  });

  test("json-to-xlsx writes an artifact whose sheet XML holds the header and values", async () => {
    const services = testServices();
    const r = await run(
      `name: t
steps:
  - name: write
    type: transform.json-to-xlsx
    with: {rows: "{{ input.rows }}", sheetName: Orders, filename: report}
`,
      { rows: [{ item: "Widget", qty: 3 }, { item: "Gadget", qty: 6, note: { x: 1 } }] },
      { services },
    );
    expect(r.status).toBe("completed");
    const written = services.files.written[0];
    expect(written).toMatchObject({ name: "report.xlsx", stepName: "write", contentType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" });
    expect((r.output as { write: unknown }).write).toEqual({ file: written.ref, sheets: [{ name: "Orders", rowCount: 2 }] });
    const zip = unzipSync(written.bytes);
    const workbook = new TextDecoder().decode(zip["xl/workbook.xml"]);
    expect(workbook).toContain('name="Orders"');
    const sheet = new TextDecoder().decode(zip["xl/worksheets/sheet1.xml"]);
    const strings = new TextDecoder().decode(zip["xl/sharedStrings.xml"] ?? new Uint8Array());
    for (const s of ["item", "qty", "note", "Widget", "Gadget"]) expect(strings + sheet).toContain(s);
    expect(strings + sheet).toContain("{&quot;x&quot;:1}");
    expect(sheet).toContain("<v>6</v>");
  });

  test("round trip: several sheets written, then read back by a later step", async () => {
    const r = await run(
      `name: t
steps:
  - name: write
    type: transform.json-to-xlsx
    with:
      sheets:
        - {name: A, rows: [{k: 1, s: x}], columns: [s, k]}
        - {name: B, rows: [{b: true}]}
  - {name: read, type: transform.xlsx-to-json, with: {file: "{{ steps.write.output.file }}", sheet: B}}
output: {a: "{{ steps.read.output.sheets[0].rows }}", b: "{{ steps.read.output.rows }}"}
`,
    );
    expect(r.output).toEqual({ a: [{ s: "x", k: 1 }], b: [{ b: true }] });
  });

  test("bad input: not an XLSX, unknown sheet, rows and sheets together", async () => {
    const services = testServices();
    services.files.stored.set("file_txt", strToU8("plain text"));
    const bad = await run(`name: t\nsteps: [{name: r, type: transform.xlsx-to-json, with: {file: {$file: file_txt}}}]\n`, {}, { services });
    expect(bad.error?.code).toBe("invalid_file");
    services.files.stored.set("file_ok", handMadeXlsx());
    const missing = await run(`name: t\nsteps: [{name: r, type: transform.xlsx-to-json, with: {file: {$file: file_ok}, sheet: Nope}}]\n`, {}, { services });
    expect(missing.error?.message).toContain("Orders, Notes");
    const both = await run(`name: t\nsteps: [{name: w, type: transform.json-to-xlsx, with: {rows: "{{ input.r }}", sheets: "{{ input.s }}"}}]\n`, { r: [], s: [{ name: "x", rows: [] }] });
    expect(both.error?.message).toContain("exactly one of rows or sheets");
  });
});
