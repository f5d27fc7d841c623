// The automation server's PostgreSQL migrations, embedded into the executable as text. Applied by
// `automation-server migrate --db postgres://…` (src/automation/db/pg-migrate.ts) under an advisory lock.
// Until the server serves from PostgreSQL (issue 21) the series is pre-release: 0000_init may still be
// rewritten; after that, only new files.
import type { Migration } from "../../../src/kernel/db";
import init from "./0000_init.sql" with { type: "text" };
import shared from "./0020_shared_state.sql" with { type: "text" };
import people from "./0030_people.sql" with { type: "text" };
import keysPeople from "./0031_keys_people.sql" with { type: "text" };
import peopleTotp from "./0032_people_totp.sql" with { type: "text" };
import ssoIdentities from "./0033_sso_identities.sql" with { type: "text" };
import ssoSessions from "./0034_sso_sessions.sql" with { type: "text" };
import tenantSso from "./0035_tenant_sso.sql" with { type: "text" };
import tenantSsoTrust from "./0036_tenant_sso_trust.sql" with { type: "text" };
import tenantOidcProviders from "./0037_tenant_oidc_providers.sql" with { type: "text" };
import tenantOidcRecheck from "./0038_tenant_oidc_recheck.sql" with { type: "text" };
import audit from "./0040_audit.sql" with { type: "text" };
import offers from "./0103_run_offers.sql" with { type: "text" };
import triggerEmail from "./0104_run_trigger_email.sql" with { type: "text" };
import stepInput from "./0105_step_input.sql" with { type: "text" };
import trials from "./0161_experiment_trials.sql" with { type: "text" };
import backtests from "./0170_backtests.sql" with { type: "text" };
import replyRequest from "./0201_human_review_reply_request.sql" with { type: "text" };
import decisionActor from "./0202_decision_actor.sql" with { type: "text" };
import schedules from "./0400_schedules.sql" with { type: "text" };
import inbound from "./0410_inbound_email.sql" with { type: "text" };
import auditBlocks from "./0420_audit_blocks.sql" with { type: "text" };

export const automationPgMigrations: Migration[] = [
  { name: "0000_init", sql: init },
  { name: "0020_shared_state", sql: shared },
  { name: "0030_people", sql: people },
  { name: "0031_keys_people", sql: keysPeople },
  { name: "0032_people_totp", sql: peopleTotp },
  { name: "0033_sso_identities", sql: ssoIdentities },
  { name: "0034_sso_sessions", sql: ssoSessions },
  { name: "0035_tenant_sso", sql: tenantSso },
  { name: "0036_tenant_sso_trust", sql: tenantSsoTrust },
  { name: "0037_tenant_oidc_providers", sql: tenantOidcProviders },
  { name: "0038_tenant_oidc_recheck", sql: tenantOidcRecheck },
  { name: "0040_audit", sql: audit },
  { name: "0103_run_offers", sql: offers },
  { name: "0104_run_trigger_email", sql: triggerEmail },
  { name: "0105_step_input", sql: stepInput },
  { name: "0161_experiment_trials", sql: trials },
  { name: "0170_backtests", sql: backtests },
  { name: "0201_human_review_reply_request", sql: replyRequest },
  { name: "0202_decision_actor", sql: decisionActor },
  { name: "0400_schedules", sql: schedules },
  { name: "0410_inbound_email", sql: inbound },
  { name: "0420_audit_blocks", sql: auditBlocks },
];
