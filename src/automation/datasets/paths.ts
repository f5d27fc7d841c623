// Example file paths and sizes: plain rules with no database, shared by the service and the archive
// staging that runs on a worker thread (stage.ts).
import { Invalid } from "../../kernel/errors";

/** Per-file ceiling of example uploads and archive entries. */
export const EXAMPLE_FILE_MAX_BYTES = 100 * 1024 * 1024;
const PATH_MAX = 512;

/** A path inside an example folder: relative, `/`-separated, no empty, `.` or `..` segments, no NUL or `\`. */
export function checkPath(raw: string, field = "path"): string {
  const bad = (why: string) => Invalid(`path ${JSON.stringify(raw.slice(0, 100))} ${why}`, { field, code: "invalid_path" });
  if (raw === "") throw bad("is empty");
  if (raw.length > PATH_MAX) throw bad(`is longer than ${PATH_MAX} characters`);
  if (raw.startsWith("/") || raw.startsWith("\\")) throw bad("must not start with / or \\");
  if (raw.includes("\0")) throw bad("must not contain NUL");
  if (raw.includes("\\")) throw bad("must use / as the separator");
  // biome-ignore lint: control characters are exactly what this refuses
  if (/[\u0000-\u001f\u007f]/.test(raw)) throw bad("must not contain control characters");
  for (const seg of raw.split("/")) {
    if (seg === "") throw bad("has an empty segment");
    if (seg === "." || seg === "..") throw bad("must not contain . or .. segments");
  }
  return raw.normalize("NFC");
}
