// The wire types the client returns. Where the server declares a resource's wire shape (its model.ts),
// this re-exports it: the client keeps no copy of a server type, and the compiler checks both sides
// against one declaration. Type-only exports: the client bundles no server code.
export type { AutomationDetail, AutomationSummary, AutomationVersion, Page, Triggers, ValidationIssue, ValidationResult } from "../automations/model";
export type { ScheduleView, SchedulesResponse } from "../schedules/model";
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

export type { AuthCheck } from "../tenancy/model";
export type { CancelResult, Run, RunArtifact as Artifact, RunEvent, RunList, RunStatus, RunStep, RunUsage } from "../runs/model";
