-- Inbound e-mail (src/automation/inbound/). Exactly once: a run started by a message carries
-- `dedupe_key` (`email:<automation id>:<sha256 of the Message-ID>`), unique, written in the same
-- transaction as the run and its files; a second delivery of the message fails the insert instead
-- of starting a second run. `trigger_detail` holds the trigger's extra fields (`{"email": {...}}`).
ALTER TABLE `runs` ADD `dedupe_key` text;
--> statement-breakpoint
ALTER TABLE `runs` ADD `trigger_detail` text;
--> statement-breakpoint
CREATE UNIQUE INDEX `runs_dedupe_key` ON `runs` (`dedupe_key`) WHERE `dedupe_key` IS NOT NULL;
--> statement-breakpoint
-- One address token per automation, minted on first read and never reused: `<slug>.<token>@<domain>`.
CREATE TABLE `inbound_addresses` (
	`automation_id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`token` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `inbound_addresses_token` ON `inbound_addresses` (`token`);
--> statement-breakpoint
-- Messages per envelope sender per minute (`minute` = epoch minute), counted in the database so every
-- instance sees the same count; rows of past minutes are pruned.
CREATE TABLE `inbound_sender_minutes` (
	`sender` text NOT NULL,
	`minute` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`sender`, `minute`)
);
