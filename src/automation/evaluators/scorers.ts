// The three evaluator types. Each compares a run's actual output with the example's expected output
// and says {score, passed, label?, details, error?}. None invents a score: an evaluator that cannot
// judge records an error with score null.
import { runSandboxed } from "../engine/sandbox/isolate";
import type { ModelGateway } from "../models/contract";
import type { Evaluator, Score } from "./model";

type Json = unknown;
const isObj = (x: unknown): x is Record<string, unknown> => !!x && typeof x === "object" && !Array.isArray(x);
const MAX_MISMATCHES = 20;

interface Tally {
  compared: number;
  matched: number;
  mismatches: { path: string; expected: Json; actual: Json; reason?: string }[];
}

function miss(t: Tally, path: string, expected: Json, actual: Json) {
  t.compared++;
  if (t.mismatches.length < MAX_MISMATCHES) t.mismatches.push({ path: path || "<root>", expected, actual: actual === undefined ? null : actual });
}

/** Counts every leaf of `expected` (and, without allowExtraFields, of extra actual fields) as compared. */
function compare(expected: Json, actual: Json, path: string, o: { tol: number; extra: boolean }, t: Tally): void {
  if (isObj(expected)) {
    const act = isObj(actual) ? actual : undefined;
    const keys = Object.keys(expected);
    if (keys.length === 0 && !act) return miss(t, path, expected, actual);
    for (const k of keys) compare(expected[k], act?.[k], path ? `${path}.${k}` : k, o, t);
    if (!o.extra && act) for (const k of Object.keys(act)) if (!(k in expected)) extraLeaves(act[k], path ? `${path}.${k}` : k, t);
    return;
  }
  if (Array.isArray(expected)) {
    const act = Array.isArray(actual) ? actual : undefined;
    if (expected.length === 0 && !act) return miss(t, path, expected, actual);
    expected.forEach((e, i) => compare(e, act?.[i], `${path}[${i}]`, o, t));
    // Extra items are always a difference: a list's length is part of its value.
    if (act) for (let i = expected.length; i < act.length; i++) extraLeaves(act[i], `${path}[${i}]`, t);
    return;
  }
  if (typeof expected === "number" && typeof actual === "number" ? Math.abs(expected - actual) <= o.tol : expected === actual) {
    t.compared++;
    t.matched++;
    return;
  }
  miss(t, path, expected, actual);
}

function extraLeaves(actual: Json, path: string, t: Tally): void {
  if (isObj(actual) && Object.keys(actual).length) for (const [k, v] of Object.entries(actual)) extraLeaves(v, `${path}.${k}`, t);
  else if (Array.isArray(actual) && actual.length) actual.forEach((v, i) => extraLeaves(v, `${path}[${i}]`, t));
  else miss(t, path, undefined, actual);
}

/** Concrete paths (`lineItems[0].total`) and values a pattern (`lineItems[].total`) selects in `root`. */
function select(root: Json, pattern: string): { path: string; value: Json }[] {
  let cur: { path: string; value: Json }[] = [{ path: "", value: root }];
  for (const seg of pattern.split(".")) {
    const each = seg.endsWith("[]");
    const key = each ? seg.slice(0, -2) : seg;
    const next: { path: string; value: Json }[] = [];
    for (const c of cur) {
      const p = c.path ? `${c.path}.${key}` : key;
      const val = isObj(c.value) ? c.value[key] : undefined;
      if (each && Array.isArray(val)) val.forEach((item, i) => next.push({ path: `${p}[${i}]`, value: item }));
      else next.push({ path: p, value: val });
    }
    cur = next;
  }
  return cur;
}

function valueAt(root: Json, path: string): Json {
  let cur = root;
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    if (m[1] !== undefined) cur = isObj(cur) ? cur[m[1]] : undefined;
    else cur = Array.isArray(cur) ? cur[Number(m[2])] : undefined;
  }
  return cur;
}

/** A file by its path relative to the example's `expected/` folder or among the run's output files. */
export interface FileDigest {
  path: string;
  sha256: string;
  size: number;
}

/**
 * Each expected file is one compared leaf `files/<path>`: equal when the run wrote an output file at
 * the same relative path with the same bytes (blobs are content-addressed: same sha256 = same bytes).
 * Output files no expected file names are differences too (a set of files, like a list, has a size).
 */
function compareFiles(expected: FileDigest[], actual: FileDigest[], t: Tally): void {
  const out = new Map(actual.map((f) => [f.path, f]));
  for (const e of expected) {
    const a = out.get(e.path);
    out.delete(e.path);
    const path = `files/${e.path}`;
    if (a && a.sha256 === e.sha256) {
      t.compared++;
      t.matched++;
      continue;
    }
    const reason = a ? `the run's file ${e.path} differs from the expected one` : `the run wrote no file ${e.path}`;
    t.compared++;
    if (t.mismatches.length < MAX_MISMATCHES) t.mismatches.push({ path, expected: { sha256: e.sha256, size: e.size }, actual: a ? { sha256: a.sha256, size: a.size } : null, reason });
  }
  for (const a of out.values()) {
    t.compared++;
    if (t.mismatches.length < MAX_MISMATCHES) t.mismatches.push({ path: `files/${a.path}`, expected: null, actual: { sha256: a.sha256, size: a.size }, reason: `the run wrote ${a.path}, which is not an expected file` });
  }
}

