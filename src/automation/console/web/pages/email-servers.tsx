// E-mail servers: the list; with email:write, create one, edit one (its secrets are write-only: the API
// only says whether one is configured, and a field left empty keeps it), and send a test message to a
// given address. What the server refuses is shown beside the field it names; nothing is half-saved.
import { useState } from "preact/hooks";
import type { EmailServer } from "../../../client/index";
import { FieldIssue, issuesAt, issuesElsewhere } from "../components/field";
import { DataTable } from "../components/table";
import { Notice, Page, Problem, useAction, useLoad, useSession } from "../ui";

type Smtp = Extract<EmailServer, { transport: "smtp" }>;

interface Draft {
  name: string;
  fromEmail: string;
  fromName: string;
  enabled: boolean;
  transport: "smtp" | "resend";
  host: string;
  port: string;
  security: "starttls" | "tls" | "none";
  username: string;
  password: string;
  caPem: string;
  apiKey: string;
}

const EMPTY: Draft = { name: "", fromEmail: "", fromName: "", enabled: true, transport: "smtp", host: "", port: "", security: "starttls", username: "", password: "", caPem: "", apiKey: "" };

function draftOf(s: EmailServer): Draft {
  const smtp = s.transport === "smtp" ? (s as Smtp) : undefined;
  return {
    ...EMPTY,
    name: s.name,
    fromEmail: s.fromEmail,
    fromName: s.fromName ?? "",
    enabled: s.enabled,
    transport: s.transport,
    host: smtp?.host ?? "",
    port: smtp ? String(smtp.port) : "",
    security: smtp?.security ?? "starttls",
    username: smtp?.username ?? "",
  };
}

export function EmailServers() {
  const session = useSession();
  const { client } = session;
  const list = useLoad(() => client.emailServers.list({ limit: 100 }), []);
  const write = session.can("email:write");
  const [editing, setEditing] = useState<EmailServer | "new" | null>(null);
  const [testing, setTesting] = useState<EmailServer | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  return (
    <Page
      title="E-mail servers"
      actions={
        write ? (
          <button type="button" onClick={() => (setEditing("new"), setTesting(null), setSaved(null))}>
            New e-mail server
          </button>
        ) : undefined
      }
    >
      <Problem error={list.error} />
      {saved ? <Notice>{saved}</Notice> : null}
      <DataTable
        rows={list.data?.data}
        empty="No e-mail servers."
        head={["Name", "Id", "Transport", "From", "Where", "Secret", "Enabled", ""]}
        row={(s) => {
          const smtp = s.transport === "smtp" ? (s as Smtp) : undefined;
          const secret = smtp ? (smtp.passwordConfigured ? `password of ${smtp.username}` : "none") : (s as { apiKeyConfigured?: boolean }).apiKeyConfigured ? "API key" : "none";
          return (
            <tr key={s.id} data-server={s.name}>
              <td>{s.name}</td>
              <td class="mono">{s.id}</td>
              <td>{s.transport}</td>
              <td>{[s.fromName, s.fromEmail].filter(Boolean).join(" ")}</td>
              <td>{smtp ? `${smtp.host}:${smtp.port} (${smtp.security})` : "Resend API"}</td>
              <td>{secret === "none" ? <span class="muted">none</span> : `${secret} (set; never shown)`}</td>
              <td>{s.enabled ? "yes" : "no"}</td>
              <td class="row-actions">
                {write ? (
                  <>
                    <button type="button" class="secondary" onClick={() => (setEditing(s), setTesting(null), setSaved(null))}>
                      Edit <span class="sr-only">{s.name}</span>
                    </button>{" "}
                    <button type="button" class="secondary" onClick={() => (setTesting(s), setEditing(null), setSaved(null))}>
                      Send a test <span class="sr-only">from {s.name}</span>
                    </button>
                  </>
                ) : null}
              </td>
            </tr>
          );
        }}
      />
      {editing ? (
        <ServerForm
          key={editing === "new" ? "new" : editing.id}
          server={editing === "new" ? null : editing}
          onCancel={() => setEditing(null)}
          onSaved={(s, created) => {
            setEditing(null);
            setSaved(`${created ? "Created" : "Saved"} ${s.name}.`);
            list.reload();
          }}
        />
      ) : null}
      {testing ? <TestSend key={testing.id} server={testing} onClose={() => setTesting(null)} /> : null}
    </Page>
  );
}

