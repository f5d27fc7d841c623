// Every automation-server migration, embedded into the executable, in name order.
// Ranges: 0000-0049 foundation (tenancy, automations, state shared across instances), 0050-0099 files,
// 0100-0149 runs, 0150-0199 datasets/evaluators/experiments, 0200-0249 reviews/human-review tasks,
// 0250-0299 templates/e-mail servers, 0300-0349 models/usage, 0350-0399 agents, 0400-0449 triggers (schedules, inbound e-mail).
import type { Migration } from "../../src/kernel/db";
import m0000 from "./0000_foundation.sql" with { type: "text" };
import m0020 from "./0020_shared_state.sql" with { type: "text" };
import m0030 from "./0030_people.sql" with { type: "text" };
import m0031 from "./0031_keys_people.sql" with { type: "text" };
import m0032 from "./0032_people_totp.sql" with { type: "text" };
import m0033 from "./0033_sso_identities.sql" with { type: "text" };
import m0034 from "./0034_sso_sessions.sql" with { type: "text" };
import m0035 from "./0035_tenant_sso.sql" with { type: "text" };
import m0036 from "./0036_tenant_sso_trust.sql" with { type: "text" };
import m0037 from "./0037_tenant_oidc_providers.sql" with { type: "text" };
import m0038 from "./0038_tenant_oidc_recheck.sql" with { type: "text" };
import m0040 from "./0040_audit.sql" with { type: "text" };
import m0050 from "./0050_files.sql" with { type: "text" };
import m0060 from "./0060_upload_sessions_direct.sql" with { type: "text" };
import m0100 from "./0100_runs.sql" with { type: "text" };
import m0101 from "./0101_run_request_id.sql" with { type: "text" };
import m0102 from "./0102_runs_tenant_started.sql" with { type: "text" };
import m0103 from "./0103_run_offers.sql" with { type: "text" };
import m0104 from "./0104_run_trigger_email.sql" with { type: "text" };
import m0105 from "./0105_step_input.sql" with { type: "text" };
import m0150 from "./0150_datasets.sql" with { type: "text" };
import m0151 from "./0151_experiment_progress.sql" with { type: "text" };
import m0160 from "./0160_experiment_batch_concurrency.sql" with { type: "text" };
import m0161 from "./0161_experiment_trials.sql" with { type: "text" };
import m0170 from "./0170_backtests.sql" with { type: "text" };
import m0200 from "./0200_reviews.sql" with { type: "text" };
import m0201 from "./0201_human_review_reply_request.sql" with { type: "text" };
import m0202 from "./0202_decision_actor.sql" with { type: "text" };
import m0250 from "./0250_templates_email.sql" with { type: "text" };
import m0300 from "./0300_model_calls.sql" with { type: "text" };
import m0350 from "./0350_agents.sql" with { type: "text" };
import m0351 from "./0351_run_requested_ref.sql" with { type: "text" };
import m0400 from "./0400_schedules.sql" with { type: "text" };
import m0410 from "./0410_inbound_email.sql" with { type: "text" };
import m0420 from "./0420_audit_blocks.sql" with { type: "text" };

export const migrations: Migration[] = [
  { name: "0000_foundation", sql: m0000 },
  { name: "0020_shared_state", sql: m0020 },
  { name: "0030_people", sql: m0030 },
  { name: "0031_keys_people", sql: m0031 },
  { name: "0032_people_totp", sql: m0032 },
  { name: "0033_sso_identities", sql: m0033 },
  { name: "0034_sso_sessions", sql: m0034 },
  { name: "0035_tenant_sso", sql: m0035 },
  { name: "0036_tenant_sso_trust", sql: m0036 },
  { name: "0037_tenant_oidc_providers", sql: m0037 },
  { name: "0038_tenant_oidc_recheck", sql: m0038 },
  { name: "0040_audit", sql: m0040 },
  { name: "0050_files", sql: m0050 },
  { name: "0060_upload_sessions_direct", sql: m0060 },
  { name: "0100_runs", sql: m0100 },
  { name: "0101_run_request_id", sql: m0101 },
  { name: "0102_runs_tenant_started", sql: m0102 },
  { name: "0103_run_offers", sql: m0103 },
  { name: "0104_run_trigger_email", sql: m0104 },
  { name: "0105_step_input", sql: m0105 },
  { name: "0150_datasets", sql: m0150 },
  { name: "0151_experiment_progress", sql: m0151 },
  { name: "0160_experiment_batch_concurrency", sql: m0160 },
  { name: "0161_experiment_trials", sql: m0161 },
  { name: "0170_backtests", sql: m0170 },
  { name: "0200_reviews", sql: m0200 },
  { name: "0201_human_review_reply_request", sql: m0201 },
  { name: "0202_decision_actor", sql: m0202 },
  { name: "0250_templates_email", sql: m0250 },
  { name: "0300_model_calls", sql: m0300 },
  { name: "0350_agents", sql: m0350 },
  { name: "0351_run_requested_ref", sql: m0351 },
  { name: "0400_schedules", sql: m0400 },
  { name: "0410_inbound_email", sql: m0410 },
  { name: "0420_audit_blocks", sql: m0420 },
];