/** `expected`/`actual` JSON (undefined expected = only files are compared); `files` when the example has expected files. */
export function exactDiff(
  config: Extract<Evaluator, { type: "exact-diff" }>["config"],
  expected: Json,
  actual: Json,
  files?: { expected: FileDigest[]; actual: FileDigest[] },
): Score {
  const o = { tol: config.numericTolerance, extra: config.allowExtraFields };
  const t: Tally = { compared: 0, matched: 0, mismatches: [] };
  if (expected === undefined) {
    // no expected JSON: the files alone decide
  } else if (config.paths) {
    for (const p of config.paths) for (const s of select(expected, p)) compare(s.value, valueAt(actual, s.path), s.path, o, t);
  } else {
    compare(expected, actual, "", o, t);
  }
  if (files) compareFiles(files.expected, files.actual, t);
  const score = t.compared === 0 ? 1 : t.matched / t.compared;
  return { score, passed: score >= config.passThreshold, details: { compared: t.compared, matched: t.matched, mismatches: t.mismatches } };
}

export async function customScript(config: Extract<Evaluator, { type: "custom-script" }>["config"], expected: Json, actual: Json): Promise<Score> {
  // The sandbox calls `script(...)`; the user's function keeps its documented name.
  const code = `${config.script}\nfunction script(expected, actual) { return scoreScript(expected, actual); }`;
  let out: unknown;
  try {
    out = await runSandboxed(code, [expected ?? null, actual ?? null], { timeoutMs: config.timeoutMs, memoryBytes: config.memoryLimitMb * 1024 * 1024 });
  } catch (err) {
    return { score: 0, passed: false, details: null, error: `scoreScript threw: ${(err as Error)?.message ?? String(err)}` };
  }
  if (typeof out !== "number" || !Number.isFinite(out) || out < 0 || out > 1) {
    return { score: 0, passed: false, details: { returned: out ?? null }, error: "scoreScript must return a number between 0 and 1" };
  }
  return { score: out, passed: out >= config.passThreshold, details: null };
}

type JudgeConfig = Extract<Evaluator, { type: "llm-judge" }>["config"];

function labelScores(config: JudgeConfig): { label: string; score: number }[] {
  const labels = config.labels ?? [];
  return labels.map((l, i) => (typeof l === "string" ? { label: l, score: labels.length > 1 ? 1 - i / (labels.length - 1) : 1 } : l));
}

export async function llmJudge(models: ModelGateway | undefined, config: JudgeConfig, expected: Json, actual: Json, signal?: AbortSignal): Promise<Score> {
  if (!models || !models.resolve(config.model, "text")) return { score: null, passed: false, details: null, error: "no model configured" };
  const discrete = config.mode === "discrete";
  const labels = labelScores(config);
  const schema = discrete
    ? { type: "object", properties: { label: { type: "string", enum: labels.map((l) => l.label) }, reason: { type: "string" } }, required: ["label", "reason"] }
    : { type: "object", properties: { score: { type: "number", minimum: 0, maximum: 1 }, reason: { type: "string" } }, required: ["score", "reason"] };
  const ask = discrete
    ? `Answer with JSON {"label": one of ${JSON.stringify(labels.map((l) => l.label))}, "reason": "..."}.`
    : `Answer with JSON {"score": a number from 0 (wrong) to 1 (fully correct), "reason": "..."}.`;
  try {
    const res = await models.complete({
      model: config.model,
      capability: "text",
      temperature: 0,
      system: "You grade the output of an automation against the expected output. Be strict and consistent.",
      messages: [
        {
          role: "user",
          content: `Expected output:\n${JSON.stringify(expected ?? null, null, 2)}\n\nActual output:\n${JSON.stringify(actual ?? null, null, 2)}\n\nCriteria:\n${config.promptExtension}\n\n${ask}`,
        },
      ],
      json: { name: "judgement", schema },
      signal,
    });
    const m = /\{[\s\S]*\}/.exec(res.text);
    const verdict = m ? (JSON.parse(m[0]) as { score?: unknown; label?: unknown; reason?: unknown }) : {};
    const details = { model: res.model, reason: typeof verdict.reason === "string" ? verdict.reason : null };
    if (discrete) {
      const hit = labels.find((l) => l.label === verdict.label);
      if (!hit) return { score: null, passed: false, details, error: `the judge answered no known label (${JSON.stringify(verdict.label ?? null)})` };
      return { score: hit.score, passed: hit.score >= config.passThreshold, label: hit.label, details };
    }
    const s = verdict.score;
    if (typeof s !== "number" || !Number.isFinite(s) || s < 0 || s > 1) return { score: null, passed: false, details, error: "the judge gave no score between 0 and 1" };
    return { score: s, passed: s >= config.passThreshold, details };
  } catch (err) {
    return { score: null, passed: false, details: null, error: (err as Error)?.message ?? String(err) };
  }
}

/** Σ wᵢsᵢ / Σ wᵢ over evaluators with weight > 0 that produced a score; null when none did. */
export function overall(scored: { weight: number; score: number | null }[]): number | null {
  let w = 0;
  let s = 0;
  for (const r of scored) {
    if (r.weight <= 0 || r.score === null) continue;
    w += r.weight;
    s += r.weight * r.score;
  }
  return w > 0 ? s / w : null;
}
