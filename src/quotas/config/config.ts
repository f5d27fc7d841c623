// config.toml: every table of the spec, validated with valibot. A missing file means defaults; an
// invalid one yields one line naming file, line and problem, and the defaults.
import * as v from "valibot";
import { DEFAULT_AUTO_REFRESH_SECONDS, defaults, type Config, type StatuslineFormat } from "./defaults";
import { configFile, tilde, type Ctx } from "../core/context";
import { identify as lookup } from "../model/names";

export { DEFAULT_AUTO_REFRESH_SECONDS, defaults, type Config, type ProfileEntry } from "./defaults";

// Built on first use, like the parser: a prompt with no config file never pays for them.
const makeSchema = () => {
  const names = v.array(v.string());
  const providerName = v.pipe(
    v.string(),
    v.check((s) => s === "*" || lookup(s.split(":")[0]) !== undefined, (i) => `unknown provider "${String(i.input)}"`),
  );

  const lineFormat = { format: v.optional(v.string()), icons: v.optional(v.boolean()), providers: v.optional(v.array(providerName)) };
  const Schema = v.strictObject({
    tui: v.optional(
      v.strictObject({
        auto_refresh: v.optional(v.union([v.boolean(), v.pipe(v.number(), v.minValue(0))])),
        refresh_on_start: v.optional(v.boolean()),
      }),
    ),
    providers: v.optional(v.strictObject({ enabled: v.optional(v.array(providerName)), disabled: v.optional(v.array(providerName)) })),
    favorites: v.optional(v.strictObject({ providers: v.optional(names) })),
    quota_preferences: v.optional(
      v.record(v.string(), v.strictObject({ favorites: v.optional(names), hidden: v.optional(names) })),
    ),
    profiles: v.optional(
      v.strictObject({
        autodetect: v.optional(v.boolean()),
        entries: v.optional(
          v.record(
            v.pipe(v.string(), v.regex(/^[a-z-]+:[^:\s]+$/, 'profile entries are named "provider:profile"')),
            v.strictObject({ canonical: v.optional(v.string()), name: v.optional(v.string()), enabled: v.optional(v.boolean()) }),
          ),
        ),
      }),
    ),
    copilot: v.optional(v.strictObject({ token: v.optional(v.string()) })),
    endpoints: v.optional(v.record(v.string(), v.pipe(v.string(), v.url("endpoint must be a URL")))),
    statusline: v.optional(
      v.strictObject({
        ...lineFormat,
        formats: v.optional(v.record(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]+$/, "format names are letters, digits, - and _")), v.strictObject(lineFormat))),
      }),
    ),
    alerts: v.optional(
      v.strictObject({
        thresholds: v.optional(v.array(v.pipe(v.number(), v.minValue(1), v.maxValue(100)))),
        notify: v.optional(v.boolean()),
      }),
    ),
  });
  return Schema;
};
let schema: ReturnType<typeof makeSchema> | undefined;

/** TOML parsing, loaded on first use: a prompt with no config file never pays for the parser. */
export function parseToml(text: string): unknown {
  const toml = require("toml") as typeof import("toml");
  return toml.parse(text);
}

/** Canonical provider id for a config name or alias, keeping a `:profile` suffix. */
function canonical(name: string): string {
  const [p, ...rest] = name.split(":");
  const id = lookup(p)?.id ?? p;
  return rest.length ? `${id}:${rest.join(":")}` : id;
}

