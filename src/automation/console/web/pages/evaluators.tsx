// An automation's evaluators: the YAML, validated by the server when saved (its issues name the line).
import { useEffect, useState } from "preact/hooks";
import { ActionForm } from "../components/action";
import { CodeField } from "../components/field";
import { SubNav } from "../components/subnav";
import { Outcome, Page, Problem, Skeleton, useAction, useLoad, useSession } from "../ui";

export function Evaluators({ automation }: { automation: string }) {
  const { client, can } = useSession();
  const loaded = useLoad(() => client.evaluators.get(automation), [automation]);
  const [yaml, setYaml] = useState("");
  const save = useAction();
  useEffect(() => {
    if (loaded.data) setYaml(loaded.data.yaml);
  }, [loaded.data]);
  return (
    <Page title="Evaluators">
      <SubNav automation={automation} />
      <Problem error={loaded.error} />
      {!loaded.data && loaded.loading ? (
        <Skeleton rows={8} />
      ) : (
        <ActionForm
          action={save}
          submit={async () => {
            await client.evaluators.update(automation, yaml);
            loaded.reload();
            return "Evaluators saved.";
          }}
        >
          <CodeField label="Evaluators (YAML)" rows={18} value={yaml} readOnly={!can("automations:write")} onValue={setYaml} />
          {loaded.data ? (
            <p class="muted">
              {loaded.data.config.evaluators.length} evaluator(s), pass threshold {loaded.data.config.passThreshold}
            </p>
          ) : null}
          {can("automations:write") ? (
            <div class="row">
              <button type="submit" disabled={save.busy}>
                Validate and save
              </button>
            </div>
          ) : null}
          <Outcome action={save} />
        </ActionForm>
      )}
    </Page>
  );
}
