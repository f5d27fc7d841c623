// Backtests: the list of one automation's backtests, and the "replay the last N runs on this version"
// form a version row offers.
import { useState } from "preact/hooks";
import { Progress } from "../components/progress";
import { SubNav } from "../components/subnav";
import { DataTable } from "../components/table";
import { go, href } from "../router";
import { Badge, Page, Problem, Time, useAction, useInterval, useLoad, useSession } from "../ui";

/** A version row's form: replays the active version's last N finished runs on `version`, then opens the backtest. */
export function ReplayForm({ automation, version }: { automation: string; version: { id: string; version: string | null } }) {
  const { client } = useSession();
  const [n, setN] = useState(100);
  const start = useAction();
  const name = version.version ?? version.id;
  return (
    <form
      class="inline replay"
      onSubmit={(e) => {
        e.preventDefault();
        void start.run(async () => void go(href(["automations", automation, "backtests", (await client.backtests.create(automation, { candidate: version.id, select: { limit: n } })).id])));
      }}
    >
      <label class="inline">
        Replay the last
        <input type="number" class="trials-input" min={1} max={10000} step={1} value={n} aria-label={`Runs to replay on ${name}`} onInput={(e) => setN(Number(e.currentTarget.value))} />
        runs on this version
      </label>
      <button type="submit" class="secondary" disabled={start.busy}>
        Backtest <span class="sr-only">{name}</span>
      </button>
      <Problem error={start.error} />
    </form>
  );
}

export function Backtests({ automation }: { automation: string }) {
  const { client } = useSession();
  const list = useLoad(() => client.backtests.list(automation, { limit: 100 }), [automation]);
  useInterval(list.reload, 1500, (list.data?.data ?? []).some((b) => b.status !== "completed"));
  return (
    <Page title="Backtests">
      <SubNav automation={automation} />
      <p class="muted">
        A backtest replays past runs of the active version on another version, with no side effects, and compares them. Start one from a version on the <a href={href(["automations", automation])}>automation page</a>.
      </p>
      <Problem error={list.error} />
      <DataTable
        rows={list.data?.data}
        skeleton={4}
        empty="No backtests yet."
        head={["Backtest", "Status", "Progress", "Replayed on", "Runs of", "Created"]}
        row={(b) => (
          <tr key={b.id}>
            <td>
              <a href={href(["automations", automation, "backtests", b.id])}>{b.id}</a>
            </td>
            <td>
              <Badge value={b.status} />
            </td>
            <td>
              <Progress done={b.progress.done} total={b.progress.total} what="replayed" />
            </td>
            <td>{b.candidate.version ?? b.candidate.versionId}</td>
            <td>{b.base.version ?? b.base.versionId}</td>
            <td>
              <Time iso={b.createdAt} />
            </td>
          </tr>
        )}
      />
    </Page>
  );
}
