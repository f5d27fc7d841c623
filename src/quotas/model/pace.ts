// "At this pace, will I run out before the reset?" Pure: samples of one window in, a projection out.
//
// The rate is measured over the recent part of the current window only: a fifth of the window's
// period, at least 1 h and at most 24 h (a 5 h window looks back 1 h, a weekly one 24 h), so a burst
// shows quickly and a night without use does not make a weekly window look idle. Samples from before a
// reset (usage dropped, or the reset time moved on by more than 30 min) belong to the previous window and
// are never mixed in.
import type { Pace, QuotaWindow } from "./types";

/** One stored observation of a window: time and reset in ms since the epoch. */
export interface Sample {
  t: number;
  used: number;
  limit: number;
  reset: number | null;
}

const HOUR = 3_600_000;
const RESET_MOVED_MS = 30 * 60_000;

export function lookbackMs(periodSeconds: number | null): number {
  if (!periodSeconds || !(periodSeconds > 0)) return HOUR;
  return Math.min(24 * HOUR, Math.max(HOUR, (periodSeconds * 1000) / 5));
}

/**
 * The samples of the window the latest sample is in, oldest first. `samples` are oldest first and the
 * last one is the current observation.
 */
export function currentWindow(samples: Sample[], periodSeconds: number | null): Sample[] {
  if (samples.length === 0) return [];
  const last = samples[samples.length - 1];
  const start = last.reset !== null && periodSeconds ? last.reset - periodSeconds * 1000 : -Infinity;
  let i = samples.length - 1;
  while (i > 0) {
    const prev = samples[i - 1];
    const next = samples[i];
    if (prev.t < start) break;
    if (prev.used / (prev.limit || 1) > next.used / (next.limit || 1) + 1e-9) break; // usage dropped: a reset
    if (last.reset !== null && prev.reset !== null && Math.abs(prev.reset - last.reset) > RESET_MOVED_MS) break;
    i--;
  }
  return samples.slice(i);
}

/** The projection for the latest sample, or null without at least a minute of history in this window. */
export function pace(samples: Sample[], periodSeconds: number | null): Pace | null {
  const win = currentWindow(samples, periodSeconds);
  if (win.length < 2) return null;
  const now = win[win.length - 1];
  const from = now.t - lookbackMs(periodSeconds);
  let base = win.find((s) => s.t >= from) ?? win[win.length - 2];
  if (base === now) base = win[win.length - 2];
  const dt = now.t - base.t;
  if (dt < 60_000) return null;
  // Compare fractions of the limit, so a limit that changed mid-window does not read as usage.
  const rate = ((now.used / (now.limit || 1) - base.used / (base.limit || 1)) * now.limit) / dt; // units per ms
  const remaining = now.limit - now.used;
  const exhaustsAt = remaining <= 0 ? now.t : rate > 0 ? now.t + remaining / rate : null;
  const reset = now.reset !== null && now.reset > now.t ? now.reset : null;
  return {
    rate_per_hour: round(rate * HOUR),
    exhausts_at: exhaustsAt === null ? null : new Date(Math.round(exhaustsAt / 1000) * 1000).toISOString(),
    before_reset: reset === null ? null : exhaustsAt !== null && exhaustsAt < reset,
    projected_used: reset === null ? null : round(now.used + Math.max(0, rate) * (reset - now.t)),
    since: new Date(base.t).toISOString(),
  };
}

const round = (n: number) => Math.round(n * 100) / 100;

/** A window as a sample at `at` (ms). */
export function sampleOf(w: QuotaWindow, at: number): Sample {
  const reset = w.reset_at ? Date.parse(w.reset_at) : Number.NaN;
  return { t: at, used: w.used, limit: w.limit, reset: Number.isNaN(reset) ? null : reset };
}

/** The current window's usage as 0..1 of the limit, in at most `points` buckets (the last value of each). */
export function sparkValues(samples: Sample[], periodSeconds: number | null, points = 24): number[] {
  const win = currentWindow(samples, periodSeconds);
  if (win.length === 0) return [];
  const frac = (s: Sample) => Math.max(0, Math.min(1, s.limit > 0 ? s.used / s.limit : 0));
  if (win.length <= points) return win.map(frac);
  const out: number[] = [];
  for (let b = 1; b <= points; b++) out.push(frac(win[Math.ceil((b * win.length) / points) - 1]));
  return out;
}
