// Two experiments side by side by example, the examples whose score or pass/fail changed first.
import { compareRows } from "../compare";
import { SubNav } from "../components/subnav";
import { Table } from "../components/table";
import { href } from "../router";
import { Badge, Facts, Notice, Page, Problem, Skeleton, useLoad, score, useSession } from "../ui";

export function Compare({ automation, left, right }: { automation: string; left: string | null; right: string | null }) {
  const { client } = useSession();
  const both = useLoad(
    () => (left && right ? Promise.all([client.experiments.get(automation, left), client.experiments.get(automation, right)]) : Promise.resolve(undefined)),
    [automation, left, right],
  );
  const rows = both.data ? compareRows(both.data[0], both.data[1]) : [];
  return (
    <Page title="Compare experiments">
      <SubNav automation={automation} />
      {!left || !right ? <Notice>Pick two experiments on the experiments page.</Notice> : null}
      <Problem error={both.error} />
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
