// Geometry shared by the state core (navigation, scrolling) and the view (drawing), so both agree on
// how many cards fit in a row and how many detail lines fit on a page.

/** Cards are at least this wide; an 80-column terminal shows one column, 200 columns show three. */
export const MIN_CARD_WIDTH = 60;

export function gridColumns(width: number): number {
  return Math.max(1, Math.floor(width / MIN_CARD_WIDTH));
}

export type Layout = "auto" | "normal" | "compact";

/** `auto` picks compact on small terminals. */
export function effectiveLayout(layout: Layout, width: number, height: number): "normal" | "compact" {
  if (layout !== "auto") return layout;
  return height < 30 || width < 100 ? "compact" : "normal";
}

/** Detail view: fixed header lines above the window list, footer lines below it. */
export const DETAIL_HEADER = 5;
export const FOOTER = 2;

export function linesPerWindow(layout: "normal" | "compact"): number {
  return layout === "compact" ? 1 : 3;
}

/** Lines available to the scrolling window list of the detail view. */
export function detailListHeight(height: number): number {
  return Math.max(1, height - DETAIL_HEADER - FOOTER);
}
