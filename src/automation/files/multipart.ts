// A streaming multipart/form-data reader. `request.formData()` in Bun reads the whole body into
// memory first; this hands each part out as a ReadableStream while the request is still arriving,
// so a 2 GiB upload costs a few hundred KiB of memory. A body that ends before the closing boundary
// errors the current part (and the generator) with a 400.
import { Invalid } from "../../kernel/errors";
import { unstorable, unstorableMessage } from "../../kernel/text";

export interface Part {
  name: string;
  filename: string | null;
  contentType: string | null;
  body: ReadableStream<Uint8Array>;
}

const CRLF = Buffer.from("\r\n");
const HEADER_END = Buffer.from("\r\n\r\n");
const MAX_HEADER_BYTES = 16 * 1024;

const truncated = () => Invalid("the multipart body ended before its closing boundary", { code: "truncated_body" });
const malformed = (why: string) => Invalid(`malformed multipart body: ${why}`, { code: "malformed_multipart" });

/** The boundary of a `multipart/form-data` Content-Type, or null when it is something else. */
export function multipartBoundary(contentType: string | null): string | null {
  if (!contentType) return null;
  const [mime, ...params] = contentType.split(";");
  if (mime.trim().toLowerCase() !== "multipart/form-data") return null;
  for (const p of params) {
    const m = /^\s*boundary\s*=\s*(?:"([^"]{1,70})"|([^\s;]{1,70}))\s*$/i.exec(p);
    if (m) return m[1] ?? m[2];
  }
  return null;
}

/** Buffered bytes over the request stream; grows only by what has not been handed out yet. */
class Source {
  buf: Buffer = Buffer.alloc(0);
  eof = false;
  private reader: { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> };
  constructor(stream: ReadableStream<Uint8Array>) {
    this.reader = stream.getReader();
  }
  /** Reads one more chunk; false at end of input. */
  async fill(): Promise<boolean> {
    if (this.eof) return false;
    const { done, value } = await this.reader.read();
    if (done || !value) {
      this.eof = true;
      return false;
    }
    this.buf = this.buf.length === 0 ? Buffer.from(value) : Buffer.concat([this.buf, value]);
    return true;
  }
  async need(n: number): Promise<boolean> {
    while (this.buf.length < n) if (!(await this.fill())) return false;
    return true;
  }
  cancel(): void {
    this.reader.cancel().catch(() => {});
  }
}

function parseHeaders(raw: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of raw.split("\r\n")) {
    const i = line.indexOf(":");
    if (i <= 0) throw malformed("bad part header line");
    headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  return headers;
}

