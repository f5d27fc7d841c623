// `automation-server experiments gate --base exp_… --candidate exp_…`: compares two experiments and
// exits 1 when the candidate significantly regressed (an evaluator, the overall score or the pass
// rate), for CI. Reads the database directly (--data-dir / --db, like the other admin commands) or
// asks a running server through the client (--url, --key). Prints a short table; `--format junit`
// writes a JUnit XML report (to stdout, or atomically to --output FILE).
// The gate is a client program of the experiments feature (it can ask a running server through the
// client, whose types come from the features), so it sits beside cli.ts above them, not in experiments/.
import { renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { helpText, parseFlags } from "../kernel/config";
import { FatalError, UsageError } from "../kernel/errors";
import { asCliError, openAdminStorage } from "./admin";
import { AutomationClient, AutomationError } from "./client/index";
import { storageFlags } from "./config";
import { MAX_RESAMPLES, MIN_RESAMPLES, type Stat } from "./experiments/compare";
import { compareExperiments, experimentPair, regressed } from "./experiments/comparison";
import type { Comparison } from "./experiments/model";

const flags = {
  base: { type: "string", value: "EXP", help: "the experiment compared against (e.g. the main branch's)" },
  candidate: { type: "string", value: "EXP", help: "the experiment under test (same automation)" },
  "fail-on": { type: "string", value: "WHEN", default: "regressed", help: "regressed: exit 1 on a significant regression; never: only report" },
  format: { type: "string", value: "FORMAT", default: "table", help: "table, junit (JUnit XML) or json (the compare answer)" },
  output: { type: "string", value: "FILE", help: "write the junit/json report to FILE (atomically) and the table to stdout" },
  seed: { type: "number", value: "N", help: "seed of the resampling (default: random; the report shows it)" },
  resamples: { type: "number", value: "N", help: `bootstrap resamples and random sign flips (${MIN_RESAMPLES}-${MAX_RESAMPLES}, default ${MIN_RESAMPLES})` },
  url: { type: "string", env: "AUTOMATION_BASE_URL", value: "URL", help: "ask a running server (http://host:port) instead of reading --data-dir/--db" },
  key: { type: "string", env: "AUTOMATION_API_KEY", value: "KEY", help: "API key (runs:read) for --url" },
  ...storageFlags,
  help: { type: "boolean", short: "h", help: "show this help" },
} as const;

const USAGE = `Usage: automation-server experiments gate --base EXP --candidate EXP [--fail-on regressed|never]
         [--format table|junit|json] [--output FILE] [--data-dir DIR | --db URL | --url URL --key KEY]

Compares two completed experiments of one automation over the examples both ran (paired bootstrap
CI, sign-flip permutation test, Holm across evaluators, McNemar on pass/fail; see
docs/automation/evaluation.md) and exits 1 when the candidate regressed significantly: an evaluator,
the overall score or the pass rate. Exit 0: no significant regression. Exit 1 also when the two
cannot be compared (the reason on stderr); exit 2: bad usage.`;

const GROUP_USAGE = `Usage: automation-server experiments gate --base EXP --candidate EXP [options]

Subcommands:
  gate    compare two experiments and fail (exit 1) on a significant regression (CI)

Run 'automation-server experiments gate --help' for its options.`;

export async function experimentsCommand(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === undefined) {
    process.stdout.write(`${GROUP_USAGE}\n`);
    if (sub === undefined) throw new UsageError("missing subcommand: experiments gate");
    return;
  }
  if (sub !== "gate") throw new UsageError(`unknown command "experiments ${sub}"`);
  return gateCommand(rest);
}

