// One automation: its facts and triggers, links to its runs, versions and evaluation pages, its versions
// (each one's YAML, a backtest replay from a tagged one), its schemas, and the run form.
import { useState } from "preact/hooks";
import type { Automation } from "../../../client/index";
import { DataTable } from "../components/table";
import { href } from "../router";
import { Badge, Facts, Json, Page, Problem, Skeleton, Time, useLoad, useSession } from "../ui";
import { ReplayForm } from "./backtests";
import { RunForm } from "./run-form";

export function AutomationDetail({ id }: { id: string }) {
  const session = useSession();
  const { client } = session;
  const automation = useLoad(() => client.automations.get(id), [id]);
  const versions = useLoad(() => client.automations.versions.list(id, { limit: 100 }), [id]);
  const a = automation.data;
  return (
    <Page title={a ? `Automation ${a.slug}` : "Automation"}>
      <Problem error={automation.error} />
      {!a ? (
        <Skeleton rows={5} />
      ) : (
        <>
          <p>{a.description}</p>
          <Facts
            rows={[
              ["Id", <span class="mono">{a.id}</span>],
              ["Type", a.type],
              ["Status", <Badge value={a.status} />],
              ["Current version", a.version ?? "—"],
              ["Triggers", triggerText(a.triggers)],
              ["Updated", <Time iso={a.updatedAt} />],
            ]}
          />
          <nav class="subnav" aria-label="About this automation">
            <a href={href(["runs"], { source: a.id })}>Runs</a>
            {a.type === "workflow" ? <a href={href(["automations", a.id, "versions"])}>Versions and diff</a> : null}
            {a.type === "workflow" && session.can("automations:write") ? <a href={href(["automations", a.id, "edit"])}>New version</a> : null}
            <a href={href(["automations", a.id, "dataset"])}>Dataset</a>
            <a href={href(["automations", a.id, "evaluators"])}>Evaluators</a>
            <a href={href(["automations", a.id, "experiments"])}>Experiments</a>
            <a href={href(["automations", a.id, "health"])}>Review health</a>
          </nav>
          {session.can("runs:write") && a.type === "workflow" ? <RunForm automation={a} /> : null}
        </>
      )}
      <section aria-labelledby="versions-h">
        <h2 id="versions-h">Versions</h2>
        <Problem error={versions.error} />
        <DataTable
          rows={versions.data?.data}
          skeleton={2}
          head={["Version", "Id", "Source", "Current or backtest", "Created", "YAML"]}
          row={(v) => <VersionRow key={v.id} automation={id} version={v} />}
        />
      </section>
      {a ? (
        <section aria-labelledby="schema-h">
          <h2 id="schema-h">Input and output schema</h2>
          <div class="two">
            <Json value={a.inputSchema} label="Input schema" />
            <Json value={a.outputSchema} label="Output schema" />
          </div>
        </section>
      ) : null}
    </Page>
  );
}

function triggerText(t: Automation["triggers"]): string {
  const on: string[] = (["api", "manual", "email"] as const).filter((k) => t[k]);
  if (t.cron) on.push("cron");
  return on.join(", ") || "none";
}

function VersionRow({ automation, version }: { automation: string; version: { id: string; version: string | null; sourceRef: string | null; isCurrent: boolean; createdAt: string } }) {
  const { client, can } = useSession();
  const [open, setOpen] = useState(false);
  const yaml = useLoad(() => (open ? client.automations.versions.yaml(automation, version.id) : Promise.resolve(undefined)), [open]);
  return (
    <>
      <tr>
        <td>{version.version ?? <span class="muted">untagged</span>}</td>
        <td class="mono">{version.id}</td>
        <td>{version.sourceRef ?? "—"}</td>
        <td>{version.isCurrent ? "current" : can("runs:write") && version.version ? <ReplayForm automation={automation} version={version} /> : ""}</td>
        <td>
          <Time iso={version.createdAt} />
        </td>
        <td>
          <button type="button" class="secondary" aria-expanded={open} onClick={() => setOpen(!open)}>
            {open ? "Hide" : "Show"} <span class="sr-only">YAML of {version.version ?? version.id}</span>
          </button>
        </td>
      </tr>
      {open ? (
        <tr>
          <td colSpan={6}>
            <Problem error={yaml.error} />
            {yaml.data !== undefined ? (
              <pre class="json" tabIndex={0} aria-label={`YAML of ${version.id}`}>
                {yaml.data}
              </pre>
            ) : (
              <Skeleton rows={2} />
            )}
          </td>
        </tr>
      ) : null}
    </>
  );
}
