-- The login throttle's failures live in the database, so every instance on it counts the same.
CREATE TABLE `login_failures` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`key` text NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `login_failures_key_at` ON `login_failures` (`key`,`at`);--> statement-breakpoint
CREATE INDEX `login_failures_at` ON `login_failures` (`at`);
