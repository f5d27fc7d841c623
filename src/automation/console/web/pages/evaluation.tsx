// Evaluation: datasets and examples, evaluators (YAML, validated by the server), experiments with
// progress and per-example scores, side-by-side comparison (changed examples first), review health.
import { useEffect, useRef, useState } from "preact/hooks";
import type { Example, ExperimentDetail as Detail } from "../../../client/index";
import { compareRows, overall } from "../compare";
import { DataTable, Table } from "../components/table";
import { go, href } from "../router";
import { Badge, Facts, Json, Notice, Page, Problem, saveBlob, Skeleton, Time, useAction, useInterval, useLoad, useSession } from "../ui";

const PAGE = 50;

const pct = (n: number | null | undefined) => (n === null || n === undefined ? "—" : `${(n * 100).toFixed(1)} %`);
const score = (n: number | null | undefined) => (n === null || n === undefined ? "—" : n.toFixed(3));

function SubNav({ automation }: { automation: string }) {
  return (
    <nav class="subnav" aria-label="Evaluation of this automation">
      <a href={href(["automations", automation])}>Automation</a>
      <a href={href(["automations", automation, "dataset"])}>Dataset</a>
      <a href={href(["automations", automation, "evaluators"])}>Evaluators</a>
      <a href={href(["automations", automation, "experiments"])}>Experiments</a>
      <a href={href(["automations", automation, "health"])}>Review health</a>
    </nav>
  );
}

export function Evaluation() {
  const { client } = useSession();
  const list = useLoad(() => client.automations.list({ limit: 100 }), []);
  return (
    <Page title="Evaluation">
      <p class="muted">Datasets, evaluators, experiments and review health, per automation.</p>
      <Problem error={list.error} />
      <DataTable
        rows={list.data?.data}
        skeleton={6}
        head={["Automation", "Dataset", "Evaluators", "Experiments", "Review health"]}
        row={(a) => (
          <tr key={a.id}>
            <td>
              <a href={href(["automations", a.id])}>{a.slug}</a>
            </td>
            <td>
              <a href={href(["automations", a.id, "dataset"])}>
                Dataset <span class="sr-only">of {a.slug}</span>
              </a>
            </td>
            <td>
              <a href={href(["automations", a.id, "evaluators"])}>
                Evaluators <span class="sr-only">of {a.slug}</span>
              </a>
            </td>
            <td>
              <a href={href(["automations", a.id, "experiments"])}>
                Experiments <span class="sr-only">of {a.slug}</span>
              </a>
            </td>
            <td>
              <a href={href(["automations", a.id, "health"])}>
                Health <span class="sr-only">of {a.slug}</span>
              </a>
            </td>
          </tr>
        )}
      />
    </Page>
  );
}

