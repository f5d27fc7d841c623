// Review health against an independent calculation: 10,000 seeded runs, counts per summary / calendar
// bucket / rolling window recomputed here in plain TypeScript, and the 95 % Wilson score interval
// recomputed from its textbook form. The endpoint's latency on that set is printed.
import { describe, expect, test } from "bun:test";
import { createAutomation } from "../../../src/automation/automations/service";
import { harness, json, type Json } from "../app/harness";
import { type SeededRun, seedRuns } from "./seed";

const Z = 1.959963984540054;

/** Wilson score interval, textbook form: (p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n). */
function wilson(k: number, n: number): [number, number] | [null, null] {
  if (n === 0) return [null, null];
  const p = k / n;
  const denom = 1 + (Z * Z) / n;
  const centre = (p + (Z * Z) / (2 * n)) / denom;
  const half = (Z / denom) * Math.sqrt((p * (1 - p)) / n + (Z * Z) / (4 * n * n));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** Monday (UTC) of the ISO week of `iso`, as YYYY-MM-DD. */
function monday(iso: string): string {
  const d = new Date(`${iso.slice(0, 10)}T00:00:00Z`);
  const back = (d.getUTCDay() + 6) % 7;
  return new Date(d.getTime() - back * 86_400_000).toISOString().slice(0, 10);
}

const reviewed = (r: SeededRun) => r.verdict === "correct" || r.verdict === "incorrect";

describe("review health", () => {
  test("10,000 seeded runs: summary, weekly buckets and rolling points match an independent calculation", async () => {
    const h = await harness();
    const t = await h.tenant(`hh${Math.random().toString(36).slice(2, 8)}`);
    const a = await createAutomation(h.ctx.storage.automations, h.clock, t.id, "name: checked\nsteps:\n  - {name: a, type: transform.set, with: {fields: {x: 1}}}\n");
    const b = await createAutomation(h.ctx.storage.automations, h.clock, t.id, "name: other\nsteps:\n  - {name: a, type: transform.set, with: {fields: {x: 1}}}\n");
    const now = h.clock.now().getTime();
    const runs = await seedRuns(h.ctx.db, { tenantId: t.id, automationId: a.id, count: 10_000, end: now - 1000, spacingMs: 500_000, seed: 42, prefix: "a" });
    await seedRuns(h.ctx.db, { tenantId: t.id, automationId: b.id, count: 500, end: now - 1000, spacingMs: 500_000, seed: 7, prefix: "b" });

    const from = new Date(now - 60 * 86_400_000).toISOString();
    const to = new Date(now).toISOString();
    const started = performance.now();
    const res = await h.req("GET", `/v1/automations/${a.id}/reviews/health?from=${from}&to=${to}&bucket=week&rolling_window=100&min_rolling_reviews=20`, { key: t.key });
    const ms = performance.now() - started;
    console.log(`review health over 10,000 runs (+500 of another automation): ${ms.toFixed(1)} ms`);
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(ms).toBeLessThan(5000);

    const inRange = runs.filter((r) => r.createdAt >= from && r.createdAt <= to).sort((x, y) => (x.createdAt === y.createdAt ? x.id.localeCompare(y.id) : x.createdAt.localeCompare(y.createdAt)));
    const correct = inRange.filter((r) => r.verdict === "correct").length;
    const incorrect = inRange.filter((r) => r.verdict === "incorrect").length;
    const nit = inRange.filter((r) => r.verdict === null).length;
    const [lower, upper] = wilson(correct, correct + incorrect);
    expect(body.summary).toMatchObject({ totalRuns: inRange.length, reviewedRuns: correct + incorrect, correctReviews: correct, incorrectReviews: incorrect, nitReviews: nit });
    expect(body.summary.reviewCoverage).toBeCloseTo((correct + incorrect) / inRange.length, 12);
    expect(body.summary.reviewedCorrectness).toBeCloseTo(correct / (correct + incorrect), 12);
    expect(body.summary.confidence.method).toBe("wilson");
    expect(body.summary.confidence.lower).toBeCloseTo(lower!, 12);
    expect(body.summary.confidence.upper).toBeCloseTo(upper!, 12);
    expect(body.granularity).toEqual({ bucket: "week", rollingWindow: 100, minRollingReviews: 20 });
    expect(body.timeRange).toEqual({ from, to });

    const weeks = new Map<string, SeededRun[]>();
    for (const r of inRange) weeks.set(monday(r.createdAt), [...(weeks.get(monday(r.createdAt)) ?? []), r]);
    expect(body.buckets.map((x: Json) => x.start.slice(0, 10))).toEqual([...weeks.keys()].sort());
    for (const bucket of body.buckets as Json[]) {
      const rs = weeks.get(bucket.start.slice(0, 10))!;
      const c = rs.filter((r) => r.verdict === "correct").length;
      const n = rs.filter(reviewed).length;
      expect(bucket).toMatchObject({ totalRuns: rs.length, reviewedRuns: n, correctReviews: c, incorrectReviews: n - c, nitReviews: rs.filter((r) => r.verdict === null).length });
      expect(new Date(bucket.end).getTime() - new Date(bucket.start).getTime()).toBe(7 * 86_400_000);
      expect(bucket.reviewedCorrectness).toBeCloseTo(c / n, 12);
    }

    // Rolling: at each week's last reviewed run, the last 100 reviewed runs up to it; coverage over the last 100 runs.
    const expected: Json[] = [];
    for (const [week] of [...weeks.entries()].sort()) {
      const lastIdx = inRange.findLastIndex((r) => reviewed(r) && monday(r.createdAt) === week);
      if (lastIdx < 0) continue;
      const window = inRange.slice(0, lastIdx + 1).filter(reviewed).slice(-100);
      if (window.length < 20) continue;
      const c = window.filter((r) => r.verdict === "correct").length;
      const all = inRange.slice(Math.max(0, lastIdx - 99), lastIdx + 1);
      const [lo, hi] = wilson(c, window.length);
      expected.push({ at: inRange[lastIdx].createdAt, reviewedRuns: window.length, correctReviews: c, lo, hi, total: all.length, coverage: all.filter(reviewed).length / all.length });
    }
    expect(body.rolling).toHaveLength(expected.length);
    body.rolling.forEach((p: Json, i: number) => {
      const e = expected[i];
      expect({ at: p.at, reviewedRuns: p.reviewedRuns, correctReviews: p.correctReviews, totalRunsInWindow: p.totalRunsInWindow }).toEqual({ at: e.at, reviewedRuns: e.reviewedRuns, correctReviews: e.correctReviews, totalRunsInWindow: e.total });
      expect(p.confidenceLower).toBeCloseTo(e.lo, 12);
      expect(p.confidenceUpper).toBeCloseTo(e.hi, 12);
      expect(p.reviewCoverage).toBeCloseTo(e.coverage, 12);
    });

    // Defaults: the last 30 days, day buckets; experiments=false leaves experiment runs out.
    const def = await json(await h.req("GET", `/v1/automations/workflows.checked/reviews/health`, { key: t.key }));
    const last30 = runs.filter((r) => r.createdAt >= new Date(now - 30 * 86_400_000).toISOString());
    expect(def.summary.totalRuns).toBe(last30.length);
    expect(def.granularity).toEqual({ bucket: "day", rollingWindow: 100, minRollingReviews: 1 });
    const noExp = await json(await h.req("GET", `/v1/automations/${a.id}/reviews/health?experiments=false`, { key: t.key }));
    expect(noExp.summary.totalRuns).toBe(last30.filter((r) => !r.experiment).length);
    const month = await json(await h.req("GET", `/v1/automations/${a.id}/reviews/health?from=${from}&bucket=month`, { key: t.key }));
    expect(month.buckets.reduce((s: number, x: Json) => s + x.totalRuns, 0)).toBe(inRange.length);
  });

  test("no runs: nulls, not zeros or NaN; bad queries are 400; unknown automation 404", async () => {
    const h = await harness();
    const t = await h.tenant(`he${Math.random().toString(36).slice(2, 8)}`);
    const a = await createAutomation(h.ctx.storage.automations, h.clock, t.id, "name: empty\nsteps:\n  - {name: a, type: transform.set, with: {fields: {x: 1}}}\n");
    const body = await json(await h.req("GET", `/v1/automations/${a.id}/reviews/health`, { key: t.key }));
    expect(body.summary).toEqual({
      totalRuns: 0, reviewedRuns: 0, reviewCoverage: null, correctReviews: 0, incorrectReviews: 0, nitReviews: 0, reviewedCorrectness: null,
      confidence: { lower: null, upper: null, method: "wilson" },
    });
    expect(body.buckets).toEqual([]);
    expect(body.rolling).toEqual([]);
    for (const q of ["bucket=year", "rolling_window=0", "rollingWindow=1001", "min_rolling_reviews=x", "from=yesterday", `from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z`]) {
      expect((await h.req("GET", `/v1/automations/${a.id}/reviews/health?${q}`, { key: t.key })).status).toBe(400);
    }
    expect((await h.req("GET", `/v1/automations/wf_nope/reviews/health`, { key: t.key })).status).toBe(404);
  });
});
