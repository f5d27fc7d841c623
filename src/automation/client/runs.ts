// Runs: start (JSON, or multipart when files ride along), wait, read, list, cancel, rerun, and the
// run's events, steps and artifacts.
import { assertReadable, enc, isFileInput, resolveFile, type FilesResource, type FileInput } from "./files";
import type { QueryValue, Transport } from "./transport";
import type { Artifact, CancelResult, EvalResult, Run, RunEvent, RunList, RunStep, RunUsage } from "./types";

export type RunTarget = string | { type: "workflow" | "agent"; id?: string; slug?: string; version?: string };

export interface RunOptions {
  /** Seconds (0-600) the server holds the request for the run to finish: 200 when it did, 202 when not. */
  waitForCompletion?: number;
  /** A version tag, or `latest`. */
  version?: string;
  overrides?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  signal?: AbortSignal;
}

export interface RunAndWaitOptions extends Omit<RunOptions, "waitForCompletion"> {
  /** Between polls (default 1000 ms). */
  pollIntervalMs?: number;
  /** Give up after this long (default 10 min) with a TimeoutError-like error. */
  maxWaitMs?: number;
}

/** Multipart envelope allowance (boundaries, `target`/`input` parts, headers). */
export const MULTIPART_HEADROOM_BYTES = 256 * 1024;
export const DEFAULT_MULTIPART_MAX_BYTES = Math.floor(4.5 * 1024 * 1024);

/**
 * Which file inputs must be uploaded first so the rest fit one multipart request: everything over
 * the budget on its own, then the largest remaining ones until the total fits. `null` = no limit.
 */
export function filesToPreUpload(files: { key: string; size: number }[], multipartMaxBytes: number | null): Set<string> {
  const out = new Set<string>();
  if (multipartMaxBytes === null) return out;
  const budget = Math.max(0, multipartMaxBytes - MULTIPART_HEADROOM_BYTES);
  for (const f of files) if (f.size > budget) out.add(f.key);
  let total = files.filter((f) => !out.has(f.key)).reduce((s, f) => s + f.size, 0);
  const rest = files.filter((f) => !out.has(f.key)).sort((a, b) => b.size - a.size || a.key.localeCompare(b.key));
  for (const f of rest) {
    if (total <= budget) break;
    out.add(f.key);
    total -= f.size;
  }
  return out;
}

function targetOf(target: RunTarget): { target: string; version?: string } {
  if (typeof target === "string") {
    if (!target.trim()) throw new TypeError("run target is empty");
    // `workflows.x@1.2.0` as the official SDKs take it: the server's target has no version suffix.
    const [name, version, extra] = target.split("@");
    if (!name || version === "" || extra !== undefined) throw new TypeError("a run target is <target> or <target>@<version>");
    return { target: name, version };
  }
  const ref = target.id ?? (target.slug ? `${target.type}s.${target.slug}` : undefined);
  if (!ref) throw new TypeError("run target needs an id or a slug");
  return { target: ref, version: target.version };
}

const TERMINAL = new Set(["completed", "failed", "cancelled", "rejected"]);

export class RunsResource {
  constructor(
    private readonly http: Transport,
    private readonly files: FilesResource,
    private readonly multipartMaxBytes: number | null,
  ) {}

  /**
   * Starts a run. File values at the top level of `input` (Blob, File, bytes, `{path}`, `{content,
   * filename}`) go as multipart parts, except those over the multipart budget, which are uploaded
   * first (`purpose: run-input`) and passed as `{"$fileId": ...}`.
   */
  async start(target: RunTarget, input: Record<string, unknown> = {}, opts: RunOptions = {}): Promise<Run> {
    const t = targetOf(target);
    const query: Record<string, QueryValue> = { version: opts.version ?? t.version, wait_for_completion: opts.waitForCompletion };
    const timeoutMs = this.http.opts.timeoutMs + (opts.waitForCompletion ?? 0) * 1000;
    const fileEntries = Object.entries(input).filter(([, v]) => isFileInput(v)) as [string, FileInput][];
    for (const [, v] of fileEntries) await assertReadable(v);
    const resolved = fileEntries.map(([key, v]) => ({ key, ...resolveFile(v, { fallbackName: key }) }));
    const pre = filesToPreUpload(resolved.map((f) => ({ key: f.key, size: f.blob.size })), this.multipartMaxBytes);

    const json: Record<string, unknown> = { ...input };
    const parts: typeof resolved = [];
    for (const f of resolved) {
      if (pre.has(f.key)) {
        const uploaded = await this.files.upload(f.blob, { filename: f.filename, contentType: f.contentType, purpose: "run-input", signal: opts.signal });
        json[f.key] = { $fileId: uploaded.id };
      } else {
        delete json[f.key];
        parts.push(f);
      }
    }
    if (parts.length === 0) {
      const body: Record<string, unknown> = { target: t.target, input: json };
      if (opts.overrides) body.overrides = opts.overrides;
      if (opts.metadata) body.metadata = opts.metadata;
      return this.http.json({ method: "POST", path: "/v1/runs", query, json: body, timeoutMs, signal: opts.signal });
    }
    const form = new FormData();
    form.append("target", t.target);
    form.append("input", JSON.stringify(json));
    if (opts.overrides) form.append("overrides", JSON.stringify(opts.overrides));
    if (opts.metadata) form.append("metadata", JSON.stringify(opts.metadata));
    for (const f of parts) form.append(`files.${f.key}`, new File([f.blob], f.filename, { type: f.contentType }));
    return this.http.json({ method: "POST", path: "/v1/runs", query, body: form, timeoutMs, signal: opts.signal });
  }