function parseJson(text: string, what: string): unknown {
  if (!text.trim()) return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${what} is not valid JSON`);
  }
}

export function Dataset({ automation }: { automation: string }) {
  const { client, can } = useSession();
  const [offset, setOffset] = useState(0);
  const list = useLoad(() => client.examples.list(automation, { limit: PAGE, offset, include: "full" }), [automation, offset]);
  const [name, setName] = useState("");
  const [input, setInput] = useState("{}");
  const [expected, setExpected] = useState("");
  const add = useAction();
  const transfer = useAction();
  const [mode, setMode] = useState<"append" | "replace">("append");
  const canWrite = can("automations:write");
  return (
    <Page title="Dataset">
      <SubNav automation={automation} />
      <Problem error={list.error} />
      <ExampleTable automation={automation} rows={list.data?.data} />
      {list.data ? (
        <nav class="pager" aria-label="Pages">
          {offset > 0 ? (
            <button type="button" class="secondary" onClick={() => setOffset(Math.max(0, offset - PAGE))}>
              Previous page
            </button>
          ) : (
            <span />
          )}
          <span class="muted">{list.data.total} examples</span>
          {offset + PAGE < list.data.total ? (
            <button type="button" class="secondary" onClick={() => setOffset(offset + PAGE)}>
              Next page
            </button>
          ) : (
            <span />
          )}
        </nav>
      ) : null}
      <section aria-labelledby="io-h">
        <h2 id="io-h">Import and export</h2>
        <div class="row">
          <button
            type="button"
            class="secondary"
            disabled={transfer.busy}
            onClick={() =>
              transfer.run(async () => {
                const res = await client.dataset.export(automation);
                saveBlob(await res.blob(), `dataset-${automation}.zip`);
              })
            }
          >
            Export dataset (ZIP)
          </button>
          {canWrite ? (
            <>
              <label>
                Import mode
                <select value={mode} onChange={(e) => setMode(e.currentTarget.value as "append" | "replace")}>
                  <option value="append">append</option>
                  <option value="replace">replace</option>
                </select>
              </label>
              <label>
                Import a dataset ZIP
                <input
                  type="file"
                  accept=".zip,application/zip"
                  onChange={(e) => {
                    const f = e.currentTarget.files?.[0];
                    if (f)
                      void transfer.run(async () => {
                        const r = await client.dataset.import(automation, f, { mode });
                        list.reload();
                        return `Imported: ${r.created} example(s) created (${r.mode}).`;
                      });
                  }}
                />
              </label>
            </>
          ) : null}
        </div>
        <Problem error={transfer.error} />
        {transfer.done ? <Notice>{transfer.done}</Notice> : null}
      </section>
      {canWrite ? (
        <section aria-labelledby="add-h">
          <h2 id="add-h">Add an example</h2>
          <form
            class="stack"
            onSubmit={(e) => {
              e.preventDefault();
              void add.run(async () => {
                const ex = await client.examples.create(automation, {
                  name: name || null,
                  input: parseJson(input, "Input") as Record<string, unknown>,
                  expected: parseJson(expected, "Expected output"),
                });
                go(href(["automations", automation, "dataset", ex.id]));
              });
            }}
          >
            <label>
              Name
              <input value={name} pattern="[a-z0-9][a-z0-9_\-]*" maxLength={128} onInput={(e) => setName(e.currentTarget.value)} />
            </label>
            <label>
              Input (JSON)
              <textarea class="code" rows={5} spellcheck={false} value={input} onInput={(e) => setInput(e.currentTarget.value)} />
            </label>
            <label>
              Expected output (JSON)
              <textarea class="code" rows={4} spellcheck={false} value={expected} onInput={(e) => setExpected(e.currentTarget.value)} />
            </label>
            <div class="row">
              <button type="submit" disabled={add.busy}>
                Add example
              </button>
            </div>
            <Problem error={add.error} />
          </form>
        </section>
      ) : null}
    </Page>
  );
}

function ExampleTable({ automation, rows }: { automation: string; rows: Example[] | undefined }) {
  return (
    <DataTable
      rows={rows}
      skeleton={6}
      empty="This automation has no examples yet."
      head={["Example", "Input", "Expected", "Annotation", "Latest run"]}
      row={(e) => (
        <tr key={e.id}>
          <td>
            <a href={href(["automations", automation, "dataset", e.id])}>{e.name}</a>
          </td>
          <td class="mono">{JSON.stringify(e.input ?? null).slice(0, 120)}</td>
          <td class="mono">{JSON.stringify(e.expected ?? null).slice(0, 120)}</td>
          <td>{e.annotation ?? ""}</td>
          <td>{e.latestRunId ? <a href={href(["runs", e.latestRunId])}>{e.latestRunId}</a> : "—"}</td>
        </tr>
      )}
    />
  );
}

export function ExampleEdit({ automation, example }: { automation: string; example: string }) {
  const { client, can } = useSession();
  const loaded = useLoad(() => client.examples.get(automation, example), [automation, example]);
  const [form, setForm] = useState({ name: "", input: "", expected: "", annotation: "", metadata: "" });
  const save = useAction();
  useEffect(() => {
    const e = loaded.data;
    if (!e) return;
    setForm({
      name: e.name,
      input: JSON.stringify(e.input ?? {}, null, 2),
      expected: e.expected === undefined || e.expected === null ? "" : JSON.stringify(e.expected, null, 2),
      annotation: e.annotation ?? "",
      metadata: e.metadata ? JSON.stringify(e.metadata, null, 2) : "",
    });
  }, [loaded.data]);
  const canWrite = can("automations:write");
  const field = (k: keyof typeof form) => (e: Event) => setForm({ ...form, [k]: (e.currentTarget as HTMLInputElement).value });
  return (
    <Page title={`Example ${loaded.data?.name ?? example}`}>
      <SubNav automation={automation} />
      <Problem error={loaded.error} />
      {!loaded.data ? (
        <Skeleton rows={6} />
      ) : (
        <form
          class="stack"
          onSubmit={(e) => {
            e.preventDefault();
            void save.run(async () => {
              await client.examples.update(automation, example, {
                name: form.name,
                input: parseJson(form.input, "Input") as Record<string, unknown>,
                expected: parseJson(form.expected, "Expected output"),
                annotation: form.annotation || null,
                metadata: parseJson(form.metadata, "Metadata") as Record<string, unknown> | null,
              });
              loaded.reload();
              return "Example saved.";
            });
          }}
        >
          <fieldset disabled={!canWrite} class="stack">
            <label>
              Name
              <input value={form.name} onInput={field("name")} pattern="[a-z0-9][a-z0-9_\-]*" required />
            </label>
            <label>
              Input (JSON)
              <textarea class="code" rows={8} spellcheck={false} value={form.input} onInput={field("input")} />
            </label>
            <label>
              Expected output (JSON)
              <textarea class="code" rows={6} spellcheck={false} value={form.expected} onInput={field("expected")} />
            </label>
            <label>
              Annotation
              <input value={form.annotation} onInput={field("annotation")} />
            </label>
            <label>
              Metadata (JSON)
              <textarea class="code" rows={3} spellcheck={false} value={form.metadata} onInput={field("metadata")} />
            </label>
          </fieldset>
          <p class="muted">
            Expected files: {loaded.data.expectedFiles.map((f) => f.name).join(", ") || "none"} · updated <Time iso={loaded.data.updatedAt ?? null} />
          </p>
          {canWrite ? (
            <div class="row">
              <button type="submit" disabled={save.busy}>
                Save example
              </button>
              <button
                type="button"
                class="secondary"
                disabled={save.busy || !can("runs:write")}
                onClick={() => save.run(async () => void go(href(["runs", (await client.examples.run(automation, example)).id])))}
              >
                Run this example
              </button>
              <button
                type="button"
                class="danger"
                disabled={save.busy}
                onClick={() =>
                  save.run(async () => {
                    if (!confirm(`Delete example ${form.name}?`)) return;
                    await client.examples.delete(automation, example);
                    go(href(["automations", automation, "dataset"]));
                  })
                }
              >
                Delete
              </button>
            </div>
          ) : null}
          <Problem error={save.error} />
          {save.done ? <Notice>{save.done}</Notice> : null}
        </form>
      )}
    </Page>
  );
}

export function Evaluators({ automation }: { automation: string }) {
  const { client, can } = useSession();
  const loaded = useLoad(() => client.evaluators.get(automation), [automation]);
  const [yaml, setYaml] = useState("");
  const save = useAction();
  useEffect(() => {
    if (loaded.data) setYaml(loaded.data.yaml);
  }, [loaded.data]);
  return (
    <Page title="Evaluators">
      <SubNav automation={automation} />
      <Problem error={loaded.error} />
      {!loaded.data && loaded.loading ? (
        <Skeleton rows={8} />
      ) : (
        <form
          class="stack"
          onSubmit={(e) => {
            e.preventDefault();
            void save.run(async () => {
              await client.evaluators.update(automation, yaml);
              loaded.reload();
              return "Evaluators saved.";
            });
          }}
        >
          <label>
            Evaluators (YAML)
            <textarea class="code" rows={18} spellcheck={false} value={yaml} readOnly={!can("automations:write")} onInput={(e) => setYaml(e.currentTarget.value)} />
          </label>
          {loaded.data ? (
            <p class="muted">
              {loaded.data.config.evaluators.length} evaluator(s), pass threshold {loaded.data.config.passThreshold}
            </p>
          ) : null}
          {can("automations:write") ? (
            <div class="row">
              <button type="submit" disabled={save.busy}>
                Validate and save
              </button>
            </div>
          ) : null}
          <Problem error={save.error} />
          {save.done ? <Notice>{save.done}</Notice> : null}
        </form>
      )}
    </Page>
  );
}

export function Experiments({ automation }: { automation: string }) {
  const { client, can } = useSession();
  const list = useLoad(() => client.experiments.list(automation, { limit: 100 }), [automation]);
  const [picked, setPicked] = useState<string[]>([]);
  const start = useAction();
  const running = (list.data?.data ?? []).some((e) => e.status !== "completed");
  useInterval(list.reload, 1500, running);
  const toggle = (id: string) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p.slice(-1), id]));
  return (
    <Page
      title="Experiments"
      actions={
        <>
          {picked.length === 2 ? (
            <a class="button" href={href(["automations", automation, "compare"], { a: picked[0], b: picked[1] })}>
              Compare the two selected
            </a>
          ) : (
            <span class="muted">Select two to compare</span>
          )}
          {can("runs:write") ? (
            <button type="button" class="secondary" disabled={start.busy} onClick={() => start.run(async () => void go(href(["automations", automation, "experiments", (await client.experiments.create(automation, {})).id])))}>
              Run the whole dataset
            </button>
          ) : null}
        </>
      }
    >
      <SubNav automation={automation} />
      <Problem error={list.error} />
      <Problem error={start.error} />
      <DataTable
        rows={list.data?.data}
        skeleton={6}
        empty="No experiments yet."
        head={[<span class="sr-only">Select</span>, "Experiment", "Status", "Progress", "Passed", "Failed", "Average score", "Version", "Created"]}
        row={(e) => (
          <tr key={e.id}>
            <td>
              <input type="checkbox" aria-label={`Select ${e.id} for comparison`} checked={picked.includes(e.id)} onChange={() => toggle(e.id)} />
            </td>
            <td>
              <a href={href(["automations", automation, "experiments", e.id])}>{e.id}</a>
            </td>
            <td>
              <Badge value={e.status} />
            </td>
            <td>
              <progress class="progress" max={e.runCount || 1} value={e.completedCount} aria-label={`${e.completedCount} of ${e.runCount} runs finished`} /> {e.completedCount}/{e.runCount}
            </td>
            <td>{e.passedCount}</td>
            <td>{e.failedCount}</td>
            <td>{score(e.avgScore)}</td>
            <td>{e.version ?? "—"}</td>
            <td>
              <Time iso={e.createdAt} />
            </td>
          </tr>
        )}
      />
    </Page>
  );
}

export function ExperimentDetail({ automation, experiment }: { automation: string; experiment: string }) {
  const { client, can } = useSession();
  const loaded = useLoad(() => client.experiments.get(automation, experiment), [automation, experiment]);
  const cancel = useAction();
  const e = loaded.data;
  useInterval(loaded.reload, 1000, !!e && e.status !== "completed");
  return (
    <Page
      title={`Experiment ${experiment}`}
      actions={
        e && e.status !== "completed" && can("runs:write") ? (
          <button type="button" class="danger" disabled={cancel.busy} onClick={() => cancel.run(async () => void (await client.experiments.cancel(automation, experiment), loaded.reload()))}>
            Cancel experiment
          </button>
        ) : null
      }
    >
      <SubNav automation={automation} />
      <Problem error={loaded.error} />
      <Problem error={cancel.error} />
      {!e ? (
        <Skeleton rows={6} />
      ) : (
        <>
          <Facts
            rows={[
              ["Status", <Badge value={e.status} />],
              ["Progress", <span><progress class="progress" max={e.runCount || 1} value={e.completedCount} aria-label="runs finished" /> {e.completedCount}/{e.runCount}</span>],
              ["Passed", String(e.passedCount)],
              ["Failed", String(e.failedCount)],
              ["Average score", score(e.avgScore)],
              ["Version", e.version ?? "—"],
              ["Created", <Time iso={e.createdAt} />],
              ["Completed", <Time iso={e.completedAt} />],
            ]}
          />
          <ExperimentRuns detail={e} />
        </>
      )}
    </Page>
  );
}

function ExperimentRuns({ detail }: { detail: Detail }) {
  return (
    <Table
      rows={detail.runs}
      head={["Example", "Run", "Status", "Score", "Evaluators"]}
      row={(r) => {
        const results = detail.resultsByRun[r.id] ?? [];
        return (
          <tr key={r.id}>
            <td>{r.exampleName ?? r.exampleId ?? "—"}</td>
            <td>
              <a href={href(["runs", r.id])}>{r.id}</a>
            </td>
            <td>
              <Badge value={r.status} />
            </td>
            <td>{score(overall(results))}</td>
            <td>
              {results.map((x) => (
                <div key={x.id}>
                  {x.evaluatorName}: {score(x.score)} {x.passed === null ? "" : <Badge value={x.passed ? "passed" : "failed"} />}
                  {x.error ? <span class="problem">{x.error}</span> : null}
                </div>
              ))}
            </td>
          </tr>
        );
      }}
    />
  );
}

export function Compare({ automation, left, right }: { automation: string; left: string | null; right: string | null }) {
  const { client } = useSession();
  const both = useLoad(
    () => (left && right ? Promise.all([client.experiments.get(automation, left), client.experiments.get(automation, right)]) : Promise.resolve(undefined)),
    [automation, left, right],
  );
  const rows = both.data ? compareRows(both.data[0], both.data[1]) : [];
  return (
    <Page title="Compare experiments">
      <SubNav automation={automation} />
      {!left || !right ? <Notice>Pick two experiments on the experiments page.</Notice> : null}
      <Problem error={both.error} />
      {left && right && !both.data ? <Skeleton rows={6} /> : null}
      {both.data ? (
        <>
          <div class="two">
            {both.data.map((e, i) => (
              <Facts
                key={e.id}
                rows={[
                  [i === 0 ? "A" : "B", <a href={href(["automations", automation, "experiments", e.id])}>{e.id}</a>],
                  ["Average score", score(e.avgScore)],
                  ["Passed / failed", `${e.passedCount} / ${e.failedCount}`],
                  ["Version", e.version ?? "—"],
                ]}
              />
            ))}
          </div>
          <p class="muted">{rows.filter((r) => r.changed).length} example(s) changed; they come first.</p>
          <Table
            class="compare"
            rows={rows}
            head={["Example", "Score A", "Score B", "Change", "Runs"]}
            row={(r) => (
              <tr key={r.key} class={r.changed ? "changed" : ""}>
                <td>
                  {r.name} {r.changed ? <span class="sr-only">(changed)</span> : null}
                </td>
                <td>
                  {score(r.left?.score)} {r.left?.passed === false ? <Badge value="failed" /> : null}
                </td>
                <td>
                  {score(r.right?.score)} {r.right?.passed === false ? <Badge value="failed" /> : null}
                </td>
                <td class={r.delta === null ? "" : r.delta > 0 ? "score-up" : r.delta < 0 ? "score-down" : ""}>{r.delta === null ? (r.changed ? "only in one" : "—") : `${r.delta > 0 ? "+" : ""}${r.delta.toFixed(3)}`}</td>
                <td>
                  {r.left ? <a href={href(["runs", r.left.run])}>A</a> : null} {r.right ? <a href={href(["runs", r.right.run])}>B</a> : null}
                </td>
              </tr>
            )}
          />
        </>
      ) : null}
    </Page>
  );
}

export function Health({ automation, query }: { automation: string; query: URLSearchParams }) {
  const { client } = useSession();
  const bucket = query.get("bucket") ?? "day";
  const health = useLoad(() => client.reviews.health(automation, { bucket }), [automation, bucket]);
  const h = health.data;
  return (
    <Page title="Review health">
      <SubNav automation={automation} />
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Bucket
          <select value={bucket} onChange={(e) => go(href(["automations", automation, "health"], { bucket: e.currentTarget.value }))}>
            <option value="day">day</option>
            <option value="week">week</option>
            <option value="month">month</option>
          </select>
        </label>
      </form>
      <Problem error={health.error} />
      {!h ? (
        <Skeleton rows={8} />
      ) : (
        <>
          <Facts
            rows={[
              ["Runs", String(h.summary.totalRuns)],
              ["Reviewed", String(h.summary.reviewedRuns)],
              ["Coverage", pct(h.summary.reviewCoverage)],
              ["Correct / incorrect", `${h.summary.correctReviews} / ${h.summary.incorrectReviews}`],
              ["Correctness", pct(h.summary.reviewedCorrectness)],
              ["95 % interval (Wilson)", `${pct(h.summary.confidence.lower)} – ${pct(h.summary.confidence.upper)}`],
              ["From", <Time iso={h.timeRange.from} />],
              ["To", <Time iso={h.timeRange.to} />],
            ]}
          />
          <HealthChart buckets={h.buckets} range={h.timeRange} />
          <details>
            <summary>Buckets (JSON)</summary>
            <Json value={h.buckets} label="Buckets" />
          </details>
        </>
      )}
    </Page>
  );
}

/** uPlot, loaded on this page only (a chunk of its own). */
function HealthChart({ buckets, range }: { buckets: { start: string; reviewCoverage: number | null; reviewedCorrectness: number | null; totalRuns: number }[]; range: { from: string; to: string } }) {
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let plot: { destroy(): void } | undefined;
    let live = true;
    import("./chart")
      .then(({ healthChart }) => {
        if (live && box.current) plot = healthChart(box.current, buckets, range);
      })
      .catch(setError);
    return () => {
      live = false;
      plot?.destroy();
    };
  }, [buckets]);
  return (
    <figure>
      <figcaption>Review coverage and correctness per bucket</figcaption>
      <Problem error={error} />
      <div class="chart" ref={box} role="img" aria-label={`Chart of ${buckets.length} buckets: review coverage and correctness`} />
    </figure>
  );
}
