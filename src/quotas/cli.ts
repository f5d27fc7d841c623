// The `quotas` command: one mode per command line (TUI, --json, --statusline, version/update checks,
// and the hidden background modes the statusline forks).
import { alertText } from "./model/alerts";
import { loadConfig } from "./config/config";
import { makeCtx, type Ctx, type Env } from "./core/context";
import { fetchAll } from "./fetch/fetcher";
import { unlock, writeAtomic } from "./core/files";
import { DEFAULT_INTERVAL_SECONDS, help, parseArgs } from "./config/flags";
import { createHost } from "./fetch/host";
import { renderJson, report } from "./output/json";
import { refreshWith } from "./fetch/refresh";
import { refreshLockPath, runStatusline, startUpdateCheck, updateLockPath } from "./background/statusline-mode";
import { resolveTargets } from "./fetch/targets";
import { usesCostToday } from "./background/prerender";
import type { Io } from "./core/io";
import { availableUpdate, checkRegistry, readUpdate, updatePath } from "./fetch/update";
import { PACKAGE_NAME, VERSION } from "./core/version";
import { versionLine } from "../kernel/build-info";

export type { Io } from "./core/io";

const defaultIo = (): Io => ({ out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) });

/** Runs the command; returns the exit code. Usage errors throw UsageError (exit 2 via runMain). */
export async function main(argv: string[], env: Env = process.env, io: Io = defaultIo()): Promise<number> {
  if (argv[0] === "usage") return (await import("./usage/command")).runUsage(makeCtx(env), argv.slice(1), io);
  const { mode, f, selectors } = parseArgs(argv);
  if (mode === "help") {
    io.out(help());
    return 0;
  }
  if (mode === "version") {
    io.out(`${versionLine("quotas")}\n`);
    return 0;
  }
  const ctx = makeCtx(env);
  if (mode === "statusline") {
    io.out(await runStatusline(ctx, { selectors, format: f.format, icons: !f["no-icons"], updateCheck: !f["no-update-check"] }) + "\n");
    return 0;
  }
  if (mode === "check-update") return checkUpdate(ctx, io);
  if (mode === "refresh-update") return refreshUpdate(ctx);
  const { config, warning } = loadConfig(ctx);
  if (mode === "refresh-cache") {
    try {
      if (usesCostToday(config)) await (await import("./usage/command")).refreshToday(ctx);
      await refreshWith(ctx, config, await fetchAll(ctx, config, resolveTargets(ctx, config)), true);
    } finally {
      unlock(refreshLockPath(ctx));
    }
    return 0;
  }
  if (warning) io.err(`quotas: ${warning}\n`);
  if (mode === "json") {
    const fresh = await fetchAll(ctx, config, resolveTargets(ctx, config, selectors));
    const { results, alerts } = await refreshWith(ctx, config, fresh, !selectors);
    for (const a of alerts) io.err(`quotas: alert: ${alertText(a)}\n`);
    io.out(renderJson(report(results, { raw: f.raw === true, now: ctx.clock.now() }), f.pretty === true) + "\n");
    return 0;
  }
  if (mode === "daemon") return (await import("./background/daemon")).runDaemon(ctx, config, { intervalSeconds: f.interval ?? DEFAULT_INTERVAL_SECONDS, once: f.once === true, io });
  if (mode === "install-timer") {
    const kind = (f.kind as "systemd" | "launchd" | undefined) ?? (process.platform === "darwin" ? "launchd" : "systemd");
    return (await import("./background/daemon")).installTimer(ctx, { kind, intervalSeconds: f.interval ?? DEFAULT_INTERVAL_SECONDS, io });
  }
  if (!f["no-update-check"]) startUpdateCheck(ctx, readUpdate(ctx));
  const host = createHost(ctx, config, selectors);
  if (io.runTui) return io.runTui(host);
  const code = await (await import("./tui")).runTui(host);
  // Fetches still in flight would keep the process alive up to their 10 s timeout after the user quit;
  // cache writes are atomic (temp + rename), so leaving now loses nothing.
  process.exit(code);
}

async function checkUpdate(ctx: Ctx, io: Io): Promise<number> {
  try {
    const s = await checkRegistry(ctx);
    io.out(
      availableUpdate(s)
        ? `${PACKAGE_NAME} ${s.latest} is available (installed ${VERSION}): npm install -g ${PACKAGE_NAME}\n`
        : `${PACKAGE_NAME} ${VERSION} is up to date (latest ${s.latest})\n`,
    );
    return 0;
  } catch (err) {
    io.err(`quotas: update check failed: ${(err as Error).message}\n`);
    return 1;
  }
}

/** Background check: a failure is remembered too, so a prompt does not retry it every time. */
async function refreshUpdate(ctx: Ctx): Promise<number> {
  try {
    await checkRegistry(ctx);
  } catch {
    const prev = readUpdate(ctx);
    try {
      writeAtomic(updatePath(ctx), JSON.stringify({ checked_at: ctx.clock.now().toISOString(), current: VERSION, latest: prev?.latest ?? VERSION }) + "\n");
    } catch {}
  } finally {
    unlock(updateLockPath(ctx));
  }
  return 0;
}
