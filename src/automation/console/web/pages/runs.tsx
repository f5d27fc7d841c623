// Runs: the list (the API's filters, cursor pages) and one run (live status, steps, input/output,
// artifacts with previews, usage, trace, cancel/rerun, the run's review).
import { useEffect, useRef, useState } from "preact/hooks";
import type { Artifact, Run, RunEvent, RunStep, RunUsage } from "../../../client/index";
import { ActionButton } from "../components/action";
import { SelectField, TextField } from "../components/field";
import { FilterForm, useAddressDraft } from "../components/filters";
import { Pager } from "../components/pager";
import { Table } from "../components/table";
import { go, href } from "../router";
import { Badge, bytes, duration, Facts, Json, Outcome, Page, Problem, saveBlob, Skeleton, Time, useAction, useInterval, useLoad, useSession } from "../ui";
import { ArtifactPreview } from "./preview";
import { RunReview } from "./run-review";

const TERMINAL = new Set(["completed", "failed", "cancelled", "rejected"]);
/** Every `trigger.type` a run can have (runs/sources.ts and the services that start runs). */
const TRIGGERS = ["api", "cli", "manual", "cron", "email", "eval", "rerun", "workflow"];
const STATUSES = ["created", "pending", "running", "waiting", "finalizing", "completed", "failed", "cancelled", "rejected"];

type Json = Record<string, unknown>;
const rec = (v: unknown): Json => (v && typeof v === "object" ? (v as Json) : {});

/** Who started a run: a key's name or id, an e-mail sender, or nothing. */
function byText(by: unknown): string {
  if (!by) return "";
  if (typeof by !== "object") return ` by ${String(by)}`;
  const o = by as Json;
  const who = o.name ?? o.email ?? o.keyName ?? o.id ?? o.keyId;
  return who ? ` by ${String(who)}` : "";
}

export function runStatus(r: Run): string {
  return r.execution?.status ?? "unknown";
}

export function RunsList({ query }: { query: URLSearchParams }) {
  const { client } = useSession();
  const params = Object.fromEntries(query.entries());
  const key = query.toString();
  const list = useLoad(() => client.runs.list({ limit: 50, ...params }), [key]);
  const { draft, set, clear } = useAddressDraft(query);
  const apply = () => {
    const { cursor: _drop, ...rest } = draft;
    // A "to" day includes the whole day.
    if (rest.to && /^\d{4}-\d{2}-\d{2}$/.test(rest.to)) rest.to = `${rest.to}T23:59:59.999Z`;
    go(href(["runs"], rest));
  };
  const any = (xs: string[]) => [["", "any"] as const, ...xs];

  return (
    <Page title="Runs">
      <FilterForm
        label="Filter runs"
        onApply={apply}
        buttons={
          <>
            <button type="submit">Apply</button>
            <a class="button secondary" href="#/runs" onClick={clear}>
              Clear
            </a>
            {list.loading && list.data ? (
              <span class="muted" role="status">
                Loading…
              </span>
            ) : null}
          </>
        }
      >
        <SelectField label="Status" value={draft.status ?? ""} options={any(STATUSES)} onValue={(v) => set("status", v)} />
        <TextField label="Automation" placeholder="id or workflows.slug" value={draft.source ?? ""} onValue={(v) => set("source", v)} />
        <SelectField label="Trigger" value={draft.trigger ?? ""} options={any(TRIGGERS)} onValue={(v) => set("trigger", v)} />
        <TextField label="Batch / experiment" value={draft.batch_id ?? ""} onValue={(v) => set("batch_id", v)} />
        <TextField label="From" type="date" value={draft.from ?? ""} onValue={(v) => set("from", v)} />
        <TextField label="To" type="date" value={(draft.to ?? "").slice(0, 10)} onValue={(v) => set("to", v)} />
        <SelectField label="Review" value={draft.review_verdict ?? ""} options={any(["correct", "incorrect"])} onValue={(v) => set("review_verdict", v)} />
        <SelectField label="Review status" value={draft.review_status ?? ""} options={[["", "any"], "open", "closed", ["wont_fix", "won't fix"]]} onValue={(v) => set("review_status", v)} />
        <SelectField label="Sort by" value={draft.sort ?? ""} options={[["", "created"], ["startedAt", "started"], ["completedAt", "completed"]]} onValue={(v) => set("sort", v)} />
        <SelectField label="Order" value={draft.order ?? ""} options={[["", "newest first"], ["asc", "oldest first"]]} onValue={(v) => set("order", v)} />
        <SelectField label="Evaluation runs" value={draft.experiments ?? ""} options={[["", "included"], ["false", "excluded"]]} onValue={(v) => set("experiments", v)} />
      </FilterForm>
      <p class="hint">Every other filter of the API works in the address too, e.g. <code>#/runs?example_id=ex_…</code> or <code>#/runs?has_corrections=true</code>.</p>
      <Problem error={list.error} />
      {!list.data && list.loading ? <Skeleton rows={10} /> : null}
      {list.data ? (
        // Rows of the previous filter stay in place (no jump) but dimmed and busy until the new ones arrive.
        <div class={list.loading ? "stale" : undefined} aria-busy={list.loading ? "true" : undefined}>
          <RunTable runs={list.data.runs} />
        </div>
      ) : null}
      <Pager
        back={query.get("cursor") ? <a href={href(["runs"], { ...params, cursor: undefined })}>First page</a> : null}
        on={
          list.data?.nextCursor ? (
            <a rel="next" href={href(["runs"], { ...params, cursor: list.data.nextCursor })}>
              Next page
            </a>
          ) : null
        }
      />
    </Page>
  );
}

