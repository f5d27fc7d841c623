// What run reviews need from storage: reviews, corrections, corrected files with their blob pins, and
// review health aggregated in the database. One async interface; db/sqlite/reviews.ts and
// db/pg/reviews.ts implement it. This module imports no implementation.

// What the review API answers (model.ts re-exports them for the wire): the server builds these
// (service.ts) from the rows below, and the client returns them.
export type ReviewVerdict = "correct" | "incorrect";
export type ReviewStatus = "open" | "closed" | "wont_fix";

export interface ReviewCorrection {
  id: string;
  kind: "field" | "file";
  path: string;
  label: string | null;
  originalValue: unknown;
  correctedValue: unknown;
  note: string | null;
  correctedArtifactPath: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Review {
  id: string;
  verdict: ReviewVerdict | null;
  status: ReviewStatus;
  note: string | null;
  correctedOutput: unknown;
  reviewedBy: string | null;
  reviewedByEmail: string | null;
  reviewedAt: string | null;
  closedBy: string | null;
  closedByEmail: string | null;
  closedAt: string | null;
  closedNote: string | null;
  createdAt: string;
  updatedAt: string;
  corrections: ReviewCorrection[];
}

/** A stored review: the wire's fields (reviews/model.ts) with its run and owner, JSON as text, and a count. */
export type ReviewRow = Omit<Review, "note" | "correctedOutput" | "reviewedAt" | "corrections"> & {
  runId: string;
  tenantId: string;
  automationId: string;
  note: string;
  correctedOutput: string | null;
  correctionCount: number;
  reviewedAt: string;
};

export interface CorrectionRow {
  id: string;
  runId: string;
  position: number;
  kind: "field" | "file";
  path: string;
  label: string | null;
  originalValue: string | null;
  correctedValue: string | null;
  note: string;
  correctedArtifactPath: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A reviewer's corrected file of a run (bytes in the blob store). */
export interface ExpectedFileRow {
  runId: string;
  name: string;
  contentType: string;
  size: number;
  sha256: string;
  createdAt: string;
}

/** The blob-pin owner of a run's corrected files with these bytes (one pin per run and content). */
export const reviewPin = (runId: string, sha256: string) => `review:${runId}:${sha256}`;

/** The runs review health counts (already validated filters). */
export interface HealthScope {
  tenantId: string;
  automationId: string;
  from: string;
  to: string;
  statuses?: string[];
  triggers?: string[];
  types?: string[];
  triggeredBy?: string[];
  sourceRef?: string;
  batchId?: string;
  exampleId?: string;
  exampleIdContains?: string;
  completedAfter?: string;
  completedBefore?: string;
  excludeExperiments?: boolean;
}

export type HealthBucket = "day" | "week" | "month";

export interface Counts {
  totalRuns: number;
  reviewedRuns: number;
  correctReviews: number;
  incorrectReviews: number;
  nitReviews: number;
  lower: number | null;
  upper: number | null;
}

export interface BucketCounts extends Counts {
  bucket: string;
}

export interface RollingPoint {
  bucket: string;
  at: string;
  reviewedRuns: number;
  correctReviews: number;
  lower: number;
  upper: number;
  totalRunsInWindow: number;
  reviewedInWindow: number;
}

/** What `ReviewStore.put` decides from the stored review: the new row, and new corrections when they change. */
export type ReviewDecision = (prev: ReviewRow | undefined, corrections: CorrectionRow[]) => { row: ReviewRow; corrections?: CorrectionRow[] };

/** Run reviews, their corrections and corrected files, and review health (aggregated in the database). */
export interface ReviewStore {
  get(runId: string): Promise<ReviewRow | undefined>;
  corrections(runId: string): Promise<CorrectionRow[]>;
  /**
   * Creates or replaces a run's review: `decide` (pure, synchronous) sees the stored review and
   * corrections and returns the new ones; read and write are one transaction, so concurrent puts
   * serialise. Returns what was written.
   */
  put(runId: string, decide: ReviewDecision): Promise<{ row: ReviewRow; corrections: CorrectionRow[] }>;
  /** Removes the review, its corrections, its corrected files and their pins; returns the blobs they pinned. */
  remove(runId: string): Promise<string[]>;
  files(runId: string): Promise<ExpectedFileRow[]>;
  file(runId: string, name: string): Promise<ExpectedFileRow | undefined>;
  /** Adds or replaces a corrected file, pinning its blob; returns the bytes it replaced (if other). */
  putFile(tenantId: string, f: ExpectedFileRow): Promise<string | undefined>;
  /** "exists" (nothing changed) when the target name is taken. */
  renameFile(runId: string, from: string, to: string): Promise<"ok" | "exists">;
  removeFile(runId: string, name: string): Promise<void>;
  /** Drops the run's pin on the blob unless one of its corrected files still uses it; returns whether it did. */
  unpinIfUnused(runId: string, sha256: string): Promise<boolean>;
  /** Counts and the Wilson interval of reviewed correctness over the scope. */
  healthSummary(s: HealthScope): Promise<Counts>;
  /** Counts per calendar bucket (only buckets with runs). */
  healthBuckets(s: HealthScope, bucket: HealthBucket): Promise<BucketCounts[]>;
  /**
   * One rolling point per bucket, at its last reviewed run: correctness over the last `window`
   * reviewed runs up to there (with its Wilson interval), and review coverage over the last `window`
   * runs of any kind up to there.
   */
  healthRolling(s: HealthScope, bucket: HealthBucket, window: number, minReviews: number): Promise<RollingPoint[]>;
}
