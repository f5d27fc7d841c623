// The typed TypeScript client of the automation server.
//
//   const client = new AutomationClient();            // AUTOMATION_BASE_URL / AUTOMATION_API_KEY
//   const wf = await client.automations.create(yaml);
//   const run = await client.run(`workflows.${wf.slug}`, { invoice }, { waitForCompletion: 30 });
import { AutomationsResource } from "./automations";
import { BacktestsResource } from "./backtests";
import { EmailServersResource, TemplatesResource } from "./documents";
import { AutomationError } from "./errors";
import { DatasetResource, EvaluatorsResource, ExamplesResource, ExperimentsResource } from "./evaluation";
import { FilesResource } from "./files";
import { HumanReviewsResource } from "./human-reviews";
import { ModelsResource } from "./models";
import { AuditResource, AuthSessionsResource, MembersResource } from "./people";
import { KeysResource } from "./keys";
import { DEFAULT_MULTIPART_MAX_BYTES, RunsResource, type RunAndWaitOptions, type RunOptions, type RunTarget } from "./runs";
import { ReviewsResource } from "./reviews";
import { Transport } from "./transport";
import type { AuthCheck, Run } from "./types";

export * from "./errors";
export type * from "./types";
export type { FileInput, UploadOptions } from "./files";
export type { TemplateSource } from "./documents";
export type { Comparison, ExampleMutation, ExampleTrials, Experiment, ExperimentCreate, ExperimentDetail, ExperimentLine, OverallSpread, Spread, TrialStats } from "./evaluation";
export type { BacktestDetail, BacktestLine, BacktestSelect, BacktestSummary, ChangedRun } from "./backtests";
export type { RunTarget, RunOptions, RunAndWaitOptions } from "./runs";
export type { ReviewHealth, ReviewHealthCounts, ReviewHealthQuery, ReviewInput, Promotion } from "./reviews";
export type { HumanReviewListQuery, TaskConflictInfo } from "./human-reviews";
export { taskConflict } from "./human-reviews";
export { filesToPreUpload, DEFAULT_MULTIPART_MAX_BYTES } from "./runs";
export { parseRetryAfter } from "./transport";
export type { AuditEntry, AuditPage, AuditQuery, CurrentSession, Invitation, Member, ResetLink, SsoLink, SecondFactorStatus, SessionInfo, SessionLine, SignInInput, SignInProvider, TenantPeopleSettings, TenantSsoSettings, TenantSsoProvider, NewTenantSsoProvider } from "./people";
export type { KeyCreate, KeyInfo, KeyPage, MadeKey } from "./keys";

export interface ClientOptions {
  /** Default `AUTOMATION_BASE_URL`, else http://localhost:8081. */
  baseUrl?: string;
  /** Default `AUTOMATION_API_KEY`; required unless `session` is given. */
  apiKey?: string;
  /**
   * A browser's cookie session instead of a key (the console): no Authorization header, the cookie
   * goes along (`credentials: "same-origin"`), and writes carry `x-csrf-token` when a token is given.
   */
  session?: { csrfToken?: string };
  /** Per request, default 60 000. */
  timeoutMs?: number;
  /** Retries on 429/5xx/timeouts/network errors, default 3. */
  maxRetries?: number;
  /** First backoff step in ms (doubles per retry), default 250. */
  retryBaseMs?: number;
  /** Largest wait between retries, also for Retry-After, default 30 000. */
  maxRetryDelayMs?: number;
  /** Run file inputs beyond this total are uploaded first; default 4.5 MiB; null = never. */
  multipartMaxBytes?: number | null;
  defaultHeaders?: Record<string, string>;
}

export class AutomationClient {
  readonly automations: AutomationsResource;
  readonly files: FilesResource;
  readonly runs: RunsResource;
  readonly examples: ExamplesResource;
  readonly dataset: DatasetResource;
  readonly evaluators: EvaluatorsResource;
  readonly experiments: ExperimentsResource;
  readonly backtests: BacktestsResource;
  readonly templates: TemplatesResource;
  readonly emailServers: EmailServersResource;
  readonly reviews: ReviewsResource;
  readonly humanReviews: HumanReviewsResource;
  readonly models: ModelsResource;
  /** Password sign-in and the signed-in person's sessions. */
  readonly sessions: AuthSessionsResource;
  readonly members: MembersResource;
  readonly audit: AuditResource;
  /** API keys made through the API: create (the secret shown once), list, revoke. */
  readonly keys: KeysResource;
  private readonly http: Transport;

  constructor(options: ClientOptions = {}, env: Record<string, string | undefined> = process.env) {
    const session = options.session;
    const apiKey = session ? undefined : (options.apiKey ?? env.AUTOMATION_API_KEY);
    if (!apiKey && !session) {
      throw new AutomationError("no API key: pass { apiKey } or set AUTOMATION_API_KEY", { status: 0 });
    }
    const baseUrl = options.baseUrl ?? env.AUTOMATION_BASE_URL ?? "http://localhost:8081";
    if (!/^https?:\/\//i.test(baseUrl)) throw new AutomationError(`baseUrl must be an http(s) URL (got "${baseUrl}")`, { status: 0 });
    this.http = new Transport({
      baseUrl,
      apiKey,
      session,
      timeoutMs: options.timeoutMs ?? 60_000,
      maxRetries: options.maxRetries ?? 3,
      retryBaseMs: options.retryBaseMs ?? 250,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 30_000,
      defaultHeaders: options.defaultHeaders ?? {},
    });
    const multipartMaxBytes = options.multipartMaxBytes === undefined ? DEFAULT_MULTIPART_MAX_BYTES : options.multipartMaxBytes;
    this.automations = new AutomationsResource(this.http);
    this.files = new FilesResource(this.http);
    this.runs = new RunsResource(this.http, this.files, multipartMaxBytes);
    this.examples = new ExamplesResource(this.http);
    this.dataset = new DatasetResource(this.http);
    this.evaluators = new EvaluatorsResource(this.http);
    this.experiments = new ExperimentsResource(this.http);
    this.backtests = new BacktestsResource(this.http);
    this.templates = new TemplatesResource(this.http);
    this.emailServers = new EmailServersResource(this.http);
    this.reviews = new ReviewsResource(this.http);
    this.humanReviews = new HumanReviewsResource(this.http);
    this.models = new ModelsResource(this.http);
    this.sessions = new AuthSessionsResource(this.http);
    this.members = new MembersResource(this.http);
    this.audit = new AuditResource(this.http);
    this.keys = new KeysResource(this.http);
  }

  get baseUrl(): string {
    return this.http.opts.baseUrl;
  }

  /** Who this key (or session) is (`GET /v1/auth/check`). */
  authCheck(): Promise<AuthCheck> {
    return this.http.json({ method: "GET", path: "/v1/auth/check" });
  }

  /** Starts a run; with `waitForCompletion` the server holds the request up to that many seconds. */
  run(target: RunTarget, input?: Record<string, unknown>, options?: RunOptions): Promise<Run> {
    return this.runs.start(target, input, options);
  }

  /** Starts a run and polls until it is terminal. */
  runAndWait(target: RunTarget, input?: Record<string, unknown>, options?: RunAndWaitOptions): Promise<Run> {
    return this.runs.startAndWait(target, input, options);
  }

  rerun(runId: string, options?: { version?: string; waitForCompletion?: number }): Promise<Run> {
    return this.runs.rerun(runId, options);
  }
}
