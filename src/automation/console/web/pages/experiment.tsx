// One experiment: its facts, its per-example runs and scores, and the trials of each example when it ran
// them more than once.
import type { ExperimentDetail as Detail, TrialStats } from "../../../client/index";
import { overall } from "../compare";
import { ActionButton } from "../components/action";
import { SubNav } from "../components/subnav";
import { Table } from "../components/table";
import { href } from "../router";
import { SpreadBar } from "../components/spread";
import { Badge, Facts, type Loaded, Page, Problem, Skeleton, Time, pct, useAction, useInterval, useLoad, score, useSession } from "../ui";

export function ExperimentDetail({ automation, experiment }: { automation: string; experiment: string }) {
  const { client, can } = useSession();
  const loaded = useLoad(() => client.experiments.get(automation, experiment), [automation, experiment]);
  const cancel = useAction();
  const e = loaded.data;
  useInterval(loaded.reload, 1000, !!e && e.status !== "completed");
  // Trials of an experiment that ran its examples more than once, reloaded as its runs are scored.
  const many = !!e && manyTrials(e);
  const trialStats = useLoad(() => (many ? client.experiments.trials(automation, experiment) : Promise.resolve(undefined)), [automation, experiment, many, e?.completedCount]);
  const stats = many ? trialStats : undefined;
  // A run counts as completed before its evaluators' scores are recorded: the last scores can land after
  // the experiment completed. Keep reloading while a completed run has no verdict yet (at most 30 s after
  // completion, so an experiment whose automation has no evaluator does not poll for ever).
  const unscored = !!trialStats.data?.examples.some((x) => x.runs.some((r) => r.status === "completed" && r.passed === null));
  const recent = !e?.completedAt || Date.now() - Date.parse(e.completedAt) < 30_000;
  useInterval(trialStats.reload, 1000, many && unscored && recent);
  return (
    <Page
      title={`Experiment ${experiment}`}
      actions={
        e && e.status !== "completed" && can("runs:write") ? (
          <ActionButton action={cancel} class="danger" run={async () => void (await client.experiments.cancel(automation, experiment), loaded.reload())}>
            Cancel experiment
          </ActionButton>
        ) : null
      }
    >
      <SubNav automation={automation} />
      <Problem error={loaded.error} />
      <Problem error={cancel.error} />
      {!e ? (
        <Skeleton rows={6} />
      ) : (
        <>
          <Facts
            rows={[
              ["Status", <Badge value={e.status} />],
              ["Progress", <span><progress class="progress" max={e.runCount || 1} value={e.completedCount} aria-label="runs finished" /> {e.completedCount}/{e.runCount}</span>],
              ["Passed", String(e.passedCount)],
              ["Failed", String(e.failedCount)],
              ["Average score", score(e.avgScore)],
              ["Version", e.version ?? "—"],
              ["Created", <Time iso={e.createdAt} />],
              ["Completed", <Time iso={e.completedAt} />],
            ]}
          />
          {stats ? <Trials stats={stats} /> : null}
          <ExperimentRuns detail={e} trialOf={stats?.data ? new Map(stats.data.examples.flatMap((x) => x.runs.map((r) => [r.id, r.trial] as const))) : undefined} />
        </>
      )}
    </Page>
  );
}

/** Runs per example above one: the experiment ran its examples as trials (the wire shape has no trials key). */
const manyTrials = (d: Detail) => new Set(d.runs.map((r) => r.exampleId ?? r.id)).size < d.runs.length;

/** Each example's trials as spread bars (overall and per evaluator), with the overall figures above. */
function Trials({ stats }: { stats: Loaded<TrialStats | undefined> }) {
  const t = stats.data;
  return (
    <section aria-labelledby="trials-h">
      <h2 id="trials-h">Trials</h2>
      <Problem error={stats.error} />
      {!t ? (
        <Skeleton rows={4} />
      ) : (
        <>
          <Facts
            rows={[
              ["Trials per example", String(t.trials)],
              ["Overall", <SpreadBar spread={t.overall} label="All trials" />],
              ["Trial noise (within-example sd)", score(t.overall.withinSd)],
              ["Pass rate (all trials)", pct(t.overall.passRate)],
              ["Passed every trial (pass^k)", pct(t.overall.passAll)],
              ["Passed a trial (pass@k)", pct(t.overall.passAny)],
              ["Passed most trials", pct(t.overall.passMajority)],
            ]}
          />
          <Table
            class="trials"
            rows={t.examples}
            head={["Example", "Overall (min–max, mean marked)", ...t.evaluators.map((x) => x.name), "Passed"]}
            row={(x) => (
              <tr key={x.exampleId}>
                <td>{x.exampleName ?? x.exampleId}</td>
                <td>
                  <SpreadBar spread={x.overall} label={`${x.exampleName ?? x.exampleId} overall`} />
                </td>
                {t.evaluators.map((ev) => {
                  const s = x.evaluators.find((y) => y.name === ev.name);
                  return <td key={ev.name}>{s ? <SpreadBar spread={s} label={`${x.exampleName ?? x.exampleId} ${ev.name}`} /> : "—"}</td>;
                })}
                <td>
                  {x.overall.passed}/{x.overall.scored}
                </td>
              </tr>
            )}
          />
        </>
      )}
    </section>
  );
}

function ExperimentRuns({ detail, trialOf }: { detail: Detail; trialOf?: Map<string, number> }) {
  return (
    <Table
      rows={detail.runs}
      head={trialOf ? ["Example", "Trial", "Run", "Status", "Score", "Evaluators"] : ["Example", "Run", "Status", "Score", "Evaluators"]}
      row={(r) => {
        const results = detail.resultsByRun[r.id] ?? [];
        return (
          <tr key={r.id}>
            <td>{r.exampleName ?? r.exampleId ?? "—"}</td>
            {trialOf ? <td>{trialOf.get(r.id) ?? "—"}</td> : null}
            <td>
              <a href={href(["runs", r.id])}>{r.id}</a>
            </td>
            <td>
              <Badge value={r.status} />
            </td>
            <td>{score(overall(results))}</td>
            <td>
              {results.map((x) => (
                <div key={x.id}>
                  {x.evaluatorName}: {score(x.score)} {x.passed === null ? "" : <Badge value={x.passed ? "passed" : "failed"} />}
                  {x.error ? <span class="problem">{x.error}</span> : null}
                </div>
              ))}
            </td>
          </tr>
        );
      }}
    />
  );
}
