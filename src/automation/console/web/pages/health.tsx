// Review health: coverage, correctness and its Wilson interval, per day/week/month as a chart.
import { useEffect, useRef, useState } from "preact/hooks";
import { SelectField } from "../components/field";
import { FilterForm } from "../components/filters";
import { SubNav } from "../components/subnav";
import { go, href } from "../router";
import { Facts, Json, Page, Problem, Skeleton, Time, useLoad, pct, useSession } from "../ui";

export function Health({ automation, query }: { automation: string; query: URLSearchParams }) {
  const { client } = useSession();
  const bucket = query.get("bucket") ?? "day";
  const health = useLoad(() => client.reviews.health(automation, { bucket }), [automation, bucket]);
  const h = health.data;
  return (
    <Page title="Review health">
      <SubNav automation={automation} />
      <FilterForm>
        <SelectField label="Bucket" value={bucket} options={["day", "week", "month"]} onValue={(v) => go(href(["automations", automation, "health"], { bucket: v }))} />
      </FilterForm>
      <Problem error={health.error} />
      {!h ? (
        <Skeleton rows={8} />
      ) : (
        <>
          <Facts
            rows={[
              ["Runs", String(h.summary.totalRuns)],
              ["Reviewed", String(h.summary.reviewedRuns)],
              ["Coverage", pct(h.summary.reviewCoverage)],
              ["Correct / incorrect", `${h.summary.correctReviews} / ${h.summary.incorrectReviews}`],
              ["Correctness", pct(h.summary.reviewedCorrectness)],
              ["95 % interval (Wilson)", `${pct(h.summary.confidence.lower)} – ${pct(h.summary.confidence.upper)}`],
              ["From", <Time iso={h.timeRange.from} />],
              ["To", <Time iso={h.timeRange.to} />],
            ]}
          />
          <HealthChart buckets={h.buckets} range={h.timeRange} />
          <details>
            <summary>Buckets (JSON)</summary>
            <Json value={h.buckets} label="Buckets" />
          </details>
        </>
      )}
    </Page>
  );
}

/** uPlot, loaded on this page only (a chunk of its own). */
function HealthChart({ buckets, range }: { buckets: { start: string; reviewCoverage: number | null; reviewedCorrectness: number | null; totalRuns: number }[]; range: { from: string; to: string } }) {
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let plot: { destroy(): void } | undefined;
    let live = true;
    import("./chart")
      .then(({ healthChart }) => {
        if (live && box.current) plot = healthChart(box.current, buckets, range);
      })
      .catch(setError);
    return () => {
      live = false;
      plot?.destroy();
    };
  }, [buckets]);
  return (
    <figure>
      <figcaption>Review coverage and correctness per bucket</figcaption>
      <Problem error={error} />
      <div class="chart" ref={box} role="img" aria-label={`Chart of ${buckets.length} buckets: review coverage and correctness`} />
    </figure>
  );
}
