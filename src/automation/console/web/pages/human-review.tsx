// A human-review task: the document beside the fields to check; approve / reject / save corrections,
// with keyboard shortcuts. Writes carry the task's version: when someone else decided or edited first,
// the API answers 409 and the page says so.
import { useEffect, useRef, useState } from "preact/hooks";
import { taskConflict, type HumanReviewDecision, type HumanReviewTask } from "../../../client/index";
import { errorText, newActionKey } from "../api";
import { SelectField } from "../components/field";
import { go, href } from "../router";
import { Badge, Json, Notice, Page, Problem, Skeleton, Time, useLoad, useSession } from "../ui";
import { ArtifactPreview } from "./preview";

type Draft = Record<string, { value: string; confirmed: boolean }>;

const show = (v: unknown) => (v === null || v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v));

/** A field's text back to the scalar the API takes, keeping the original's type. */
function parseValue(text: string, original: unknown): string | number | boolean | null {
  if (typeof original === "number") {
    const n = Number(text);
    if (text.trim() === "" || !Number.isFinite(n)) throw new Error(`"${text}" is not a number`);
    return n;
  }
  if (typeof original === "boolean") return text === "true";
  if (original === null && text === "") return null;
  return text;
}

/** Whether a failed call may still have been applied (no answer, or a 5xx/429): only then is the same key reused. */
function uncertain(err: unknown): boolean {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status !== "number" || status === 0 || status === 408 || status === 429 || status >= 500;
}

/** What the stale page had typed and not saved, named so that nothing is lost silently. */
function unsavedText(edits: string[]): string {
  return edits.length ? ` Your edits were not applied: ${edits.join(", ")}.` : "";
}

/** Every scalar of `data` with its JSON pointer (`/a/0/b`; `~` and `/` escaped as RFC 6901 says). */
function scalarLeaves(data: unknown, at = ""): [string, unknown][] {
  if (data !== null && typeof data === "object") return Object.entries(data).flatMap(([k, v]) => scalarLeaves(v, `${at}/${k.replace(/~/g, "~0").replace(/\//g, "~1")}`));
  return at ? [[at, data]] : [];
}

/**
 * The task's fields: those to review (the task's decisions) and, after them, every other scalar of its
 * data as an optional field (the API lets a reviewer correct those too; a saved one becomes a decision).
 */
function fieldsOf(t: HumanReviewTask): (HumanReviewDecision & { extra?: true })[] {
  const known = new Set(t.decisions.map((d) => d.path));
  const extra = scalarLeaves(t.data)
    .filter(([path]) => !known.has(path))
    .map(([path, value]) => ({ id: "", path, originalValue: value, currentValue: value, required: false, confirmed: true, reason: null, confirmedBy: null, confirmedAt: null, version: 0, extra: true as const }));
  return [...t.decisions, ...extra];
}

function conflictText(err: unknown, what: "save" | "approve" | "reject", edits: string[]): string | null {
  const c = taskConflict(err);
  if (!c) return null;
  const yours = what === "save" ? "Your corrections were not saved." : what === "approve" ? "Your approval was not applied." : "Your rejection was not applied.";
  if (c.error === "task_not_pending") return `Someone else decided this task first: it is ${c.status} now. ${yours}${unsavedText(edits)} Reload the task to see its current state.`;
  if (c.error === "version_conflict") return `Someone else changed this task while you were on it (now version ${c.currentVersion}). ${yours}${unsavedText(edits)} Reload the task to see their changes, then decide.`;
  return "Every field that needs a review must be confirmed before approving.";
}

