-- People, second part (issue 37): a TOTP second factor per user and the tenant's requirement of one.
-- `totp_secret` (confirmed) and `totp_pending` (enrolled, not yet confirmed) are AES-256-GCM sealed under
-- the server's secret key (src/automation/secrets.ts): a TOTP secret must be read back to check a code, so
-- it is encrypted, not hashed. `totp_last_step` is the 30 s step of the last accepted code: a code is
-- refused unless its step is later (no replay within its window), decided by one conditional UPDATE.
ALTER TABLE `users` ADD COLUMN `totp_secret` text;
--> statement-breakpoint
ALTER TABLE `users` ADD COLUMN `totp_pending` text;
--> statement-breakpoint
ALTER TABLE `users` ADD COLUMN `totp_last_step` integer;
--> statement-breakpoint
-- Settings an owner sets for the tenant; no row means the defaults.
CREATE TABLE `tenant_settings` (
	`tenant_id` text PRIMARY KEY NOT NULL REFERENCES `tenants` (`id`),
	`require_totp` integer DEFAULT 0 NOT NULL,
	`updated_at` text NOT NULL
);
