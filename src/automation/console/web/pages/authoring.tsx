// Writing automations: a new workflow from YAML, and a new version of one (from its current YAML or
// any version's), in the YAML editor the server checks as the person types. Saving is the API's own
// create call, so what the server refuses is shown next to the field it concerns and nothing is stored.
import { useState } from "preact/hooks";
import type { ValidationResult } from "../../../client/index";
import { FieldIssue, issuesAt, issuesElsewhere, TextField } from "../components/field";
import { useLeaveGuard, YamlEditorField } from "../components/yaml-editor";
import { go, href } from "../router";
import { Notice, Page, Problem, Skeleton, useAction, useLoad, useSession } from "../ui";

const STARTER = `name: my-workflow
version: 1.0.0
description: What this workflow does
triggerMethods: [{type: api}, {type: manual}]
inputs:
  - {name: text, type: string, required: true, description: Text to work on}
steps:
  - name: upper
    type: transform.set
    with:
      fields:
        shout: "{{ input.text | upcase }}"
output:
  shout: "{{ steps.upper.output.shout }}"
`;

function NotAllowed({ what }: { what: string }) {
  return <Notice>Your role may not {what} (it needs automations:write).</Notice>;
}

function verdict(result: ValidationResult | null): string {
  if (!result) return "Checking the YAML…";
  return result.valid ? "" : "Fix the issues above to save.";
}

export function NewAutomation() {
  const session = useSession();
  const [yaml, setYaml] = useState(STARTER);
  const [result, setResult] = useState<ValidationResult | null>(null);
  const action = useAction();
  const [saved, setSaved] = useState(false);
  useLeaveGuard(yaml !== STARTER && !saved);
  if (!session.can("automations:write")) {
    return (
      <Page title="New automation">
        <NotAllowed what="create automations" />
      </Page>
    );
  }
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const a = await session.client.automations.create(yaml);
      setSaved(true);
      go(href(["automations", a.id]));
    });
  };
  return (
    <Page title="New automation">
      <p class="muted">
        A workflow is YAML: its <code>name</code> is the slug it is called by, its <code>version</code> the first tag. The server checks the text as you type; nothing is
        stored until you create it.
      </p>
      <form class="stack" onSubmit={submit}>
        <YamlEditorField initial={STARTER} label="Workflow YAML" onValue={setYaml} onResult={setResult} />
        <div class="row">
          <button type="submit" disabled={action.busy || !result?.valid}>
            {action.busy ? "Creating…" : "Create automation"}
          </button>
          <span class="muted">{verdict(result)}</span>
        </div>
        <Problem error={action.error} />
      </form>
    </Page>
  );
}

export function NewVersion({ automation, from }: { automation: string; from: string | null }) {
  const session = useSession();
  const { client } = session;
  const a = useLoad(() => client.automations.get(automation), [automation]);
  const source = useLoad(async () => {
    const id = from ?? (await client.automations.versions.list(automation, { limit: 100 })).data.find((v) => v.isCurrent)?.id;
    return id ? client.automations.versions.get(automation, id) : undefined;
  }, [automation, from]);
  const title = a.data ? `New version of ${a.data.slug}` : "New version";
  if (!session.can("automations:write")) {
    return (
      <Page title={title}>
        <NotAllowed what="add versions" />
      </Page>
    );
  }
  return (
    <Page title={title}>
      <p>
        <a href={href(["automations", automation, "versions"])}>Versions</a> · <a href={href(["automations", automation])}>Automation</a>
      </p>
      <Problem error={a.error ?? source.error} />
      {!a.data || source.loading ? (
        <Skeleton rows={8} />
      ) : (
        <VersionForm key={source.data?.id ?? "new"} automation={a.data.id} initial={source.data?.yaml ?? ""} basedOn={source.data ? source.data.version ?? source.data.id : null} />
      )}
    </Page>
  );
}

function VersionForm({ automation, initial, basedOn }: { automation: string; initial: string; basedOn: string | null }) {
  const { client } = useSession();
  const [yaml, setYaml] = useState(initial);
  const [result, setResult] = useState<ValidationResult | null>(null);
  const [tag, setTag] = useState("");
  const [message, setMessage] = useState("");
  const [activate, setActivate] = useState(true);
  const action = useAction();
  const [saved, setSaved] = useState(false);
  useLeaveGuard(yaml !== initial && !saved);
  const ownTag = result?.workflow?.version ?? null;
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await client.automations.versions.create(automation, { yaml, version: tag.trim() || undefined, activate, message: message.trim() || undefined });
      setSaved(true);
      go(href(["automations", automation, "versions"], { saved: tag.trim() || ownTag || "" }));
    });
  };
  const tagIssue = issuesAt(action.error, "version");
  const activateIssue = issuesAt(action.error, "activate");
  return (
    <form class="stack" onSubmit={submit}>
      {basedOn ? <p class="muted">Starting from version {basedOn}.</p> : null}
      <YamlEditorField initial={initial} label="Workflow YAML" automation={automation} onValue={setYaml} onResult={setResult} />
      <div class="two">
        <label>
          Version tag
          <input
            value={tag}
            placeholder={ownTag ? `${ownTag} (the YAML's own version:)` : "e.g. 1.1.0"}
            aria-invalid={tagIssue ? "true" : undefined}
            aria-describedby={tagIssue ? "tag-issue" : "tag-hint"}
            onInput={(e) => setTag(e.currentTarget.value)}
          />
          <span id="tag-hint" class="hint">
            A bare semver tag; empty takes the YAML's own <code>version:</code>.
          </span>
          <FieldIssue id="tag-issue" text={tagIssue} />
        </label>
        <TextField label="Message" value={message} maxLength={2000} placeholder="What changed and why" onValue={setMessage} />
      </div>
      <label class="inline">
        <input type="checkbox" checked={activate} aria-describedby={activateIssue ? "activate-issue" : undefined} onChange={(e) => setActivate(e.currentTarget.checked)} /> Make it the
        current version (runs use it at once)
        <FieldIssue id="activate-issue" text={activateIssue} />
      </label>
      <div class="row">
        <button type="submit" disabled={action.busy || !result?.valid}>
          {action.busy ? "Saving…" : "Save version"}
        </button>
        <span class="muted">{verdict(result)}</span>
      </div>
      <Problem error={issuesElsewhere(action.error, ["version", "activate"])} />
    </form>
  );
}
