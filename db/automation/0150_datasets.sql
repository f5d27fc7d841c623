CREATE TABLE `dataset_examples` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`automation_id` text NOT NULL,
	`automation_type` text NOT NULL,
	`name` text NOT NULL,
	`input` text,
	`expected` text,
	`metadata` text,
	`annotation` text,
	`row_order` integer,
	`overrides` text,
	`latest_run_id` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dataset_examples_name` ON `dataset_examples` (`automation_id`,`name`);--> statement-breakpoint
CREATE INDEX `dataset_examples_tenant` ON `dataset_examples` (`tenant_id`,`automation_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `example_files` (
	`example_id` text NOT NULL REFERENCES `dataset_examples`(`id`) ON DELETE cascade,
	`folder` text NOT NULL,
	`path` text NOT NULL,
	`content_type` text NOT NULL,
	`size` integer NOT NULL,
	`sha256` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`example_id`, `folder`, `path`)
);
--> statement-breakpoint
CREATE TABLE `evaluator_configs` (
	`automation_id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`yaml` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `experiments` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`automation_id` text NOT NULL,
	`automation_type` text NOT NULL,
	`name` text,
	`version` text,
	`created_at` text NOT NULL,
	`completed_at` text,
	`cancelled_at` text
);
--> statement-breakpoint
CREATE INDEX `experiments_automation` ON `experiments` (`tenant_id`,`automation_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `run_evaluations` (
	`run_id` text PRIMARY KEY NOT NULL,
	`experiment_id` text,
	`score` real,
	`passed` integer NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `run_evaluations_experiment` ON `run_evaluations` (`experiment_id`);--> statement-breakpoint
CREATE TABLE `eval_results` (
	`id` text PRIMARY KEY NOT NULL,
	`run_id` text NOT NULL,
	`automation_id` text,
	`evaluator_name` text NOT NULL,
	`evaluator_type` text NOT NULL,
	`score` real,
	`passed` integer,
	`label` text,
	`weight` real,
	`pass_threshold` real,
	`description` text,
	`details` text,
	`error` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `eval_results_run` ON `eval_results` (`run_id`,`id`);--> statement-breakpoint
CREATE INDEX `runs_experiment` ON `runs` (`experiment_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `runs_example` ON `runs` (`example_id`);