/** Parameters of a Content-Disposition value, quoted or not; `filename*` (RFC 5987) wins. */
export function dispositionParams(value: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /;\s*([a-zA-Z0-9_*-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  for (let m = re.exec(value); m; m = re.exec(value)) {
    const key = m[1].toLowerCase();
    // Only \" is unescaped: browsers never backslash-escape, and Windows paths keep their backslashes.
    const v = m[2] !== undefined ? m[2].replace(/\\"/g, '"') : m[3].trim();
    if (key === "filename*") {
      const ext = /^([\w-]+)'[^']*'(.*)$/.exec(v);
      try {
        out.filename = ext ? decodeURIComponent(ext[2]) : v;
      } catch {
        throw malformed("undecodable filename*");
      }
      out["filename*"] = v;
    } else if (!(key === "filename" && out["filename*"] !== undefined)) {
      out[key] = v;
    }
  }
  return out;
}

/**
 * Yields the parts of a multipart body in order. Each part's `body` must be read (or is skipped)
 * before the next part is produced.
 */
export async function* readMultipart(stream: ReadableStream<Uint8Array>, boundary: string, maxParts = 20): AsyncGenerator<Part> {
  const src = new Source(stream);
  const delim = Buffer.from(`\r\n--${boundary}`);
  // Pretend a CRLF precedes the body so the first boundary looks like every other delimiter.
  src.buf = Buffer.from(CRLF);
  try {
    // Preamble: skip to the first delimiter.
    for (;;) {
      const i = src.buf.indexOf(delim);
      if (i >= 0) {
        src.buf = src.buf.subarray(i + delim.length);
        break;
      }
      if (src.buf.length > delim.length) src.buf = src.buf.subarray(src.buf.length - delim.length);
      if (!(await src.fill())) throw src.buf.length <= CRLF.length ? malformed("empty body") : truncated();
    }
    let count = 0;
    for (;;) {
      if (!(await src.need(2))) throw truncated();
      if (src.buf[0] === 0x2d && src.buf[1] === 0x2d) return; // "--": closing delimiter
      // Transport padding (spaces/tabs) may follow a delimiter before its CRLF.
      let j = 0;
      while (j < src.buf.length && (src.buf[j] === 0x20 || src.buf[j] === 0x09)) j++;
      src.buf = src.buf.subarray(j);
      if (!(await src.need(2))) throw truncated();
      if (src.buf[0] !== 0x0d || src.buf[1] !== 0x0a) throw malformed("expected CRLF after a boundary");
      src.buf = src.buf.subarray(2);

      let end = src.buf.indexOf(HEADER_END);
      while (end < 0) {
        if (src.buf.length > MAX_HEADER_BYTES) throw malformed("part headers are too large");
        if (!(await src.fill())) throw truncated();
        end = src.buf.indexOf(HEADER_END);
      }
      const headers = parseHeaders(src.buf.subarray(0, end).toString("utf8"));
      src.buf = src.buf.subarray(end + HEADER_END.length);
      if (++count > maxParts) throw malformed(`more than ${maxParts} parts`);

      const disposition = headers.get("content-disposition");
      if (!disposition || !/^form-data\b/i.test(disposition)) throw malformed("a part lacks Content-Disposition: form-data");
      const params = dispositionParams(disposition);
      if (!params.name) throw malformed("a part has no name");
      // Part names and file names are stored (PostgreSQL refuses NUL): refused like any other text field.
      if (unstorable(params.name)) throw Invalid(unstorableMessage("a part name"), { field: "<root>", code: "invalid_text" });
      // (`invalid_filename` on a file name, as the file routes' own name check answers a NUL.)
      if (params.filename !== undefined && unstorable(params.filename)) throw Invalid(unstorableMessage(`${params.name}.filename`), { field: `${params.name}.filename`, code: "invalid_filename" });

      let finished = false;
      let failure: unknown = null;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          try {
            for (;;) {
              const i = src.buf.indexOf(delim);
              if (i >= 0) {
                if (i > 0) controller.enqueue(src.buf.subarray(0, i));
                src.buf = src.buf.subarray(i + delim.length);
                finished = true;
                controller.close();
                return;
              }
              // Everything except a tail that could be the start of the delimiter is safe to hand out.
              const safe = src.buf.length - (delim.length - 1);
              if (safe > 0) {
                controller.enqueue(src.buf.subarray(0, safe));
                src.buf = src.buf.subarray(safe);
                return;
              }
              if (!(await src.fill())) throw truncated();
            }
          } catch (err) {
            failure = err;
            finished = true;
            controller.error(err);
          }
        },
      });
      yield {
        name: params.name,
        filename: params.filename ?? null,
        contentType: headers.get("content-type") ?? null,
        body,
      };
      if (!finished) {
        // The consumer did not read this part: skip it.
        const reader = body.getReader();
        try {
          while (!(await reader.read()).done);
        } catch {
          // failure holds the cause
        }
      }
      if (failure) throw failure;
    }
  } finally {
    src.cancel();
  }
}

/** A text part's value, bounded. */
export async function readText(part: Part, maxBytes: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of part.body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw Invalid(`field ${part.name} is longer than ${maxBytes} bytes`, { field: part.name });
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.includes("\0")) throw Invalid(unstorableMessage(part.name), { field: part.name, code: "invalid_text" });
  return text;
}
