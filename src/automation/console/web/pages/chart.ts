// The review-health chart with uPlot: coverage and correctness (0–100 %) per bucket.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export function healthChart(el: HTMLElement, buckets: { start: string; reviewCoverage: number | null; reviewedCorrectness: number | null }[], range: { from: string; to: string }): uPlot {
  const css = getComputedStyle(document.documentElement);
  const color = (name: string) => css.getPropertyValue(name).trim() || "#888";
  const xs = buckets.map((b) => Date.parse(b.start) / 1000);
  const pct = (v: number | null) => (v === null ? null : v * 100);
  const width = Math.max(320, Math.min(el.clientWidth - 16, 1200));
  const axis = { stroke: color("--muted"), grid: { stroke: color("--line") }, ticks: { stroke: color("--line") } };
  return new uPlot(
    {
      width,
      height: 300,
      // The whole asked-for time range, even when only a few buckets hold runs.
      scales: { x: { time: true, range: [Date.parse(range.from) / 1000, Date.parse(range.to) / 1000] }, y: { range: [0, 100] } },
      axes: [axis, { ...axis, values: (_u: uPlot, ticks: number[]) => ticks.map((t) => `${t} %`) }],
      series: [
        {},
        { label: "Review coverage", stroke: color("--accent"), width: 2, spanGaps: true, points: { size: 7 }, value: (_u: uPlot, v: number | null) => (v === null ? "—" : `${v.toFixed(1)} %`) },
        { label: "Correctness", stroke: color("--ok"), width: 2, spanGaps: true, points: { size: 7 }, value: (_u: uPlot, v: number | null) => (v === null ? "—" : `${v.toFixed(1)} %`) },
      ],
    },
    [xs, buckets.map((b) => pct(b.reviewCoverage)), buckets.map((b) => pct(b.reviewedCorrectness))] as uPlot.AlignedData,
    el,
  );
}
