// API keys of the tenant (`keys:read`): name, scopes, maker, last use, expiry; for `keys:write` a form
// making a key (its name, scopes among those the person has, an expiry) whose secret is shown once,
// and revoking with a confirmation. A key belongs to its maker: disabling the maker disables it.
import { useState } from "preact/hooks";
import type { KeyInfo } from "../../../client/index";
import { ActionButton } from "../components/action";
import { TextField } from "../components/field";
import { FilterForm } from "../components/filters";
import { ShownOnce } from "../components/once";
import { DataTable } from "../components/table";
import { Badge, Outcome, Page, Problem, Time, useAction, useLoad, useSession } from "../ui";

/** Every resource a scope names (`<resource>:read|write`), in the order the form lists them. */
const RESOURCES = ["runs", "automations", "files", "reviews", "datasets", "templates", "email", "members", "keys", "audit"];

function state(k: KeyInfo, now: number): string {
  if (k.revokedAt) return "revoked";
  if (k.expiresAt && Date.parse(k.expiresAt) <= now) return "expired";
  return "active";
}

export function Keys() {
  const session = useSession();
  const { client } = session;
  const list = useLoad(() => client.keys.list({ limit: 100 }), []);
  const canWrite = session.can("keys:write");
  const revoke = useAction();
  const now = Date.now();

  return (
    <Page title="Keys">
      <p class="hint">
        Keys are for programs (<code>Authorization: Bearer eak_…</code>). A key belongs to the person who made it: disabling that person disables their keys.
      </p>
      {canWrite ? <NewKey onMade={list.reload} /> : null}
      <Problem error={list.error} />
      <Outcome action={revoke} />
      {list.data && list.data.total > list.data.data.length ? <p class="hint">The newest {list.data.data.length} of {list.data.total} keys.</p> : null}
      <DataTable
        rows={list.data?.data}
        empty="No keys."
        head={["Name", "Key", "Scopes", "Made by", "Created", "Last used", "Expires", "State", canWrite ? <span class="sr-only">Actions</span> : ""]}
        row={(k) => {
          const st = state(k, now);
          return (
            <tr key={k.id}>
              <td>{k.name ?? "—"}</td>
              <td class="mono">
                {k.id} <span class="muted">…{k.hint}</span>
              </td>
              <td>{k.scopes.join(", ")}</td>
              <td>{k.createdBy ? `${k.createdBy.name ?? k.createdBy.id} (${k.createdBy.type})` : <span class="muted">shell</span>}</td>
              <td>
                <Time iso={k.createdAt} />
              </td>
              <td>
                <Time iso={k.lastUsedAt} />
              </td>
              <td>
                <Time iso={k.expiresAt} />
              </td>
              <td>
                <Badge value={st} />
              </td>
              <td>
                {canWrite && st === "active" ? (
                  <ActionButton
                    action={revoke}
                    class="danger"
                    label={`Revoke ${k.name ?? k.id}`}
                    confirm={`Revoke key ${k.name ?? k.id}? Programs using it get 401 from their next request.`}
                    run={async () => {
                      await client.keys.revoke(k.id);
                      list.reload();
                      return `Key ${k.name ?? k.id} revoked.`;
                    }}
                  >
                    Revoke
                  </ActionButton>
                ) : null}
              </td>
            </tr>
          );
        }}
      />
    </Page>
  );
}

function NewKey({ onMade }: { onMade(): void }) {
  const session = useSession();
  const { client } = session;
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<string[]>([]);
  const [days, setDays] = useState("90");
  const [secret, setSecret] = useState<{ name: string; key: string } | null>(null);
  const action = useAction();
  // Only what the person may do: a key never has more than its maker.
  const offered = RESOURCES.flatMap((r) => [`${r}:read`, `${r}:write`]).filter((s) => session.can(s));
  const toggle = (s: string, on: boolean) => setScopes((xs) => (on ? [...xs, s] : xs.filter((x) => x !== s)));

  return (
    <section aria-labelledby="new-key-h">
      <h2 id="new-key-h">New key</h2>
      <FilterForm
        label="New key"
        onApply={() =>
          void action.run(async () => {
            setSecret(null);
            if (!scopes.length) throw new Error("Pick at least one scope.");
            const d = days.trim() ? Number(days) : undefined;
            const made = await client.keys.create({ name: name.trim(), scopes, ...(d ? { expiresInDays: d } : {}) });
            setSecret({ name: made.name ?? made.id, key: made.key });
            setName("");
            setScopes([]);
            onMade();
          })
        }
        buttons={
          <button type="submit" disabled={action.busy}>
            {action.busy ? "Creating…" : "Create key"}
          </button>
        }
      >
        <TextField label="Name" id="key-name" value={name} onValue={setName} required maxLength={100} />
        <TextField label="Expires in days (empty: never)" id="key-days" value={days} onValue={setDays} pattern="[0-9]*" />
        <fieldset class="checks">
          <legend>Scopes</legend>
          {offered.map((s) => (
            <label key={s}>
              <input type="checkbox" name="scope" value={s} checked={scopes.includes(s)} onChange={(e) => toggle(s, e.currentTarget.checked)} /> {s}
            </label>
          ))}
        </fieldset>
      </FilterForm>
      <Outcome action={action} />
      {secret ? <ShownOnce label={`Key ${secret.name}`} value={secret.key} note="Shown only now: the server keeps only its hash. Store it where the program reads its secrets." /> : null}
    </section>
  );
}
