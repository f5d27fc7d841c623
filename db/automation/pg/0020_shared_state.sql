-- State every instance on one database must share (SQLite 0020_shared_state): the GCRA row of each
-- API key's rate limit, and key material created once by the first instance.
-- UNLOGGED: a request's token must not wait for a WAL flush (a transaction writing only unlogged tables
-- commits without one); the price is that a crash of the database server (or a failover) empties the
-- table, which hands every key its full burst again.
CREATE UNLOGGED TABLE rate_limits (
	key_id text COLLATE "C" PRIMARY KEY,
	tat_us bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE shared_secrets (
	name text COLLATE "C" PRIMARY KEY,
	value text COLLATE "C",
	fingerprint text COLLATE "C" NOT NULL,
	created_at timestamptz NOT NULL
);
