// The pure view: `render(state, now, options) → lines`. Exactly `state.height` lines, each exactly
// `state.width` cells wide, styled with ANSI only when colour is on (NO_COLOR turns it off).
import pc from "picocolors";
import { dashboard } from "./dashboard.ts";
import { detail } from "./detail.ts";
import { usageView } from "./usage.ts";
import type { ViewOptions } from "./parts.ts";
import { selectedTarget, type State } from "./state.ts";

export type { ViewOptions } from "./parts.ts";

export function render(s: State, now: Date, o: ViewOptions): string[] {
  const c = pc.createColors(o.color);
  const out = s.view === "usage" ? usageView(s, c, o) : s.view === "detail" && selectedTarget(s) ? detail(s, now, c, o) : dashboard(s, now, c, o);
  return out.slice(0, s.height);
}
