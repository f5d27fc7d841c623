// Where the coding agents keep their logs. Claude Code: `$CLAUDE_CONFIG_DIR` (comma-separated list) or
// ~/.config/claude and ~/.claude, each with projects/**/*.jsonl. Codex CLI: `$CODEX_HOME` or ~/.codex,
// with sessions/** and archived_sessions/**.
import { readdirSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Ctx } from "../core/context";

export const AGENTS = ["claude", "codex"] as const;
export type Agent = (typeof AGENTS)[number];

export interface LogFile {
  path: string;
  agent: Agent;
  ino: number;
  size: number;
  mtimeMs: number;
}

export function roots(ctx: Ctx): { agent: Agent; dir: string }[] {
  const claude = ctx.env.CLAUDE_CONFIG_DIR
    ? ctx.env.CLAUDE_CONFIG_DIR.split(",").map((d) => d.trim()).filter(Boolean)
    : [join(ctx.home, ".config/claude"), join(ctx.home, ".claude")];
  const codex = ctx.env.CODEX_HOME || join(ctx.home, ".codex");
  return [
    ...claude.map((d) => ({ agent: "claude" as const, dir: join(d, "projects") })),
    { agent: "codex", dir: join(codex, "sessions") },
    { agent: "codex", dir: join(codex, "archived_sessions") },
  ];
}

/** Every *.jsonl under the agents' directories, sorted by path; a directory seen twice (symlink) counts once. */
export function logFiles(ctx: Ctx, agents: readonly Agent[] = AGENTS): LogFile[] {
  const seen = new Set<string>();
  const out: LogFile[] = [];
  // the same rollout in sessions/ and archived_sessions/: the active copy wins
  const active = new Set<string>();
  for (const { agent, dir } of roots(ctx)) {
    if (!agents.includes(agent)) continue;
    let real: string;
    let names: string[];
    try {
      real = realpathSync(dir);
      if (seen.has(real)) continue;
      seen.add(real);
      names = readdirSync(dir, { recursive: true, encoding: "utf8" });
    } catch {
      continue; // no such agent here
    }
    for (const n of names) {
      if (!n.endsWith(".jsonl")) continue;
      if (dir.endsWith("/sessions")) active.add(n);
      else if (dir.endsWith("/archived_sessions") && active.has(n)) continue;
      const path = join(dir, n);
      try {
        const st = statSync(path);
        if (st.isFile()) out.push({ path, agent, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs });
      } catch {}
    }
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
