// Members of the tenant (admins: `members:read`): who, their role, and for `members:write` an
// invitation form (the one-time link is shown once), a role per member and removal. Only an owner
// makes, changes or removes owners; the form offers what the server would accept.
import { useState } from "preact/hooks";
import type { Invitation, Member, ResetLink } from "../../../client/index";
import { ActionButton, ActionCheck } from "../components/action";
import { SelectField, TextField } from "../components/field";
import { FilterForm } from "../components/filters";
import { ShownOnce } from "../components/once";
import { DataTable } from "../components/table";
import { Badge, Outcome, Page, Problem, Time, useAction, useLoad, useSession } from "../ui";

export const ROLES = ["owner", "admin", "developer", "reviewer", "viewer"] as const;

export function Members() {
  const session = useSession();
  const { client } = session;
  const list = useLoad(() => client.members.list(), []);
  const canWrite = session.can("members:write");
  const isOwner = session.auth.scope.includes("*");
  // An admin cannot raise anyone to owner (nor touch an owner): the server says 403 anyway.
  const roles = isOwner ? ROLES : ROLES.filter((r) => r !== "owner");
  const me = session.person?.id;
  // A reset link made on a row, shown once under the table.
  const [reset, setReset] = useState<ResetLink | null>(null);
  // The providers a member's account may be linked to (the server's and the tenant's own).
  const sso = useLoad(() => (canWrite ? Promise.all([client.members.sso(), client.members.ssoProviders()]) : Promise.resolve(null)), [canWrite]);
  const providers = sso.data ? [...sso.data[0].providers, ...sso.data[1]].map((p) => ({ id: p.id, name: p.name })) : [];

  return (
    <Page title="Members">
      {canWrite ? <Invite roles={roles} onInvited={list.reload} /> : null}
      <Problem error={list.error} />
      <DataTable
        rows={list.data}
        empty="No members."
        head={["Name", "E-mail", "Role", "Status", "Since", canWrite ? <span class="sr-only">Actions</span> : ""]}
        row={(m) => <MemberRow key={m.id} member={m} editable={canWrite && m.id !== me && (isOwner || m.role !== "owner")} roles={roles} providers={providers} onChanged={list.reload} onReset={setReset} />}
      />
      {reset ? (
        <ShownOnce
          label={`Password reset link for ${reset.email}`}
          value={reset.link}
          note={`Shown only now: send it to ${reset.email} yourself. It works once, until ${new Date(reset.expiresAt).toLocaleString()}, and ends every session they have.`}
        />
      ) : null}
      <TenantSettings />
      <SsoSettings />
    </Page>
  );
}

/** The tenant's people settings: whether every member needs a second factor (owners change it). */
function TenantSettings() {
  const session = useSession();
  const { client } = session;
  const settings = useLoad(() => client.members.settings(), []);
  // Turning the rule on holds every member without a factor at enrollment, the person turning it on
  // included: offered only once their own factor is set up (a key has none to set up).
  const mine = useLoad(() => (session.person ? client.sessions.secondFactor() : Promise.resolve(null)), []);
  const action = useAction();
  const canChange = session.can("tenant:write");
  if (!settings.data) return <Problem error={settings.error} />;
  const on = settings.data.requireTotp;
  const ownFirst = !on && mine.data !== null && mine.data?.enabled !== true;
  return (
    <section aria-labelledby="settings-h">
      <h2 id="settings-h">Settings</h2>
      <ActionCheck
        action={action}
        id="require-totp"
        checked={on}
        disabled={!canChange || ownFirst}
        onToggle={async (requireTotp) => {
          await client.members.setSettings({ requireTotp });
          settings.reload();
          return requireTotp ? "Every member now needs a second factor: those without one can only set it up at their next sign-in." : "A second factor is optional again.";
        }}
      >
        Require a second factor (TOTP) of every member
      </ActionCheck>
      {!canChange ? <p class="hint">Only an owner changes this.</p> : ownFirst ? <p class="hint" data-testid="totp-own-first">Set up your own second factor first (<a href="#/sessions">My sessions</a>): the rule would hold you at enrollment too.</p> : null}
      <Outcome action={action} />
    </section>
  );
}

/**
 * Single sign-on for the tenant, when the server or the tenant has a provider (or the viewer is an owner,
 * who may add one): the tenant's own providers, whether SSO is the only way in, and e-mail trust.
 */
