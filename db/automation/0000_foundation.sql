CREATE TABLE `tenants` (
	`id` text PRIMARY KEY NOT NULL,
	`slug` text NOT NULL,
	`name` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tenants_slug_unique` ON `tenants` (`slug`);
--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL REFERENCES `tenants`(`id`),
	`name` text,
	`hash` text NOT NULL,
	`hint` text NOT NULL,
	`scopes` text NOT NULL,
	`created_at` text NOT NULL,
	`last_used_at` text,
	`revoked_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_unique` ON `api_keys` (`hash`);
--> statement-breakpoint
CREATE INDEX `api_keys_tenant` ON `api_keys` (`tenant_id`);
--> statement-breakpoint
CREATE TABLE `automations` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL REFERENCES `tenants`(`id`),
	`type` text NOT NULL,
	`slug` text NOT NULL,
	`name` text,
	`description` text,
	`status` text NOT NULL,
	`current_version_id` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `automations_tenant_type_slug` ON `automations` (`tenant_id`, `type`, `slug`);
--> statement-breakpoint
CREATE TABLE `automation_versions` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL REFERENCES `tenants`(`id`),
	`automation_id` text NOT NULL REFERENCES `automations`(`id`),
	`version` text,
	`yaml` text NOT NULL,
	`source_ref` text,
	`message` text,
	`name` text,
	`description` text,
	`triggers` text NOT NULL,
	`input_schema` text,
	`output_schema` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `automation_versions_tag` ON `automation_versions` (`automation_id`, `version`) WHERE `version` IS NOT NULL;
--> statement-breakpoint
CREATE INDEX `automation_versions_automation` ON `automation_versions` (`automation_id`, `created_at`);