export function HumanReviewTaskPage({ id }: { id: string }) {
  const { client, can } = useSession();
  const loaded = useLoad(() => client.humanReviews.get(id), [id]);
  const queue = useLoad(() => client.humanReviews.list({ limit: 100 }), [id]);
  const [task, setTask] = useState<HumanReviewTask | null>(null);
  const [draft, setDraft] = useState<Draft>({});
  const [fileId, setFileId] = useState<string | null>(null);
  const [rejecting, setRejecting] = useState(false);
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reasonRef = useRef<HTMLTextAreaElement>(null);
  /** The key of the last action whose outcome is unknown (timeout, 5xx): a retry of exactly that action reuses it. */
  const pendingKey = useRef<{ action: string; key: string } | null>(null);
  const canWrite = can("reviews:write");

  const adopt = (t: HumanReviewTask) => {
    setTask(t);
    setDraft(Object.fromEntries(fieldsOf(t).map((d) => [d.path, { value: show(d.currentValue), confirmed: d.confirmed || !d.required }])));
  };
  useEffect(() => {
    if (loaded.data) {
      adopt(loaded.data);
      setFileId(loaded.data.files[0]?.fileId ?? null);
      setMessage(null);
      setError(null);
      setRejecting(false);
    }
  }, [loaded.data]);

  const ids = (queue.data?.tasks ?? []).map((t) => t.id);
  const at = ids.indexOf(id);
  const next = at >= 0 ? ids[at + 1] : ids[0];
  const previous = at > 0 ? ids[at - 1] : undefined;
  const pending = task?.status === "pending";

  /** The fields whose typed value differs from the task's, as "label: value". */
  const edits = (t: HumanReviewTask): string[] =>
    fieldsOf(t).flatMap((d) => {
      const f = draft[d.path];
      if (!f || f.value === show(d.currentValue)) return [];
      const m = (t.fieldMetadata[d.path] ?? {}) as { label?: string };
      return [`${m.label ?? d.path}: ${f.value}`];
    });

  /**
   * Sends every field whose value changed or that was newly confirmed; the task's version moves on.
   * `key` is the action's own idempotency key; each field's write gets its own key derived from it.
   */
  const saveFields = async (t: HumanReviewTask, confirmAll: boolean, key: string): Promise<HumanReviewTask> => {
    let current = t;
    for (const d of fieldsOf(t)) {
      const f = draft[d.path];
      if (!f) continue;
      const value = parseValue(f.value, d.originalValue ?? d.currentValue);
      const changed = show(value) !== show(d.currentValue);
      const confirm = confirmAll || f.confirmed;
      if (!changed && (d.confirmed || !confirm)) continue;
      current = await client.humanReviews.setField(id, {
        path: d.path,
        value,
        confirmed: confirm,
        expectedVersion: current.version,
        idempotencyKey: `${key}:field:${d.path}`,
      });
    }
    return current;
  };

  const act = async (what: "save" | "approve" | "reject") => {
    if (!task || !pending || busy || !canWrite) return;
    if (what === "reject" && !reason.trim()) {
      setRejecting(true);
      setTimeout(() => reasonRef.current?.focus());
      return;
    }
    // One key per action. It is reused only when this very action (same task version, same values)
    // is tried again after a failure that may have been applied, so the server replays it rather
    // than acting twice; anything else (another page, another edit, another click) is a new key.
    const action = JSON.stringify([what, task.version, draft, what === "reject" ? reason.trim() : ""]);
    const key = pendingKey.current?.action === action ? pendingKey.current.key : newActionKey();
    pendingKey.current = { action, key };
    setBusy(true);
    setError(null);
    setMessage(null);
    try {
      if (what === "save") {
        adopt(await saveFields(task, false, key));
        setMessage("Corrections saved.");
      } else if (what === "approve") {
        const saved = await saveFields(task, true, key);
        adopt(await client.humanReviews.approve(id, { expectedVersion: saved.version, idempotencyKey: `${key}:approve` }));
        setMessage("Approved: the run resumes with the reviewed data.");
      } else {
        adopt(await client.humanReviews.reject(id, { reason: reason.trim(), expectedVersion: task.version, idempotencyKey: `${key}:reject` }));
        setMessage("Rejected: the run ends as rejected with your reason.");
        setRejecting(false);
      }
      pendingKey.current = null;
    } catch (err) {
      if (!uncertain(err)) pendingKey.current = null;
      // The draft stays as typed: the page shows what was not applied until the person reloads.
      setError(conflictText(err, what, edits(task)) ?? errorText(err));
    } finally {
      setBusy(false);
    }
  };

  // Shortcuts work when no text field has focus: a approve, r reject, s save, j/k next/previous task.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const el = e.target as HTMLElement | null;
      const typing = el instanceof HTMLInputElement ? !["checkbox", "radio", "button", "submit"].includes(el.type) : el?.tagName === "TEXTAREA" || el?.tagName === "SELECT" || !!el?.isContentEditable;
      if (typing) return;
      const k = e.key.toLowerCase();
      if (k === "a") void act("approve");
      else if (k === "r") void act("reject");
      else if (k === "s") void act("save");
      else if (k === "j" && next && next !== id) go(href(["human-reviews", next]));
      else if (k === "k" && previous) go(href(["human-reviews", previous]));
      else return;
      e.preventDefault();
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  });

  const file = task?.files.find((f) => f.fileId === fileId);
  return (
    <Page
      title={`Review task ${id}`}
      actions={
        <>
          {previous ? <a href={href(["human-reviews", previous])}>← Previous task</a> : null}
          {next && next !== id ? <a href={href(["human-reviews", next])}>Next task →</a> : null}
        </>
      }
    >
      <Problem error={loaded.error} />
      {!task ? (
        <Skeleton rows={8} />
      ) : (
        <>
          <p>
            <Badge value={task.status} /> {task.automationName} · step {task.sourceLabel} · run <a href={href(["runs", task.executionId])}>{task.executionId}</a> · waiting since <Time iso={task.createdAt} />
          </p>
          {task.instructions ? <p class="notice">{task.instructions}</p> : null}
          <p class="hint" id="shortcuts">
            Keyboard: <kbd>A</kbd> approve, <kbd>R</kbd> reject, <kbd>S</kbd> save corrections, <kbd>J</kbd>/<kbd>K</kbd> next/previous task (outside text fields).
          </p>
          <div aria-live="assertive">
            {error ? (
              <p class="problem" role="alert">
                {error}{" "}
                <button type="button" class="link" onClick={loaded.reload}>
                  Reload the task
                </button>
              </p>
            ) : null}
            {message ? <Notice>{message}</Notice> : null}
          </div>
          <div class="review-layout">
            <section aria-labelledby="doc-h">
              <h2 id="doc-h">Document</h2>
              {task.files.length > 1 ? (
                <SelectField label="File" value={fileId ?? ""} options={task.files.map((f) => [f.fileId, f.filename] as const)} onValue={setFileId} />
              ) : null}
              {file ? (
                <ArtifactPreview key={file.fileId} name={file.filename} contentType={file.mimeType} load={async () => (await client.humanReviews.file(id, file.fileId)).blob()} />
              ) : (
                <>
                  <p class="muted">No document is attached; the data under review:</p>
                  <Json value={task.data} label="Data under review" />
                </>
              )}
            </section>
            <section aria-labelledby="fields-h">
              <h2 id="fields-h">Fields</h2>
              <form
                class="stack"
                onSubmit={(e) => {
                  e.preventDefault();
                  void act("save");
                }}
              >
                {task.decisions.length === 0 ? <p class="muted">No field needs a review; the fields below can still be corrected.</p> : null}
                {fieldsOf(task).map((d) => (
                  <FieldEditor key={d.path} decision={d} plain={!!d.extra} meta={task.fieldMetadata[d.path]} draft={draft[d.path]} disabled={!pending || !canWrite} onChange={(v) => setDraft({ ...draft, [d.path]: v })} />
                ))}
                {pending && canWrite ? (
                  <div class="row">
                    <button type="button" onClick={() => act("approve")} disabled={busy} aria-keyshortcuts="a">
                      Approve
                    </button>
                    <button type="submit" class="secondary" disabled={busy} aria-keyshortcuts="s">
                      Save corrections
                    </button>
                    <button type="button" class="danger" onClick={() => act("reject")} disabled={busy} aria-keyshortcuts="r">
                      Reject…
                    </button>
                  </div>
                ) : null}
              </form>
              {rejecting && pending ? (
                <form
                  class="stack"
                  onSubmit={(e) => {
                    e.preventDefault();
                    void act("reject");
                  }}
                >
                  <label>
                    Reason for rejecting
                    <textarea ref={reasonRef} rows={3} required maxLength={5000} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
                  </label>
                  <div class="row">
                    <button type="submit" class="danger" disabled={busy}>
                      Reject the task
                    </button>
                    <button type="button" class="secondary" onClick={() => setRejecting(false)}>
                      Keep it
                    </button>
                  </div>
                </form>
              ) : null}
              {task.decision ? (
                <p class="muted">
                  {task.decision.status} by {task.decision.by ?? "—"} <Time iso={task.decision.at} />
                  {task.decision.reason ? `: ${task.decision.reason}` : ""}
                </p>
              ) : null}
              <h3>All data</h3>
              <Json value={task.data} label="Task data" />
            </section>
          </div>
        </>
      )}
    </Page>
  );
}

