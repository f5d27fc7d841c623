// The automation server's own series, on the kernel's registry. Labels are small closed sets (run
// status, step kind, model as configured by the operator, outcome, direction): never tenant, run or
// file ids. Queue depth and open review tasks are read from the database at scrape time, so they are
// right whichever process changed them.
import { Counter, Gauge, Histogram } from "prom-client";
import type { Metrics } from "../kernel/metrics";
import type { FoundationStats } from "./automations/store";
import type { BlobInfo, BlobStore } from "./blobs/blobs";
import type { ModelUsageObserver } from "./models/metered";

const WAIT = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];
const STEP = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300];

export interface AutomationMetrics {
  kernel: Metrics;
  runsStarted: Counter;
  runsFinished: Counter<"status">;
  queueWait: Histogram;
  stepDuration: Histogram<"kind" | "status">;
  modelTokens: Counter<"model" | "kind">;
  modelCalls: Counter<"model" | "status">;
  emails: Counter<"outcome">;
  blobBytes: Counter<"direction">;
}

/** Registers the automation series on `kernel` (database gauges read `stats` when scraped). */
export function automationMetrics(kernel: Metrics, stats: FoundationStats): AutomationMetrics {
  const registers = [kernel.registry];
  // A scrape collects the gauges together: they share one read of the counts.
  let reading: ReturnType<FoundationStats["counts"]> | undefined;
  const counts = () => {
    if (!reading) {
      reading = stats.counts();
      reading.finally(() => (reading = undefined)).catch(() => {});
    }
    return reading;
  };
  new Gauge({
    name: "automation_queue_depth",
    help: "Runs waiting for a worker (status pending)",
    registers,
    async collect() {
      this.set((await counts()).pendingRuns);
    },
  });
  new Gauge({
    name: "automation_runs_running",
    help: "Runs being executed (status running)",
    registers,
    async collect() {
      this.set((await counts()).runningRuns);
    },
  });
  new Gauge({
    name: "automation_human_review_tasks_open",
    help: "Human-review tasks waiting for a decision (status pending)",
    registers,
    async collect() {
      this.set((await counts()).openTasks);
    },
  });
  const m: AutomationMetrics = {
    kernel,
    runsStarted: new Counter({ name: "automation_runs_started_total", help: "Runs picked up by a worker for the first time", registers }),
    runsFinished: new Counter({ name: "automation_runs_finished_total", help: "Runs that reached a terminal status, by status (completed, failed, cancelled)", labelNames: ["status"], registers }),
    queueWait: new Histogram({ name: "automation_queue_wait_seconds", help: "Time from a run's creation to its first pickup by a worker", buckets: WAIT, registers }),
    stepDuration: new Histogram({ name: "automation_step_duration_seconds", help: "Step execution time, by step kind and outcome", labelNames: ["kind", "status"], buckets: STEP, registers }),
    modelTokens: new Counter({ name: "automation_model_tokens_total", help: "Model tokens used, by configured model and kind (input, output, cache_read, cache_write)", labelNames: ["model", "kind"], registers }),
    modelCalls: new Counter({ name: "automation_model_calls_total", help: "Model calls, by configured model and status (ok, failed)", labelNames: ["model", "status"], registers }),
    emails: new Counter({ name: "automation_emails_total", help: "E-mails handed to a transport, by outcome (sent, failed)", labelNames: ["outcome"], registers }),
    blobBytes: new Counter({ name: "automation_blob_bytes_total", help: "Bytes written to (in) and opened from (out) the blob store", labelNames: ["direction"], registers }),
  };
  for (const s of ["completed", "failed", "cancelled"]) m.runsFinished.inc({ status: s }, 0);
  for (const o of ["sent", "failed"]) m.emails.inc({ outcome: o }, 0);
  for (const d of ["in", "out"]) m.blobBytes.inc({ direction: d }, 0);
  return m;
}

/** Feeds a run's model calls into the token and call counters (see models/metered.ts). */
export function modelUsageMetrics(m: AutomationMetrics): ModelUsageObserver {
  return (call) => {
    const model = call.model ?? "unknown";
    m.modelCalls.inc({ model, status: call.status });
    if (call.inputTokens) m.modelTokens.inc({ model, kind: "input" }, call.inputTokens);
    if (call.outputTokens) m.modelTokens.inc({ model, kind: "output" }, call.outputTokens);
    if (call.cacheReadTokens) m.modelTokens.inc({ model, kind: "cache_read" }, call.cacheReadTokens);
    if (call.cacheWriteTokens) m.modelTokens.inc({ model, kind: "cache_write" }, call.cacheWriteTokens);
  };
}

/**
 * The store counting the bytes put into it and the size of every blob opened from it; everything else
 * (listing, sweeping, presigned transfers) passes through untouched. Bytes clients send straight to S3
 * through presigned URLs do not pass here and are not counted.
 */
export function meteredBlobs(store: BlobStore, m: AutomationMetrics): BlobStore {
  const put: BlobStore["put"] = async (data, opts) => {
    const info: BlobInfo = await store.put(data, opts);
    m.blobBytes.inc({ direction: "in" }, info.size);
    return info;
  };
  const get: BlobStore["get"] = async (sha256) => {
    const blob = await store.get(sha256);
    if (blob && Number.isFinite(blob.size)) m.blobBytes.inc({ direction: "out" }, blob.size);
    return blob;
  };
  return new Proxy(store, {
    get(target, key) {
      if (key === "put") return put;
      if (key === "get") return get;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** SQLite statement timing lives with the SQLite store (db/sqlite/timing.ts). */
export { timeStatements } from "./db/sqlite/timing";
