// The prompt recipes of docs/quotas/README.md, run as written in the real shells: bash, zsh and fish read the
// pre-rendered statusline file with builtins and start `quotas` only when statusline.due has passed (at
// most once a minute); starship's command in sh; the tmux lines in a tmux server with a client attached
// (status jobs only run for a client). `quotas` on PATH is a wrapper that logs each start, then runs the
// compiled binary.
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempHome, type TempHome } from "../quotas/helpers";
import type { ProviderResult } from "../../src/quotas/model/types";
import { ensureBuilt, root } from "./support";

let bin: string;
let h: TempHome | undefined;
beforeAll(async () => {
  bin = await ensureBuilt("quotas");
});
afterEach(() => h?.cleanup());

/** The code blocks of the quotas docs page that follow a paragraph naming `label`. */
function recipe(label: string): string {
  const section = readFileSync(join(root, "docs/quotas/README.md"), "utf8");
  const m = new RegExp(`^${label} \\(\`[^\`]+\`[^:]*\\):\\n\`\`\`\\w*\\n([\\s\\S]*?)\`\`\``, "m").exec(section);
  if (!m) throw new Error(`no ${label} recipe in docs/quotas/README.md`);
  return m[1];
}

const win = (used: number) => ({ window: "5h", used, limit: 100, remaining: 100 - used, unit: "percent", reset_at: null, period_seconds: 18000 });
const result = (provider: string, name: string, used: number): ProviderResult => ({
  provider, profile: "default", name, status: "available", plan: null, windows: [win(used)],
  fetched_at: new Date().toISOString(), cached_at: null, auth_source: null,
});

const LINE = "Claude 58/100 (42%) | Codex 12/100 (88%) | Z.ai 90/100 (10%) | update 99.0.0";
const TMUX_LINE = "Claude 42% | Codex 88% | update 99.0.0";

/**
 * A HOME with a fresh cache, a known newer release, a config with a `%` in the format and a named tmux
 * format; one `quotas --statusline` writes the pre-rendered files (they are missing at first).
 */
async function setup(): Promise<Record<string, string>> {
  h = tempHome();
  const results = [result("claude", "Claude", 42), result("codex", "Codex", 88), result("zai", "Z.ai", 10)];
  h.write(".cache/quotas/cache.json", { version: 1, refreshed_at: new Date().toISOString(), results: Object.fromEntries(results.map((r) => [`${r.provider}:default`, r])) });
  h.write(".cache/quotas/update.json", { checked_at: new Date().toISOString(), current: "0.0.0", latest: "99.0.0" });
  h.write(".config/quotas/config.toml", '[statusline]\nformat = "%provider %remaining/%limit (%percent)"\nicons = false\n\n[statusline.formats.tmux]\nformat = "%provider %percent"\nicons = false\nproviders = ["claude", "codex"]\n');
  const path = join(h.home, "bin");
  mkdirSync(path);
  writeFileSync(join(path, "quotas"), `#!/bin/sh\necho "$*" >> "${join(h.home, "starts.log")}"\nexec "${bin}" "$@"\n`);
  chmodSync(join(path, "quotas"), 0o755);
  const env = { ...h.env, PATH: `${path}:${process.env.PATH ?? "/usr/bin:/bin"}`, TERM: "xterm-256color", LANG: "C.UTF-8" };
  Bun.spawnSync([bin, "--statusline", "--no-update-check"], { env });
  expect(readFileSync(join(h.home, ".cache/quotas/statusline.txt"), "utf8")).toBe(`${LINE}\n`);
  expect(readFileSync(join(h.home, ".cache/quotas/statusline-tmux.txt"), "utf8")).toBe(`${TMUX_LINE}\n`);
  return env;
}

const starts = () => (existsSync(join(h!.home, "starts.log")) ? readFileSync(join(h!.home, "starts.log"), "utf8").trim().split("\n") : []);
const makeStale = () => writeFileSync(join(h!.home, ".cache/quotas/statusline.due"), "1000\n");

