// Rendering workflow values without blocking the event loop. A string that is exactly one `{{ expr }}`
// evaluates to the expression's own JSON value; other text with templates renders to a string (liquid.ts).
import { runTask } from "../offthread/pool";
import { compile, evaluate, isTemplate, liquid, RENDER_LIMIT_MS, singleExpression, type TemplateData, toJson } from "./liquid";

export { isTemplate, RENDER_LIMIT_MS, renderStringFully, templateError, type TemplateData, truthy } from "./liquid";

// Most templates render in microseconds, and sending them to a thread would cost more than rendering.
// So a template first gets a short slice of the main thread; one that needs more (a loop of a loop)
// is rendered again on a worker thread (pool.ts) with the full 2 s limit, so the event loop never
// waits for it. The slices of one turn of the event loop are bounded together too: eight parallel
// branches starting at once take at most TURN_BUDGET_MS of it, the rest go straight to the threads.
const MAIN_SLICE_MS = 5;
const TURN_BUDGET_MS = 10;
let spentThisTurn = 0;
let resetPending = false;

function charge(ms: number): void {
  spentThisTurn += ms;
  if (resetPending) return;
  resetPending = true;
  setImmediate(() => {
    spentThisTurn = 0;
    resetPending = false;
  });
}

const overSlice = (e: unknown) => /template render limit exceeded/.test((e as Error)?.message ?? "");

/** Render one string without blocking the event loop for more than a short slice. */
export async function renderString(s: string, data: TemplateData): Promise<unknown> {
  if (!isTemplate(s)) return s;
  const expr = singleExpression(s);
  if (expr !== undefined) return toJson(evaluate(expr, data));
  const template = compile(s);
  if (spentThisTurn < TURN_BUDGET_MS) {
    const started = performance.now();
    try {
      return liquid.renderSync(template, data, { renderLimit: MAIN_SLICE_MS });
    } catch (e) {
      if (!overSlice(e)) throw e;
    } finally {
      charge(performance.now() - started);
    }
  }
  // A thread that is killed at the deadline has hit Liquid's own limit long before.
  // Untyped on purpose (offthread-tasks.ts reaches this module through the workflow parser): liquid.render returns the rendered string.
  return runTask("liquid.render", { source: s, data }, { deadlineMs: RENDER_LIMIT_MS + 5_000 }) as Promise<string>;
}

/** Render every string inside a JSON-like value; `skip` receives dotted paths and keeps those values as they are. */
export async function render(value: unknown, data: TemplateData, skip?: (path: string) => boolean, path = ""): Promise<unknown> {
  if (skip && path !== "" && skip(path)) return value;
  if (typeof value === "string") return renderString(value, data);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) out.push(await render(value[i], data, skip, path ? `${path}.${i}` : String(i)));
    return out;
  }
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = await render(v, data, skip, path ? `${path}.${k}` : k);
    return out;
  }
  return value;
}
