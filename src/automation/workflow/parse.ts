// parseWorkflow: YAML text → a validated, typed Workflow, or every issue found, each naming the
// field (`steps.2.with.url`) and the line it sits on.
import * as v from "valibot";
import { findPaths, pathMatches, type AnyStepKind } from "../engine/kind";
import { stepKind, stepKinds } from "../engine/registry";
import { isTemplate, templateError } from "../engine/template";
import { cronTriggerSchema, expressionError, timeZoneError } from "./cron";
import { typeError } from "../engine/workflow-input";
import { readYaml, type Source } from "./source";
import { COMMON_STEP_FIELDS, commonStepSchema, inputSchema, workflowSchema } from "./schema";
import { checkEmailTriggers } from "./email-trigger";
import type { ParseResult, Step, Workflow, WorkflowInput, WorkflowIssue } from "../engine/workflow-types";

const MAX_YAML = 1024 * 1024;
const MAX_DEPTH = 20;
/** Kinds of the spec that later work adds; named so the error says "not available yet" rather than "unknown". */
const PLANNED: string[] = [];

export interface ParseOptions {
  /** Accept internal step kinds: only for YAML the server generated (agent releases, stored versions). */
  internal?: boolean;
}

class Collector {
  readonly issues: WorkflowIssue[] = [];
  constructor(
    readonly source: Source,
    readonly internal: boolean,
  ) {}
  add(field: string, message: string, code: string): void {
    const line = this.source.lineOf(field);
    this.issues.push({ field: field || "<root>", message: line ? `${message} (line ${line})` : message, code, ...(line ? { line } : {}) });
  }
  valibot(prefix: string, issues: v.BaseIssue<unknown>[], tolerate?: (path: string) => boolean): void {
    for (const issue of issues) {
      const rel = v.getDotPath(issue) ?? "";
      if (tolerate?.(rel)) continue;
      const field = [prefix, rel].filter((s) => s !== "").join(".");
      const missing = issue.received === "undefined";
      const code = issue.kind === "schema" && issue.type === "strict_object" && !missing ? "unknown_field" : missing ? "required" : "invalid_value";
      const message = code === "unknown_field" ? `unknown field ${JSON.stringify(rel.split(".").pop())}` : missing ? "is required" : issue.message;
      this.add(field, message, code);
    }
  }
}

function at(value: unknown, path: string): unknown {
  let cur = value;
  for (const seg of path === "" ? [] : path.split(".")) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

/** Schema issues on values that are templates (or inside one) are left for run time, when they are rendered. */
function templatedAt(raw: unknown, path: string): boolean {
  const segs = path === "" ? [] : path.split(".");
  for (let i = 0; i <= segs.length; i++) {
    const val = at(raw, segs.slice(0, i).join("."));
    if (typeof val === "string" && isTemplate(val)) return true;
  }
  return false;
}

/** Reports malformed Liquid in every string of `value`, except under paths `skip` says are not templates. */
function checkTemplates(value: unknown, field: string, out: Collector, skip: (rel: string) => boolean = () => false, rel = ""): void {
  if (rel !== "" && skip(rel)) return;
  const join = (k: string | number) => (rel === "" ? String(k) : `${rel}.${k}`);
  if (typeof value === "string") {
    const err = templateError(value);
    if (err) out.add([field, rel].filter((s) => s !== "").join("."), `invalid template: ${err}`, "invalid_template");
  } else if (Array.isArray(value)) value.forEach((x, i) => checkTemplates(x, field, out, skip, join(i)));
  else if (value !== null && typeof value === "object") for (const [k, x] of Object.entries(value)) checkTemplates(x, field, out, skip, join(k));
}

function parseSteps(raw: unknown[], field: string, out: Collector, names: Map<string, string>, depth: number): Step[] {
  if (depth > MAX_DEPTH) {
    out.add(field, `steps are nested more than ${MAX_DEPTH} levels deep`, "invalid_value");
    return [];
  }
  const steps: Step[] = [];
  raw.forEach((item, i) => {
    const step = parseStep(item, `${field}.${i}`, out, names, depth);
    if (step) steps.push(step);
  });
  return steps;
}

function parseStep(raw: unknown, field: string, out: Collector, names: Map<string, string>, depth: number): Step | undefined {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    out.add(field, "a step must be a mapping with name and type", "invalid_value");
    return undefined;
  }
  const obj = raw as Record<string, unknown>;
  const common = v.safeParse(commonStepSchema, obj);
  if (!common.success) out.valibot(field, common.issues);
  const name = typeof obj.name === "string" ? obj.name : undefined;
  if (name !== undefined) {
    const first = names.get(name);
    if (first) out.add(`${field}.name`, `duplicate step name "${name}" (first used at ${first}, line ${out.source.lineOf(first)}); step names are unique in the whole workflow`, "duplicate_name");
    else names.set(name, field);
  }
  if (typeof obj.if === "string") checkTemplates(obj.if, `${field}.if`, out);
  if (typeof obj.type !== "string") return undefined;
  const kind = stepKind(obj.type);
  if (kind?.internal && !out.internal) {
    out.add(`${field}.type`, `step type "${obj.type}" is internal to agents; use an agents.<slug> automation instead`, "internal_step_type");
    return undefined;
  }
  if (!kind) {
    const known = [...stepKinds.values()].filter((k) => !k.internal).map((k) => k.type).join(", ");
    const message = PLANNED.includes(obj.type)
      ? `step type "${obj.type}" is not available on this server yet`
      : `unknown step type "${obj.type}"; known types: ${known}`;
    out.add(`${field}.type`, message, "unknown_step_type");
    return undefined;
  }
  const { config, configField } = splitConfig(obj, kind, field, out);
  const children = parseChildren(kind, config, configField, out, names, depth);
  const literal = (rel: string) => [...(kind.literal ?? []), ...(kind.children ?? [])].some((p) => pathMatches(p, rel));
  const result = v.safeParse(kind.schema, config);
  if (!result.success) out.valibot(configField, result.issues, (rel) => templatedAt(config, rel) && !literal(rel));
  checkTemplates(config, configField, out, literal);
  if (!common.success) return undefined;
  const c = common.output;
  return {
    name: c.name,
    type: c.type,
    ...(c.description !== undefined ? { description: c.description } : {}),
    ...(c.if !== undefined ? { if: c.if } : {}),
    ...(c.timeout !== undefined ? { timeout: c.timeout } : {}),
    ...(c.retry !== undefined ? { retry: c.retry } : {}),
    config,
    children,
    line: out.source.lineOf(field),
  };
}

