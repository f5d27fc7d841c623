// Saving TUI toggles into config.toml: only the touched key changes; comments and layout stay.
import toml from "toml";
import { join, configDir, configFile, type Ctx } from "../core/context";
import { readText, withLock, writeAtomic } from "../core/files";
import { setStringArray } from "./toml-edit";

function at(data: unknown, path: string[]): unknown {
  let cur = data;
  for (const k of path) {
    if (!cur || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

/** Reads `[table] key` (a string array), applies `change`, writes the file back. Throws one-line Errors. */
export async function editList(ctx: Ctx, table: string[], key: string, change: (list: string[]) => string[]): Promise<string[]> {
  const path = configFile(ctx);
  return withLock(join(configDir(ctx), "config.lock"), () => {
    const text = readText(path) ?? "";
    let data: unknown;
    try {
      data = toml.parse(text);
    } catch {
      throw new Error(`${path} is not valid TOML; fix it before saving preferences`);
    }
    const current = at(data, [...table, key]);
    const list = Array.isArray(current) ? current.filter((x): x is string => typeof x === "string") : [];
    const next = change(list);
    const updated = setStringArray(text, table, key, next);
    let check: unknown;
    try {
      check = at(toml.parse(updated), [...table, key]);
    } catch {
      check = undefined;
    }
    if (JSON.stringify(check) !== JSON.stringify(next)) {
      throw new Error(`cannot update ${[...table, key].join(".")} in ${path}: it is written in a form this tool does not rewrite`);
    }
    writeAtomic(path, updated);
    return next;
  });
}

const toggle = (list: string[], item: string, on: boolean) =>
  on ? (list.includes(item) ? list : [...list, item]) : list.filter((x) => x !== item);

export const setFavoriteProvider = (ctx: Ctx, provider: string, on: boolean) =>
  editList(ctx, ["favorites"], "providers", (l) => toggle(l, provider, on));

export const setQuotaPreference = (ctx: Ctx, provider: string, window: string, list: "favorites" | "hidden", on: boolean) =>
  editList(ctx, ["quota_preferences", provider], list, (l) => toggle(l, window, on));
