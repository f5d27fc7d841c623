// Run reviews: the review of a finished run (verdict, note, corrections), its corrected files (upload,
// copy of an output file, bytes, rename, delete), promotion to a dataset example, and an automation's
// review health. The reply types are the server's (reviews/model.ts, type-only imports).
import { enc, type FileInput, resolveFile } from "./files";
import type { QueryValue, Transport } from "./transport";
import type { Review, ReviewCorrection, ReviewStatus, ReviewVerdict } from "./types";

/** The body of `PUT /runs/{id}/reviews` (replaces the review and its corrections). */
export interface ReviewInput {
  verdict?: ReviewVerdict | null;
  status?: ReviewStatus;
  note?: string | null;
  correctedOutput?: unknown;
  corrections?: {
    id?: string;
    kind: "field" | "file";
    path: string;
    label?: string | null;
    originalValue?: unknown;
    correctedValue?: unknown;
    note?: string | null;
    correctedArtifactPath?: string | null;
  }[];
}

export interface Promotion {
  automationId: string;
  automationType: string;
  exampleId: string;
  name: string;
}

export interface ReviewHealthCounts {
  totalRuns: number;
  reviewedRuns: number;
  reviewCoverage: number | null;
  correctReviews: number;
  incorrectReviews: number;
  nitReviews: number;
  reviewedCorrectness: number | null;
}

export interface ReviewHealth {
  timeRange: { from: string; to: string };
  granularity: { bucket: "day" | "week" | "month"; rollingWindow: number; minRollingReviews: number };
  summary: ReviewHealthCounts & { confidence: { lower: number | null; upper: number | null; method: "wilson" } };
  buckets: (ReviewHealthCounts & { start: string; end: string })[];
  rolling: {
    at: string;
    reviewedRuns: number;
    correctReviews: number;
    reviewedCorrectness: number;
    confidenceLower: number;
    confidenceUpper: number;
    totalRunsInWindow: number;
    reviewCoverage: number;
  }[];
}

/** Filters of the health read by wire name (`from`, `to`, `bucket`, `rollingWindow`, `status`, ...). */
export type ReviewHealthQuery = Record<string, QueryValue>;

const base = (runId: string) => `/v1/runs/${enc(runId)}/reviews`;
/** Corrected file names may hold folders (`out/a.json`): each segment is encoded on its own. */
const expectedPath = (runId: string, name: string) => `${base(runId)}/expected/${name.split("/").map(enc).join("/")}`;

export class ReviewsResource {
  constructor(private readonly http: Transport) {}

  /** The run's review, or `null` when it has none. */
  async get(runId: string): Promise<Review | null> {
    return (await this.http.json<{ review: Review | null }>({ method: "GET", path: base(runId) })).review;
  }

  /** Creates or replaces the review of a finished run (409 `run_not_terminal` otherwise). */
  async put(runId: string, review: ReviewInput): Promise<Review> {
    return (await this.http.json<{ review: Review }>({ method: "PUT", path: base(runId), json: review })).review;
  }

  /** Deletes the review, its corrections and corrected files. */
  async delete(runId: string): Promise<void> {
    await this.http.json({ method: "DELETE", path: base(runId) });
  }

  /** Names of the corrected files. */
  async listExpected(runId: string): Promise<string[]> {
    return (await this.http.json<{ files: { name: string }[] }>({ method: "GET", path: `${base(runId)}/expected` })).files.map((f) => f.name);
  }

  /** Uploads a corrected file (the same name replaces it); `name` defaults to the file's name. */
  uploadExpected(runId: string, file: FileInput, opts: { name?: string; filename?: string; contentType?: string } = {}): Promise<{ name: string }> {
    const { blob, filename, contentType } = resolveFile(file, { filename: opts.filename, contentType: opts.contentType, fallbackName: opts.name });
    const form = new FormData();
    form.append("file", new File([blob], filename, { type: contentType }));
    if (opts.name) form.append("name", opts.name);
    return this.http.json({ method: "POST", path: `${base(runId)}/expected`, body: form });
  }

  /** Copies one of the run's output files (by path or name) into the corrected files. */
  copyExpected(runId: string, outputFileName: string, expectedName?: string): Promise<{ name: string }> {
    return this.http.json({ method: "POST", path: `${base(runId)}/expected`, json: expectedName === undefined ? { outputFileName } : { outputFileName, expectedName } });
  }

  /** A corrected file's bytes (stream the Response body). */
  downloadExpected(runId: string, name: string): Promise<Response> {
    return this.http.response({ method: "GET", path: expectedPath(runId, name) });
  }

  renameExpected(runId: string, name: string, to: string): Promise<{ name: string }> {
    return this.http.json({ method: "PATCH", path: expectedPath(runId, name), json: { name: to } });
  }

  async deleteExpected(runId: string, name: string): Promise<void> {
    await this.http.json({ method: "DELETE", path: expectedPath(runId, name) });
  }

  /** Turns the run into a dataset example of its automation (needs reviews:write and datasets:write). */
  promote(runId: string, opts: { name?: string; useCorrections?: boolean } = {}): Promise<Promotion> {
    return this.http.json({ method: "POST", path: `/v1/runs/${enc(runId)}/promote`, json: opts });
  }

  /** Review coverage and correctness of an automation (id or `workflows.slug`) over a time range. */
  health(automation: string, query: ReviewHealthQuery = {}): Promise<ReviewHealth> {
    return this.http.json({ method: "GET", path: `/v1/automations/${enc(automation)}/reviews/health`, query });
  }
}
