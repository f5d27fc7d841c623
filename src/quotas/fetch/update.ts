// Version check against the npm registry (its package document), remembered in update.json for 24 h.
import { cacheDir, join, type Ctx } from "../core/context";
import { readText, readTextFast, writeAtomic } from "../core/files";
import { PACKAGE_NAME, VERSION } from "../core/version";

export const UPDATE_TTL_MS = 24 * 3600 * 1000;

export interface UpdateState {
  checked_at: string;
  current: string;
  latest: string;
}


export const updatePath = (ctx: Ctx) => join(cacheDir(ctx), "update.json");

export function readUpdate(ctx: Ctx): UpdateState | null {
  return parseUpdate(readText(updatePath(ctx)));
}

export function readUpdateFast(ctx: Ctx): UpdateState | null {
  return parseUpdate(readTextFast(updatePath(ctx)));
}

function parseUpdate(text: string | undefined): UpdateState | null {
  if (!text) return null;
  try {
    // Read on every prompt: checked by hand (see cache.ts), three strings or nothing.
    const s = JSON.parse(text) as Record<string, unknown>;
    return s && typeof s.checked_at === "string" && typeof s.current === "string" && typeof s.latest === "string"
      ? { checked_at: s.checked_at, current: s.current, latest: s.latest }
      : null;
  } catch {
    return null;
  }
}

export function updateDue(ctx: Ctx, state: UpdateState | null): boolean {
  return !state || ctx.clock.now().getTime() - Date.parse(state.checked_at) > UPDATE_TTL_MS || Number.isNaN(Date.parse(state.checked_at));
}

const DEFAULT_REGISTRY = "https://registry.npmjs.org";

/** `registry=` of an npmrc file (`${VAR}` expanded from the environment), or undefined. */
function npmrcRegistry(ctx: Ctx, path: string | undefined): string | undefined {
  const text = path ? readText(path) : undefined;
  const m = text && /^[ \t]*registry[ \t]*=[ \t]*(\S.*?)[ \t]*$/m.exec(text);
  return m ? m[1].replace(/^(["'])(.*)\1$/, "$2").replace(/\$\{([^}]+)\}/g, (_, name: string) => ctx.env[name] ?? "") : undefined;
}

/** npm's global prefix: npm_config_prefix, else the one this executable was installed under by npm. */
function npmPrefix(ctx: Ctx): string | undefined {
  const env = ctx.env.npm_config_prefix || ctx.env.NPM_CONFIG_PREFIX;
  if (env) return env;
  const at = process.execPath.indexOf("/lib/node_modules/");
  return at > 0 ? process.execPath.slice(0, at) : undefined;
}

/**
 * The registry the user's npm is configured for, read the way npm reads it (without starting npm):
 * the npm_config_registry environment variable (set when npm runs us, or by the user), else `registry=`
 * in the user's npmrc (NPM_CONFIG_USERCONFIG or ~/.npmrc), else in the global npmrc
 * (NPM_CONFIG_GLOBALCONFIG or <prefix>/etc/npmrc), else registry.npmjs.org. A project's .npmrc is not
 * read: the command is global.
 */
export function registryUrl(ctx: Ctx): string {
  const e = ctx.env;
  const prefix = npmPrefix(ctx);
  const url =
    e.npm_config_registry ||
    e.NPM_CONFIG_REGISTRY ||
    npmrcRegistry(ctx, e.npm_config_userconfig || e.NPM_CONFIG_USERCONFIG || join(ctx.home, ".npmrc")) ||
    npmrcRegistry(ctx, e.npm_config_globalconfig || e.NPM_CONFIG_GLOBALCONFIG || (prefix ? join(prefix, "etc/npmrc") : undefined)) ||
    DEFAULT_REGISTRY;
  return url.replace(/\/+$/, "");
}

/** Numeric semver compare (pre-releases sort before their release). */
export function newer(a: string, b: string): boolean {
  // No .map: this runs in every prompt, and an array builtin's first call costs it ~0.1 ms.
  const parse = (s: string) => {
    const [core, pre] = (s.startsWith("v") ? s.slice(1) : s).split("-", 2);
    const parts = core.split(".");
    const nums: number[] = [];
    for (let i = 0; i < parts.length; i++) nums.push(Number.parseInt(parts[i], 10) || 0);
    return { nums, pre };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) {
    if ((x.nums[i] ?? 0) !== (y.nums[i] ?? 0)) return (x.nums[i] ?? 0) > (y.nums[i] ?? 0);
  }
  if (x.pre && !y.pre) return false;
  if (!x.pre && y.pre) return true;
  return (x.pre ?? "") > (y.pre ?? "");
}

/** Asks the registry for `dist-tags.latest`, records it in update.json; throws a one-line Error. */
export async function checkRegistry(ctx: Ctx): Promise<UpdateState> {
  const url = `${registryUrl(ctx)}/${PACKAGE_NAME.replace("/", "%2F")}`;
  let res: Response;
  try {
    res = await fetch(url, { headers: { Accept: "application/vnd.npm.install-v1+json, application/json" }, signal: AbortSignal.timeout(ctx.timeoutMs) });
  } catch (err) {
    throw new Error(`cannot reach ${registryUrl(ctx)}: ${(err as Error).message}`);
  }
  if (!res.ok) throw new Error(`${url} answered HTTP ${res.status}`);
  const body = (await res.json().catch(() => null)) as { "dist-tags"?: { latest?: unknown } } | null;
  const latest = body?.["dist-tags"]?.latest;
  if (typeof latest !== "string") throw new Error(`${url} has no dist-tags.latest`);
  const state = { checked_at: ctx.clock.now().toISOString(), current: VERSION, latest };
  try {
    writeAtomic(updatePath(ctx), JSON.stringify(state) + "\n");
  } catch {}
  return state;
}

/** The version to advertise, when update.json knows of one newer than this binary. */
export function availableUpdate(state: UpdateState | null): string | null {
  return state && newer(state.latest, VERSION) ? state.latest : null;
}
