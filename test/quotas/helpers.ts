// Test helpers: a temporary HOME with XDG dirs, and files written into it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ManualClock } from "../../src/kernel/clock";
import type { Ctx } from "../../src/quotas/core/context";

export interface TempHome {
  home: string;
  env: Record<string, string>;
  ctx: Ctx;
  clock: ManualClock;
  write(path: string, content: unknown): string;
  cleanup(): void;
}

export function tempHome(extraEnv: Record<string, string> = {}, now = "2026-11-22T09:00:00Z"): TempHome {
  const home = mkdtempSync(join(tmpdir(), "quotas-home-"));
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_DATA_HOME: join(home, ".local/share"),
    ...extraEnv,
  };
  const clock = new ManualClock(now);
  return {
    home,
    env,
    clock,
    ctx: { env, home, clock, timeoutMs: 2000 },
    write(path, content) {
      const full = path.startsWith("/") ? path : join(home, path);
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, typeof content === "string" ? content : JSON.stringify(content));
      return full;
    },
    cleanup: () => rmSync(home, { recursive: true, force: true }),
  };
}

/** An unsigned JWT with the given payload (providers only read exp/sub). */
export function jwt(payload: Record<string, unknown>): string {
  return `eyJhbGciOiJub25lIn0.${Buffer.from(JSON.stringify(payload)).toString("base64url")}.sig`;
}
