// Two experiments: first the verdict table of the compare route (per evaluator, the overall score and
// the pass rate: means, paired delta, 95 % CI, p-value, verdict), then side by side by example, the
// examples whose score or pass/fail changed first.
import type { Comparison } from "../../../client/index";
import { compareRows } from "../compare";
import { SubNav } from "../components/subnav";
import { Table } from "../components/table";
import { href } from "../router";
import { Badge, Facts, Notice, Page, Problem, Skeleton, pct, useLoad, score, useSession } from "../ui";

export function Compare({ automation, left, right }: { automation: string; left: string | null; right: string | null }) {
  const { client } = useSession();
  const both = useLoad(
    () => (left && right ? Promise.all([client.experiments.get(automation, left), client.experiments.get(automation, right)]) : Promise.resolve(undefined)),
    [automation, left, right],
  );
  const rows = both.data ? compareRows(both.data[0], both.data[1]) : [];
  const stats = useLoad(
    () => (left && right ? client.experiments.compare(automation, { base: left, candidate: right }) : Promise.resolve(undefined)),
    [automation, left, right],
  );
  return (
    <Page title="Compare experiments">
      <SubNav automation={automation} />
      {!left || !right ? <Notice>Pick two experiments on the experiments page.</Notice> : null}
      <Problem error={both.error} />
      {left && right ? <Verdicts stats={stats.data} error={stats.error} /> : null}
      {left && right && !both.data ? <Skeleton rows={6} /> : null}
      {both.data ? (
        <>
          <div class="two">
            {both.data.map((e, i) => (
              <Facts
                key={e.id}
                rows={[
                  [i === 0 ? "A" : "B", <a href={href(["automations", automation, "experiments", e.id])}>{e.id}</a>],
                  ["Average score", score(e.avgScore)],
                  ["Passed / failed", `${e.passedCount} / ${e.failedCount}`],
                  ["Version", e.version ?? "—"],
                ]}
              />
            ))}
          </div>
          <p class="muted">{rows.filter((r) => r.changed).length} example(s) changed; they come first.</p>
          <Table
            class="compare"
            rows={rows}
            head={["Example", "Score A", "Score B", "Change", "Runs"]}
            row={(r) => (
              <tr key={r.key} class={r.changed ? "changed" : ""}>
                <td>
                  {r.name} {r.changed ? <span class="sr-only">(changed)</span> : null}
                </td>
                <td>
                  {score(r.left?.score)} {r.left?.passed === false ? <Badge value="failed" /> : null}
                </td>
                <td>
                  {score(r.right?.score)} {r.right?.passed === false ? <Badge value="failed" /> : null}
                </td>
                <td class={r.delta === null ? "" : r.delta > 0 ? "score-up" : r.delta < 0 ? "score-down" : ""}>{r.delta === null ? (r.changed ? "only in one" : "—") : `${r.delta > 0 ? "+" : ""}${r.delta.toFixed(3)}`}</td>
                <td>
                  {r.left ? <a href={href(["runs", r.left.run])}>A</a> : null} {r.right ? <a href={href(["runs", r.right.run])}>B</a> : null}
                </td>
              </tr>
            )}
          />
        </>
      ) : null}
    </Page>
  );
}

const signed = (n: number | null) => (n === null ? "—" : `${n > 0 ? "+" : ""}${n.toFixed(3)}`);
const pValue = (p: number) => (p < 0.001 ? "< 0.001" : p.toFixed(3));

/** The compare route's answer as a table: is B better than A, per evaluator, overall and in pass rate. */
function Verdicts({ stats, error }: { stats: Comparison | undefined; error: unknown }) {
  if (error) return <Problem error={error} />;
  if (!stats) return <Skeleton rows={3} />;
  const trials = stats.base.trials > 1 || stats.candidate.trials > 1 ? ` Per example, the mean over its trials (A: ${stats.base.trials}, B: ${stats.candidate.trials}).` : "";
  return (
    <section aria-labelledby="verdicts-h">
      <h2 id="verdicts-h">Verdict</h2>
      <p class="muted">
        {stats.examples.shared} shared example(s), paired; 95 % bootstrap CI of B − A, permutation p (Holm-adjusted across evaluators), pass rate by McNemar; seed {stats.seed}.{trials}
        {stats.examples.onlyBase.length + stats.examples.onlyCandidate.length > 0 ? ` ${stats.examples.onlyBase.length} only in A, ${stats.examples.onlyCandidate.length} only in B.` : ""}
      </p>
      <VerdictTable stats={stats} />
    </section>
  );
}

/**
 * Per evaluator, the overall score and the pass rate: A and B means, paired delta, 95 % CI, p-value
 * and verdict (also the backtest page's, where A is the original runs and B their replays).
 */
export function VerdictTable({ stats, labels = ["A", "B"] }: { stats: Pick<Comparison, "overall" | "evaluators" | "passRate">; labels?: [string, string] }) {
  const rows = [...stats.evaluators.map((e) => ({ name: e.name, s: e as Comparison["overall"], p: e.adjustedPValue })), { name: "Overall score", s: stats.overall, p: stats.overall.pValue }];
  const pr = stats.passRate;
  return (
    <Table
      class="verdicts"
      rows={[...rows, null]}
      head={["Measure", <span class="num">{labels[0]} mean</span>, <span class="num">{labels[1]} mean</span>, <span class="num">Delta</span>, "95 % CI", <span class="num">p</span>, "Verdict"]}
      row={(r) =>
        r ? (
          <tr key={r.name}>
            <th scope="row">{r.name}</th>
            <td class="num">{score(r.s.baseMean)}</td>
            <td class="num">{score(r.s.candidateMean)}</td>
            <td class={`num ${r.s.verdict === "improved" ? "score-up" : r.s.verdict === "regressed" ? "score-down" : ""}`}>{signed(r.s.delta)}</td>
            <td>{r.s.ci ? `[${signed(r.s.ci[0])}, ${signed(r.s.ci[1])}]` : "—"}</td>
            <td class="num">{pValue(r.p)}</td>
            <td>
              <Badge value={r.s.verdict} />
            </td>
          </tr>
        ) : (
          <tr key="pass-rate">
            <th scope="row">Pass rate</th>
            <td class="num">{pct(pr.base)}</td>
            <td class="num">{pct(pr.candidate)}</td>
            <td class={`num ${pr.verdict === "improved" ? "score-up" : pr.verdict === "regressed" ? "score-down" : ""}`}>
              {pr.base === null || pr.candidate === null ? "—" : `${pr.candidate >= pr.base ? "+" : ""}${((pr.candidate - pr.base) * 100).toFixed(1)} pts`}
            </td>
            <td class="muted">
              {pr.passedOnlyBase} pass only in {labels[0]}, {pr.passedOnlyCandidate} only in {labels[1]}
            </td>
            <td class="num">{pValue(pr.pValue)}</td>
            <td>
              <Badge value={pr.verdict} />
            </td>
          </tr>
        )
      }
    />
  );
}
