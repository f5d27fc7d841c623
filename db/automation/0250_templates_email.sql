CREATE TABLE `templates` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL REFERENCES `tenants`(`id`),
	`name` text NOT NULL,
	`description` text,
	`current_revision_id` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`deleted_at` text
);
--> statement-breakpoint
CREATE INDEX `templates_tenant` ON `templates` (`tenant_id`, `created_at`) WHERE `deleted_at` IS NULL;
--> statement-breakpoint
CREATE TABLE `template_revisions` (
	`id` text PRIMARY KEY NOT NULL,
	`template_id` text NOT NULL REFERENCES `templates`(`id`),
	`tenant_id` text NOT NULL,
	`number` integer NOT NULL,
	`filename` text NOT NULL,
	`format` text NOT NULL,
	`mime_type` text NOT NULL,
	`size` integer NOT NULL,
	`sha256` text NOT NULL,
	`tokens` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `template_revisions_number` ON `template_revisions` (`template_id`, `number`);
--> statement-breakpoint
CREATE TABLE `email_servers` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL REFERENCES `tenants`(`id`),
	`name` text NOT NULL,
	`enabled` integer NOT NULL DEFAULT 1,
	`transport` text NOT NULL,
	`from_email` text NOT NULL,
	`from_name` text,
	`host` text,
	`port` integer,
	`security` text,
	`username` text,
	`ca_pem` text,
	`secret` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`deleted_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `email_servers_live_name` ON `email_servers` (`tenant_id`, `name`) WHERE `deleted_at` IS NULL;
--> statement-breakpoint
CREATE INDEX `email_servers_tenant` ON `email_servers` (`tenant_id`, `created_at`);
--> statement-breakpoint
CREATE TABLE `email_deliveries` (
	`run_id` text NOT NULL,
	`step_path` text NOT NULL,
	`tenant_id` text NOT NULL,
	`server_id` text NOT NULL,
	`state` text NOT NULL,
	`result` text,
	`created_at` text NOT NULL,
	PRIMARY KEY(`run_id`, `step_path`)
);
