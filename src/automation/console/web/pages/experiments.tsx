// Experiments: the list (progress, pass/fail counts, average score; pick two to compare).
import { useState } from "preact/hooks";
import { Progress } from "../components/progress";
import { SubNav } from "../components/subnav";
import { DataTable } from "../components/table";
import { go, href } from "../router";
import { Badge, Page, Problem, Time, useAction, useInterval, useLoad, score, useSession } from "../ui";

export function Experiments({ automation }: { automation: string }) {
  const { client, can } = useSession();
  const list = useLoad(() => client.experiments.list(automation, { limit: 100 }), [automation]);
  const [picked, setPicked] = useState<string[]>([]);
  // Runs per example; the server refuses what is not a whole number 1–20 (its message shows).
  const [trials, setTrials] = useState(1);
  const start = useAction();
  const running = (list.data?.data ?? []).some((e) => e.status !== "completed");
  useInterval(list.reload, 1500, running);
  const toggle = (id: string) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p.slice(-1), id]));
  return (
    <Page
      title="Experiments"
      actions={
        <>
          {picked.length === 2 ? (
            <a class="button" href={href(["automations", automation, "compare"], { a: picked[0], b: picked[1] })}>
              Compare the two selected
            </a>
          ) : (
            <span class="muted">Select two to compare</span>
          )}
          {can("runs:write") ? (
            <>
              <label class="inline">
                Trials
                <input type="number" class="trials-input" min={1} max={20} step={1} value={trials} onInput={(e) => setTrials(Number(e.currentTarget.value))} />
              </label>
              <button
                type="button"
                class="secondary"
                disabled={start.busy}
                onClick={() => start.run(async () => void go(href(["automations", automation, "experiments", (await client.experiments.create(automation, trials === 1 ? {} : { trials })).id])))}
              >
                Run the whole dataset
              </button>
            </>
          ) : null}
        </>
      }
    >
      <SubNav automation={automation} />
      <Problem error={list.error} />
      <Problem error={start.error} />
      <DataTable
        rows={list.data?.data}
        skeleton={6}
        empty="No experiments yet."
        head={[<span class="sr-only">Select</span>, "Experiment", "Status", "Progress", "Passed", "Failed", "Average score", "Version", "Created"]}
        row={(e) => (
          <tr key={e.id}>
            <td>
              <input type="checkbox" aria-label={`Select ${e.id} for comparison`} checked={picked.includes(e.id)} onChange={() => toggle(e.id)} />
            </td>
            <td>
              <a href={href(["automations", automation, "experiments", e.id])}>{e.id}</a>
            </td>
            <td>
              <Badge value={e.status} />
            </td>
            <td>
              <Progress done={e.completedCount} total={e.runCount} what="finished" />
            </td>
            <td>{e.passedCount}</td>
            <td>{e.failedCount}</td>
            <td>{score(e.avgScore)}</td>
            <td>{e.version ?? "—"}</td>
            <td>
              <Time iso={e.createdAt} />
            </td>
          </tr>
        )}
      />
    </Page>
  );
}
