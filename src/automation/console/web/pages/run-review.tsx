// A run's review: verdict, status, note, corrected output and expected files; promote the run to a
// dataset example of its automation.
import { useEffect, useState } from "preact/hooks";
import type { Review, Run } from "../../../client/index";
import { ActionButton } from "../components/action";
import { CodeField, SelectField, TextField } from "../components/field";
import { href } from "../router";
import { Outcome, Problem, Skeleton, useAction, useLoad, useSession } from "../ui";

export function RunReview({ run }: { run: Run }) {
  const session = useSession();
  const { client } = session;
  const review = useLoad(() => client.reviews.get(run.id), [run.id]);
  const expected = useLoad(() => client.reviews.listExpected(run.id), [run.id]);
  const [verdict, setVerdict] = useState<string>("");
  const [status, setStatus] = useState<string>("");
  const [note, setNote] = useState("");
  const [corrected, setCorrected] = useState("");
  const [exampleName, setExampleName] = useState("");
  const save = useAction();
  const promote = useAction();
  const files = useAction();
  const canWrite = session.can("reviews:write");

  useEffect(() => {
    const r: Review | null | undefined = review.data;
    if (r === undefined) return;
    setVerdict(r?.verdict ?? "");
    setStatus(r?.status ?? "");
    setNote(r?.note ?? "");
    setCorrected(r?.correctedOutput === undefined || r?.correctedOutput === null ? "" : JSON.stringify(r.correctedOutput, null, 2));
  }, [review.data]);

  const submit = (e: Event) => {
    e.preventDefault();
    void save.run(async () => {
      let correctedOutput: unknown = null;
      if (corrected.trim()) {
        try {
          correctedOutput = JSON.parse(corrected);
        } catch {
          throw new Error("Corrected output is not valid JSON");
        }
      }
      await client.reviews.put(run.id, {
        verdict: (verdict || null) as Review["verdict"],
        ...(status ? { status: status as Review["status"] } : {}),
        note: note || null,
        correctedOutput,
      });
      review.reload();
      return "Review saved.";
    });
  };

  return (
    <section aria-labelledby="review-h">
      <h2 id="review-h">Review</h2>
      <Problem error={review.error} />
      {review.loading && review.data === undefined ? (
        <Skeleton rows={3} />
      ) : (
        <form class="stack" onSubmit={submit}>
          {review.data ? (
            <p class="muted">
              Reviewed by {review.data.reviewedByEmail ?? review.data.reviewedBy ?? "—"}; {review.data.corrections.length} correction(s).
            </p>
          ) : (
            <p class="muted">Not reviewed yet.</p>
          )}
          <fieldset disabled={!canWrite}>
            <legend>Verdict</legend>
            {[
              ["", "none"],
              ["correct", "correct"],
              ["incorrect", "incorrect"],
            ].map(([v, label]) => (
              <label key={v} class="inline">
                <input type="radio" name="verdict" value={v} checked={verdict === v} onChange={() => setVerdict(v)} /> {label}
              </label>
            ))}
          </fieldset>
          <SelectField
            label="Status"
            value={status}
            disabled={!canWrite}
            options={[["", "default (correct closes)"], "open", "closed", ["wont_fix", "won't fix"]]}
            onValue={setStatus}
          />
          <label>
            Note
            <textarea id="review-note" rows={3} value={note} disabled={!canWrite} onInput={(e) => setNote(e.currentTarget.value)} />
          </label>
          <CodeField label="Corrected output (JSON)" id="review-corrected" rows={6} value={corrected} disabled={!canWrite} onValue={setCorrected} />
          {canWrite ? (
            <div class="row">
              <button type="submit" disabled={save.busy}>
                Save review
              </button>
              {review.data ? (
                <ActionButton
                  action={save}
                  class="danger"
                  run={async () => {
                    await client.reviews.delete(run.id);
                    review.reload();
                    return "Review deleted.";
                  }}
                >
                  Delete review
                </ActionButton>
              ) : null}
            </div>
          ) : null}
          <Outcome action={save} />
        </form>
      )}

      <h3>Expected files</h3>
      <Problem error={expected.error} />
      <Problem error={files.error} />
      {expected.data?.length ? (
        <ul>
          {expected.data.map((name) => (
            <li key={name}>{name}</li>
          ))}
        </ul>
      ) : (
        <p class="muted">No corrected files.</p>
      )}
      {canWrite ? (
        <label>
          Add an expected file
          <input
            type="file"
            onChange={(e) => {
              const f = e.currentTarget.files?.[0];
              if (f)
                void files.run(async () => {
                  await client.reviews.uploadExpected(run.id, f, { name: f.name });
                  expected.reload();
                });
            }}
          />
        </label>
      ) : null}

      {/* The API's rule: promoting needs reviews:write and datasets:write (a reviewer has both). */}
      {session.can("reviews:write") && session.can("datasets:write") ? (
        <form
          class="row promote"
          onSubmit={(e) => {
            e.preventDefault();
            void promote.run(async () => {
              const p = await client.reviews.promote(run.id, { name: exampleName || undefined, useCorrections: true });
              location.hash = href(["automations", p.automationId, "dataset", p.exampleId]);
            });
          }}
        >
          <TextField label="Example name" value={exampleName} placeholder="generated when empty" pattern="[a-z0-9][a-z0-9_\-]*" onValue={setExampleName} />
          <button type="submit" disabled={promote.busy}>
            Promote to dataset example
          </button>
          <Problem error={promote.error} />
        </form>
      ) : null}
    </section>
  );
}
