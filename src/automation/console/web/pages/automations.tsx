// Automations: the list (search, pages) and one automation: versions, triggers, its evaluation pages,
// and a run form generated from the workflow's inputs (file inputs by upload) that starts a manual run.
import { useState } from "preact/hooks";
import type { Automation, AutomationSummary } from "../../../client/index";
import { FieldIssue, FileDrop, issuesAt, issuesElsewhere, TextField } from "../components/field";
import { FilterForm } from "../components/filters";
import { Pager } from "../components/pager";
import { DataTable } from "../components/table";
import { go, href } from "../router";
import { Badge, Facts, Json, Page, Problem, Skeleton, Time, useAction, useLoad, useSession } from "../ui";
import { ReplayForm } from "./backtests";
import { newActionKey } from "./human-reviews";

const PAGE = 50;

export function AutomationsList({ query }: { query: URLSearchParams }) {
  const { client, can } = useSession();
  const search = query.get("search") ?? "";
  const offset = Number(query.get("offset") ?? 0) || 0;
  const list = useLoad(() => client.automations.list({ search: search || undefined, limit: PAGE, offset }), [search, offset]);
  const [draft, setDraft] = useState(search);
  return (
    <Page title="Automations" actions={can("automations:write") ? <a href={href(["automations", "new"])}>New automation</a> : undefined}>
      <FilterForm role="search" onApply={() => go(href(["automations"], { search: draft }))} buttons={<button type="submit">Search</button>}>
        <TextField label="Search" type="search" value={draft} placeholder="slug, name or description" onValue={setDraft} />
      </FilterForm>
      <Problem error={list.error} />
      <AutomationTable rows={list.data?.data} />
      {list.data ? (
        <Pager
          back={offset > 0 ? <a href={href(["automations"], { search, offset: Math.max(0, offset - PAGE) })}>Previous page</a> : null}
          at={
            <span class="muted">
              {list.data.total === 0 ? 0 : offset + 1}–{offset + list.data.data.length} of {list.data.total}
            </span>
          }
          on={offset + PAGE < list.data.total ? <a href={href(["automations"], { search, offset: offset + PAGE })}>Next page</a> : null}
        />
      ) : null}
    </Page>
  );
}

function AutomationTable({ rows }: { rows: AutomationSummary[] | undefined }) {
  return (
    <DataTable
      rows={rows}
      skeleton={8}
      empty="No automations."
      head={["Automation", "Type", "Version", "Description", "Updated"]}
      row={(a) => (
        <tr key={a.id}>
          <td>
            <a href={href(["automations", a.id])}>{a.slug}</a>
          </td>
          <td>{a.type}</td>
          <td>{a.version ?? "—"}</td>
          <td>{a.description ?? ""}</td>
          <td>
            <Time iso={a.updatedAt} />
          </td>
        </tr>
      )}
    />
  );
}

export function AutomationDetail({ id }: { id: string }) {
  const session = useSession();
  const { client } = session;
  const automation = useLoad(() => client.automations.get(id), [id]);
  const versions = useLoad(() => client.automations.versions.list(id, { limit: 100 }), [id]);
  const a = automation.data;
  return (
    <Page title={a ? `Automation ${a.slug}` : "Automation"}>
      <Problem error={automation.error} />
      {!a ? (
        <Skeleton rows={5} />
      ) : (
        <>
          <p>{a.description}</p>
          <Facts
            rows={[
              ["Id", <span class="mono">{a.id}</span>],
              ["Type", a.type],
              ["Status", <Badge value={a.status} />],
              ["Current version", a.version ?? "—"],
              ["Triggers", triggerText(a.triggers)],
              ["Updated", <Time iso={a.updatedAt} />],
            ]}
          />
          <nav class="subnav" aria-label="About this automation">
            <a href={href(["runs"], { source: a.id })}>Runs</a>
            {a.type === "workflow" ? <a href={href(["automations", a.id, "versions"])}>Versions and diff</a> : null}
            {a.type === "workflow" && session.can("automations:write") ? <a href={href(["automations", a.id, "edit"])}>New version</a> : null}
            <a href={href(["automations", a.id, "dataset"])}>Dataset</a>
            <a href={href(["automations", a.id, "evaluators"])}>Evaluators</a>
            <a href={href(["automations", a.id, "experiments"])}>Experiments</a>
            <a href={href(["automations", a.id, "health"])}>Review health</a>
          </nav>
          {session.can("runs:write") && a.type === "workflow" ? <RunForm automation={a} /> : null}
        </>
      )}
      <section aria-labelledby="versions-h">
        <h2 id="versions-h">Versions</h2>
        <Problem error={versions.error} />
        <DataTable
          rows={versions.data?.data}
          skeleton={2}
          head={["Version", "Id", "Source", "Current or backtest", "Created", "YAML"]}
          row={(v) => <VersionRow key={v.id} automation={id} version={v} />}
        />
      </section>
      {a ? (
        <section aria-labelledby="schema-h">
          <h2 id="schema-h">Input and output schema</h2>
          <div class="two">
            <Json value={a.inputSchema} label="Input schema" />
            <Json value={a.outputSchema} label="Output schema" />
          </div>
        </section>
      ) : null}
    </Page>
  );
}

