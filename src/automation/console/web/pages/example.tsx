// One example of a dataset: edit it, run it, delete it.
import { useEffect, useState } from "preact/hooks";
import { ActionButton, ActionForm } from "../components/action";
import { CodeField, parseJson, TextField } from "../components/field";
import { SubNav } from "../components/subnav";
import { go, href } from "../router";
import { Outcome, Page, Problem, Skeleton, Time, useAction, useLoad, useSession } from "../ui";

export function ExampleEdit({ automation, example }: { automation: string; example: string }) {
  const { client, can } = useSession();
  const loaded = useLoad(() => client.examples.get(automation, example), [automation, example]);
  const [form, setForm] = useState({ name: "", input: "", expected: "", annotation: "", metadata: "" });
  const save = useAction();
  useEffect(() => {
    const e = loaded.data;
    if (!e) return;
    setForm({
      name: e.name,
      input: JSON.stringify(e.input ?? {}, null, 2),
      expected: e.expected === undefined || e.expected === null ? "" : JSON.stringify(e.expected, null, 2),
      annotation: e.annotation ?? "",
      metadata: e.metadata ? JSON.stringify(e.metadata, null, 2) : "",
    });
  }, [loaded.data]);
  const canWrite = can("automations:write");
  const field = (k: keyof typeof form) => (v: string) => setForm({ ...form, [k]: v });
  return (
    <Page title={`Example ${loaded.data?.name ?? example}`}>
      <SubNav automation={automation} />
      <Problem error={loaded.error} />
      {!loaded.data ? (
        <Skeleton rows={6} />
      ) : (
        <ActionForm
          action={save}
          submit={async () => {
            await client.examples.update(automation, example, {
              name: form.name,
              input: parseJson(form.input, "Input") as Record<string, unknown>,
              expected: parseJson(form.expected, "Expected output"),
              annotation: form.annotation || null,
              metadata: parseJson(form.metadata, "Metadata") as Record<string, unknown> | null,
            });
            loaded.reload();
            return "Example saved.";
          }}
        >
          <fieldset disabled={!canWrite} class="stack">
            <TextField label="Name" value={form.name} onValue={field("name")} pattern="[a-z0-9][a-z0-9_\-]*" required />
            <CodeField label="Input (JSON)" rows={8} value={form.input} onValue={field("input")} />
            <CodeField label="Expected output (JSON)" rows={6} value={form.expected} onValue={field("expected")} />
            <TextField label="Annotation" value={form.annotation} onValue={field("annotation")} />
            <CodeField label="Metadata (JSON)" rows={3} value={form.metadata} onValue={field("metadata")} />
          </fieldset>
          <p class="muted">
            Expected files: {loaded.data.expectedFiles.map((f) => f.name).join(", ") || "none"} · updated <Time iso={loaded.data.updatedAt ?? null} />
          </p>
          {canWrite ? (
            <div class="row">
              <button type="submit" disabled={save.busy}>
                Save example
              </button>
              <ActionButton action={save} class="secondary" disabled={!can("runs:write")} run={async () => void go(href(["runs", (await client.examples.run(automation, example)).id]))}>
                Run this example
              </ActionButton>
              <ActionButton
                action={save}
                class="danger"
                run={async () => {
                  if (!confirm(`Delete example ${form.name}?`)) return;
                  await client.examples.delete(automation, example);
                  go(href(["automations", automation, "dataset"]));
                }}
              >
                Delete
              </ActionButton>
            </div>
          ) : null}
          <Outcome action={save} />
        </ActionForm>
      )}
    </Page>
  );
}
