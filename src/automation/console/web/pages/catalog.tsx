// Read-only catalogs: templates and models (e-mail servers have their own page: email-servers.tsx).
import { DataTable } from "../components/table";
import { Badge, Page, Problem, Time, bytes, useLoad, useSession } from "../ui";

export function Templates() {
  const { client } = useSession();
  const list = useLoad(() => client.templates.list({ limit: 100 }), []);
  return (
    <Page title="Templates">
      <Problem error={list.error} />
      <DataTable
        rows={list.data?.items}
        empty="No templates."
        head={["Name", "Id", "File", "Format", "Size", "Tokens", "Revision", "Updated"]}
        row={(t) => (
          <tr key={t.id}>
            <td>
              {t.name}
              {t.description ? <span class="hint field-description">{t.description}</span> : null}
            </td>
            <td class="mono">{t.id}</td>
            <td>{t.filename}</td>
            <td>{t.format}</td>
            <td>{bytes(t.size)}</td>
            <td>{t.tokens.map((k) => k.name).join(", ")}</td>
            <td>{t.currentRevision?.number ?? "—"}</td>
            <td>
              <Time iso={t.updatedAt} />
            </td>
          </tr>
        )}
      />
    </Page>
  );
}

export function Models() {
  const { client } = useSession();
  const list = useLoad(() => client.models.list(), []);
  return (
    <Page title="Models">
      <Problem error={list.error} />
      <DataTable
        rows={list.data}
        empty="No model is configured (start the server with --models FILE)."
        head={["Model", "Provider", "Capabilities", "Health", "Default for"]}
        row={(m) => (
          <tr key={m.id}>
            <td class="mono">{m.id}</td>
            <td>{m.provider}</td>
            <td>{m.capabilities.join(", ")}</td>
            <td>
              <Badge value={m.health} />
            </td>
            <td>{(m.defaultFor ?? []).join(", ") || "—"}</td>
          </tr>
        )}
      />
    </Page>
  );
}
