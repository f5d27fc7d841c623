-- People (issue 37): users, their memberships in tenants (one role each), browser sessions, one-time
-- links (the first owner's setup, invitations) and sign-in throttles. Every secret is a sha256 hex
-- (the session id, the link token); passwords are argon2id hashes (Bun.password).
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`email_key` text NOT NULL,
	`name` text NOT NULL,
	`status` text NOT NULL,
	`password_hash` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_key_unique` ON `users` (`email_key`);
--> statement-breakpoint
CREATE TABLE `memberships` (
	`user_id` text NOT NULL REFERENCES `users` (`id`),
	`tenant_id` text NOT NULL REFERENCES `tenants` (`id`),
	`role` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY (`user_id`, `tenant_id`)
);
--> statement-breakpoint
CREATE INDEX `memberships_tenant` ON `memberships` (`tenant_id`);
--> statement-breakpoint
-- `id` is the public `ses_` id; `hash` the sha256 of the cookie's value; `csrf` the token the console
-- sends in x-csrf-token. Idle expiry from `last_seen_at`, absolute from `expires_at`.
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`hash` text NOT NULL,
	`user_id` text NOT NULL REFERENCES `users` (`id`),
	`tenant_id` text NOT NULL REFERENCES `tenants` (`id`),
	`csrf` text NOT NULL,
	`created_at` text NOT NULL,
	`last_seen_at` text NOT NULL,
	`expires_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_hash_unique` ON `sessions` (`hash`);
--> statement-breakpoint
CREATE INDEX `sessions_user` ON `sessions` (`user_id`);
--> statement-breakpoint
-- One-time links: `setup` (the first owner, no tenant yet) and `invite` (an e-mail, a tenant, a role).
CREATE TABLE `invitations` (
	`id` text PRIMARY KEY NOT NULL,
	`hash` text NOT NULL,
	`kind` text NOT NULL,
	`email` text,
	`tenant_id` text REFERENCES `tenants` (`id`),
	`role` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invitations_hash_unique` ON `invitations` (`hash`);
--> statement-breakpoint
-- Failed sign-ins per subject (`account:<email>`, `address:<ip>`) in a fixed window: shared by every
-- instance on the database.
CREATE TABLE `sign_in_failures` (
	`subject` text PRIMARY KEY NOT NULL,
	`failures` integer NOT NULL,
	`window_start_ms` integer NOT NULL
);
