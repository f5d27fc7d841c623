CREATE TABLE `agent_sources` (
	`automation_id` text PRIMARY KEY NOT NULL REFERENCES `automations`(`id`),
	`tenant_id` text NOT NULL REFERENCES `tenants`(`id`),
	`repo` text NOT NULL,
	`mirror` text,
	`release_tag` text,
	`release_commit` text,
	`synced_at` text,
	`created_at` text NOT NULL
);
