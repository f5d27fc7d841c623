-- The audit trail (issue 37): one append-only hash chain per tenant (`tenant_key` is the tenant's id,
-- '' for requests no tenant is known for). `seq` is the entry's position in its chain (1, 2, ...),
-- `hash` = sha256 of the entry's canonical serialization including `prev_hash` (src/automation/audit/chain.ts).
-- One b-tree, no secondary index: every request that changes state appends a row, so an append must
-- cost little (the list's filters scan a tenant's chain newest first, by its primary key).
-- `audit_chains` holds each chain's head (its last position and hash): appends lock and advance it.
-- `audit_anchors` holds the last entry retention pruned (position and hash): verify starts from it.
CREATE TABLE `audit_entries` (
	`tenant_key` text NOT NULL,
	`seq` integer NOT NULL,
	`id` text NOT NULL,
	`at` text NOT NULL,
	`actor_type` text NOT NULL,
	`actor_id` text,
	`actor_name` text,
	`action` text NOT NULL,
	`resource_type` text,
	`resource_id` text,
	`request_id` text,
	`address` text,
	`outcome` text NOT NULL,
	`status` integer NOT NULL,
	`prev_hash` text NOT NULL,
	`hash` text NOT NULL,
	PRIMARY KEY (`tenant_key`, `seq`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `audit_chains` (
	`tenant_key` text PRIMARY KEY NOT NULL,
	`seq` integer NOT NULL,
	`hash` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `audit_anchors` (
	`tenant_key` text PRIMARY KEY NOT NULL,
	`seq` integer NOT NULL,
	`hash` text NOT NULL,
	`at` text NOT NULL,
	`pruned_at` text NOT NULL
);
