// Files: the tenant's files (GET /v1/files, newest first, pages), download, delete, and uploads through
// an upload session with their progress: the bytes go by the session's signed PUT (XMLHttpRequest,
// the one browser API that reports upload progress), then the session is completed; a cancelled or
// failed PUT aborts the session, so nothing is half-stored.
import { useRef, useState } from "preact/hooks";
import type { FileObject } from "../../../client/index";
import { DataTable } from "../components/table";
import { href } from "../router";
import { bytes, Outcome, Page, Problem, saveBlob, Time, useAction, useLoad, useSession, type Loaded } from "../ui";
import { newActionKey } from "./human-reviews";

const PAGE = 50;

export function Files({ query }: { query: URLSearchParams }) {
  const session = useSession();
  const { client } = session;
  const offset = Number(query.get("offset") ?? 0) || 0;
  const list = useLoad(() => client.files.list({ limit: PAGE, offset }), [offset]);
  const action = useAction();
  const write = session.can("files:write");
  return (
    <Page title="Files">
      {write ? <Upload onDone={() => list.reload()} /> : null}
      <Problem error={list.error} />
      <Outcome action={action} />
      <FileTable list={list} write={write} busy={action.busy} run={action.run} />
      {list.data ? (
        <nav class="pager" aria-label="Pages">
          {offset > 0 ? <a href={href(["files"], { offset: Math.max(0, offset - PAGE) })}>Previous page</a> : <span />}
          <span class="muted">
            {list.data.total === 0 ? 0 : offset + 1}–{offset + list.data.data.length} of {list.data.total}
          </span>
          {offset + PAGE < list.data.total ? <a href={href(["files"], { offset: offset + PAGE })}>Next page</a> : <span />}
        </nav>
      ) : null}
    </Page>
  );
}

function FileTable(props: { list: Loaded<{ data: FileObject[] }>; write: boolean; busy: boolean; run(fn: () => Promise<string | void>): Promise<void> }) {
  const { client } = useSession();
  const download = (f: FileObject) => props.run(async () => saveBlob(await client.files.download(f.id), f.filename));
  const remove = (f: FileObject) => {
    if (!confirm(`Delete ${f.filename}? Runs that used it keep their copy.`)) return;
    void props.run(async () => {
      await client.files.delete(f.id);
      props.list.reload();
      return `Deleted ${f.filename}.`;
    });
  };
  return (
    <DataTable
      rows={props.list.data?.data}
      empty="No files yet."
      head={["File", "Type", "Size", "Purpose", "Uploaded", ""]}
      row={(f) => (
        <tr key={f.id} data-file={f.filename}>
          <td>
            {f.filename}
            <div class="mono muted">{f.id}</div>
          </td>
          <td>{f.contentType}</td>
          <td>{bytes(f.size)}</td>
          <td>{f.purpose ?? "—"}</td>
          <td>
            <Time iso={f.createdAt} />
          </td>
          <td class="row-actions">
            <button type="button" class="secondary" disabled={props.busy} onClick={() => void download(f)}>
              Download <span class="sr-only">{f.filename}</span>
            </button>{" "}
            {props.write ? (
              <button type="button" class="secondary" disabled={props.busy} onClick={() => remove(f)}>
                Delete <span class="sr-only">{f.filename}</span>
              </button>
            ) : null}
          </td>
        </tr>
      )}
    />
  );
}

interface Progress {
  name: string;
  sent: number;
  total: number;
}

/** The send failed below HTTP: a lost connection, or the browser refused it (CSP, CORS). */
class Unreachable extends Error {}

/** PUTs `file` to the session's signed URL, reporting progress; resolves when the server stored the bytes. */
function put(url: string, headers: Record<string, string>, file: File, onProgress: (sent: number) => void, xhrRef: { current: XMLHttpRequest | null }): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhrRef.current = xhr;
    xhr.open("PUT", url);
    for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() !== "content-length") xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => onProgress(e.loaded);
    xhr.onload = () => (xhr.status >= 200 && xhr.status < 300 ? resolve() : reject(new Error(`the upload was refused: ${xhr.status} ${errorOf(xhr.responseText)}`)));
    xhr.onerror = () => reject(new Unreachable("the upload failed: the connection was lost"));
    xhr.onabort = () => reject(new Error("Upload cancelled."));
    xhr.send(file);
  });
}