export function RunTable({ runs }: { runs: Run[] }) {
  return (
    <Table
      class="runs"
      rows={runs}
      empty="No runs match."
      head={["Run", "Automation", "Status", "Trigger", "Created", "Duration", "Review"]}
      row={(r) => {
        const source = rec(r.source);
        const timing = rec(r.timing);
        // The API puts a run's review under execution.review (verdict and status).
        const raw = rec(r.execution).review ?? r.review;
        const review = raw ? rec(raw) : null;
        return (
          <tr key={r.id}>
            <td>
              <a href={href(["runs", r.id])}>{r.id}</a>
            </td>
            <td>{String(source.slug ?? source.name ?? source.id ?? "—")}</td>
            <td>
              <Badge value={runStatus(r)} />
            </td>
            <td>{String(rec(r.trigger).type ?? "—")}</td>
            <td>
              <Time iso={timing.createdAt as string} />
            </td>
            <td>{duration(timing.durationMs as number | null)}</td>
            <td>{review ? <Badge value={(review.verdict as string) ?? (review.status as string)} /> : <span class="muted">—</span>}</td>
          </tr>
        );
      }}
    />
  );
}

export function RunDetail({ id }: { id: string }) {
  const session = useSession();
  const { client } = session;
  const run = useLoad(() => client.runs.get(id, { expand: ["input"] }), [id]);
  const steps = useLoad(() => client.runs.steps(id), [id]);
  const events = useLoad(() => client.runs.events(id), [id]);
  const status = run.data ? runStatus(run.data) : "";
  const live = !!run.data && !TERMINAL.has(status);
  // The status updates live: poll while the run is not terminal, then load what only ends exist for.
  useInterval(
    () => {
      run.reload();
      steps.reload();
      events.reload();
    },
    1000,
    live,
  );
  const action = useAction();
  const canWrite = session.can("runs:write");

  const r = run.data;
  const source = rec(r?.source);
  const timing = rec(r?.timing);
  const retry = rec(rec(r?.execution).retry);
  return (
    <Page
      title={`Run ${id}`}
      actions={
        r && canWrite ? (
          <>
            {live ? (
              <button type="button" class="danger" disabled={action.busy} onClick={() => action.run(async () => `cancel: ${(await client.runs.cancel(id)).cancellation.state}`).then(run.reload)}>
                Cancel run
              </button>
            ) : null}
            <button type="button" disabled={action.busy} onClick={() => action.run(async () => void go(href(["runs", (await client.rerun(id)).id])))}>
              Rerun
            </button>
          </>
        ) : null
      }
    >
      <Outcome action={action} />
      <Problem error={run.error} />
      {!r ? (
        <Skeleton rows={6} />
      ) : (
        <>
          <Facts
            rows={[
              ["Status", <span aria-live="polite" data-testid="run-status"><Badge value={status} /></span>],
              ["Automation", source.id ? <a href={href(["automations", String(source.id)])}>{String(source.slug ?? source.name ?? source.id)}</a> : "—"],
              ["Version", String(source.version ?? "—")],
              ["Trigger", `${String(rec(r.trigger).type ?? "—")}${byText(rec(r.trigger).by)}`],
              ["Created", <Time iso={timing.createdAt as string} />],
              ["Started", <Time iso={timing.startedAt as string} />],
              ["Completed", <Time iso={timing.completedAt as string} />],
              ["Duration", duration(timing.durationMs as number | null)],
              ...(retry.previousRunId ? ([["Rerun of", <a href={href(["runs", String(retry.previousRunId)])}>{String(retry.previousRunId)}</a>]] as [string, preact.ComponentChildren][]) : []),
              ...(retry.nextRun ? ([["Rerun as", <a href={href(["runs", String(rec(retry.nextRun).id ?? retry.nextRun)])}>{String(rec(retry.nextRun).id ?? retry.nextRun)}</a>]] as [string, preact.ComponentChildren][]) : []),
            ]}
          />
          <div class="two">
            <section aria-labelledby="input-h">
              <h2 id="input-h">Input</h2>
              <Json value={r.input} label="Run input" />
            </section>
            <section aria-labelledby="output-h">
              <h2 id="output-h">Output</h2>
              {r.error ? <Json value={r.error} label="Run error" /> : null}
              {TERMINAL.has(status) ? <Json value={r.output} label="Run output" /> : <p class="muted">The run has not finished.</p>}
            </section>
          </div>
        </>
      )}
      <StepTimeline steps={steps.data} error={steps.error} />
      {r && TERMINAL.has(status) ? <Artifacts runId={id} /> : null}
      {r && TERMINAL.has(status) ? <Usage runId={id} /> : null}
      <Events events={events.data} error={events.error} />
      {r && TERMINAL.has(status) ? <Trace runId={id} /> : null}
      {r && TERMINAL.has(status) && session.can("reviews:read") ? <RunReview run={r} /> : null}
    </Page>
  );
}

