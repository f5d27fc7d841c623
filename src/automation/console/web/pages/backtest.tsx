// One backtest: its progress, then the runs whose outcome changed (broke first, with both runs linked)
// and the verdict table of compare (originals against replays).
import type { ChangedRun } from "../../../client/index";
import { ActionButton } from "../components/action";
import { Progress } from "../components/progress";
import { SubNav } from "../components/subnav";
import { Table } from "../components/table";
import { href } from "../router";
import { Badge, Facts, Notice, Page, Problem, Skeleton, Time, score, useAction, useInterval, useLoad, useSession } from "../ui";
import { VerdictTable } from "./compare";

const CHANGE: Record<ChangedRun["change"], string> = { broke: "broke", score_down: "score down", fixed: "fixed", score_up: "score up" };

export function BacktestDetail({ automation, backtest }: { automation: string; backtest: string }) {
  const { client, can } = useSession();
  const loaded = useLoad(() => client.backtests.get(automation, backtest), [automation, backtest]);
  const cancel = useAction();
  const b = loaded.data;
  useInterval(loaded.reload, 1000, !!b && b.status !== "completed");
  return (
    <Page
      title={`Backtest ${backtest}`}
      actions={
        b && b.status !== "completed" && can("runs:write") ? (
          <ActionButton action={cancel} class="danger" run={async () => void (await client.backtests.cancel(automation, backtest), loaded.reload())}>
            Cancel backtest
          </ActionButton>
        ) : null
      }
    >
      <SubNav automation={automation} />
      <Problem error={loaded.error} />
      <Problem error={cancel.error} />
      {!b ? <Skeleton rows={6} /> : null}
      {b ? (
        <>
          <Facts
            rows={[
              ["Status", <Badge value={b.status} />],
              ["Progress", <Progress done={b.progress.done} total={b.progress.total} what="replayed" />],
              ["Runs of (A)", b.base.version ?? b.base.versionId],
              ["Replayed on (B)", b.candidate.version ?? b.candidate.versionId],
              ["Scored / skipped / cancelled", `${b.progress.scored} / ${b.progress.skipped} / ${b.progress.cancelled}`],
              ["Truth", b.expectedFrom ? `${b.expectedFrom.correction} reviewer correction(s), ${b.expectedFrom.output} original output(s)` : "—"],
              ["Created", <Time iso={b.createdAt} />],
            ]}
          />
          {b.status !== "completed" ? <Notice>The report appears when every selected run is replayed and scored.</Notice> : null}
          {b.report ? (
            <section aria-labelledby="bt-verdicts-h">
              <h2 id="bt-verdicts-h">Verdict</h2>
              <p class="muted">
                {b.report.pairs} run(s), each original (A) paired with its replay (B), both scored against the reviewer's correction where there is one, else the original output; seed {b.report.seed}.
              </p>
              <VerdictTable stats={b.report} labels={["A", "B"]} />
            </section>
          ) : b.reportIssue ? (
            <Notice>{b.reportIssue}</Notice>
          ) : null}
          {b.changes ? (
            <section aria-labelledby="bt-changed-h">
              <h2 id="bt-changed-h">Changed runs</h2>
              <p class="muted">
                {b.changes.broke} broke, {b.changes.fixed} fixed, {b.changes.scoreDown} scored lower, {b.changes.scoreUp} scored higher
                {b.changedCount && b.changed && b.changedCount > b.changed.length ? ` (the first ${b.changed.length} shown)` : ""}.
              </p>
              <Table
                class="compare"
                rows={b.changed ?? []}
                head={["Change", "Score A", "Score B", "Truth", "Original", "Replay"]}
                row={(c) => (
                  <tr key={c.originalRunId} class="changed">
                    <td>
                      <span class={c.change === "broke" || c.change === "score_down" ? "score-down" : "score-up"}>{CHANGE[c.change]}</span>
                    </td>
                    <td>
                      {score(c.base.score)} {c.base.passed ? null : <Badge value="failed" />}
                    </td>
                    <td>
                      {score(c.candidate.score)} {c.candidate.passed ? null : <Badge value="failed" />}
                    </td>
                    <td>{c.expectedFrom === "correction" ? "correction" : "output"}</td>
                    <td>
                      <a class="mono" href={href(["runs", c.originalRunId])}>{c.originalRunId}</a>
                    </td>
                    <td>{c.replayRunId ? <a class="mono" href={href(["runs", c.replayRunId])}>{c.replayRunId}</a> : "—"}</td>
                  </tr>
                )}
              />
            </section>
          ) : null}
          {b.skipped.length ? (
            <section aria-labelledby="bt-skipped-h">
              <h2 id="bt-skipped-h">Skipped runs</h2>
              <Table
                rows={b.skipped}
                head={["Run", "Why"]}
                row={(s) => (
                  <tr key={s.originalRunId}>
                    <td>
                      <a class="mono" href={href(["runs", s.originalRunId])}>{s.originalRunId}</a>
                    </td>
                    <td>{s.reason ?? "—"}</td>
                  </tr>
                )}
              />
            </section>
          ) : null}
        </>
      ) : null}
    </Page>
  );
}
