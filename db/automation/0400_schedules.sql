-- One row per cron tick decided: claimed by the instance that starts its run (in the transaction that
-- inserts the run, so a tick can never start two runs, across restarts and instances) or recorded as
-- skipped (overlap, catch-up policy). `schedule_key` identifies a schedule by its expression, time
-- zone and input, so a new version with the same schedule continues its ticks.
CREATE TABLE `schedule_ticks` (
	`automation_id` text NOT NULL REFERENCES `automations`(`id`),
	`schedule_key` text NOT NULL,
	`scheduled_at` text NOT NULL,
	`tenant_id` text NOT NULL,
	`outcome` text NOT NULL,
	`run_id` text,
	`decided_at` text NOT NULL,
	PRIMARY KEY (`automation_id`, `schedule_key`, `scheduled_at`)
);
