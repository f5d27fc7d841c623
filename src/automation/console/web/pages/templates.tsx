// Templates (DOCX/XLSX): the list; with templates:write, upload a new template and a new revision of
// one (revisions are immutable: a new one becomes current, runs pinned to an old one keep it); each
// template's revisions, with the bytes of any revision to download.
import { Fragment } from "preact";
import { useState } from "preact/hooks";
import type { Template } from "../../../client/index";
import { FieldIssue, issuesAt, issuesElsewhere, TextField } from "../components/field";
import { DataTable } from "../components/table";
import { bytes, Outcome, Page, Problem, saveBlob, Skeleton, Time, useAction, useLoad, useSession } from "../ui";

const ACCEPT = ".docx,.xlsx,application/vnd.openxmlformats-officedocument.wordprocessingml.document,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

export function Templates() {
  const session = useSession();
  const { client } = session;
  const list = useLoad(() => client.templates.list({ limit: 100 }), []);
  const write = session.can("templates:write");
  const [open, setOpen] = useState<string | null>(null);
  return (
    <Page title="Templates">
      {write ? <NewTemplate onDone={() => list.reload()} /> : null}
      <Problem error={list.error} />
      <DataTable
        rows={list.data?.items}
        empty="No templates."
        head={["Name", "Id", "File", "Format", "Size", "Tokens", "Revision", "Updated", ""]}
        row={(t) => (
          <Fragment key={t.id}>
            <tr data-template={t.name}>
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
              <td class="row-actions">
                <button type="button" class="secondary" aria-expanded={open === t.id} onClick={() => setOpen(open === t.id ? null : t.id)}>
                  Revisions <span class="sr-only">of {t.name}</span>
                </button>
              </td>
            </tr>
            {open === t.id ? (
              <tr key={`${t.id}-revisions`}>
                <td colSpan={9}>
                  <Revisions template={t} write={write} onChanged={() => list.reload()} />
                </td>
              </tr>
            ) : null}
          </Fragment>
        )}
      />
    </Page>
  );
}

function NewTemplate({ onDone }: { onDone(): void }) {
  const { client } = useSession();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [file, setFile] = useState<File | null>(null);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    if (!file) return;
    void action.run(async () => {
      const t = await client.templates.create({ file }, { name: name.trim(), ...(description.trim() ? { description: description.trim() } : {}) });
      onDone();
      setName("");
      setDescription("");
      return `Uploaded ${t.name} (revision ${t.currentRevision.number}; tokens: ${t.tokens.map((k) => k.name).join(", ") || "none"}).`;
    });
  };
  const fileIssue = issuesAt(action.error, "file");
  return (
    <section aria-labelledby="new-template-h">
      <h2 id="new-template-h">Upload a template</h2>
      <form class="stack" onSubmit={submit}>
        <div class="two">
          <TextField label="Name" value={name} required maxLength={200} onValue={setName} />
          <TextField label="Description" value={description} onValue={setDescription} />
        </div>
        <label>
          File <span class="hint">(DOCX or XLSX)</span>
          <input type="file" accept={ACCEPT} required aria-describedby={fileIssue ? "template-file-issue" : undefined} onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
          <FieldIssue id="template-file-issue" text={fileIssue} />
        </label>
        <div class="row">
          <button type="submit" disabled={action.busy || !file}>
            {action.busy ? "Uploading…" : "Upload template"}
          </button>
        </div>
        <Problem error={issuesElsewhere(action.error, ["file"])} />
        {action.done ? <p class="notice" role="status">{action.done}</p> : null}
      </form>
    </section>
  );
}

function Revisions({ template, write, onChanged }: { template: Template; write: boolean; onChanged(): void }) {
  const { client } = useSession();
  const revisions = useLoad(() => client.templates.revisions(template.id), [template.id, template.currentRevision?.id]);
  const action = useAction();
  const upload = (file: File) =>
    action.run(async () => {
      const t = await client.templates.replace(template.id, { file });
      revisions.reload();
      onChanged();
      return `Revision ${t.currentRevision.number} of ${t.name} is current now.`;
    });
  const download = (revisionId: string, filename: string) => action.run(async () => saveBlob(new Blob([(await client.templates.content(template.id, revisionId)) as Uint8Array<ArrayBuffer>]), filename));
  return (
    <div class="stack" aria-label={`Revisions of ${template.name}`}>
      <Problem error={revisions.error} />
      {!revisions.data ? (
        <Skeleton rows={2} />
      ) : (
        <table class="revisions">
          <thead>
            <tr>
              <th scope="col">Revision</th>
              <th scope="col">File</th>
              <th scope="col">Size</th>
              <th scope="col">sha256</th>
              <th scope="col">Created</th>
              <th scope="col" />
            </tr>
          </thead>
          <tbody>
            {revisions.data.revisions.map((r) => (
              <tr key={r.id} data-revision={r.number}>
                <td>
                  {r.number} {r.current ? <span class="badge ok">current</span> : null}
                </td>
                <td>{r.filename}</td>
                <td>{bytes(r.size)}</td>
                <td class="mono">{r.sha256.slice(0, 12)}…</td>
                <td>
                  <Time iso={r.createdAt} />
                </td>
                <td>
                  <button type="button" class="secondary" disabled={action.busy} onClick={() => void download(r.id, r.filename)}>
                    Download <span class="sr-only">revision {r.number}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {write ? (
        <label>
          Upload a new revision <span class="hint">(it becomes current; runs pinned to an older one keep it)</span>
          <input
            type="file"
            accept={ACCEPT}
            disabled={action.busy}
            onChange={(e) => {
              const f = e.currentTarget.files?.[0];
              if (f) void upload(f);
              e.currentTarget.value = "";
            }}
          />
        </label>
      ) : null}
      <Outcome action={action} />
    </div>
  );
}
