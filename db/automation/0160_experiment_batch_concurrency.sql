ALTER TABLE `experiments` ADD `batch_concurrency` integer;--> statement-breakpoint
CREATE INDEX `runs_experiment_status` ON `runs` (`experiment_id`,`status`,`created_at`,`id`);
