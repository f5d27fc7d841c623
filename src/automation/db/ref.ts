import type { AutomationWithCurrent } from "../automations/store";

// How a client names an automation: its id (`wf_…`, `agt_…`) or a typed target `workflows.<name>` /
// `agents.<name>`. The official SDKs turn `{type: "workflow", id}` into `workflows.<id>`, so the name
// part of a typed target is tried as a slug first and then as an id of that same type.

export type AutomationRef =
  | { kind: "id"; id: string }
  | { kind: "typed"; type: "workflow" | "agent"; name: string };

export function parseRef(ref: string): AutomationRef {
  const m = /^(workflows|agents)\.(.+)$/.exec(ref);
  return m ? { kind: "typed", type: m[1] === "agents" ? "agent" : "workflow", name: m[2] } : { kind: "id", id: ref };
}

/**
 * Resolves `ref` with the caller's two lookups (slug within type, id within tenant). A typed target
 * whose name is an id resolves to that automation only when the types agree, so `agents.<wf_ id>`
 * stays a 404 instead of silently running a workflow.
 */
export function resolveRef<T extends { type: string }>(
  ref: string,
  bySlug: (type: "workflow" | "agent", slug: string) => T | undefined,
  byId: (id: string) => T | undefined,
): T | undefined {
  const r = parseRef(ref);
  if (r.kind === "id") return byId(r.id);
  const bySlugRow = bySlug(r.type, r.name);
  if (bySlugRow) return bySlugRow;
  const byIdRow = byId(r.name);
  return byIdRow?.type === r.type ? byIdRow : undefined;
}

/** A found automation and version as a fresh copy (a caller may change what it got). */
export const copyFound = (found: AutomationWithCurrent | undefined): AutomationWithCurrent | undefined =>
  found && { automation: { ...found.automation }, current: found.current && { ...found.current } };

/**
 * The last lookup per (tenant, ref) that found a current version, for run starts
 * (findWithCurrent's `mayRemember`), per process, oldest forgotten first: each holds a version's YAML.
 * What it answers is marked `remembered`, and the run insert checks it is still true
 * (RunInsertOptions.source), so a changed automation is never run from memory.
 */
export class RememberedLookups {
  private readonly kept = new Map<string, AutomationWithCurrent>();

  constructor(private readonly max = 200) {}

  get(key: string): AutomationWithCurrent | undefined {
    const known = this.kept.get(key);
    return known && { ...copyFound(known)!, remembered: true };
  }

  /** Keeps what a lookup found (a fresh answer replaces the one kept; nothing current: forgotten). */
  keep(key: string, found: AutomationWithCurrent | undefined): void {
    this.kept.delete(key);
    if (!found?.current) return;
    this.kept.set(key, copyFound(found)!);
    if (this.kept.size > this.max) this.kept.delete(this.kept.keys().next().value!);
  }
}
