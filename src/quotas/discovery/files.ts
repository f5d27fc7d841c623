// Reading other tools' credential files: read-only, tolerant of absence and junk. Nothing here writes.
import { join, xdgDataHome, type Ctx } from "../core/context";
import { numAt, str } from "../providers/provider";

// node:fs on first use only (see context.ts).
const readFileSync = (path: string, enc: "utf8") => (require("node:fs") as typeof import("node:fs")).readFileSync(path, enc);

/** Parsed JSON of a file, or undefined when it is missing or not JSON. */
export function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

/**
 * A key file: an `api_key=`/`token=` line wins; otherwise the first non-empty line that is not a
 * comment. Surrounding quotes are dropped.
 */
export function parseKeyFile(text: string): string | undefined {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#") && !l.startsWith("//"));
  const unquote = (s: string) => s.trim().replace(/^(["'])(.*)\1$/, "$2").trim();
  for (const l of lines) {
    const m = /^(?:export\s+)?(api_key|apikey|token|key)\s*[=:]\s*(.+)$/i.exec(l);
    if (m && unquote(m[2])) return unquote(m[2]);
  }
  const first = lines[0];
  return first ? unquote(first) || undefined : undefined;
}

export function readKeyFile(path: string): string | undefined {
  try {
    return parseKeyFile(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

export const opencodeAuthPath = (ctx: Ctx) => join(xdgDataHome(ctx), "opencode", "auth.json");

/** An opencode auth.json slot: `{"type": "oauth", "access", "expires"}` or `{"type": "api", "key"}`. */
export function opencodeSlot(json: unknown, slot: string): { token: string; expiresAt?: number; accountId?: string } | undefined {
  if (!json || typeof json !== "object") return undefined;
  const s = (json as Record<string, unknown>)[slot];
  if (!s || typeof s !== "object") return undefined;
  const type = str(s, "type");
  if (type === "api") {
    const key = str(s, "key");
    return key ? { token: key } : undefined;
  }
  const access = str(s, "access");
  if (!access) return undefined;
  return { token: access, expiresAt: numAt(s, "expires"), accountId: str(s, "accountId") };
}
