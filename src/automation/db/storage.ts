// The automation server's storage: one async store per feature. Services, routes, the engine and the
// workers only ever see these interfaces; the SQLite implementations live in sqlite/ (a PostgreSQL one
// comes in pg/). A multi-step invariant is one method here (decided inside the database: a conditional
// update, a transaction), never a read-then-write in a service. This module imports no implementation.
import type { EvaluatorStore } from "../evaluators/store";
import type { DatasetStore } from "../datasets/store";
import type { ExperimentStore } from "../experiments/store";
import type { ScheduleStore } from "../schedules/store";
import type { AgentStore } from "../agents/store";
import type { TemplateStore } from "../templates/store";
import type { InboundStore } from "../inbound/store";
import type { ModelCallStore } from "../models/store";
import type { HumanReviewStore } from "../human-review/store";
import type { RateLimitStore, TenancyStore } from "../tenancy/store";
import type { AutomationStore, FoundationStats } from "../automations/store";
import type { ReviewStore } from "../reviews/store";
import type { FileStore } from "../files/store";
import type { EmailStore } from "../email/store";
import type { Notifications, RunStore } from "../runs/store";

// ---- State shared across instances: per-key rate limits, key material (migration 0020_shared_state) ----

/** A row of key material the instances share: the value (null when the operator holds it) and its fingerprint. */
export interface SharedSecret {
  value: string | null;
  fingerprint: string;
}

/** Key material created once for every instance of the database. */
export interface SharedSecretStore {
  /** The stored `name`, or `first` stored as it when there was none (racing callers all get the one stored). */
  claim(name: string, first: SharedSecret, at: string): Promise<SharedSecret>;
}

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
  reviews: ReviewStore;
  models: ModelCallStore;
  humanReview: HumanReviewStore;
  agents: AgentStore;
  files: FileStore;
  email: EmailStore;
  tenancy: TenancyStore;
  automations: AutomationStore;
  /** Row counts for the metrics gauges. */
  stats: FoundationStats;
  /** Wake-ups across processes (runs queued, finished, cancelled); see CHANNELS. */
  notifications: Notifications;
  /** Per-API-key rate limits, counted in the database. */
  rateLimits: RateLimitStore;
  /** Key material every instance shares (used on PostgreSQL; SQLite keeps it in the data dir). */
  secrets: SharedSecretStore;
}
