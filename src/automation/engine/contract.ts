// The contract between the workflow engine (engine/) and the runs subsystem (runs/): the runs side
// owns persistence, queueing and HTTP; the engine only executes a parsed workflow and reports each
// step through the journal, so a run can resume after a crash from its last finished step.
import type { Clock } from "../../kernel/clock";
import type { ModelGateway } from "../models/contract";
import type { StepRecord } from "../runs/store";

/** A step's record in the run's journal: declared by the journal's store (runs/store.ts), which persists it. */
export type { StepRecord };

/** A file as a workflow sees it (input file, step output file, run artifact). */
export interface FileRef {
  $file: string; // file id (file_...) or artifact path
  filename: string;
  contentType: string;
  size: number;
}

export interface RunJournal {
  /** Steps that finished in an earlier attempt of this run; the engine reuses them instead of re-running. */
  completed: ReadonlyMap<string, StepRecord>;
  stepStarted(step: { path: string; name: string; type: string; attempt: number; startedAt: string }): void | Promise<void>;
  /** Must be durable when it returns: after a crash the step is not executed again. */
  stepFinished(step: StepRecord): void | Promise<void>;
}

export interface EngineServices {
  clock: Clock;
  /** Allow-listed environment for `env.X` in templates. */
  env: Record<string, string>;
  /** Hosts `action.http` may call. */
  httpAllowHosts: string[];
  /** Internal addresses `action.http` may reach by a host name (`--outbound-allow`); absent = none. */
  outboundAllow?: string[];
  /** Reads the bytes of an input file or earlier output. */
  readFile(ref: FileRef): Promise<Uint8Array>;
  /** Stores an output file produced by a step; it becomes a run artifact. */
  writeFile(file: { name: string; contentType: string; bytes: Uint8Array; stepName: string; role?: string }): Promise<FileRef>;
  /**
   * `action.invoke-workflow`: runs another workflow of the same tenant to completion, returns its output.
   * `step` is the invoking step's path: a resumed run finds the child an earlier attempt started there.
   */
  invokeWorkflow(target: string, input: Record<string, unknown>, opts: { version?: string; step?: string }): Promise<unknown>;
  /** A workflow as an agent's tool sees it (slug, description, input JSON Schema); undefined = not a workflow of this tenant. */
  describeWorkflow?(target: string): Promise<WorkflowTool | undefined>;
  /** Language models for ai.* steps, with this run's usage accounting; undefined = none configured. */
  models?: ModelGateway;
  /** Stored DOCX/XLSX templates of the run's tenant (`transform.template`); undefined = not wired. */
  templates?: TemplateRenderer;
  /** The tenant's outbound e-mail servers (`action.email`); undefined = not wired. */
  email?: MailSender;
  /** `control.human_review`: parks the run on a review task; undefined = this host cannot pause runs. */
  humanReview?: HumanReviewGateway;
}

/** A file's bytes with the name and type it travels under. */
export interface NamedBytes {
  filename: string;
  contentType: string;
  bytes: Uint8Array;
}

export interface TemplateRenderer {
  /** Fills the template's current revision, or the pinned `templateRevisionId` (which outlives its template). */
  render(
    ref: { templateId?: string; templateRevisionId?: string },
    data: unknown,
    opts: { highlightNotFound: boolean; notFoundText: string },
  ): Promise<NamedBytes & { templateId: string; revisionId: string }>;
  /** Keeps a produced document as a reusable file of the tenant (`file_...`), e.g. for attachments. */
  keep(file: NamedBytes): Promise<{ fileId: string }>;
}

export interface MailMessage {
  /** An `ems_` id or a server's name. */
  server: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo?: string;
  subject: string;
  text: string;
  attachments: NamedBytes[];
}

export interface MailSent {
  serverId: string;
  messageId: string;
  provider: "smtp" | "resend";
  to: string[];
  cc: string[];
  bcc: string[];
  attachmentCount: number;
  totalBytes: number;
}

export interface MailSender {
  /** Reads a tenant file (`file_...`) to attach. */
  attachment(fileId: string): Promise<NamedBytes>;
  /**
   * Sends once per step execution `path`: a resumed run finds the earlier attempt and returns its
   * result (sent) or fails (outcome unknown) instead of sending again.
   */
  send(message: MailMessage, path: string): Promise<MailSent>;
}

export interface WorkflowTool {
  slug: string;
  description: string | null;
  inputSchema: Record<string, unknown> | null;
}

/** A field of a human-review task as the step selected it (JSON pointer into `data`). */
export interface ReviewField {
  path: string;
  value: unknown;
  required: boolean;
  reason: string;
}

export interface ParkRequest {
  step: { path: string; name: string; type: string; attempt: number; startedAt: string };
  data: unknown;
  fields: ReviewField[];
  includeRunInputs: boolean;
  attachments: FileRef[];
  instructions?: string;
  /** Shown to the reviewer as given: the step's `schema` and `fieldMetadata` (labels, confidences). */
  meta: { schema?: unknown; fieldMetadata?: unknown };
}

export interface HumanReviewGateway {
  /**
   * Creates the step's task (or finds the one an earlier attempt created) and sets the run `waiting`
   * in one transaction with the step record; returns the task id, or null when a cancel was requested.
   */
  park(req: ParkRequest): Promise<string | null>;
}

export interface ExecuteOptions {
  /** The parsed, validated workflow (type exported by the workflow parser). */
  workflow: unknown;
  input: Record<string, unknown>;
  journal: RunJournal;
  services: EngineServices;
  /**
   * Aborted when the run must stop (cancel, or a server shutdown): the step in flight runs to its end
   * and the engine stops at the next step boundary. Only pure waits (`control.wait`, retry delays)
   * end early on it, since cutting a wait short loses nothing.
   */
  signal: AbortSignal;
  /**
   * Aborted when in-flight steps must be interrupted now (a shutdown whose grace period ran out).
   * Interrupted steps are not journaled, so a resumed run executes them again.
   */
  interrupt?: AbortSignal;
  /** Evaluation runs skip side-effect steps such as action.email. */
  evaluation?: boolean;
  /** An evaluation run of a dataset example: templates read it as `eval` (`{{ eval.trial }}`). */
  eval?: EvalContext;
}

/**
 * What an evaluation run of an example knows about itself: the example, its experiment (null for a
 * single example run) and the trial (1-based; 1 unless the experiment runs each example `trials` times),
 * so a noisy step can seed its randomness by example and trial.
 */
export interface EvalContext {
  exampleId: string;
  experimentId: string | null;
  trial: number;
}

export interface ExecuteResult {
  /** `waiting`: a step parked the run (human review); it is durable and re-queued on approval. */
  status: "completed" | "failed" | "cancelled" | "waiting";
  output?: unknown;
  error?: { message: string; code?: string; statusCode?: number; step?: string };
}
