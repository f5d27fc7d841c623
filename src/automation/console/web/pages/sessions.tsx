// My sessions (every signed-in person): where this person is signed in, ending one, and signing out
// everywhere. Ending the current one signs out here too (its next request answers 401).
import { ActionButton } from "../components/action";
import { DataTable } from "../components/table";
import { SIGNED_OUT } from "../api";
import { Notice, Outcome, Page, Problem, Time, useAction, useLoad, useSession } from "../ui";
import { SecondFactor } from "./second-factor";

export function MySessions() {
  const session = useSession();
  const { client, person } = session;
  const list = useLoad(() => (person ? client.sessions.list() : Promise.resolve([])), []);
  const action = useAction();

  if (!person) {
    return (
      <Page title="My sessions">
        <Notice>Signed in with an API key: there are no sessions. Keys are listed under Keys.</Notice>
      </Page>
    );
  }

  return (
    <Page
      title="My sessions"
      actions={
        <button
          type="button"
          class="danger"
          disabled={action.busy}
          onClick={() => {
            if (!confirm("Sign out everywhere, this browser included?")) return;
            void action.run(async () => {
              await client.sessions.signOutEverywhere();
              dispatchEvent(new CustomEvent(SIGNED_OUT));
            });
          }}
        >
          Sign out everywhere
        </button>
      }
    >
      <p class="hint">
        Signed in as {person.email}. A session ends after 12 hours unused or 7 days after sign-in.
      </p>
      <Outcome action={action} />
      <Problem error={list.error} />
      <DataTable
        rows={list.data}
        empty="No sessions."
        head={["Session", "Signed in", "Last seen", "Ends", "Browser", "Address", <span class="sr-only">Actions</span>]}
        row={(s) => (
          <tr key={s.id} aria-current={s.current ? "true" : undefined}>
            <td class="mono">
              {s.id} {s.current ? <span class="badge ok">this browser</span> : null}
            </td>
            <td>
              <Time iso={s.createdAt} />
            </td>
            <td>
              <Time iso={s.lastSeenAt} />
            </td>
            <td>
              <Time iso={s.expiresAt} />
            </td>
            <td>{s.userAgent ?? "—"}</td>
            <td>{s.address ?? "—"}</td>
            <td>
              <ActionButton
                action={action}
                class="secondary"
                label={s.current ? "End this session (sign out)" : `End session ${s.id}`}
                run={async () => {
                  await client.sessions.end(s.id);
                  if (s.current) {
                    dispatchEvent(new CustomEvent(SIGNED_OUT));
                    return;
                  }
                  list.reload();
                  return `Session ${s.id} ended.`;
                }}
              >
                End
              </ActionButton>
            </td>
          </tr>
        )}
      />
      <SecondFactor />
    </Page>
  );
}
