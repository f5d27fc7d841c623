-- The audit trail in blocks (SQLite 0420_audit_blocks; src/automation/db/audit-blocks.ts): one row per
-- chain per appended batch, its entries packed in `entries` (a JSON array, oldest first), instead of one
-- row per entry. `entries` is compressed with lz4 where the server has it (measured on 45 KB blocks:
-- ~2.5 us of PostgreSQL's CPU an entry, against ~7 with the default pglz and ~3.1 uncompressed at twice
-- the size); a server without lz4 keeps pglz. Existing entries become one block each, their
-- `at` written as the server writes it (ISO 8601, milliseconds, Z), which their hashes cover.
CREATE TABLE audit_blocks (
	tenant_key text COLLATE "C" NOT NULL,
	first_seq bigint NOT NULL,
	last_seq bigint NOT NULL,
	first_at timestamptz NOT NULL,
	last_at timestamptz NOT NULL,
	entries text COLLATE "C" NOT NULL,
	PRIMARY KEY (tenant_key, first_seq)
);
--> statement-breakpoint
DO $$
BEGIN
	EXECUTE 'ALTER TABLE audit_blocks ALTER COLUMN entries SET COMPRESSION lz4';
EXCEPTION WHEN OTHERS THEN
	NULL; -- a server built without lz4 (or older than PostgreSQL 14) keeps pglz
END $$;
--> statement-breakpoint
CREATE UNIQUE INDEX audit_blocks_last ON audit_blocks (tenant_key, last_seq);
--> statement-breakpoint
INSERT INTO audit_blocks (tenant_key, first_seq, last_seq, first_at, last_at, entries)
  SELECT tenant_key, seq, seq, at, at,
    json_build_array(json_build_array(seq, id, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), actor_type, actor_id, actor_name, action,
      resource_type, resource_id, request_id, address, outcome, status, prev_hash, hash))::text
  FROM audit_entries;
--> statement-breakpoint
DROP TABLE audit_entries;
