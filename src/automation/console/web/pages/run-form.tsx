// The run form of a workflow: one field per input, typed by the input's JSON Schema (files by upload or
// drop), that starts a manual run, or starts one and waits for its result.
import { useState } from "preact/hooks";
import type { Automation } from "../../../client/index";
import { newActionKey } from "../api";
import { FieldIssue, FileDrop, issuesAt, issuesElsewhere } from "../components/field";
import { go, href } from "../router";
import { Problem, useAction, useSession } from "../ui";

type Prop = { type?: string; format?: string; description?: string; default?: unknown; enum?: (string | number)[]; items?: { format?: string } };

/** An `array` input whose elements are files (`items: file`): a multiple file field. */
const fileList = (p: Prop) => p.type === "array" && p.items?.format === "file";

/** How long "Run and wait" holds the request for the result (the server's wait_for_completion). */
const WAIT_SECONDS = 60;

/** The run form: one field per workflow input, typed by the input's JSON Schema. */
export function RunForm({ automation }: { automation: Automation }) {
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
