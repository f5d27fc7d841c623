// The SQLite backend of the automation server: every converted feature's store over one connection.
import type { Database } from "bun:sqlite";
import type { AutomationStorage } from "../storage";
import { SqliteAgentStore } from "./agents";
import { SqliteBacktestStore } from "./backtests";
import { SqliteDatasetStore } from "./datasets";
import { SqliteEvaluatorStore } from "./evaluators";
import { SqliteExperimentStore } from "./experiments";
import { SqliteHumanReviewStore } from "./human-review";
import { SqliteModelCallStore } from "./models";
import { SqliteReviewStore } from "./reviews";
import { SqliteRunStore } from "./runs";
import { sqliteScheduleStore } from "./schedules";
import { sqliteInboundStore } from "./inbound";
import { SqliteTemplateStore } from "./templates";
import { SqliteFileStore } from "./files";
import { SqliteEmailStore } from "./email";
import { SqliteAutomationStore, SqliteFoundationStats } from "./automations";
import { SqliteTenancyStore } from "./tenancy";
import { SqlitePeopleStore } from "./people";
import { SqliteAuditStore } from "./audit";
import { SqliteNotifications } from "./notifications";
import { sqliteRateLimitStore } from "./rate-limits";
import { sqliteSecretStore } from "./secrets";

export function sqliteStorage(sqlite: Database): AutomationStorage {
  // One runs store per connection: its journal group commit is flushed before a review parks a run.
  const runs = new SqliteRunStore(sqlite);
  return {
    runs,
    backend: "sqlite",
    templates: new SqliteTemplateStore(sqlite),
    evaluators: new SqliteEvaluatorStore(sqlite),
    datasets: new SqliteDatasetStore(sqlite),
    experiments: new SqliteExperimentStore(sqlite),
    backtests: new SqliteBacktestStore(sqlite),
    reviews: new SqliteReviewStore(sqlite),
    models: new SqliteModelCallStore(sqlite),
    schedules: sqliteScheduleStore(sqlite),
    inbound: sqliteInboundStore(sqlite),
    // The run moves of a review commit in its transaction.
    humanReview: new SqliteHumanReviewStore(sqlite, runs),
    agents: new SqliteAgentStore(sqlite),
    files: new SqliteFileStore(sqlite),
    email: new SqliteEmailStore(sqlite),
    tenancy: new SqliteTenancyStore(sqlite),
    people: new SqlitePeopleStore(sqlite),
    audit: new SqliteAuditStore(sqlite),
    automations: new SqliteAutomationStore(sqlite),
    stats: new SqliteFoundationStats(sqlite),
    // Delivered within the process: it is the database's only one.
    notifications: new SqliteNotifications(sqlite),
    rateLimits: sqliteRateLimitStore(sqlite),
    secrets: sqliteSecretStore(sqlite),
  };
}
