// `--statusline`: one line from cached results. Per provider, the tightest window (least remaining
// relative to its limit), formatted with a template.
import { DEFAULT_FORMAT } from "../config/defaults";
import type { ProviderResult, QuotaWindow } from "../model/types";

export { DEFAULT_FORMAT };

// Nerd Font glyphs (a prompt font usually has them); `--no-icons` leaves them out.
const icons: Record<string, string> = {
  claude: "\u{f06a9}",
  codex: "\u{f09d1}",
  antigravity: "\u{f02ad}",
  copilot: "\u{f4b8}",
  cursor: "\u{f0185}",
  zai: "\u{f0b33}",
  kimi: "\u{f0f3c}",
  minimax: "\u{f0b3e}",
  deepseek: "\u{f0fb5}",
  siliconflow: "\u{f061a}",
  openrouter: "\u{f0484}",
  grok: "\u{f0e9a}",
};

export function tightest(windows: QuotaWindow[], hidden: string[] = []): QuotaWindow | undefined {
  let best: QuotaWindow | undefined;
  for (const w of windows) {
    if (hidden.includes(w.window) || !(w.limit > 0)) continue;
    if (!best || w.remaining / w.limit < best.remaining / best.limit) best = w;
  }
  return best;
}

/** A number for a prompt: at most two decimals; from 100000 on, compact (Z.ai counts tokens: 600M/800M). */
export function fmtNum(n: number): string {
  const abs = Math.abs(n);
  if (abs >= 1e5) {
    const [div, suffix] = abs >= 1e9 ? [1e9, "B"] : abs >= 1e6 ? [1e6, "M"] : [1e3, "k"];
    const v = n / div;
    return `${Math.abs(v) >= 100 ? Math.round(v) : Math.round(v * 10) / 10}${suffix}`;
  }
  return Number.isInteger(n) ? String(n) : String(Math.round(n * 100) / 100);
}

/** "3h12m", "2d4h", "45m"; "" when unknown or past. */
export function untilReset(resetAt: string | null, now: Date): string {
  if (!resetAt) return "";
  const ms = Date.parse(resetAt) - now.getTime();
  if (!(ms > 0)) return "";
  const m = Math.floor(ms / 60_000);
  const d = Math.floor(m / 1440);
  const h = Math.floor((m % 1440) / 60);
  if (d > 0) return `${d}d${h}h`;
  if (h > 0) return `${h}h${m % 60}m`;
  return `${m % 60}m`;
}

/**
 * `%pace`: "100% in 2h10m" when this pace runs out before the reset, else "76% by reset" (the projected
 * use at the reset); "" without enough history or a reset time.
 */
export function paceText(w: QuotaWindow, now: Date): string {
  const p = w.pace;
  if (!p || p.before_reset === null || p.projected_used === null) return "";
  if (p.before_reset && p.exhausts_at) return `100% in ${untilReset(p.exhausts_at, now) || "0m"}`;
  return `${Math.round((p.projected_used / w.limit) * 100)}% by reset`;
}

const PLACEHOLDERS = ["provider", "remaining", "limit", "used", "window", "percent", "reset", "pace", "cost_today"] as const;
type Placeholder = (typeof PLACEHOLDERS)[number];

/** Expands `%name` placeholders; any other `%` stays as written. A scan, not a regex replace with a
 * callback: the prompt pays for every builtin's first call. */
export function fill(format: string, values: Record<Placeholder, () => string>): string {
  // `{cost_today}` is the same placeholder in the spelling the usage docs use
  if (format.includes("{cost_today}")) format = format.split("{cost_today}").join("%cost_today");
  let out = "";
  let from = 0;
  for (let at = format.indexOf("%"); at !== -1; at = format.indexOf("%", at + 1)) {
    for (const p of PLACEHOLDERS) {
      if (!format.startsWith(p, at + 1)) continue;
      out += format.slice(from, at) + values[p]();
      from = at + 1 + p.length;
      at = from - 1;
      break;
    }
  }
  return out + format.slice(from);
}

export interface StatuslineOptions {
  format: string;
  icons: boolean;
  now: Date;
  hidden: (provider: string) => string[];
  update?: string | null;
  /** USD spent today per provider (from the agents' logs, see usage-today.json); null when unknown. */
  costToday?: Record<string, number> | null;
}

export function statusline(results: ProviderResult[], o: StatuslineOptions): string {
  const parts: string[] = [];
  for (const r of results) {
    if (r.status !== "available") continue;
    const w = tightest(r.windows, o.hidden(r.provider));
    if (!w) continue;
    const name = o.icons && icons[r.provider] ? `${icons[r.provider]} ${r.name}` : r.name;
    const values: Record<Placeholder, () => string> = {
      provider: () => name,
      remaining: () => fmtNum(w.remaining),
      limit: () => fmtNum(w.limit),
      used: () => fmtNum(w.used),
      window: () => w.window,
      percent: () => `${Math.round((w.used / w.limit) * 100)}%`,
      reset: () => untilReset(w.reset_at, o.now),
      pace: () => paceText(w, o.now),
      cost_today: () => {
        const c = o.costToday?.[r.provider];
        return c === undefined ? "" : `$${c.toFixed(2)}`;
      },
    };
    parts.push(fill(o.format, values).trim());
  }
  if (o.update) parts.push(`update ${o.update}`);
  return parts.join(" | ");
}
