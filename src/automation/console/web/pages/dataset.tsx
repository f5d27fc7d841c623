// An automation's dataset: examples (browse, add), import and export as ZIP.
import { useState } from "preact/hooks";
import type { Example } from "../../../client/index";
import { ActionButton, ActionForm } from "../components/action";
import { CodeField, parseJson, SelectField, TextField } from "../components/field";
import { Pager } from "../components/pager";
import { SubNav } from "../components/subnav";
import { DataTable } from "../components/table";
import { go, href } from "../router";
import { Outcome, Page, Problem, saveBlob, useAction, useLoad, useSession } from "../ui";

const PAGE = 50;

export function Dataset({ automation }: { automation: string }) {
  const { client, can } = useSession();
  const [offset, setOffset] = useState(0);
  const list = useLoad(() => client.examples.list(automation, { limit: PAGE, offset, include: "full" }), [automation, offset]);
  const [name, setName] = useState("");
  const [input, setInput] = useState("{}");
  const [expected, setExpected] = useState("");
  const add = useAction();
  const transfer = useAction();
  const [mode, setMode] = useState<"append" | "replace">("append");
  const canWrite = can("automations:write");
  return (
    <Page title="Dataset">
      <SubNav automation={automation} />
      <Problem error={list.error} />
      <ExampleTable automation={automation} rows={list.data?.data} />
      {list.data ? (
        <Pager
          back={
            offset > 0 ? (
              <button type="button" class="secondary" onClick={() => setOffset(Math.max(0, offset - PAGE))}>
                Previous page
              </button>
            ) : null
          }
          at={<span class="muted">{list.data.total} examples</span>}
          on={
            offset + PAGE < list.data.total ? (
              <button type="button" class="secondary" onClick={() => setOffset(offset + PAGE)}>
                Next page
              </button>
            ) : null
          }
        />
      ) : null}
      <section aria-labelledby="io-h">
        <h2 id="io-h">Import and export</h2>
        <div class="row">
          <ActionButton
            action={transfer}
            class="secondary"
            run={async () => {
              const res = await client.dataset.export(automation);
              saveBlob(await res.blob(), `dataset-${automation}.zip`);
            }}
          >
            Export dataset (ZIP)
          </ActionButton>
          {canWrite ? (
            <>
              <SelectField label="Import mode" value={mode} options={["append", "replace"]} onValue={(v) => setMode(v as "append" | "replace")} />
              <label>
                Import a dataset ZIP
                <input
                  type="file"
                  accept=".zip,application/zip"
                  onChange={(e) => {
                    const f = e.currentTarget.files?.[0];
                    if (f)
                      void transfer.run(async () => {
                        const r = await client.dataset.import(automation, f, { mode });
                        list.reload();
                        return `Imported: ${r.created} example(s) created (${r.mode}).`;
                      });
                  }}
                />
              </label>
            </>
          ) : null}
        </div>
        <Outcome action={transfer} />
      </section>
      {canWrite ? (
        <section aria-labelledby="add-h">
          <h2 id="add-h">Add an example</h2>
          <ActionForm
            action={add}
            submit={async () => {
              const ex = await client.examples.create(automation, {
                name: name || null,
                input: parseJson(input, "Input") as Record<string, unknown>,
                expected: parseJson(expected, "Expected output"),
              });
              go(href(["automations", automation, "dataset", ex.id]));
            }}
          >
            <TextField label="Name" value={name} pattern="[a-z0-9][a-z0-9_\-]*" maxLength={128} onValue={setName} />
            <CodeField label="Input (JSON)" rows={5} value={input} onValue={setInput} />
            <CodeField label="Expected output (JSON)" rows={4} value={expected} onValue={setExpected} />
            <div class="row">
              <button type="submit" disabled={add.busy}>
                Add example
              </button>
            </div>
            <Problem error={add.error} />
          </ActionForm>
        </section>
      ) : null}
    </Page>
  );
}

function ExampleTable({ automation, rows }: { automation: string; rows: Example[] | undefined }) {
  return (
    <DataTable
      rows={rows}
      skeleton={6}
      empty="This automation has no examples yet."
      head={["Example", "Input", "Expected", "Annotation", "Latest run"]}
      row={(e) => (
        <tr key={e.id}>
          <td>
            <a href={href(["automations", automation, "dataset", e.id])}>{e.name}</a>
          </td>
          <td class="mono">{JSON.stringify(e.input ?? null).slice(0, 120)}</td>
          <td class="mono">{JSON.stringify(e.expected ?? null).slice(0, 120)}</td>
          <td>{e.annotation ?? ""}</td>
          <td>{e.latestRunId ? <a href={href(["runs", e.latestRunId])}>{e.latestRunId}</a> : "—"}</td>
        </tr>
      )}
    />
  );
}
