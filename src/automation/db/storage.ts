// The automation server's storage: one async store per feature. Each feature declares the interface of
// its store in its own store.ts (the queries its service needs, with the rows they take and return);
// this module only lists them. The SQLite implementations live in sqlite/, the PostgreSQL ones in pg/.
// A multi-step invariant is one store method (decided inside the database: a conditional update, a
// transaction), never a read-then-write in a service. This module imports no implementation.
import type { AgentStore } from "../agents/store";
import type { AuditStore } from "../audit/store";
import type { AutomationStore, FoundationStats } from "../automations/store";
import type { BacktestStore } from "../backtests/store";
import type { DatasetStore } from "../datasets/store";
import type { EmailStore } from "../email/store";
import type { EvaluatorStore } from "../evaluators/store";
import type { ExperimentStore } from "../experiments/store";
import type { FileStore } from "../files/store";
import type { HumanReviewStore } from "../human-review/store";
import type { InboundStore } from "../inbound/store";
import type { ModelCallStore } from "../models/store";
import type { PeopleStore } from "../people/store";
import type { ReviewStore } from "../reviews/store";
import type { Notifications, RunStore } from "../runs/store";
import type { ScheduleStore } from "../schedules/store";
import type { SharedSecretStore } from "../shared-secrets/store";
import type { TemplateStore } from "../templates/store";
import type { RateLimitStore, TenancyStore } from "../tenancy/store";

export interface AutomationStorage {
  runs: RunStore;
  templates: TemplateStore;
  /** Cron ticks (schedules/store.ts declares the interface; a tick's claim is part of the run insert, `RunInsertOptions.tick`). */
  schedules: ScheduleStore;
  /** Inbound e-mail: address tokens, per-sender minute counts, runs by dedupe key (inbound/store.ts declares it). */
  inbound: InboundStore;
  backend: "sqlite" | "postgres";
  evaluators: EvaluatorStore;
  datasets: DatasetStore;
  experiments: ExperimentStore;
  /** Backtests: past runs replayed on a candidate version (backtests/store.ts declares it). */
  backtests: BacktestStore;
  reviews: ReviewStore;
  models: ModelCallStore;
  humanReview: HumanReviewStore;
  agents: AgentStore;
  files: FileStore;
  email: EmailStore;
  tenancy: TenancyStore;
  /** Users, memberships, sessions, one-time links and sign-in throttles (people/store.ts declares it). */
  people: PeopleStore;
  /** The audit trail: per-tenant hash chains of every state-changing request and sign-in (audit/store.ts declares it). */
  audit: AuditStore;
  automations: AutomationStore;
  /** Row counts for the metrics gauges. */
  stats: FoundationStats;
  /** Wake-ups across processes (runs queued, finished, cancelled); see CHANNELS in runs/store.ts. */
  notifications: Notifications;
  /** Per-API-key rate limits, counted in the database. */
  rateLimits: RateLimitStore;
  /** Key material every instance shares (used on PostgreSQL; SQLite keeps it in the data dir). */
  secrets: SharedSecretStore;
}
