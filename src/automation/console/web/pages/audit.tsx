// The audit trail (`audit:read`): who did what, when, with which outcome. Filters by actor, action,
// resource and time live in the address (a filtered view is a link to share); "Load more" follows the
// API's cursor and appends the next page under the rows already shown.
import { useEffect, useState } from "preact/hooks";
import type { AuditEntry } from "../../../client/index";
import { ActionButton } from "../components/action";
import { TextField } from "../components/field";
import { FilterForm, useAddressDraft } from "../components/filters";
import { DataTable } from "../components/table";
import { go, href } from "../router";
import { Badge, Problem, Page, Time, useAction, useLoad, useSession } from "../ui";

const PAGE = 50;

/** A day of a date field as the start (since) or the end (until) of that day, UTC. */
const day = (v: string | undefined, end: boolean) => (v && /^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T${end ? "23:59:59.999" : "00:00:00.000"}Z` : v || undefined);

export function Audit({ query }: { query: URLSearchParams }) {
  const { client } = useSession();
  const key = query.toString();
  const filters = { actor: query.get("actor") || undefined, action: query.get("action") || undefined, resource: query.get("resource") || undefined, since: day(query.get("since") ?? undefined, false), until: day(query.get("until") ?? undefined, true) };
  // A page's size: 50, or `limit` from the address (1-200, the API's bounds).
  const limit = Math.min(200, Math.max(1, Number(query.get("limit")) || PAGE));
  const first = useLoad(() => client.audit.list({ ...filters, limit }), [key]);
  // The pages loaded with "Load more" after the first, and the cursor of the next one.
  const [more, setMore] = useState<AuditEntry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  useEffect(() => {
    setMore([]);
    setCursor(first.data?.nextCursor ?? null);
  }, [first.data]);
  const loadMore = useAction();
  const { draft, set, clear } = useAddressDraft(query);
  const rows = first.data ? [...first.data.data, ...more] : undefined;

  return (
    <Page title="Audit">
      <FilterForm
        label="Filter the audit trail"
        role="search"
        onApply={() => go(href(["audit"], { ...draft, limit: query.get("limit") }))}
        buttons={
          <>
            <button type="submit">Apply</button>
            <a class="button secondary" href="#/audit" onClick={clear}>
              Clear
            </a>
          </>
        }
      >
        <TextField label="Actor" placeholder="usr_… or key_…" value={draft.actor ?? ""} onValue={(v) => set("actor", v)} />
        <TextField label="Action" placeholder="e.g. keys.create" value={draft.action ?? ""} onValue={(v) => set("action", v)} />
        <TextField label="Resource" placeholder="an id, e.g. run_…" value={draft.resource ?? ""} onValue={(v) => set("resource", v)} />
        <TextField label="Since" type="date" value={(draft.since ?? "").slice(0, 10)} onValue={(v) => set("since", v)} />
        <TextField label="Until" type="date" value={(draft.until ?? "").slice(0, 10)} onValue={(v) => set("until", v)} />
      </FilterForm>
      <Problem error={first.error} />
      <DataTable
        rows={rows}
        class="audit"
        empty="No entries match."
        head={["When", "Actor", "Action", "Resource", "Outcome", "Request"]}
        row={(e) => (
          <tr key={e.id}>
            <td>
              <Time iso={e.at} />
            </td>
            <td>
              {e.actor.name ?? e.actor.id} <span class="muted">({e.actor.type})</span>
            </td>
            <td class="mono">{e.action}</td>
            <td class="mono">{e.resource ? [e.resource.type, e.resource.id].filter(Boolean).join(" ") : "—"}</td>
            <td>
              <Badge value={e.outcome} />
              {e.status ? <span class="muted"> {e.status}</span> : null}
            </td>
            <td class="mono">{e.requestId ?? "—"}</td>
          </tr>
        )}
      />
      <Problem error={loadMore.error} />
      {cursor ? (
        <p>
          <ActionButton
            action={loadMore}
            class="secondary"
            run={async () => {
              const next = await client.audit.list({ ...filters, limit, cursor });
              setMore((m) => [...m, ...next.data]);
              setCursor(next.nextCursor ?? null);
            }}
          >
            {loadMore.busy ? "Loading…" : "Load more"}
          </ActionButton>
        </p>
      ) : null}
    </Page>
  );
}
