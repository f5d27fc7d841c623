// A spread bar: where the trials of one measure landed on [0, 1], the min–max range as a band with the
// mean marked. SVG shapes (attributes, not inline styles: the CSP allows no style attribute); the
// numbers are in its accessible name and in the tooltip, so a screen reader and a mouse read the same.
import type { Spread } from "../../../client/index";
import { score } from "../ui";

const pos = (x: number) => Math.min(100, Math.max(0, x * 100));

/** Mean ± sd [min–max] of the trials, as text. */
export function spreadText(s: Pick<Spread, "n" | "mean" | "sd" | "min" | "max">): string {
  if (s.mean === null) return "no score";
  const sd = s.sd === null ? "" : ` ± ${score(s.sd)}`;
  return `mean ${score(s.mean)}${sd}, min ${score(s.min)}, max ${score(s.max)} over ${s.n} trial${s.n === 1 ? "" : "s"}`;
}

export function SpreadBar({ spread, label }: { spread: Pick<Spread, "n" | "mean" | "sd" | "min" | "max">; label: string }) {
  const text = `${label}: ${spreadText(spread)}`;
  if (spread.mean === null || spread.min === null || spread.max === null) return <span class="muted" title={text}>—</span>;
  const lo = pos(spread.min);
  const hi = pos(spread.max);
  const mean = pos(spread.mean);
  return (
    <span class="spread">
      <svg class="spread-bar" viewBox="0 0 100 12" preserveAspectRatio="none" role="img" aria-label={text} data-min={spread.min} data-max={spread.max} data-mean={spread.mean}>
        <title>{text}</title>
        <rect class="spread-track" x="0" y="5" width="100" height="2" />
        <rect class="spread-range" x={lo} y="2" width={Math.max(hi - lo, 0.8)} height="8" rx="1" />
        <rect class="spread-mean" x={Math.min(mean, 99) - 0.6} y="0" width="1.6" height="12" />
      </svg>{" "}
      <span class="spread-value">{score(spread.mean)}</span>
    </span>
  );
}