const nestedIn = (path: string, parent: string) => path.startsWith(`${parent}.`) || path.startsWith(`${parent}[`);

function StepTimeline({ steps, error }: { steps: RunStep[] | undefined; error: unknown }) {
  const longest = Math.max(1, ...(steps ?? []).map((s) => s.durationMs ?? 0));
  // The innermost failed step: a control step that failed because a nested one did is not where it broke.
  const failed = steps?.findIndex((s) => s.status === "failed" && !steps.some((o) => o.status === "failed" && nestedIn(o.path, s.path))) ?? -1;
  // A failed run opens at its failed step's error: scrolled into view once, when the steps arrive.
  const shown = useRef(false);
  useEffect(() => {
    if (failed === -1 || shown.current) return;
    shown.current = true;
    document.getElementById(`step-${failed}`)?.scrollIntoView({ block: "center" });
  }, [failed]);
  return (
    <section aria-labelledby="steps-h">
      <h2 id="steps-h">Steps</h2>
      <Problem error={error} />
      {failed !== -1 && steps ? (
        <p>
          <a href={`#step-${failed}`} onClick={(e) => (e.preventDefault(), document.getElementById(`step-${failed}`)?.scrollIntoView({ block: "center" }))}>
            Go to the failed step: {steps[failed].name}
          </a>
        </p>
      ) : null}
      {!steps ? (
        <Skeleton rows={3} />
      ) : steps.length === 0 ? (
        <p class="muted">No step has started yet.</p>
      ) : (
        <ol class="timeline">
          {steps.map((s, i) => (
            <li key={`${s.name}-${i}`} id={`step-${i}`} class={`step ${s.status}`}>
              <div class="step-head">
                <strong>{s.name}</strong> <span class="muted">{s.type}</span> <Badge value={s.status} />
                <span class="muted">
                  attempt {s.attempt} · {duration(s.durationMs)}
                </span>
              </div>
              <div class="bar" aria-hidden="true">
                <span style={{ width: `${Math.max(2, ((s.durationMs ?? 0) / longest) * 100)}%` }} />
              </div>
              {s.error ? <Json value={s.error} label={`Error of step ${s.name}`} /> : null}
              <StepValues step={s} open={i === failed} />
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

/**
 * What a step ran with and what it produced, folded away except on the failed step, which opens at
 * its error with both. Secrets in the input are "[secret]" and long values cut (the server records it so).
 */
function StepValues({ step, open }: { step: RunStep; open: boolean }) {
  if (step.input === undefined && step.output === undefined && step.status !== "failed") return null;
  return (
    <details class="step-values" open={open}>
      <summary>Input and output of {step.name}</summary>
      <h3>Input</h3>
      {step.input === undefined ? <p class="muted">Not recorded (the step never rendered its values).</p> : <Json value={step.input} label={`Input of step ${step.name}`} />}
      <h3>Output</h3>
      {step.output === undefined ? (
        <p class="muted">{step.status === "failed" ? "None: the step failed before producing one." : "None yet."}</p>
      ) : (
        <Json value={step.output} label={`Output of step ${step.name}`} />
      )}
    </details>
  );
}

function Artifacts({ runId }: { runId: string }) {
  const { client } = useSession();
  const list = useLoad(() => client.runs.artifacts(runId), [runId]);
  const [open, setOpen] = useState<Artifact | null>(null);
  const zip = useAction();
  return (
    <section aria-labelledby="artifacts-h">
      <h2 id="artifacts-h">Artifacts</h2>
      <Problem error={list.error} />
      <Problem error={zip.error} />
      {!list.data ? (
        <Skeleton rows={2} />
      ) : list.data.length === 0 ? (
        <p class="muted">This run has no files.</p>
      ) : (
        <>
          <Table
            rows={list.data}
            head={["File", "Role", "Type", "Size", <span class="sr-only">Actions</span>]}
            row={(a) => (
              <tr key={a.path}>
                <td>{a.path}</td>
                <td>{String(a.role ?? "")}</td>
                <td>{String(a.contentType ?? "")}</td>
                <td>{bytes(a.size as number | null)}</td>
                <td class="row-actions">
                  <button type="button" class="secondary" aria-pressed={open?.path === a.path} onClick={() => setOpen(open?.path === a.path ? null : a)}>
                    {open?.path === a.path ? "Close" : "Open"} <span class="sr-only">{a.path}</span>
                  </button>
                </td>
              </tr>
            )}
          />
          <ActionButton
            action={zip}
            class="secondary"
            run={async () => {
              const res = await client.runs.artifactsZip(runId);
              saveBlob(await res.blob(), `${runId}.zip`);
            }}
          >
            Download all (ZIP)
          </ActionButton>
        </>
      )}
      {open ? (
        <ArtifactPreview
          key={open.path}
          name={open.path}
          contentType={String(open.contentType ?? "")}
          load={async () => (await client.runs.artifact(runId, open.path)).blob()}
        />
      ) : null}
    </section>
  );
}

function Usage({ runId }: { runId: string }) {
  const { client } = useSession();
  const usage = useLoad<RunUsage>(() => client.runs.usage(runId), [runId]);
  const u = usage.data;
  return (
    <section aria-labelledby="usage-h">
      <h2 id="usage-h">Usage and cost</h2>
      <Problem error={usage.error} />
      {u ? (
        <Facts
          rows={[
            ["Input tokens", String(u.tokens.input)],
            ["Output tokens", String(u.tokens.output)],
            ["Cache read / write", `${u.tokens.cacheRead} / ${u.tokens.cacheWrite}`],
            ["Model calls", String(u.llmCallCount)],
            ["Credits", String(u.creditsCharged)],
            ["Duration", duration(u.durationMs)],
          ]}
        />
      ) : (
        <Skeleton rows={2} />
      )}
    </section>
  );
}

function Events({ events, error }: { events: RunEvent[] | undefined; error: unknown }) {
  return (
    <section aria-labelledby="events-h">
      <h2 id="events-h">Events</h2>
      <Problem error={error} />
      {!events ? (
        <Skeleton rows={3} />
      ) : (
        <ol class="events">
          {events.map((e, i) => (
            <li key={i}>
              <Time iso={e.timestamp} /> <strong>{e.type}</strong> {e.status ? <Badge value={e.status} /> : null} {e.message ? <span>{e.message}</span> : null}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function Trace({ runId }: { runId: string }) {
  const { client } = useSession();
  const [shown, setShown] = useState(false);
  const trace = useLoad(() => (shown ? client.runs.trace(runId) : Promise.resolve(undefined)), [runId, shown]);
  return (
    <section aria-labelledby="trace-h">
      <h2 id="trace-h">Trace</h2>
      <button type="button" class="secondary" aria-expanded={shown} onClick={() => setShown(!shown)}>
        {shown ? "Hide trace" : "Show trace events"}
      </button>
      <Problem error={trace.error} />
      {shown && trace.data ? <Json value={trace.data} label="Trace events" /> : null}
    </section>
  );
}