async function gateCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, flags);
  if (values.help) return void process.stdout.write(helpText(USAGE, flags));
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (!values.base || !values.candidate) throw new UsageError("--base and --candidate are required (experiment ids)");
  const failOn = values["fail-on"];
  if (failOn !== "regressed" && failOn !== "never") throw new UsageError(`--fail-on must be regressed or never (got "${failOn}")`);
  const format = values.format;
  if (format !== "table" && format !== "junit" && format !== "json") throw new UsageError(`--format must be table, junit or json (got "${format}")`);
  if (values.seed !== undefined && !(Number.isInteger(values.seed) && values.seed >= 0 && values.seed <= 0xffffffff)) throw new UsageError("--seed must be a whole number 0-4294967295");
  if (values.resamples !== undefined && !(Number.isInteger(values.resamples) && values.resamples >= MIN_RESAMPLES && values.resamples <= MAX_RESAMPLES)) {
    throw new UsageError(`--resamples must be a whole number ${MIN_RESAMPLES}-${MAX_RESAMPLES}`);
  }
  const opts = { seed: values.seed, resamples: values.resamples };
  const c = values.url ? await viaServer(values.url, values.key, values.base, values.candidate, opts) : await viaDatabase(values, values.base, values.candidate, opts);
  const failures = regressed(c);
  const table = tableOf(c, failures);
  if (format === "table") process.stdout.write(table);
  else {
    const report = format === "junit" ? junitOf(c) : `${JSON.stringify(c, null, 2)}\n`;
    if (values.output) {
      writeAtomically(values.output, report);
      process.stdout.write(table);
    } else {
      // stdout is the report (for a pipe); the table goes to stderr for whoever reads the log.
      process.stdout.write(report);
      process.stderr.write(table);
    }
  }
  if (failOn === "regressed" && failures.length) process.exitCode = 1;
}

async function viaDatabase(values: { "data-dir": string; db?: string }, base: string, candidate: string, opts: { seed?: number; resamples?: number }): Promise<Comparison> {
  const db = await openAdminStorage(values);
  try {
    const stores = { experiments: db.storage.experiments, evaluators: db.storage.evaluators };
    const [b, c] = await experimentPair(stores, {}, base, candidate);
    return await compareExperiments(stores, b, c, { ...opts, inline: true });
  } catch (err) {
    asCliError(err);
  } finally {
    await db.close();
  }
}

async function viaServer(url: string, key: string | undefined, base: string, candidate: string, opts: { seed?: number; resamples?: number }): Promise<Comparison> {
  if (!key) throw new UsageError("--url needs --key (or AUTOMATION_API_KEY): an API key with runs:read");
  try {
    const client = new AutomationClient({ baseUrl: url, apiKey: key, maxRetries: 1 });
    const { automationId } = await client.experiments.resolve(base);
    return await client.experiments.compare(automationId, { base, candidate, ...opts });
  } catch (err) {
    if (err instanceof AutomationError) {
      const detail = err.issues.length ? err.issues.map((i) => `${i.field}: ${i.message}`).join("; ") : err.message;
      throw new FatalError(err.status ? `${detail} (HTTP ${err.status})` : detail);
    }
    throw err;
  }
}