function FieldEditor({ decision: d, plain, meta, draft, disabled, onChange }: { decision: HumanReviewDecision; plain: boolean; meta: unknown; draft: { value: string; confirmed: boolean } | undefined; disabled: boolean; onChange(v: { value: string; confirmed: boolean }): void }) {
  const m = (meta ?? {}) as { label?: string; confidence?: unknown; description?: string };
  const id = `field-${d.path.replace(/[^\w-]/g, "_")}`;
  const value = draft?.value ?? show(d.currentValue);
  const confirmed = draft?.confirmed ?? d.confirmed;
  return (
    <div class={`field ${d.required ? "required" : ""} ${d.confirmed ? "confirmed" : ""}`}>
      <label for={id}>
        {m.label ?? d.path} <span class="muted mono">{d.path}</span>
      </label>
      {typeof d.originalValue === "boolean" ? (
        <select id={id} aria-describedby={m.description ? `${id}-description` : undefined} value={value} disabled={disabled} onChange={(e) => onChange({ value: e.currentTarget.value, confirmed: true })}>
          <option value="true">true</option>
          <option value="false">false</option>
        </select>
      ) : (
        <input
          id={id}
          aria-describedby={m.description ? `${id}-description` : undefined}
          type={(typeof d.originalValue === "number" ? "number" : "text") as "text"}
          step={typeof d.originalValue === "number" ? "any" : undefined}
          value={value}
          disabled={disabled}
          onInput={(e) => onChange({ value: e.currentTarget.value, confirmed: true })}
        />
      )}
      {m.description ? (
        <span class="hint field-description" id={`${id}-description`}>
          {m.description}
        </span>
      ) : null}
      <span class="hint">
        {d.required ? "needs a review" : plain ? "no review needed; change it only if it is wrong" : "optional"}
        {m.confidence !== undefined && !d.reason ? ` · confidence ${String(m.confidence)}` : ""}
        {show(d.originalValue) !== value ? ` · extracted: ${show(d.originalValue)}` : ""}
        {d.reason ? ` · ${d.reason}` : ""}
      </span>
      {plain ? null : (
        <label class="inline">
          <input type="checkbox" checked={confirmed} disabled={disabled} onChange={(e) => onChange({ value, confirmed: e.currentTarget.checked })} /> Confirmed
        </label>
      )}
    </div>
  );
}
