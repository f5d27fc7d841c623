-- Inbound e-mail (SQLite 0410_inbound_email): the unique dedupe key a message's run carries, the run's
-- trigger details, one address token per automation, and messages per sender per minute.
ALTER TABLE runs ADD COLUMN dedupe_key text COLLATE "C";
--> statement-breakpoint
ALTER TABLE runs ADD COLUMN trigger_detail json;
--> statement-breakpoint
CREATE UNIQUE INDEX runs_dedupe_key ON runs (dedupe_key) WHERE dedupe_key IS NOT NULL;
--> statement-breakpoint
CREATE TABLE inbound_addresses (
	automation_id text COLLATE "C" PRIMARY KEY,
	tenant_id text COLLATE "C" NOT NULL,
	token text COLLATE "C" NOT NULL,
	created_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX inbound_addresses_token ON inbound_addresses (token);
--> statement-breakpoint
CREATE TABLE inbound_sender_minutes (
	sender text COLLATE "C" NOT NULL,
	minute bigint NOT NULL,
	count integer NOT NULL,
	PRIMARY KEY (sender, minute)
);