function SsoSettings() {
  const { client, can } = useSession();
  const sso = useLoad(() => client.members.sso(), []);
  const own = useLoad(() => client.members.ssoProviders(), []);
  const action = useAction();
  if (!sso.data) return sso.error ? <Problem error={sso.error} /> : null;
  const mine = own.data ?? [];
  if (!sso.data.providers.length && !mine.length && !can("tenant:write")) return null;
  const on = sso.data.ssoOnly;
  const all = [...sso.data.providers.map((p) => p.name), ...mine.map((p) => p.name)];
  return (
    <section aria-labelledby="sso-h">
      <h2 id="sso-h">Single sign-on</h2>
      <p>Providers: {all.length ? all.join(", ") : "none yet"}.</p>
      {mine.length ? (
        <ul class="sso-providers">
          {mine.map((p) => (
            <li key={p.id} data-provider={p.id}>
              {p.name} ({p.issuer}; redirect URI <code>{p.redirectUri}</code>; {p.roleMap.map((r) => `${r.group} → ${r.role}`).join(", ") || "no rules"}
              {p.defaultRole ? `; others ${p.defaultRole}` : ""}){" "}
              {can("tenant:write") ? (
                <ActionButton
                  action={action}
                  class="link"
                  run={async () => {
                    await client.members.removeSsoProvider(p.id);
                    own.reload();
                    return `${p.name} removed.`;
                  }}
                >
                  Remove
                </ActionButton>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
      {can("tenant:write") ? <AddSsoProvider onAdded={() => own.reload()} /> : null}
      <ActionCheck
        action={action}
        id="sso-only"
        checked={on}
        disabled={!can("tenant:write")}
        onToggle={async (ssoOnly) => {
          await client.members.setSso({ ssoOnly });
          sso.reload();
          return ssoOnly ? "Members now sign in with single sign-on only: their passwords are refused (API keys still work)." : "Members may sign in with a password again.";
        }}
      >
        Single sign-on only (refuse members' passwords)
      </ActionCheck>
      <ActionCheck
        action={action}
        id="sso-trust-emails"
        checked={sso.data.trustEmails}
        disabled={!can("tenant:write")}
        onToggle={async (trustEmails) => {
          await client.members.setSso({ trustEmails });
          sso.reload();
          return trustEmails
            ? "A member signing in by single sign-on for the first time becomes their existing account here when the provider has verified its e-mail (and all their tenants trust it)."
            : "Existing accounts are linked to single sign-on only by the server's operator again.";
        }}
      >
        Trust the provider's verified e-mails for existing accounts
      </ActionCheck>
      {!can("tenant:write") ? <p class="hint">Only an owner changes this.</p> : null}
      <Outcome action={action} />
    </section>
  );
}

/** The owner's form for a provider of the tenant's own: its secret is sent once and kept sealed. */
function AddSsoProvider({ onAdded }: { onAdded(): void }) {
  const { client } = useSession();
  const [f, setF] = useState({ id: "", name: "", issuer: "", clientId: "", clientSecret: "", groupsClaim: "groups", rules: "", defaultRole: "", domains: "" });
  const set = (k: keyof typeof f) => (value: string) => setF({ ...f, [k]: value });
  const action = useAction();
  return (
    <details class="sso-add">
      <summary>Add a provider for this tenant</summary>
      <FilterForm
        label="Add a single sign-on provider"
        onApply={() =>
          void action.run(async () => {
            const roleMap = f.rules
              .split(/[\n,]+/)
              .map((l) => l.trim())
              .filter(Boolean)
              .map((l) => ({ group: l.slice(0, l.lastIndexOf("=")).trim(), role: l.slice(l.lastIndexOf("=") + 1).trim() }));
            const made = await client.members.addSsoProvider({
              id: f.id.trim(),
              name: f.name.trim(),
              issuer: f.issuer.trim(),
              clientId: f.clientId.trim(),
              clientSecret: f.clientSecret,
              scopes: ["openid", "email", "profile", "groups"],
              groupsClaim: f.groupsClaim.trim() || "groups",
              roleMap,
              ...(f.defaultRole ? { defaultRole: f.defaultRole } : {}),
              allowedDomains: f.domains.split(",").map((d) => d.trim()).filter(Boolean),
            });
            setF({ ...f, clientSecret: "" });
            onAdded();
            return `${made.name} added. Register ${made.redirectUri} at the provider; people sign in from ${location.origin}/#/signin?tenant=…`;
          })
        }
        buttons={
          <button type="submit" disabled={action.busy}>
            Add provider
          </button>
        }
      >
        <TextField label="Id (in its addresses)" id="sso-id" value={f.id} onValue={set("id")} required pattern="[a-z0-9][a-z0-9-]*" />
        <TextField label="Name on the sign-in button" id="sso-name" value={f.name} onValue={set("name")} required />
        <TextField label="Issuer URL" id="sso-issuer" value={f.issuer} onValue={set("issuer")} required />
        <TextField label="Client id" id="sso-client-id" value={f.clientId} onValue={set("clientId")} required />
        <TextField label="Client secret" id="sso-client-secret" type={"password" as "text"} value={f.clientSecret} onValue={set("clientSecret")} required />
        <TextField label="Groups claim" id="sso-groups-claim" value={f.groupsClaim} onValue={set("groupsClaim")} />
        <TextField label="Rules (GROUP=ROLE, comma separated)" id="sso-rules" value={f.rules} onValue={set("rules")} placeholder="automation-admins=admin, staff=viewer" />
        <SelectField label="Role of people no rule matches" id="sso-default-role" value={f.defaultRole} options={[["", "none: refused"], "viewer", "reviewer", "developer"]} onValue={set("defaultRole")} />
        <TextField label="Allowed e-mail domains (comma separated; empty: any)" id="sso-domains" value={f.domains} onValue={set("domains")} />
      </FilterForm>
      <Outcome action={action} />
    </details>
  );
}

function MemberRow({
  member: m,
  editable,
  roles,
  providers,
  onChanged,
  onReset,
}: {
  member: Member;
  editable: boolean;
  roles: readonly string[];
  providers: { id: string; name: string }[];
  onChanged(): void;
  onReset(link: ResetLink): void;
}) {
  const { client } = useSession();
  const action = useAction();
  return (
    <tr>
      <td>{m.name}</td>
      <td>{m.email}</td>
      <td>
        {editable ? (
          <SelectField
            label={<span class="sr-only">Role of {m.email}</span>}
            value={m.role ?? ""}
            options={roles}
            disabled={action.busy}
            onValue={(role) =>
              void action.run(async () => {
                await client.members.setRole(m.id, role);
                onChanged();
                return `${m.email} is now ${role}.`;
              })
            }
          />
        ) : (
          (m.role ?? "—")
        )}
        <Outcome action={action} />
      </td>
      <td>
        <Badge value={m.status} />
      </td>
      <td>
        <Time iso={m.createdAt} />
      </td>
      <td>
        {editable ? (
          <ActionButton action={action} class="secondary" label={`Password reset link for ${m.email}`} run={async () => onReset(await client.members.resetLink(m.id))}>
            Reset link
          </ActionButton>
        ) : null}{" "}
        {editable
          ? providers.map((p) => (
              <ActionButton
                key={p.id}
                action={action}
                class="secondary"
                label={`Let ${m.email} sign in through ${p.name} as this account`}
                run={async () => {
                  const out = await client.members.ssoLink(m.id, p.id);
                  return `The next sign-in through ${p.name} with ${out.email} (verified there) becomes this account, once, until ${new Date(out.expiresAt).toLocaleString()}.`;
                }}
              >
                Link {p.name}
              </ActionButton>
            ))
          : null}{" "}
        {editable ? (
          <ActionButton
            action={action}
            class="danger"
            label={`Remove ${m.email}`}
            confirm={`Remove ${m.email} from this tenant? Their sessions here end at once.`}
            run={async () => {
              await client.members.remove(m.id);
              onChanged();
            }}
          >
            Remove
          </ActionButton>
        ) : null}
      </td>
    </tr>
  );
}

function Invite({ roles, onInvited }: { roles: readonly string[]; onInvited(): void }) {
  const { client } = useSession();
  const [email, setEmail] = useState("");
  const [role, setRole] = useState("reviewer");
  const [made, setMade] = useState<Invitation | null>(null);
  const action = useAction();
  return (
    <section aria-labelledby="invite-h">
      <h2 id="invite-h">Invite a person</h2>
      <FilterForm
        label="Invite a person"
        onApply={() =>
          void action.run(async () => {
            setMade(null);
            const inv = await client.members.invite({ email: email.trim(), role });
            setMade(inv);
            setEmail("");
            onInvited();
          })
        }
        buttons={
          <button type="submit" disabled={action.busy}>
            {action.busy ? "Inviting…" : "Invite"}
          </button>
        }
      >
        <TextField label="E-mail" id="invite-email" value={email} onValue={setEmail} required />
        <SelectField label="Role" id="invite-role" value={role} options={roles} onValue={setRole} />
      </FilterForm>
      <Outcome action={action} />
      {made ? (
        <ShownOnce
          label={`Invitation link for ${made.email} (${made.role})`}
          value={made.link}
          note={`Shown only now: send it to ${made.email} yourself. It works once, until ${new Date(made.expiresAt).toLocaleString()}.`}
        />
      ) : null}
    </section>
  );
}
