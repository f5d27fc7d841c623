// The README's statusline recipes, run as written: the bash PS1 line in bash, the tmux lines in a tmux
// server with a client attached (status jobs only run for a client), each finding `quotas` on PATH.
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { tempHome, type TempHome } from "../quotas/helpers";
import type { ProviderResult } from "../../src/quotas/types";
import { ensureBuilt, root } from "./support";

let bin: string;
let h: TempHome | undefined;
beforeAll(async () => {
  bin = await ensureBuilt("quotas");
});
afterEach(() => h?.cleanup());

/** The code blocks of the README's quotas section that follow a paragraph naming `label`. */
function recipe(label: string): string {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("<!-- quotas:start -->"), readme.indexOf("<!-- quotas:end -->"));
  const m = new RegExp(`^${label} \\(\`[^\`]+\`\\):\\n\`\`\`\\w*\\n([\\s\\S]*?)\`\`\``, "m").exec(section);
  if (!m) throw new Error(`no ${label} recipe in the README`);
  return m[1];
}

const win = (used: number) => ({ window: "5h", used, limit: 100, remaining: 100 - used, unit: "percent", reset_at: null, period_seconds: 18000 });
const result = (provider: string, name: string, used: number): ProviderResult => ({
  provider, profile: "default", name, status: "available", plan: null, windows: [win(used)],
  fetched_at: new Date().toISOString(), cached_at: null, auth_source: null,
});

/** A HOME with a fresh cache and a known newer release (so the line ends with the update notice). */
function setup(): Record<string, string> {
  h = tempHome();
  const results = [result("claude", "Claude", 42), result("codex", "Codex", 88), result("zai", "Z.ai", 10)];
  h.write(".cache/quotas/cache.json", { version: 1, refreshed_at: new Date().toISOString(), results: Object.fromEntries(results.map((r) => [`${r.provider}:default`, r])) });
  h.write(".cache/quotas/update.json", { checked_at: new Date().toISOString(), current: "0.0.0", latest: "99.0.0" });
  const path = join(h.home, "bin");
  mkdirSync(path);
  symlinkSync(bin, join(path, "quotas"));
  return { ...h.env, PATH: `${path}:${process.env.PATH ?? "/usr/bin:/bin"}`, TERM: "xterm-256color", LANG: "C.UTF-8" };
}

describe("README statusline recipes", () => {
  test("bash: the PS1 line shows the statusline before the directory", async () => {
    const env = setup();
    const ps1 = recipe("bash").trim();
    expect(ps1.startsWith("PS1=")).toBe(true);
    const p = Bun.spawn(["bash", "--norc", "--noprofile", "-c", `${ps1}\nprintf '%s' "\${PS1@P}"`], { cwd: h!.home, env, stdout: "pipe", stderr: "pipe" });
    const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    expect(err).toBe("");
    expect(out).toBe(`Claude 58/100 | Codex 12/100 | Z.ai 90/100 | update 99.0.0 ~ # `.replace("#", process.getuid?.() === 0 ? "#" : "$"));
  });

  test("tmux: status-right shows the whole statusline and then the clock", async () => {
    const env = setup();
    const conf = h!.write("tmux.conf", recipe("tmux"));
    const socket = `quotas-recipe-${process.pid}`;
    const tmux = (...args: string[]) => Bun.spawnSync(["tmux", "-L", socket, ...args], { env, stdout: "pipe", stderr: "pipe" });
    try {
      expect(tmux("-f", conf, "new-session", "-d", "-s", "q", "-x", "200", "-y", "10").exitCode).toBe(0);
      // A client in a pseudo-terminal (util-linux `script`): tmux runs #() jobs only to draw a client.
      const client = Bun.spawn(["script", "-qfc", `stty cols 200 rows 10; tmux -L ${socket} attach -t q`, "/dev/null"], {
        env, stdin: "pipe", stdout: "pipe", stderr: "ignore",
      });
      let screen = "";
      const reader = (async () => {
        const dec = new TextDecoder();
        for await (const chunk of client.stdout) screen += dec.decode(chunk);
      })();
      const line = "Claude 58/100 | Codex 12/100 | update 99.0.0";
      const end = Date.now() + 15_000;
      while (!new RegExp(`${line.replace(/[|.]/g, "\\$&")} \\d\\d:\\d\\d`).test(screen) && Date.now() < end) await Bun.sleep(50);
      tmux("kill-server");
      client.kill();
      await Promise.race([reader, Bun.sleep(2000)]);
      expect(screen).toMatch(new RegExp(`${line.replace(/[|.]/g, "\\$&")} \\d\\d:\\d\\d`));
    } finally {
      tmux("kill-server");
    }
  }, 30_000);
});
