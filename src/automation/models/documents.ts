// Local text extraction for AI steps: text PDFs (unpdf), DOCX (pizzip + the document XML), XLSX
// (exceljs) and plain text. Images, and PDFs without a text layer (scans), have no local text: the
// caller sends them to a vision model instead.

export interface ExtractedPage {
  page: number;
  text: string;
}

export type Extraction =
  | { kind: "text"; pages: ExtractedPage[] }
  /** No local text: these images (or the file itself) go to a vision model. */
  | { kind: "image"; images: { mimeType: string; bytes: Uint8Array }[] };

const PDF = "application/pdf";
const DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
const XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
const IMAGES = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/** Content type from the declared one, else the name's extension, else the bytes' magic numbers. */
export function sniffType(contentType: string | undefined, filename: string | undefined, bytes: Uint8Array): string {
  const ext = (filename ?? "").toLowerCase().split(".").pop() ?? "";
  const byExt: Record<string, string> = { pdf: PDF, docx: DOCX, xlsx: XLSX, png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp", txt: "text/plain", md: "text/markdown", csv: "text/csv", json: "application/json" };
  const declared = (contentType ?? "").split(";")[0].trim().toLowerCase();
  if (declared && declared !== "application/octet-stream") return declared;
  if (byExt[ext]) return byExt[ext];
  const head = String.fromCharCode(...bytes.slice(0, 8));
  if (head.startsWith("%PDF")) return PDF;
  if (head.startsWith("\x89PNG")) return "image/png";
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return "image/jpeg";
  return declared || "application/octet-stream";
}

const decodeXml = (s: string) =>
  s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&#(\d+);/g, (_, n) => String.fromCodePoint(Number(n))).replace(/&amp;/g, "&");

/** Minimal PNG encoder for raw pixels pdf.js hands out (8-bit gray, RGB or RGBA). */
export function png(width: number, height: number, channels: number, pixels: Uint8Array | Uint8ClampedArray): Uint8Array {
  const { zlibSync } = require("fflate") as typeof import("fflate");
  const row = width * channels;
  const raw = new Uint8Array((row + 1) * height);
  for (let y = 0; y < height; y++) raw.set(pixels.subarray(y * row, (y + 1) * row), y * (row + 1) + 1);
  const chunk = (type: string, data: Uint8Array) => {
    const out = new Uint8Array(12 + data.length);
    const view = new DataView(out.buffer);
    view.setUint32(0, data.length);
    out.set(new TextEncoder().encode(type), 4);
    out.set(data, 8);
    view.setUint32(8 + data.length, Bun.hash.crc32(out.subarray(4, 8 + data.length)));
    return out;
  };
  const ihdr = new Uint8Array(13);
  const v = new DataView(ihdr.buffer);
  v.setUint32(0, width);
  v.setUint32(4, height);
  ihdr.set([8, channels === 1 ? 0 : channels === 3 ? 2 : 6, 0, 0, 0], 8);
  const parts = [new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr), chunk("IDAT", zlibSync(raw)), chunk("IEND", new Uint8Array())];
  return Buffer.concat(parts);
}

/** The images a scanned PDF's pages consist of, as PNGs, for a vision model. */
async function pdfScans(bytes: Uint8Array): Promise<{ mimeType: string; bytes: Uint8Array }[]> {
  const { extractImages, getDocumentProxy } = await import("unpdf");
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  try {
    const out: { mimeType: string; bytes: Uint8Array }[] = [];
    for (let p = 1; p <= pdf.numPages; p++) {
      for (const img of await extractImages(pdf, p)) out.push({ mimeType: "image/png", bytes: png(img.width, img.height, img.channels, img.data) });
    }
    return out;
  } finally {
    await pdf.loadingTask.destroy();
  }
}

async function pdfPages(bytes: Uint8Array): Promise<ExtractedPage[]> {
  const { extractText, getDocumentProxy } = await import("unpdf");
  // pdf.js takes ownership of the buffer it is given.
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  try {
    const { text } = await extractText(pdf, { mergePages: false });
    return text.map((t, i) => ({ page: i + 1, text: t.trim() }));
  } finally {
    await pdf.loadingTask.destroy();
  }
}

/** Paragraphs of word/document.xml; explicit page breaks start a new page. */
async function docxPages(bytes: Uint8Array): Promise<ExtractedPage[]> {
  const PizZip = (await import("pizzip")).default;
  const xml = new PizZip(bytes).file("word/document.xml")?.asText();
  if (xml === undefined) throw new Error("not a DOCX file (no word/document.xml)");
  const pages: string[][] = [[]];
  for (const para of xml.match(/<w:p[ >][\s\S]*?<\/w:p>|<w:p\/>/g) ?? []) {
    let line = "";
    for (const tok of para.match(/<w:t(?:\s[^>]*)?>[^<]*<\/w:t>|<w:tab\/>|<w:br(?:\s[^>]*)?\/>/g) ?? []) {
      if (tok.startsWith("<w:tab")) line += "\t";
      else if (tok.startsWith("<w:br")) {
        if (/w:type="page"/.test(tok)) {
          pages[pages.length - 1].push(line);
          pages.push([]);
          line = "";
        } else line += "\n";
      } else line += decodeXml(tok.replace(/<[^>]+>/g, ""));
    }
    pages[pages.length - 1].push(line);
  }
  return pages.map((lines, i) => ({ page: i + 1, text: lines.join("\n").trim() }));
}

/** One page per worksheet: rows as tab-separated cell texts. */
async function xlsxPages(bytes: Uint8Array): Promise<ExtractedPage[]> {
  const ExcelJS = (await import("exceljs")).default;
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
  return wb.worksheets.map((ws, i) => {
    const rows: string[] = [];
    ws.eachRow((row) => {
      const cells = (row.values as unknown[]).slice(1).map((c) => (c === null || c === undefined ? "" : typeof c === "object" ? ((c as { text?: string; result?: unknown }).text ?? String((c as { result?: unknown }).result ?? "")) : String(c)));
      rows.push(cells.join("\t"));
    });
    return { page: i + 1, text: `# ${ws.name}\n${rows.join("\n")}`.trim() };
  });
}

export async function extractDocument(bytes: Uint8Array, contentType: string): Promise<Extraction> {
  if (IMAGES.includes(contentType)) return { kind: "image", images: [{ mimeType: contentType, bytes }] };
  if (contentType === PDF) {
    const pages = await pdfPages(bytes);
    // A PDF without a text layer is a scan: its pages need a vision model.
    if (pages.every((p) => p.text === "")) {
      const images = await pdfScans(bytes);
      if (!images.length) throw new Error("the PDF has neither a text layer nor page images");
      return { kind: "image", images };
    }
    return { kind: "text", pages };
  }
  if (contentType === DOCX) return { kind: "text", pages: await docxPages(bytes) };
  if (contentType === XLSX) return { kind: "text", pages: await xlsxPages(bytes) };
  if (contentType.startsWith("text/") || contentType === "application/json" || contentType === "application/xml") {
    return { kind: "text", pages: [{ page: 1, text: new TextDecoder().decode(bytes) }] };
  }
  throw new Error(`cannot read ${contentType} files (supported: PDF, DOCX, XLSX, text, PNG/JPEG/GIF/WebP images)`);
}
