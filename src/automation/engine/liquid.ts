// Liquid templating for workflow values, synchronous, on whichever thread calls it (template.ts decides
// which: the main thread for a short slice, else a worker thread). A string that is exactly one
// `{{ expr }}` evaluates to the expression's own JSON value (number, object, array...); any other text
// with templates renders to a string.
import { Context, Liquid, toValueSync, Value, type Template } from "liquidjs";

// Templates never touch the file system: `{% include %}`/`{% render %}`/layouts find nothing.
const noFiles = {
  exists: async () => false,
  existsSync: () => false,
  readFile: async (f: string) => Promise.reject(new Error(`templates cannot read files (${f})`)),
  readFileSync: (f: string): string => {
    throw new Error(`templates cannot read files (${f})`);
  },
  resolve: (_dir: string, file: string) => file,
};

/** Render time one template may take (ms), on whichever thread renders it. */
export const RENDER_LIMIT_MS = 2_000;

export const liquid = new Liquid({
  fs: noFiles,
  root: [],
  relativeReference: false,
  strictFilters: true,
  // Bounds for hostile templates: source length, render time (ms) and memory (string/array sizes).
  parseLimit: 1_000_000,
  renderLimit: RENDER_LIMIT_MS,
  memoryLimit: 64 * 1024 * 1024,
  // Objects inside mixed text render as JSON rather than "[object Object]".
  outputEscape: (v: unknown) => (v !== null && typeof v === "object" ? JSON.stringify(v) : String(v ?? "")),
});

const SINGLE = /^\s*\{\{-?([\s\S]*?)-?\}\}\s*$/;
const cache = new Map<string, Template[]>();
const values = new Map<string, Value>();

export type TemplateData = Record<string, unknown>;

/** True when the string contains Liquid markup. */
export function isTemplate(s: string): boolean {
  return s.includes("{{") || s.includes("{%");
}

export function singleExpression(s: string): string | undefined {
  const m = SINGLE.exec(s);
  if (!m || m[1].includes("{{") || m[1].includes("}}") || m[1].includes("{%")) return undefined;
  return m[1];
}

/** Parse-time check: the Liquid error message, or undefined when the template is well formed. */
export function templateError(s: string): string | undefined {
  if (!isTemplate(s)) return undefined;
  try {
    compile(s);
    const expr = singleExpression(s);
    if (expr !== undefined && expr.trim() === "") return "empty expression";
    return undefined;
  } catch (e) {
    return (e as Error).message.replace(/, line:\d+, col:\d+$/, "");
  }
}

export function compile(s: string): Template[] {
  let t = cache.get(s);
  if (!t) {
    t = liquid.parse(s);
    if (cache.size > 5000) cache.clear();
    cache.set(s, t);
  }
  return t;
}

// liquid.evalValueSync re-parses the expression on every call; the parsed Value is cached instead.
export function evaluate(expr: string, data: TemplateData): unknown {
  let value = values.get(expr);
  if (!value) {
    value = new Value(expr, liquid);
    if (values.size > 5000) values.clear();
    values.set(expr, value);
  }
  return toValueSync(value.value(new Context(data, liquid.options, {}, { liquid })));
}

/** Render one string on this thread with the full limits (the worker threads' task). */
export function renderStringFully(s: string, data: TemplateData): unknown {
  if (!isTemplate(s)) return s;
  const expr = singleExpression(s);
  if (expr !== undefined) return toJson(evaluate(expr, data));
  return liquid.renderSync(compile(s), data);
}

// Liquid hands back its own drops and `undefined`; workflows only ever see plain JSON values.
export function toJson(v: unknown): unknown {
  if (v === undefined) return null;
  return v;
}

/** Liquid-style truthiness for `if`/conditions, plus the strings "false", "0" and "" being false. */
export function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0) return false;
  if (typeof v === "string") {
    const t = v.trim().toLowerCase();
    return t !== "" && t !== "false" && t !== "0" && t !== "null";
  }
  return true;
}