function errorOf(text: string): string {
  try {
    const body = JSON.parse(text) as { issues?: { message: string }[] };
    return body.issues?.map((i) => i.message).join("; ") ?? "";
  } catch {
    return "";
  }
}

function Upload({ onDone }: { onDone(): void }) {
  const { client } = useSession();
  const [progress, setProgress] = useState<Progress | null>(null);
  const [purpose, setPurpose] = useState("");
  const action = useAction();
  const xhr = useRef<XMLHttpRequest | null>(null);
  const input = useRef<HTMLInputElement>(null);

  const upload = (file: File) =>
    action.run(async () => {
      setProgress({ name: file.name, sent: 0, total: file.size });
      try {
        const n = await client.files.createUpload({
          filename: file.name,
          contentType: file.type || "application/octet-stream",
          size: file.size,
          purpose: purpose.trim() || undefined,
          idempotencyKey: newActionKey(),
          transport: "presigned-put",
        });
        if (n.transport !== "presigned-put") throw new Error(`the server offered the ${n.transport} transport, which the console does not send`);
        // On S3 storage the URL is the bucket's: the server's CSP names the S3 endpoint (and nothing
        // else), and the bucket's CORS rules must let this page PUT (docs/automation/s3.md). A send the
        // browser refuses looks like a lost connection, so a failure to another origin says what to check.
        const target = new URL(n.url, location.href).origin;
        try {
          await put(n.url, n.headers, file, (sent) => setProgress({ name: file.name, sent, total: file.size }), xhr);
        } catch (err) {
          await client.files.abortUpload(n.uploadId).catch(() => {});
          if (err instanceof Unreachable && target !== location.origin) {
            throw new Error(
              `the upload to ${target} was refused or lost: on S3 storage the bucket's CORS rules must allow PUT from ${location.origin} (see docs/automation/s3.md); a --public-url on another host cannot be reached from this page`,
            );
          }
          throw err;
        }
        const done = await client.files.completeUpload(n.uploadId);
        onDone();
        return `Uploaded ${done.filename} (${bytes(done.size)}) as ${done.id}.`;
      } finally {
        xhr.current = null;
        setProgress(null);
        if (input.current) input.current.value = "";
      }
    });

  const pct = progress && progress.total > 0 ? Math.floor((progress.sent / progress.total) * 100) : 0;
  return (
    <section aria-labelledby="upload-h">
      <h2 id="upload-h">Upload a file</h2>
      <div
        class="dropzone"
        onDragOver={(e) => e.preventDefault()}
        onDrop={(e) => {
          e.preventDefault();
          const f = e.dataTransfer?.files[0];
          if (f && !action.busy) void upload(f);
        }}
      >
        <label>
          File <span class="hint">(or drop it here; up to 1 GiB)</span>
          <input
            ref={input}
            id="upload-file"
            type="file"
            disabled={action.busy}
            onChange={(e) => {
              const f = e.currentTarget.files?.[0];
              if (f) void upload(f);
            }}
          />
        </label>
        <label>
          Purpose <span class="hint">(optional; run-input files expire after 24 h)</span>
          <input value={purpose} size={16} disabled={action.busy} onInput={(e) => setPurpose(e.currentTarget.value)} />
        </label>
      </div>
      {progress ? (
        <div class="upload-progress">
          <label for="upload-progress">
            Uploading {progress.name}: {bytes(progress.sent)} of {bytes(progress.total)} ({pct} %)
          </label>
          <progress id="upload-progress" max={progress.total || 1} value={progress.sent} />
          <button type="button" class="secondary" onClick={() => xhr.current?.abort()}>
            Cancel upload
          </button>
        </div>
      ) : null}
      <Outcome action={action} />
    </section>
  );
}
