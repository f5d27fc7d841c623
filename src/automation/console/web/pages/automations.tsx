// Automations: the list of the tenant's automations, searched and paged.
import { useState } from "preact/hooks";
import type { AutomationSummary } from "../../../client/index";
import { TextField } from "../components/field";
import { FilterForm } from "../components/filters";
import { Pager } from "../components/pager";
import { DataTable } from "../components/table";
import { go, href } from "../router";
import { Page, Problem, Time, useLoad, useSession } from "../ui";

const PAGE = 50;

export function AutomationsList({ query }: { query: URLSearchParams }) {
  const { client, can } = useSession();
  const search = query.get("search") ?? "";
  const offset = Number(query.get("offset") ?? 0) || 0;
  const list = useLoad(() => client.automations.list({ search: search || undefined, limit: PAGE, offset }), [search, offset]);
  const [draft, setDraft] = useState(search);
  return (
    <Page title="Automations" actions={can("automations:write") ? <a href={href(["automations", "new"])}>New automation</a> : undefined}>
      <FilterForm role="search" onApply={() => go(href(["automations"], { search: draft }))} buttons={<button type="submit">Search</button>}>
        <TextField label="Search" type="search" value={draft} placeholder="slug, name or description" onValue={setDraft} />
      </FilterForm>
      <Problem error={list.error} />
      <AutomationTable rows={list.data?.data} />
      {list.data ? (
        <Pager
          back={offset > 0 ? <a href={href(["automations"], { search, offset: Math.max(0, offset - PAGE) })}>Previous page</a> : null}
          at={
            <span class="muted">
              {list.data.total === 0 ? 0 : offset + 1}–{offset + list.data.data.length} of {list.data.total}
            </span>
          }
          on={offset + PAGE < list.data.total ? <a href={href(["automations"], { search, offset: offset + PAGE })}>Next page</a> : null}
        />
      ) : null}
    </Page>
  );
}

function AutomationTable({ rows }: { rows: AutomationSummary[] | undefined }) {
  return (
    <DataTable
      rows={rows}
      skeleton={8}
      empty="No automations."
      head={["Automation", "Type", "Version", "Description", "Updated"]}
      row={(a) => (
        <tr key={a.id}>
          <td>
            <a href={href(["automations", a.id])}>{a.slug}</a>
          </td>
          <td>{a.type}</td>
          <td>{a.version ?? "—"}</td>
          <td>{a.description ?? ""}</td>
          <td>
            <Time iso={a.updatedAt} />
          </td>
        </tr>
      )}
    />
  );
}
