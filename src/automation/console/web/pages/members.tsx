// Members of the tenant (admins: `members:read`): who, their role, and for `members:write` an
// invitation form (the one-time link is shown once), a role per member and removal. Only an owner
// makes, changes or removes owners; the form offers what the server would accept.
import { useState } from "preact/hooks";
import type { Invitation, Member, ResetLink } from "../../../client/index";
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

  return (
    <Page title="Members">
      {canWrite ? <Invite roles={roles} onInvited={list.reload} /> : null}
      <Problem error={list.error} />
      <DataTable
        rows={list.data}
        empty="No members."
        head={["Name", "E-mail", "Role", "Status", "Since", canWrite ? <span class="sr-only">Actions</span> : ""]}
        row={(m) => <MemberRow key={m.id} member={m} editable={canWrite && m.id !== me && (isOwner || m.role !== "owner")} roles={roles} onChanged={list.reload} onReset={setReset} />}
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
      <label class="check">
        <input
          type="checkbox"
          id="require-totp"
          checked={on}
          disabled={!canChange || ownFirst || action.busy}
          onChange={(e) => {
            const requireTotp = e.currentTarget.checked;
            void action.run(async () => {
              await client.members.setSettings({ requireTotp });
              settings.reload();
              return requireTotp ? "Every member now needs a second factor: those without one can only set it up at their next sign-in." : "A second factor is optional again.";
            });
          }}
        />{" "}
        Require a second factor (TOTP) of every member
      </label>
      {!canChange ? <p class="hint">Only an owner changes this.</p> : ownFirst ? <p class="hint" data-testid="totp-own-first">Set up your own second factor first (<a href="#/sessions">My sessions</a>): the rule would hold you at enrollment too.</p> : null}
      <Outcome action={action} />
    </section>
  );
}

/** Single sign-on for the tenant, when the server has a provider: whether it is the only way in (owners change it). */
function SsoSettings() {
  const { client, can } = useSession();
  const sso = useLoad(() => client.members.sso(), []);
  const action = useAction();
  if (!sso.data) return sso.error ? <Problem error={sso.error} /> : null;
  if (!sso.data.providers.length) return null;
  const on = sso.data.ssoOnly;
  return (
    <section aria-labelledby="sso-h">
      <h2 id="sso-h">Single sign-on</h2>
      <p>Providers: {sso.data.providers.map((p) => p.name).join(", ")}.</p>
      <label class="check">
        <input
          type="checkbox"
          id="sso-only"
          checked={on}
          disabled={!can("tenant:write") || action.busy}
          onChange={(e) => {
            const ssoOnly = e.currentTarget.checked;
            void action.run(async () => {
              await client.members.setSso({ ssoOnly });
              sso.reload();
              return ssoOnly ? "Members now sign in with single sign-on only: their passwords are refused (API keys still work)." : "Members may sign in with a password again.";
            });
          }}
        />{" "}
        Single sign-on only (refuse members' passwords)
      </label>
      <label class="check">
        <input
          type="checkbox"
          id="sso-trust-emails"
          checked={sso.data.trustEmails}
          disabled={!can("tenant:write") || action.busy}
          onChange={(e) => {
            const trustEmails = e.currentTarget.checked;
            void action.run(async () => {
              await client.members.setSso({ trustEmails });
              sso.reload();
              return trustEmails
                ? "A member signing in by single sign-on for the first time becomes their existing account here when the provider has verified its e-mail (and all their tenants trust it)."
                : "Existing accounts are linked to single sign-on only by the server's operator again.";
            });
          }}
        />{" "}
        Trust the provider's verified e-mails for existing accounts
      </label>
      {!can("tenant:write") ? <p class="hint">Only an owner changes this.</p> : null}
      <Outcome action={action} />
    </section>
  );
}

function MemberRow({ member: m, editable, roles, onChanged, onReset }: { member: Member; editable: boolean; roles: readonly string[]; onChanged(): void; onReset(link: ResetLink): void }) {
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
          <button
            type="button"
            class="secondary"
            disabled={action.busy}
            aria-label={`Password reset link for ${m.email}`}
            onClick={() => void action.run(async () => onReset(await client.members.resetLink(m.id)))}
          >
            Reset link
          </button>
        ) : null}{" "}
        {editable ? (
          <button
            type="button"
            class="danger"
            disabled={action.busy}
            aria-label={`Remove ${m.email}`}
            onClick={() => {
              if (!confirm(`Remove ${m.email} from this tenant? Their sessions here end at once.`)) return;
              void action.run(async () => {
                await client.members.remove(m.id);
                onChanged();
              });
            }}
          >
            Remove
          </button>
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
