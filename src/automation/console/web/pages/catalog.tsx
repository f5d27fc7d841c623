// Read-only catalogs: templates, e-mail servers (never a secret: the API sends none), models.
import { Badge, Notice, Page, Problem, Skeleton, Time, bytes, useLoad, useSession } from "../ui";

export function Templates() {
  const { client } = useSession();
  const list = useLoad(() => client.templates.list({ limit: 100 }), []);
  return (
    <Page title="Templates">
      <Problem error={list.error} />
      {!list.data ? (
        <Skeleton />
      ) : list.data.items.length === 0 ? (
        <Notice>No templates.</Notice>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Id</th>
                <th scope="col">File</th>
                <th scope="col">Format</th>
                <th scope="col">Size</th>
                <th scope="col">Tokens</th>
                <th scope="col">Revision</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((t) => (
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
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}

export function EmailServers() {
  const { client } = useSession();
  const list = useLoad(() => client.emailServers.list({ limit: 100 }), []);
  return (
    <Page title="E-mail servers">
      <Problem error={list.error} />
      {!list.data ? (
        <Skeleton />
      ) : list.data.data.length === 0 ? (
        <Notice>No e-mail servers.</Notice>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Id</th>
                <th scope="col">Transport</th>
                <th scope="col">From</th>
                <th scope="col">Where</th>
                <th scope="col">Enabled</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((s) => {
                const o = s as unknown as Record<string, unknown>;
                return (
                  <tr key={s.id}>
                    <td>{s.name}</td>
                    <td class="mono">{s.id}</td>
                    <td>{s.transport}</td>
                    <td>{[o.fromName, o.fromEmail].filter(Boolean).join(" ")}</td>
                    <td>{o.host ? `${String(o.host)}:${String(o.port)} (${String(o.security)})` : "Resend API"}</td>
                    <td>{s.enabled ? "yes" : "no"}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}

export function Models() {
  const { client } = useSession();
  const list = useLoad(() => client.models.list(), []);
  return (
    <Page title="Models">
      <Problem error={list.error} />
      {!list.data ? (
        <Skeleton />
      ) : list.data.length === 0 ? (
        <Notice>No model is configured (start the server with --models FILE).</Notice>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Provider</th>
                <th scope="col">Capabilities</th>
                <th scope="col">Health</th>
                <th scope="col">Default for</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((m) => (
                <tr key={m.id}>
                  <td class="mono">{m.id}</td>
                  <td>{m.provider}</td>
                  <td>{m.capabilities.join(", ")}</td>
                  <td>
                    <Badge value={m.health} />
                  </td>
                  <td>{(m.defaultFor ?? []).join(", ") || "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}
