-- Backtests (SQLite 0170_backtests): past runs of an automation's active version replayed on a
-- candidate version as evaluation runs; one item per selected run with its replay (unique) and scores.
CREATE TABLE backtests (
	id text COLLATE "C" PRIMARY KEY,
	tenant_id text COLLATE "C" NOT NULL,
	automation_id text COLLATE "C" NOT NULL,
	base_version_id text COLLATE "C" NOT NULL,
	base_version text COLLATE "C",
	candidate_version_id text COLLATE "C" NOT NULL,
	candidate_version text COLLATE "C",
	selection text COLLATE "C" NOT NULL,
	seed bigint NOT NULL,
	run_total integer NOT NULL,
	created_by text COLLATE "C",
	created_at timestamptz NOT NULL,
	completed_at timestamptz,
	cancelled_at timestamptz
);
--> statement-breakpoint
CREATE INDEX backtests_automation ON backtests (tenant_id, automation_id, created_at);
--> statement-breakpoint
CREATE INDEX backtests_unfinished ON backtests (completed_at);
--> statement-breakpoint
CREATE TABLE backtest_items (
	backtest_id text COLLATE "C" NOT NULL REFERENCES backtests(id) ON DELETE CASCADE,
	position integer NOT NULL,
	original_run_id text COLLATE "C" NOT NULL,
	replay_run_id text COLLATE "C",
	state text COLLATE "C" NOT NULL DEFAULT 'pending',
	reason text COLLATE "C",
	expected_from text COLLATE "C",
	base_score double precision,
	base_passed boolean,
	base_scores text COLLATE "C",
	candidate_score double precision,
	candidate_passed boolean,
	candidate_scores text COLLATE "C",
	updated_at timestamptz,
	PRIMARY KEY (backtest_id, original_run_id)
);
--> statement-breakpoint
CREATE INDEX backtest_items_state ON backtest_items (backtest_id, state, position);
--> statement-breakpoint
CREATE UNIQUE INDEX backtest_items_replay ON backtest_items (replay_run_id) WHERE replay_run_id IS NOT NULL;
