// The models catalog, read-only (templates and e-mail servers have pages of their own).
import { DataTable } from "../components/table";
import { Badge, Page, Problem, Time, bytes, useLoad, useSession } from "../ui";

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