  /** Starts without holding the connection, then polls until the run is terminal. */
  async startAndWait(target: RunTarget, input: Record<string, unknown> = {}, opts: RunAndWaitOptions = {}): Promise<Run> {
    const started = await this.start(target, input, { ...opts, waitForCompletion: undefined });
    const until = Date.now() + (opts.maxWaitMs ?? 10 * 60_000);
    for (;;) {
      const run = await this.get(started.id, { signal: opts.signal });
      if (run.finished || TERMINAL.has(run.execution?.status ?? "")) return run;
      if (Date.now() > until) throw new Error(`run ${started.id} did not finish within ${opts.maxWaitMs ?? 600_000} ms`);
      await Bun.sleep(opts.pollIntervalMs ?? 1000);
    }
  }

  get(id: string, opts: { expand?: string[]; signal?: AbortSignal } = {}): Promise<Run> {
    return this.http.json({ method: "GET", path: `/v1/runs/${enc(id)}`, query: { expand: opts.expand }, signal: opts.signal });
  }

  /** Every filter of the API by its wire name (camelCase or snake_case), plus `cursor` and `limit`. */
  list(query: Record<string, QueryValue> = {}): Promise<RunList> {
    return this.http.json({ method: "GET", path: "/v1/runs", query });
  }

  /** Pages through `list` with `nextCursor`. */
  async *iterate(query: Record<string, QueryValue> = {}): AsyncGenerator<Run> {
    let cursor: string | null | undefined;
    do {
      const page = await this.list({ ...query, cursor: cursor ?? undefined });
      yield* page.runs;
      cursor = page.nextCursor;
    } while (cursor);
  }

  /** Evaluator results of an evaluation run (empty for other runs). */
  scores(id: string): Promise<{ scores: EvalResult[] }> {
    return this.http.json({ method: "GET", path: `/v1/runs/${enc(id)}/scores` });
  }

  cancel(id: string): Promise<CancelResult> {
    return this.http.json({ method: "POST", path: `/v1/runs/${enc(id)}/cancel`, json: {} });
  }

  /** `version: "original"` pins the source run's version. */
  rerun(id: string, opts: { version?: string; waitForCompletion?: number } = {}): Promise<Run> {
    return this.http.json({
      method: "POST",
      path: `/v1/runs/${enc(id)}/rerun`,
      query: { version: opts.version, wait_for_completion: opts.waitForCompletion },
      json: {},
      timeoutMs: this.http.opts.timeoutMs + (opts.waitForCompletion ?? 0) * 1000,
    });
  }

  async events(id: string): Promise<RunEvent[]> {
    return (await this.http.json<{ events: RunEvent[] }>({ method: "GET", path: `/v1/runs/${enc(id)}/events` })).events;
  }

  async steps(id: string): Promise<RunStep[]> {
    return (await this.http.json<{ steps: RunStep[] }>({ method: "GET", path: `/v1/runs/${enc(id)}/steps` })).steps;
  }

  /** The run's trace: model calls, tool calls and step records in order. */
  async trace(id: string): Promise<Record<string, unknown>[]> {
    return (await this.http.json<{ events: Record<string, unknown>[] }>({ method: "GET", path: `/v1/runs/${enc(id)}/trace` })).events;
  }

  /** Tokens, credits, duration and model-call count of the run. */
  async usage(id: string): Promise<RunUsage> {
    return (await this.http.json<{ usage: RunUsage }>({ method: "GET", path: `/v1/runs/${enc(id)}/usage` })).usage;
  }

  async artifacts(id: string): Promise<Artifact[]> {
    return (await this.http.json<{ artifacts: Artifact[] }>({ method: "GET", path: `/v1/runs/${enc(id)}/artifacts` })).artifacts;
  }

  /** One artifact's bytes (stream the Response body). */
  artifact(id: string, path: string): Promise<Response> {
    const p = path.split("/").map(enc).join("/");
    return this.http.response({ method: "GET", path: `/v1/runs/${enc(id)}/artifacts/${p}` });
  }

  /** The ZIP of the run's output files (`bundle: "review"` adds expected/). */
  artifactsZip(id: string, opts: { bundle?: "review" } = {}): Promise<Response> {
    return this.http.response({ method: "GET", path: `/v1/runs/${enc(id)}/artifacts`, query: { zip: 1, bundle: opts.bundle } });
  }
}
