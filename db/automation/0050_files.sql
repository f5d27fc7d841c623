CREATE TABLE `files` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL REFERENCES `tenants`(`id`),
	`filename` text NOT NULL,
	`content_type` text NOT NULL,
	`size` integer NOT NULL,
	`sha256` text NOT NULL,
	`purpose` text,
	`created_at` text NOT NULL,
	`expires_at` text
);
--> statement-breakpoint
CREATE INDEX `files_tenant` ON `files` (`tenant_id`, `created_at`);
--> statement-breakpoint
CREATE INDEX `files_sha256` ON `files` (`sha256`);
--> statement-breakpoint
CREATE INDEX `files_expires` ON `files` (`expires_at`) WHERE `expires_at` IS NOT NULL;
--> statement-breakpoint
CREATE TABLE `blob_refs` (
	`sha256` text NOT NULL,
	`owner` text NOT NULL,
	`tenant_id` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`sha256`, `owner`)
);
--> statement-breakpoint
CREATE INDEX `blob_refs_owner` ON `blob_refs` (`owner`);
--> statement-breakpoint
CREATE TABLE `upload_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL REFERENCES `tenants`(`id`),
	`file_id` text NOT NULL,
	`filename` text NOT NULL,
	`content_type` text NOT NULL,
	`size` integer NOT NULL,
	`purpose` text,
	`idempotency_key` text,
	`status` text NOT NULL,
	`sha256` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`completed_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `upload_sessions_file_id_unique` ON `upload_sessions` (`file_id`);
--> statement-breakpoint
CREATE UNIQUE INDEX `upload_sessions_idempotency` ON `upload_sessions` (`tenant_id`, `idempotency_key`) WHERE `idempotency_key` IS NOT NULL;
--> statement-breakpoint
CREATE INDEX `upload_sessions_sha256` ON `upload_sessions` (`sha256`) WHERE `sha256` IS NOT NULL;
