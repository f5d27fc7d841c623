// The evaluation loop: dataset examples (and their input/expected files), the dataset ZIP, evaluator
// files, experiments (with NDJSON progress) and run scores.
import { enc, type FileInput, resolveFile } from "./files";
import type { Transport } from "./transport";
import type { EvalResult, Example } from "./types";
import type { Comparison } from "../experiments/model";
import type { ExampleTrials, OverallSpread, Spread, TrialStats } from "../experiments/trials";

export type { Comparison, ExampleTrials, OverallSpread, Spread, TrialStats };

export interface ExampleMutation {
  name?: string | null;
  input?: Record<string, unknown> | null;
  expected?: unknown;
  metadata?: Record<string, unknown> | null;
  annotation?: string | null;
  rowOrder?: number | null;
  overrides?: Record<string, unknown> | null;
}

export interface Experiment {
  id: string;
  automationId: string;
  automationType: string;
  status: "queued" | "running" | "completed";
  runCount: number;
  completedCount: number;
  passedCount: number;
  failedCount: number;
  avgScore: number | null;
  createdAt: string;
  completedAt: string | null;
  version: string | null;
}

export interface ExperimentDetail extends Experiment {
  runs: { id: string; status: string; exampleId: string | null; exampleName: string | null; createdAt: string; completedAt: string | null }[];
  resultsByRun: Record<string, EvalResult[]>;
}

export interface ExperimentCreate {
  examples?: string[];
  version?: string;
  name?: string;
  /** At most this many of its runs in flight at once. */
  batchConcurrency?: number | null;
  /** Runs per example, 1–20 (default 1); the workflow reads the run's trial as `{{ eval.trial }}`. */
  trials?: number;
}

export type ExperimentLine =
  | {
      type: "run";
      runId: string;
      exampleId: string | null;
      exampleName: string | null;
      /** Present on runs of an experiment with `trials` > 1 (1-based). */
      trial?: number;
      status: string;
      score: number | null;
      passed: boolean;
      results: EvalResult[];
    }
  | { type: "summary"; experiment: Experiment };

type Folder = "input" | "expected";
const path = (automation: string, rest = "") => `/v1/automations/${enc(automation)}${rest}`;
const filePath = (p: string) => p.split("/").map(enc).join("/");

export class ExamplesResource {
  constructor(private readonly http: Transport) {}

  list(automation: string, query: { limit?: number; offset?: number; include?: "full" | "metadata" } = {}): Promise<{ data: Example[]; total: number; limit: number; offset: number }> {
    return this.http.json({ method: "GET", path: path(automation, "/examples"), query: { ...query } });
  }
  create(automation: string, body: ExampleMutation): Promise<Example> {
    return this.http.json({ method: "POST", path: path(automation, "/examples"), json: body });
  }
  get(automation: string, exampleId: string): Promise<Example> {
    return this.http.json({ method: "GET", path: path(automation, `/examples/${enc(exampleId)}`) });
  }
  /** Omitted fields are kept; `null` clears. */
  update(automation: string, exampleId: string, body: ExampleMutation): Promise<Example> {
    return this.http.json({ method: "PATCH", path: path(automation, `/examples/${enc(exampleId)}`), json: body });
  }
  delete(automation: string, exampleId: string): Promise<Example> {
    return this.http.json({ method: "DELETE", path: path(automation, `/examples/${enc(exampleId)}`) });
  }
  /** Starts an evaluation run of the example; it is scored when it ends (`runs.scores`). */
  run(automation: string, exampleId: string): Promise<{ id: string; type: string; batchId: string | null; finished: false }> {
    return this.http.json({ method: "POST", path: path(automation, `/examples/${enc(exampleId)}/run`) });
  }

  listFiles(automation: string, exampleId: string, folder: Folder): Promise<{ files: string[] }> {
    return this.http.json({ method: "GET", path: path(automation, `/examples/${enc(exampleId)}/${folder}`) });
  }
  /** Uploads files into the folder; a file's name may carry a subfolder (`scans/p1.png`). */
  uploadFiles(automation: string, exampleId: string, folder: Folder, files: FileInput[]): Promise<{ uploaded: string[] }> {
    const form = new FormData();
    for (const f of files) {
      const { blob, filename, contentType } = resolveFile(f, { fallbackName: "file" });
      form.append("file", new File([blob], filename, { type: contentType }));
    }
    return this.http.json({ method: "POST", path: path(automation, `/examples/${enc(exampleId)}/${folder}`), body: form });
  }
  /** The file's bytes as a Response (stream `body`). */
  downloadFile(automation: string, exampleId: string, folder: Folder, filePathInFolder: string): Promise<Response> {
    return this.http.response({ method: "GET", path: path(automation, `/examples/${enc(exampleId)}/${folder}/${filePath(filePathInFolder)}`) });
  }
  renameFile(automation: string, exampleId: string, folder: Folder, filePathInFolder: string, newFilename: string): Promise<{ ok: true; filename: string; path: string }> {
    return this.http.json({ method: "PATCH", path: path(automation, `/examples/${enc(exampleId)}/${folder}/${filePath(filePathInFolder)}`), json: { newFilename } });
  }
  deleteFile(automation: string, exampleId: string, folder: Folder, filePathInFolder: string): Promise<{ ok: true; path: string }> {
    return this.http.json({ method: "DELETE", path: path(automation, `/examples/${enc(exampleId)}/${folder}/${filePath(filePathInFolder)}`) });
  }
}