/** Turns parsed TOML into a Config; throws the first problem as `{ path, message }`. */
export function fromToml(data: unknown): Config {
  const r = v.safeParse((schema ??= makeSchema()), data);
  if (!r.success) {
    const issue = r.issues[0];
    throw { path: (issue.path ?? []).map((p) => String(p.key)), message: issue.message };
  }
  const c = r.output;
  const d = defaults();
  const auto = c.tui?.auto_refresh;
  const prefs: Config["quotaPreferences"] = {};
  for (const [k, p] of Object.entries(c.quota_preferences ?? {})) {
    prefs[canonical(k)] = { favorites: p.favorites ?? [], hidden: p.hidden ?? [] };
  }
  const entries: Config["profiles"]["entries"] = {};
  for (const [k, e] of Object.entries(c.profiles?.entries ?? {})) entries[canonical(k)] = e;
  const endpoints: Record<string, string> = {};
  for (const [k, url] of Object.entries(c.endpoints ?? {})) endpoints[canonical(k)] = url;
  return {
    tui: {
      autoRefreshSeconds: auto === undefined ? d.tui.autoRefreshSeconds : auto === true ? DEFAULT_AUTO_REFRESH_SECONDS : auto === false ? 0 : auto,
      refreshOnStart: c.tui?.refresh_on_start ?? true,
    },
    providers: {
      enabled: (c.providers?.enabled ?? ["*"]).map(canonical),
      disabled: (c.providers?.disabled ?? []).map(canonical),
    },
    favorites: (c.favorites?.providers ?? []).map(canonical),
    quotaPreferences: prefs,
    profiles: { autodetect: c.profiles?.autodetect ?? true, entries },
    copilotToken: c.copilot?.token,
    endpoints,
    statusline: {
      ...lineFormatOf(c.statusline ?? {}, d.statusline),
      formats: Object.fromEntries(Object.entries(c.statusline?.formats ?? {}).map(([name, f]) => [name, lineFormatOf(f, d.statusline)])),
    },
    alerts: {
      thresholds: [...new Set(c.alerts?.thresholds ?? [])].sort((a, b) => a - b),
      notify: c.alerts?.notify ?? true,
    },
  };
}

function lineFormatOf(f: { format?: string; icons?: boolean; providers?: string[] }, d: StatuslineFormat): StatuslineFormat {
  return { format: f.format ?? d.format, icons: f.icons ?? d.icons, ...(f.providers ? { providers: f.providers.map(canonical) } : {}) };
}

/** The 1-based line where a table path/key is written, best effort (for the one-line error). */
export function lineOf(text: string, path: string[]): number {
  const lines = text.split("\n");
  const norm = (s: string) => s.replace(/["'\s]/g, "");
  let best = 0;
  for (let depth = path.length; depth > 0 && !best; depth--) {
    const table = path.slice(0, depth - 1).join(".");
    const key = path[depth - 1];
    let inTable = table === "";
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i].trim();
      const header = /^\[\[?(.+?)\]\]?\s*(#.*)?$/.exec(l);
      if (header) {
        const h = norm(header[1]);
        if (h === norm(path.slice(0, depth).join("."))) { best = i + 1; break; }
        inTable = h === norm(table);
        continue;
      }
      if (inTable && new RegExp(`^["']?${key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}["']?\\s*=`).test(l)) { best = i + 1; break; }
    }
  }
  return best || 1;
}

export interface Loaded {
  config: Config;
  /** One line for stderr when the file was invalid (defaults are in use). */
  warning?: string;
  path: string;
}

export function loadConfig(ctx: Ctx): Loaded {
  const path = configFile(ctx);
  let text: string;
  try {
    text = (require("node:fs") as typeof import("node:fs")).readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { config: defaults(), path };
    return { config: defaults(), path, warning: `${tilde(ctx, path)}: cannot read (${(err as Error).message}); using defaults` };
  }
  return parseConfig(text, tilde(ctx, path), path);
}

export function parseConfig(text: string, shown: string, path = shown): Loaded {
  let data: unknown;
  try {
    data = parseToml(text);
  } catch (err) {
    const e = err as { location?: { start?: { line?: number } }; message?: string };
    const line = e.location?.start?.line ?? 1;
    const msg = (e.message ?? "syntax error").split("\n")[0].slice(0, 160);
    return { config: defaults(), path, warning: `${shown}:${line}: invalid TOML: ${msg}; using defaults` };
  }
  try {
    return { config: fromToml(data), path };
  } catch (err) {
    const e = err as { path: string[]; message: string };
    const where = e.path.length ? ` ${e.path.join(".")}:` : "";
    return { config: defaults(), path, warning: `${shown}:${lineOf(text, e.path)}:${where} ${e.message}; using defaults` };
  }
}
