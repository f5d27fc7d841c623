CREATE TABLE `runs` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`type` text NOT NULL,
	`automation_id` text NOT NULL,
	`automation_name` text,
	`automation_slug` text,
	`version_id` text,
	`version_label` text,
	`source_ref` text,
	`definition` text NOT NULL,
	`status` text NOT NULL,
	`trigger_type` text,
	`triggered_by` text,
	`triggered_by_name` text,
	`batch_id` text,
	`example_id` text,
	`experiment_id` text,
	`evaluation` integer DEFAULT 0 NOT NULL,
	`input` text NOT NULL,
	`metadata` text,
	`overrides` text,
	`output` text,
	`error` text,
	`sample_rank` real NOT NULL,
	`retry_number` integer DEFAULT 0 NOT NULL,
	`previous_run_id` text,
	`next_run_id` text,
	`parent_run_id` text,
	`created_at` text NOT NULL,
	`started_at` text,
	`completed_at` text,
	`cancel_requested_at` text,
	`claimed_by` text,
	`lease_until` integer,
	`attempts` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `runs_tenant_created` ON `runs` (`tenant_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `runs_tenant_completed` ON `runs` (`tenant_id`,`completed_at`,`id`);--> statement-breakpoint
CREATE INDEX `runs_queue` ON `runs` (`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `runs_tenant_automation` ON `runs` (`tenant_id`,`automation_id`);--> statement-breakpoint
CREATE TABLE `run_steps` (
	`run_id` text NOT NULL,
	`path` text NOT NULL,
	`seq` integer NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`status` text NOT NULL,
	`output` text,
	`error` text,
	`attempt` integer NOT NULL,
	`started_at` text NOT NULL,
	`completed_at` text,
	PRIMARY KEY(`run_id`, `path`),
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `run_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_id` text NOT NULL,
	`type` text NOT NULL,
	`timestamp` text NOT NULL,
	`status` text,
	`message` text,
	`metadata` text,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `run_events_run` ON `run_events` (`run_id`,`id`);--> statement-breakpoint
CREATE TABLE `run_files` (
	`run_id` text NOT NULL,
	`path` text NOT NULL,
	`role` text NOT NULL,
	`name` text NOT NULL,
	`content_type` text NOT NULL,
	`size` integer NOT NULL,
	`sha256` text NOT NULL,
	`step_name` text,
	`file_id` text,
	`created_at` text NOT NULL,
	PRIMARY KEY(`run_id`, `path`),
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
