// `quotas daemon`: refreshes every enabled provider on an interval (cache.json, history, the
// pre-rendered statusline files, alerts), so a prompt only ever reads a file. `quotas install-timer`
// writes the files that make the system run `quotas daemon --once` on that interval instead: a systemd
// user timer, or a launchd agent on macOS. It never enables them; it prints the command that does.
import { alertText } from "../model/alerts";
import { selfCommand } from "./spawn";
import type { Io } from "../core/io";
import type { Config } from "../config/defaults";
import { join, tilde, xdgConfigHome, type Ctx } from "../core/context";
import { fetchAll } from "../fetch/fetcher";
import { tryLock, unlock, writeAtomic } from "../core/files";
import { refreshWith } from "../fetch/refresh";
import { usesCostToday } from "./prerender";
import { refreshLockPath } from "./statusline-mode";
import { resolveTargets } from "../fetch/targets";

export interface DaemonOptions {
  intervalSeconds: number;
  once: boolean;
  io: Io;
}

/** One full refresh under the prompt's refresh lock (so a prompt does not start a second one meanwhile). */
async function refreshOnce(ctx: Ctx, config: Config, io: Io): Promise<void> {
  const lock = refreshLockPath(ctx);
  if (!tryLock(lock, 2 * ctx.timeoutMs + 30_000)) {
    io.out(`${ctx.clock.now().toISOString()} a refresh is already running; skipped\n`);
    return;
  }
  try {
    if (usesCostToday(config)) await (await import("../usage/command")).refreshToday(ctx);
    const { results, alerts } = await refreshWith(ctx, config, await fetchAll(ctx, config, resolveTargets(ctx, config)), true);
    const ok = results.filter((r) => r.status === "available").length;
    io.out(`${ctx.clock.now().toISOString()} refreshed ${results.length} provider${results.length === 1 ? "" : "s"} (${ok} available)\n`);
    for (const a of alerts) io.err(`quotas: alert: ${alertText(a)}\n`);
  } finally {
    unlock(lock);
  }
}

export async function runDaemon(ctx: Ctx, config: Config, o: DaemonOptions): Promise<number> {
  if (o.once) {
    await refreshOnce(ctx, config, o.io);
    return 0;
  }
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  let running = true;
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.on(sig, () => {
      running = false;
      stop();
    });
  }
  o.io.out(`quotas daemon: refreshing every ${o.intervalSeconds} s (Ctrl-C stops)\n`);
  while (running) {
    await refreshOnce(ctx, config, o.io);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([stopped, new Promise<void>((r) => (timer = setTimeout(r, o.intervalSeconds * 1000)))]);
    clearTimeout(timer);
  }
  return 0;
}

export interface TimerOptions {
  kind: "systemd" | "launchd";
  intervalSeconds: number;
  io: Io;
}

const LAUNCHD_LABEL = "dev.quotas.refresh";

/** The environment the timer's runs need: our XDG directories, when the user moved them. */
function xdgEnv(ctx: Ctx): [string, string][] {
  const out: [string, string][] = [];
  for (const name of ["XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"]) {
    const v = ctx.env[name];
    if (v && v.startsWith("/")) out.push([name, v]);
  }
  return out;
}

const xml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
// systemd's ExecStart splits on spaces and treats quotes, backslashes and % specially
const unitArg = (s: string) => (/^[\w@/.+,:=-]+$/.test(s) ? s : `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/%/g, "%%")}"`);

export function systemdUnits(ctx: Ctx, intervalSeconds: number, command: string[]): { service: string; timer: string } {
  const env = xdgEnv(ctx).map(([k, v]) => `Environment=${unitArg(`${k}=${v}`)}\n`).join("");
  return {
    service: `[Unit]
Description=Refresh quotas (AI provider usage) for the shell prompt

[Service]
Type=oneshot
${env}ExecStart=${[...command, "daemon", "--once"].map(unitArg).join(" ")}
`,
    timer: `[Unit]
Description=Refresh quotas every ${intervalSeconds} s

[Timer]
OnBootSec=60s
OnUnitActiveSec=${intervalSeconds}s
AccuracySec=30s

[Install]
WantedBy=timers.target
`,
  };
}

export function launchdPlist(ctx: Ctx, intervalSeconds: number, command: string[]): string {
  const args = [...command, "daemon", "--once"].map((a) => `    <string>${xml(a)}</string>\n`).join("");
  const env = xdgEnv(ctx);
  const envXml = env.length
    ? `  <key>EnvironmentVariables</key>\n  <dict>\n${env.map(([k, v]) => `    <key>${k}</key><string>${xml(v)}</string>\n`).join("")}  </dict>\n`
    : "";
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key><string>${LAUNCHD_LABEL}</string>
  <key>ProgramArguments</key>
  <array>
${args}  </array>
${envXml}  <key>StartInterval</key><integer>${intervalSeconds}</integer>
  <key>RunAtLoad</key><true/>
  <key>ProcessType</key><string>Background</string>
</dict>
</plist>
`;
}

export function installTimer(ctx: Ctx, o: TimerOptions): number {
  const command = selfCommand();
  if (o.kind === "systemd") {
    const dir = join(xdgConfigHome(ctx), "systemd", "user");
    const { service, timer } = systemdUnits(ctx, o.intervalSeconds, command);
    writeAtomic(join(dir, "quotas.service"), service);
    writeAtomic(join(dir, "quotas.timer"), timer);
    o.io.out(`wrote ${tilde(ctx, join(dir, "quotas.service"))} and ${tilde(ctx, join(dir, "quotas.timer"))}\n`);
    o.io.out("enable with: systemctl --user daemon-reload && systemctl --user enable --now quotas.timer\n");
    return 0;
  }
  const path = join(ctx.home, "Library", "LaunchAgents", `${LAUNCHD_LABEL}.plist`);
  writeAtomic(path, launchdPlist(ctx, o.intervalSeconds, command));
  o.io.out(`wrote ${tilde(ctx, path)}\n`);
  o.io.out(`enable with: launchctl bootstrap gui/$(id -u) ${tilde(ctx, path)}\n`);
  return 0;
}
