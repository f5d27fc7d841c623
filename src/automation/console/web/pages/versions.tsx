// An automation's versions: tags, the current one, messages; promote and restore with the API's rules
// (promote takes a tagged version; restore makes a new untagged current copy, which is promoted only
// after a tagged copy of it is made, and the page says so rather than offering a promote that fails).
import { useState } from "preact/hooks";
import type { AutomationVersion } from "../../../client/index";
import { DataTable } from "../components/table";
import { go, href } from "../router";
import { Notice, Outcome, Page, Problem, Time, useAction, useLoad, useSession } from "../ui";

export const label = (v: AutomationVersion) => v.version ?? `untagged ${v.id}`;

export function Versions({ automation, query }: { automation: string; query: URLSearchParams }) {
  const session = useSession();
  const { client } = session;
  const a = useLoad(() => client.automations.get(automation), [automation]);
  const list = useLoad(() => client.automations.versions.list(automation, { limit: 100, withMessage: true }), [automation]);
  const rows = list.data?.data;
  const current = rows?.find((v) => v.isCurrent);
  const [left, setLeft] = useState<string | null>(null);
  const [right, setRight] = useState<string | null>(null);
  // By default: the current version against the one before it.
  const b = right ?? current?.id ?? rows?.[0]?.id ?? null;
  const aId = left ?? rows?.find((v) => v.id !== b)?.id ?? null;
  const write = session.can("automations:write");
  const action = useAction();
  const saved = query.get("saved");

  const promote = (v: AutomationVersion) =>
    action.run(async () => {
      await client.automations.versions.promote(automation, v.id);
      list.reload();
      a.reload();
      return `Version ${v.version} is current now.`;
    });
  const restore = (v: AutomationVersion) =>
    action.run(async () => {
      const made = await client.automations.versions.restore(automation, v.id, { message: `restored from ${label(v)}` });
      list.reload();
      a.reload();
      return `Restored ${label(v)} as a new untagged current version (${made.id}). It can be promoted again only once it is tagged: use "Tag it" in its row.`;
    });

  return (
    <Page title={a.data ? `Versions of ${a.data.slug}` : "Versions"} actions={write ? <a href={href(["automations", automation, "edit"])}>New version</a> : undefined}>
      <p>
        <a href={href(["automations", automation])}>Automation</a>
      </p>
      {saved !== null ? <Notice>Version {saved || "(untagged)"} saved.</Notice> : null}
      <Problem error={a.error ?? list.error} />
      <Outcome action={action} />
      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
          if (aId && b) go(href(["automations", automation, "diff"], { a: aId, b }));
        }}
      >
        <DataTable
          rows={rows}
          skeleton={3}
          empty="No versions."
          head={["A", "B", "Version", "Current", "Message", "Copied from", "Created", ""]}
          row={(v) => (
            <tr key={v.id} data-version={v.version ?? ""}>
              <td>
                <input type="radio" name="a" checked={v.id === aId} aria-label={`Compare from ${label(v)}`} onChange={() => setLeft(v.id)} />
              </td>
              <td>
                <input type="radio" name="b" checked={v.id === b} aria-label={`Compare to ${label(v)}`} onChange={() => setRight(v.id)} />
              </td>
              <td>{v.version ?? <span class="muted">untagged</span>}</td>
              <td>{v.isCurrent ? <span class="badge ok">current</span> : ""}</td>
              <td>{v.message ?? ""}</td>
              <td class="mono">{v.sourceRef ?? "—"}</td>
              <td>
                <Time iso={v.createdAt} />
              </td>
              <td class="row-actions">
                {write ? <VersionActions automation={automation} version={v} busy={action.busy} onPromote={promote} onRestore={restore} onTagged={() => list.reload()} /> : null}
              </td>
            </tr>
          )}
        />
        <div class="row">
          <button type="submit" disabled={!aId || !b || aId === b}>
            Compare A with B
          </button>
        </div>
      </form>
    </Page>
  );
}

function VersionActions(props: {
  automation: string;
  version: AutomationVersion;
  busy: boolean;
  onPromote(v: AutomationVersion): void;
  onRestore(v: AutomationVersion): void;
  onTagged(): void;
}) {
  const { version: v, automation } = props;
  const edit = (
    <a href={href(["automations", automation, "edit"], { from: v.id })}>
      Edit from here<span class="sr-only"> ({label(v)})</span>
    </a>
  );
  if (v.version === null) {
    return (
      <>
        <span class="hint">Untagged: it can be promoted only once tagged.</span> <TagCopy {...props} /> {edit}
      </>
    );
  }
  if (v.isCurrent) return edit;
  return (
    <>
      <button type="button" class="secondary" disabled={props.busy} onClick={() => props.onPromote(v)}>
        Promote <span class="sr-only">{v.version}</span>
      </button>{" "}
      <button type="button" class="secondary" disabled={props.busy} onClick={() => props.onRestore(v)}>
        Restore <span class="sr-only">{v.version}</span>
      </button>{" "}
      {edit}
    </>
  );
}

/** A tagged copy of an untagged version (`historyId`), current if the original was. */
function TagCopy({ automation, version, onTagged }: { automation: string; version: AutomationVersion; onTagged(): void }) {
  const { client } = useSession();
  const [tag, setTag] = useState("");
  const action = useAction();
  return (
    <span class="inline-form">
      <input aria-label={`Tag for ${version.id}`} placeholder="1.2.0" size={8} value={tag} onInput={(e) => setTag(e.currentTarget.value)} />
      <button
        type="button"
        class="secondary"
        disabled={action.busy || !tag.trim()}
        onClick={() =>
          void action.run(async () => {
            await client.automations.versions.create(automation, { historyId: version.id, version: tag.trim(), activate: version.isCurrent, message: `tagged ${version.id}` });
            onTagged();
          })
        }
      >
        Tag it
      </button>
      <Problem error={action.error} />
    </span>
  );
}