async function sh(cmd: string[], env: Record<string, string>) {
  const p = Bun.spawn(cmd, { cwd: h!.home, env, stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { out, err };
}

async function until(cond: () => boolean, ms = 10_000) {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await Bun.sleep(25);
}

describe("README prompt recipes", () => {
  test("bash: the prompt reads the file and starts nothing; once stale, one background `quotas --statusline`", async () => {
    const env = await setup();
    const code = recipe("bash");
    // two prompts, as bash runs PROMPT_COMMAND before each
    const script = `${code}\neval "$PROMPT_COMMAND"; printf '%s|' "\${PS1@P}"; eval "$PROMPT_COMMAND"; printf '%s' "\${PS1@P}"`;
    const fresh = await sh(["bash", "--norc", "--noprofile", "-c", script], env);
    expect(fresh.err).toBe("");
    const prompt = `${LINE} ~ ${process.getuid?.() === 0 ? "#" : "$"} `;
    expect(fresh.out).toBe(`${prompt}|${prompt}`);
    expect(starts()).toEqual([]);
    makeStale();
    const stale = await sh(["bash", "--norc", "--noprofile", "-c", script], env);
    expect(stale.out).toBe(`${prompt}|${prompt}`);
    await until(() => starts().length > 0);
    await Bun.sleep(300);
    expect(starts()).toEqual(["--statusline"]); // two stale prompts, one start
  });

  test("zsh: the right prompt shows the line with its % intact; stale → one background start", async () => {
    const env = await setup();
    const script = `${recipe("zsh")}\n__quotas_prompt; print -rn -- "\${(%)\${(e)RPROMPT}}"; __quotas_prompt`;
    const fresh = await sh(["zsh", "-f", "-c", script], env);
    expect(fresh.err).toBe("");
    expect(fresh.out).toBe(LINE);
    expect(starts()).toEqual([]);
    makeStale();
    const stale = await sh(["zsh", "-f", "-c", script], env);
    expect(stale.out).toBe(LINE);
    await until(() => starts().length > 0);
    await Bun.sleep(300);
    expect(starts()).toEqual(["--statusline"]);
  });

  test("fish: fish_right_prompt prints the line; a file older than 30 minutes starts a background refresh", async () => {
    const env = await setup();
    const fn = h!.write("fish_right_prompt.fish", recipe("fish"));
    const fresh = await sh(["fish", "--no-config", "-c", `source ${fn}; fish_right_prompt`], env);
    expect(fresh.err).toBe("");
    expect(fresh.out).toBe(LINE);
    expect(starts()).toEqual([]);
    const old = new Date(Date.now() - 31 * 60_000);
    utimesSync(join(h!.home, ".cache/quotas/statusline.txt"), old, old);
    const stale = await sh(["fish", "--no-config", "-c", `source ${fn}; fish_right_prompt`], env);
    expect(stale.out).toBe(LINE);
    await until(() => starts().length > 0);
    expect(starts()).toEqual(["--statusline"]);
  });

  test("starship: the custom command, run by sh as starship does, prints the line", async () => {
    const env = await setup();
    const toml = Bun.TOML.parse(recipe("starship")) as { custom: { quotas: { command: string; shell: string[] } } };
    expect(toml.custom.quotas.shell).toEqual(["sh"]);
    const r = await sh(["sh", "-c", toml.custom.quotas.command], env);
    expect(r).toEqual({ out: LINE, err: "" });
    expect(starts()).toEqual([]);
  });

  test("tmux: status-right shows the named format's file and then the clock", async () => {
    const env = await setup();
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
      const want = new RegExp(`${TMUX_LINE.replace(/[|.%]/g, "\\$&")} \\d\\d:\\d\\d`);
      const end = Date.now() + 15_000;
      while (!want.test(screen) && Date.now() < end) await Bun.sleep(50);
      tmux("kill-server");
      client.kill();
      await Promise.race([reader, Bun.sleep(2000)]);
      expect(screen).toMatch(want);
    } finally {
      tmux("kill-server");
    }
  }, 30_000);
});
