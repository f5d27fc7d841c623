// The wire types the client returns. Where the server declares a resource's wire shape (its model.ts),
// this re-exports it: the client keeps no copy of a server type, and the compiler checks both sides
// against one declaration. Type-only exports: the client bundles no server code.
export type { AutomationDetail, AutomationSummary, AutomationVersion, Page, Triggers } from "../automations/model";
export type { FileView as FileObject, UploadNegotiation, UploadView as UploadSession } from "../files/model";
export type { ServerView as EmailServer } from "../email/model";
export type { TemplateView as Template } from "../templates/model";
export type { Token as TemplateToken } from "../templates/grammar";
export type { ExampleView as Example } from "../datasets/model";
export type { EvalResult } from "../evaluators/model";
export type { Review, ReviewCorrection, ReviewStatus, ReviewVerdict } from "../reviews/model";
export type { HumanReviewDecision, HumanReviewFile, HumanReviewList, HumanReviewStatus, HumanReviewSummary, HumanReviewTask } from "../human-review/model";
export type { CatalogEntry as CatalogModel } from "../models/catalog";
export type { ModelCapability } from "../models/contract";
import type { AutomationDetail } from "../automations/model";

/** `automations.create` and `get` answer the detail (with the schemas); `list` answers summaries. */
export type Automation = AutomationDetail;

// Shapes the server builds without a declared type yet (auth check, runs): kept here until the runs
// envelope declares its own.
export interface AuthCheck {
  ok: true;
  tenantId: string;
  tenantSlug: string;
  tenantName: string;
  userId: string | null;
  keyId: string;
  email: string | null;
  name: string | null;
  scope: string[];
  wildcardGranted: boolean;
}

export type RunStatus = "created" | "pending" | "running" | "waiting" | "finalizing" | "completed" | "failed" | "cancelled" | "rejected";

export interface Run {
  id: string;
  type: string;
  finished: boolean;
  execution?: { status: RunStatus; [key: string]: unknown };
  output?: unknown;
  error?: unknown;
  files?: { name: string; role: string; path: string; stepName: string | null; contentType: string | null; size: number | null }[];
  [key: string]: unknown;
}

export interface RunList {
  runs: Run[];
  nextCursor: string | null;
}

export interface RunEvent {
  type: string;
  timestamp: string;
  status?: string | null;
  message?: string | null;
  metadata?: Record<string, unknown> | null;
}

export interface RunStep {
  name: string;
  type: string;
  status: string;
  startedAt: string | null;
  completedAt: string | null;
  durationMs: number | null;
  attempt: number;
  output?: unknown;
  error?: unknown;
}

export interface Artifact {
  path: string;
  [key: string]: unknown;
}

export interface CancelResult {
  id: string;
  type: string;
  finished: boolean;
  execution: { status: RunStatus };
  cancellation: { state: "cancelled" | "requested" | "already_terminal"; wasStatus: RunStatus };
}