/** A kind's config: `with` for most kinds; for control kinds, the step's own fields minus the common ones. */
function splitConfig(obj: Record<string, unknown>, kind: AnyStepKind, field: string, out: Collector) {
  if (kind.configAt === "with") {
    for (const key of Object.keys(obj)) {
      if (!COMMON_STEP_FIELDS.includes(key) && key !== "with") out.add(`${field}.${key}`, `unknown field "${key}"; ${kind.type} takes its settings under with`, "unknown_field");
    }
    const w = obj.with ?? {};
    if (typeof w === "object" && w !== null && !Array.isArray(w)) return { config: w as Record<string, unknown>, configField: `${field}.with` };
    out.add(`${field}.with`, "with must be a mapping", "invalid_value");
    return { config: {}, configField: `${field}.with` };
  }
  const config: Record<string, unknown> = {};
  for (const [key, val] of Object.entries(obj)) if (!COMMON_STEP_FIELDS.includes(key)) config[key] = val;
  return { config, configField: field };
}

function parseChildren(kind: AnyStepKind, config: Record<string, unknown>, configField: string, out: Collector, names: Map<string, string>, depth: number) {
  const children: Record<string, Step[]> = {};
  for (const pattern of kind.children ?? []) {
    for (const [rel, list] of findPaths(config, pattern)) {
      if (Array.isArray(list)) children[rel] = parseSteps(list, `${configField}.${rel}`, out, names, depth + 1);
    }
  }
  return children;
}

function parseInputs(raw: unknown[], out: Collector): WorkflowInput[] {
  const inputs: WorkflowInput[] = [];
  const seen = new Set<string>();
  raw.forEach((item, i) => {
    const r = v.safeParse(inputSchema, item);
    if (!r.success) return out.valibot(`inputs.${i}`, r.issues);
    if (seen.has(r.output.name)) return out.add(`inputs.${i}.name`, `duplicate input name "${r.output.name}"`, "duplicate_name");
    const bad = r.output.default === undefined ? undefined : typeError(r.output, r.output.default);
    if (bad) return out.add(`inputs.${i}.default`, `default ${bad}`, "invalid_value");
    if (r.output.items && r.output.type !== "array") return out.add(`inputs.${i}.items`, "items applies to array inputs", "invalid_value");
    const allowed = r.output.enum;
    if (allowed) {
      if (!["string", "number", "integer"].includes(r.output.type)) return out.add(`inputs.${i}.enum`, "enum applies to string, number and integer inputs", "invalid_value");
      const wrong = allowed.findIndex((x) => typeError(r.output, x));
      if (wrong !== -1) return out.add(`inputs.${i}.enum.${wrong}`, `enum value ${JSON.stringify(allowed[wrong])} ${typeError(r.output, allowed[wrong])}`, "invalid_value");
      if (r.output.default !== undefined && !allowed.includes(r.output.default as string | number)) {
        return out.add(`inputs.${i}.default`, `default must be one of the enum's values (${allowed.map((x) => JSON.stringify(x)).join(", ")})`, "invalid_value");
      }
    }
    seen.add(r.output.name);
    inputs.push(r.output);
  });
  return inputs;
}

/**
 * Checks each `{type: cron}` entry (shape, expression, time zone, input against the declared inputs)
 * and returns the list with the cron entries normalised. Server-generated YAML (`internal`) is not
 * refused for a bad schedule: such an entry simply never fires.
 */