function triggerText(t: Automation["triggers"]): string {
  const on: string[] = (["api", "manual", "email"] as const).filter((k) => t[k]);
  if (t.cron) on.push("cron");
  return on.join(", ") || "none";
}

function VersionRow({ automation, version }: { automation: string; version: { id: string; version: string | null; sourceRef: string | null; isCurrent: boolean; createdAt: string } }) {
  const { client, can } = useSession();
  const [open, setOpen] = useState(false);
  const yaml = useLoad(() => (open ? client.automations.versions.yaml(automation, version.id) : Promise.resolve(undefined)), [open]);
  return (
    <>
      <tr>
        <td>{version.version ?? <span class="muted">untagged</span>}</td>
        <td class="mono">{version.id}</td>
        <td>{version.sourceRef ?? "—"}</td>
        <td>{version.isCurrent ? "current" : can("runs:write") && version.version ? <ReplayForm automation={automation} version={version} /> : ""}</td>
        <td>
          <Time iso={version.createdAt} />
        </td>
        <td>
          <button type="button" class="secondary" aria-expanded={open} onClick={() => setOpen(!open)}>
            {open ? "Hide" : "Show"} <span class="sr-only">YAML of {version.version ?? version.id}</span>
          </button>
        </td>
      </tr>
      {open ? (
        <tr>
          <td colSpan={6}>
            <Problem error={yaml.error} />
            {yaml.data !== undefined ? (
              <pre class="json" tabIndex={0} aria-label={`YAML of ${version.id}`}>
                {yaml.data}
              </pre>
            ) : (
              <Skeleton rows={2} />
            )}
          </td>
        </tr>
      ) : null}
    </>
  );
}

type Prop = { type?: string; format?: string; description?: string; default?: unknown; enum?: (string | number)[]; items?: { format?: string } };

/** An `array` input whose elements are files (`items: file`): a multiple file field. */
const fileList = (p: Prop) => p.type === "array" && p.items?.format === "file";

/** How long "Run and wait" holds the request for the result (the server's wait_for_completion). */
const WAIT_SECONDS = 60;

