// What a step's journal record keeps of its input: the `with:` (or control) values after templates
// were rendered, as the step ran with them, minus what must not be stored. A workflow's only secrets
// are the allow-listed environment (`env.X`, `--env-allow`): a value whose template reads `env` is
// kept as "[secret]" whatever it rendered to (a filter such as `base64` cannot smuggle it out), and an
// env value that arrives another way (through an earlier step's output) is blanked wherever it occurs
// in a string. E-mail servers' keys never reach a step's values (`action.email` names its server).
// The record is bounded: long strings are cut, and an input still over the limit is replaced by a
// marker with its size, so a 10 MB document passed to a step costs a few KiB in the journal.
import { isTemplate } from "./template";

export const SECRET = "[secret]";
/** Characters kept of one string; the rest is replaced by a marker naming how many were cut. */
export const STEP_INPUT_STRING_MAX = 4096;
/** Bytes of JSON a step's recorded input may take; past it the input is a `{"[truncated]": …}` marker. */
export const STEP_INPUT_MAX_BYTES = 64 * 1024;
/** Env values shorter than this are not searched for in strings that did not read `env` (they would blank ordinary words). */
const MIN_SCANNED = 6;

const readsEnv = (s: string) => isTemplate(s) && /\benv\b/.test(s);

function cut(s: string): string {
  if (s.length <= STEP_INPUT_STRING_MAX) return s;
  return `${s.slice(0, STEP_INPUT_STRING_MAX)}…[truncated: ${s.length - STEP_INPUT_STRING_MAX} more characters]`;
}

/** A pattern matching any of the env values worth searching for, longest first; undefined when none. */
function envPattern(env: Record<string, string>): RegExp | undefined {
  const values = [...new Set(Object.values(env).filter((v) => typeof v === "string" && v.length >= MIN_SCANNED))].sort((a, b) => b.length - a.length);
  if (values.length === 0) return undefined;
  return new RegExp(values.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
}

function scrub(value: unknown, pattern: RegExp | undefined): unknown {
  if (typeof value === "string") return cut(pattern ? value.replace(pattern, SECRET) : value);
  if (Array.isArray(value)) return value.map((x) => scrub(x, pattern));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, scrub(x, pattern)]));
  return value;
}

/**
 * Walks the step's config as written (`template`) beside what it rendered to: leaves whose template
 * reads `env` become "[secret]"; `drop` (dotted paths, `*` = any segment: a control step's nested
 * step lists) are left out.
 */
function redact(template: unknown, rendered: unknown, pattern: RegExp | undefined, drop: string[][], path: string[]): unknown {
  if (typeof template === "string" && readsEnv(template)) return SECRET;
  if (Array.isArray(rendered)) {
    const t = Array.isArray(template) ? template : [];
    return rendered.map((x, i) => redact(t[i], x, pattern, drop, [...path, String(i)]));
  }
  if (rendered !== null && typeof rendered === "object") {
    const t = template !== null && typeof template === "object" && !Array.isArray(template) ? (template as Record<string, unknown>) : {};
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(rendered)) {
      const at = [...path, k];
      if (drop.some((d) => d.length === at.length && d.every((seg, i) => seg === "*" || seg === at[i]))) continue;
      out[k] = redact(t[k], x, pattern, drop, at);
    }
    return out;
  }
  return scrub(rendered, pattern);
}

/**
 * The input to record for a step: `rendered` (the values it ran with) with secrets redacted and its
 * size bounded (see the module comment). `template` is the step's config as written.
 */
export function recordedInput(template: unknown, rendered: unknown, env: Record<string, string>, drop: string[] = []): unknown {
  const value = redact(template, rendered, envPattern(env), drop.map((d) => d.split(".")), []);
  const json = JSON.stringify(value) ?? "null";
  const size = Buffer.byteLength(json);
  if (size <= STEP_INPUT_MAX_BYTES) return value;
  return { "[truncated]": `the input took ${size} bytes of JSON, over the ${STEP_INPUT_MAX_BYTES}-byte limit of a step record`, preview: cut(json) };
}
