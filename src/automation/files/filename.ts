// File names come from clients and go back out in Content-Disposition: refuse anything that could be
// read as a path, and encode what goes into headers so no name can inject one.
import { Invalid } from "../../kernel/errors";
import { FILENAME_MAX } from "./model";

/**
 * A stored file name: a single path segment without control characters. `../x`, `a/b`, `C:\x`,
 * `.`/`..` and NUL are refused with a 400 rather than silently rewritten, so the caller learns.
 */
export function checkFilename(raw: string, field = "filename"): string {
  const name = raw.normalize("NFC").trim();
  if (name === "") throw Invalid("file name is empty", { field, code: "invalid_filename" });
  if ([...name].length > FILENAME_MAX) throw Invalid(`file name is longer than ${FILENAME_MAX} characters`, { field, code: "invalid_filename" });
  // biome-ignore lint: control characters are exactly what this refuses
  if (/[\u0000-\u001f\u007f]/.test(name)) throw Invalid("file name contains control characters", { field, code: "invalid_filename" });
  if (/[/\\]/.test(name) || name === "." || name === ".." || /^[a-z]:/i.test(name)) {
    throw Invalid("file name must not contain a path (/, \\, .., drive letters)", { field, code: "invalid_filename" });
  }
  return name;
}

/** `attachment; filename="ascii"; filename*=UTF-8''utf8`, safe for any stored name. */
export function contentDisposition(name: string, disposition: "attachment" | "inline" = "attachment"): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, "_").replace(/["\\%]/g, "_");
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${disposition}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