export class DatasetResource {
  constructor(private readonly http: Transport) {}

  /** The dataset ZIP as a Response (stream `body`); `exampleIds` selects. */
  export(automation: string, options: { exampleIds?: string[] } = {}): Promise<Response> {
    return this.http.response({ method: "GET", path: path(automation, "/dataset/export"), query: { exampleIds: options.exampleIds?.join(",") } });
  }
  import(automation: string, zip: FileInput, options: { mode?: "append" | "replace" } = {}): Promise<Record<string, unknown> & { mode: "append" | "replace"; created: number; expectedSet: number }> {
    const { blob } = resolveFile(zip, { fallbackName: "dataset.zip" });
    const form = new FormData();
    if (options.mode) form.append("mode", options.mode);
    form.append("file", new File([blob], "dataset.zip", { type: "application/zip" }));
    return this.http.json({ method: "POST", path: path(automation, "/dataset/import"), body: form });
  }
}

export class EvaluatorsResource {
  constructor(private readonly http: Transport) {}

  get(automation: string): Promise<{ automationId: string; automationType: string; yaml: string; config: { evaluators: unknown[]; passThreshold: number } }> {
    return this.http.json({ method: "GET", path: path(automation, "/evaluators") });
  }
  /** Validated before it is stored (a ValidationError names the field and line). */
  update(automation: string, yaml: string): Promise<{ automationId: string; automationType: string; yaml: string; config: { evaluators: unknown[]; passThreshold: number } }> {
    return this.http.json({ method: "PUT", path: path(automation, "/evaluators"), json: { yaml } });
  }
}

export class ExperimentsResource {
  constructor(private readonly http: Transport) {}

  create(automation: string, body: ExperimentCreate = {}): Promise<{ id: string; runs: { id: string; exampleId: string | null }[]; total: number }> {
    return this.http.json({ method: "POST", path: path(automation, "/experiments"), json: body });
  }
  /** Creates the experiment and yields a line per finished run, then the summary. */
  async *stream(automation: string, body: ExperimentCreate = {}, options: { signal?: AbortSignal } = {}): AsyncGenerator<ExperimentLine> {
    // The request timeout ends once the headers are in: the stream itself lasts as long as the experiment.
    const res = await this.http.response({ method: "POST", path: path(automation, "/experiments/stream"), json: body, signal: options.signal });
    if (!res.body) return;
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of res.body) {
      buf += dec.decode(chunk, { stream: true });
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) yield JSON.parse(line) as ExperimentLine;
      }
    }
  }
  list(automation: string, query: { limit?: number; offset?: number; fromDate?: string; toDate?: string } = {}): Promise<{ data: Experiment[]; total: number; limit: number; offset: number }> {
    return this.http.json({ method: "GET", path: path(automation, "/experiments"), query: { ...query } });
  }
  get(automation: string, experimentId: string): Promise<ExperimentDetail> {
    return this.http.json({ method: "GET", path: path(automation, `/experiments/${enc(experimentId)}`) });
  }
  cancel(automation: string, experimentId: string): Promise<ExperimentDetail> {
    return this.http.json({ method: "POST", path: path(automation, `/experiments/${enc(experimentId)}/cancel`) });
  }
  /** CSV or JSON of the results of one experiment, or of all when `experimentId` is omitted. */
  async export(automation: string, options: { experimentId?: string; format: "csv" | "json"; includeTrace?: boolean }): Promise<string> {
    const rest = options.experimentId ? `/experiments/${enc(options.experimentId)}/export` : "/experiments/export";
    const res = await this.http.response({ method: "GET", path: path(automation, rest), query: { format: options.format, includeTrace: options.includeTrace ? "true" : undefined } });
    return res.text();
  }
  /**
   * Compares two completed experiments of the automation over the examples both ran: per evaluator,
   * overall and pass rate, with CIs, p-values and verdicts (`seed` makes the resampling reproducible).
   */
  compare(automation: string, query: { base: string; candidate: string; seed?: number; resamples?: number }): Promise<Comparison> {
    return this.http.json({ method: "GET", path: path(automation, "/experiments/compare"), query: { ...query } });
  }
  /** Per example and per evaluator over the experiment's trials: mean, spread (sd, min, max) and pass rate, plus overall figures. */
  trials(automation: string, experimentId: string): Promise<TrialStats> {
    return this.http.json({ method: "GET", path: path(automation, `/experiments/${enc(experimentId)}/trials`) });
  }
  /** `{id, automationId}` of an experiment known only by id. */
  resolve(experimentId: string): Promise<{ id: string; automationId: string }> {
    return this.http.json({ method: "GET", path: `/v1/experiments/${enc(experimentId)}` });
  }
}
