ALTER TABLE `experiments` ADD `run_total` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `experiments` ADD `ready_at` text;
