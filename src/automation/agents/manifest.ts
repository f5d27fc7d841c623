// `agent.yaml`, the manifest a release tag carries: validated with issues naming the field and line,
// then turned into the workflow a run executes — one `agent.loop` step — so agent runs share the
// queue, journal, resume, cancel and events of workflow runs.
import * as v from "valibot";
import { stringify } from "yaml";
import { inputJsonSchema, parseWorkflow, type Workflow } from "../workflow/index";
import { typeError } from "../engine/workflow-input";
import { inputSchema } from "../workflow/schema";
import { readYaml } from "../workflow/source";
import type { WorkflowInput } from "../engine/workflow-types";
import type { Triggers } from "../automations/model";

export const MANIFEST_FILE = "agent.yaml";
export const MAX_MANIFEST_BYTES = 256 * 1024;
export const DEFAULT_MAX_STEPS = 10;
export const MAX_MAX_STEPS = 100;

const TRIGGERS = ["api", "manual", "email", "cron"] as const;
type Trigger = (typeof TRIGGERS)[number];
const trigger = v.picklist(TRIGGERS, "must be api, manual, email or cron");

export const TOOL = /^workflows\.[a-z0-9][a-z0-9_-]*$/;

const manifestSchema = v.strictObject({
  name: v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(100)),
  description: v.optional(v.pipe(v.string("must be a string"), v.maxLength(2000))),
  // Informational: the release tag is the version.
  version: v.optional(v.string("must be a string")),
  model: v.optional(v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(200))),
  instructions: v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(100_000)),
  inputs: v.optional(v.pipe(v.array(v.unknown(), "must be a list of inputs"), v.maxLength(200)), []),
  tools: v.optional(
    v.pipe(
      v.array(v.pipe(v.string("must be a string"), v.regex(TOOL, "must name a workflow: workflows.<slug>")), "must be a list such as [workflows.<slug>]"),
      v.maxLength(64),
    ),
    [],
  ),
  maxSteps: v.optional(
    v.pipe(v.number("must be a number"), v.integer("must be an integer"), v.minValue(1), v.maxValue(MAX_MAX_STEPS)),
    DEFAULT_MAX_STEPS,
  ),
  triggers: v.optional(v.array(v.union([trigger, v.looseObject({ type: trigger })], "must be api, manual, email or cron"), "must be a list such as [api, manual]"), ["api"]),
});

export interface Manifest {
  name: string;
  description: string | null;
  model?: string;
  instructions: string;
  inputs: WorkflowInput[];
  tools: string[];
  maxSteps: number;
  triggers: Triggers;
}

export interface ManifestIssue {
  field: string;
  message: string;
  code: string;
}

export type ManifestResult = { ok: true; manifest: Manifest } | { ok: false; issues: ManifestIssue[] };

/** Validates agent.yaml text; every issue names its field (`manifest.tools.1`) and line. */
export function parseManifest(text: string): ManifestResult {
  if (Buffer.byteLength(text, "utf8") > MAX_MANIFEST_BYTES) {
    return { ok: false, issues: [{ field: "manifest", message: `${MANIFEST_FILE} is larger than ${MAX_MANIFEST_BYTES} bytes`, code: "too_large" }] };
  }
  const read = readYaml(text);
  if (!read.ok) return { ok: false, issues: read.issues.map((i) => ({ field: "manifest", message: i.message, code: i.code })) };
  const { value, lineOf } = read.source;
  const issues: ManifestIssue[] = [];
  const add = (path: string, message: string, code: string) => {
    const line = lineOf(path);
    issues.push({ field: path ? `manifest.${path}` : "manifest", message: line ? `line ${line}: ${message}` : message, code });
  };
  const addValibot = (prefix: string, list: v.BaseIssue<unknown>[]) => {
    for (const i of list) {
      const rel = [prefix, v.getDotPath(i) ?? ""].filter(Boolean).join(".");
      const missing = i.received === "undefined";
      const unknown = i.kind === "schema" && i.type === "strict_object" && !missing;
      add(rel, unknown ? `unknown field ${JSON.stringify(rel.split(".").pop())}` : missing ? "is required" : i.message, unknown ? "unknown_field" : missing ? "required" : "invalid_value");
    }
  };
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    add("", `${MANIFEST_FILE} must be a mapping with name and instructions`, "invalid_value");
    return { ok: false, issues };
  }
  const top = v.safeParse(manifestSchema, value);
  if (!top.success) addValibot("", top.issues);
  const inputs: WorkflowInput[] = [];
  const raw = (value as { inputs?: unknown }).inputs;
  if (Array.isArray(raw)) {
    const seen = new Set<string>();
    raw.forEach((item, i) => {
      const r = v.safeParse(inputSchema, item);
      if (!r.success) return addValibot(`inputs.${i}`, r.issues);
      if (seen.has(r.output.name)) return add(`inputs.${i}.name`, `duplicate input name "${r.output.name}"`, "duplicate_name");
      const bad = r.output.default === undefined ? undefined : typeError(r.output, r.output.default);
      if (bad) return add(`inputs.${i}.default`, `default ${bad}`, "invalid_value");
      seen.add(r.output.name);
      inputs.push(r.output);
    });
  }
  if (!top.success || issues.length) return { ok: false, issues };
  const m = top.output;
  const types = new Set<Trigger>(m.triggers.map((t) => (typeof t === "string" ? t : t.type)));
  return {
    ok: true,
    manifest: {
      name: m.name,
      description: m.description ?? null,
      ...(m.model !== undefined ? { model: m.model } : {}),
      instructions: m.instructions,
      inputs,
      tools: [...new Set(m.tools)],
      maxSteps: m.maxSteps,
      triggers: { api: types.has("api"), email: types.has("email"), manual: types.has("manual"), cron: types.has("cron") },
    },
  };
}

/**
 * The workflow a run of this release executes: the agent's inputs, and one `agent.loop` step given
 * the whole input. Stored as the version's YAML, so a run snapshots it like any workflow definition.
 */
export function agentWorkflowYaml(slug: string, m: Manifest): string {
  const triggerMethods = TRIGGERS.filter((t) => m.triggers[t]).map((type) => ({ type }));
  return stringify({
    name: slug,
    ...(m.description ? { description: m.description } : {}),
    triggerMethods,
    inputs: m.inputs,
    steps: [
      {
        name: "agent",
        type: "agent.loop",
        with: {
          ...(m.model ? { model: m.model } : {}),
          instructions: m.instructions,
          tools: m.tools,
          maxSteps: m.maxSteps,
          input: "{{ input }}",
        },
      },
    ],
    output: "{{ steps.agent.output }}",
  });
}

/**
 * Parses the generated workflow (it must parse: a release that would not run is refused at sync).
 * The one producer allowed the internal `agent.*` kinds that hand-written YAML is refused.
 */
export function agentWorkflow(slug: string, m: Manifest): { yaml: string; workflow: Workflow; inputSchema: Record<string, unknown> } {
  const yaml = agentWorkflowYaml(slug, m);
  const r = parseWorkflow(yaml, { internal: true });
  if (!r.ok) throw new Error(`generated agent workflow does not parse: ${r.issues.map((i) => `${i.field}: ${i.message}`).join("; ")}`);
  return { yaml, workflow: r.workflow, inputSchema: inputJsonSchema(r.workflow) };
}