/** The run form: one field per workflow input, typed by the input's JSON Schema. */
function RunForm({ automation }: { automation: Automation }) {
  const session = useSession();
  const schema = (automation.inputSchema ?? {}) as { properties?: Record<string, Prop>; required?: string[] };
  const props = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const [values, setValues] = useState<Record<string, string | boolean>>(() =>
    Object.fromEntries(
      props.map(([name, p]) => {
        if (p.type === "boolean") return [name, p.default === true];
        // A required choice without a default starts at its first value, as the select shows it.
        if (p.enum && p.default === undefined && required.has(name)) return [name, String(p.enum[0])];
        if (p.default === undefined || p.format === "file") return [name, ""];
        return [name, typeof p.default === "string" ? p.default : JSON.stringify(p.default, null, 2)];
      }),
    ),
  );
  const [files, setFiles] = useState<Record<string, File | undefined>>({});
  const [lists, setLists] = useState<Record<string, File[]>>({});
  const [wait, setWait] = useState(false);
  const action = useAction();

  const submit = (e: Event) => {
    e.preventDefault();
    // Which button sent the form: "Run and wait" holds the request until the run ends.
    const waitForIt = (e as SubmitEvent).submitter?.getAttribute("value") === "wait";
    setWait(waitForIt);
    void action.run(async () => {
      const input: Record<string, unknown> = {};
      for (const [name, p] of props) {
        const raw = values[name];
        if (p.format === "file") {
          if (files[name]) input[name] = files[name];
          continue;
        }
        if (fileList(p)) {
          // The client library sends single files as parts; a list is uploaded first, each as a run input.
          const chosen = lists[name] ?? [];
          if (chosen.length === 0) continue;
          const refs: { $fileId: string }[] = [];
          for (const f of chosen) refs.push({ $fileId: (await session.client.files.upload(f, { purpose: "run-input", idempotencyKey: newActionKey() })).id });
          input[name] = refs;
          continue;
        }
        if (p.type === "boolean") {
          input[name] = raw === true;
          continue;
        }
        if (typeof raw !== "string" || (raw === "" && !required.has(name))) continue;
        if (raw === "" && p.default !== undefined) continue; // the server fills the default
        if (p.type === "number" || p.type === "integer") input[name] = Number(raw);
        else if (p.type === "object" || p.type === "array") {
          try {
            input[name] = JSON.parse(raw);
          } catch {
            throw new Error(`${name}: not valid JSON`);
          }
        } else input[name] = raw;
      }
      const run = await session.manual.run(automation.id, input, waitForIt ? { waitForCompletion: WAIT_SECONDS } : {});
      go(href(["runs", run.id]));
    });
  };

  return (
    <section aria-labelledby="run-h">
      <h2 id="run-h">Start a run</h2>
      <form class="stack run-form" onSubmit={submit}>
        {props.length === 0 ? <p class="muted">This workflow takes no input.</p> : null}
        {props.map(([name, p]) => {
          const id = `input-${name}`;
          const label = (
            <span>
              {name}
              {required.has(name) ? <span aria-hidden="true"> *</span> : null} <span class="muted">({p.format === "file" ? "file" : fileList(p) ? "files" : p.type ?? "any"})</span>
            </span>
          );
          // A file input without a description of its own carries the wire format's: not for people.
          const description = p.format === "file" && p.description?.startsWith('A file: {"$fileId"') ? undefined : p.description;
          // The server's issue with this input (a 400 naming `input.<name>` or `files.<name>`) shows beside it.
          const issue = issuesAt(action.error, `input.${name}`) ?? issuesAt(action.error, `files.${name}`);
          const described = [description ? `${id}-d` : "", issue ? `${id}-issue` : ""].filter(Boolean).join(" ") || undefined;
          const hint = (
            <>
              {description ? (
                <span id={`${id}-d`} class="hint">
                  {description}
                </span>
              ) : null}
              <FieldIssue id={`${id}-issue`} text={issue} />
            </>
          );
          if (p.format === "file")
            return (
              <FileDrop key={name} id={id} name={name} label={label} required={required.has(name)} described={described} onFiles={(chosen) => setFiles({ ...files, [name]: chosen[0] })}>
                {hint}
              </FileDrop>
            );
          if (fileList(p))
            return (
              <FileDrop key={name} id={id} name={name} label={label} multiple required={required.has(name)} described={described} onFiles={(chosen) => setLists({ ...lists, [name]: chosen })}>
                {lists[name]?.length ? <span class="hint">{lists[name].map((f) => f.name).join(", ")}</span> : null}
                {hint}
              </FileDrop>
            );
          if (p.enum)
            return (
              <label key={name} for={id}>
                {label}
                <select id={id} name={name} required={required.has(name)} aria-describedby={described} value={values[name] as string} onChange={(e) => setValues({ ...values, [name]: e.currentTarget.value })}>
                  {required.has(name) && p.default === undefined ? null : <option value="">{p.default === undefined ? "(none)" : `(default: ${String(p.default)})`}</option>}
                  {p.enum.map((o) => (
                    <option key={String(o)} value={String(o)}>
                      {String(o)}
                    </option>
                  ))}
                </select>
                {hint}
              </label>
            );
          if (p.type === "boolean")
            return (
              <label key={name} for={id} class="inline">
                <input id={id} name={name} type="checkbox" checked={values[name] === true} onChange={(e) => setValues({ ...values, [name]: e.currentTarget.checked })} /> {label}
                {hint}
              </label>
            );
          if (p.type === "object" || p.type === "array" || (typeof values[name] === "string" && (values[name] as string).includes("\n")))
            return (
              <label key={name} for={id}>
                {label}
                <textarea id={id} name={name} class="code" rows={5} spellcheck={false} required={required.has(name)} aria-describedby={described} value={values[name] as string} onInput={(e) => setValues({ ...values, [name]: e.currentTarget.value })} />
                {hint}
              </label>
            );
          return (
            <label key={name} for={id}>
              {label}
              <input
                id={id}
                name={name}
                type={(p.type === "number" || p.type === "integer" ? "number" : "text") as "text"}
                step={p.type === "number" ? "any" : undefined}
                required={required.has(name)}
                aria-describedby={described}
                value={values[name] as string}
                onInput={(e) => setValues({ ...values, [name]: e.currentTarget.value })}
              />
              {hint}
            </label>
          );
        })}
        <div class="row">
          <button type="submit" value="start" disabled={action.busy}>
            {action.busy && !wait ? "Starting…" : "Start manual run"}
          </button>
          <button type="submit" value="wait" class="secondary" disabled={action.busy}>
            {action.busy && wait ? "Running…" : "Run and wait"}
          </button>
          {action.busy && wait ? <span class="muted" role="status">Waiting for the result (up to {WAIT_SECONDS} s)…</span> : null}
        </div>
        <Problem error={issuesElsewhere(action.error, props.flatMap(([name]) => [`input.${name}`, `files.${name}`]))} />
      </form>
    </section>
  );
}
