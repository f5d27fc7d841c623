ALTER TABLE `experiments` ADD `trials` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `trial` integer;
