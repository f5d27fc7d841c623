-- People, second part (SQLite 0032_people_totp): the sealed TOTP secrets, the last accepted step, and
-- the tenant's settings (require_totp).
ALTER TABLE users ADD COLUMN totp_secret text COLLATE "C";
--> statement-breakpoint
ALTER TABLE users ADD COLUMN totp_pending text COLLATE "C";
--> statement-breakpoint
ALTER TABLE users ADD COLUMN totp_last_step bigint;
--> statement-breakpoint
CREATE TABLE tenant_settings (
	tenant_id text COLLATE "C" PRIMARY KEY REFERENCES tenants (id),
	require_totp boolean NOT NULL DEFAULT false,
	updated_at timestamptz NOT NULL
);
