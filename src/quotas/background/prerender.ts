// Pre-rendered statusline files, rewritten (atomically) on every refresh so a prompt reads them with
// the shell's own builtins and starts no process at all:
//   statusline.txt         `[statusline] format/icons/providers` (default: the --statusline default)
//   statusline-<name>.txt  one per `[statusline.formats.<name>]`
//   statusline.due         epoch seconds after which the cache is stale: a prompt compares it with
//                          $EPOCHSECONDS and only then starts a detached `quotas --statusline`
import { STALE_MS, type CacheFile } from "../fetch/cache";
import type { Config, StatuslineFormat } from "../config/defaults";
import { cacheDir, join, type Ctx } from "../core/context";
import { writeAtomic } from "../core/files";
import { parseSelectors } from "../model/selectors";
import { lineFromCache } from "../output/cached-line";
import { readCostToday, wantsCostToday } from "../output/cost-today";
import { availableUpdate, readUpdate } from "../fetch/update";

export const statuslineFile = (ctx: Ctx, name?: string) => join(cacheDir(ctx), name ? `statusline-${name}.txt` : "statusline.txt");
export const dueFile = (ctx: Ctx) => join(cacheDir(ctx), "statusline.due");

/** Writes every configured statusline file for `cache`; a read-only cache directory is not an error. */
export function writeStatuslines(ctx: Ctx, config: Config, cache: CacheFile): void {
  const now = ctx.clock.now();
  const update = availableUpdate(readUpdate(ctx));
  const costToday = usesCostToday(config) ? readCostToday(ctx, now.getTime()) : null;
  const render = (f: StatuslineFormat) =>
    lineFromCache(config, cache, { selectors: f.providers ? parseSelectors(f.providers.join(",")) : undefined, format: f.format, icons: f.icons, update, now, costToday }) + "\n";
  const refreshed = cache.refreshed_at ? Date.parse(cache.refreshed_at) : Number.NaN;
  const due = Number.isNaN(refreshed) ? 0 : Math.floor((refreshed + STALE_MS) / 1000);
  try {
    for (const [name, f] of Object.entries(config.statusline.formats)) writeAtomic(statuslineFile(ctx, name), render(f));
    writeAtomic(dueFile(ctx), `${due}\n`);
    // statusline.txt last: its presence tells `--statusline` the files exist
    writeAtomic(statuslineFile(ctx), render(config.statusline));
    removeUnconfigured(ctx, config);
  } catch {
    // a read-only cache directory: the prompt falls back to `quotas --statusline`
  }
}

/** Whether a configured statusline shows `{cost_today}` (then a refresh also brings the usage index up to date). */
export function usesCostToday(config: Config): boolean {
  return wantsCostToday(config.statusline.format) || Object.values(config.statusline.formats).some((f) => wantsCostToday(f.format));
}

/** A format removed from config.toml takes its file with it (a prompt would show a frozen line). */
function removeUnconfigured(ctx: Ctx, config: Config): void {
  const fs = require("node:fs") as typeof import("node:fs");
  for (const f of fs.readdirSync(cacheDir(ctx))) {
    const m = /^statusline-(.+)\.txt$/.exec(f);
    if (m && !(m[1] in config.statusline.formats)) fs.rmSync(join(cacheDir(ctx), f), { force: true });
  }
}
