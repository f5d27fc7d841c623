// Profiles: several accounts per provider. `~/.claude` is claude:default, `~/.claude-work` claude:work;
// two paths resolving to one directory are one profile; `[profiles.entries]` pins, renames or hides.
import { join, expandHome, type Ctx } from "../core/context";
import type { Config } from "../config/config";
import type { ProviderDef } from "../providers/provider";
import type { Place } from "./credentials";

const fs = () => require("node:fs") as typeof import("node:fs");
const isDir = (p: string) => {
  try {
    return fs().statSync(p).isDirectory();
  } catch {
    return false;
  }
};
const real = (p: string) => {
  try {
    return fs().realpathSync(p);
  } catch {
    return p;
  }
};

/** The provider's profiles, default first, then by name; disabled entries are left out. */
export function profilesOf(ctx: Ctx, def: ProviderDef, config: Config): Place[] {
  const places = new Map<string, Place>();
  const seen = new Set<string>();
  const add = (profile: string, dir: string | null) => {
    if (places.has(profile)) return;
    if (dir) {
      const r = real(dir);
      if (seen.has(r)) return;
      if (isDir(dir)) seen.add(r);
    }
    places.set(profile, { profile, dir });
  };
  add("default", def.profileDir ? join(ctx.home, def.profileDir) : null);
  if (def.profileDir && config.profiles.autodetect) {
    let names: string[] = [];
    try {
      names = fs().readdirSync(ctx.home);
    } catch {
      // no readable home: only the default profile
    }
    const prefix = `${def.profileDir}-`;
    for (const n of names.filter((n) => n.startsWith(prefix) && n.length > prefix.length).sort()) {
      const dir = join(ctx.home, n);
      if (isDir(dir)) add(n.slice(prefix.length), dir);
    }
  }
  for (const [key, entry] of Object.entries(config.profiles.entries)) {
    const [provider, profile] = key.split(":");
    if (provider !== def.id || !entry.canonical) continue;
    const pinned = expandHome(ctx, entry.canonical);
    const place: Place = isDir(pinned) ? { profile, dir: pinned } : { profile, dir: null, file: pinned };
    // A pinned location replaces whatever autodetection found under that name, and takes its realpath.
    for (const [name, p] of places) if (name !== profile && p.dir && real(p.dir) === real(pinned)) places.delete(name);
    places.set(profile, place);
  }
  for (const [key, entry] of Object.entries(config.profiles.entries)) {
    const [provider, profile] = key.split(":");
    if (provider === def.id && entry.enabled === false) places.delete(profile);
  }
  const list = [...places.values()];
  return [...list.filter((p) => p.profile === "default"), ...list.filter((p) => p.profile !== "default").sort((a, b) => a.profile.localeCompare(b.profile))];
}
