// Everything the quota viewer reads from its surroundings, in one value: environment, home directory,
// clock and the per-provider timeout. Tests build one over a temporary HOME instead of patching globals.
import type { Clock } from "../../kernel/clock";
import { systemClock } from "../../kernel/clock";

export type Env = Record<string, string | undefined>;

export interface Ctx {
  env: Env;
  home: string;
  clock: Clock;
  /** Per-provider fetch timeout (spec: 10 s). `QUOTAS_TIMEOUT_MS` overrides it, for tests. */
  timeoutMs: number;
}

export const DEFAULT_TIMEOUT_MS = 10_000;

// The statusline path avoids importing node:os/node:path/node:fs: each costs about a millisecond of
// start-up, which a shell prompt pays on every line. Paths here are plain POSIX joins.
export const join = (...parts: string[]) => parts.join("/").replace(/\/{2,}/g, "/");
export const dirname = (p: string) => p.replace(/\/[^/]*\/?$/, "") || "/";

export function makeCtx(env: Env = process.env, clock: Clock = systemClock): Ctx {
  const home = env.HOME || (require("node:os") as typeof import("node:os")).homedir();
  const t = Number(env.QUOTAS_TIMEOUT_MS);
  return { env, home, clock, timeoutMs: Number.isFinite(t) && t > 0 ? t : DEFAULT_TIMEOUT_MS };
}

const xdg = (ctx: Ctx, name: string, fallback: string) => {
  const v = ctx.env[name];
  return v && v.startsWith("/") ? v : join(ctx.home, fallback);
};

export const configDir = (ctx: Ctx) => join(xdg(ctx, "XDG_CONFIG_HOME", ".config"), "quotas");
export const configFile = (ctx: Ctx) => join(configDir(ctx), "config.toml");
export const cacheDir = (ctx: Ctx) => join(xdg(ctx, "XDG_CACHE_HOME", ".cache"), "quotas");
export const xdgConfigHome = (ctx: Ctx) => xdg(ctx, "XDG_CONFIG_HOME", ".config");
export const xdgDataHome = (ctx: Ctx) => xdg(ctx, "XDG_DATA_HOME", ".local/share");

/** `~/...` for display: paths in output never show more of the user's layout than needed. */
export function tilde(ctx: Ctx, path: string): string {
  return path === ctx.home || path.startsWith(ctx.home + "/") ? "~" + path.slice(ctx.home.length) : path;
}

/** `~/x` → `$HOME/x` (config values may use it). */
export function expandHome(ctx: Ctx, path: string): string {
  return path === "~" || path.startsWith("~/") ? ctx.home + path.slice(1) : path;
}