function parseTriggers(raw: unknown[], inputs: WorkflowInput[], out: Collector): Workflow["triggerMethods"] {
  const seen = new Map<string, string>();
  return raw.map((item, i) => {
    const entry = item as Workflow["triggerMethods"][number];
    if (entry?.type !== "cron" || out.internal) return entry;
    const field = `triggerMethods.${i}`;
    const r = v.safeParse(cronTriggerSchema, item);
    if (!r.success) {
      out.valibot(field, r.issues);
      return entry;
    }
    const c = r.output;
    const zoneError = timeZoneError(c.timezone);
    if (zoneError) out.add(`${field}.timezone`, zoneError, "invalid_timezone");
    const exprError = expressionError(c.schedule, zoneError ? "UTC" : c.timezone);
    if (exprError) out.add(`${field}.schedule`, exprError, "invalid_cron");
    const key = JSON.stringify([c.schedule.trim(), c.timezone, c.input]);
    const first = seen.get(key);
    if (first) out.add(field, `the same schedule as ${first} (line ${out.source.lineOf(first)}); a tick would start both`, "duplicate_schedule");
    else seen.set(key, field);
    const declared = new Map(inputs.map((d) => [d.name, d]));
    for (const [name, value] of Object.entries(c.input)) {
      const def = declared.get(name);
      if (!def) out.add(`${field}.input.${name}`, `"${name}" is not an input of this workflow`, "unknown_input");
      else if (def.type === "file") out.add(`${field}.input.${name}`, `a schedule cannot pass file input "${name}"`, "invalid_value");
      else if (typeError(def, value)) out.add(`${field}.input.${name}`, `input ${name} ${typeError(def, value)}`, "invalid_value");
    }
    for (const def of inputs) {
      if (def.required && def.default === undefined && c.input[def.name] === undefined) {
        out.add(`${field}.input`, `required input "${def.name}" has no value in this schedule's input`, "required");
      }
    }
    return c;
  });
}

/** Workflows parsed on a worker thread ahead of the synchronous parse that needs them (prepareWorkflow in offthread.ts); a few at most, each used once. */
const prepared = new Map<string, ParseResult>();
const PREPARED_MAX = 8;
const preparedKey = (yamlText: string, opts: ParseOptions) => `${opts.internal === true ? "i" : "p"}${yamlText}`;

/** Keeps a parse done elsewhere (a worker thread) for the next `parseWorkflow` of the same text and options. */
export function rememberParse(yamlText: string, opts: ParseOptions, result: ParseResult): void {
  if (prepared.size >= PREPARED_MAX) prepared.delete(prepared.keys().next().value!);
  prepared.set(preparedKey(yamlText, opts), result);
}

/** Parses and fully validates workflow YAML. */
export function parseWorkflow(yamlText: string, opts: ParseOptions = {}): ParseResult {
  if (prepared.size > 0) {
    const key = preparedKey(yamlText, opts);
    const done = prepared.get(key);
    if (done) {
      prepared.delete(key);
      return done;
    }
  }
  return parseFully(yamlText, opts);
}

/** The parse itself (what a worker thread runs for large documents). */
export function parseFully(yamlText: string, opts: ParseOptions = {}): ParseResult {
  if (yamlText.length > MAX_YAML) return { ok: false, issues: [{ field: "<root>", message: `workflow YAML exceeds ${MAX_YAML} bytes`, code: "too_large" }] };
  const read = readYaml(yamlText);
  if (!read.ok) return read;
  const out = new Collector(read.source, opts.internal === true);
  const doc = read.source.value;
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    out.add("", "a workflow must be a YAML mapping with name and steps", "invalid_value");
    return { ok: false, issues: out.issues };
  }
  const top = v.safeParse(workflowSchema, doc);
  if (!top.success) out.valibot("", top.issues);
  const obj = doc as Record<string, unknown>;
  const inputs = Array.isArray(obj.inputs) ? parseInputs(obj.inputs, out) : [];
  const steps = Array.isArray(obj.steps) ? parseSteps(obj.steps, "steps", out, new Map(), 0) : [];
  checkEmailTriggers(obj.triggerMethods, inputs, out);
  if (obj.output !== undefined) checkTemplates(obj.output, "output", out);
  const triggerMethods = Array.isArray(obj.triggerMethods) && top.success ? parseTriggers(obj.triggerMethods, inputs, out) : [];
  if (!top.success || out.issues.length > 0) return { ok: false, issues: out.issues };
  const t = top.output;
  const workflow: Workflow = {
    name: t.name,
    ...(t.version !== undefined ? { version: t.version } : {}),
    ...(t.description !== undefined ? { description: t.description } : {}),
    ...(t.defaultModel !== undefined ? { defaultModel: t.defaultModel } : {}),
    triggerMethods: obj.triggerMethods === undefined ? (t.triggerMethods as Workflow["triggerMethods"]) : triggerMethods,
    inputs,
    steps,
    ...(t.output !== undefined ? { output: t.output } : {}),
    settings: t.settings,
  };
  return { ok: true, workflow };
}