function writeAtomically(file: string, text: string): void {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, text);
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new FatalError(`cannot write ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

const num = (x: number | null, digits = 3) => (x === null ? "-" : x.toFixed(digits));
const pval = (p: number) => (p < 0.0001 ? "<0.0001" : p.toFixed(4));
const pct = (x: number | null) => (x === null ? "-" : `${(100 * x).toFixed(1)}%`);

function rows(c: Comparison): string[][] {
  const row = (name: string, s: Stat, holm: boolean) => [
    name,
    String(s.n),
    num(s.baseMean),
    num(s.candidateMean),
    num(s.delta),
    s.ci ? `[${num(s.ci[0])}, ${num(s.ci[1])}]` : "-",
    pval(s.pValue),
    holm ? pval(s.adjustedPValue) : "",
    num(s.mde),
    s.verdict,
  ];
  const p = c.passRate;
  return [
    ["measure", "n", "base", "candidate", "delta", "95% CI", "p", "p (Holm)", "mde", "verdict"],
    ...c.evaluators.map((e) => row(e.name, e, true)),
    row("overall score", c.overall, false),
    ["pass rate", String(p.n), pct(p.base), pct(p.candidate), p.base === null || p.candidate === null ? "-" : num(p.candidate - p.base), `${p.passedOnlyBase}↓ ${p.passedOnlyCandidate}↑`, pval(p.pValue), "", "", p.verdict],
  ];
}

function tableOf(c: Comparison, failures: string[]): string {
  const all = rows(c);
  const widths = all[0].map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const lines = [
    `base ${c.base.id}${c.base.version ? ` (${c.base.version})` : ""} → candidate ${c.candidate.id}${c.candidate.version ? ` (${c.candidate.version})` : ""}: ${c.examples.shared} shared examples, seed ${c.seed}, ${c.resamples} resamples`,
  ];
  // `trials` is absent from a server that predates trials: one run per example then.
  const [tb, tc] = [c.base.trials ?? 1, c.candidate.trials ?? 1];
  if (tb > 1 || tc > 1) lines.push(`trials per example: base ${tb}, candidate ${tc} (an example's score is the mean over its trials; passed = passed most of them)`);
  if (c.examples.onlyBase.length) lines.push(`only in base (not compared): ${names(c.examples.onlyBase)}`);
  if (c.examples.onlyCandidate.length) lines.push(`only in candidate (not compared): ${names(c.examples.onlyCandidate)}`);
  if (c.examples.unscored.length) lines.push(`unscored on one side (not compared): ${names(c.examples.unscored)}`);
  lines.push("", ...all.map((r) => r.map((cell, i) => cell.padEnd(widths[i])).join("  ").trimEnd()), "");
  if (c.regressions.length) {
    lines.push(`largest drops (${c.regressionCount} examples scored lower):`);
    for (const r of c.regressions.slice(0, 5)) {
      const dropped = Object.keys(r.base.evaluators).filter((e) => (r.base.evaluators[e] ?? 0) > (r.candidate.evaluators[e] ?? 0));
      const parts = dropped.map((e) => `${e} ${num(r.base.evaluators[e])} → ${num(r.candidate.evaluators[e])}`);
      lines.push(`  ${r.exampleName ?? r.exampleId}  overall ${num(r.base.score)} → ${num(r.candidate.score)}${parts.length ? `; ${parts.join(", ")}` : ""}`);
    }
    lines.push("");
  }
  lines.push(failures.length ? `REGRESSED: ${failures.join(", ")}` : "no significant regression");
  return `${lines.join("\n")}\n`;
}

const names = (refs: { id: string; name: string | null }[]) => {
  const shown = refs.slice(0, 10).map((r) => r.name ?? r.id).join(", ");
  return refs.length > 10 ? `${shown} and ${refs.length - 10} more` : shown;
};

const xml = (s: string) => s.replace(/[<>&"']/g, (ch) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[ch]!);

/** One testcase per evaluator, the overall score and the pass rate; a failure element for each regression. */
export function junitOf(c: Comparison): string {
  const cases: { name: string; failure?: string }[] = [];
  const statCase = (name: string, s: Stat) => ({
    name,
    failure:
      s.verdict === "regressed"
        ? `${name} regressed: mean ${num(s.baseMean)} → ${num(s.candidateMean)}, delta ${num(s.delta)}, 95% CI [${num(s.ci?.[0] ?? null)}, ${num(s.ci?.[1] ?? null)}], p ${pval(s.pValue)}, Holm-adjusted p ${pval(s.adjustedPValue)}, n ${s.n}`
        : undefined,
  });
  for (const e of c.evaluators) cases.push(statCase(`evaluator ${e.name}`, e));
  cases.push(statCase("overall score", c.overall));
  const p = c.passRate;
  cases.push({
    name: "pass rate",
    failure: p.verdict === "regressed" ? `pass rate regressed: ${pct(p.base)} → ${pct(p.candidate)}, ${p.passedOnlyBase} examples now fail, ${p.passedOnlyCandidate} now pass, McNemar p ${pval(p.pValue)}, n ${p.n}` : undefined,
  });
  const failures = cases.filter((x) => x.failure).length;
  const suite = `compare ${c.base.id} → ${c.candidate.id}`;
  const body = cases
    .map((x) => {
      const open = `    <testcase classname="experiments.gate" name="${xml(x.name)}"`;
      return x.failure ? `${open}>\n      <failure type="regressed" message="${xml(x.failure)}">${xml(x.failure)}</failure>\n    </testcase>` : `${open}/>`;
    })
    .join("\n");
  const props = [["base", c.base.id], ["candidate", c.candidate.id], ["seed", String(c.seed)], ["resamples", String(c.resamples)], ["sharedExamples", String(c.examples.shared)], ["baseTrials", String(c.base.trials ?? 1)], ["candidateTrials", String(c.candidate.trials ?? 1)]]
    .map(([k, v]) => `      <property name="${k}" value="${xml(v)}"/>`)
    .join("\n");
  return `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="experiments gate" tests="${cases.length}" failures="${failures}">
  <testsuite name="${xml(suite)}" tests="${cases.length}" failures="${failures}" errors="0">
    <properties>
${props}
    </properties>
${body}
  </testsuite>
</testsuites>
`;
}
