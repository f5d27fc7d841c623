// Credential discovery for one provider/profile, in the spec's order: the provider's own login files
// (and other coding tools'), then env vars, then key files, then our config. First usable one wins.
import { join, tilde, xdgConfigHome, type Ctx } from "../core/context";
import type { Config } from "../config/config";
import type { Credential, ProviderDef, Where } from "../providers/provider";
import { opencodeAuthPath, opencodeSlot, readJson, readKeyFile } from "./files";

export type Discovery =
  | { kind: "found"; cred: Credential }
  | { kind: "expired"; source: string }
  | { kind: "missing" };

export interface Place {
  profile: string;
  /** The profile's directory (`~/.claude-work`), when the provider has one. */
  dir: string | null;
  /** A pinned credential file (`[profiles.entries] canonical` naming a file). */
  file?: string;
}

export function discover(ctx: Ctx, def: ProviderDef, place: Place, config: Config): Discovery {
  const w: Where = { home: ctx.home, profile: place.profile, dir: place.dir, env: ctx.env, xdgConfig: xdgConfigHome(ctx) };
  const now = ctx.clock.now().getTime();
  let expired: string | undefined;
  const accept = (cred: Credential): Discovery | undefined => {
    if (cred.expiresAt !== undefined && cred.expiresAt <= now) {
      expired ??= cred.source;
      return undefined;
    }
    return { kind: "found", cred };
  };
  // Named profiles only have their own directory (or pinned file); shared sources belong to default.
  const onlyFiles = place.profile !== "default" || place.file !== undefined;
  for (const src of def.sources) {
    let hit: Discovery | undefined;
    if (src.kind === "file") {
      const paths = place.file ? [place.file] : src.paths(w);
      for (const path of paths) {
        const json = readJson(path);
        const c = json === undefined ? null : src.read(json, w);
        if (c && (hit = accept({ ...c, source: tilde(ctx, path) }))) break;
      }
    } else if (onlyFiles) {
      continue;
    } else if (src.kind === "env") {
      const name = src.names.find((n) => ctx.env[n]?.trim());
      if (name) hit = accept({ token: ctx.env[name]!.trim(), source: `env ${name}` });
    } else if (src.kind === "keyfile") {
      const path = join(ctx.home, src.path);
      const key = readKeyFile(path);
      if (key) hit = accept({ token: key, source: tilde(ctx, path) });
    } else if (src.kind === "opencode") {
      const path = opencodeAuthPath(ctx);
      const slot = opencodeSlot(readJson(path), src.slot);
      if (slot) hit = accept({ ...slot, source: `${tilde(ctx, path)} (${src.slot})` });
    } else if (src.kind === "config") {
      if (config.copilotToken) hit = accept({ token: config.copilotToken, source: "config [copilot] token" });
    } else {
      const c = src.find(w);
      if (c) hit = accept({ ...c, source: tilde(ctx, c.source.replace(/^~/, ctx.home)) });
    }
    if (hit) return hit;
  }
  return expired ? { kind: "expired", source: expired } : { kind: "missing" };
}