function ServerForm({ server, onCancel, onSaved }: { server: EmailServer | null; onCancel(): void; onSaved(s: EmailServer, created: boolean): void }) {
  const { client } = useSession();
  const [d, setD] = useState<Draft>(() => (server ? draftOf(server) : EMPTY));
  const action = useAction();
  const set = <K extends keyof Draft>(k: K, v: Draft[K]) => setD({ ...d, [k]: v });
  const before = server ? draftOf(server) : null;
  // The connection changed (or a secret was typed): the API then takes the whole transport again.
  const transportChanged =
    !before || (["transport", "host", "port", "security", "username", "password", "caPem", "apiKey"] as const).some((k) => d[k] !== before[k]);
  const caConfigured = server?.transport === "smtp" && (server as Smtp).caPemConfigured;

  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const meta = { name: d.name.trim(), fromEmail: d.fromEmail.trim(), fromName: d.fromName.trim() || null, enabled: d.enabled };
      const transport =
        d.transport === "resend"
          ? { transport: "resend" as const, ...(d.apiKey ? { apiKey: d.apiKey } : {}) }
          : {
              transport: "smtp" as const,
              host: d.host.trim(),
              ...(d.port.trim() ? { port: Number(d.port) } : {}),
              security: d.security,
              username: d.username.trim() || null,
              ...(d.password ? { password: d.password } : {}),
              caPem: d.caPem.trim() || null,
            };
      if (!server) {
        onSaved(await client.emailServers.create({ ...meta, ...transport } as Parameters<typeof client.emailServers.create>[0]), true);
        return;
      }
      onSaved(await client.emailServers.update(server.id, transportChanged ? { ...meta, ...transport } : meta), false);
    });
  };
  const issue = (f: string) => issuesAt(action.error, f);
  const field = (f: keyof Draft, label: string, opts: { type?: string; placeholder?: string; hint?: string; required?: boolean } = {}) => (
    <label>
      {label}
      <input
        type={(opts.type ?? "text") as "text"}
        value={d[f] as string}
        placeholder={opts.placeholder}
        required={opts.required}
        autoComplete={opts.type === "password" ? "new-password" : "off"}
        aria-invalid={issue(f) ? "true" : undefined}
        aria-describedby={issue(f) ? `${f}-issue` : undefined}
        onInput={(e) => set(f, e.currentTarget.value)}
      />
      {opts.hint ? <span class="hint">{opts.hint}</span> : null}
      <FieldIssue id={`${f}-issue`} text={issue(f)} />
    </label>
  );
  const shown = ["name", "fromEmail", "fromName", "host", "port", "security", "username", "password", "caPem", "apiKey"];
  return (
    <section aria-labelledby="server-form-h">
      <h2 id="server-form-h">{server ? `Edit ${server.name}` : "New e-mail server"}</h2>
      <form class="stack" onSubmit={submit}>
        <div class="two">
          {field("name", "Name", { required: true })}
          {field("fromEmail", "From address", { type: "email", required: true })}
          {field("fromName", "From name")}
          <label>
            Transport
            <select value={d.transport} onChange={(e) => set("transport", e.currentTarget.value as Draft["transport"])}>
              <option value="smtp">SMTP</option>
              <option value="resend">Resend API</option>
            </select>
          </label>
        </div>
        {d.transport === "smtp" ? (
          <div class="two">
            {field("host", "Host", { required: true })}
            {field("port", "Port", { type: "number", placeholder: "587 for starttls, 465 for tls, 25 for none" })}
            <label>
              Security
              <select value={d.security} aria-describedby={issue("security") ? "security-issue" : undefined} onChange={(e) => set("security", e.currentTarget.value as Draft["security"])}>
                <option value="starttls">STARTTLS</option>
                <option value="tls">TLS</option>
                <option value="none">none (no credentials)</option>
              </select>
              <FieldIssue id="security-issue" text={issue("security")} />
            </label>
            {field("username", "Username")}
            {field("password", "Password", {
              type: "password",
              hint: server?.transport === "smtp" && (server as Smtp).passwordConfigured ? "A password is set and never shown; leave empty to keep it." : "Write-only: never shown again.",
            })}
            <label>
              CA certificate (PEM)
              <textarea
                class="code"
                rows={3}
                spellcheck={false}
                value={d.caPem}
                placeholder="-----BEGIN CERTIFICATE-----"
                aria-describedby={issue("caPem") ? "caPem-issue" : undefined}
                onInput={(e) => set("caPem", e.currentTarget.value)}
              />
              <span class="hint">
                For a server whose certificate a private CA signed.
                {caConfigured ? " One is set; a changed connection needs it pasted again." : ""}
              </span>
              <FieldIssue id="caPem-issue" text={issue("caPem")} />
            </label>
          </div>
        ) : (
          <div class="two">
            {field("apiKey", "API key", {
              type: "password",
              hint: server?.transport === "resend" && (server as { apiKeyConfigured?: boolean }).apiKeyConfigured ? "A key is set and never shown; leave empty to keep it." : "Write-only: never shown again.",
            })}
          </div>
        )}
        <label class="inline">
          <input type="checkbox" checked={d.enabled} onChange={(e) => set("enabled", e.currentTarget.checked)} /> Enabled
        </label>
        <div class="row">
          <button type="submit" disabled={action.busy}>
            {action.busy ? "Saving…" : server ? "Save" : "Create"}
          </button>
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        </div>
        <Problem error={issuesElsewhere(action.error, shown)} />
      </form>
    </section>
  );
}

function TestSend({ server, onClose }: { server: EmailServer; onClose(): void }) {
  const { client } = useSession();
  const [to, setTo] = useState("");
  const [result, setResult] = useState<string | null>(null);
  const [failed, setFailed] = useState(false);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setResult(null);
    void action.run(async () => {
      const r = await client.emailServers.test(server.id, to.trim());
      setFailed(!r.ok);
      setResult(r.ok ? `Sent a test message to ${to.trim()} through ${server.name} (message ${r.messageId}).` : `The ${r.error}`);
    });
  };
  return (
    <section aria-labelledby="test-h">
      <h2 id="test-h">Send a test message from {server.name}</h2>
      <form class="stack" onSubmit={submit}>
        <label>
          To
          <input type="email" required value={to} aria-describedby={issuesAt(action.error, "to") ? "to-issue" : undefined} onInput={(e) => setTo(e.currentTarget.value)} />
          <FieldIssue id="to-issue" text={issuesAt(action.error, "to")} />
        </label>
        <div class="row">
          <button type="submit" disabled={action.busy}>
            {action.busy ? "Sending…" : "Send test message"}
          </button>
          <button type="button" class="secondary" onClick={onClose}>
            Close
          </button>
        </div>
        <Problem error={issuesElsewhere(action.error, ["to"])} />
        {result ? (
          <p class={failed ? "problem" : "notice"} role="status">
            {result}
          </p>
        ) : null}
      </form>
    </section>
  );
}
