-- State every instance on one database must share (issue 24), decided in the database.
-- Per-API-key rate limit (`--rate-limit N`) as GCRA: one row per key holding its theoretical arrival
-- time (epoch microseconds); a request's token is taken by one conditional upsert of this row.
CREATE TABLE `rate_limits` (
	`key_id` text PRIMARY KEY NOT NULL,
	`tat_us` integer NOT NULL
);
--> statement-breakpoint
-- Key material every instance must share, created once by the first instance (INSERT … ON CONFLICT DO
-- NOTHING, then read): `signing-secret` (signed URLs and tokens) and `secret-key` (seals stored
-- third-party secrets). `value` is NULL when the operator gives the key (--secret-key-file): only its
-- fingerprint (HMAC) is kept, so an instance started with another key is refused.
CREATE TABLE `shared_secrets` (
	`name` text PRIMARY KEY NOT NULL,
	`value` text,
	`fingerprint` text NOT NULL,
	`created_at` text NOT NULL
);
