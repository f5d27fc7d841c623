// The PostgreSQL backend of the automation server: every converted feature's store over one pool.
import type { SQL } from "bun";
import type { AutomationStorage } from "../storage";
import { PgAgentStore } from "./agents";
import { PgDatasetStore } from "./datasets";
import { PgEvaluatorStore } from "./evaluators";
import { PgBacktestStore } from "./backtests";
import { PgExperimentStore } from "./experiments";
import { PgHumanReviewStore } from "./human-review";
import { PgInboundStore } from "./inbound";
import { PgModelCallStore } from "./models";
import { PgReviewStore } from "./reviews";
import { PgRunStore } from "./runs";
import { PgScheduleStore } from "./schedules";
import { PgTemplateStore } from "./templates";
import { PgFileStore } from "./files";
import { PgEmailStore } from "./email";
import { PgAutomationStore, PgFoundationStats } from "./automations";
import { PgTenancyStore } from "./tenancy";
import { PgPeopleStore } from "./people";
import { PgAuditStore } from "./audit";
import { PgNotifications } from "./notifications";
import { PgRateLimitStore } from "./rate-limits";
import { PgSecretStore } from "./secrets";

// Every store of AutomationStorage as of the runs conversion; stores other conversions add to the
// interface (files, e-mail, automations/tenancy, ...) are wired here by them.
export function pgStorage(pg: SQL): AutomationStorage {
  const runs = new PgRunStore(pg);
  const notifications = new PgNotifications(pg);
  return {
    backend: "postgres",
    runs,
    // Parks and decisions move the run in the task's transaction; a park first flushes the runs journal.
    humanReview: new PgHumanReviewStore(pg, runs),
    schedules: new PgScheduleStore(pg),
    templates: new PgTemplateStore(pg),
    evaluators: new PgEvaluatorStore(pg),
    datasets: new PgDatasetStore(pg),
    experiments: new PgExperimentStore(pg),
    backtests: new PgBacktestStore(pg),
    reviews: new PgReviewStore(pg),
    models: new PgModelCallStore(pg),
    agents: new PgAgentStore(pg),
    files: new PgFileStore(pg),
    email: new PgEmailStore(pg),
    // Its exactly-once key (the run's dedupe key) is written by the run insert.
    inbound: new PgInboundStore(pg),
    tenancy: new PgTenancyStore(pg, notifications),
    people: new PgPeopleStore(pg, notifications),
    // Appends lock the chain head row: instances never fork a tenant's chain.
    audit: new PgAuditStore(pg),
    automations: new PgAutomationStore(pg),
    stats: new PgFoundationStats(pg),
    // LISTEN on the client's one listening connection, opened by the first subscribe.
    notifications,
    // Shared by every instance on the database: a request's token is one upsert; key material is created once.
    rateLimits: new PgRateLimitStore(pg),
    secrets: new PgSecretStore(pg),
  };
}
