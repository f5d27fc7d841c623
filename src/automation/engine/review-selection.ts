// Which fields of a human-review task a person must confirm: by confidence (strictly below the
// threshold), an explicit list, or all scalar fields; per-field `review: always|never|skip` and
// `exclude` win over the mode. Pure, so the step kind and its tests share it; in engine/ beside
// the step kind (control.human-review) that decides with it.
import type { ReviewField } from "./contract";
import { leaves, lookup } from "./pointer";

export type Confidence = number | "low" | "medium" | "high";

export interface FieldMeta {
  confidence?: Confidence;
  label?: string;
  description?: string;
  review?: "always" | "never" | "skip";
}

export interface Selection {
  mode: "confidence" | "explicit" | "all";
  threshold: Confidence;
  missingConfidence: "review" | "skip";
  include: string[];
  exclude: string[];
}

/** Labels rank low < medium < high; next to numbers they count as 0.25, 0.5 and 0.75. */
const LABEL = { low: 0.25, medium: 0.5, high: 0.75 } as const;
const score = (c: Confidence) => (typeof c === "number" ? c : LABEL[c]);

/** The task's fields: every selected one is `required`; `unknown` lists pointers that name no field. */
export function selectFields(data: unknown, meta: Record<string, FieldMeta>, sel: Selection): { fields: ReviewField[]; unknown: string[] } {
  const unknown = [...sel.include, ...Object.keys(meta)].filter((p) => !lookup(data, p).found);
  const excluded = new Set(sel.exclude);
  const include = new Set(sel.include);
  const fields: ReviewField[] = [];
  const candidates = new Map(leaves(data));
  // Explicitly named non-leaf pointers (an object as a whole) are reviewable too.
  for (const p of [...sel.include, ...Object.keys(meta)]) {
    const hit = lookup(data, p);
    if (hit.found && !candidates.has(p)) candidates.set(p, hit.value);
  }
  for (const [path, value] of candidates) {
    const m = meta[path];
    const reason = why(path, m, sel, include);
    if (reason === null || (excluded.has(path) && m?.review !== "always")) continue;
    fields.push({ path, value, required: true, reason });
  }
  return { fields, unknown };
}

function why(path: string, m: FieldMeta | undefined, sel: Selection, include: Set<string>): string | null {
  if (m?.review === "always") return "review: always";
  if (m?.review === "never" || m?.review === "skip") return null;
  if (include.has(path)) return "included";
  if (sel.mode === "all") return "all fields";
  if (sel.mode === "explicit") return null;
  if (m?.confidence === undefined) return sel.missingConfidence === "review" ? "no confidence given" : null;
  return score(m.confidence) < score(sel.threshold) ? `confidence ${m.confidence} below ${sel.threshold}` : null;
}
