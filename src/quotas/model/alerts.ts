// `[alerts] thresholds`: a window whose usage crosses a threshold alerts once per window instance, not on
// every refresh. The state per window (highest threshold fired, and the reset time of the window it
// fired in) lives in history.db; a reset (usage dropping below the fired level, or the reset time
// moving on) re-arms it.
import type { HistoryStore } from "../fetch/history";
import type { ProviderResult, QuotaWindow } from "./types";

export interface Alert {
  key: string;
  name: string;
  window: string;
  percent: number;
  threshold: number;
  reset_at: string | null;
}

const RESET_MOVED_MS = 30 * 60_000;

/** The highest threshold at or below `percent` (0 when none is reached). */
export function levelOf(percent: number, thresholds: number[]): number {
  let level = 0;
  for (const t of thresholds) if (percent >= t) level = Math.max(level, t);
  return level;
}

/**
 * Decides, and records, the alerts of one fresh result. Only windows with a limit (percent, requests,
 * tokens, credits) are watched: a balance has no "used" to cross.
 */
export function checkAlerts(store: HistoryStore, r: ProviderResult, thresholds: number[]): Alert[] {
  if (thresholds.length === 0 || r.status !== "available") return [];
  const key = `${r.provider}:${r.profile}`;
  const out: Alert[] = [];
  for (const w of r.windows) {
    if (!(w.limit > 0) || w.window === "balance") continue;
    const percent = (w.used / w.limit) * 100;
    const level = levelOf(percent, thresholds);
    const reset = resetMs(w);
    const prev = store.alertState(key, w.window);
    const sameInstance = prev !== undefined && !(reset !== null && prev.reset !== null && Math.abs(reset - prev.reset) > RESET_MOVED_MS);
    const fired = sameInstance ? prev.level : 0;
    if (level > fired) out.push({ key, name: r.name, window: w.window, percent: Math.round(percent * 10) / 10, threshold: level, reset_at: w.reset_at });
    // Below the fired level (a reset, or a refund) re-arms the lower thresholds.
    if (level !== fired || !sameInstance) store.setAlertState(key, w.window, level, reset);
  }
  return out;
}

function resetMs(w: QuotaWindow): number | null {
  const t = w.reset_at ? Date.parse(w.reset_at) : Number.NaN;
  return Number.isNaN(t) ? null : t;
}

export function alertText(a: Alert): string {
  return `${a.name} ${a.window} at ${a.percent}% (alert threshold ${a.threshold}%)${a.reset_at ? `, resets ${a.reset_at}` : ""}`;
}

/**
 * A desktop notification through notify-send (Linux) or osascript (macOS), when one is on PATH. Waits for
 * it (at most 2 s) so a short-lived `--json` run does not leave before it was shown.
 */
export async function notify(alerts: Alert[], env: Record<string, string | undefined>): Promise<void> {
  if (alerts.length === 0) return;
  const path = env.PATH;
  const send = Bun.which("notify-send", { PATH: path });
  const osa = send ? null : Bun.which("osascript", { PATH: path });
  for (const a of alerts) {
    const body = alertText(a);
    const cmd = send
      ? [send, "--app-name=quotas", `quotas: ${a.name} ${a.window} at ${a.percent}%`, body]
      : osa
        ? [osa, "-e", `display notification ${JSON.stringify(body)} with title "quotas"`]
        : null;
    if (!cmd) return;
    try {
      const p = Bun.spawn(cmd, { stdin: "ignore", stdout: "ignore", stderr: "ignore", env: env as Record<string, string> });
      await Promise.race([p.exited, Bun.sleep(2000)]);
    } catch {
      // no notification this time; the stderr line (with --json) still says it
    }
  }
}
