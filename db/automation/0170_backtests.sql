-- Backtests (issue 39): past runs of an automation's active version replayed on a candidate version as
-- evaluation runs. One row per backtest, one item per selected run: its replay run (null until started,
-- unique: a run is replayed at most once), its state and both sides' scores, written once when scored.
CREATE TABLE `backtests` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`automation_id` text NOT NULL,
	`base_version_id` text NOT NULL,
	`base_version` text,
	`candidate_version_id` text NOT NULL,
	`candidate_version` text,
	`selection` text NOT NULL,
	`seed` integer NOT NULL,
	`run_total` integer NOT NULL,
	`created_by` text,
	`created_at` text NOT NULL,
	`completed_at` text,
	`cancelled_at` text
);
--> statement-breakpoint
CREATE INDEX `backtests_automation` ON `backtests` (`tenant_id`,`automation_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `backtests_unfinished` ON `backtests` (`completed_at`);--> statement-breakpoint
CREATE TABLE `backtest_items` (
	`backtest_id` text NOT NULL,
	`position` integer NOT NULL,
	`original_run_id` text NOT NULL,
	`replay_run_id` text,
	`state` text DEFAULT 'pending' NOT NULL,
	`reason` text,
	`expected_from` text,
	`base_score` real,
	`base_passed` integer,
	`base_scores` text,
	`candidate_score` real,
	`candidate_passed` integer,
	`candidate_scores` text,
	`updated_at` text,
	PRIMARY KEY (`backtest_id`, `original_run_id`),
	FOREIGN KEY (`backtest_id`) REFERENCES `backtests`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `backtest_items_state` ON `backtest_items` (`backtest_id`,`state`,`position`);--> statement-breakpoint
CREATE UNIQUE INDEX `backtest_items_replay` ON `backtest_items` (`replay_run_id`) WHERE `replay_run_id` IS NOT NULL;
