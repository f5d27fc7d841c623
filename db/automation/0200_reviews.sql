CREATE TABLE `run_reviews` (
	`run_id` text PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`automation_id` text NOT NULL,
	`verdict` text,
	`status` text NOT NULL,
	`note` text DEFAULT '' NOT NULL,
	`corrected_output` text,
	`correction_count` integer DEFAULT 0 NOT NULL,
	`reviewed_by` text,
	`reviewed_by_email` text,
	`reviewed_at` text NOT NULL,
	`closed_by` text,
	`closed_by_email` text,
	`closed_at` text,
	`closed_note` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `run_reviews_tenant_automation` ON `run_reviews` (`tenant_id`,`automation_id`);--> statement-breakpoint
CREATE INDEX `run_reviews_tenant_closed` ON `run_reviews` (`tenant_id`,`closed_at`);--> statement-breakpoint
CREATE TABLE `run_review_corrections` (
	`id` text PRIMARY KEY NOT NULL,
	`run_id` text NOT NULL,
	`position` integer NOT NULL,
	`kind` text NOT NULL,
	`path` text NOT NULL,
	`label` text,
	`original_value` text,
	`corrected_value` text,
	`note` text DEFAULT '' NOT NULL,
	`corrected_artifact_path` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `run_review_corrections_run` ON `run_review_corrections` (`run_id`,`position`);--> statement-breakpoint
CREATE TABLE `run_review_files` (
	`run_id` text NOT NULL,
	`name` text NOT NULL,
	`content_type` text NOT NULL,
	`size` integer NOT NULL,
	`sha256` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`run_id`, `name`),
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `human_review_tasks` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`run_id` text NOT NULL,
	`step_path` text NOT NULL,
	`automation_id` text NOT NULL,
	`automation_name` text,
	`source_label` text NOT NULL,
	`status` text NOT NULL,
	`required_count` integer NOT NULL,
	`confirmed_count` integer DEFAULT 0 NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	`data` text NOT NULL,
	`files` text NOT NULL,
	`instructions` text,
	`meta` text,
	`decided_by` text,
	`decided_at` text,
	`reason` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `human_review_tasks_step` ON `human_review_tasks` (`run_id`,`step_path`);--> statement-breakpoint
CREATE INDEX `human_review_tasks_queue` ON `human_review_tasks` (`tenant_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `human_review_decisions` (
	`id` text PRIMARY KEY NOT NULL,
	`task_id` text NOT NULL,
	`position` integer NOT NULL,
	`path` text NOT NULL,
	`original_value` text,
	`current_value` text,
	`required` integer NOT NULL,
	`reason` text,
	`confirmed` integer DEFAULT 0 NOT NULL,
	`confirmed_by` text,
	`confirmed_at` text,
	`version` integer DEFAULT 1 NOT NULL,
	FOREIGN KEY (`task_id`) REFERENCES `human_review_tasks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `human_review_decisions_path` ON `human_review_decisions` (`task_id`,`path`);--> statement-breakpoint
CREATE TABLE `human_review_replies` (
	`task_id` text NOT NULL,
	`idempotency_key` text NOT NULL,
	`status` integer NOT NULL,
	`body` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`task_id`, `idempotency_key`),
	FOREIGN KEY (`task_id`) REFERENCES `human_review_tasks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
-- Whatever ends a run (cancel, a failure, too many restarts) also ends its pending review task, in the
-- same transaction as the status change: no code path can leave a task open on a finished run.
CREATE TRIGGER `human_review_tasks_end_with_run` AFTER UPDATE OF `status` ON `runs`
WHEN NEW.`status` IN ('completed', 'failed', 'cancelled', 'rejected') AND OLD.`status` <> NEW.`status`
BEGIN
	UPDATE `human_review_tasks` SET `status` = 'cancelled', `version` = `version` + 1,
		`updated_at` = COALESCE(NEW.`completed_at`, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
	WHERE `run_id` = NEW.`id` AND `status` = 'pending';
END;
