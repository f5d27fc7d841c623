-- The audit trail in blocks (src/automation/db/audit-blocks.ts): one row per chain per appended batch,
-- its entries packed in `entries` (a JSON array, oldest first), instead of one row per entry, so an
-- append costs one row whatever the batch holds. Blocks of a chain never overlap: the primary key
-- pages newest first (by `first_seq`), the index on `last_seq` oldest first. `first_at` and `last_at`
-- are the earliest and latest `at` in the block (time filters skip blocks by them).
-- Existing entries become one block each.
CREATE TABLE `audit_blocks` (
	`tenant_key` text NOT NULL,
	`first_seq` integer NOT NULL,
	`last_seq` integer NOT NULL,
	`first_at` text NOT NULL,
	`last_at` text NOT NULL,
	`entries` text NOT NULL,
	PRIMARY KEY (`tenant_key`, `first_seq`)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `audit_blocks_last` ON `audit_blocks` (`tenant_key`, `last_seq`);
--> statement-breakpoint
INSERT INTO `audit_blocks` (`tenant_key`, `first_seq`, `last_seq`, `first_at`, `last_at`, `entries`)
  SELECT `tenant_key`, `seq`, `seq`, `at`, `at`,
    json_array(json_array(`seq`, `id`, `at`, `actor_type`, `actor_id`, `actor_name`, `action`, `resource_type`, `resource_id`, `request_id`, `address`, `outcome`, `status`, `prev_hash`, `hash`))
  FROM `audit_entries` ORDER BY `tenant_key`, `seq`;
--> statement-breakpoint
DROP TABLE `audit_entries`;
